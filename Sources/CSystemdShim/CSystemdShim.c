#include "CSystemdShim.h"

int csd_shim_version(void) { return 1; }
