/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/graph500/roots.c - Graph500's search keys: distinct random
 * vertices with at least one neighbour (a partial Fisher-Yates shuffle of
 * the vertices of degree > 0, so the draw always ends). */
#include <stdio.h>
#include <stdlib.h>

#include "graph500.h"

enum { STREAM_ROOTS = 5 };

int g500_sample_roots(const g500_csr *g, uint64_t seed, uint32_t n, uint32_t *roots, char *why,
                      size_t why_len)
{
    uint32_t eligible = 0;
    for (uint32_t v = 0; v < g->vertices; v++)
        eligible += g->offsets[v + 1] > g->offsets[v];
    if (eligible < n) {
        snprintf(why, why_len,
                 "g500_sample_roots: %u roots asked for but only %u of the %u vertices have a "
                 "neighbour. Fix: fewer roots or a larger scale",
                 n, eligible, g->vertices);
        return -1;
    }
    uint32_t *pool = malloc((size_t)(eligible ? eligible : 1) * sizeof *pool);
    if (pool == NULL) {
        snprintf(why, why_len, "g500_sample_roots: out of memory for %u candidates", eligible);
        return -1;
    }
    uint32_t k = 0;
    for (uint32_t v = 0; v < g->vertices; v++)
        if (g->offsets[v + 1] > g->offsets[v])
            pool[k++] = v;
    g500_rng r;
    g500_rng_init(&r, seed, STREAM_ROOTS);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = i + (uint32_t)g500_rng_below(&r, (uint64_t)(eligible - i));
        uint32_t tmp = pool[i];
        pool[i] = pool[j];
        pool[j] = tmp;
        roots[i] = pool[i];
    }
    free(pool);
    return 0;
}
