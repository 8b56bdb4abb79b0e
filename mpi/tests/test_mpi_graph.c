/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/tests/test_mpi_graph.c - libmkrt_mpi's distributed BFS and SSSP
 * (mkrt_mpi/graph.h) at any number of ranks (TAP on rank 0): every result
 * gathered to rank 0 is compared with a serial BFS and a serial Dijkstra
 * on the same graph (block and hash partitions, a symmetric graph with a
 * hub and unreachable vertices, a directed one without weights, the
 * engine's own rounds at one rank), and bad input gets a clear error on
 * every rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mkrt/mkrt.h"
#include "mkrt_mpi/graph.h"
#include "mkrt_mpi/mkrt_mpi.h"
#include "mpi_tap.h"
#include "../../tests/graph_fixture.h"

/* ---- test graphs, the same on every rank (a fixed seed) ------------- */

typedef struct tgraph {
    mkrt_graph g;
    uint64_t *off;
    uint32_t *tgt, *wgt;
} tgraph;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next_rand(uint32_t below)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (uint32_t)((z ^ (z >> 31)) % below);
}

typedef struct edge {
    uint32_t u, v, w;
} edge;

static int by_edge(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    if (x->u != y->u)
        return x->u < y->u ? -1 : 1;
    return (x->v > y->v) - (x->v < y->v);
}

/* CSR of n vertices from m edges (rows sorted by target; duplicates
 * dropped); weights 1..255, or none. */
static tgraph build(uint32_t n, edge *e, size_t m, int weighted)
{
    qsort(e, m, sizeof *e, by_edge);
    tgraph t = {.off = calloc((size_t)n + 1, sizeof(uint64_t)), .tgt = malloc(m * sizeof(uint32_t)),
                .wgt = weighted ? malloc(m * sizeof(uint32_t)) : NULL};
    if (t.off == NULL || t.tgt == NULL || (weighted && t.wgt == NULL)) {
        fprintf(stderr, "rank %d: out of memory for the test graph\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        if (i > 0 && e[i].u == e[i - 1].u && e[i].v == e[i - 1].v)
            continue;
        t.tgt[k] = e[i].v;
        if (weighted)
            t.wgt[k] = e[i].w;
        t.off[e[i].u + 1]++;
        k++;
    }
    for (uint32_t v = 0; v < n; v++)
        t.off[v + 1] += t.off[v];
    t.g = (mkrt_graph){n, t.off, t.tgt, t.wgt};
    return t;
}

static void tgraph_free(tgraph *t)
{
    free(t->off);
    free(t->tgt);
    free(t->wgt);
}

#define SYM_N 3000u
#define SMALL_N 600u
#define HUB 7u
/* Symmetric, weighted, of n vertices: 4 random undirected edges per
 * vertex, vertex HUB joined to hub_edges others (700: a hub at 2 ranks or
 * more, degree >= 512), and the last 10 vertices without edges
 * (unreached). */
static tgraph symmetric_graph(uint32_t n, uint32_t hub_edges)
{
    const size_t cap = 2 * (4 * (size_t)n + hub_edges);
    edge *e = malloc(cap * sizeof *e);
    size_t m = 0;
    if (e == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (uint32_t u = 0; u < n - 10; u++)
        for (int j = 0; j < 4; j++) {
            const uint32_t v = next_rand(n - 10), w = 1 + next_rand(255);
            e[m++] = (edge){u, v, w};
            e[m++] = (edge){v, u, w};
        }
    for (uint32_t j = 0; j < hub_edges; j++) {
        const uint32_t v = (HUB + 1 + j * 4) % (n - 10), w = 1 + next_rand(255);
        e[m++] = (edge){HUB, v, w};
        e[m++] = (edge){v, HUB, w};
    }
    tgraph t = build(n, e, m, 1);
    free(e);
    return t;
}

#define DIR_N 2000u
/* Directed, unweighted: 3 random out-edges per vertex. */
static tgraph directed_graph(void)
{
    edge *e = malloc(3 * (size_t)DIR_N * sizeof *e);
    size_t m = 0;
    if (e == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (uint32_t u = 0; u < DIR_N; u++)
        for (int j = 0; j < 3; j++)
            e[m++] = (edge){u, next_rand(DIR_N), 1};
    tgraph t = build(DIR_N, e, m, 0);
    free(e);
    return t;
}

/* ---- the serial references ------------------------------------------ */

/* BFS depths (UINT32_MAX unreached; tests/graph_fixture.c's queue BFS) and
 * the parent the engine promises: the smallest u with an edge u -> v at
 * depth(v) - 1. */
static void serial_bfs(const mkrt_graph *g, uint32_t root, uint32_t *depth, uint32_t *parent)
{
    const test_graph tg = {g->vertices, (uint64_t *)g->offsets, (uint32_t *)g->targets, NULL};
    test_graph_ref_bfs(&tg, root, depth);
    for (uint32_t v = 0; v < g->vertices; v++)
        parent[v] = MKRT_MPI_GRAPH_NO_PARENT;
    parent[root] = root;
    for (uint32_t u = 0; u < g->vertices; u++)
        for (uint64_t i = g->offsets[u]; depth[u] != UINT32_MAX && i < g->offsets[u + 1]; i++) {
            const uint32_t v = g->targets[i];
            if (v != root && depth[v] == depth[u] + 1 && u < parent[v])
                parent[v] = u;
        }
}

/* Dijkstra (tests/graph_fixture.c): MKRT_MPI_GRAPH_UNREACHED (UINT64_MAX)
 * where unreached. */
static void serial_sssp(const mkrt_graph *g, uint32_t root, uint64_t *dist)
{
    const test_graph tg = {g->vertices, (uint64_t *)g->offsets, (uint32_t *)g->targets, NULL};
    test_graph_ref_sssp(&tg, root, g->weights, dist);
}

/* ---- searches checked against the references ------------------------ */

typedef struct bufs {
    uint32_t *parent, *ref_parent, *depth;
    uint64_t *dist, *ref_dist;
} bufs;

static bufs bufs_new(uint32_t n)
{
    bufs b = {malloc(n * sizeof(uint32_t)), malloc(n * sizeof(uint32_t)), malloc(n * sizeof(uint32_t)),
              malloc(n * sizeof(uint64_t)), malloc(n * sizeof(uint64_t))};
    if (!b.parent || !b.ref_parent || !b.depth || !b.dist || !b.ref_dist)
        MPI_Abort(MPI_COMM_WORLD, 1);
    return b;
}

static void bufs_free(bufs *b)
{
    free(b->parent);
    free(b->ref_parent);
    free(b->depth);
    free(b->dist);
    free(b->ref_dist);
}

/* Rank 0's first differing vertex of a and b, or -1 (other ranks: -1). */
static long first_diff32(const uint32_t *a, const uint32_t *b, uint32_t n)
{
    for (uint32_t v = 0; rank == 0 && v < n; v++)
        if (a[v] != b[v])
            return (long)v;
    return -1;
}

static long first_diff64(const uint64_t *a, const uint64_t *b, uint32_t n)
{
    for (uint32_t v = 0; rank == 0 && v < n; v++)
        if (a[v] != b[v])
            return (long)v;
    return -1;
}

/* BFS and SSSP from each root, checked on rank 0; returns whether a BFS
 * level ran bottom-up. */
static int search_roots(mkrt_mpi_graph *e, const mkrt_graph *g, const uint32_t *roots, int nroots,
                        const char *what)
{
    bufs b = bufs_new(g->vertices);
    mkrt_mpi *m = mkrt_mpi_graph_layer(e);
    int pulled = 0;
    char name[200];
    for (int i = 0; i < nroots; i++) {
        const uint32_t root = roots[i];
        mkrt_mpi_graph_counts c;
        mkrt_error err = {0};
        mkrt_status st = mkrt_mpi_graph_bfs(e, root, b.parent, &c, &err);
        if (st != MKRT_OK)
            fprintf(stderr, "rank %d: %s\n", rank, err.message);
        snprintf(name, sizeof name, "%s: BFS from %u returns MKRT_OK, no item failed", what, root);
        check(m, st == MKRT_OK && c.failed == 0, name);
        serial_bfs(g, root, b.depth, b.ref_parent);
        const long d = first_diff32(b.parent, b.ref_parent, g->vertices);
        if (d >= 0)
            fprintf(stderr, "%s: BFS from %u: parent[%ld] = %u, the serial BFS's smallest parent "
                    "at the shortest depth %u\n", what, root, d, b.parent[d], b.ref_parent[d]);
        snprintf(name, sizeof name, "%s: BFS from %u: every parent is the serial BFS's smallest "
                 "parent at the shortest depth (unreached: NO_PARENT)", what, root);
        check(m, d < 0, name);
        mkrt_mpi_graph_level lv[MKRT_MPI_GRAPH_LEVELS];
        const size_t nl = mkrt_mpi_graph_levels(e, lv, MKRT_MPI_GRAPH_LEVELS);
        uint64_t frontier = 0, reached = 0;
        for (size_t l = 0; l < nl; l++) {
            frontier += lv[l].frontier;
            pulled |= lv[l].bottom_up;
        }
        for (uint32_t v = 0; v < g->vertices; v++)
            reached += b.depth[v] != UINT32_MAX;
        snprintf(name, sizeof name, "%s: BFS from %u: its levels' frontiers sum to the reached "
                 "vertices", what, root);
        check(m, frontier == reached, name);

        st = mkrt_mpi_graph_sssp(e, root, b.dist, &c, &err);
        if (st != MKRT_OK)
            fprintf(stderr, "rank %d: %s\n", rank, err.message);
        snprintf(name, sizeof name, "%s: SSSP from %u returns MKRT_OK, no item failed", what, root);
        check(m, st == MKRT_OK && c.failed == 0, name);
        serial_sssp(g, root, b.ref_dist);
        const long s = first_diff64(b.dist, b.ref_dist, g->vertices);
        if (s >= 0)
            fprintf(stderr, "%s: SSSP from %u: dist[%ld] = %llu, Dijkstra's %llu\n", what, root, s,
                    (unsigned long long)b.dist[s], (unsigned long long)b.ref_dist[s]);
        snprintf(name, sizeof name, "%s: SSSP from %u: every distance is Dijkstra's", what, root);
        check(m, s < 0, name);
    }
    bufs_free(&b);
    return pulled;
}

static mkrt_mpi_graph *open_or_die(const mkrt_graph *g, const mkrt_mpi_graph_config *c)
{
    mkrt_mpi_graph *e = NULL;
    mkrt_error err = {0};
    if (mkrt_mpi_graph_open(g, c, &e, &err) != MKRT_OK) {
        fprintf(stderr, "rank %d: mkrt_mpi_graph_open failed: %s\n", rank, err.message);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return e;
}

/* The symmetric graph under the block and the hash partition (and the
 * engine's own rounds, which one rank otherwise leaves to the runtime);
 * a small one (fewer vertices than a bottom-up item spans) hashed. */
static void test_symmetric(void)
{
    tgraph big = symmetric_graph(SYM_N, 700), small = symmetric_graph(SMALL_N, 300);
    static const struct {
        mkrt_mpi_partition p;
        bool own, small;
        uint32_t delta, widen; /* 0, 0: the defaults */
        const char *name;
    } runs[] = {{MKRT_MPI_BLOCK, false, false, 0, 0, "symmetric, block"},
                {MKRT_MPI_HASH, false, false, 0, 0, "symmetric, hash"},
                {MKRT_MPI_BLOCK, true, false, 0, 0, "symmetric, block, own rounds"},
                {MKRT_MPI_HASH, true, true, 0, 0, "symmetric, 600 vertices, hash, own rounds"},
                {MKRT_MPI_BLOCK, true, false, 7, UINT32_MAX,
                 "symmetric, block, own rounds, SSSP windows of 7, one wide"}};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        const tgraph t = runs[r].small ? small : big;
        const uint32_t n = t.g.vertices;
        const uint32_t roots[] = {0, HUB, n / 2 - 1, n - 1}; /* the last one: an isolated vertex */
        mkrt_mpi_graph_config c = mkrt_mpi_graph_config_default();
        c.partition = runs[r].p;
        c.symmetric = true;
        c.own_rounds = runs[r].own;
        c.workers = 2;
        if (runs[r].delta != 0) {
            c.delta = runs[r].delta;
            c.widen = runs[r].widen == UINT32_MAX ? 0 : runs[r].widen;
        }
        mkrt_mpi_graph *e = open_or_die(&t.g, &c);
        mkrt_mpi *m = mkrt_mpi_graph_layer(e);
        char name[160];
        snprintf(name, sizeof name, "%s: rank and size are MPI's", runs[r].name);
        check(m, mkrt_mpi_graph_rank(e) == rank && mkrt_mpi_graph_size(e) == ranks, name);
        snprintf(name, sizeof name, "%s: the layer is stopped at one rank only when the runtime's "
                 "traversals run", runs[r].name);
        check(m, (m == NULL) == (ranks == 1 && !runs[r].own), name);
        snprintf(name, sizeof name, "%s: hubs at 2 ranks or more (degree >= 512), none at one "
                 "or without such a vertex",
                 runs[r].name);
        check(m, ranks > 1 && !runs[r].small ? mkrt_mpi_graph_hub_degree(e) >= 512
                                             : mkrt_mpi_graph_hub_degree(e) == 0, name);
        const int pulled = search_roots(e, &t.g, roots, 4, runs[r].name);
        snprintf(name, sizeof name, "%s: a large level ran bottom-up (Beamer's rule on a "
                 "symmetric graph)", runs[r].name);
        check(m, pulled, name);
        mkrt_mpi_graph_close(e);
    }
    tgraph_free(&big);
    tgraph_free(&small);
}

/* A directed graph without weights: never bottom-up (its rows are not
 * its in-edges), every weight 1. */
static void test_directed(void)
{
    tgraph t = directed_graph();
    const uint32_t roots[] = {3, 999};
    mkrt_mpi_graph_config c = mkrt_mpi_graph_config_default();
    c.partition = MKRT_MPI_HASH;
    mkrt_mpi_graph *e = open_or_die(&t.g, &c);
    const int pulled = search_roots(e, &t.g, roots, 2, "directed, hash, no weights");
    check(mkrt_mpi_graph_layer(e), !pulled, "directed: no level ran bottom-up (not symmetric)");
    mkrt_mpi_graph_close(e);
    tgraph_free(&t);
}

/* ---- bad input: a clear error on every rank, never a crash or hang --- */

static int says(const mkrt_error *err, const char *a, const char *b)
{
    return strstr(err->message, a) != NULL && (b == NULL || strstr(err->message, b) != NULL) &&
           strstr(err->message, "Fix") != NULL;
}

static void test_bad_input(void)
{
    mkrt_mpi_graph *e = (mkrt_mpi_graph *)&e; /* must be set to NULL */
    mkrt_error err = {0};
    check(NULL, mkrt_mpi_graph_open(NULL, NULL, &e, &err) == MKRT_EINVAL && e == NULL &&
                    says(&err, "graph is NULL", NULL),
          "open: no graph: MKRT_EINVAL naming it, out set to NULL");
    tgraph t = directed_graph();
    check(NULL, mkrt_mpi_graph_open(&t.g, NULL, NULL, &err) == MKRT_EINVAL && says(&err, "out", NULL),
          "open: no out: MKRT_EINVAL");
    mkrt_graph g = t.g;
    g.vertices = 0;
    check(NULL, mkrt_mpi_graph_open(&g, NULL, &e, &err) == MKRT_EINVAL && says(&err, "0 vertices", NULL),
          "open: 0 vertices: MKRT_EINVAL naming the count");
    g = t.g;
    g.offsets = NULL;
    check(NULL, mkrt_mpi_graph_open(&g, NULL, &e, &err) == MKRT_EINVAL && says(&err, "offsets NULL", NULL),
          "open: no offsets: MKRT_EINVAL");
    t.tgt[5] = DIR_N + 3; /* a target that is not a vertex */
    check(NULL, mkrt_mpi_graph_open(&t.g, NULL, &e, &err) == MKRT_EINVAL && e == NULL &&
                    strstr(err.message, "mkrt_graph_register") != NULL,
          "open: a target beyond the vertices: MKRT_EINVAL from the graph's check");
    t.tgt[5] = 0;

    /* Weights the distributed SSSP cannot take: BFS runs, SSSP refuses. */
    uint32_t *w = malloc(t.off[DIR_N] * sizeof *w);
    uint32_t *parent = malloc(DIR_N * sizeof *parent);
    uint64_t *dist = malloc(DIR_N * sizeof *dist);
    if (w == NULL || parent == NULL || dist == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (uint64_t i = 0; i < t.off[DIR_N]; i++)
        w[i] = 1;
    w[t.off[10]] = MKRT_MPI_GRAPH_WEIGHT_MAX + 1; /* the first edge of vertex 10 */
    g = t.g;
    g.weights = w;
    mkrt_mpi_graph_config c = mkrt_mpi_graph_config_default();
    c.partition = MKRT_MPI_BLOCK;
    e = open_or_die(&g, &c);
    mkrt_mpi *m = mkrt_mpi_graph_layer(e);
    check(m, mkrt_mpi_graph_sssp(e, 0, dist, NULL, &err) == MKRT_EINVAL &&
                 says(&err, "has weight 256", "(10 ->"),
          "sssp: a weight above MKRT_MPI_GRAPH_WEIGHT_MAX: MKRT_EINVAL naming the edge and its source");
    check(m, mkrt_mpi_graph_bfs(e, DIR_N, parent, NULL, &err) == MKRT_EINVAL &&
                 says(&err, "root 2000 is not a vertex", NULL),
          "bfs: a root beyond the vertices: MKRT_EINVAL naming it, on every rank");
    check(m, mkrt_mpi_graph_bfs(e, 0, rank == 0 ? NULL : parent, NULL, &err) == MKRT_EINVAL &&
                 says(&err, "rank 0's parent is NULL", NULL),
          "bfs: no parent array on rank 0: MKRT_EINVAL on every rank (no hang)");
    check(m, mkrt_mpi_graph_bfs(e, 0, parent, NULL, &err) == MKRT_OK,
          "bfs after the refused calls: MKRT_OK (the engine is intact)");
    mkrt_mpi_graph_close(e);
    check(NULL, mkrt_mpi_graph_bfs(NULL, 0, parent, NULL, &err) == MKRT_EINVAL &&
                    says(&err, "engine is NULL", NULL),
          "bfs: no engine: MKRT_EINVAL");
    check(NULL, mkrt_mpi_graph_levels(NULL, NULL, 4) == 0 && mkrt_mpi_graph_rank(NULL) == -1 &&
                    mkrt_mpi_graph_size(NULL) == 0 && mkrt_mpi_graph_layer(NULL) == NULL,
          "the queries of a NULL engine: 0, -1, 0, NULL");
    free(w);
    free(parent);
    free(dist);
    tgraph_free(&t);
}

int main(void)
{
    tap_start();
    test_symmetric();
    test_directed();
    test_bad_input();
    return tap_finish();
}
