/* SPDX-License-Identifier: BSD-2-Clause */
/* base/bitmap.h - the one bitmap of the runtime: an array of atomic
 * 64-bit words, bit i in word i / 64 at i % 64 (the graph engine's
 * frontiers, visited and far sets, and the sweep kinds' active sets).
 *
 * A bitmap is `mkrt__bitmap *` pointing at mkrt__bitmap_words(bits)
 * words; it keeps no length (the caller knows it, as with an array).
 * Every access is relaxed: the bits are set and read by threads whose
 * phases are ordered by something else (a batch's launch and completion,
 * a barrier), never used to publish other data. A caller that needs an
 * order gets it from that outer edge and says so where it calls.
 *
 * Compiled as CUDA C++ too (the megakernel's traversal jobs,
 * src/cuda/megakernel.cu): there a bitmap is plain 64-bit words in device
 * memory and the same calls are device functions over CUDA's atomics
 * (relaxed, device scope), so the device loop in C (backend/mk_trav.h)
 * and the kernel name the same operations. */
#ifndef MKRT_BASE_BITMAP_H
#define MKRT_BASE_BITMAP_H

#if defined(__CUDACC__)
#include <stddef.h>
#include <stdint.h>

typedef unsigned long long mkrt__bitmap;
#define MKRT__BITMAP_NONE SIZE_MAX

__host__ __device__ static inline size_t mkrt__bitmap_words(size_t bits)
{
    return (bits + 63) / 64;
}

/* Word w as it is now (read past L1: other blocks write it). */
__device__ static inline uint64_t mkrt__bitmap_word(const mkrt__bitmap *b, size_t w)
{
    return __ldcg(&b[w]);
}

__device__ static inline bool mkrt__bitmap_test(const mkrt__bitmap *b, size_t i)
{
    return (__ldcg(&b[i / 64]) >> (i % 64)) & 1u;
}

__device__ static inline bool mkrt__bitmap_set_new(mkrt__bitmap *b, size_t i)
{
    const unsigned long long bit = 1ull << (i % 64);
    return !(__ldcg(&b[i / 64]) & bit) && !(atomicOr(&b[i / 64], bit) & bit);
}

__device__ static inline void mkrt__bitmap_set(mkrt__bitmap *b, size_t i)
{
    (void)mkrt__bitmap_set_new(b, i);
}

__device__ static inline void mkrt__bitmap_clear(mkrt__bitmap *b, size_t i)
{
    const unsigned long long bit = 1ull << (i % 64);
    if (__ldcg(&b[i / 64]) & bit)
        atomicAnd(&b[i / 64], ~bit);
}

/* The lowest set bit of a word taken from a bitmap (x != 0). */
__host__ __device__ static inline uint32_t mkrt__bitmap_lowest(uint64_t x)
{
#if defined(__CUDA_ARCH__)
    return (uint32_t)(__ffsll((long long)x) - 1);
#else
    return (uint32_t)__builtin_ctzll(x);
#endif
}

/* Word w, cleared (the frontier's take of 64 vertices at once). */
__device__ static inline uint64_t mkrt__bitmap_take(mkrt__bitmap *b, size_t w)
{
    return __ldcg(&b[w]) != 0 ? atomicExch(&b[w], 0ull) : 0;
}

/* Plain store of a whole word (its writer alone writes it in the phase). */
__device__ static inline void mkrt__bitmap_word_set(mkrt__bitmap *b, size_t w, uint64_t x)
{
    __stcg(&b[w], (unsigned long long)x);
}

#else
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef _Atomic uint64_t mkrt__bitmap;

#define MKRT__BITMAP_NONE SIZE_MAX

/* Words that hold `bits` bits. */
static inline size_t mkrt__bitmap_words(size_t bits)
{
    return (bits + 63) / 64;
}

/* The bits set in x, inline. x86-64's baseline has no POPCNT, so without
 * -mpopcnt __builtin_popcountll is a call into libgcc for every word: 2%
 * of an SSSP search's cycles (bench/results/graph.md, "Bit counts inline"). */
static inline uint64_t mkrt__popcount64(uint64_t x)
{
#if defined(__POPCNT__) || !(defined(__x86_64__) || defined(__i386__))
    return (uint64_t)__builtin_popcountll(x);
#else
    x -= (x >> 1) & 0x5555555555555555u;
    x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fu;
    return (x * 0x0101010101010101u) >> 56;
#endif
}

/* Whether bit i is set. */
static inline bool mkrt__bitmap_test(const mkrt__bitmap *b, size_t i)
{
    return (atomic_load_explicit((mkrt__bitmap *)&b[i / 64], memory_order_relaxed) >> (i % 64)) & 1u;
}

/* Sets bit i (any thread; a plain load first skips the locked OR when
 * the bit is already set). */
static inline void mkrt__bitmap_set(mkrt__bitmap *b, size_t i)
{
    const uint64_t bit = (uint64_t)1 << (i % 64);
    if (!(atomic_load_explicit(&b[i / 64], memory_order_relaxed) & bit))
        atomic_fetch_or_explicit(&b[i / 64], bit, memory_order_relaxed);
}

/* Sets bit i atomically; true exactly for the one caller whose OR set it
 * (of several threads setting it at once, one gets true). */
static inline bool mkrt__bitmap_set_new(mkrt__bitmap *b, size_t i)
{
    const uint64_t bit = (uint64_t)1 << (i % 64);
    return !(atomic_load_explicit(&b[i / 64], memory_order_relaxed) & bit) &&
           !(atomic_fetch_or_explicit(&b[i / 64], bit, memory_order_relaxed) & bit);
}

/* Sets bit i of a bitmap that no other thread writes meanwhile (a load
 * and a store, no locked instruction); true when it was clear. relaxed:
 * the caller's own ordering publishes the word, as for the OR above. */
static inline bool mkrt__bitmap_set_new_alone(mkrt__bitmap *b, size_t i)
{
    const uint64_t bit = (uint64_t)1 << (i % 64), word = atomic_load_explicit(&b[i / 64], memory_order_relaxed);
    if (word & bit)
        return false;
    atomic_store_explicit(&b[i / 64], word | bit, memory_order_relaxed);
    return true;
}

/* Clears bit i (any thread). */
static inline void mkrt__bitmap_clear(mkrt__bitmap *b, size_t i)
{
    const uint64_t bit = (uint64_t)1 << (i % 64);
    if (atomic_load_explicit(&b[i / 64], memory_order_relaxed) & bit)
        atomic_fetch_and_explicit(&b[i / 64], ~bit, memory_order_relaxed);
}

/* Clears bits [from, to) with plain stores: no other thread may write
 * the words it touches meanwhile (the words at the ends are read, masked
 * and written back). */
static inline void mkrt__bitmap_clear_range(mkrt__bitmap *b, size_t from, size_t to)
{
    if (from >= to)
        return;
    size_t w = from / 64;
    const size_t last = (to - 1) / 64;
    for (; w <= last; w++) {
        uint64_t keep = 0;
        if (w == from / 64)
            keep |= ((uint64_t)1 << (from % 64)) - 1;
        if (w == last && to % 64 != 0)
            keep |= ~(((uint64_t)1 << (to % 64)) - 1);
        const uint64_t x = keep ? atomic_load_explicit(&b[w], memory_order_relaxed) & keep : 0;
        atomic_store_explicit(&b[w], x, memory_order_relaxed);
    }
}

/* Bits set in the first `words` words: the CPU's POPCNT where it has
 * one (every x86-64 CPU since 2008; checked once per call), else
 * mkrt__popcount64. A level's frontier is counted whole (4096 words at
 * scale 18), so the instruction is worth the check. */
#if (defined(__x86_64__) || defined(__i386__)) && !defined(__POPCNT__) && defined(__GNUC__)
__attribute__((target("popcnt"))) static inline uint64_t mkrt__bitmap_count_popcnt(const mkrt__bitmap *b,
                                                                                    size_t words)
{
    uint64_t n = 0;
    for (size_t w = 0; w < words; w++)
        n += (uint64_t)__builtin_popcountll(atomic_load_explicit((mkrt__bitmap *)&b[w], memory_order_relaxed));
    return n;
}
#define MKRT__BITMAP_COUNT_DISPATCH 1
#endif

static inline uint64_t mkrt__bitmap_count(const mkrt__bitmap *b, size_t words)
{
#ifdef MKRT__BITMAP_COUNT_DISPATCH
    if (__builtin_cpu_supports("popcnt"))
        return mkrt__bitmap_count_popcnt(b, words);
#endif
    uint64_t n = 0;
    for (size_t w = 0; w < words; w++)
        n += mkrt__popcount64(atomic_load_explicit((mkrt__bitmap *)&b[w], memory_order_relaxed));
    return n;
}

/* The first set bit at or after i among the first `words` words, or
 * MKRT__BITMAP_NONE (iterate: for (i = next(b, w, 0); i != NONE; i =
 * next(b, w, i + 1))). */
static inline size_t mkrt__bitmap_next(const mkrt__bitmap *b, size_t words, size_t i)
{
    size_t w = i / 64;
    if (w >= words)
        return MKRT__BITMAP_NONE;
    uint64_t x = atomic_load_explicit((mkrt__bitmap *)&b[w], memory_order_relaxed) & (~(uint64_t)0 << (i % 64));
    while (x == 0) {
        if (++w >= words)
            return MKRT__BITMAP_NONE;
        x = atomic_load_explicit((mkrt__bitmap *)&b[w], memory_order_relaxed);
    }
    return w * 64 + (size_t)__builtin_ctzll(x);
}

/* The lowest set bit of a word taken from a bitmap (x != 0): iterate a
 * word with for (; x != 0; x &= x - 1) ... lowest(x). */
static inline uint32_t mkrt__bitmap_lowest(uint64_t x)
{
    return (uint32_t)__builtin_ctzll(x);
}

/* Word w as it is now. */
static inline uint64_t mkrt__bitmap_word(const mkrt__bitmap *b, size_t w)
{
    return atomic_load_explicit((mkrt__bitmap *)&b[w], memory_order_relaxed);
}

/* Word w, cleared (a frontier's take of 64 vertices at once; of several
 * takers one gets each bit). */
static inline uint64_t mkrt__bitmap_take(mkrt__bitmap *b, size_t w)
{
    return atomic_load_explicit(&b[w], memory_order_relaxed) != 0
               ? atomic_exchange_explicit(&b[w], 0, memory_order_relaxed)
               : 0;
}

/* Stores a whole word (its writer alone writes it in the phase). */
static inline void mkrt__bitmap_word_set(mkrt__bitmap *b, size_t w, uint64_t x)
{
    atomic_store_explicit(&b[w], x, memory_order_relaxed);
}

#endif /* __CUDACC__ */

#endif
