/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/graph_fixture.c - see graph_fixture.h. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "graph_fixture.h"
#include "tap.h"

static void *need(void *p)
{
    if (p == NULL)
        bail_out("graph fixture: out of memory");
    return p;
}

test_graph test_graph_hubs(uint32_t v, uint32_t undirected_edges, uint32_t hubs, unsigned seed)
{
    test_graph g = {v, need(calloc(v + 1, sizeof(uint64_t))), NULL, NULL};
    uint32_t *a = need(malloc(undirected_edges * sizeof *a + 1)),
             *b = need(malloc(undirected_edges * sizeof *b + 1)),
             *w = need(malloc(undirected_edges * sizeof *w + 1));
    const uint32_t live = v - v / 8;
    for (uint32_t e = 0; e < undirected_edges; e++) {
        a[e] = (uint32_t)rand_r(&seed) % (hubs != 0 && e % 3 == 0 ? hubs : live);
        b[e] = e % 5 == 0 ? (a[e] + 1) % live : (uint32_t)rand_r(&seed) % live;
        w[e] = 1 + (uint32_t)rand_r(&seed) % 255;
        g.off[a[e] + 1]++;
        g.off[b[e] + 1]++;
    }
    for (uint32_t i = 0; i < v; i++)
        g.off[i + 1] += g.off[i];
    g.dst = need(malloc(g.off[v] * sizeof *g.dst + 1));
    g.w = need(malloc(g.off[v] * sizeof *g.w + 1));
    uint64_t *fill = need(malloc(v * sizeof *fill + 1));
    memcpy(fill, g.off, v * sizeof *fill);
    for (uint32_t e = 0; e < undirected_edges; e++) {
        g.dst[fill[a[e]]] = b[e];
        g.w[fill[a[e]]++] = w[e];
        g.dst[fill[b[e]]] = a[e];
        g.w[fill[b[e]]++] = w[e];
    }
    free(fill);
    free(a);
    free(b);
    free(w);
    return g;
}

test_graph test_graph_random(uint32_t v, uint32_t undirected_edges, unsigned seed)
{
    return test_graph_hubs(v, undirected_edges, 0, seed);
}

test_graph test_graph_path(uint32_t v)
{
    test_graph g = {v, need(calloc(v + 1, sizeof(uint64_t))), need(malloc(2 * v * sizeof(uint32_t) + 1)),
                    NULL};
    uint64_t e = 0;
    for (uint32_t i = 0; i < v; i++) {
        if (i > 0)
            g.dst[e++] = i - 1;
        if (i + 1 < v)
            g.dst[e++] = i + 1;
        g.off[i + 1] = e;
    }
    return g;
}

test_graph test_graph_ring(uint32_t v)
{
    test_graph g = {v, need(calloc(v + 1, sizeof(uint64_t))), need(malloc(2 * v * sizeof(uint32_t))),
                    need(malloc(2 * v * sizeof(uint32_t)))};
    uint64_t e = 0;
    for (uint32_t u = 0; u < v; u++) {
        const uint32_t next = (u + 1) % v, prev = (u + v - 1) % v;
        g.dst[e] = next;
        g.w[e++] = 1 + u % 5;
        g.dst[e] = prev;
        g.w[e++] = 1 + prev % 5;
        g.off[u + 1] = e;
    }
    return g;
}

void test_graph_free(test_graph *g)
{
    free(g->off);
    free(g->dst);
    free(g->w);
}

void test_graph_ref_bfs(const test_graph *g, uint32_t root, uint32_t *level)
{
    uint32_t *queue = need(malloc(g->v * sizeof *queue + 1));
    for (uint32_t i = 0; i < g->v; i++)
        level[i] = UINT32_MAX;
    size_t head = 0, tail = 0;
    level[root] = 0;
    queue[tail++] = root;
    while (head < tail) {
        uint32_t u = queue[head++];
        for (uint64_t e = g->off[u]; e < g->off[u + 1]; e++)
            if (level[g->dst[e]] == UINT32_MAX) {
                level[g->dst[e]] = level[u] + 1;
                queue[tail++] = g->dst[e];
            }
    }
    free(queue);
}

void test_graph_ref_sssp(const test_graph *g, uint32_t root, const uint32_t *weights, uint64_t *dist)
{
    bool *done = need(calloc(g->v, 1));
    for (uint32_t i = 0; i < g->v; i++)
        dist[i] = UINT64_MAX;
    dist[root] = 0;
    for (;;) {
        uint32_t u = UINT32_MAX;
        for (uint32_t i = 0; i < g->v; i++)
            if (!done[i] && dist[i] != UINT64_MAX && (u == UINT32_MAX || dist[i] < dist[u]))
                u = i;
        if (u == UINT32_MAX)
            break;
        done[u] = true;
        for (uint64_t e = g->off[u]; e < g->off[u + 1]; e++) {
            uint64_t d = dist[u] + (weights ? weights[e] : 1);
            if (d < dist[g->dst[e]])
                dist[g->dst[e]] = d;
        }
    }
    free(done);
}
