/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/graph500/urand.c - the uniform random graph family (as GAPBS's
 * -u generator: every endpoint uniform over the vertices, so degrees are
 * binomial, no hubs, few isolated vertices), and the choice of family by
 * name that the example and the benchmark share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph500.h"

enum { STREAM_URAND = 5 };

int g500_generate_urand(uint32_t scale, uint32_t edgefactor, uint64_t seed, g500_edge_list *out,
                        char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    if (scale < 1 || scale > G500_MAX_SCALE || edgefactor < 1) {
        snprintf(why, why_len,
                 "g500_generate_urand: scale %u, edge factor %u. Fix: scale 1..%d and edge factor "
                 ">= 1",
                 scale, edgefactor, G500_MAX_SCALE);
        return -1;
    }
    uint32_t vertices = 1u << scale;
    uint64_t edges = (uint64_t)edgefactor << scale;
    g500_edge *e = edges <= SIZE_MAX / sizeof *e ? malloc((size_t)edges * sizeof *e) : NULL;
    if (e == NULL) {
        snprintf(why, why_len,
                 "g500_generate_urand: out of memory for %llu edge tuples at scale %u. Fix: a "
                 "smaller scale or edge factor",
                 (unsigned long long)edges, scale);
        return -1;
    }
    /* Counter-based: tuple i is a function of (seed, i) alone. */
    const uint64_t key = g500_mix64(seed + STREAM_URAND * G500_GOLDEN);
    const uint32_t mask = vertices - 1; /* vertices is a power of two */
    for (uint64_t i = 0; i < edges; i++) {
        uint64_t r = g500_mix64(key ^ (i * G500_GOLDEN));
        e[i] = (g500_edge){(uint32_t)r & mask, (uint32_t)(r >> 32) & mask};
    }
    *out = (g500_edge_list){scale, vertices, edges, seed, e};
    return 0;
}

static const char *const family_names[] = {"kron", "urand"};

int g500_family_parse(const char *name, g500_family *out, char *why, size_t why_len)
{
    for (int f = 0; f < 2; f++)
        if (name != NULL && strcmp(name, family_names[f]) == 0) {
            *out = (g500_family)f;
            return 0;
        }
    snprintf(why, why_len, "unknown graph family '%s'. Fix: kron (Graph500 Kronecker) or urand "
             "(uniform random)", name != NULL ? name : "(none)");
    return -1;
}

const char *g500_family_name(g500_family f)
{
    return family_names[f == G500_URAND];
}

int g500_generate_family(g500_family f, uint32_t scale, uint32_t edgefactor, uint64_t seed,
                         g500_edge_list *out, char *why, size_t why_len)
{
    if (f == G500_URAND)
        return g500_generate_urand(scale, edgefactor, seed, out, why, why_len);
    return g500_generate(scale, edgefactor, seed, out, why, why_len);
}
