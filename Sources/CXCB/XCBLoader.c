#include "CXCB.h"

#include <dlfcn.h>
#include <stdio.h>

// One entry per field of struct cxcb_functions: the symbol's name and where its address goes.
#define CXCB_SYMBOL(field) {"xcb_" #field, (void **)&resolved.field}

static struct cxcb_functions functions;

const struct cxcb_functions *cxcb_load(const char *soname, char *error, size_t error_size) {
    // RTLD_LOCAL: libxcb's symbols stay out of the global namespace.
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(error, error_size, "%s", dlerror());
        return NULL;
    }
    struct cxcb_functions resolved;
    const struct {
        const char *name;
        void **address;
    } symbols[] = {
        CXCB_SYMBOL(connect),
        CXCB_SYMBOL(disconnect),
        CXCB_SYMBOL(connection_has_error),
        CXCB_SYMBOL(get_setup),
        CXCB_SYMBOL(setup_roots_iterator),
        CXCB_SYMBOL(screen_next),
        CXCB_SYMBOL(get_file_descriptor),
        CXCB_SYMBOL(flush),
        CXCB_SYMBOL(poll_for_event),
        CXCB_SYMBOL(poll_for_reply),
        CXCB_SYMBOL(intern_atom),
        CXCB_SYMBOL(get_property),
        CXCB_SYMBOL(get_property_value),
        CXCB_SYMBOL(get_property_value_length),
        CXCB_SYMBOL(change_window_attributes),
    };
    _Static_assert(sizeof(symbols) / sizeof(symbols[0]) == sizeof(struct cxcb_functions) / sizeof(void *),
                   "every field of struct cxcb_functions has an entry");
    for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
        dlerror();
        void *address = dlsym(library, symbols[i].name);
        if (address == NULL) {
            const char *message = dlerror();
            snprintf(error, error_size, "%s", message != NULL ? message : symbols[i].name);
            return NULL;
        }
        *symbols[i].address = address;
    }
    functions = resolved;
    return &functions;
}
