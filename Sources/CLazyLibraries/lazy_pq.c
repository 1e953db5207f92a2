// libpq's functions that PostgresKit calls, loaded the first time a PostgreSQL journal is
// opened (see lazy_load.h).
#include "lazy_libraries.h"
#include "lazy_load.h"

static lazy_library libpq = {
    "libpq.so.5", "a PostgreSQL journal (journal = \"postgresql://…\") needs libpq: install it (Debian: apt-get install libpq5)", 0 };

int hubscript_lazy_pq_loaded(void) { return __atomic_load_n(&libpq.handle, __ATOMIC_ACQUIRE) != NULL; }

typedef void (*notice_processor)(void *argument, const char *message);

LAZY(&libpq, void *, PQconnectdbParams, (const char *const *keywords, const char *const *values, int expand), (keywords, values, expand))
LAZY_VOID(&libpq, PQfinish, (void *connection), (connection))
LAZY_VOID(&libpq, PQreset, (void *connection), (connection))
LAZY(&libpq, int, PQstatus, (const void *connection), (connection))
LAZY(&libpq, char *, PQerrorMessage, (const void *connection), (connection))
LAZY(&libpq, int, PQbackendPID, (const void *connection), (connection))
LAZY(&libpq, notice_processor, PQsetNoticeProcessor, (void *connection, notice_processor processor, void *argument),
     (connection, processor, argument))
LAZY(&libpq, void *, PQexec, (void *connection, const char *query), (connection, query))
LAZY(&libpq, void *, PQexecParams,
     (void *connection, const char *command, int count, const unsigned int *types, const char *const *values,
      const int *lengths, const int *formats, int resultFormat),
     (connection, command, count, types, values, lengths, formats, resultFormat))
LAZY(&libpq, int, PQresultStatus, (const void *result), (result))
LAZY(&libpq, char *, PQresultErrorMessage, (const void *result), (result))
LAZY(&libpq, char *, PQresultErrorField, (const void *result, int field), (result, field))
LAZY_VOID(&libpq, PQclear, (void *result), (result))
LAZY(&libpq, char *, PQcmdTuples, (void *result), (result))
LAZY(&libpq, int, PQntuples, (const void *result), (result))
LAZY(&libpq, int, PQnfields, (const void *result), (result))
LAZY(&libpq, char *, PQgetvalue, (const void *result, int row, int field), (result, row, field))
LAZY(&libpq, int, PQgetisnull, (const void *result, int row, int field), (result, row, field))
LAZY(&libpq, void *, PQconninfoParse, (const char *conninfo, char **errmsg), (conninfo, errmsg))
LAZY_VOID(&libpq, PQconninfoFree, (void *options), (options))
LAZY_VOID(&libpq, PQfreemem, (void *pointer), (pointer))
