#include "CLinuxSupport.h"

#include <dlfcn.h>
#include <stdio.h>

void *cls_load_library(const char *soname, const struct cls_symbol *symbols, size_t count, char *error,
                       size_t error_size) {
    // RTLD_LOCAL: the library's symbols (and those of what it links, OpenSSL for libmosquitto)
    // stay out of the global namespace.
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(error, error_size, "%s", dlerror());
        return NULL;
    }
    for (size_t i = 0; i < count; i++) {
        dlerror();
        void *address = dlsym(library, symbols[i].name);
        if (address == NULL) {
            const char *message = dlerror();
            snprintf(error, error_size, "%s", message != NULL ? message : symbols[i].name);
            dlclose(library);
            return NULL;
        }
        *symbols[i].address = address;
    }
    return library;
}
