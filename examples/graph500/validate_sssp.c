/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/graph500/validate_sssp.c - the rules for SSSP distances
 * (g500_validate_sssp in graph500.h lists them). The graph is undirected
 * with the same weight both ways, so a vertex's own row holds the edges
 * into it. */
#include <stdio.h>

#include "graph500.h"

static uint32_t weight_at(const g500_csr *g, uint64_t k)
{
    return g->weights != NULL ? g->weights[k] : 1u;
}

/* Edge (u, v) with u reached: v reached, and dist[v] <= dist[u] + w. */
static int check_edge(uint32_t root, uint32_t u, uint32_t v, uint32_t w, const uint64_t *dist,
                      char *why, size_t why_len)
{
    const uint64_t du = dist[u], dv = dist[v];
    if (dv == G500_INF) {
        snprintf(why, why_len,
                 "SSSP from %u: edge (%u, %u) joins reached vertex %u and unreached vertex %u: the "
                 "reached vertices are not root's component",
                 root, u, v, u, v);
        return 1;
    }
    if (du <= UINT64_MAX - w && dv > du + w) {
        snprintf(why, why_len,
                 "SSSP from %u: dist[%u] = %llu but dist[%u] + w(%u, %u) = %llu + %u is shorter: "
                 "not a shortest distance",
                 root, v, (unsigned long long)dv, u, u, v, (unsigned long long)du, w);
        return 1;
    }
    return 0;
}

/* v reached, not root: some neighbour u has dist[v] == dist[u] + w. */
static int check_tight(const g500_csr *g, uint32_t root, uint32_t v, const uint64_t *dist,
                       char *why, size_t why_len)
{
    const uint64_t dv = dist[v];
    for (uint64_t k = g->offsets[v]; k < g->offsets[v + 1]; k++) {
        const uint64_t du = dist[g->targets[k]], w = weight_at(g, k);
        if (du != G500_INF && du <= dv && dv - du == w)
            return 0;
    }
    snprintf(why, why_len,
             "SSSP from %u: no neighbour u of vertex %u has dist[u] + w(u, %u) == dist[%u] = %llu: "
             "the distance is not reached by any path",
             root, v, v, v, (unsigned long long)dv);
    return 1;
}

int g500_validate_sssp(const g500_csr *g, uint32_t root, const uint64_t *dist, char *why,
                       size_t why_len)
{
    const uint32_t n = g->vertices;
    if (root >= n) {
        snprintf(why, why_len, "g500_validate_sssp: root %u, but the graph has %u vertices", root,
                 n);
        return -1;
    }
    if (dist[root] != 0) {
        snprintf(why, why_len, "SSSP from %u: dist[root] is %llu, not 0", root,
                 (unsigned long long)dist[root]);
        return 1;
    }
    for (uint32_t u = 0; u < n; u++) {
        if (dist[u] == G500_INF)
            continue;
        for (uint64_t k = g->offsets[u]; k < g->offsets[u + 1]; k++)
            if (check_edge(root, u, g->targets[k], weight_at(g, k), dist, why, why_len) != 0)
                return 1;
        if (u != root && check_tight(g, root, u, dist, why, why_len) != 0)
            return 1;
    }
    return 0;
}
