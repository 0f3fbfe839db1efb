#ifndef CWAYLAND_H
#define CWAYLAND_H
// libwayland-client (Debian's libwayland-client0, 1.21), loaded at run time rather than linked, the
// wlroots foreign-toplevel-management protocol (zwlr_foreign_toplevel_manager_v1 and
// zwlr_foreign_toplevel_handle_v1, version 3) that wlroots compositors (sway, phoc, wayfire, labwc,
// Hyprland) offer, and KDE Plasma's window management (org_kde_plasma_window_management and
// org_kde_plasma_window, version 16) that KWin offers. A process that never looks at a Wayland session (lifecycled on an X11 desktop or a
// server, and every app, which links the host bridge) never maps libwayland-client nor the libffi it
// brings. <wayland-client-core.h> (libwayland-dev) gives the types; each function is reached through the
// table below, whose fields take their types from the header's own declarations (__typeof__).

#include <stddef.h>
#include <stdint.h>
#include <wayland-client-core.h>

/// The shared object loaded: the soname of libwayland-client 1.x, from Debian's libwayland-client0.
#define CWAYLAND_SONAME "libwayland-client.so.0"

/// The protocol's interface version this client speaks (the `parent` event came with 3).
#define CWAYLAND_FOREIGN_TOPLEVEL_VERSION 3

/// zwlr_foreign_toplevel_manager_v1's event opcodes.
enum cwayland_manager_event {
    CWAYLAND_MANAGER_TOPLEVEL = 0,
    CWAYLAND_MANAGER_FINISHED = 1,
};

/// zwlr_foreign_toplevel_handle_v1's event opcodes.
enum cwayland_handle_event {
    CWAYLAND_HANDLE_TITLE = 0,
    CWAYLAND_HANDLE_APP_ID = 1,
    CWAYLAND_HANDLE_OUTPUT_ENTER = 2,
    CWAYLAND_HANDLE_OUTPUT_LEAVE = 3,
    CWAYLAND_HANDLE_STATE = 4,
    CWAYLAND_HANDLE_DONE = 5,
    CWAYLAND_HANDLE_CLOSED = 6,
    CWAYLAND_HANDLE_PARENT = 7,
};

/// The values of the handle's `state` array.
enum cwayland_handle_state {
    CWAYLAND_STATE_MAXIMIZED = 0,
    CWAYLAND_STATE_MINIMIZED = 1,
    CWAYLAND_STATE_ACTIVATED = 2,
    CWAYLAND_STATE_FULLSCREEN = 3,
};

/// The version of org_kde_plasma_window_management and org_kde_plasma_window this client speaks
/// (plasma-wayland-protocols 1.10, what KWin 5.27 offers).
#define CWAYLAND_PLASMA_WINDOW_MANAGEMENT_VERSION 16
/// The lowest version this client binds: `initial_state` (a window's first batch is complete) and
/// org_kde_plasma_window.destroy came with 4.
#define CWAYLAND_PLASMA_WINDOW_MANAGEMENT_MIN_VERSION 4
/// The version that brought `window_with_uuid` and `get_window_by_uuid` (before it, windows are
/// announced and fetched by a numeric id).
#define CWAYLAND_PLASMA_WINDOW_WITH_UUID_VERSION 13

/// org_kde_plasma_window_management's event opcodes.
enum cwayland_plasma_management_event {
    CWAYLAND_PLASMA_MANAGEMENT_SHOW_DESKTOP_CHANGED = 0,
    CWAYLAND_PLASMA_MANAGEMENT_WINDOW = 1,
    CWAYLAND_PLASMA_MANAGEMENT_STACKING_ORDER_CHANGED = 2,
    CWAYLAND_PLASMA_MANAGEMENT_STACKING_ORDER_UUID_CHANGED = 3,
    CWAYLAND_PLASMA_MANAGEMENT_WINDOW_WITH_UUID = 4,
};

/// org_kde_plasma_window's event opcodes (those the window source reads; the others are ignored).
enum cwayland_plasma_window_event {
    CWAYLAND_PLASMA_WINDOW_TITLE_CHANGED = 0,
    CWAYLAND_PLASMA_WINDOW_APP_ID_CHANGED = 1,
    CWAYLAND_PLASMA_WINDOW_STATE_CHANGED = 2,
    CWAYLAND_PLASMA_WINDOW_UNMAPPED = 5,
    CWAYLAND_PLASMA_WINDOW_INITIAL_STATE = 6,
    CWAYLAND_PLASMA_WINDOW_PID_CHANGED = 10,
};

/// Bits of org_kde_plasma_window_management's `state` enum (state_changed's flags, set_state's).
enum cwayland_plasma_window_state {
    CWAYLAND_PLASMA_STATE_ACTIVE = 1 << 0,
    CWAYLAND_PLASMA_STATE_MINIMIZED = 1 << 1,
};

/// wl_registry's event opcodes.
enum cwayland_registry_event {
    CWAYLAND_REGISTRY_GLOBAL = 0,
    CWAYLAND_REGISTRY_GLOBAL_REMOVE = 1,
};

/// Every libwayland-client function the window source calls, named without the `wl_` prefix.
struct cwayland_functions {
    __typeof__(wl_display_connect_to_fd) *_Nonnull display_connect_to_fd;
    __typeof__(wl_display_disconnect) *_Nonnull display_disconnect;
    __typeof__(wl_display_get_fd) *_Nonnull display_get_fd;
    __typeof__(wl_display_prepare_read) *_Nonnull display_prepare_read;
    __typeof__(wl_display_cancel_read) *_Nonnull display_cancel_read;
    __typeof__(wl_display_read_events) *_Nonnull display_read_events;
    __typeof__(wl_display_dispatch_pending) *_Nonnull display_dispatch_pending;
    __typeof__(wl_display_flush) *_Nonnull display_flush;
    __typeof__(wl_display_get_error) *_Nonnull display_get_error;
    __typeof__(wl_display_get_protocol_error) *_Nonnull display_get_protocol_error;
    __typeof__(wl_proxy_marshal_flags) *_Nonnull proxy_marshal_flags;
    __typeof__(wl_proxy_add_dispatcher) *_Nonnull proxy_add_dispatcher;
    __typeof__(wl_proxy_destroy) *_Nonnull proxy_destroy;
    __typeof__(wl_proxy_get_user_data) *_Nonnull proxy_get_user_data;
    __typeof__(wl_proxy_get_version) *_Nonnull proxy_get_version;
};

/// Loads `soname` (CWAYLAND_SONAME; dlopen, never closed), resolves every function and the core
/// interfaces the protocol tables refer to (wl_registry, wl_callback, wl_output, wl_seat, wl_surface).
///
/// Not synchronised: the window source calls it once and keeps the result in a `static let`. Returns
/// the table (static storage, written only when everything resolved), or NULL with the dynamic
/// linker's message in `error` (truncated to `error_size`).
const struct cwayland_functions *_Nullable cwayland_load(
    const char *_Nonnull soname, char *_Nonnull error, size_t error_size);

/// The interface of zwlr_foreign_toplevel_manager_v1, version 3, written by hand from the protocol
/// (names, opcodes and signatures; Debian ships no XML of wlr-protocols), message for message the
/// tables compiled into wlroots 0.15 (sway 1.7's libwlroots.so.10). Valid once cwayland_load succeeded.
extern const struct wl_interface cwayland_foreign_toplevel_manager_interface;
/// The interface of zwlr_foreign_toplevel_handle_v1, version 3. Valid once cwayland_load succeeded.
extern const struct wl_interface cwayland_foreign_toplevel_handle_interface;
// The requests, as libwayland-scanner's inline functions would send them (wl_proxy_marshal_flags is
// variadic, which Swift cannot call). Each needs the table cwayland_load returned.

/// wl_display.get_registry: a new wl_registry proxy, or NULL (errno set) if the display failed.
struct wl_proxy *_Nullable cwayland_display_get_registry(
    const struct cwayland_functions *_Nonnull functions, struct wl_display *_Nonnull display);

/// wl_display.sync: a new wl_callback proxy whose `done` event says the compositor has handled every
/// request sent before it, or NULL (errno set).
struct wl_proxy *_Nullable cwayland_display_sync(
    const struct cwayland_functions *_Nonnull functions, struct wl_display *_Nonnull display);

/// wl_registry.bind of global `name` as zwlr_foreign_toplevel_manager_v1 at `version`: the new proxy,
/// or NULL (errno set). The interface is passed from here, by the address of the C global: libwayland
/// keeps that pointer in the proxy for as long as it lives (a pointer Swift made to a copy of the
/// global would dangle once the call returned).
struct wl_proxy *_Nullable cwayland_bind_foreign_toplevel_manager(
    const struct cwayland_functions *_Nonnull functions, struct wl_proxy *_Nonnull registry, uint32_t name,
    uint32_t version);

/// zwlr_foreign_toplevel_handle_v1.destroy: sends the destructor and destroys the proxy.
void cwayland_handle_destroy(
    const struct cwayland_functions *_Nonnull functions, struct wl_proxy *_Nonnull handle);

/// The interface of org_kde_plasma_window_management, version 16, written by hand from
/// plasma-wayland-protocols 1.10's plasma-window-management.xml: every request and event, in order, with
/// its signature (the `since` digits included) and argument interfaces, as libwayland-scanner would
/// generate them. Valid once cwayland_load succeeded.
extern const struct wl_interface cwayland_plasma_window_management_interface;
/// The interface of org_kde_plasma_window, version 16 (from the same XML). Valid once cwayland_load succeeded.
extern const struct wl_interface cwayland_plasma_window_interface;

/// wl_registry.bind of global `name` as org_kde_plasma_window_management at `version`: the new proxy,
/// or NULL (errno set).
struct wl_proxy *_Nullable cwayland_bind_plasma_window_management(
    const struct cwayland_functions *_Nonnull functions, struct wl_proxy *_Nonnull registry, uint32_t name,
    uint32_t version);

/// org_kde_plasma_window_management.get_window_by_uuid (version 13 on): a new org_kde_plasma_window
/// proxy for the window `uuid` names, or NULL (errno set).
struct wl_proxy *_Nullable cwayland_plasma_get_window_by_uuid(
    const struct cwayland_functions *_Nonnull functions, struct wl_proxy *_Nonnull management,
    const char *_Nonnull uuid);

/// org_kde_plasma_window_management.get_window (before version 13): a new org_kde_plasma_window proxy
/// for the window `window_id` names, or NULL (errno set).
struct wl_proxy *_Nullable cwayland_plasma_get_window(
    const struct cwayland_functions *_Nonnull functions, struct wl_proxy *_Nonnull management,
    uint32_t window_id);

/// org_kde_plasma_window.set_state: asks the compositor to set the `flags` bits of the window's state
/// to those of `state` (CWAYLAND_PLASMA_STATE_ACTIVE in both activates it).
void cwayland_plasma_window_set_state(
    const struct cwayland_functions *_Nonnull functions, struct wl_proxy *_Nonnull window, uint32_t flags,
    uint32_t state);

/// org_kde_plasma_window.destroy (version 4 on): sends the destructor and destroys the proxy.
void cwayland_plasma_window_destroy(
    const struct cwayland_functions *_Nonnull functions, struct wl_proxy *_Nonnull window);

#endif
