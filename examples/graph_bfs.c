/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/graph_bfs.c - Graph500-style BFS and SSSP, connected
 * components and PageRank through mkrt.
 *
 * Generates a Kronecker (or uniform random) graph (examples/graph500/), or
 * reads a GAPBS text edge list (--el), picks random roots of degree > 0,
 * and from each runs a BFS and an SSSP with the chosen engine (mkrt's,
 * examples/graph500/traverse_mkrt.c, or the sequential reference); then
 * connected components and PageRank once. Every result is checked: BFS
 * and SSSP by the Graph500 rules and against the reference engine's
 * (equal BFS levels, equal distances), CC against a union-find partition,
 * PageRank within 1.13e-3 L1 (2 d / (1 - d) x the tolerance 1e-4) of the
 * converged fixed point (Jacobi to within 1e-9 L1). The summary
 * gives TEPS as Graph500 reports them (harmonic mean over the roots).
 * Exits 1 when any result fails its checks, 2 on bad arguments or input.
 *
 *   graph_bfs [--scale N] [--edgefactor N] [--roots N] [--threads N]
 *             [--engine mkrt|reference] [--seed N] [--graph kron|urand]
 *             [--kernel bfs|sssp|cc|pr|all] [--el FILE [--vertices N]]
 *
 * Distributed mode: when MPI is found at build time (mpicc), this program
 * is built with MKRT_WITH_MPI and libmkrt_mpi; started by an MPI launcher
 * (mkrt_mpi_launched(): `mpirun -np 4 build/examples/graph_bfs --scale 16`)
 * it runs examples/mpi/graph_bfs_mpi.c instead, the vertices split between
 * the ranks (--engine is ignored there; --threads is workers per rank).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph500/graph500.h"
#ifdef MKRT_WITH_MPI
#include "mkrt_mpi/mkrt_mpi.h"
#include "mpi/graph_bfs_mpi.h"
#endif

enum { K_BFS = 1, K_SSSP = 2, K_CC = 4, K_PR = 8, K_ALL = 15 };

typedef struct options {
    uint32_t scale, edgefactor, roots;
    unsigned threads;
    uint64_t seed;
    const traverse_ops *engine;
    g500_family family;
    unsigned kernels; /* K_* */
    const char *el;   /* edge list to read, or NULL: generate */
    uint32_t vertices; /* with el: the vertex count (0: largest id + 1) */
} options;

static const struct {
    const char *name;
    unsigned bits;
} kernel_names[] = {{"bfs", K_BFS}, {"sssp", K_SSSP}, {"cc", K_CC}, {"pr", K_PR}, {"all", K_ALL}};

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--scale N] [--edgefactor N] [--roots N] [--threads N] "
            "[--engine mkrt|reference] [--seed N]\n"
            "       [--graph kron|urand] [--kernel bfs|sssp|cc|pr|all] [--el FILE [--vertices N]]\n"
            "  defaults: scale 16, edge factor 16, 16 roots, the engine's default threads, "
            "engine mkrt, seed 1, graph kron, kernel all\n",
            argv0);
}

/* An unsigned decimal in [lo, hi], or false. */
static bool parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    if (s == NULL || *s == '\0' || *s == '-')
        return false;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0' || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static int parse_args(int argc, char **argv, options *o)
{
    *o = (options){16, 16, 16, 0, 1, &traverse_mkrt_ops, G500_KRON, K_ALL, NULL, 0};
    char why[256];
    for (int i = 1; i < argc; i += 2) { /* every option takes a value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t x = 0;
        bool ok = true;
        if (strcmp(a, "--scale") == 0 && (ok = parse_u64(v, 1, G500_MAX_SCALE, &x)))
            o->scale = (uint32_t)x;
        else if (strcmp(a, "--edgefactor") == 0 && (ok = parse_u64(v, 1, 1u << 16, &x)))
            o->edgefactor = (uint32_t)x;
        else if (strcmp(a, "--roots") == 0 && (ok = parse_u64(v, 1, 1u << 16, &x)))
            o->roots = (uint32_t)x;
        else if (strcmp(a, "--threads") == 0 && (ok = parse_u64(v, 0, 4096, &x)))
            o->threads = (unsigned)x;
        else if (strcmp(a, "--seed") == 0 && (ok = parse_u64(v, 0, UINT64_MAX, &x)))
            o->seed = x;
        else if (strcmp(a, "--engine") == 0 && v != NULL && strcmp(v, "mkrt") == 0)
            o->engine = &traverse_mkrt_ops;
        else if (strcmp(a, "--engine") == 0 && v != NULL && strcmp(v, "reference") == 0)
            o->engine = &traverse_reference_ops;
        else if (strcmp(a, "--graph") == 0 && v != NULL) {
            if (g500_family_parse(v, &o->family, why, sizeof why) != 0) {
                fprintf(stderr, "graph_bfs: --graph: %s\n", why);
                return -1;
            }
        } else if (strcmp(a, "--kernel") == 0 && v != NULL) {
            o->kernels = 0;
            for (size_t k = 0; k < sizeof kernel_names / sizeof *kernel_names; k++)
                if (strcmp(v, kernel_names[k].name) == 0)
                    o->kernels = kernel_names[k].bits;
            if (o->kernels == 0) {
                fprintf(stderr, "graph_bfs: --kernel: unknown kernel '%s'. Fix: bfs, sssp, cc, pr "
                                "or all\n", v);
                return -1;
            }
        } else if (strcmp(a, "--el") == 0 && v != NULL)
            o->el = v;
        else if (strcmp(a, "--vertices") == 0 && (ok = parse_u64(v, 1, UINT32_MAX - 1, &x)))
            o->vertices = (uint32_t)x;
        else
            ok = false;
        if (!ok) {
            fprintf(stderr, "graph_bfs: bad argument '%s%s%s'\n", a, v ? " " : "", v ? v : "");
            usage(argv[0]);
            return -1;
        }
    }
    return 0;
}

/* Everything a run keeps: the graph, the engines and the result arrays. */
typedef struct run {
    options opt;
    g500_edge_list el;
    g500_graph graph;
    uint32_t *roots;
    traverse_engine *eng, *ref;
    uint32_t *parent, *ref_parent, *level, *ref_level;
    uint64_t *dist, *ref_dist;
    double *bfs_teps, *sssp_teps;
    uint32_t *comp;
    double *score, *ref_score;
    unsigned failures;
} run;

static void run_free(run *r)
{
    if (r->eng != NULL)
        r->opt.engine->close(r->eng);
    if (r->ref != NULL)
        traverse_reference_ops.close(r->ref);
    free(r->roots);
    free(r->parent);
    free(r->ref_parent);
    free(r->level);
    free(r->ref_level);
    free(r->dist);
    free(r->ref_dist);
    free(r->bfs_teps);
    free(r->sssp_teps);
    free(r->comp);
    free(r->score);
    free(r->ref_score);
    g500_graph_free(&r->graph);
    g500_edge_list_free(&r->el);
}

static int setup(run *r, char *why, size_t why_len)
{
    const options *o = &r->opt;
    double t0 = g500_seconds();
    int got = o->el != NULL ? g500_read_el(o->el, o->vertices, &r->el, why, why_len)
                            : g500_generate_family(o->family, o->scale, o->edgefactor, o->seed,
                                                   &r->el, why, why_len);
    if (got != 0)
        return 2; /* bad input or arguments */
    double t1 = g500_seconds();
    if (g500_csr_build(&r->el, &r->graph, why, why_len) != 0)
        return -1;
    double t2 = g500_seconds();
    const g500_csr *g = &r->graph.csr;
    if (o->el != NULL)
        printf("graph: %s: %u vertices, %" PRIu64 " edge tuples (read in %.2f s)\n", o->el,
               g->vertices, r->el.edges, t1 - t0);
    else
        printf("graph: %s, scale %u, edge factor %u, seed %" PRIu64 ": %u vertices, %" PRIu64
               " edge tuples (generated in %.2f s)\n",
               g500_family_name(o->family), o->scale, o->edgefactor, o->seed, g->vertices,
               r->el.edges, t1 - t0);
    printf("CSR: %" PRIu64 " undirected edges (%" PRIu64 " self loops and %" PRIu64
           " repeats dropped), weights 1..255, built in %.2f s\n",
           g->offsets[g->vertices] / 2, r->graph.self_loops, r->graph.duplicates, t2 - t1);
    size_t n = g->vertices;
    r->roots = malloc(o->roots * sizeof *r->roots);
    r->parent = malloc(n * sizeof *r->parent);
    r->ref_parent = malloc(n * sizeof *r->ref_parent);
    r->level = malloc(n * sizeof *r->level);
    r->ref_level = malloc(n * sizeof *r->ref_level);
    r->dist = malloc(n * sizeof *r->dist);
    r->ref_dist = malloc(n * sizeof *r->ref_dist);
    r->bfs_teps = malloc(o->roots * sizeof *r->bfs_teps);
    r->sssp_teps = malloc(o->roots * sizeof *r->sssp_teps);
    r->comp = malloc(n * sizeof *r->comp);
    r->score = malloc(n * sizeof *r->score);
    r->ref_score = malloc(n * sizeof *r->ref_score);
    if (!r->roots || !r->parent || !r->ref_parent || !r->level || !r->ref_level || !r->dist ||
        !r->ref_dist || !r->bfs_teps || !r->sssp_teps || !r->comp || !r->score || !r->ref_score) {
        snprintf(why, why_len, "out of memory for the result arrays of %zu vertices", n);
        return -1;
    }
    if ((o->kernels & (K_BFS | K_SSSP)) &&
        g500_sample_roots(g, o->seed, o->roots, r->roots, why, why_len) != 0)
        return 2;
    r->ref = traverse_reference_ops.open(g, 0, why, why_len);
    if (r->ref == NULL)
        return -1;
    r->eng = o->engine->open(g, o->threads, why, why_len);
    if (r->eng == NULL)
        return -1;
    return 0;
}

/* The first vertex where a and b differ, or -1. */
static int64_t first_diff32(const uint32_t *a, const uint32_t *b, uint32_t n)
{
    for (uint32_t v = 0; v < n; v++)
        if (a[v] != b[v])
            return v;
    return -1;
}

static int64_t first_diff64(const uint64_t *a, const uint64_t *b, uint32_t n)
{
    for (uint32_t v = 0; v < n; v++)
        if (a[v] != b[v])
            return v;
    return -1;
}

/* One BFS from root with the engine, checked; returns its seconds, or a
 * negative number after printing why it failed. */
static double one_bfs(run *r, uint32_t root, char *why, size_t why_len)
{
    const g500_csr *g = &r->graph.csr;
    if (traverse_reference_ops.bfs(r->ref, root, r->ref_parent, why, why_len) != 0 ||
        g500_validate_bfs(g, root, r->ref_parent, r->ref_level, why, why_len) != 0)
        return -1;
    if (!(r->opt.kernels & K_BFS)) { /* SSSP alone: the reference's tree gives the component */
        memcpy(r->parent, r->ref_parent, g->vertices * sizeof *r->parent);
        return 1e-9;
    }
    double t0 = g500_seconds();
    if (r->opt.engine->bfs(r->eng, root, r->parent, why, why_len) != 0)
        return -1;
    double t = g500_seconds() - t0;
    if (g500_validate_bfs(g, root, r->parent, r->level, why, why_len) != 0)
        return -1;
    int64_t v = first_diff32(r->level, r->ref_level, g->vertices);
    if (v >= 0) {
        snprintf(why, why_len, "BFS from %u: level of vertex %" PRId64 " is %u, the reference's %u",
                 root, v, r->level[v], r->ref_level[v]);
        return -1;
    }
    return t > 0 ? t : 1e-9;
}

static double one_sssp(run *r, uint32_t root, char *why, size_t why_len)
{
    const g500_csr *g = &r->graph.csr;
    if (traverse_reference_ops.sssp(r->ref, root, r->ref_dist, why, why_len) != 0 ||
        g500_validate_sssp(g, root, r->ref_dist, why, why_len) != 0)
        return -1;
    double t0 = g500_seconds();
    if (r->opt.engine->sssp(r->eng, root, r->dist, why, why_len) != 0)
        return -1;
    double t = g500_seconds() - t0;
    if (g500_validate_sssp(g, root, r->dist, why, why_len) != 0)
        return -1;
    int64_t v = first_diff64(r->dist, r->ref_dist, g->vertices);
    if (v >= 0) {
        snprintf(why, why_len,
                 "SSSP from %u: dist[%" PRId64 "] is %" PRIu64 ", the reference's %" PRIu64, root,
                 v, r->dist[v], r->ref_dist[v]);
        return -1;
    }
    return t > 0 ? t : 1e-9;
}

static void search_all(run *r)
{
    char why[512];
    const uint32_t n = r->opt.roots;
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t root = r->roots[i];
        printf("root %2u/%u (vertex %u):", i + 1, n, root);
        fflush(stdout);
        double tb = one_bfs(r, root, why, sizeof why);
        if (tb < 0) {
            printf(" BFS FAILED\n  %s\n", why);
            r->failures++;
            r->bfs_teps[i] = r->sssp_teps[i] = 0;
            continue;
        }
        /* The component, the same for both searches, from the checked tree. */
        uint64_t edges = g500_component_edges(&r->el, r->parent);
        r->bfs_teps[i] = (double)edges / tb;
        printf(" %" PRIu64 " edges;", edges);
        if (r->opt.kernels & K_BFS)
            printf(" BFS %.2f ms %.1f MTEPS ok;", tb * 1e3, r->bfs_teps[i] / 1e6);
        fflush(stdout);
        if (!(r->opt.kernels & K_SSSP)) {
            printf("\n");
            continue;
        }
        double ts = one_sssp(r, root, why, sizeof why);
        if (ts < 0) {
            printf(" SSSP FAILED\n  %s\n", why);
            r->failures++;
            r->sssp_teps[i] = 0;
            continue;
        }
        r->sssp_teps[i] = (double)edges / ts;
        printf(" SSSP %.2f ms %.1f MTEPS ok\n", ts * 1e3, r->sssp_teps[i] / 1e6);
    }
}

/* Connected components and PageRank, once each, checked. */
static void cc_and_pr(run *r)
{
    char why[512];
    const g500_csr *g = &r->graph.csr;
    const traverse_ops *ops = r->opt.engine;
    if (r->opt.kernels & K_CC) {
        uint32_t comps = 0;
        double t0 = g500_seconds();
        int rc = ops->cc(r->eng, r->comp, why, sizeof why);
        double t = g500_seconds() - t0;
        if (rc == 0)
            rc = g500_validate_cc(g, r->comp, &comps, why, sizeof why);
        if (rc != 0) {
            printf("CC FAILED\n  %s\n", why);
            r->failures++;
        } else {
            printf("CC: %u components, %.2f ms, %.1f M edges/s; equal to union-find's partition\n",
                   comps, t * 1e3, (double)r->el.edges / (t > 0 ? t : 1e-9) / 1e6);
        }
    }
    if (r->opt.kernels & K_PR) {
        uint32_t iters = 0;
        double l1 = 0;
        const double bound = TRAVERSE_PR_CHECK_L1(TRAVERSE_PR_TOLERANCE);
        /* The converged fixed point (traverse.h). */
        int rc = g500_pagerank_fixed_point(g, TRAVERSE_PR_FIXED_L1, r->ref_score, why, sizeof why);
        double t0 = g500_seconds();
        if (rc == 0)
            rc = ops->pr(r->eng, r->score, &iters, why, sizeof why);
        double t = g500_seconds() - t0;
        if (rc == 0)
            rc = g500_validate_pr(g->vertices, r->score, r->ref_score, bound, &l1, why, sizeof why);
        if (rc != 0) {
            printf("PageRank FAILED\n  %s\n", why);
            r->failures++;
        } else {
            printf("PageRank: %u iterations, %.2f ms; L1 distance to the fixed point %.2g (<= %.3g)\n",
                   iters, t * 1e3, l1, bound);
        }
    }
}

static void summary_line(const char *what, const double *teps, uint32_t n)
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

int main(int argc, char **argv)
{
    run r;
    memset(&r, 0, sizeof r);
    if (parse_args(argc, argv, &r.opt) != 0)
        return 2;
#ifdef MKRT_WITH_MPI
    if (mkrt_mpi_launched())
        return graph_bfs_mpi(r.opt.scale, r.opt.edgefactor, r.opt.roots, r.opt.threads, r.opt.seed);
#endif
    char why[512];
    int src = setup(&r, why, sizeof why);
    if (src != 0) {
        fprintf(stderr, "graph_bfs: %s\n", why);
        run_free(&r);
        return src == 2 ? 2 : 1;
    }
    printf("engine %s, %u thread(s) asked (0: its default); every result is checked by the "
           "Graph500 rules and against the sequential reference\n",
           r.opt.engine->name, r.opt.threads);
    if (r.opt.kernels & (K_BFS | K_SSSP)) {
        search_all(&r);
        printf("\nsummary (%s, scale %u, edge factor %u):\n", r.opt.engine->name, r.opt.scale,
               r.opt.edgefactor);
        if (r.opt.kernels & K_BFS)
            summary_line("BFS ", r.bfs_teps, r.opt.roots);
        if (r.opt.kernels & K_SSSP)
            summary_line("SSSP", r.sssp_teps, r.opt.roots);
    }
    cc_and_pr(&r);
    if (r.failures > 0)
        printf("validation: %u result(s) FAILED\n", r.failures);
    else
        printf("validation: every result passed\n");
    unsigned failures = r.failures;
    run_free(&r);
    return failures > 0 ? 1 : 0;
}
