/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_graph_kinds.c - the sweep kinds of traversal (mkrt/graph.h):
 * CC labels equal to union-find's (the smallest vertex of each component)
 * and PageRank within 1e-6 L1 of the converged fixed point, on random
 * graphs of several components, on the CPU pool and the simulated device,
 * with CC, PageRank, BFS and SSSP running at once from four threads while
 * a producer's items run; the default PageRank parameters; its start by
 * degree (the fixed point on a cycle beside isolated vertices); the
 * phases run inside the CPU pool's workers (every boundary but the first
 * crossed at their barrier, or with DRAIN off every phase given back to
 * the dispatcher), on 1 and 2 workers; lane reuse across kinds; and every
 * bad input of the new kinds and calls. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/thread.h" /* pthreads under the C11 names: TSan sees them */
#include "graph_fixture.h"
#include "graph_runtime.h"

#define RUNS 3

/* A runtime of two workers with a cell per vertex (graph_runtime.h's has 4096). */
static mkrt_runtime *start_cells(mkrt_backend_kind kind, uint32_t cells)
{
    mkrt_config c = mkrt_config_default();
    c.backend = kind;
    c.workers = 2;
    c.cells = cells < 16 ? 16 : cells;
    c.emit_capacity = 64;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK)
        bail_out("mkrt_create: %s", err.message);
    return rt;
}

/* `parts` random graphs side by side (both directions of every edge),
 * each part's vertices [p * v / parts, (p + 1) * v / parts), plus the
 * isolated vertices test_graph_random leaves in each. */
static test_graph parts_graph(uint32_t v, uint32_t edges, uint32_t parts, unsigned seed)
{
    test_graph g = {v, calloc(v + 1, sizeof(uint64_t)), NULL, NULL};
    uint32_t *a = malloc(edges * sizeof *a + 1), *b = malloc(edges * sizeof *b + 1);
    if (g.off == NULL || a == NULL || b == NULL)
        bail_out("out of memory");
    for (uint32_t e = 0; e < edges; e++) {
        const uint32_t p = (uint32_t)rand_r(&seed) % parts, lo = p * (v / parts), n = v / parts - v / parts / 8;
        a[e] = lo + (uint32_t)rand_r(&seed) % n;
        b[e] = lo + (uint32_t)rand_r(&seed) % n;
        g.off[a[e] + 1]++;
        g.off[b[e] + 1]++;
    }
    for (uint32_t i = 0; i < v; i++)
        g.off[i + 1] += g.off[i];
    g.dst = malloc(g.off[v] * sizeof *g.dst + 1);
    uint64_t *fill = malloc(v * sizeof *fill + 1);
    if (g.dst == NULL || fill == NULL)
        bail_out("out of memory");
    memcpy(fill, g.off, v * sizeof *fill);
    for (uint32_t e = 0; e < edges; e++) {
        g.dst[fill[a[e]]++] = b[e];
        g.dst[fill[b[e]]++] = a[e];
    }
    free(fill);
    free(a);
    free(b);
    return g;
}

/* A runtime with g registered and, with t, a PageRank traversal opened. */
static mkrt_runtime *with_graph(mkrt_backend_kind kind, const test_graph *g, mkrt_traversal **t)
{
    mkrt_runtime *rt = start_cells(kind, g->v);
    mkrt_graph graph = {g->v, g->off, g->dst, NULL};
    mkrt_traversal_desc d = {MKRT_TRAVERSAL_PAGERANK, true};
    mkrt_error err;
    if (mkrt_graph_register(rt, &graph, &err) != MKRT_OK || (t != NULL && mkrt_traversal_open(rt, &d, t, &err) != MKRT_OK))
        bail_out("setup: %s", err.message);
    return rt;
}

/* Union-find: label[v] = the smallest vertex of v's component. */
static uint32_t find(uint32_t *p, uint32_t x)
{
    while (p[x] != x)
        x = p[x] = p[p[x]];
    return x;
}

static void ref_cc(const test_graph *g, uint64_t *label)
{
    uint32_t *p = malloc(g->v * sizeof *p);
    if (p == NULL)
        bail_out("out of memory");
    for (uint32_t v = 0; v < g->v; v++)
        p[v] = v;
    for (uint32_t v = 0; v < g->v; v++)
        for (uint64_t e = g->off[v]; e < g->off[v + 1]; e++) {
            uint32_t x = find(p, v), y = find(p, g->dst[e]);
            if (x < y)
                p[y] = x;
            else
                p[x] = y;
        }
    for (uint32_t v = 0; v < g->v; v++)
        label[v] = find(p, v);
    free(p);
}

/* The fixed point: Jacobi iterations until the L1 change is below 1e-13. */
static void ref_pr(const test_graph *g, double d, double *score)
{
    const uint32_t n = g->v;
    double *next = malloc(n * sizeof *next);
    if (next == NULL)
        bail_out("out of memory");
    for (uint32_t v = 0; v < n; v++)
        score[v] = 1.0 / n;
    for (int it = 0; it < 5000; it++) {
        double change = 0;
        for (uint32_t v = 0; v < n; v++) {
            double sum = 0;
            for (uint64_t e = g->off[v]; e < g->off[v + 1]; e++) {
                const uint32_t u = g->dst[e];
                sum += score[u] / (double)(g->off[u + 1] - g->off[u]);
            }
            next[v] = (1 - d) / n + d * sum;
            change += fabs(next[v] - score[v]);
        }
        memcpy(score, next, n * sizeof *score);
        if (change < 1e-13)
            break;
    }
    free(next);
}

static double l1(const double *a, const double *b, uint32_t n)
{
    double s = 0;
    for (uint32_t v = 0; v < n; v++)
        s += fabs(a[v] - b[v]);
    return s;
}

typedef struct job {
    mkrt_traversal *t;
    const test_graph *g;
    mkrt_traversal_kind kind;
    const uint64_t *want;  /* CC: labels; BFS, SSSP: from root 0 */
    const double *ranks;   /* PageRank: the fixed point */
    int wrong, failed;
    double worst;          /* PageRank: the largest L1 distance seen */
    char why[MKRT_ERROR_MESSAGE_MAX + 64];
} job;

static int run_job(void *arg)
{
    job *j = arg;
    const uint32_t n = j->g->v;
    uint64_t *got = malloc(n * sizeof *got);
    double *ranks = malloc(n * sizeof *ranks);
    mkrt_error err = {0};
    for (int r = 0; r < RUNS; r++) {
        static const mkrt_pagerank_params fine = {0, 1e-9, 1000};
        mkrt_status st = j->kind == MKRT_TRAVERSAL_PAGERANK ? mkrt_traversal_start_pagerank(j->t, &fine, &err)
                                                            : mkrt_traversal_start(j->t, 0, &err);
        if (st == MKRT_OK)
            st = mkrt_traversal_wait(j->t, MKRT_TIMEOUT_INFINITE);
        if (st == MKRT_OK)
            st = j->kind == MKRT_TRAVERSAL_PAGERANK ? mkrt_traversal_read_ranks(j->t, 0, n, ranks, NULL, &err)
                                                    : mkrt_traversal_read(j->t, 0, n, got, &err);
        if (st != MKRT_OK) {
            j->failed++;
            snprintf(j->why, sizeof j->why, "run %d: status %d: %s", r, (int)st, err.message);
            continue;
        }
        if (j->kind == MKRT_TRAVERSAL_PAGERANK) {
            double dist = l1(ranks, j->ranks, n);
            j->worst = dist > j->worst ? dist : j->worst;
            if (dist > 1e-6) {
                j->wrong++;
                snprintf(j->why, sizeof j->why, "run %d: L1 distance %g from the fixed point", r, dist);
            }
            continue;
        }
        for (uint32_t v = 0; v < n; v++)
            if (got[v] != j->want[v]) {
                j->wrong++;
                snprintf(j->why, sizeof j->why, "run %d: vertex %u: %llu, the reference's %llu", r, v,
                         (unsigned long long)got[v], (unsigned long long)j->want[v]);
                break;
            }
    }
    free(got);
    free(ranks);
    return 0;
}

static int produce(void *arg)
{
    mkrt_producer *p = arg;
    mkrt_item adds[64];
    for (int i = 0; i < 64; i++)
        adds[i] = (mkrt_item){MKRT_OP_ADD, 9, 9, 1};
    for (int k = 0; k < 100; k++)
        if (mkrt_publish(p, adds, 64, MKRT_TIMEOUT_INFINITE, NULL) != MKRT_OK)
            return 1;
    return 0;
}

/* CC and PageRank twice each, BFS and SSSP, from six threads at once
 * beside a producer; every result checked against the reference. */
static void at_once(mkrt_backend_kind backend, const test_graph *g, const char *name)
{
    const uint32_t n = g->v;
    uint64_t *labels = malloc(n * sizeof *labels), *depth = malloc(n * sizeof *depth),
             *dist = malloc(n * sizeof *dist);
    double *ranks = malloc(n * sizeof *ranks);
    uint32_t *level = malloc(n * sizeof *level);
    if (labels == NULL || depth == NULL || dist == NULL || ranks == NULL || level == NULL)
        bail_out("out of memory");
    ref_cc(g, labels);
    ref_pr(g, 0.85, ranks);
    test_graph_ref_bfs(g, 0, level);
    for (uint32_t v = 0; v < n; v++)
        depth[v] = level[v] == UINT32_MAX ? UINT64_MAX : level[v];
    memcpy(dist, depth, n * sizeof *dist); /* no weights: every edge 1 */

    mkrt_runtime *rt = with_graph(backend, g, NULL);
    mkrt_error err;
    mkrt_producer *p = mkrt_producer_open(rt, &err);
    if (p == NULL)
        bail_out("producer: %s", err.message);
    enum { JOBS = 6 };
    static const mkrt_traversal_kind kinds_run[JOBS] = {MKRT_TRAVERSAL_CC, MKRT_TRAVERSAL_PAGERANK,
                                                         MKRT_TRAVERSAL_BFS, MKRT_TRAVERSAL_SSSP,
                                                         MKRT_TRAVERSAL_CC, MKRT_TRAVERSAL_PAGERANK};
    job jobs[JOBS];
    mkrt__thread th[JOBS + 1];
    for (int i = 0; i < JOBS; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].g = g;
        jobs[i].kind = kinds_run[i];
        jobs[i].want = kinds_run[i] == MKRT_TRAVERSAL_CC ? labels : kinds_run[i] == MKRT_TRAVERSAL_BFS ? depth : dist;
        jobs[i].ranks = ranks;
        /* i 4: CC on a graph not declared symmetric (links every edge). */
        mkrt_traversal_desc d = {kinds_run[i], i != 4};
        if (mkrt_traversal_open(rt, &d, &jobs[i].t, &err) != MKRT_OK)
            bail_out("open %d: %s", i, err.message);
    }
    for (int i = 0; i < JOBS; i++)
        if (mkrt__thread_start(&th[i], run_job, &jobs[i]) != 0)
            bail_out("thread start");
    if (mkrt__thread_start(&th[JOBS], produce, p) != 0)
        bail_out("thread start");
    int wrong = 0, failed = 0, res = 0;
    double worst = 0;
    for (int i = 0; i < JOBS; i++) {
        mkrt__thread_join_result(th[i], NULL);
        wrong += jobs[i].wrong;
        failed += jobs[i].failed;
        worst = jobs[i].worst > worst ? jobs[i].worst : worst;
        if (jobs[i].wrong || jobs[i].failed)
            diag("job %d (kind %d): %s", i, (int)jobs[i].kind, jobs[i].why);
    }
    mkrt__thread_join_result(th[JOBS], &res);
    is(failed, 0, "%s %s: 6 threads x %d runs (CC, PageRank, BFS, SSSP at once): every call MKRT_OK", kind_name(backend),
       name, RUNS);
    is(wrong, 0, "%s %s: CC equals union-find (smallest vertex per component), PageRank within 1e-6 L1 of the "
       "fixed point (worst %.2g), BFS and SSSP equal the reference",
       kind_name(backend), name, worst);
    is(res, 0, "%s %s: the producer's items ran meanwhile", kind_name(backend), name);
    is(mkrt_drain(rt, MKRT_TIMEOUT_INFINITE), MKRT_OK, "%s %s: drained", kind_name(backend), name);
    is(cell(rt, 9), 6400, "%s %s: ... all 6400 of them", kind_name(backend), name);
    mkrt_traversal_stats ts;
    mkrt_traversal_stats_read(jobs[0].t, &ts);
    if (backend == MKRT_BACKEND_CPU) { /* Afforest's phases (graph/sweep.c) */
        is(ts.levels_pushed, 3 * RUNS, "%s %s: CC ran 3 phases per run", kind_name(backend), name);
        ok(ts.edges_examined > 0 && ts.edges_examined <= RUNS * g->off[n], "%s %s: ... examining at most every edge "
           "per run (%llu of %llu)", kind_name(backend), name, (unsigned long long)ts.edges_examined,
           (unsigned long long)(RUNS * g->off[n]));
    } else { /* on the device: label sweeps until one lowers nothing (backend/mk_trav.h) */
        ok(ts.levels_pushed >= 2 * RUNS && ts.levels_pulled == 0, "%s %s: CC ran on the device, at least 2 sweeps "
           "per run (%llu in %d runs)", kind_name(backend), name, (unsigned long long)ts.levels_pushed, RUNS);
        is(ts.edges_examined, ts.levels_pushed * g->off[n], "%s %s: ... every edge once per sweep", kind_name(backend),
           name);
    }
    mkrt_traversal_stats_read(jobs[1].t, &ts);
    uint32_t iters = 0;
    mkrt_traversal_read_ranks(jobs[1].t, 0, 0, NULL, &iters, &err);
    ok(iters > 1 && iters < 1000 && ts.levels_pushed >= iters, "%s %s: PageRank converged in %u iterations "
       "(levels counted %llu)", kind_name(backend), name, iters, (unsigned long long)ts.levels_pushed);
    is(ts.edges_examined, (uint64_t)ts.levels_pushed * g->off[n], "%s %s: ... every edge once per iteration",
       kind_name(backend), name);
    /* Quiescent first: the drain above waited for the producer's items,
     * and a search's last batch may still be completing after its wait
     * returned (its emitted edges are counted before its outcomes). */
    ok(mkrt_quiesce(rt, MKRT_TIMEOUT_INFINITE) == MKRT_OK && accounted(rt), "%s %s: every item accounted for",
       kind_name(backend), name);
    for (int i = 0; i < JOBS; i++)
        mkrt_traversal_close(jobs[i].t, NULL);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
    free(labels);
    free(depth);
    free(dist);
    free(ranks);
    free(level);
}

/* The defaults (damping 0.85, tolerance 1e-4, 20 iterations): at most 20
 * iterations, and within the error an iteration's change of 1e-4 bounds
 * (d / (1 - d) * 1e-4, twice for the in-place iteration's slack). */
static void pagerank_defaults(const test_graph *g)
{
    mkrt_traversal *t;
    mkrt_runtime *rt = with_graph(MKRT_BACKEND_CPU, g, &t);
    mkrt_error err;
    double *got = malloc(g->v * sizeof *got), *want = malloc(g->v * sizeof *want);
    ref_pr(g, 0.85, want);
    uint32_t iters = 0;
    is(mkrt_traversal_start(t, 0, &err), MKRT_OK, "defaults: start");
    is(mkrt_traversal_wait(t, MKRT_TIMEOUT_INFINITE), MKRT_OK, "defaults: finishes");
    is(mkrt_traversal_read_ranks(t, 0, g->v, got, &iters, &err), MKRT_OK, "defaults: read");
    ok(iters >= 2 && iters <= 20, "defaults: %u iterations (at most 20)", iters);
    const double bound = 2 * 0.85 / 0.15 * 1e-4, dist = l1(got, want, g->v);
    ok(dist <= bound, "defaults: L1 distance %.3g from the fixed point (bound %.3g)", dist, bound);
    /* Damping 0.5: a different fixed point, found. */
    mkrt_traversal *h;
    mkrt_traversal_desc dh = {MKRT_TRAVERSAL_PAGERANK, true};
    if (mkrt_traversal_open(rt, &dh, &h, &err) != MKRT_OK)
        bail_out("open: %s", err.message);
    ref_pr(g, 0.5, want);
    const mkrt_pagerank_params half = {0.5, 1e-10, 500};
    is(mkrt_traversal_start_pagerank(h, &half, &err), MKRT_OK, "damping 0.5: start");
    is(mkrt_traversal_wait(h, MKRT_TIMEOUT_INFINITE), MKRT_OK, "damping 0.5: finishes");
    mkrt_traversal_read_ranks(h, 0, g->v, got, NULL, NULL);
    ok(l1(got, want, g->v) <= 1e-6, "damping 0.5: within 1e-6 L1 of its own fixed point (%.2g)", l1(got, want, g->v));
    /* A part read matches the whole. */
    double part[3];
    is(mkrt_traversal_read_ranks(h, 5, 3, part, NULL, &err), MKRT_OK, "read ranks 5..7");
    ok(part[0] == got[5] && part[2] == got[7], "... the same scores as the whole read");
    free(got);
    free(want);
    mkrt_destroy(rt, SEC, NULL);
}

/* The phases of a CC and a PageRank run in the CPU pool's workers (a run
 * of levels, graph/sweep.h): with nothing else to run every phase
 * boundary is crossed at their barrier (levels_pushed counts the phases),
 * none gives way; with DRAIN off (plan_off) every phase ends at the
 * dispatcher instead. The answers are the references' either way. */
static void phases_in_workers(const test_graph *g, uint32_t workers, uint32_t plan_off)
{
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CPU;
    c.workers = workers;
    c.cells = g->v;
    c.plan_off = plan_off;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    mkrt_graph graph = {g->v, g->off, g->dst, NULL};
    if (mkrt_create(&c, &rt, &err) != MKRT_OK || mkrt_graph_register(rt, &graph, &err) != MKRT_OK)
        bail_out("setup: %s", err.message);
    uint64_t *labels = malloc(g->v * sizeof *labels), *want = malloc(g->v * sizeof *want);
    double *got = malloc(g->v * sizeof *got), *fixed = malloc(g->v * sizeof *fixed);
    if (labels == NULL || want == NULL || got == NULL || fixed == NULL)
        bail_out("out of memory");
    ref_cc(g, want);
    ref_pr(g, 0.85, fixed);
    const mkrt_pagerank_params tight = {0.85, 1e-10, 500};
    for (int k = 0; k < 2; k++) {
        const bool pr = k == 1;
        char what[96];
        snprintf(what, sizeof what, "%s, %u worker%s%s", pr ? "PageRank" : "CC", workers, workers > 1 ? "s" : "",
                 plan_off != 0 ? ", DRAIN off" : "");
        mkrt_traversal *t = NULL;
        mkrt_traversal_desc d = {pr ? MKRT_TRAVERSAL_PAGERANK : MKRT_TRAVERSAL_CC, true};
        mkrt_stats a, b;
        mkrt_traversal_stats ts;
        mkrt_stats_read(rt, &a);
        if (mkrt_traversal_open(rt, &d, &t, &err) != MKRT_OK ||
            (pr ? mkrt_traversal_start_pagerank(t, &tight, &err) : mkrt_traversal_start(t, 0, &err)) != MKRT_OK ||
            mkrt_traversal_wait(t, MKRT_TIMEOUT_INFINITE) != MKRT_OK ||
            (pr ? mkrt_traversal_read_ranks(t, 0, g->v, got, NULL, &err) : mkrt_traversal_read(t, 0, g->v, labels, &err)) !=
                MKRT_OK ||
            mkrt_traversal_stats_read(t, &ts) != MKRT_OK) {
            ok(0, "%s: ran (%s)", what, err.message);
            mkrt_traversal_close(t, NULL);
            continue;
        }
        mkrt_stats_read(rt, &b);
        if (pr) {
            ok(l1(got, fixed, g->v) <= 1e-6, "%s: within 1e-6 L1 of the fixed point (%.2g)", what, l1(got, fixed, g->v));
        } else {
            uint32_t bad = g->v;
            for (uint32_t v = 0; v < g->v && bad == g->v; v++)
                if (labels[v] != want[v])
                    bad = v;
            ok(bad == g->v, "%s: every label union-find's (first wrong: %u)", what, bad);
        }
        const uint64_t phases = ts.levels_pushed, on = b.plan_counts[MKRT_PLAN_N_LEVELS_ON] - a.plan_counts[MKRT_PLAN_N_LEVELS_ON],
                       yields = b.plan_counts[MKRT_PLAN_N_LEVEL_YIELDS] - a.plan_counts[MKRT_PLAN_N_LEVEL_YIELDS];
        if (plan_off == 0)
            ok(phases >= 2 && on == phases - 1 && yields == 0,
               "%s: %llu of %llu phase boundaries crossed at the workers' barrier, %llu runs gave way", what,
               (unsigned long long)on, (unsigned long long)(phases - 1), (unsigned long long)yields);
        else
            ok(phases >= 2 && on == 0 && yields == phases,
               "%s: each of %llu phases given back to the dispatcher (%llu gave way, %llu crossed in the workers)",
               what, (unsigned long long)phases, (unsigned long long)yields, (unsigned long long)on);
        mkrt_traversal_close(t, NULL);
    }
    free(labels);
    free(want);
    free(got);
    free(fixed);
    mkrt_destroy(rt, SEC, NULL);
}

/* The start by degree (graph/sweep.c): on a cycle of k vertices beside k
 * isolated ones it is the fixed point itself (1/n on the cycle, (1 - d)/n
 * on the isolated vertices): one iteration, which changes nothing. From
 * 1/n, or with the cycle's mass not set to its share of the vertices, it
 * would take more than one. On the CPU pool and the simulated device
 * (the same start). */
static void pagerank_start(mkrt_backend_kind kind)
{
    const uint32_t k = 1000, n = 2 * k;
    test_graph g = {n, calloc(n + 1, sizeof(uint64_t)), malloc(2 * k * sizeof(uint32_t)), NULL};
    if (g.off == NULL || g.dst == NULL)
        bail_out("out of memory");
    for (uint32_t v = 0; v < n; v++)
        g.off[v + 1] = g.off[v] + (v < k ? 2 : 0);
    for (uint32_t v = 0; v < k; v++) {
        g.dst[2 * v] = (v + k - 1) % k;
        g.dst[2 * v + 1] = (v + 1) % k;
    }
    mkrt_traversal *t;
    mkrt_runtime *rt = with_graph(kind, &g, &t);
    mkrt_error err;
    double *got = malloc(n * sizeof *got);
    uint32_t iters = 0;
    is(mkrt_traversal_start(t, 0, &err), MKRT_OK, "%s start: PageRank on a cycle and isolated vertices",
       kind_name(kind));
    is(mkrt_traversal_wait(t, MKRT_TIMEOUT_INFINITE), MKRT_OK, "%s start: finishes", kind_name(kind));
    mkrt_traversal_read_ranks(t, 0, n, got, &iters, NULL);
    is(iters, 1, "%s start: one iteration (the start by degree is the fixed point)", kind_name(kind));
    double worst = 0;
    for (uint32_t v = 0; v < n; v++)
        worst = fmax(worst, fabs(got[v] - (v < k ? 1.0 : 0.15) / n));
    ok(worst < 1e-6 / n, "%s start: scores 1/n on the cycle, 0.15/n alone (worst off by %.2g; float contributions)",
       kind_name(kind), worst);
    free(got);
    mkrt_destroy(rt, SEC, NULL);
    test_graph_free(&g);
}

static void bad_input(const test_graph *g)
{
    mkrt_runtime *rt = with_graph(MKRT_BACKEND_CPU, g, NULL);
    mkrt_error err;
    mkrt_traversal *t = NULL;
    mkrt_traversal_desc bogus = {(mkrt_traversal_kind)5, true};
    is(mkrt_traversal_open(rt, &bogus, &t, &err), MKRT_EINVAL, "open: kind 5");
    like(err.message, "kind 5 is not a traversal. Fix:", "... named, with a fix");
    mkrt_traversal_desc pr_dir = {MKRT_TRAVERSAL_PAGERANK, false};
    is(mkrt_traversal_open(rt, &pr_dir, &t, &err), MKRT_EINVAL, "open: PageRank on a graph not symmetric");
    like(err.message, "needs a symmetric graph", "... says why");
    like(err.message, "Fix: register both directions", "... and what to do");
    ok(t == NULL, "... and leaves no traversal");

    mkrt_traversal *cc = NULL, *pr = NULL, *bfs = NULL;
    mkrt_traversal_desc dc = {MKRT_TRAVERSAL_CC, true}, dp = {MKRT_TRAVERSAL_PAGERANK, true},
                        db = {MKRT_TRAVERSAL_BFS, true};
    if (mkrt_traversal_open(rt, &dc, &cc, &err) != MKRT_OK || mkrt_traversal_open(rt, &dp, &pr, &err) != MKRT_OK ||
        mkrt_traversal_open(rt, &db, &bfs, &err) != MKRT_OK)
        bail_out("open: %s", err.message);
    uint64_t out[4];
    double ranks[4];
    uint32_t par[4];
    is(mkrt_traversal_read(cc, 0, 4, out, &err), MKRT_ESTATE, "CC: read before any start");
    like(err.message, "never started. Fix:", "... says so, with a fix");
    is(mkrt_traversal_read_ranks(pr, 0, 4, ranks, NULL, &err), MKRT_ESTATE, "PageRank: read before any start");
    mkrt_pagerank_params bad = {1.5, 0, 0};
    is(mkrt_traversal_start_pagerank(pr, &bad, &err), MKRT_EINVAL, "start_pagerank: damping 1.5");
    like(err.message, "damping 1.5 is not in (0, 1). Fix:", "... named, with a fix");
    bad.damping = -0.2;
    is(mkrt_traversal_start_pagerank(pr, &bad, &err), MKRT_EINVAL, "start_pagerank: damping -0.2");
    bad = (mkrt_pagerank_params){0, -1e-3, 0};
    is(mkrt_traversal_start_pagerank(pr, &bad, &err), MKRT_EINVAL, "start_pagerank: tolerance -0.001");
    like(err.message, "tolerance -0.001 is negative", "... named");
    bad.tolerance = NAN;
    is(mkrt_traversal_start_pagerank(pr, &bad, &err), MKRT_EINVAL, "start_pagerank: tolerance NaN");
    like(err.message, "Fix: a positive L1 change", "... with a fix");
    is(mkrt_traversal_start_pagerank(NULL, NULL, &err), MKRT_EINVAL, "start_pagerank: NULL traversal");
    like(err.message, "NULL traversal. Fix:", "... with a fix");
    is(mkrt_traversal_start_pagerank(cc, NULL, &err), MKRT_ENOTSUP, "start_pagerank of a CC");
    like(err.message, "not a PageRank. Fix:", "... with a fix");
    is(mkrt_traversal_read_ranks(pr, 0, 4, ranks, NULL, &err), MKRT_ESTATE, "... none of them started a run");
    is(mkrt_traversal_start(cc, 5, &err), MKRT_EINVAL, "CC: start with root 5");
    like(err.message, "has no root, but got root 5. Fix: start it with root 0", "... says why and what to do");
    is(mkrt_traversal_start(pr, g->v + 3, &err), MKRT_EINVAL, "PageRank: start with a root past the graph");
    like(err.message, "PageRank traversal covers the whole graph", "... named");
    /* Held: the runs cannot finish. */
    mkrt__runtime_hold(rt, true);
    is(mkrt_traversal_start(cc, 0, &err), MKRT_OK, "CC: start while the dispatcher is held");
    is(mkrt_traversal_start(pr, 0, &err), MKRT_OK, "PageRank: start while held");
    is(mkrt_traversal_wait(cc, 0), MKRT_ETIMEDOUT, "CC: a poll times out");
    is(mkrt_traversal_start(cc, 0, &err), MKRT_ESTATE, "CC: start again while it runs");
    is(mkrt_traversal_read(cc, 0, 4, out, &err), MKRT_ESTATE, "CC: read while it runs");
    like(err.message, "still running", "... says so");
    is(mkrt_traversal_read_ranks(pr, 0, 4, ranks, NULL, &err), MKRT_ESTATE, "PageRank: read while it runs");
    is(mkrt_traversal_close(pr, &err), MKRT_ESTATE, "PageRank: close while it runs");
    mkrt__runtime_hold(rt, false);
    is(mkrt_traversal_wait(cc, MKRT_TIMEOUT_INFINITE), MKRT_OK, "CC: released, finishes");
    is(mkrt_traversal_wait(pr, MKRT_TIMEOUT_INFINITE), MKRT_OK, "PageRank: released, finishes");
    /* Wrong kind for a read. */
    is(mkrt_traversal_read_ranks(cc, 0, 4, ranks, NULL, &err), MKRT_ENOTSUP, "read_ranks of a CC");
    like(err.message, "has no scores. Fix: read it with mkrt_traversal_read", "... points at the right call");
    is(mkrt_traversal_read(pr, 0, 4, out, &err), MKRT_ENOTSUP, "read of a PageRank");
    like(err.message, "keeps scores (doubles), not integers. Fix: read it with mkrt_traversal_read_ranks",
         "... points at read_ranks");
    is(mkrt_traversal_parents(cc, 0, 4, par, &err), MKRT_ENOTSUP, "parents of a CC");
    like(err.message, "keeps no tree. Fix:", "... with a fix");
    is(mkrt_traversal_parents(pr, 0, 4, par, &err), MKRT_ENOTSUP, "parents of a PageRank");
    like(err.message, "mkrt_traversal_read_ranks", "... points at read_ranks");
    is(mkrt_traversal_start(bfs, 0, &err), MKRT_OK, "a BFS");
    mkrt_traversal_wait(bfs, MKRT_TIMEOUT_INFINITE);
    is(mkrt_traversal_read_ranks(bfs, 0, 4, ranks, NULL, &err), MKRT_ENOTSUP, "read_ranks of a BFS");
    like(err.message, "BFS traversal has no scores", "... names the kind");
    /* NULLs and ranges. */
    is(mkrt_traversal_read_ranks(NULL, 0, 4, ranks, NULL, &err), MKRT_EINVAL, "read_ranks: NULL traversal");
    like(err.message, "NULL traversal. Fix:", "... with a fix");
    is(mkrt_traversal_read_ranks(pr, 0, 4, NULL, NULL, &err), MKRT_EINVAL, "read_ranks: NULL out");
    is(mkrt_traversal_read_ranks(pr, g->v - 2, 4, ranks, NULL, &err), MKRT_EINVAL, "read_ranks past the graph");
    like(err.message, "Fix: read within", "... with a fix");
    is(mkrt_traversal_read_ranks(pr, g->v + 1, 0, ranks, NULL, &err), MKRT_EINVAL, "read_ranks from past the graph");
    is(mkrt_traversal_read_ranks(pr, 0, 0, NULL, NULL, &err), MKRT_OK, "read_ranks of nothing");
    is(mkrt_traversal_read(cc, g->v - 1, 2, out, &err), MKRT_EINVAL, "CC: read past the graph");
    is(mkrt_traversal_read(cc, 0, 1, out, &err), MKRT_OK, "CC: read vertex 0");
    is(out[0], 0, "... labelled 0 (the smallest vertex of its component)");
    /* Reuse across kinds: a closed BFS's lane becomes a PageRank's. */
    is(mkrt_traversal_close(bfs, &err), MKRT_OK, "close the BFS");
    mkrt_traversal *again = NULL;
    is(mkrt_traversal_open(rt, &dp, &again, &err), MKRT_OK, "open a PageRank");
    ok(again == bfs, "... on the closed BFS's memory");
    is(mkrt_traversal_start(again, 0, &err), MKRT_OK, "... starts");
    is(mkrt_traversal_wait(again, MKRT_TIMEOUT_INFINITE), MKRT_OK, "... finishes");
    double a[4], b[4];
    mkrt_traversal_read_ranks(again, 0, 4, a, NULL, NULL);
    mkrt_traversal_read_ranks(pr, 0, 4, b, NULL, NULL);
    ok(fabs(a[0] - b[0]) < 1e-4 && a[0] > 0, "... with the other PageRank's scores (%g, %g)", a[0], b[0]);
    is(mkrt_traversal_close(again, &err), MKRT_OK, "close it");
    is(mkrt_traversal_open(rt, &db, &again, &err), MKRT_OK, "and back to a BFS on the same memory");
    is(mkrt_traversal_start(again, 1, &err), MKRT_OK, "... from 1");
    is(mkrt_traversal_wait(again, MKRT_TIMEOUT_INFINITE), MKRT_OK, "... finishes");
    is(mkrt_traversal_read(again, 1, 1, out, &err), MKRT_OK, "... reads");
    is(out[0], 0, "... the root at depth 0");
    mkrt_destroy(rt, SEC, NULL);
}

/* mkrt_destroy with a run going on: no hang, no leak. */
static void destroy_while_running(const test_graph *g)
{
    mkrt_traversal *t;
    mkrt_runtime *rt = with_graph(MKRT_BACKEND_CPU, g, &t);
    mkrt_error err;
    const mkrt_pagerank_params forever = {0, 1e-300, 100000};
    is(mkrt_traversal_start_pagerank(t, &forever, &err), MKRT_OK, "a PageRank of 100000 iterations starts");
    /* The runtime's drain does not wait for traversals: destroy stops
     * the run between two of its rounds (ASan: nothing leaks). */
    mkrt_status st = mkrt_destroy(rt, 0, NULL);
    ok(st == MKRT_OK || st == MKRT_ETIMEDOUT, "destroy during the run returns (%d) and frees it", (int)st);
}

int main(void)
{
    test_graph small = parts_graph(1500, 5000, 3, 11);
    test_graph big = parts_graph(40000, 160000, 4, 5);
    test_graph one = test_graph_random(5000, 30000, 3);
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        at_once(kinds[k], &small, "3 parts");
        at_once(kinds[k], &big, "4 parts, 40000 vertices");
    }
    at_once(MKRT_BACKEND_CPU, &one, "one part");
    pagerank_defaults(&big);
    phases_in_workers(&big, 2, 0);
    phases_in_workers(&big, 1, 0);
    phases_in_workers(&small, 2, MKRT_PLAN_DRAIN);
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
        pagerank_start(kinds[k]);
    bad_input(&small);
    destroy_while_running(&big);
    test_graph_free(&small);
    test_graph_free(&big);
    test_graph_free(&one);
    return done_testing();
}
