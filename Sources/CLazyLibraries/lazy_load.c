#include "lazy_load.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t loading = PTHREAD_MUTEX_INITIALIZER;

// Aligned to a cache line, which makes the release binary's whole .text 64-byte aligned:
// scripts/lib/startup-order.txt places the Lua interpreter's loop and call path
// (luaV_execute, luaD_precall: their objects from liblua5.4.a) first in .text, so they start
// at the same offsets within a cache line in every build: how those two functions fall
// within a cache line changes the interpreter's speed markedly (docs/performance.md,
// "Start-up"), and the linker's 16-byte alignment left their offsets to the size of
// whatever preceded .text, so they changed with every build.
__attribute__((aligned(64)))
void *lazy_resolve(lazy_library *library, const char *name) {
    void *handle = __atomic_load_n(&library->handle, __ATOMIC_ACQUIRE);
    if (handle == NULL) {
        pthread_mutex_lock(&loading);
        handle = library->handle;
        if (handle == NULL) {
            handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
            if (handle == NULL) {
                fprintf(stderr, "hubscript: %s (%s could not be loaded: %s)\n", library->missing, library->soname, dlerror());
                exit(2);
            }
            __atomic_store_n(&library->handle, handle, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&loading);
    }
    void *symbol = dlsym(handle, name);
    if (symbol == NULL) {
        fprintf(stderr, "hubscript: the installed %s has no %s; install a newer version\n", library->soname, name);
        exit(2);
    }
    return symbol;
}
