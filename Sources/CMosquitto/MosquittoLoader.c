#include "CMosquitto.h"

#include <dlfcn.h>
#include <stdio.h>

// One entry per field of struct cmosquitto_functions: the symbol's name and where its address goes.
#define CMOSQUITTO_SYMBOL(field) {"mosquitto_" #field, (void **)&resolved.field}

static struct cmosquitto_functions functions;

const struct cmosquitto_functions *cmosquitto_load(const char *soname, char *error, size_t error_size) {
    // RTLD_LOCAL: libmosquitto's symbols (and OpenSSL's) stay out of the global namespace.
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(error, error_size, "%s", dlerror());
        return NULL;
    }
    struct cmosquitto_functions resolved;
    const struct {
        const char *name;
        void **address;
    } symbols[] = {
        CMOSQUITTO_SYMBOL(lib_init),
        CMOSQUITTO_SYMBOL(strerror),
        CMOSQUITTO_SYMBOL(connack_string),
        CMOSQUITTO_SYMBOL(sub_topic_check2),
        CMOSQUITTO_SYMBOL(pub_topic_check2),
        CMOSQUITTO_SYMBOL(validate_utf8),
        CMOSQUITTO_SYMBOL(new),
        CMOSQUITTO_SYMBOL(destroy),
        CMOSQUITTO_SYMBOL(threaded_set),
        CMOSQUITTO_SYMBOL(int_option),
        CMOSQUITTO_SYMBOL(username_pw_set),
        CMOSQUITTO_SYMBOL(will_set),
        CMOSQUITTO_SYMBOL(tls_set),
        CMOSQUITTO_SYMBOL(connect_with_flags_callback_set),
        CMOSQUITTO_SYMBOL(disconnect_callback_set),
        CMOSQUITTO_SYMBOL(publish_callback_set),
        CMOSQUITTO_SYMBOL(message_callback_set),
        CMOSQUITTO_SYMBOL(log_callback_set),
        CMOSQUITTO_SYMBOL(connect_async),
        CMOSQUITTO_SYMBOL(reconnect_async),
        CMOSQUITTO_SYMBOL(disconnect),
        CMOSQUITTO_SYMBOL(subscribe),
        CMOSQUITTO_SYMBOL(publish),
        CMOSQUITTO_SYMBOL(socket),
        CMOSQUITTO_SYMBOL(want_write),
        CMOSQUITTO_SYMBOL(loop_read),
        CMOSQUITTO_SYMBOL(loop_write),
        CMOSQUITTO_SYMBOL(loop_misc),
    };
    _Static_assert(sizeof(symbols) / sizeof(symbols[0]) == sizeof(struct cmosquitto_functions) / sizeof(void *),
                   "every field of struct cmosquitto_functions has an entry");
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
