// CLuaChunks: Lua chunks of ours, compiled to bytecode ahead of time.
#ifndef HUBSCRIPT_CLUACHUNKS_H
#define HUBSCRIPT_CLUACHUNKS_H
#include <stddef.h>
#include <stdint.h>

// The bytecode of the prelude (data_only 0: Prelude.source; 1: Prelude.dataSource),
// its length, and the hash of the text it was compiled from (PreludeChunk.sourceHash).
// A length of 0: none.
const unsigned char *hs_prelude_bytecode(int data_only, size_t *len, uint64_t *source_hash);
#endif
