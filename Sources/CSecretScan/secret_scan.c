#include "CSecretScan.h"

#define TABLE_WORDS 1024

static inline size_t slot_of(uint64_t h) { return (size_t)((h * HS_SCAN_MIX) >> 48); }

int hs_scan_probe(const hs_scan_spec *spec, size_t g, uint64_t h) {
    size_t slot = slot_of(h);
    return (spec->tables[g * TABLE_WORDS + (slot >> 6)] >> (slot & 63)) & 1;
}

void hs_scan_start(const hs_scan_spec *spec, const uint8_t *text, size_t n, size_t i, uint64_t *hashes) {
    for (size_t g = 0; g < spec->groups; g++) {
        size_t length = spec->lengths[g];
        if (i + length > n) continue;
        uint64_t h = 0;
        for (size_t k = i; k < i + length; k++) h = h * HS_SCAN_BASE + text[k];
        hashes[g] = h;
    }
}

void hs_scan_roll(const hs_scan_spec *spec, const uint8_t *text, size_t n, size_t i, uint64_t *hashes) {
    for (size_t g = 0; g < spec->groups; g++) {
        size_t length = spec->lengths[g];
        if (i + length < n) hashes[g] = (hashes[g] - text[i] * spec->out_factors[g]) * HS_SCAN_BASE + text[i + length];
    }
}

size_t hs_scan_next(const hs_scan_spec *spec, const uint8_t *text, size_t n, size_t i, uint64_t *hashes) {
    const size_t groups = spec->groups;
    const size_t *lengths = spec->lengths;
    const uint64_t *out = spec->out_factors, *tables = spec->tables;
    if (groups == 1) {
        // One length (the usual case): the same loop, without the inner one.
        const size_t length = lengths[0];
        const uint64_t factor = out[0];
        uint64_t h = hashes[0];
        for (; i + length <= n; i++) {
            size_t slot = slot_of(h);
            if ((tables[slot >> 6] >> (slot & 63)) & 1) { hashes[0] = h; return i; }
            if (i + length < n) h = (h - text[i] * factor) * HS_SCAN_BASE + text[i + length];
        }
        return n;
    }
    for (; i < n; i++) {
        int hit = 0;
        for (size_t g = 0; g < groups; g++) {
            size_t length = lengths[g];
            if (i + length > n) continue;
            size_t slot = slot_of(hashes[g]);
            hit |= (int)((tables[g * TABLE_WORDS + (slot >> 6)] >> (slot & 63)) & 1);
        }
        if (hit) return i;
        for (size_t g = 0; g < groups; g++) {
            size_t length = lengths[g];
            if (i + length < n) hashes[g] = (hashes[g] - text[i] * out[g]) * HS_SCAN_BASE + text[i + length];
        }
    }
    return n;
}
