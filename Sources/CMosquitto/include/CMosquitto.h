#ifndef CMOSQUITTO_H
#define CMOSQUITTO_H
// libmosquitto 2.0 (Debian's libmosquitto1), loaded at run time rather than linked: a process that
// never connects to a broker (lifecycled without a broker in lifecycled.conf) never maps it, nor the
// OpenSSL it loads (1.7 MiB of lifecycled's idle RSS, measured). <mosquitto.h> (libmosquitto-dev) gives
// the types and constants; each function is reached through the table below, whose fields take
// their types from the header's own declarations (__typeof__), so they cannot drift from it.

#include <mosquitto.h>
#include <stddef.h>

/// The shared object loaded: the soname of libmosquitto 2.0, from Debian's libmosquitto1.
#define CMOSQUITTO_SONAME "libmosquitto.so.1"

/// Every libmosquitto function BrokerLink calls, named without the `mosquitto_` prefix.
struct cmosquitto_functions {
    __typeof__(mosquitto_lib_init) *_Nonnull lib_init;
    __typeof__(mosquitto_strerror) *_Nonnull strerror;
    __typeof__(mosquitto_connack_string) *_Nonnull connack_string;
    __typeof__(mosquitto_sub_topic_check2) *_Nonnull sub_topic_check2;
    __typeof__(mosquitto_pub_topic_check2) *_Nonnull pub_topic_check2;
    __typeof__(mosquitto_validate_utf8) *_Nonnull validate_utf8;
    __typeof__(mosquitto_new) *_Nonnull new;
    __typeof__(mosquitto_destroy) *_Nonnull destroy;
    __typeof__(mosquitto_threaded_set) *_Nonnull threaded_set;
    __typeof__(mosquitto_int_option) *_Nonnull int_option;
    __typeof__(mosquitto_username_pw_set) *_Nonnull username_pw_set;
    __typeof__(mosquitto_will_set) *_Nonnull will_set;
    __typeof__(mosquitto_tls_set) *_Nonnull tls_set;
    __typeof__(mosquitto_connect_with_flags_callback_set) *_Nonnull connect_with_flags_callback_set;
    __typeof__(mosquitto_disconnect_callback_set) *_Nonnull disconnect_callback_set;
    __typeof__(mosquitto_publish_callback_set) *_Nonnull publish_callback_set;
    __typeof__(mosquitto_message_callback_set) *_Nonnull message_callback_set;
    __typeof__(mosquitto_log_callback_set) *_Nonnull log_callback_set;
    __typeof__(mosquitto_connect_async) *_Nonnull connect_async;
    __typeof__(mosquitto_reconnect_async) *_Nonnull reconnect_async;
    __typeof__(mosquitto_disconnect) *_Nonnull disconnect;
    __typeof__(mosquitto_subscribe) *_Nonnull subscribe;
    __typeof__(mosquitto_publish) *_Nonnull publish;
    __typeof__(mosquitto_socket) *_Nonnull socket;
    __typeof__(mosquitto_want_write) *_Nonnull want_write;
    __typeof__(mosquitto_loop_read) *_Nonnull loop_read;
    __typeof__(mosquitto_loop_write) *_Nonnull loop_write;
    __typeof__(mosquitto_loop_misc) *_Nonnull loop_misc;
};

/// Loads `soname` (CMOSQUITTO_SONAME; dlopen, never closed) and resolves every function.
///
/// Not synchronised: BrokerLink calls it once for CMOSQUITTO_SONAME and keeps the result in a
/// `static let`. Returns the table (static storage, written only when every function resolved),
/// or NULL with the dynamic linker's message in `error` (truncated to `error_size`) if the library
/// or one of its functions is missing.
const struct cmosquitto_functions *_Nullable cmosquitto_load(
    const char *_Nonnull soname, char *_Nonnull error, size_t error_size);

#endif
