// libcurl, loaded on first use instead of at start-up.
//
// FoundationNetworking (URLSession on Linux) calls libcurl; linked normally, libcurl and
// the ~30 libraries it needs (TLS, Kerberos, LDAP, IDN, HTTP/2…) are loaded by the
// dynamic linker before main, about 10 ms on every start, even for a recipe that never
// touches the network. When hubscript is linked with the Swift runtime and Foundation
// statically (scripts/lib/bootstrap.sh) this file defines the curl functions
// FoundationNetworking uses; each resolves the real one with dlopen("libcurl.so.4") /
// dlsym the first time any is called, so libcurl loads only when an HTTPS request is made.
// (In a dynamically linked build libcurl is already loaded; dlopen then just finds it.)
//
// Types are spelled as their ABI (pointers, int, long): the header is not needed, so
// building needs no libcurl development package. The variadic setopt/getinfo calls take
// exactly one argument after the option (a long, a pointer or a curl_off_t, all 64-bit
// integer-class values on the supported 64-bit ABIs), forwarded as such.
#include "lazy_curl.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void *library;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        fprintf(stderr, "hubscript: HTTPS needs libcurl, which could not be loaded (%s); "
                        "install it (Debian: apt-get install libcurl4)\n", dlerror());
        exit(2);
    }
}

static void *resolve(const char *name) {
    pthread_once(&once, load);
    void *symbol = dlsym(library, name);
    if (symbol == NULL) {
        fprintf(stderr, "hubscript: the installed libcurl has no %s; install libcurl 7.62 or later\n", name);
        exit(2);
    }
    return symbol;
}

int hubscript_lazy_curl_loaded(void) { return library != NULL; }

// Each wrapper caches the resolved function in a static pointer, read and written
// atomically (threads may race to resolve it; they store the same value).
#define REAL(name)                                                     \
    static name##_fn real;                                             \
    name##_fn function = __atomic_load_n(&real, __ATOMIC_ACQUIRE);     \
    if (function == NULL) {                                            \
        function = (name##_fn)resolve(#name);                          \
        __atomic_store_n(&real, function, __ATOMIC_RELEASE);           \
    }
#define LAZY(ret, name, params, args)                                  \
    typedef ret (*name##_fn) params;                                   \
    ret name params {                                                  \
        REAL(name)                                                     \
        return function args;                                          \
    }
#define LAZY_VOID(name, params, args)                                  \
    typedef void (*name##_fn) params;                                  \
    void name params {                                                 \
        REAL(name)                                                     \
        function args;                                                 \
    }
#define LAZY_VARIADIC(name)                                            \
    typedef int (*name##_fn)(void *, int, ...);                        \
    int name(void *handle, int option, ...) {                          \
        REAL(name)                                                     \
        va_list list;                                                  \
        va_start(list, option);                                        \
        uintptr_t value = va_arg(list, uintptr_t);                     \
        va_end(list);                                                  \
        return function(handle, option, value);                        \
    }

LAZY(int, curl_global_init, (long flags), (flags))
LAZY(void *, curl_easy_init, (void), ())
LAZY_VOID(curl_easy_cleanup, (void *curl), (curl))
LAZY(int, curl_easy_pause, (void *curl, int bitmask), (curl, bitmask))
LAZY(const char *, curl_easy_strerror, (int code), (code))
LAZY_VOID(curl_free, (void *pointer), (pointer))
LAZY(void *, curl_multi_init, (void), ())
LAZY(int, curl_multi_add_handle, (void *multi, void *curl), (multi, curl))
LAZY(int, curl_multi_remove_handle, (void *multi, void *curl), (multi, curl))
LAZY(int, curl_multi_assign, (void *multi, int socket, void *pointer), (multi, socket, pointer))
LAZY(int, curl_multi_cleanup, (void *multi), (multi))
LAZY(void *, curl_multi_info_read, (void *multi, int *queued), (multi, queued))
LAZY(int, curl_multi_socket_action, (void *multi, int socket, int events, int *running), (multi, socket, events, running))
LAZY(void *, curl_slist_append, (void *list, const char *text), (list, text))
LAZY_VOID(curl_slist_free_all, (void *list), (list))
LAZY(void *, curl_url, (void), ())
LAZY(int, curl_url_get, (const void *url, int part, char **out, unsigned int flags), (url, part, out, flags))
LAZY(int, curl_url_set, (void *url, int part, const char *text, unsigned int flags), (url, part, text, flags))
LAZY(char *, curl_version, (void), ())
LAZY(void *, curl_version_info, (int age), (age))
LAZY_VARIADIC(curl_easy_setopt)
LAZY_VARIADIC(curl_easy_getinfo)
LAZY_VARIADIC(curl_multi_setopt)
