// CSQLite: Debian's libsqlite3 (apt libsqlite3-dev). Only the journal and the sandbox
// store import this module.
#ifndef HUBSCRIPT_CSQLITE_SHIM_H
#define HUBSCRIPT_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }
// sqlite3_db_config is variadic, which Swift cannot call.
static inline int csqlite_set_no_checkpoint_on_close(sqlite3 *db, int on) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, on, (int *)0);
}
static inline int csqlite_enable_foreign_keys(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FKEY, 1, (int *)0);
}
// No page-cache memory set aside up front (sqlite3_config is variadic): by default each
// connection's cache allocates and touches 20 pages' worth at its first page, most of
// which a short run never uses. Only works before SQLite is initialized (else MISUSE,
// harmless: the default stays).
static inline int csqlite_no_bulk_page_cache(void) {
    return sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0);
}
#endif
