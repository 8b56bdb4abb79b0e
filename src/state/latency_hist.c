/* SPDX-License-Identifier: BSD-2-Clause */
/* src/state/latency_hist.c - see latency_hist.h. */
#include "state/latency_hist.h"

static unsigned bucket_of(uint64_t v)
{
    if (v < 16)
        return (unsigned)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v); /* >= 4 */
    unsigned sub = (unsigned)(v >> (e - 4)) & 15u;
    unsigned b = (e - 3) * 16 + sub;
    return b < MKRT_HIST_BUCKETS ? b : MKRT_HIST_BUCKETS - 1;
}

static uint64_t bucket_top(unsigned b)
{
    if (b < 16)
        return b;
    unsigned e = b / 16 + 3, sub = b % 16;
    return ((uint64_t)(16 + sub + 1) << (e - 4)) - 1;
}

void mkrt__hist_record(mkrt__latency_hist *h, uint64_t ns, uint64_t weight)
{
    unsigned b = bucket_of(ns);
    /* relaxed: single writer; readers want a snapshot, not an ordering. */
    atomic_store_explicit(&h->counts[b],
                          atomic_load_explicit(&h->counts[b], memory_order_relaxed) + weight,
                          memory_order_relaxed);
    atomic_store_explicit(&h->samples,
                          atomic_load_explicit(&h->samples, memory_order_relaxed) + weight,
                          memory_order_relaxed);
}

uint64_t mkrt__hist_percentile(const mkrt__latency_hist *h, unsigned permille_x10)
{
    uint64_t total = 0;
    for (unsigned b = 0; b < MKRT_HIST_BUCKETS; b++)
        total += atomic_load_explicit(&h->counts[b], memory_order_relaxed);
    if (total == 0)
        return 0;
    /* rank = ceil(total * p / 10000) */
    uint64_t rank = (total * permille_x10 + 9999) / 10000;
    if (rank == 0)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned b = 0; b < MKRT_HIST_BUCKETS; b++) {
        seen += atomic_load_explicit(&h->counts[b], memory_order_relaxed);
        if (seen >= rank)
            return bucket_top(b);
    }
    return bucket_top(MKRT_HIST_BUCKETS - 1);
}
