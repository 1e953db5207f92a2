// A library opened with dlopen the first time one of its functions is called, and the
// wrappers that forward to it (lazy_curl.c, lazy_pq.c).
//
// Why: linked normally, libcurl and libpq each load ~20-30 further libraries (TLS,
// Kerberos, LDAP, IDN…) before main: the larger part of a dynamically linked start
// (docs/performance.md, "Start-up"), for a recipe that uses neither HTTPS nor a
// PostgreSQL journal. The release build (scripts/lib/
// bootstrap.sh) links these wrappers in place of the libraries and drops them from the
// binary's needed list; the first call loads the real library and each wrapper resolves
// its function with dlsym. In the dynamically linked debug build the libraries are
// already loaded and the wrappers, if used at all, find the same functions.
//
// Types are spelled as their ABI (pointers, int, long, unsigned): no header of either
// library is needed here, so the wrappers cannot drift into a second copy of an API.
#pragma once
#include <stddef.h>
#include <stdint.h>

/// A library to load on demand: its soname, what to say if it is missing, and the handle.
typedef struct {
    const char *soname;
    const char *missing;   // the advice printed when dlopen fails (then exit 2)
    void *handle;          // set once, under lazy_load.c's lock
} lazy_library;

/// The function `name` of `library`, loading the library first if needed. A library or
/// symbol that cannot be found is reported on stderr and the process exits with code 2:
/// the caller cannot go on without it.
void *lazy_resolve(lazy_library *library, const char *name);

// Each wrapper caches the resolved function in a static pointer, read and written
// atomically (threads may race to resolve it; they store the same value).
#define LAZY_REAL(lib, name)                                           \
    static name##_fn real;                                             \
    name##_fn function = __atomic_load_n(&real, __ATOMIC_ACQUIRE);     \
    if (function == NULL) {                                            \
        function = (name##_fn)lazy_resolve(lib, #name);                \
        __atomic_store_n(&real, function, __ATOMIC_RELEASE);           \
    }
#define LAZY(lib, ret, name, params, args)                             \
    typedef ret (*name##_fn) params;                                   \
    ret name params {                                                  \
        LAZY_REAL(lib, name)                                           \
        return function args;                                          \
    }
#define LAZY_VOID(lib, name, params, args)                             \
    typedef void (*name##_fn) params;                                  \
    void name params {                                                 \
        LAZY_REAL(lib, name)                                           \
        function args;                                                 \
    }
