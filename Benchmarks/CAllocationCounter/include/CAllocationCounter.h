#pragma once
#include <stdint.h>

/// Starts counting heap allocations made by the calling thread (malloc, calloc, realloc,
/// posix_memalign, aligned_alloc, memalign).
void allocation_counter_start(void);
/// Stops counting and returns the number of allocations since the matching start.
uint64_t allocation_counter_stop(void);
