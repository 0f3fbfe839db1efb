#include "CMosquitto.h"

#include "CLinuxSupport.h"

// One entry per field of struct cmosquitto_functions: the symbol's name and where its address goes.
#define CMOSQUITTO_SYMBOL(field) {"mosquitto_" #field, (void **)&resolved.field}

static struct cmosquitto_functions functions;

const struct cmosquitto_functions *cmosquitto_load(const char *soname, char *error, size_t error_size) {
    struct cmosquitto_functions resolved;
    const struct cls_symbol symbols[] = {
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
    if (cls_load_library(soname, symbols, sizeof(symbols) / sizeof(symbols[0]), error, error_size) == NULL) {
        return NULL;
    }
    functions = resolved;
    return &functions;
}
