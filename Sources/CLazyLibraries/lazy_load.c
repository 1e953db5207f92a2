#include "lazy_load.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t loading = PTHREAD_MUTEX_INITIALIZER;

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
