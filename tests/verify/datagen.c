#include "datagen.h"
#include <string.h>

uint64_t gen_stream(uint32_t seed, int rank, int tag)
{
    uint64_t h = gen_mix(((uint64_t)seed << 32) ^ (uint32_t)rank);
    return gen_mix(h ^ ((uint64_t)(uint32_t)tag << 17));
}

/* FNV-1a over 8-byte words (tail bytewise): fast enough for MB-sized buffers. */
uint64_t hash_bytes(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    size_t i = 0;
    h ^= 0xcbf29ce484222325ULL;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0x100000001b3ULL;
    }
    for (; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}
