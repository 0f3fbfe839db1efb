#ifndef CMOSQUITTO_SHIM_H
#define CMOSQUITTO_SHIM_H
// libmosquitto 2.0 from Debian's libmosquitto-dev: the MQTT client lifecycled and the gateway use.
#include <mosquitto.h>
#endif
