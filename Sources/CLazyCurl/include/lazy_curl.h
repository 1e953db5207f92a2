// libcurl, loaded on first use (see lazy_curl.c). Nothing to call from Swift: the
// target exists so the executable's link resolves FoundationNetworking's curl calls.
#pragma once
/// Whether libcurl has been loaded (for tests and diagnostics).
int hubscript_lazy_curl_loaded(void);
