#pragma once
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-bus-vtable.h>

/// Returns the libsystemd version this shim was built against (for diagnostics).
int csd_shim_version(void);

/*
 * Runtime construction of sd-bus vtables.
 *
 * The SD_BUS_VTABLE_* / SD_BUS_METHOD / SD_BUS_SIGNAL / SD_BUS_PROPERTY macros are
 * designated initializers that Swift cannot use. These helpers fill one entry of a
 * calloc'd array with exactly what the macros would produce, so that the vtable
 * format reference and element size stay correct for the libsystemd we link.
 *
 * Every string passed in must stay valid for as long as the vtable is registered;
 * the Swift side owns them (strdup'd) and frees them when the object slot is destroyed.
 */

/// Allocates a zeroed vtable of `count` entries (free with csd_vtable_free).
sd_bus_vtable *csd_vtable_new(size_t count);
/// Frees a vtable allocated with csd_vtable_new.
void csd_vtable_free(sd_bus_vtable *vtable);
/// Writes SD_BUS_VTABLE_START(flags) at index.
void csd_vtable_set_start(sd_bus_vtable *vtable, size_t index, uint64_t flags);
/// Writes SD_BUS_METHOD_WITH_NAMES(member, signature, names, result, "", handler, flags) at index.
/// `names` is a NUL-separated list of in- then out-argument names terminated by an empty string, or "".
void csd_vtable_set_method(sd_bus_vtable *vtable, size_t index, const char *member, const char *signature,
                           const char *result, const char *names, sd_bus_message_handler_t handler, uint64_t flags);
/// Writes SD_BUS_SIGNAL_WITH_NAMES(member, signature, names, flags) at index.
void csd_vtable_set_signal(sd_bus_vtable *vtable, size_t index, const char *member, const char *signature,
                           const char *names, uint64_t flags);
/// Writes SD_BUS_PROPERTY (setter NULL) or SD_BUS_WRITABLE_PROPERTY (setter non-NULL) at index.
void csd_vtable_set_property(sd_bus_vtable *vtable, size_t index, const char *member, const char *signature,
                             sd_bus_property_get_t getter, sd_bus_property_set_t setter, uint64_t flags);
/// Writes SD_BUS_VTABLE_END at index.
void csd_vtable_set_end(sd_bus_vtable *vtable, size_t index);

/// The flag values of sd-bus-vtable.h (Swift does not import the 64-bit anonymous enum reliably).
uint64_t csd_vtable_flag_deprecated(void);
uint64_t csd_vtable_flag_hidden(void);
uint64_t csd_vtable_flag_unprivileged(void);
uint64_t csd_vtable_flag_method_no_reply(void);
uint64_t csd_vtable_flag_property_const(void);
uint64_t csd_vtable_flag_property_emits_change(void);
uint64_t csd_vtable_flag_property_emits_invalidation(void);

/// eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK): the wake-up fd of an event loop (-1 and errno on failure).
int csd_eventfd_nonblock(void);
/// pthread_setname_np on the calling thread (name truncated to 15 bytes).
int csd_set_thread_name(const char *name);
/// Marks the calling thread as an event loop's thread (a thread-local flag, set once by the loop).
void csd_mark_event_loop_thread(void);
/// 1 if the calling thread was marked with csd_mark_event_loop_thread, else 0.
int csd_is_event_loop_thread(void);
/// 1 if the calling thread is the process's main thread (its tid is the pid), else 0.
int csd_is_main_thread(void);
