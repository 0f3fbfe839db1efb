#include "CXCB.h"

#include "CLinuxSupport.h"

// One entry per field of struct cxcb_functions: the symbol's name and where its address goes.
#define CXCB_SYMBOL(field) {"xcb_" #field, (void **)&resolved.field}

static struct cxcb_functions functions;

const struct cxcb_functions *cxcb_load(const char *soname, char *error, size_t error_size) {
    struct cxcb_functions resolved;
    const struct cls_symbol symbols[] = {
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
    if (cls_load_library(soname, symbols, sizeof(symbols) / sizeof(symbols[0]), error, error_size) == NULL) {
        return NULL;
    }
    functions = resolved;
    return &functions;
}
