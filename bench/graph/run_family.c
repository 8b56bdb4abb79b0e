/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/graph/run_family.c - one graph family in bench/graph_bench.c: the
 * graph, the roots and the reference's answers, then every engine's four
 * kernels, each result checked, and GAPBS's runs (gapbs_peer.c). */
#include <inttypes.h>
#include <math.h>

#include "bench_graph.h"

const char *const kernel_name[KERNELS] = {"bfs", "sssp", "cc", "pr"};

/* Bytes one examined edge item touches in mkrt's push kernels (BFS,
 * SSSP): the edge's target and weight (8), the 16-byte item written into a
 * batch and read back (32), the source cell loaded (8) and the target cell
 * updated by an atomic minimum (16, read and write). PageRank pulls: per
 * edge the target and the neighbour's float contribution (8); per vertex
 * its two offsets (8, counted once), its score read and written (16) and
 * its next contribution (4). CC links: per examined edge its target (4),
 * the two labels and their roots read (16) and a compare-and-swap (8);
 * per vertex its offsets and label in each of the 2 phases (2 x 12) and
 * its label and root in the read (8). An
 * estimate from the data structures, not a measurement of cache traffic. */
#define PUSH_BYTES_PER_EDGE 24.0
#define PULL_BYTES_PER_EDGE 8.0
#define PULL_BYTES_PER_VERTEX 28.0
#define CC_BYTES_PER_EDGE 28.0
#define CC_BYTES_PER_VERTEX 32.0

typedef struct world {
    g500_family family;
    g500_edge_list el;
    g500_graph graph;
    uint32_t *roots;
    uint32_t **levels;   /* per root, the reference's */
    uint64_t **dists;    /* per root, the reference's */
    uint64_t *edges;     /* per root: input tuples in the component (Graph500's count) */
    uint64_t *dir_edges; /* per root: CSR (directed) edges in the component */
    uint64_t *reached;   /* per root: vertices in the component */
    uint32_t *parent, *level, *comp;
    uint64_t *dist;
    double *score, *ref_score;
    uint32_t components;
} world;

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "graph_bench: out of memory for %zu bytes\n", n);
        exit(1);
    }
    return p;
}

static int build_world(const gopts *o, g500_family f, world *w)
{
    char why[512];
    memset(w, 0, sizeof *w);
    w->family = f;
    double t0 = g500_seconds();
    if (g500_generate_family(f, o->scale, o->edgefactor, 1, &w->el, why, sizeof why) != 0 ||
        g500_csr_build(&w->el, &w->graph, why, sizeof why) != 0) {
        fprintf(stderr, "graph_bench: %s\n", why);
        return -1;
    }
    const g500_csr *g = &w->graph.csr;
    printf("\ngraph %s: scale %u, edge factor %u: %u vertices, %" PRIu64 " undirected edges "
           "(built in %.2f s)\n",
           g500_family_name(f), o->scale, o->edgefactor, g->vertices, g->offsets[g->vertices] / 2,
           g500_seconds() - t0);
    size_t n = g->vertices;
    w->roots = xmalloc(o->roots * sizeof *w->roots);
    w->levels = xmalloc(o->roots * sizeof *w->levels);
    w->dists = xmalloc(o->roots * sizeof *w->dists);
    w->edges = xmalloc(o->roots * sizeof *w->edges);
    w->dir_edges = xmalloc(o->roots * sizeof *w->dir_edges);
    w->reached = xmalloc(o->roots * sizeof *w->reached);
    w->parent = xmalloc(n * sizeof *w->parent);
    w->level = xmalloc(n * sizeof *w->level);
    w->comp = xmalloc(n * sizeof *w->comp);
    w->dist = xmalloc(n * sizeof *w->dist);
    w->score = xmalloc(n * sizeof *w->score);
    w->ref_score = xmalloc(n * sizeof *w->ref_score);
    for (uint32_t i = 0; i < o->roots; i++) {
        w->levels[i] = xmalloc(n * sizeof **w->levels);
        w->dists[i] = xmalloc(n * sizeof **w->dists);
    }
    if (g500_sample_roots(g, 1, o->roots, w->roots, why, sizeof why) != 0) {
        fprintf(stderr, "graph_bench: %s\n", why);
        return -1;
    }
    /* PageRank's answers are checked against the converged fixed point
     * (within TRAVERSE_PR_FIXED_L1 of it, traverse.h). */
    if ((o->kernels & 1u << K_PR) &&
        g500_pagerank_fixed_point(g, TRAVERSE_PR_FIXED_L1, w->ref_score, why, sizeof why) != 0) {
        fprintf(stderr, "graph_bench: %s\n", why);
        return -1;
    }
    return 0;
}

static void free_world(const gopts *o, world *w)
{
    for (uint32_t i = 0; w->levels != NULL && i < o->roots; i++) {
        free(w->levels[i]);
        free(w->dists[i]);
    }
    free(w->levels);
    free(w->dists);
    free(w->edges);
    free(w->dir_edges);
    free(w->reached);
    free(w->roots);
    free(w->parent);
    free(w->level);
    free(w->comp);
    free(w->dist);
    free(w->score);
    free(w->ref_score);
    g500_graph_free(&w->graph);
    g500_edge_list_free(&w->el);
}

/* Checks w->parent for root i; the reference (is_ref) stores its levels
 * and the component's sizes instead of comparing. */
static int check_bfs(world *w, uint32_t i, bool is_ref, char *why, size_t why_len)
{
    const g500_csr *g = &w->graph.csr;
    uint32_t *lv = is_ref ? w->levels[i] : w->level;
    if (g500_validate_bfs(g, w->roots[i], w->parent, lv, why, why_len) != 0)
        return -1;
    if (is_ref) {
        w->edges[i] = g500_component_edges(&w->el, w->parent);
        w->dir_edges[i] = w->reached[i] = 0;
        for (uint32_t v = 0; v < g->vertices; v++)
            if (lv[v] != G500_NO_LEVEL) {
                w->reached[i]++;
                w->dir_edges[i] += g->offsets[v + 1] - g->offsets[v];
            }
        return 0;
    }
    for (uint32_t v = 0; v < g->vertices; v++)
        if (lv[v] != w->levels[i][v]) {
            snprintf(why, why_len, "BFS from %u: level of vertex %u is %u, the reference's %u",
                     w->roots[i], v, lv[v], w->levels[i][v]);
            return -1;
        }
    return 0;
}

static int check_sssp(world *w, uint32_t i, bool is_ref, char *why, size_t why_len)
{
    const g500_csr *g = &w->graph.csr;
    if (g500_validate_sssp(g, w->roots[i], w->dist, why, why_len) != 0)
        return -1;
    if (is_ref) {
        memcpy(w->dists[i], w->dist, g->vertices * sizeof *w->dist);
        return 0;
    }
    for (uint32_t v = 0; v < g->vertices; v++)
        if (w->dist[v] != w->dists[i][v]) {
            snprintf(why, why_len,
                     "SSSP from %u: dist[%u] is %" PRIu64 ", the reference's %" PRIu64,
                     w->roots[i], v, w->dist[v], w->dists[i][v]);
            return -1;
        }
    return 0;
}

/* Per-kernel sums over one engine's runs. */
typedef struct acc {
    double seconds;    /* total */
    double inv_teps;   /* sum of 1 / TEPS (bfs, sssp) */
    unsigned runs;
    double examined;   /* sum of edges examined / directed edges in the component */
    double rounds;     /* sum of batches per run */
    double pushed, pulled; /* sums of levels per run */
    double cpu;        /* CPU seconds, total (RUSAGE_SELF around the calls; GAPBS: gapbs_cpu per trial x runs) */
    double pr_l1;      /* PageRank: the largest L1 distance of a run's scores to the fixed point */
    double units, units_planner; /* mkrt: the CPU pool's units of work, and the planner's */
} acc;

static void add_row(results *res, const gopts *o, const world *w, const char *engine,
                    unsigned threads, int k, const acc *a, bool counters, double bytes_per_edge,
                    double bytes_fixed)
{
    if (res->n >= ROWS_MAX || a->runs == 0)
        return;
    row *r = &res->rows[res->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->engine, sizeof r->engine, "%s", engine);
    r->kernel = k;
    r->family = w->family;
    r->threads = threads;
    r->seconds = a->seconds / a->runs;
    r->mteps = k <= K_SSSP ? a->runs / a->inv_teps / 1e6 : (double)w->el.edges / r->seconds / 1e6;
    r->has_counters = counters;
    r->cpu_seconds = a->cpu / a->runs;
    r->pr_l1 = k == K_PR && a->pr_l1 > 0 ? a->pr_l1 : -1;
    r->levels = (a->pushed + a->pulled) / a->runs;
    r->planner_share = counters && a->units > 0 ? a->units_planner / a->units : -1;
    if (counters) {
        r->examined_per_edge = a->examined / a->runs;
        r->rounds = a->rounds / a->runs;
        r->levels_pushed = a->pushed / a->runs;
        r->levels_pulled = a->pulled / a->runs;
        r->bytes_per_edge = bytes_per_edge * r->examined_per_edge + bytes_fixed;
    }
    (void)o;
}

static void count(const traverse_ops *ops, const traverse_engine *e, uint64_t dir_edges, acc *a)
{
    if (ops->counters == NULL)
        return;
    traverse_counters c;
    ops->counters(e, &c);
    a->examined += dir_edges ? (double)c.edges_examined / (double)dir_edges : 0;
    a->rounds += (double)c.rounds;
    a->pushed += (double)c.levels_pushed;
    a->pulled += (double)c.levels_pulled;
    a->units += (double)c.units;
    a->units_planner += (double)c.units_planner;
}

/* BFS and SSSP from root i. Each search runs twice, the first untimed:
 * a warm-up, as GAPBS's first trial of each process is (gapbs_run), so
 * that every engine's timed search finds the graph where a second search
 * of the same root finds it (GAPBS ran between, and evicted it). */
static int search_root(const gopts *o, world *w, const traverse_ops *ops, traverse_engine *e,
                       bool is_ref, acc *a, uint32_t i, char *why, size_t len)
{
    /* The reference always runs BFS: its trees give the components. */
    const bool bfs = is_ref || (o->kernels & 1u << K_BFS), sssp = o->kernels & 1u << K_SSSP;
    if (bfs) {
        if (ops->bfs(e, w->roots[i], w->parent, why, len) != 0) /* the warm-up */
            return -1;
        const double c0 = bench_cpu_seconds(RUSAGE_SELF), t0 = g500_seconds();
        if (ops->bfs(e, w->roots[i], w->parent, why, len) != 0)
            return -1;
        double t = g500_seconds() - t0;
        a[K_BFS].cpu += bench_cpu_seconds(RUSAGE_SELF) - c0;
        if (check_bfs(w, i, is_ref, why, len) != 0)
            return -1;
        count(ops, e, w->dir_edges[i], &a[K_BFS]);
        t = t > 0 ? t : 1e-9;
        a[K_BFS].seconds += t;
        a[K_BFS].inv_teps += t / (double)w->edges[i];
        a[K_BFS].runs += (o->kernels & 1u << K_BFS) != 0;
    }
    if (sssp) {
        if (ops->sssp(e, w->roots[i], w->dist, why, len) != 0) /* the warm-up */
            return -1;
        const double c0 = bench_cpu_seconds(RUSAGE_SELF), t0 = g500_seconds();
        if (ops->sssp(e, w->roots[i], w->dist, why, len) != 0)
            return -1;
        double t = g500_seconds() - t0;
        a[K_SSSP].cpu += bench_cpu_seconds(RUSAGE_SELF) - c0;
        if (check_sssp(w, i, is_ref, why, len) != 0)
            return -1;
        count(ops, e, w->dir_edges[i], &a[K_SSSP]);
        t = t > 0 ? t : 1e-9;
        a[K_SSSP].seconds += t;
        a[K_SSSP].inv_teps += t / (double)w->edges[i];
        a[K_SSSP].runs++;
    }
    return 0;
}

/* One CC run (k == K_CC) or one PageRank run, checked; after an untimed
 * one, the warm-up (as search_root's). */
static int whole_once(world *w, const traverse_ops *ops, traverse_engine *e, bool is_ref, int k,
                      acc *a, char *why, size_t len)
{
    const g500_csr *g = &w->graph.csr;
    const uint64_t m = g->offsets[g->vertices];
    uint32_t warm_iters = 0;
    if (k == K_CC ? ops->cc(e, w->comp, why, len) != 0 : ops->pr(e, w->score, &warm_iters, why, len) != 0)
        return -1;
    if (k == K_CC) {
        const double c0 = bench_cpu_seconds(RUSAGE_SELF), t0 = g500_seconds();
        if (ops->cc(e, w->comp, why, len) != 0)
            return -1;
        a[K_CC].seconds += g500_seconds() - t0;
        a[K_CC].cpu += bench_cpu_seconds(RUSAGE_SELF) - c0;
        a[K_CC].runs++;
        uint32_t comps = 0;
        if (g500_validate_cc(g, w->comp, &comps, why, len) != 0)
            return -1;
        if (is_ref)
            w->components = comps; /* the reference runs first: the others are checked by it */
        count(ops, e, m, &a[K_CC]);
        return 0;
    }
    uint32_t iters = 0;
    const double c0 = bench_cpu_seconds(RUSAGE_SELF), t0 = g500_seconds();
    if (ops->pr(e, w->score, &iters, why, len) != 0)
        return -1;
    a[K_PR].seconds += g500_seconds() - t0;
    a[K_PR].cpu += bench_cpu_seconds(RUSAGE_SELF) - c0;
    a[K_PR].runs++;
    double l1 = 0;
    if (g500_validate_pr(g->vertices, w->score, w->ref_score, TRAVERSE_PR_CHECK_L1(TRAVERSE_PR_TOLERANCE), &l1,
                         why, len) != 0)
        return -1;
    a[K_PR].pr_l1 = l1 > a[K_PR].pr_l1 ? l1 : a[K_PR].pr_l1;
    count(ops, e, m, &a[K_PR]);
    return 0;
}

/* ---- GAPBS's steps, its answers checked against the reference -------- */

static int gapbs_root(const gopts *o, world *w, gapbs_peer *p, uint32_t i, acc *a, char *why,
                      size_t len)
{
    for (int k = K_BFS; k <= K_SSSP; k++) {
        if (!(o->kernels & 1u << k))
            continue;
        gapbs_result r;
        if (gapbs_run(p, kernel_name[k], w->roots[i], 1, &r, why, len) != 0)
            return -1;
        if (r.count != w->reached[i]) {
            snprintf(why, len, "gapbs %s from %u reached %" PRIu64 " vertices, the reference %" PRIu64,
                     kernel_name[k], w->roots[i], r.count, w->reached[i]);
            return -1;
        }
        double s = r.seconds > 0 ? r.seconds : 1e-9;
        a[k].seconds += s;
        a[k].inv_teps += s / (double)w->edges[i];
        a[k].runs++;
    }
    return 0;
}

static int gapbs_whole(world *w, gapbs_peer *p, int k, acc *a, char *why, size_t len)
{
    const g500_csr *g = &w->graph.csr;
    gapbs_result r;
    if (gapbs_run(p, kernel_name[k], UINT32_MAX, 1, &r, why, len) != 0)
        return -1;
    a[k].seconds += r.seconds;
    a[k].runs++;
    if (k == K_CC) {
        if (r.count != w->components) {
            snprintf(why, len, "gapbs cc found %" PRIu64 " components, union-find %u", r.count,
                     w->components);
            return -1;
        }
        return 0;
    }
    /* Its top scores within the bound of the fixed point's (an L1 bound
     * is a bound on every vertex). */
    if (r.top_n == 0) {
        snprintf(why, len, "gapbs pr printed no top scores (-a)");
        return -1;
    }
    for (unsigned t = 0; t < r.top_n; t++)
        if (r.top_v[t] >= g->vertices ||
            fabs(r.top_score[t] - w->ref_score[r.top_v[t]]) > TRAVERSE_PR_CHECK_L1(TRAVERSE_PR_TOLERANCE)) {
            snprintf(why, len, "gapbs pr: vertex %u scores %g, the reference %g", r.top_v[t],
                     r.top_score[t], r.top_v[t] < g->vertices ? w->ref_score[r.top_v[t]] : NAN);
            return -1;
        }
    return 0;
}

/* Every kernel of one engine; with p (GAPBS), GAPBS's run of the same
 * root or trial right after each of the engine's, so that the load of a
 * shared machine falls on both alike. */
static int run_engine(const gopts *o, world *w, const traverse_ops *ops, unsigned threads,
                      bool is_ref, gapbs_peer *p, double level_us, results *res)
{
    char why[1024];
    const g500_csr *g = &w->graph.csr;
    double t0 = g500_seconds();
    traverse_engine *e = ops->open(g, threads, why, sizeof why);
    if (e == NULL && ops == &traverse_mkrt_cuda_ops) { /* --device without a usable GPU */
        printf("%s: skipped: %s\n", ops->name, why);
        return 0;
    }
    if (e == NULL) {
        fprintf(stderr, "graph_bench: FAILED: %s did not open: %s\n", ops->name, why);
        return -1;
    }
    printf("%s: set up in %.2f s (not timed)%s\n", ops->name, g500_seconds() - t0,
           p != NULL ? "; GAPBS runs each root and trial right after it" : "");
    acc a[KERNELS], ga[KERNELS];
    memset(a, 0, sizeof a);
    memset(ga, 0, sizeof ga);
    int rc = 0;
    const char *who = ops->name;
    for (uint32_t i = 0; i < o->roots && rc == 0; i++) {
        rc = search_root(o, w, ops, e, is_ref, a, i, why, sizeof why);
        if (rc == 0 && p != NULL && (rc = gapbs_root(o, w, p, i, ga, why, sizeof why)) != 0)
            who = "gapbs";
    }
    for (int k = K_CC; k <= K_PR && rc == 0; k++) {
        if (!(o->kernels & 1u << k) || (k == K_CC ? ops->cc == NULL : ops->pr == NULL))
            continue;
        for (uint32_t t = 0; t < o->trials && rc == 0; t++) {
            rc = whole_once(w, ops, e, is_ref, k, a, why, sizeof why);
            if (rc == 0 && p != NULL && (rc = gapbs_whole(w, p, k, ga, why, sizeof why)) != 0)
                who = "gapbs";
        }
    }
    ops->close(e);
    /* GAPBS's CPU time per trial: a run of its own per kernel (its main
     * runs include the graph's load and -v's verification). */
    for (int k = 0; k < KERNELS && rc == 0 && p != NULL; k++)
        if (ga[k].runs > 0) {
            double s = 0;
            if ((rc = gapbs_cpu(p, kernel_name[k], k <= K_SSSP ? w->roots[0] : UINT32_MAX, &s, why, sizeof why)) != 0)
                who = "gapbs";
            ga[k].cpu = s * ga[k].runs;
        }
    if (rc != 0) {
        fprintf(stderr, "graph_bench: FAILED: %s gave a wrong result: %s\n", who, why);
        return -1;
    }
    const bool counters = ops->counters != NULL;
    const double per_vertex = g->vertices / (double)g->offsets[g->vertices];
    const double pr_bytes = PULL_BYTES_PER_EDGE + PULL_BYTES_PER_VERTEX * per_vertex;
    for (int k = 0; k < KERNELS; k++) {
        if (a[k].runs == 0)
            continue;
        add_row(res, o, w, ops->name, threads, k, &a[k], counters,
                k == K_PR   ? pr_bytes
                : k == K_CC ? CC_BYTES_PER_EDGE
                            : PUSH_BYTES_PER_EDGE,
                k == K_CC ? CC_BYTES_PER_VERTEX * per_vertex : 0);
        res->rows[res->n - 1].level_us = level_us;
        printf("%s %s: %.3f ms per %s, %.1f MTEPS, every result valid\n", ops->name,
               kernel_name[k], a[k].seconds / a[k].runs * 1e3, k <= K_SSSP ? "search" : "run",
               res->rows[res->n - 1].mteps);
    }
    for (int k = 0; k < KERNELS && p != NULL; k++) {
        if (ga[k].runs == 0)
            continue;
        add_row(res, o, w, "gapbs", threads, k, &ga[k], false, 0, 0);
        printf("gapbs %s: %.3f ms per %s, %.1f MTEPS, every trial %smatched the reference\n",
               kernel_name[k], ga[k].seconds / ga[k].runs * 1e3, k <= K_SSSP ? "search" : "run",
               res->rows[res->n - 1].mteps, threads == o->thread_list[0] ? "passed its verification and " : "");
    }
    fflush(stdout);
    return 0;
}

int bench_family(const gopts *o, g500_family f, results *res)
{
    world w;
    if (build_world(o, f, &w) != 0) {
        free_world(o, &w);
        return -1;
    }
    res->pr_in_place_l1[f] = -1;
    if (o->kernels & 1u << K_PR) { /* GAPBS's rule's accuracy, beside the engines' (report.c) */
        char why[256];
        double l1 = 0;
        if (g500_pagerank_in_place(&w.graph.csr, TRAVERSE_PR_TOLERANCE, TRAVERSE_PR_MAX_ITERS, w.score,
                                   &res->pr_in_place_iters[f], why, sizeof why) != 0) {
            fprintf(stderr, "graph_bench: %s\n", why);
            free_world(o, &w);
            return -1;
        }
        g500_validate_pr(w.graph.csr.vertices, w.score, w.ref_score, INFINITY, &l1, why, sizeof why);
        res->pr_in_place_l1[f] = l1;
    }
    struct {
        const traverse_ops *ops;
        unsigned threads;
    } engines[] = {
        {&traverse_reference_ops, 1}, /* first: the others are compared with it */
        {&traverse_mkrt_ops, o->threads},
#ifdef HAVE_GRAPHBLAS
        {&traverse_graphblas_ops, o->threads},
#endif
#ifdef HAVE_IGRAPH
        {&traverse_igraph_ops, 1},
#endif
    };
    int rc = 0;
    gapbs_peer *p = NULL;
    for (unsigned t = 0; t < o->nthreads; t++)
        if (res->level_us[t] == 0) { /* once per run, before the first family's engines */
            res->level_us[t] = mkrt_level_transition_us(o->thread_list[t]);
            printf("mkrt level transition: %.1f us (BFS along a path, one vertex per level, %u threads)\n",
                   res->level_us[t], o->thread_list[t]);
        }
    for (size_t i = 0; i < sizeof engines / sizeof *engines + (o->device ? 1 : 0) && rc == 0; i++) {
        if (i == sizeof engines / sizeof *engines) { /* --device: the same kernels on a CUDA GPU */
            rc = run_engine(o, &w, &traverse_mkrt_cuda_ops, o->threads, false, NULL, 0, res);
            break;
        }
        if (engines[i].ops == &traverse_mkrt_ops && o->gapbs != NULL) {
            char why[1024];
            double t0 = g500_seconds();
            if ((p = gapbs_open(o->gapbs, &w.graph.csr, o->threads, why, sizeof why)) == NULL) {
                fprintf(stderr, "graph_bench: FAILED: gapbs: %s\n", why);
                rc = -1;
                break;
            }
            printf("gapbs: graph written as .el/.wel in %.2f s (not timed)\n",
                   g500_seconds() - t0);
        }
        if (engines[i].ops != &traverse_mkrt_ops) {
            rc = run_engine(o, &w, engines[i].ops, engines[i].threads, i == 0, NULL, 0, res);
            continue;
        }
        /* mkrt and GAPBS at each of --threads's counts, on this graph. */
        for (unsigned t = 0; t < o->nthreads && rc == 0; t++) {
            if (p != NULL) /* its -v (serial, seconds at scale 20) at the first count; -a's checks at all */
                gapbs_set_threads(p, o->thread_list[t], t == 0);
            rc = run_engine(o, &w, engines[i].ops, o->thread_list[t], false, p, res->level_us[t], res);
        }
    }
    gapbs_close(p);
    if (rc == 0 && o->concurrent > 0)
        rc = bench_concurrent(o, f, &w.graph.csr, w.roots, (const uint32_t *const *)w.levels,
                              (const uint64_t *const *)w.dists, res);
    free_world(o, &w);
    return rc;
}
