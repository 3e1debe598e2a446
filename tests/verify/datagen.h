/* Deterministic test data: every value is a pure function of (seed, source rank, tag, index),
 * so any rank can compute what any other rank contributed without communicating. Expected
 * results are derived from these functions, never from the library under test.
 *
 * A stream fixes (seed, rank, tag); values along it cost one mixing step each. `tag`
 * separates streams, e.g. the destination of an alltoall block, so misrouted blocks never
 * look right by accident. */
#ifndef VERIFY_DATAGEN_H
#define VERIFY_DATAGEN_H
#include <stddef.h>
#include <stdint.h>

/* splitmix64 finalizer: every input bit affects every output bit. */
static inline uint64_t gen_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t gen_stream(uint32_t seed, int rank, int tag);
static inline uint64_t gen_at(uint64_t stream, size_t idx)
{
    return gen_mix(stream ^ ((uint64_t)idx * 0xd1b54a32d192ed03ULL));
}

#define SENTINEL_INT ((int32_t)0x5A5A5A5A)
#define SENTINEL_BYTE ((uint8_t)0x5A)

/* Payload unit of a byte collective (see layouts.h): an int or a byte that never equals the
 * sentinel, so an untouched receive slot cannot pass for delivered data. */
static inline int32_t gen_int(uint64_t stream, size_t idx)
{
    int32_t v = (int32_t)(gen_at(stream, idx) >> 32);
    return v == SENTINEL_INT ? v ^ 1 : v;
}

static inline uint8_t gen_byte(uint64_t stream, size_t idx)
{
    uint8_t v = (uint8_t)(gen_at(stream, idx) >> 40);
    return v == SENTINEL_BYTE ? (uint8_t)(v ^ 1) : v;
}

/* Hash of a byte range, to detect a send buffer the library wrote into. */
uint64_t hash_bytes(const void *p, size_t n, uint64_t h);
#endif
