#ifndef CXCB_H
#define CXCB_H
// libxcb 1.15 (Debian's libxcb1), loaded at run time rather than linked: a process that never
// talks to an X server (lifecycled on a Wayland session, a kiosk without X, a headless host) never
// maps it, nor the libXau, libXdmcp, libbsd and libmd it brings. <xcb/xcb.h>, <xcb/xcbext.h> and
// <xcb/xproto.h> (libxcb1-dev) give the types and constants; each function is reached through the
// table below, whose fields take their types from the headers' own declarations (__typeof__), so
// they cannot drift from them.

#include <stddef.h>
#include <xcb/xcb.h>
#include <xcb/xcbext.h>
#include <xcb/xproto.h>

/// The shared object loaded: the soname of libxcb 1.x, from Debian's libxcb1.
#define CXCB_SONAME "libxcb.so.1"

/// Every libxcb function the X11 window source calls, named without the `xcb_` prefix.
struct cxcb_functions {
    __typeof__(xcb_connect) *_Nonnull connect;
    __typeof__(xcb_disconnect) *_Nonnull disconnect;
    __typeof__(xcb_connection_has_error) *_Nonnull connection_has_error;
    __typeof__(xcb_get_setup) *_Nonnull get_setup;
    __typeof__(xcb_setup_roots_iterator) *_Nonnull setup_roots_iterator;
    __typeof__(xcb_screen_next) *_Nonnull screen_next;
    __typeof__(xcb_get_file_descriptor) *_Nonnull get_file_descriptor;
    __typeof__(xcb_flush) *_Nonnull flush;
    __typeof__(xcb_poll_for_event) *_Nonnull poll_for_event;
    __typeof__(xcb_poll_for_reply) *_Nonnull poll_for_reply;
    __typeof__(xcb_intern_atom) *_Nonnull intern_atom;
    __typeof__(xcb_get_property) *_Nonnull get_property;
    __typeof__(xcb_get_property_value) *_Nonnull get_property_value;
    __typeof__(xcb_get_property_value_length) *_Nonnull get_property_value_length;
    __typeof__(xcb_change_window_attributes) *_Nonnull change_window_attributes;
};

/// Loads `soname` (CXCB_SONAME; dlopen, never closed) and resolves every function.
///
/// Not synchronised: the window source calls it once for CXCB_SONAME and keeps the result in a
/// `static let`. Returns the table (static storage, written only when every function resolved),
/// or NULL with the dynamic linker's message in `error` (truncated to `error_size`) if the library
/// or one of its functions is missing.
const struct cxcb_functions *_Nullable cxcb_load(const char *_Nonnull soname, char *_Nonnull error, size_t error_size);

#endif
