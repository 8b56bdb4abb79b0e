/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/graph500/rng.c - splitmix64: the random numbers of the kit.
 * Counter based (g500_mix64 of a seed-derived counter), so a value depends
 * only on (seed, stream, position), never on the order of the calls. */
#include "graph500.h"

void g500_rng_init(g500_rng *r, uint64_t seed, uint64_t stream)
{
    r->state = g500_mix64(seed ^ g500_mix64(stream + G500_GOLDEN));
}

uint64_t g500_rng_next(g500_rng *r)
{
    r->state += G500_GOLDEN;
    return g500_mix64(r->state);
}

uint64_t g500_rng_below(g500_rng *r, uint64_t bound)
{
    /* Reject the top partial copy of [0, bound) so every value is as likely. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x;
    do
        x = g500_rng_next(r);
    while (x >= limit);
    return x % bound;
}
