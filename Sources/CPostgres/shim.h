// CPostgres: Debian's libpq (apt libpq-dev; headers in /usr/include/postgresql, found
// through pkg-config). Only PostgresKit imports this module.
#ifndef HUBSCRIPT_CPOSTGRES_SHIM_H
#define HUBSCRIPT_CPOSTGRES_SHIM_H
#include <libpq-fe.h>

// PG_DIAG_* are character macros, which Swift does not import.
static inline const char *cpg_sqlstate(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_SQLSTATE);
}
static inline const char *cpg_primary_message(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
}
#endif
