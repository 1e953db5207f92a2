#ifndef C_SECRET_SCAN_H
#define C_SECRET_SCAN_H

#include <stddef.h>
#include <stdint.h>

/// The scanning core of SystemText's SecretMatcher: one rolling hash per pattern length
/// over the text, each window's hash probed in that length's 65 536-bit table. Every
/// position costs the same work per length, whatever the bytes: no first-byte search.
typedef struct {
    size_t groups;
    /// Pattern lengths, longest first.
    const size_t *lengths;
    /// base^(length-1) per length, to take the leaving byte out of the hash.
    const uint64_t *out_factors;
    /// 1 024 words per length.
    const uint64_t *tables;
} hs_scan_spec;

#define HS_SCAN_BASE 0x100000001B3ULL
#define HS_SCAN_MIX 0x9E3779B97F4A7C15ULL

/// Sets hashes[g] to the hash of the window of lengths[g] at position i (when it fits).
void hs_scan_start(const hs_scan_spec *spec, const uint8_t *text, size_t n, size_t i, uint64_t *hashes);

/// From position i (hashes holding the windows at i), the first position p >= i where
/// some length's window hash is in its table, with hashes holding the windows at p; n
/// when there is none.
size_t hs_scan_next(const hs_scan_spec *spec, const uint8_t *text, size_t n, size_t i, uint64_t *hashes);

/// Moves the windows at i (in hashes) one byte on.
void hs_scan_roll(const hs_scan_spec *spec, const uint8_t *text, size_t n, size_t i, uint64_t *hashes);

/// Whether the window of length group g, with hash h, is in its table.
int hs_scan_probe(const hs_scan_spec *spec, size_t g, uint64_t h);

#endif
