#pragma once
#include <systemd/sd-bus.h>

/// Returns the libsystemd version this shim was built against (for diagnostics).
int csd_shim_version(void);
