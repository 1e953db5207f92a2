// CSodium: Debian's libsodium (apt libsodium-dev): SHA-256 for recipe digests and
// idempotency keys, AEAD and password hashing for the vault.
#ifndef HUBSCRIPT_CSODIUM_SHIM_H
#define HUBSCRIPT_CSODIUM_SHIM_H
#include <sodium.h>
#endif
