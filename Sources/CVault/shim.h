// CVault: the vault's two C helpers (everything else it needs is libsodium's).
//
// 1. SHA-256 with the x86 SHA extensions, for the vault's object ids (the SHA-256 of
// every object file). libsodium's portable SHA-256 is slower than the put-object
// target, and this several times faster (scripts/bench-vault; docs/performance.md,
// "The vault"). Sources/SHA256Kit/SHA256.swift uses it only where the CPU has the
// extensions (hs_sha256_ni_available) and libsodium everywhere else; SHA256KitTests
// checks it against libsodium. A system library target cannot hold .c files, so
// everything here is static inline; names start with hs_.
#ifndef HUBSCRIPT_CVAULT_SHIM_H
#define HUBSCRIPT_CVAULT_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/// Running state: the eight words, bytes hashed so far, a partial block.
typedef struct {
    uint32_t h[8];
    uint64_t length;
    uint8_t block[64];
    size_t used;
} hs_sha256_ni_state;

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

/// Whether this CPU has SHA, SSSE3 and SSE4.1 (CPUID leaf 1 ECX, leaf 7 EBX).
static inline int hs_sha256_ni_available(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSSE3) || !(c & bit_SSE4_1)) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (b & bit_SHA) != 0;
}

static const uint32_t hs_sha256_ni_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/// Compresses `blocks` 64-byte blocks into `h` (Intel's SHA extensions: state as
/// ABEF/CDGH, four rounds per two sha256rnds2, the schedule with sha256msg1/msg2).
__attribute__((target("sha,ssse3,sse4.1")))
static inline void hs_sha256_ni_blocks(uint32_t h[8], const uint8_t *data, size_t blocks) {
    const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[0]), 0xB1);   // CDAB
    __m128i s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]), 0x1B);  // EFGH
    __m128i s0 = _mm_alignr_epi8(t, s1, 8);                                          // ABEF
    s1 = _mm_blend_epi16(s1, t, 0xF0);                                               // CDGH
    while (blocks--) {
        __m128i abef = s0, cdgh = s1, w[4];
        for (int i = 0; i < 4; i++) w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * i)), swap);
        _Pragma("clang loop unroll(full)")
        for (int i = 0; i < 16; i++) {
            __m128i m = _mm_add_epi32(w[i & 3], _mm_loadu_si128((const __m128i *)&hs_sha256_ni_k[4 * i]));
            s1 = _mm_sha256rnds2_epu32(s1, s0, m);
            s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(m, 0x0E));
            if (i < 12) {
                // W[4(i+4)…] = msg2(msg1(W[i], W[i+1]) + W[i+2..i+3] shifted one word, W[i+3])
                __m128i w7 = _mm_alignr_epi8(w[(i + 3) & 3], w[(i + 2) & 3], 4);
                w[i & 3] = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(w[i & 3], w[(i + 1) & 3]), w7), w[(i + 3) & 3]);
            }
        }
        s0 = _mm_add_epi32(s0, abef);
        s1 = _mm_add_epi32(s1, cdgh);
        data += 64;
    }
    t = _mm_shuffle_epi32(s0, 0x1B);   // FEBA
    s1 = _mm_shuffle_epi32(s1, 0xB1);  // DCHG
    _mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(t, s1, 0xF0));   // DCBA
    _mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(s1, t, 8));     // HGFE
}
#else
static inline int hs_sha256_ni_available(void) { return 0; }
static inline void hs_sha256_ni_blocks(uint32_t h[8], const uint8_t *data, size_t blocks) {
    (void)h; (void)data; (void)blocks;
}

#endif

static inline void hs_sha256_ni_init(hs_sha256_ni_state *s) {
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, iv, sizeof iv);
    s->length = 0;
    s->used = 0;
}

static inline void hs_sha256_ni_update(hs_sha256_ni_state *s, const uint8_t *data, size_t count) {
    s->length += count;
    if (s->used > 0) {
        size_t take = 64 - s->used < count ? 64 - s->used : count;
        memcpy(s->block + s->used, data, take);
        s->used += take;
        data += take;
        count -= take;
        if (s->used < 64) return;
        hs_sha256_ni_blocks(s->h, s->block, 1);
        s->used = 0;
    }
    if (count >= 64) {
        hs_sha256_ni_blocks(s->h, data, count / 64);
        data += count / 64 * 64;
        count %= 64;
    }
    memcpy(s->block, data, count);
    s->used = count;
}

static inline void hs_sha256_ni_final(hs_sha256_ni_state *s, uint8_t out[32]) {
    uint64_t bits = s->length * 8;
    uint8_t pad[72] = {0x80};
    size_t padding = s->used < 56 ? 56 - s->used : 120 - s->used;
    for (int i = 0; i < 8; i++) pad[padding + i] = (uint8_t)(bits >> (56 - 8 * i));
    hs_sha256_ni_update(s, pad, padding + 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)s->h[i];
    }
}


// 2. Linux's sync_file_range(SYNC_FILE_RANGE_WRITE), to start writing a large file's
// pages out while it is still being written, so the closing fsync has little left to
// wait for. Glibc declares it only under _GNU_SOURCE, which Swift's Glibc module is
// not built with; the symbol is there. Elsewhere it does nothing.
#if defined(__linux__)
extern int sync_file_range(int fd, long long offset, long long count, unsigned int flags);
static inline void hs_start_writeback(int fd, long long offset, long long count) {
    (void)sync_file_range(fd, offset, count, 2 /* SYNC_FILE_RANGE_WRITE */);
}
#else
static inline void hs_start_writeback(int fd, long long offset, long long count) {
    (void)fd; (void)offset; (void)count;
}
#endif

#endif
