// Counts heap allocations per thread by interposing glibc's allocation functions in the
// benchmark executable. Each override forwards to glibc's own implementation (__libc_*), so
// behaviour is unchanged; only a thread-local counter is added while counting is on.
#include "CAllocationCounter.h"
#include <errno.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static __thread int counting;
static __thread uint64_t count;

static inline void note(void) {
    if (counting) count++;
}

void allocation_counter_start(void) {
    count = 0;
    counting = 1;
}

uint64_t allocation_counter_stop(void) {
    counting = 0;
    return count;
}

void *malloc(size_t size) {
    note();
    return __libc_malloc(size);
}

void *calloc(size_t count_, size_t size) {
    note();
    return __libc_calloc(count_, size);
}

void *realloc(void *pointer, size_t size) {
    note();
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    note();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    note();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    note();
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}
