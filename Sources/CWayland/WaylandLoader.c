#include "CWayland.h"
#include "CLinuxSupport.h"

#include <errno.h>
#include <stdio.h>

// One entry per field of struct cwayland_functions: the symbol's name and where its address goes.
#define CWAYLAND_SYMBOL(field) {"wl_" #field, (void **)&resolved.field}

static struct cwayland_functions functions;

// The core interfaces the protocol's messages name, from libwayland-client's own data symbols. They
// stay NULL until cwayland_load succeeded; the tables below point at these slots' values through the
// `types` arrays, which cwayland_load fills in.
static const struct wl_interface *registry_interface;
static const struct wl_interface *callback_interface;

// The protocol's `types` arrays: for each argument of a message, the interface of an object or new_id
// argument, NULL otherwise. Filled in by cwayland_load where they name a core interface.
static const struct wl_interface *no_types[] = {NULL, NULL, NULL, NULL, NULL};
static const struct wl_interface *seat_types[1];
static const struct wl_interface *surface_rectangle_types[5];
static const struct wl_interface *output_types[1];
static const struct wl_interface *handle_types[] = {&cwayland_foreign_toplevel_handle_interface};
static const struct wl_interface *plasma_window_types[] = {&cwayland_plasma_window_interface, NULL};

static const struct wl_message manager_requests[] = {
    {"stop", "", no_types},
};

static const struct wl_message manager_events[] = {
    {"toplevel", "n", handle_types},
    {"finished", "", no_types},
};

const struct wl_interface cwayland_foreign_toplevel_manager_interface = {
    "zwlr_foreign_toplevel_manager_v1", CWAYLAND_FOREIGN_TOPLEVEL_VERSION, 1, manager_requests, 2, manager_events,
};

static const struct wl_message handle_requests[] = {
    {"set_maximized", "", no_types},
    {"unset_maximized", "", no_types},
    {"set_minimized", "", no_types},
    {"unset_minimized", "", no_types},
    {"activate", "o", seat_types},
    {"close", "", no_types},
    {"set_rectangle", "oiiii", surface_rectangle_types},
    {"destroy", "", no_types},
    {"set_fullscreen", "2?o", output_types},
    {"unset_fullscreen", "2", no_types},
};

static const struct wl_message handle_events[] = {
    {"title", "s", no_types},
    {"app_id", "s", no_types},
    {"output_enter", "o", output_types},
    {"output_leave", "o", output_types},
    {"state", "a", no_types},
    {"done", "", no_types},
    {"closed", "", no_types},
    {"parent", "3?o", handle_types},
};

const struct wl_interface cwayland_foreign_toplevel_handle_interface = {
    "zwlr_foreign_toplevel_handle_v1", CWAYLAND_FOREIGN_TOPLEVEL_VERSION, 10, handle_requests, 8, handle_events,
};

// org_kde_plasma_window_management and org_kde_plasma_window, version 16, message for message
// plasma-wayland-protocols 1.10's plasma-window-management.xml (a signature's leading digits are the
// version the message came with). set_minimized_geometry ("ouuuu") shares set_rectangle's types:
// a wl_surface, then four plain values.
static const struct wl_message plasma_management_requests[] = {
    {"show_desktop", "u", no_types},
    {"get_window", "nu", plasma_window_types},
    {"get_window_by_uuid", "12ns", plasma_window_types},
};

static const struct wl_message plasma_management_events[] = {
    {"show_desktop_changed", "u", no_types},
    {"window", "u", no_types},
    {"stacking_order_changed", "11a", no_types},
    {"stacking_order_uuid_changed", "12s", no_types},
    {"window_with_uuid", "13us", no_types},
};

const struct wl_interface cwayland_plasma_window_management_interface = {
    "org_kde_plasma_window_management", CWAYLAND_PLASMA_WINDOW_MANAGEMENT_VERSION, 3, plasma_management_requests, 5,
    plasma_management_events,
};

static const struct wl_message plasma_window_requests[] = {
    {"set_state", "uu", no_types},
    {"set_virtual_desktop", "u", no_types},
    {"set_minimized_geometry", "ouuuu", surface_rectangle_types},
    {"unset_minimized_geometry", "o", surface_rectangle_types},
    {"close", "", no_types},
    {"request_move", "3", no_types},
    {"request_resize", "3", no_types},
    {"destroy", "4", no_types},
    {"get_icon", "7h", no_types},
    {"request_enter_virtual_desktop", "8s", no_types},
    {"request_enter_new_virtual_desktop", "8", no_types},
    {"request_leave_virtual_desktop", "8s", no_types},
    {"request_enter_activity", "14s", no_types},
    {"request_leave_activity", "14s", no_types},
    {"send_to_output", "15o", output_types},
};

static const struct wl_message plasma_window_events[] = {
    {"title_changed", "s", no_types},
    {"app_id_changed", "s", no_types},
    {"state_changed", "u", no_types},
    {"virtual_desktop_changed", "i", no_types},
    {"themed_icon_name_changed", "s", no_types},
    {"unmapped", "", no_types},
    {"initial_state", "4", no_types},
    {"parent_window", "5?o", plasma_window_types},
    {"geometry", "6iiuu", no_types},
    {"icon_changed", "7", no_types},
    {"pid_changed", "u", no_types},
    {"virtual_desktop_entered", "8s", no_types},
    {"virtual_desktop_left", "8s", no_types},
    {"application_menu", "10ss", no_types},
    {"activity_entered", "14s", no_types},
    {"activity_left", "14s", no_types},
    {"resource_name_changed", "16s", no_types},
};

const struct wl_interface cwayland_plasma_window_interface = {
    "org_kde_plasma_window", CWAYLAND_PLASMA_WINDOW_MANAGEMENT_VERSION, 15, plasma_window_requests, 17,
    plasma_window_events,
};

// The request opcodes the helpers send (wl_display, wl_registry, the handle).
enum {
    DISPLAY_SYNC = 0,
    DISPLAY_GET_REGISTRY = 1,
    REGISTRY_BIND = 0,
    HANDLE_DESTROY = 7,
    PLASMA_MANAGEMENT_GET_WINDOW = 1,
    PLASMA_MANAGEMENT_GET_WINDOW_BY_UUID = 2,
    PLASMA_WINDOW_SET_STATE = 0,
    PLASMA_WINDOW_DESTROY = 7,
};

const struct cwayland_functions *cwayland_load(const char *soname, char *error, size_t error_size) {
    struct cwayland_functions resolved;
    const struct wl_interface *seat = NULL, *surface = NULL, *registry = NULL, *callback = NULL, *output = NULL;
    const struct cls_symbol symbols[] = {
        CWAYLAND_SYMBOL(display_connect_to_fd),
        CWAYLAND_SYMBOL(display_disconnect),
        CWAYLAND_SYMBOL(display_get_fd),
        CWAYLAND_SYMBOL(display_prepare_read),
        CWAYLAND_SYMBOL(display_cancel_read),
        CWAYLAND_SYMBOL(display_read_events),
        CWAYLAND_SYMBOL(display_dispatch_pending),
        CWAYLAND_SYMBOL(display_flush),
        CWAYLAND_SYMBOL(display_get_error),
        CWAYLAND_SYMBOL(display_get_protocol_error),
        CWAYLAND_SYMBOL(proxy_marshal_flags),
        CWAYLAND_SYMBOL(proxy_add_dispatcher),
        CWAYLAND_SYMBOL(proxy_destroy),
        CWAYLAND_SYMBOL(proxy_get_user_data),
        CWAYLAND_SYMBOL(proxy_get_version),
        {"wl_registry_interface", (void **)&registry},
        {"wl_callback_interface", (void **)&callback},
        {"wl_output_interface", (void **)&output},
        {"wl_seat_interface", (void **)&seat},
        {"wl_surface_interface", (void **)&surface},
    };
    _Static_assert(sizeof(symbols) / sizeof(symbols[0]) == sizeof(struct cwayland_functions) / sizeof(void *) + 5,
                   "every field of struct cwayland_functions has an entry, and the five core interfaces");
    if (cls_load_library(soname, symbols, sizeof(symbols) / sizeof(symbols[0]), error, error_size) == NULL) {
        return NULL;
    }
    registry_interface = registry;
    callback_interface = callback;
    seat_types[0] = seat;
    surface_rectangle_types[0] = surface;
    output_types[0] = output;
    functions = resolved;
    return &functions;
}

struct wl_proxy *cwayland_display_get_registry(const struct cwayland_functions *f, struct wl_display *display) {
    struct wl_proxy *proxy = (struct wl_proxy *)display;
    return f->proxy_marshal_flags(proxy, DISPLAY_GET_REGISTRY, registry_interface, f->proxy_get_version(proxy), 0,
                                  NULL);
}

struct wl_proxy *cwayland_display_sync(const struct cwayland_functions *f, struct wl_display *display) {
    struct wl_proxy *proxy = (struct wl_proxy *)display;
    return f->proxy_marshal_flags(proxy, DISPLAY_SYNC, callback_interface, f->proxy_get_version(proxy), 0, NULL);
}

struct wl_proxy *cwayland_bind_foreign_toplevel_manager(const struct cwayland_functions *f, struct wl_proxy *registry,
                                                        uint32_t name, uint32_t version) {
    const struct wl_interface *interface = &cwayland_foreign_toplevel_manager_interface;
    return f->proxy_marshal_flags(registry, REGISTRY_BIND, interface, version, 0, name, interface->name, version,
                                  NULL);
}

void cwayland_handle_destroy(const struct cwayland_functions *f, struct wl_proxy *handle) {
    f->proxy_marshal_flags(handle, HANDLE_DESTROY, NULL, f->proxy_get_version(handle), WL_MARSHAL_FLAG_DESTROY);
}

struct wl_proxy *cwayland_bind_plasma_window_management(const struct cwayland_functions *f, struct wl_proxy *registry,
                                                        uint32_t name, uint32_t version) {
    const struct wl_interface *interface = &cwayland_plasma_window_management_interface;
    return f->proxy_marshal_flags(registry, REGISTRY_BIND, interface, version, 0, name, interface->name, version,
                                  NULL);
}

struct wl_proxy *cwayland_plasma_get_window_by_uuid(const struct cwayland_functions *f, struct wl_proxy *management,
                                                    const char *uuid) {
    return f->proxy_marshal_flags(management, PLASMA_MANAGEMENT_GET_WINDOW_BY_UUID, &cwayland_plasma_window_interface,
                                  f->proxy_get_version(management), 0, NULL, uuid);
}

struct wl_proxy *cwayland_plasma_get_window(const struct cwayland_functions *f, struct wl_proxy *management,
                                            uint32_t window_id) {
    return f->proxy_marshal_flags(management, PLASMA_MANAGEMENT_GET_WINDOW, &cwayland_plasma_window_interface,
                                  f->proxy_get_version(management), 0, NULL, window_id);
}

void cwayland_plasma_window_set_state(const struct cwayland_functions *f, struct wl_proxy *window, uint32_t flags,
                                      uint32_t state) {
    f->proxy_marshal_flags(window, PLASMA_WINDOW_SET_STATE, NULL, f->proxy_get_version(window), 0, flags, state);
}

void cwayland_plasma_window_destroy(const struct cwayland_functions *f, struct wl_proxy *window) {
    f->proxy_marshal_flags(window, PLASMA_WINDOW_DESTROY, NULL, f->proxy_get_version(window), WL_MARSHAL_FLAG_DESTROY);
}
