// One HTTP exchange through libcurl's easy interface, with the TLS trust a profile
// chooses (a CA bundle file and/or folder). libcurl is loaded with dlopen on the first
// exchange, as FoundationNetworking's is (Sources/CLazyLibraries), so nothing here needs
// libcurl's development headers or links it at build time.
#ifndef HUBSCRIPT_CURL_EXCHANGE_H
#define HUBSCRIPT_CURL_EXCHANGE_H

#include <stddef.h>

typedef struct hubscript_curl_request {
    const char *url;
    const char *method;
    /// "Name: value" lines.
    const char *const *headers;
    size_t header_count;
    const void *body;
    size_t body_length;
    /// PEM bundle of trusted CAs (replaces the default bundle); NULL: libcurl's default.
    const char *ca_file;
    /// Folder of hashed CA certificates (OpenSSL's c_rehash layout); NULL: libcurl's default.
    const char *ca_dir;
    long connect_timeout_ms;
    /// Seconds without a byte before the exchange fails (timed out).
    long idle_timeout_seconds;
    /// Nonzero: a new connection that is closed afterwards (never resent by libcurl).
    int fresh_connection;
    size_t max_response_bytes;
} hubscript_curl_request;

typedef struct hubscript_curl_response {
    /// libcurl's CURLcode (0: a response arrived); -1: libcurl could not be loaded.
    int code;
    long status;
    /// The last response's header lines, CRLF-separated (no status line).
    char *headers;
    size_t headers_length;
    char *body;
    size_t body_length;
    /// Nonzero when the body exceeded max_response_bytes.
    int too_large;
    /// libcurl's words for the failure.
    char error[512];
} hubscript_curl_response;

/// Performs `request`; fills `response` (free it with hubscript_curl_response_free).
/// Thread-safe: easy handles are pooled (their live connections are reused by later
/// exchanges with the same trust settings) under a lock.
void hubscript_curl_perform(const hubscript_curl_request *request, hubscript_curl_response *response);
void hubscript_curl_response_free(hubscript_curl_response *response);

#endif
