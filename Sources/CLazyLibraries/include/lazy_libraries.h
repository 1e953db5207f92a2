// libcurl and libpq, loaded on first use (see lazy_load.h). Nothing to call from Swift:
// the target exists so the release link resolves FoundationNetworking's curl calls and
// PostgresKit's libpq calls without loading either library at start-up.
#pragma once
/// Whether libcurl has been loaded (diagnostics).
int hubscript_lazy_curl_loaded(void);
/// Whether libpq has been loaded (diagnostics).
int hubscript_lazy_pq_loaded(void);
