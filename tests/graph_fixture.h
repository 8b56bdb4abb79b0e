/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/graph_fixture.h - small CSR graphs and sequential references for
 * the graph tests (test_graph.c on the CPU pool, test_graph_device.c on the
 * devices). Allocation failure bails out of the test. */
#ifndef MKRT_TESTS_GRAPH_FIXTURE_H
#define MKRT_TESTS_GRAPH_FIXTURE_H

#include <stdint.h>

typedef struct test_graph {
    uint32_t v;
    uint64_t *off;
    uint32_t *dst, *w;
} test_graph;

/* A random undirected multigraph (both directions stored), with self loops
 * and an isolated last eighth of the vertices; weights 1..255. */
test_graph test_graph_random(uint32_t v, uint32_t undirected_edges, unsigned seed);
/* The same with hubs: a third of the edges have one end among the first
 * `hubs` vertices, so those have about undirected_edges / (3 hubs) edges
 * or more. */
test_graph test_graph_hubs(uint32_t v, uint32_t undirected_edges, uint32_t hubs, unsigned seed);
/* A path 0 - 1 - ... - v-1 (both directions, no weights): v - 1 levels. */
test_graph test_graph_path(uint32_t v);
/* A ring 0 - 1 - ... - v-1 - 0 (both directions; v >= 3), the edge
 * {u, u+1 mod v} weighing 1 + u % 5. */
test_graph test_graph_ring(uint32_t v);
void test_graph_free(test_graph *g);
/* Queue BFS: level[v] hops from root, UINT32_MAX where unreached. */
void test_graph_ref_bfs(const test_graph *g, uint32_t root, uint32_t *level);
/* O(V^2) Dijkstra (small graphs): dist[v], UINT64_MAX where unreached;
 * weights NULL means 1 per edge. */
void test_graph_ref_sssp(const test_graph *g, uint32_t root, const uint32_t *weights, uint64_t *dist);

#endif
