// libcurl's functions that FoundationNetworking (URLSession on Linux) calls, loaded on the
// first HTTPS request (see lazy_load.h).
#include "lazy_libraries.h"
#include "lazy_load.h"
#include <stdarg.h>

static lazy_library libcurl = { "libcurl.so.4", "HTTPS needs libcurl: install it (Debian: apt-get install libcurl4)", 0 };

int hubscript_lazy_curl_loaded(void) { return __atomic_load_n(&libcurl.handle, __ATOMIC_ACQUIRE) != NULL; }

// curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic; FoundationNetworking
// always passes exactly one argument after the option (a long, a pointer or a curl_off_t,
// all 64-bit integer-class values on the supported ABIs), forwarded as such.
#define LAZY_VARIADIC(name)                                            \
    typedef int (*name##_fn)(void *, int, ...);                        \
    int name(void *handle, int option, ...) {                          \
        LAZY_REAL(&libcurl, name)                                         \
        va_list list;                                                  \
        va_start(list, option);                                        \
        uintptr_t value = va_arg(list, uintptr_t);                     \
        va_end(list);                                                  \
        return function(handle, option, value);                        \
    }

LAZY(&libcurl, int, curl_global_init, (long flags), (flags))
LAZY(&libcurl, void *, curl_easy_init, (void), ())
LAZY_VOID(&libcurl, curl_easy_cleanup, (void *curl), (curl))
LAZY(&libcurl, int, curl_easy_pause, (void *curl, int bitmask), (curl, bitmask))
LAZY(&libcurl, const char *, curl_easy_strerror, (int code), (code))
LAZY_VOID(&libcurl, curl_free, (void *pointer), (pointer))
LAZY(&libcurl, void *, curl_multi_init, (void), ())
LAZY(&libcurl, int, curl_multi_add_handle, (void *multi, void *curl), (multi, curl))
LAZY(&libcurl, int, curl_multi_remove_handle, (void *multi, void *curl), (multi, curl))
LAZY(&libcurl, int, curl_multi_assign, (void *multi, int socket, void *pointer), (multi, socket, pointer))
LAZY(&libcurl, int, curl_multi_cleanup, (void *multi), (multi))
LAZY(&libcurl, void *, curl_multi_info_read, (void *multi, int *queued), (multi, queued))
LAZY(&libcurl, int, curl_multi_socket_action, (void *multi, int socket, int events, int *running), (multi, socket, events, running))
LAZY(&libcurl, void *, curl_slist_append, (void *list, const char *text), (list, text))
LAZY_VOID(&libcurl, curl_slist_free_all, (void *list), (list))
LAZY(&libcurl, void *, curl_url, (void), ())
LAZY(&libcurl, int, curl_url_get, (const void *url, int part, char **out, unsigned int flags), (url, part, out, flags))
LAZY(&libcurl, int, curl_url_set, (void *url, int part, const char *text, unsigned int flags), (url, part, text, flags))
LAZY(&libcurl, char *, curl_version, (void), ())
LAZY(&libcurl, void *, curl_version_info, (int age), (age))
LAZY_VARIADIC(curl_easy_setopt)
LAZY_VARIADIC(curl_easy_getinfo)
LAZY_VARIADIC(curl_multi_setopt)
