/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/edge_degrees.h - the degree profile of a generated edge list, as
 * the generator tests check it (test_graph500_kit.c: Kronecker skew;
 * test_graph_kernels.c: uniform degrees). */
#ifndef MKRT_TESTS_EDGE_DEGREES_H
#define MKRT_TESTS_EDGE_DEGREES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "../examples/graph500/graph500.h"

typedef struct edge_degrees {
    uint32_t *deg;     /* per vertex (free it); NULL when out of memory */
    bool in_range;     /* every endpoint is a vertex (counting stops at the first that is not) */
    uint32_t max, isolated;
} edge_degrees;

static inline edge_degrees edge_degrees_of(const g500_edge_list *l)
{
    edge_degrees d = {calloc(l->vertices, sizeof(uint32_t)), true, 0, 0};
    if (d.deg == NULL)
        return d;
    for (uint64_t i = 0; i < l->edges; i++) {
        d.in_range &= l->edge[i].u < l->vertices && l->edge[i].v < l->vertices;
        if (d.in_range) {
            d.deg[l->edge[i].u]++;
            d.deg[l->edge[i].v]++;
        }
    }
    for (uint32_t v = 0; v < l->vertices; v++) {
        d.max = d.deg[v] > d.max ? d.deg[v] : d.max;
        d.isolated += d.deg[v] == 0;
    }
    return d;
}

#endif
