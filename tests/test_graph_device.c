/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_graph_device.c - traversals on the device (issue 14): a batch
 * with RELAX runs its whole frontier on the megakernel, level after level,
 * as one batch. On the simulated device and on the CUDA path through the
 * stand-in driver (tests/fakes/fake_libcuda.c), with the cells in mapped
 * host memory and in device memory: SSSP and unit-weight BFS from several
 * roots equal the CPU pool's and Dijkstra's; one batch per traversal, its
 * levels counted as layers, its edges as emitted items, through the
 * device's traversal job engine (a RELAX job: issue 36); RELAX batches
 * and public traversals interleaved; the watchdog lets a long
 * traversal run (levels are progress) and still catches a hung level;
 * batches the device cannot run (a C user op beside RELAX) stay on the CPU
 * pool. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/backend/megakernel_backend.h"
#include "../src/cuda/cuda_loader.h"
#include "../src/runtime/test_hooks.h"
#include "mkrt/mkrt.h"
#include "graph_fixture.h"
#include "fake_cuda.h"
#include "tap.h"

#define SEC 10000000000ull

typedef struct setup {
    mkrt_backend_kind kind;
    bool device_state;
    uint32_t watchdog_ms;   /* 0: the default */
    uint32_t idle_us;       /* 0: the default; UINT32_MAX: never leave */
    mkrt_error_fn on_error;
    void *error_ctx;
} setup;

static const char *name_of(const setup *s)
{
    if (s->kind == MKRT_BACKEND_CPU)
        return "cpu";
    if (s->kind == MKRT_BACKEND_SIM)
        return "sim";
    return s->device_state ? "cuda (device state)" : "cuda";
}

/* A runtime with the graph registered; cell g->v is the zero source. */
static mkrt_runtime *start(const setup *s, const test_graph *g, bool weighted)
{
    mkrt_config c = mkrt_config_default();
    c.backend = s->kind;
    c.workers = 2;
    c.cells = g->v + 1;
    c.append_log_capacity = 16;
    c.cuda_device_state = s->device_state;
    if (s->watchdog_ms)
        c.watchdog_ms = s->watchdog_ms;
    if (s->idle_us)
        c.device_idle_us = s->idle_us == UINT32_MAX ? 0 : s->idle_us;
    c.on_error = s->on_error;
    c.error_ctx = s->error_ctx;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK)
        bail_out("mkrt_create (%s): %s", name_of(s), err.message);
    mkrt_graph mg = {g->v, g->off, g->dst, weighted ? g->w : NULL};
    if (mkrt_graph_register(rt, &mg, &err) != MKRT_OK)
        bail_out("mkrt_graph_register: %s", err.message);
    return rt;
}

static mkrt_stats stats(mkrt_runtime *rt)
{
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    return s;
}

static bool accounted(mkrt_runtime *rt)
{
    mkrt_stats s = stats(rt);
    return s.published + s.emitted == s.executed + s.pruned + s.failed;
}

/* One SSSP from root: every vertex unreached, the source cell 0, one
 * RELAX (source -> root, 0), quiescence; the distances in dist. */
static mkrt_status sssp(mkrt_runtime *rt, mkrt_producer *p, const test_graph *g, uint32_t root, uint64_t *dist)
{
    for (uint32_t v = 0; v < g->v; v++)
        mkrt_cell_write(rt, v, UINT64_MAX);
    mkrt_cell_write(rt, g->v, 0);
    mkrt_item r = {MKRT_OP_RELAX, g->v, root, 0};
    if (mkrt_publish(p, &r, 1, MKRT_TIMEOUT_INFINITE, NULL) != MKRT_OK)
        bail_out("publish failed");
    mkrt_status st = mkrt_quiesce(rt, SEC);
    mkrt_cells_read(rt, 0, g->v, dist);
    return st;
}

static uint64_t degree_sum(const test_graph *g, const uint64_t *dist)
{
    uint64_t s = 0;
    for (uint32_t v = 0; v < g->v; v++)
        s += dist[v] != UINT64_MAX ? g->off[v + 1] - g->off[v] : 0;
    return s;
}

/* SSSP and unit-weight BFS from several roots: the CPU pool's and
 * Dijkstra's distances, one device batch each. */
static void traversals(const setup *s, const test_graph *g, bool weighted)
{
    const char *k = name_of(s);
    mkrt_runtime *rt = start(s, g, weighted);
    setup cpu_setup = {MKRT_BACKEND_CPU, false, 0, 0, NULL, NULL};
    mkrt_runtime *cpu = start(&cpu_setup, g, weighted);
    like(mkrt_backend_describe(rt), "on the device: RELAX traversals run there",
         "%s: the registered graph is on the device", k);
    mkrt_producer *p = mkrt_producer_open(rt, NULL), *pc = mkrt_producer_open(cpu, NULL);
    uint64_t *dist = malloc(g->v * sizeof *dist), *want = malloc(g->v * sizeof *want),
             *on_cpu = malloc(g->v * sizeof *on_cpu);
    const uint32_t roots[] = {0, 1, g->v / 2, g->v - 1 /* isolated */};
    for (size_t r = 0; r < sizeof roots / sizeof *roots; r++) {
        mkrt_stats before = stats(rt);
        is(sssp(rt, p, g, roots[r], dist), MKRT_OK, "%s: quiescent after a traversal from %u", k, roots[r]);
        mkrt_stats after = stats(rt);
        is(sssp(cpu, pc, g, roots[r], on_cpu), MKRT_OK, "cpu: quiescent");
        test_graph_ref_sssp(g, roots[r], weighted ? g->w : NULL, want);
        ok(memcmp(dist, want, g->v * sizeof *dist) == 0 && memcmp(dist, on_cpu, g->v * sizeof *dist) == 0,
           "%s: %s from %u equals Dijkstra and the CPU pool", k, weighted ? "SSSP" : "BFS", roots[r]);
        /* The RELAX's batch (and the cell writes, which are not batches). */
        is(after.batches - before.batches, 1, "%s: ... in one batch", k);
        is(after.device_batches - before.device_batches, 1, "%s: ... on the device", k);
        uint64_t levels = after.layers - before.layers - 1;
        ok(after.global_barriers - before.global_barriers == levels && (levels > 0) == (g->off[roots[r] + 1] > g->off[roots[r]]),
           "%s: ... its %llu levels counted as layers after a barrier each", k, (unsigned long long)levels);
        uint64_t emitted = after.emitted - before.emitted;
        ok(emitted >= degree_sum(g, dist) && after.executed - before.executed == 1 + emitted,
           "%s: ... %llu edge items emitted and run (each reached vertex expanded at least once)", k,
           (unsigned long long)emitted);
    }
    ok(accounted(rt), "%s: published + emitted = executed + pruned + failed", k);
    is(stats(rt).device_failures, 0, "%s: no device failure", k);
    free(dist);
    free(want);
    free(on_cpu);
    mkrt_producer_close(p);
    mkrt_producer_close(pc);
    is(mkrt_destroy(rt, SEC, NULL), MKRT_OK, "%s: destroyed", k);
    mkrt_destroy(cpu, SEC, NULL);
}

/* Unit weights, level-synchronous on the device too: every reached vertex
 * is lowered exactly once (changed counts it), and levels = eccentricity. */
static void lowered_once(const setup *s, const test_graph *g)
{
    const char *k = name_of(s);
    mkrt_runtime *rt = start(s, g, false);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    uint64_t *dist = malloc(g->v * sizeof *dist);
    mkrt_stats before = stats(rt);
    sssp(rt, p, g, 3, dist);
    mkrt_stats after = stats(rt);
    uint64_t reached = 0, depth = 0;
    for (uint32_t v = 0; v < g->v; v++)
        if (dist[v] != UINT64_MAX) {
            reached++;
            depth = dist[v] > depth ? dist[v] : depth;
        }
    is(after.changed - before.changed, reached, "%s: unit-weight RELAX lowered each of the %llu reached vertices once",
       k, (unsigned long long)reached);
    /* Level d expands the vertices at depth d - 1; the last level (depth) finds nothing new. */
    is(after.layers - before.layers, 1 + depth + 1, "%s: ... in %llu levels after the RELAX's layer", k,
       (unsigned long long)(depth + 1));
    free(dist);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

/* RELAX batches run as jobs of the device's traversal job engine (issue
 * 36, protocol.h "RELAX batches"): the finished batch carries one job, a
 * RELAX job, whose record holds the batch's levels and edges exactly (the
 * old second level loop left no job record). A root without edges: the
 * RELAX job runs no level. */
static void relax_job_record(const setup *s, const test_graph *g)
{
    const char *k = name_of(s);
    mkrt_runtime *rt = start(s, g, true);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    uint64_t *dist = malloc(g->v * sizeof *dist);
    const uint32_t roots[] = {1, g->v - 1 /* isolated */};
    for (size_t r = 0; r < sizeof roots / sizeof *roots; r++) {
        mkrt_stats before = stats(rt);
        sssp(rt, p, g, roots[r], dist);
        mkrt_stats after = stats(rt);
        mkrt__mk_job rec;
        const uint32_t n = mkrt__megakernel_last_jobs(mkrt__test_device(rt), &rec);
        const uint64_t levels = after.layers - before.layers - 1, emitted = after.emitted - before.emitted;
        ok(n == 1 && rec.kind == MKRT_MK_JOB_RELAX, "%s: the RELAX batch from %u was one RELAX job of the job engine "
           "(%u jobs, kind %u)", k, roots[r], n, rec.kind);
        ok(rec.levels_pushed == levels && rec.levels_pulled == 0 && rec.edges == emitted &&
               (levels == 0) == (g->off[roots[r] + 1] == g->off[roots[r]]),
           "%s: ... its record: %llu levels, %llu edges, the batch's own", k, (unsigned long long)rec.levels_pushed,
           (unsigned long long)rec.edges);
    }
    free(dist);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

/* Several RELAX batches and public traversals (job rounds) at once on
 * one device: the RELAX job's cells and the public jobs' own arrays stay
 * apart, and every result is right. Two RELAX batches per round, from
 * two roots (the cells: the two-source distances), around a public SSSP
 * and BFS started between them. */
static void interleaved(const setup *s, const test_graph *g)
{
    const char *k = name_of(s);
    mkrt_runtime *rt = start(s, g, true);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    const uint32_t n = g->v;
    uint64_t *cells = malloc(n * sizeof *cells), *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b),
             *got = malloc(n * sizeof *got);
    uint32_t *level = malloc(n * sizeof *level);
    int right = 0, rounds = 3;
    mkrt_stats before = stats(rt);
    for (int round = 0; round < rounds; round++) {
        const uint32_t r1 = (uint32_t)(17 * round + 1) % n, r2 = (uint32_t)(31 * round + 400) % n;
        const uint32_t ts = (uint32_t)(7 * round + 3) % n, tb = (uint32_t)(11 * round + 5) % n;
        for (uint32_t v = 0; v < n; v++)
            mkrt_cell_write(rt, v, UINT64_MAX);
        mkrt_cell_write(rt, n, 0);
        mkrt_item r[2] = {{MKRT_OP_RELAX, n, r1, 0}, {MKRT_OP_RELAX, n, r2, 0}};
        mkrt_publish(p, &r[0], 1, MKRT_TIMEOUT_INFINITE, NULL);
        mkrt_traversal *t[2] = {NULL, NULL};
        const mkrt_traversal_desc d[2] = {{MKRT_TRAVERSAL_SSSP, false}, {MKRT_TRAVERSAL_BFS, false}};
        bool started = true;
        for (int i = 0; i < 2; i++)
            started &= mkrt_traversal_open(rt, &d[i], &t[i], NULL) == MKRT_OK &&
                        mkrt_traversal_start(t[i], i == 0 ? ts : tb, NULL) == MKRT_OK;
        mkrt_publish(p, &r[1], 1, MKRT_TIMEOUT_INFINITE, NULL);
        bool good = started && mkrt_quiesce(rt, SEC) == MKRT_OK;
        for (int i = 0; i < 2; i++)
            good = good && mkrt_traversal_wait(t[i], SEC) == MKRT_OK;
        /* The cells: the distances from r1 or r2, whichever is nearer. */
        mkrt_cells_read(rt, 0, n, cells);
        test_graph_ref_sssp(g, r1, g->w, a);
        test_graph_ref_sssp(g, r2, g->w, b);
        for (uint32_t v = 0; good && v < n; v++)
            good = cells[v] == (a[v] < b[v] ? a[v] : b[v]);
        /* The public SSSP: Dijkstra's; the public BFS: the depths. */
        test_graph_ref_sssp(g, ts, g->w, a);
        good = good && mkrt_traversal_read(t[0], 0, n, got, NULL) == MKRT_OK && memcmp(got, a, n * sizeof *a) == 0;
        test_graph_ref_bfs(g, tb, level);
        good = good && mkrt_traversal_read(t[1], 0, n, got, NULL) == MKRT_OK;
        for (uint32_t v = 0; good && v < n; v++)
            good = got[v] == (level[v] == UINT32_MAX ? UINT64_MAX : level[v]);
        for (int i = 0; i < 2; i++)
            if (t[i] != NULL)
                mkrt_traversal_close(t[i], NULL);
        right += good;
    }
    mkrt_stats after = stats(rt);
    is(right, rounds, "%s: %d rounds of two RELAX batches around a public SSSP and BFS: every result right", k, rounds);
    const uint64_t on_device = after.device_batches - before.device_batches;
    ok(after.batches - before.batches == on_device && on_device >= 2u * rounds && after.device_failures == 0,
       "%s: ... every batch on the device (%llu: RELAX batches and job rounds), no failure", k,
       (unsigned long long)on_device);
    ok(accounted(rt), "%s: ... published + emitted = executed + pruned + failed", k);
    free(cells);
    free(a);
    free(b);
    free(got);
    free(level);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

/* A batch of update built-ins with the RELAX: the device runs it all, as
 * the CPU pool does. */
static void mixed_batch(const setup *s, const test_graph *g)
{
    const char *k = name_of(s);
    setup cpu_setup = {MKRT_BACKEND_CPU, false, 0, 0, NULL, NULL};
    const setup *both[2] = {s, &cpu_setup};
    uint64_t got[2][64];
    for (int i = 0; i < 2; i++) {
        mkrt_runtime *rt = start(both[i], g, true);
        mkrt_producer *p = mkrt_producer_open(rt, NULL);
        for (uint32_t v = 0; v < g->v; v++)
            mkrt_cell_write(rt, v, v < 40 ? UINT64_MAX : 5);
        mkrt_cell_write(rt, g->v, 0);
        mkrt__runtime_hold(rt, true);
        mkrt_item items[] = {{MKRT_OP_RELAX, g->v, 2, 0}, {MKRT_OP_MIN, g->v, 50, 1}, {MKRT_OP_OR, g->v, 51, 8},
                             {MKRT_OP_ACC, 0, 52, 3},       {MKRT_OP_ACC, 0, 52, 3},   {MKRT_OP_RELAX, g->v, 9, 7}};
        mkrt_publish(p, items, sizeof items / sizeof *items, MKRT_TIMEOUT_INFINITE, NULL);
        mkrt__runtime_hold(rt, false);
        is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: quiescent after a mixed batch", name_of(both[i]));
        mkrt_cells_read(rt, 0, 64, got[i]);
        if (i == 0)
            is(stats(rt).batches, 1, "%s: RELAX, MIN, OR and ACC items and the traversal: one device batch", k);
        mkrt_producer_close(p);
        mkrt_destroy(rt, SEC, NULL);
    }
    ok(memcmp(got[0], got[1], sizeof got[0]) == 0, "%s: ... with the CPU pool's cells", k);
}

/* A C user op beside RELAX: the device refuses the batch, the CPU pool
 * runs it and its frontier; the results are right all the same. */
static mkrt_status plus_one(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    ctx->cells[it->out] += 1;
    return MKRT_OK;
}

static void refused_batch(const setup *s, const test_graph *g)
{
    const char *k = name_of(s);
    mkrt_runtime *rt = start(s, g, true);
    mkrt_op_desc d = {.fn = plus_one, .name = "plus_one"};
    if (mkrt_op_register(rt, 16, &d, NULL) != MKRT_OK)
        bail_out("mkrt_op_register");
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    for (uint32_t v = 0; v < g->v; v++)
        mkrt_cell_write(rt, v, UINT64_MAX);
    mkrt_cell_write(rt, g->v, 0);
    mkrt__runtime_hold(rt, true);
    mkrt_item items[] = {{MKRT_OP_RELAX, g->v, 0, 0}, {16, g->v, g->v, 0}};
    mkrt_publish(p, items, 2, MKRT_TIMEOUT_INFINITE, NULL);
    mkrt__runtime_hold(rt, false);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: quiescent", k);
    uint64_t *dist = malloc(g->v * sizeof *dist), *want = malloc(g->v * sizeof *want);
    mkrt_cells_read(rt, 0, g->v, dist);
    test_graph_ref_sssp(g, 0, g->w, want);
    mkrt_stats st = stats(rt);
    ok(memcmp(dist, want, g->v * sizeof *dist) == 0 && st.device_batches == 0 && st.batches > 1,
       "%s: RELAX beside a C user op ran on the CPU pool, in frontier rounds (%llu batches), right", k,
       (unsigned long long)st.batches);
    free(dist);
    free(want);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

/* The watchdog: a traversal longer than it (each level naps) completes;
 * a hung level trips it, the items fail and the CPU pool takes over. */
typedef struct fails {
    uint32_t n;
    mkrt_status why;
} fails;

static void note_fail(void *ctx, const mkrt_item *item, mkrt_status why, const char *message)
{
    (void)item;
    (void)message;
    fails *f = ctx;
    f->n++;
    f->why = why;
}

static void watchdog(void)
{
    test_graph g = test_graph_path(60);
    /* 100 ms, not less: a loaded machine under TSan can stall one level
     * for tens of ms, which is a real missing sign of life. */
    setup s = {MKRT_BACKEND_SIM, false, 100, 0, NULL, NULL};
    mkrt_runtime *rt = start(&s, &g, false);
    mkrt__megakernel_level_nap(mkrt__test_device(rt), 5000000); /* 59 levels of 5 ms: >= 295 ms */
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    uint64_t dist[60];
    is(sssp(rt, p, &g, 0, dist), MKRT_OK, "sim: a traversal of 59 levels of 5 ms under a 100 ms watchdog completes");
    bool right = true;
    for (uint32_t v = 0; v < 60; v++)
        right &= dist[v] == v;
    ok(right, "sim: ... right (levels count as progress)");
    is(stats(rt).device_failures, 0, "sim: ... and the watchdog did not trip");
    is(stats(rt).batches, 1, "sim: ... in one batch");
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);

    fails f = {0, MKRT_OK};
    /* Long enough that levels 1-5 finish on a loaded machine before the
     * watchdog calls a slow (not hung) level a hang. */
    s.watchdog_ms = 400;
    s.on_error = note_fail;
    s.error_ctx = &f;
    rt = start(&s, &g, false);
    p = mkrt_producer_open(rt, NULL);
    mkrt__runtime_hold(rt, true);
    mkrt__runtime_device_hang(rt, 1, 1 + 5); /* the RELAX's layer, then hang at level 6 */
    mkrt__runtime_hold(rt, false);
    is(sssp(rt, p, &g, 0, dist), MKRT_OK, "sim: quiescent after a hung level");
    is(stats(rt).device_failures, 1, "sim: the watchdog caught the hung level");
    ok(f.n == 1 && f.why == MKRT_ETIMEDOUT, "sim: ... the RELAX failed with MKRT_ETIMEDOUT (%u failures)", f.n);
    like(mkrt_backend_describe(rt), "watchdog", "sim: ... said in describe");
    matches(mkrt_backend_describe(rt), "at layer [0-9]", "sim: ... with where the blocks stopped");
    ok(dist[5] == 5 && dist[59] == UINT64_MAX, "sim: the levels before the hang ran, none after");
    is(sssp(rt, p, &g, 0, dist), MKRT_OK, "sim: the next traversal runs on the CPU pool");
    right = true;
    for (uint32_t v = 0; v < 60; v++)
        right &= dist[v] == v;
    ok(right, "sim: ... right");
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
    test_graph_free(&g);
}

static int (*fake_live)(void);

/* The stand-in driver's kernel with 5 ms levels (FAKE_CUDA_LEVEL_NAP_US):
 * a traversal longer than the watchdog completes, levels being progress
 * (the words the watchdog reads are in mapped memory either way). */
static void cuda_long_traversal(bool device_state)
{
    test_graph g = test_graph_path(60);
    setup s = {MKRT_BACKEND_CUDA, device_state, 100, 0, NULL, NULL};
    setenv("FAKE_CUDA_LEVEL_NAP_US", "5000", 1);
    mkrt_runtime *rt = start(&s, &g, false);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    uint64_t dist[60];
    const char *k = name_of(&s);
    is(sssp(rt, p, &g, 0, dist), MKRT_OK, "%s: 59 levels of 5 ms under a 100 ms watchdog complete", k);
    bool right = true;
    for (uint32_t v = 0; v < 60; v++)
        right &= dist[v] == v;
    ok(right, "%s: ... right", k);
    ok(stats(rt).device_failures == 0 && stats(rt).device_batches == 1,
       "%s: ... in one device batch, the watchdog quiet", k);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
    unsetenv("FAKE_CUDA_LEVEL_NAP_US");
    test_graph_free(&g);
}

/* The stand-in driver: the graph goes to the device while the kernel is
 * off the GPU (evicted: a kernel that never leaves on its own), and
 * everything is freed at destroy; registering again replaces it. */
static void cuda_graph_copy(const test_graph *g)
{
    setup s = {MKRT_BACKEND_CUDA, true, 0, UINT32_MAX, NULL, NULL};
    mkrt_runtime *rt = start(&s, g, true);
    mkrt_graph mg = {g->v, g->off, g->dst, NULL};
    mkrt_error err;
    is(mkrt_graph_register(rt, &mg, &err), MKRT_OK, "cuda: registering again (unit weights) replaces the graph");
    like(mkrt_backend_describe(rt), "on the device", "cuda: ... on the device, with a resident kernel evicted");
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    uint64_t *dist = malloc(g->v * sizeof *dist), *want = malloc(g->v * sizeof *want);
    sssp(rt, p, g, 1, dist);
    test_graph_ref_sssp(g, 1, NULL, want);
    ok(memcmp(dist, want, g->v * sizeof *dist) == 0, "cuda: ... the device traverses the new graph");
    free(dist);
    free(want);
    mkrt_producer_close(p);
    is(mkrt_destroy(rt, SEC, NULL), MKRT_OK, "cuda: destroyed");
    is(fake_live(), 0, "cuda: the graph's and the frontier's device memory was freed");
}

/* A device without room for the graph: registration succeeds, describe
 * says why the graph is not on the device, RELAX runs on the CPU pool. */
static void cuda_no_room(const test_graph *g)
{
    setup s = {MKRT_BACKEND_CUDA, false, 0, 0, NULL, NULL};
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CUDA;
    c.workers = 2;
    c.cells = g->v + 1;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK)
        bail_out("mkrt_create: %s", err.message);
    setenv("FAKE_CUDA_MAX_ALLOC", "4096", 1); /* the targets need 32000 bytes */
    mkrt_graph mg = {g->v, g->off, g->dst, g->w};
    is(mkrt_graph_register(rt, &mg, &err), MKRT_OK, "cuda: a device without room for the graph: registered all the same");
    unsetenv("FAKE_CUDA_MAX_ALLOC");
    like(mkrt_backend_describe(rt), "the graph is not on the device, RELAX runs on the CPU pool",
         "cuda: ... describe says the graph is not on the device");
    like(mkrt_backend_describe(rt), "cuMemAlloc and copy of the graph failed", "cuda: ... and why");
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    uint64_t *dist = malloc(g->v * sizeof *dist), *want = malloc(g->v * sizeof *want);
    is(sssp(rt, p, g, 0, dist), MKRT_OK, "cuda: quiescent");
    test_graph_ref_sssp(g, 0, g->w, want);
    ok(memcmp(dist, want, g->v * sizeof *dist) == 0 && stats(rt).device_batches == 0,
       "cuda: ... RELAX ran on the CPU pool, right");
    free(dist);
    free(want);
    mkrt_producer_close(p);
    is(mkrt_destroy(rt, SEC, NULL), MKRT_OK, "%s: destroyed", name_of(&s));
    is(fake_live(), 0, "cuda: ... nothing left allocated");
}

/* A graph too big for Dijkstra here: the device against the CPU pool,
 * from a few roots, in one batch each. */
static void big_graph(const setup *s, uint32_t v, uint32_t edges)
{
    const char *k = name_of(s);
    test_graph g = test_graph_random(v, edges, 11);
    setup cpu_setup = {MKRT_BACKEND_CPU, false, 0, 0, NULL, NULL};
    mkrt_runtime *rt = start(s, &g, true), *cpu = start(&cpu_setup, &g, true);
    mkrt_producer *p = mkrt_producer_open(rt, NULL), *pc = mkrt_producer_open(cpu, NULL);
    uint64_t *dist = malloc(v * sizeof *dist), *on_cpu = malloc(v * sizeof *on_cpu);
    for (uint32_t root = 0; root < 3; root++) {
        uint64_t batches = stats(rt).batches;
        sssp(rt, p, &g, root * (v / 3), dist);
        sssp(cpu, pc, &g, root * (v / 3), on_cpu);
        ok(memcmp(dist, on_cpu, v * sizeof *dist) == 0 && stats(rt).batches == batches + 1,
           "%s: SSSP of %u vertices from %u: the CPU pool's distances, in one batch", k, v, root * (v / 3));
    }
    is(stats(rt).device_failures, 0, "%s: no device failure", k);
    free(dist);
    free(on_cpu);
    mkrt_producer_close(p);
    mkrt_producer_close(pc);
    mkrt_destroy(rt, SEC, NULL);
    mkrt_destroy(cpu, SEC, NULL);
    test_graph_free(&g);
}

/* tests/cuda_graph.c: the same on a real GPU (skipped without one). */
#ifndef GRAPH_DEVICE_REAL_GPU
#define GRAPH_DEVICE_REAL_GPU 0
#endif

static int real_gpu(const test_graph *g)
{
    cuda_real_or_skip();
    for (int state = 0; state < 2; state++) {
        const setup cuda = {MKRT_BACKEND_CUDA, state != 0, 0, 0, NULL, NULL};
        traversals(&cuda, g, true);
        traversals(&cuda, g, false);
        lowered_once(&cuda, g);
        relax_job_record(&cuda, g);
        interleaved(&cuda, g);
        mixed_batch(&cuda, g);
        big_graph(&cuda, 1u << 18, 1u << 21);
    }
    return done_testing();
}

int main(int argc, char **argv)
{
    (void)argc;
    test_graph g = test_graph_random(1500, 4000, 7);
    if (GRAPH_DEVICE_REAL_GPU)
        return real_gpu(&g);
    const setup sim = {MKRT_BACKEND_SIM, false, 0, 0, NULL, NULL};
    traversals(&sim, &g, true);
    traversals(&sim, &g, false);
    lowered_once(&sim, &g);
    relax_job_record(&sim, &g);
    interleaved(&sim, &g);
    mixed_batch(&sim, &g);
    refused_batch(&sim, &g);
    watchdog();
    big_graph(&sim, 20000, 80000);

    *(void **)&fake_live = fake_cuda_probe(fake_cuda_open(argv[0]), "fake_cuda_live");
    if (!mkrt__cuda_megakernel_built()) {
        skip(1, "the CUDA megakernel was not built (no nvcc): no CUDA runs");
    } else {
        for (int state = 0; state < 2; state++) {
            const setup cuda = {MKRT_BACKEND_CUDA, state != 0, 0, 0, NULL, NULL};
            traversals(&cuda, &g, true);
            traversals(&cuda, &g, false);
            lowered_once(&cuda, &g);
            relax_job_record(&cuda, &g);
            interleaved(&cuda, &g);
            mixed_batch(&cuda, &g);
            cuda_long_traversal(state != 0);
        }
        cuda_graph_copy(&g);
        cuda_no_room(&g);
    }
    test_graph_free(&g);
    return done_testing();
}
