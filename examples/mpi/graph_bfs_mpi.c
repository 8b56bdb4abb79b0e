/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/mpi/graph_bfs_mpi.c - graph_bfs's distributed mode: BFS and SSSP
 * through libmkrt_mpi's distributed engine (mkrt_mpi/graph.h) on every
 * rank, checked on rank 0 by
 * the Graph500 rules and against the sequential reference (equal BFS
 * levels, equal distances), with TEPS and the share of edge items that
 * crossed ranks. MKRT_MPI_PARTITION=hash picks the hash partition (default
 * block). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../graph500/graph500.h"
#include "graph_bfs_mpi.h"
#include "mkrt_mpi/graph.h"

typedef struct dist_run {
    g500_edge_list el;
    g500_graph graph;
    uint32_t *roots, *parent, *ref_parent, *level, *ref_level;
    uint64_t *dist, *ref_dist;
    double *bfs_teps, *sssp_teps;
    traverse_engine *ref, *single; /* rank 0: the reference, and mkrt in one process */
    mkrt_mpi_graph *eng;
} dist_run;

static void dist_free(dist_run *r)
{
    mkrt_mpi_graph_close(r->eng);
    if (r->ref != NULL)
        traverse_reference_ops.close(r->ref);
    if (r->single != NULL)
        traverse_mkrt_ops.close(r->single);
    free(r->roots);
    free(r->parent);
    free(r->ref_parent);
    free(r->level);
    free(r->ref_level);
    free(r->dist);
    free(r->ref_dist);
    free(r->bfs_teps);
    free(r->sssp_teps);
    g500_graph_free(&r->graph);
    g500_edge_list_free(&r->el);
}

static int64_t diff_at(const uint32_t *a, const uint32_t *b, const uint64_t *c, const uint64_t *d,
                       uint32_t n)
{
    for (uint32_t v = 0; v < n; v++)
        if (a != NULL ? a[v] != b[v] : c[v] != d[v])
            return v;
    return -1;
}

/* Rank 0: checks one BFS result; 0 or -1 with why. */
static int check_bfs(dist_run *r, uint32_t root, char *why, size_t len)
{
    const g500_csr *g = &r->graph.csr;
    if (traverse_reference_ops.bfs(r->ref, root, r->ref_parent, why, len) != 0 ||
        g500_validate_bfs(g, root, r->ref_parent, r->ref_level, why, len) != 0 ||
        g500_validate_bfs(g, root, r->parent, r->level, why, len) != 0)
        return -1;
    int64_t v = diff_at(r->level, r->ref_level, NULL, NULL, g->vertices);
    if (v >= 0) {
        snprintf(why, len, "BFS from %u: level of vertex %" PRId64 " is %u, the reference's %u",
                 root, v, r->level[v], r->ref_level[v]);
        return -1;
    }
    /* Both mkrt engines pick the smallest parent at the shortest depth:
     * the distributed tree is the single-process one, vertex by vertex. */
    if (traverse_mkrt_ops.bfs(r->single, root, r->ref_parent, why, len) != 0)
        return -1;
    v = diff_at(r->parent, r->ref_parent, NULL, NULL, g->vertices);
    if (v >= 0) {
        snprintf(why, len, "BFS from %u: parent of vertex %" PRId64 " is %u, the single-process "
                 "mkrt engine's %u", root, v, r->parent[v], r->ref_parent[v]);
        return -1;
    }
    return 0;
}

static int check_sssp(dist_run *r, uint32_t root, char *why, size_t len)
{
    const g500_csr *g = &r->graph.csr;
    if (traverse_reference_ops.sssp(r->ref, root, r->ref_dist, why, len) != 0 ||
        g500_validate_sssp(g, root, r->ref_dist, why, len) != 0 ||
        g500_validate_sssp(g, root, r->dist, why, len) != 0)
        return -1;
    int64_t v = diff_at(NULL, NULL, r->dist, r->ref_dist, g->vertices);
    if (v >= 0) {
        snprintf(why, len, "SSSP from %u: dist[%" PRId64 "] is %" PRIu64 ", the reference's %" PRIu64,
                 root, v, r->dist[v], r->ref_dist[v]);
        return -1;
    }
    return 0;
}

static void summary(const char *what, const double *teps, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (teps[i] <= 0) {
            printf("%s: not summarised (a search failed)\n", what);
            return;
        }
    g500_teps_stats s = g500_teps_summary(teps, n);
    printf("%s: harmonic mean %.2f MTEPS (min %.2f, max %.2f) over %u roots\n", what,
           s.harmonic_mean / 1e6, s.min / 1e6, s.max / 1e6, n);
}

mkrt_mpi_graph_config graph_bfs_mpi_config(unsigned threads)
{
    mkrt_mpi_graph_config c = mkrt_mpi_graph_config_default();
    const char *pe = getenv("MKRT_MPI_PARTITION");
    c.partition = pe != NULL && strcmp(pe, "hash") == 0 ? MKRT_MPI_HASH : MKRT_MPI_BLOCK;
    c.workers = threads;
    c.symmetric = true; /* the kit's CSR holds both directions of every edge */
    const char *env = getenv("TMPI_LOCAL");
    c.own_rounds = env != NULL && strcmp(env, "0") == 0;
    if ((env = getenv("TMPI_DELTA")) != NULL && atoi(env) > 0)
        c.delta = (uint32_t)atoi(env);
    if ((env = getenv("TMPI_WIDEN")) != NULL && atoi(env) >= 0)
        c.widen = (uint32_t)atoi(env);
    return c;
}

mkrt_graph graph_bfs_mpi_graph(const g500_csr *g)
{
    return (mkrt_graph){g->vertices, g->offsets, g->targets, g->weights};
}

int graph_bfs_mpi(uint32_t scale, uint32_t edgefactor, uint32_t nroots, unsigned threads,
                  uint64_t seed)
{
    dist_run r;
    memset(&r, 0, sizeof r);
    char why[512];
    /* Every rank builds the same graph from the same seed. */
    if (g500_generate(scale, edgefactor, seed, &r.el, why, sizeof why) != 0 ||
        g500_csr_build(&r.el, &r.graph, why, sizeof why) != 0) {
        fprintf(stderr, "graph_bfs (MPI): %s\n", why);
        dist_free(&r);
        return 1;
    }
    const g500_csr *g = &r.graph.csr;
    size_t n = g->vertices;
    r.roots = malloc(nroots * sizeof *r.roots);
    r.parent = malloc(n * sizeof *r.parent);
    r.ref_parent = malloc(n * sizeof *r.ref_parent);
    r.level = malloc(n * sizeof *r.level);
    r.ref_level = malloc(n * sizeof *r.ref_level);
    r.dist = malloc(n * sizeof *r.dist);
    r.ref_dist = malloc(n * sizeof *r.ref_dist);
    r.bfs_teps = calloc(nroots, sizeof *r.bfs_teps);
    r.sssp_teps = calloc(nroots, sizeof *r.sssp_teps);
    if (!r.roots || !r.parent || !r.ref_parent || !r.level || !r.ref_level || !r.dist ||
        !r.ref_dist || !r.bfs_teps || !r.sssp_teps) {
        fprintf(stderr, "graph_bfs (MPI): out of memory for %zu vertices\n", n);
        dist_free(&r);
        return 1;
    }
    if (g500_sample_roots(g, seed, nroots, r.roots, why, sizeof why) != 0) {
        fprintf(stderr, "graph_bfs (MPI): %s\n", why);
        dist_free(&r);
        return 1;
    }
    const mkrt_mpi_graph_config conf = graph_bfs_mpi_config(threads);
    const mkrt_mpi_partition part = conf.partition;
    const mkrt_graph mg = graph_bfs_mpi_graph(g);
    mkrt_error err = {0};
    if (mkrt_mpi_graph_open(&mg, &conf, &r.eng, &err) != MKRT_OK) {
        fprintf(stderr, "graph_bfs (MPI): %s\n", err.message);
        dist_free(&r);
        return 1;
    }
    const int rank = mkrt_mpi_graph_rank(r.eng), ranks = mkrt_mpi_graph_size(r.eng);
    if (rank == 0 && ((r.ref = traverse_reference_ops.open(g, 0, why, sizeof why)) == NULL ||
                      (r.single = traverse_mkrt_ops.open(g, 1, why, sizeof why)) == NULL)) {
        fprintf(stderr, "graph_bfs (MPI): %s\n", why);
        /* the others are in the collectives below: end the job */
        abort();
    }
    if (rank == 0) {
        printf("graph: scale %u, edge factor %u, seed %" PRIu64 ": %u vertices, %" PRIu64
               " undirected edges\n", scale, edgefactor, seed, g->vertices, g->offsets[g->vertices] / 2);
        printf("distributed: %d rank(s), %s partition, %u worker(s) per rank; results gathered "
               "to rank 0 and checked by the Graph500 rules, against the sequential reference, and "
               "(BFS trees) against mkrt in one process\n",
               ranks, part == MKRT_MPI_HASH ? "hash" : "block", threads > 0 ? threads : 1);
        fflush(stdout);
    }
    unsigned failures = 0;
    uint64_t edge_items = 0, forwarded = 0, messages = 0, deferred = 0;
    for (uint32_t i = 0; i < nroots; i++) {
        const uint32_t root = r.roots[i];
        mkrt_mpi_graph_counts cb, cs;
        int eb = mkrt_mpi_graph_bfs(r.eng, root, r.parent, &cb, &err) != MKRT_OK;
        if (eb)
            snprintf(why, sizeof why, "%s", err.message);
        const double tb = cb.seconds;
        if (rank == 0) {
            printf("root %2u/%u (vertex %u):", i + 1, nroots, root);
            if (eb != 0 || check_bfs(&r, root, why, sizeof why) != 0) {
                printf(" BFS FAILED\n  %s\n", why);
                failures++;
            } else {
                uint64_t edges = g500_component_edges(&r.el, r.parent);
                r.bfs_teps[i] = (double)edges / (tb > 0 ? tb : 1e-9);
                printf(" %" PRIu64 " edges; BFS %.2f ms %.1f MTEPS ok (%.0f%% of %" PRIu64
                       " edge items forwarded);", edges, tb * 1e3, r.bfs_teps[i] / 1e6,
                       cb.edge_items ? 100.0 * (double)cb.forwarded / (double)cb.edge_items : 0.0,
                       cb.edge_items);
            }
            fflush(stdout);
        }
        int es = mkrt_mpi_graph_sssp(r.eng, root, r.dist, &cs, &err) != MKRT_OK;
        if (es)
            snprintf(why, sizeof why, "%s", err.message);
        const double ts = cs.seconds;
        if (rank == 0) {
            if (es != 0 || check_sssp(&r, root, why, sizeof why) != 0) {
                printf(" SSSP FAILED\n  %s\n", why);
                failures++;
            } else {
                uint64_t edges = g500_component_edges(&r.el, r.parent);
                r.sssp_teps[i] = (double)edges / (ts > 0 ? ts : 1e-9);
                printf(" SSSP %.2f ms %.1f MTEPS ok\n", ts * 1e3, r.sssp_teps[i] / 1e6);
            }
            fflush(stdout);
        }
        edge_items += cb.edge_items + cs.edge_items;
        forwarded += cb.forwarded + cs.forwarded;
        messages += cb.messages + cs.messages;
        deferred += cb.deferred + cs.deferred;
    }
    if (rank == 0) {
        printf("\nsummary (mkrt-mpi, %d rank(s), scale %u, edge factor %u):\n", ranks, scale,
               edgefactor);
        summary("BFS ", r.bfs_teps, nroots);
        summary("SSSP", r.sssp_teps, nroots);
        printf("forwarded: %" PRIu64 " of %" PRIu64 " edge items (%.1f%%) in %" PRIu64
               " MPI messages (%.0f items per message)\n", forwarded, edge_items,
               edge_items ? 100.0 * (double)forwarded / (double)edge_items : 0.0, messages,
               messages ? (double)forwarded / (double)messages : 0.0);
        printf("backpressure: %" PRIu64 " edge items waited for outbox room (run again later)\n",
               deferred);
        if (failures > 0)
            printf("validation: %u of %u searches FAILED\n", failures, 2 * nroots);
        else
            printf("validation: all %u BFS and %u SSSP results passed\n", nroots, nroots);
        fflush(stdout);
    }
    dist_free(&r);
    return failures > 0 ? 1 : 0;
}
