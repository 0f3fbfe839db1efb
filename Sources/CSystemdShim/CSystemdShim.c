#define _GNU_SOURCE 1
#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "CSystemdShim.h"
#include <stdlib.h>

int csd_shim_version(void) { return 2; }

sd_bus_vtable *csd_vtable_new(size_t count) {
        return calloc(count, sizeof(sd_bus_vtable));
}

void csd_vtable_free(sd_bus_vtable *vtable) {
        free(vtable);
}

void csd_vtable_set_start(sd_bus_vtable *vtable, size_t index, uint64_t flags) {
        const sd_bus_vtable entry = SD_BUS_VTABLE_START(flags);
        vtable[index] = entry;
}

void csd_vtable_set_method(sd_bus_vtable *vtable, size_t index, const char *member, const char *signature,
                           const char *result, const char *names, sd_bus_message_handler_t handler, uint64_t flags) {
        sd_bus_vtable entry = SD_BUS_METHOD_WITH_OFFSET(member, signature, result, handler, 0, flags);
        entry.x.method.names = names ? names : "";
        vtable[index] = entry;
}

void csd_vtable_set_signal(sd_bus_vtable *vtable, size_t index, const char *member, const char *signature,
                           const char *names, uint64_t flags) {
        sd_bus_vtable entry = SD_BUS_SIGNAL(member, signature, flags);
        entry.x.signal.names = names ? names : "";
        vtable[index] = entry;
}

void csd_vtable_set_property(sd_bus_vtable *vtable, size_t index, const char *member, const char *signature,
                             sd_bus_property_get_t getter, sd_bus_property_set_t setter, uint64_t flags) {
        if (setter) {
                const sd_bus_vtable entry = SD_BUS_WRITABLE_PROPERTY(member, signature, getter, setter, 0, flags);
                vtable[index] = entry;
        } else {
                const sd_bus_vtable entry = SD_BUS_PROPERTY(member, signature, getter, 0, flags);
                vtable[index] = entry;
        }
}

void csd_vtable_set_end(sd_bus_vtable *vtable, size_t index) {
        const sd_bus_vtable entry = SD_BUS_VTABLE_END;
        vtable[index] = entry;
}

uint64_t csd_vtable_flag_deprecated(void) { return SD_BUS_VTABLE_DEPRECATED; }
uint64_t csd_vtable_flag_hidden(void) { return SD_BUS_VTABLE_HIDDEN; }
uint64_t csd_vtable_flag_unprivileged(void) { return SD_BUS_VTABLE_UNPRIVILEGED; }
uint64_t csd_vtable_flag_method_no_reply(void) { return SD_BUS_VTABLE_METHOD_NO_REPLY; }
uint64_t csd_vtable_flag_property_const(void) { return SD_BUS_VTABLE_PROPERTY_CONST; }
uint64_t csd_vtable_flag_property_emits_change(void) { return SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE; }
uint64_t csd_vtable_flag_property_emits_invalidation(void) { return SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION; }


int csd_eventfd_nonblock(void) {
        return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

int csd_set_thread_name(const char *name) {
        char buffer[16];
        strncpy(buffer, name, sizeof(buffer) - 1);
        buffer[sizeof(buffer) - 1] = 0;
        return pthread_setname_np(pthread_self(), buffer);
}

/* Set on an event loop's thread when it starts; a thread never stops being one. */
static __thread int csd_event_loop_thread = 0;

void csd_mark_event_loop_thread(void) { csd_event_loop_thread = 1; }

int csd_is_event_loop_thread(void) { return csd_event_loop_thread; }

int csd_is_main_thread(void) { return gettid() == getpid(); }
