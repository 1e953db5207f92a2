// See curl_exchange.h. libcurl's ABI constants are written out (they are stable across
// libcurl 7.x and 8.x): this file is built without curl/curl.h.
#include "curl_exchange.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_WRITEDATA = 10001, OPT_URL = 10002, OPT_ERRORBUFFER = 10010, OPT_WRITEFUNCTION = 20011,
    OPT_POSTFIELDS = 10015, OPT_LOW_SPEED_LIMIT = 19, OPT_LOW_SPEED_TIME = 20, OPT_HTTPHEADER = 10023,
    OPT_HEADERDATA = 10029, OPT_CUSTOMREQUEST = 10036, OPT_NOBODY = 44, OPT_FOLLOWLOCATION = 52,
    OPT_CAINFO = 10065, OPT_FRESH_CONNECT = 74, OPT_FORBID_REUSE = 75, OPT_HEADERFUNCTION = 20079,
    OPT_HTTPGET = 80, OPT_NOSIGNAL = 99, OPT_CAPATH = 10097, OPT_MAXFILESIZE_LARGE = 30117,
    OPT_POSTFIELDSIZE_LARGE = 30120, OPT_PROTOCOLS = 181, OPT_REDIR_PROTOCOLS = 182,
    OPT_CONNECTTIMEOUT_MS = 156, OPT_SUPPRESS_CONNECT_HEADERS = 265, OPT_HTTP_VERSION = 84,
    INFO_RESPONSE_CODE = 0x200000 + 2,
    PROTO_HTTP_HTTPS = 1 | 2, HTTP_VERSION_1_1 = 2, GLOBAL_ALL = 3, E_WRITE_ERROR = 23,
};

typedef void *(*easy_init_fn)(void);
typedef void (*easy_cleanup_fn)(void *);
typedef void (*easy_reset_fn)(void *);
typedef int (*easy_perform_fn)(void *);
typedef int (*easy_setopt_fn)(void *, int, ...);
typedef int (*easy_getinfo_fn)(void *, int, ...);
typedef const char *(*easy_strerror_fn)(int);
typedef void *(*slist_append_fn)(void *, const char *);
typedef void (*slist_free_all_fn)(void *);
typedef int (*global_init_fn)(long);

static struct {
    easy_init_fn easy_init;
    easy_cleanup_fn easy_cleanup;
    easy_reset_fn easy_reset;
    easy_perform_fn easy_perform;
    easy_setopt_fn easy_setopt;
    easy_getinfo_fn easy_getinfo;
    easy_strerror_fn easy_strerror;
    slist_append_fn slist_append;
    slist_free_all_fn slist_free_all;
    const char *failure;
} curl;

static pthread_once_t loaded = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        curl.failure = "HTTPS needs libcurl: install it (Debian: apt-get install libcurl4)";
        return;
    }
#define SYMBOL(field, name) curl.field = (__typeof__(curl.field))dlsym(library, name)
    SYMBOL(easy_init, "curl_easy_init");
    SYMBOL(easy_cleanup, "curl_easy_cleanup");
    SYMBOL(easy_reset, "curl_easy_reset");
    SYMBOL(easy_perform, "curl_easy_perform");
    SYMBOL(easy_setopt, "curl_easy_setopt");
    SYMBOL(easy_getinfo, "curl_easy_getinfo");
    SYMBOL(easy_strerror, "curl_easy_strerror");
    SYMBOL(slist_append, "curl_slist_append");
    SYMBOL(slist_free_all, "curl_slist_free_all");
#undef SYMBOL
    global_init_fn global_init = (global_init_fn)dlsym(library, "curl_global_init");
    if (!curl.easy_init || !curl.easy_cleanup || !curl.easy_reset || !curl.easy_perform || !curl.easy_setopt
        || !curl.easy_getinfo || !curl.easy_strerror || !curl.slist_append || !curl.slist_free_all || !global_init) {
        curl.failure = "the installed libcurl.so.4 lacks a function hubscript calls; install a newer libcurl";
        return;
    }
    global_init(GLOBAL_ALL);
}

// Idle easy handles: each keeps its live connections for the next exchange.
#define POOL_SIZE 8
static void *pool[POOL_SIZE];
static int pooled = 0;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

static void *take_handle(void) {
    void *handle = NULL;
    pthread_mutex_lock(&pool_lock);
    if (pooled > 0) handle = pool[--pooled];
    pthread_mutex_unlock(&pool_lock);
    return handle ? handle : curl.easy_init();
}

static void give_back(void *handle) {
    pthread_mutex_lock(&pool_lock);
    if (pooled < POOL_SIZE) { pool[pooled++] = handle; handle = NULL; }
    pthread_mutex_unlock(&pool_lock);
    if (handle) curl.easy_cleanup(handle);
}

typedef struct buffer {
    char *bytes;
    size_t length, capacity, limit;
    int over;
} buffer;

static int append(buffer *b, const char *data, size_t length) {
    if (b->length + length > b->limit) { b->over = 1; return 0; }
    if (b->length + length + 1 > b->capacity) {
        size_t capacity = b->capacity ? b->capacity : 4096;
        while (capacity < b->length + length + 1) capacity *= 2;
        char *grown = realloc(b->bytes, capacity);
        if (grown == NULL) { b->over = 1; return 0; }
        b->bytes = grown;
        b->capacity = capacity;
    }
    memcpy(b->bytes + b->length, data, length);
    b->length += length;
    b->bytes[b->length] = 0;
    return 1;
}

static size_t on_body(char *data, size_t size, size_t count, void *context) {
    return append((buffer *)context, data, size * count) ? size * count : 0;
}

// Keeps the header lines of the last response only: a status line (an interim 100, a
// proxy's answer) starts over.
static size_t on_header(char *data, size_t size, size_t count, void *context) {
    buffer *b = context;
    size_t length = size * count;
    if (length >= 5 && memcmp(data, "HTTP/", 5) == 0) { b->length = 0; return length; }
    if (length <= 2 && (data[0] == '\r' || data[0] == '\n')) return length;
    return append(b, data, length) ? length : 0;
}

void hubscript_curl_perform(const hubscript_curl_request *request, hubscript_curl_response *response) {
    memset(response, 0, sizeof *response);
    pthread_once(&loaded, load);
    if (curl.failure) {
        response->code = -1;
        snprintf(response->error, sizeof response->error, "%s", curl.failure);
        return;
    }
    void *handle = request->fresh_connection ? curl.easy_init() : take_handle();
    if (handle == NULL) {
        response->code = -1;
        snprintf(response->error, sizeof response->error, "libcurl could not make a handle (out of memory)");
        return;
    }
    curl.easy_reset(handle);
    buffer body = { .limit = request->max_response_bytes }, headers = { .limit = 1 << 20 };
    char error[256] = { 0 };
    void *list = NULL;
    for (size_t i = 0; i < request->header_count; i++) list = curl.slist_append(list, request->headers[i]);
    // No "Expect: 100-continue" wait before a body.
    list = curl.slist_append(list, "Expect:");

    curl.easy_setopt(handle, OPT_URL, request->url);
    curl.easy_setopt(handle, OPT_PROTOCOLS, (long)PROTO_HTTP_HTTPS);
    curl.easy_setopt(handle, OPT_REDIR_PROTOCOLS, (long)PROTO_HTTP_HTTPS);
    curl.easy_setopt(handle, OPT_FOLLOWLOCATION, 0L);
    curl.easy_setopt(handle, OPT_NOSIGNAL, 1L);
    curl.easy_setopt(handle, OPT_HTTP_VERSION, (long)HTTP_VERSION_1_1);
    curl.easy_setopt(handle, OPT_SUPPRESS_CONNECT_HEADERS, 1L);
    curl.easy_setopt(handle, OPT_ERRORBUFFER, error);
    curl.easy_setopt(handle, OPT_HTTPHEADER, list);
    curl.easy_setopt(handle, OPT_WRITEFUNCTION, on_body);
    curl.easy_setopt(handle, OPT_WRITEDATA, &body);
    curl.easy_setopt(handle, OPT_HEADERFUNCTION, on_header);
    curl.easy_setopt(handle, OPT_HEADERDATA, &headers);
    curl.easy_setopt(handle, OPT_CONNECTTIMEOUT_MS, request->connect_timeout_ms);
    curl.easy_setopt(handle, OPT_LOW_SPEED_LIMIT, 1L);
    curl.easy_setopt(handle, OPT_LOW_SPEED_TIME, request->idle_timeout_seconds);
    curl.easy_setopt(handle, OPT_MAXFILESIZE_LARGE, (int64_t)request->max_response_bytes);
    if (request->ca_file) curl.easy_setopt(handle, OPT_CAINFO, request->ca_file);
    if (request->ca_dir) curl.easy_setopt(handle, OPT_CAPATH, request->ca_dir);
    if (request->fresh_connection) {
        curl.easy_setopt(handle, OPT_FRESH_CONNECT, 1L);
        curl.easy_setopt(handle, OPT_FORBID_REUSE, 1L);
    }
    if (strcmp(request->method, "HEAD") == 0) {
        curl.easy_setopt(handle, OPT_NOBODY, 1L);
    } else if (strcmp(request->method, "GET") == 0 && request->body_length == 0) {
        curl.easy_setopt(handle, OPT_HTTPGET, 1L);
    } else {
        curl.easy_setopt(handle, OPT_CUSTOMREQUEST, request->method);
        if (request->body_length > 0 || strcmp(request->method, "POST") == 0) {
            curl.easy_setopt(handle, OPT_POSTFIELDSIZE_LARGE, (int64_t)request->body_length);
            curl.easy_setopt(handle, OPT_POSTFIELDS, request->body_length > 0 ? request->body : "");
        }
    }

    int code = curl.easy_perform(handle);
    response->code = code;
    response->too_large = body.over;
    if (code == 0) {
        curl.easy_getinfo(handle, INFO_RESPONSE_CODE, &response->status);
        response->headers = headers.bytes;
        response->headers_length = headers.length;
        response->body = body.bytes;
        response->body_length = body.length;
    } else {
        free(headers.bytes);
        free(body.bytes);
        snprintf(response->error, sizeof response->error, "%s", error[0] ? error : curl.easy_strerror(code));
        if (code == E_WRITE_ERROR && headers.over) response->too_large = 1;
    }
    curl.easy_setopt(handle, OPT_ERRORBUFFER, NULL);
    curl.easy_setopt(handle, OPT_HTTPHEADER, NULL);
    curl.slist_free_all(list);
    if (request->fresh_connection) curl.easy_cleanup(handle); else give_back(handle);
}

void hubscript_curl_response_free(hubscript_curl_response *response) {
    free(response->headers);
    free(response->body);
    response->headers = response->body = NULL;
}
