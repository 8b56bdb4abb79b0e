/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/graph/igraph_engine.c - BFS and SSSP on igraph 0.10: igraph_bfs
 * (parents only) and igraph_distances_dijkstra from one source. igraph is
 * sequential: the bench's thread count does not apply. The graph and the
 * weight vector are built from the CSR once, in open (not timed); the
 * result vectors are sized there too so a search does not grow them. */
#ifdef HAVE_IGRAPH
#include <igraph.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "peers.h"

struct traverse_engine {
    const g500_csr *g;
    igraph_t graph;
    igraph_vector_t weights;
    igraph_vector_int_t parents;
    igraph_matrix_t dist; /* 1 x vertices */
    int built;            /* how many of the four above exist */
};

static void ig_close(traverse_engine *e)
{
    if (e == NULL)
        return;
    if (e->built > 3)
        igraph_matrix_destroy(&e->dist);
    if (e->built > 2)
        igraph_vector_int_destroy(&e->parents);
    if (e->built > 1)
        igraph_vector_destroy(&e->weights);
    if (e->built > 0)
        igraph_destroy(&e->graph);
    free(e);
}

/* The edges u < v of the CSR, in row order, and their weights likewise. */
static igraph_error_t build(traverse_engine *e)
{
    const g500_csr *g = e->g;
    const igraph_integer_t m = (igraph_integer_t)(g->offsets[g->vertices] / 2);
    igraph_vector_int_t edges;
    IGRAPH_CHECK(igraph_vector_int_init(&edges, 2 * m));
    igraph_integer_t k2 = 0;
    for (uint32_t u = 0; u < g->vertices; u++)
        for (uint64_t k = g->offsets[u]; k < g->offsets[u + 1]; k++)
            if (u < g->targets[k]) {
                VECTOR(edges)[2 * k2] = u;
                VECTOR(edges)[2 * k2 + 1] = g->targets[k];
                k2++;
            }
    igraph_error_t rc = igraph_create(&e->graph, &edges, g->vertices, IGRAPH_UNDIRECTED);
    igraph_vector_int_destroy(&edges);
    if (rc != IGRAPH_SUCCESS)
        return rc;
    e->built = 1;
    IGRAPH_CHECK(igraph_vector_init(&e->weights, m));
    e->built = 2;
    k2 = 0;
    for (uint32_t u = 0; u < g->vertices; u++)
        for (uint64_t k = g->offsets[u]; k < g->offsets[u + 1]; k++)
            if (u < g->targets[k])
                VECTOR(e->weights)[k2++] = g->weights != NULL ? g->weights[k] : 1.0;
    IGRAPH_CHECK(igraph_vector_int_init(&e->parents, g->vertices));
    e->built = 3;
    IGRAPH_CHECK(igraph_matrix_init(&e->dist, 1, g->vertices));
    e->built = 4;
    return IGRAPH_SUCCESS;
}

static traverse_engine *ig_open(const g500_csr *g, unsigned threads, char *why, size_t why_len)
{
    (void)threads; /* igraph's searches are sequential */
    igraph_set_error_handler(igraph_error_handler_printignore); /* errors return, not abort */
    traverse_engine *e = calloc(1, sizeof *e);
    if (e == NULL) {
        snprintf(why, why_len, "igraph: out of memory");
        return NULL;
    }
    e->g = g;
    igraph_error_t rc = build(e);
    if (rc != IGRAPH_SUCCESS) {
        snprintf(why, why_len, "igraph: building the graph failed: %s", igraph_strerror(rc));
        ig_close(e);
        return NULL;
    }
    return e;
}

static int ig_bfs(traverse_engine *e, uint32_t root, uint32_t *parent, char *why, size_t why_len)
{
    igraph_error_t rc = igraph_bfs(&e->graph, root, NULL, IGRAPH_ALL, 0, NULL, NULL, NULL,
                                   &e->parents, NULL, NULL, NULL, NULL, NULL);
    if (rc != IGRAPH_SUCCESS) {
        snprintf(why, why_len, "igraph_bfs from %u: %s", root, igraph_strerror(rc));
        return -1;
    }
    /* igraph: -1 for the root, -2 where unreached. */
    for (uint32_t v = 0; v < e->g->vertices; v++) {
        igraph_integer_t p = VECTOR(e->parents)[v];
        parent[v] = p >= 0 ? (uint32_t)p : G500_NO_PARENT;
    }
    parent[root] = root;
    return 0;
}

static int ig_sssp(traverse_engine *e, uint32_t root, uint64_t *dist, char *why, size_t why_len)
{
    igraph_error_t rc = igraph_distances_dijkstra(&e->graph, &e->dist, igraph_vss_1(root),
                                                  igraph_vss_all(), &e->weights, IGRAPH_ALL);
    if (rc != IGRAPH_SUCCESS) {
        snprintf(why, why_len, "igraph_distances_dijkstra from %u: %s", root, igraph_strerror(rc));
        return -1;
    }
    for (uint32_t v = 0; v < e->g->vertices; v++) {
        igraph_real_t d = MATRIX(e->dist, 0, v);
        dist[v] = isfinite(d) ? (uint64_t)d : G500_INF;
    }
    return 0;
}

const traverse_ops traverse_igraph_ops = {"igraph", ig_open, ig_bfs, ig_sssp, ig_close, NULL, NULL, NULL};

#else
/* Built without igraph: bench/graph_bench.c says it skipped it. */
typedef int igraph_engine_not_built;
#endif
