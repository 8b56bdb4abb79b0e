/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_device_traversal.c - the public traversals on the megakernel
 * (issue 36; graph/device.c, protocol.h "Traversal jobs"): on SIM and
 * through the stand-in CUDA driver, mkrt_traversal_* runs BFS, SSSP, CC
 * and PageRank whole on the device (EXPLAIN: on the device; one batch a
 * run, so no level came back to the host; the stats: BFS levels pulled
 * by Beamer's rule on a symmetric graph), with results
 * equal to a serial reference (BFS depths and a valid tree, Dijkstra's
 * distances) and to the CPU engine (CC labels, PageRank within 1e-5 L1);
 * ten traversals of the four kinds at once, over eight slots; a budget
 * with room for one slot: the traversals run one at a time (the plan in
 * pieces, EXPLAIN's split), still right; a graph over the stand-in's
 * modelled memory (FAKE_CUDA_MEM_TOTAL): refused with the numbers and a
 * Fix, its traversals right on the CPU pool; a budget with the graph but
 * no slot: said so, traversals on the CPU pool; a device that hangs in a
 * job round: the watchdog fails it and the round runs again on the CPU
 * pool, right. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/cuda/cuda_loader.h"
#include "../src/cuda/protocol.h"
#include "../src/runtime/test_hooks.h"
#include "mkrt/mkrt.h"
#include "graph_fixture.h"
#include "fake_cuda.h"
#include "tap.h"

#define SEC 10000000000ull
#define MIB (1ull << 20)

static const char *name_of(mkrt_backend_kind k)
{
    return k == MKRT_BACKEND_CPU ? "cpu" : k == MKRT_BACKEND_SIM ? "sim" : "cuda";
}

static mkrt_runtime *graph_rt(mkrt_backend_kind kind, const test_graph *g, uint64_t budget)
{
    mkrt_config c = mkrt_config_default();
    c.backend = kind;
    c.workers = 2;
    c.cells = g->v;
    c.max_batch = 4096;
    c.append_log_capacity = 16;
    c.device_memory_budget = budget;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK)
        bail_out("mkrt_create (%s): %s", name_of(kind), err.message);
    mkrt_graph mg = {g->v, g->off, g->dst, g->w};
    if (mkrt_graph_register(rt, &mg, &err) != MKRT_OK)
        bail_out("mkrt_graph_register: %s", err.message);
    return rt;
}

static const mkrt_pagerank_params PR = {0.85, 1e-10, 200};

/* One run: a traversal of `kind` opened, started and waited for. */
typedef struct run {
    mkrt_traversal_kind kind;
    uint32_t root;
    mkrt_traversal *t;
} run;

static bool start(mkrt_runtime *rt, run *r)
{
    mkrt_error err;
    mkrt_traversal_desc d = {r->kind, true};
    if (mkrt_traversal_open(rt, &d, &r->t, &err) != MKRT_OK) {
        diag("open: %s", err.message);
        return false;
    }
    mkrt_status st = r->kind == MKRT_TRAVERSAL_PAGERANK ? mkrt_traversal_start_pagerank(r->t, &PR, &err)
                                                        : mkrt_traversal_start(r->t, r->root, &err);
    if (st != MKRT_OK)
        diag("start: %s", err.message);
    return st == MKRT_OK;
}

static bool has_edge(const test_graph *g, uint32_t a, uint32_t b)
{
    for (uint64_t e = g->off[a]; e < g->off[a + 1]; e++)
        if (g->dst[e] == b)
            return true;
    return false;
}

/* r's results against the serial references (BFS, SSSP) or the CPU
 * engine's run of the same (CC, PageRank). */
static bool right(const test_graph *g, mkrt_runtime *cpu, const run *r)
{
    const uint32_t n = g->v;
    bool good = true;
    mkrt_error err;
    if (r->kind == MKRT_TRAVERSAL_BFS) {
        uint32_t *level = malloc(n * sizeof *level), *parent = malloc(n * sizeof *parent);
        uint64_t *depth = malloc(n * sizeof *depth);
        test_graph_ref_bfs(g, r->root, level);
        good = mkrt_traversal_read(r->t, 0, n, depth, &err) == MKRT_OK &&
               mkrt_traversal_parents(r->t, 0, n, parent, &err) == MKRT_OK;
        for (uint32_t v = 0; good && v < n; v++) {
            const uint64_t want = level[v] == UINT32_MAX ? UINT64_MAX : level[v];
            good = depth[v] == want;
            if (good && want != UINT64_MAX && v != r->root)
                good = parent[v] < n && depth[parent[v]] + 1 == depth[v] && has_edge(g, parent[v], v);
            if (!good)
                diag("BFS from %u: vertex %u depth %llu (want %llu), parent %u", r->root, v,
                     (unsigned long long)depth[v], (unsigned long long)want, parent[v]);
        }
        free(level);
        free(parent);
        free(depth);
    } else if (r->kind == MKRT_TRAVERSAL_SSSP) {
        uint64_t *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
        test_graph_ref_sssp(g, r->root, g->w, want);
        good = mkrt_traversal_read(r->t, 0, n, got, &err) == MKRT_OK && memcmp(want, got, n * sizeof *got) == 0;
        free(want);
        free(got);
    } else {
        run c = {r->kind, 0, NULL};
        good = start(cpu, &c) && mkrt_traversal_wait(c.t, SEC) == MKRT_OK;
        if (r->kind == MKRT_TRAVERSAL_CC) {
            uint64_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
            good = good && mkrt_traversal_read(r->t, 0, n, a, &err) == MKRT_OK &&
                   mkrt_traversal_read(c.t, 0, n, b, &err) == MKRT_OK && memcmp(a, b, n * sizeof *a) == 0;
            free(a);
            free(b);
        } else {
            double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), l1 = 0;
            uint32_t ia = 0, ib = 0;
            good = good && mkrt_traversal_read_ranks(r->t, 0, n, a, &ia, &err) == MKRT_OK &&
                   mkrt_traversal_read_ranks(c.t, 0, n, b, &ib, &err) == MKRT_OK;
            for (uint32_t v = 0; v < n; v++)
                l1 += fabs(a[v] - b[v]);
            if (!(good && l1 < 1e-5 && ia > 1 && ia < PR.max_iterations))
                diag("PageRank: L1 %.3g from the CPU engine's, %u iterations (CPU %u)", l1, ia, ib);
            good = good && l1 < 1e-5 && ia > 1 && ia < PR.max_iterations;
            free(a);
            free(b);
        }
        if (c.t != NULL)
            mkrt_traversal_close(c.t, NULL);
    }
    return good;
}

/* The last EXPLAIN records: whether one ran on the device, the most items
 * one on the device held, and the most traversals that waited. */
static void explain(mkrt_runtime *rt, bool *on_device, uint64_t *most, uint32_t *split, uint64_t *resident)
{
    mkrt_plan_record rec[64];
    size_t got = mkrt_plan_explain(rt, rec, 64);
    *on_device = false;
    *most = 0;
    *split = 0;
    *resident = 0;
    for (size_t i = 0; i < got; i++)
        if (rec[i].on_device) {
            *on_device = true;
            *most = rec[i].items > *most ? rec[i].items : *most;
            *split = rec[i].split_layers > *split ? rec[i].split_layers : *split;
            *resident = rec[i].resident_bytes;
        }
}

static void each_kind(mkrt_backend_kind kind, const test_graph *g, mkrt_runtime *cpu)
{
    const char *k = name_of(kind);
    static const mkrt_traversal_kind kinds[] = {MKRT_TRAVERSAL_BFS, MKRT_TRAVERSAL_SSSP, MKRT_TRAVERSAL_CC,
                                                MKRT_TRAVERSAL_PAGERANK};
    static const char *const names[] = {"BFS", "SSSP", "CC", "PageRank"};
    mkrt_runtime *rt = graph_rt(kind, g, 0);
    like(mkrt_backend_describe(rt), "public traversals, 8 at once", "%s: the device takes public traversals, 8 at once", k);
    for (int i = 0; i < 4; i++) {
        run r = {kinds[i], i < 2 ? 3 : 0, NULL};
        mkrt_stats before, after;
        mkrt_stats_read(rt, &before);
        bool ok_run = start(rt, &r) && mkrt_traversal_wait(r.t, SEC) == MKRT_OK;
        /* The traversal finishes inside its batch's completion, before the
         * batch is counted: wait for the count (at most 2 s). */
        for (int spin = 0; spin < 2000; spin++) {
            mkrt_stats_read(rt, &after);
            if (after.batches != before.batches)
                break;
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        }
        ok(ok_run && right(g, cpu, &r), "%s: %s on the device, equal to the %s", k, names[i],
           i < 2 ? "serial reference" : "CPU engine's");
        bool on;
        uint64_t most, resident;
        uint32_t split;
        explain(rt, &on, &most, &split, &resident);
        ok(on && most == 1 && resident > 0, "%s: ... EXPLAIN: a job round of 1 on the device, %llu bytes resident", k,
           (unsigned long long)resident);
        is(after.batches - before.batches, 1, "%s: ... the whole run one batch: its levels never came back to the "
           "host", k);
        mkrt_traversal_stats ts;
        mkrt_traversal_stats_read(r.t, &ts);
        if (i == 0)
            ok(ts.levels_pulled > 0 && ts.levels_pushed > 1, "%s: ... BFS levels advanced on the device, %llu "
               "pushed and %llu pulled (Beamer's rule)", k, (unsigned long long)ts.levels_pushed,
               (unsigned long long)ts.levels_pulled);
        else
            ok(ts.levels_pushed > 1 && ts.edges_examined >= g->off[g->v], "%s: ... %llu levels, %llu edges", k,
               (unsigned long long)ts.levels_pushed, (unsigned long long)ts.edges_examined);
        mkrt_traversal_close(r.t, NULL);
    }
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    is(s.device_failures, 0, "%s: ... and the device never failed", k);
    mkrt_destroy(rt, SEC, NULL);
}

/* Ten traversals at once over `budget` (0: the device's, 8 slots). */
static void at_once(mkrt_backend_kind kind, const test_graph *g, mkrt_runtime *cpu, uint64_t budget, uint32_t slots)
{
    const char *k = name_of(kind);
    mkrt_runtime *rt = graph_rt(kind, g, budget);
    char want[64];
    snprintf(want, sizeof want, "public traversals, %u at once", slots);
    like(mkrt_backend_describe(rt), want, "%s, %u slot(s): the device says how many at once", k, slots);
    mkrt__runtime_hold(rt, true); /* all ten are started when the dispatcher looks */
    run r[10] = {{MKRT_TRAVERSAL_BFS, 0, NULL},      {MKRT_TRAVERSAL_SSSP, 1, NULL}, {MKRT_TRAVERSAL_CC, 0, NULL},
                 {MKRT_TRAVERSAL_PAGERANK, 0, NULL}, {MKRT_TRAVERSAL_BFS, 5, NULL},  {MKRT_TRAVERSAL_SSSP, 7, NULL},
                 {MKRT_TRAVERSAL_BFS, 9, NULL},      {MKRT_TRAVERSAL_SSSP, 11, NULL}, {MKRT_TRAVERSAL_CC, 0, NULL},
                 {MKRT_TRAVERSAL_BFS, 13, NULL}};
    bool started = true;
    for (int i = 0; i < 10; i++)
        started &= start(rt, &r[i]);
    mkrt__runtime_hold(rt, false);
    int waited = 0;
    for (int i = 0; i < 10; i++)
        waited += started && mkrt_traversal_wait(r[i].t, SEC) == MKRT_OK;
    is(waited, 10, "%s, %u slot(s): 10 traversals (BFS, SSSP, CC, PageRank) started at once all finished", k, slots);
    int good = 0;
    for (int i = 0; i < 10; i++)
        good += right(g, cpu, &r[i]);
    is(good, 10, "%s, %u slot(s): ... each equal to its reference", k, slots);
    bool on;
    uint64_t most, resident;
    uint32_t split;
    explain(rt, &on, &most, &split, &resident);
    ok(on && most == slots && split == 10 - slots, "%s, %u slot(s): ... on the device, %u in one round (most %llu), "
       "the other %u waiting for a slot (EXPLAIN's split: %u)", k, slots, slots, (unsigned long long)most, 10 - slots,
       split);
    mkrt_destroy(rt, SEC, NULL);
}

/* Graph and RELAX bitmap bytes the device holds (megakernel_backend.c). */
static uint64_t graph_bytes(const test_graph *g)
{
    return (g->v + 1) * 8ull + g->off[g->v] * 4ull * (g->w != NULL ? 2 : 1) + mkrt__mk_job_bits_bytes(g->v);
}

static void set_memory(uint64_t total, uint64_t others)
{
    fake_cuda_set_memory(total, others);
}

/* The stand-in's modelled memory: a graph over it, a graph with no room
 * for a job slot. */
static void over_budget(mkrt_runtime *cpu_small)
{
    test_graph big = test_graph_random(100000, 500000, 5); /* about 9 MB on the device */
    set_memory(1024 * MIB, 1024 * MIB - 8 * MIB);          /* a budget of about 4 MiB */
    mkrt_runtime *rt = graph_rt(MKRT_BACKEND_CUDA, &big, 0);
    const char *d = mkrt_backend_describe(rt);
    like(d, "the graph is not on the device", "cuda, graph over the modelled memory: refused by the device");
    like(d, "device bytes beside 0 resident: over the", "cuda: ... with the numbers");
    like(d, "Fix: ", "cuda: ... and a Fix");
    run r = {MKRT_TRAVERSAL_BFS, 2, NULL};
    bool ok_run = start(rt, &r) && mkrt_traversal_wait(r.t, SEC) == MKRT_OK;
    ok(ok_run && right(&big, NULL, &r), "cuda: ... its BFS runs on the CPU pool, right");
    bool on;
    uint64_t most, resident;
    uint32_t split;
    explain(rt, &on, &most, &split, &resident);
    ok(!on, "cuda: ... EXPLAIN: nothing of it on the device");
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    is(s.device_failures, 0, "cuda: ... and no out-of-memory failure");
    mkrt_destroy(rt, SEC, NULL);
    test_graph_free(&big);
    unsetenv("FAKE_CUDA_MEM_TOTAL");
    unsetenv("FAKE_CUDA_MEM_OTHERS");
    (void)cpu_small;
}

static void no_slot(const test_graph *g, mkrt_runtime *cpu)
{
    /* SIM with a configured budget: the graph fits, a slot does not. */
    const uint64_t budget = graph_bytes(g) + mkrt__mk_job_slot_bytes(g->v) / 2;
    mkrt_runtime *rt = graph_rt(MKRT_BACKEND_SIM, g, budget);
    const char *d = mkrt_backend_describe(rt);
    like(d, "public traversals run on the CPU pool: one needs", "sim, no room for a job slot: said so");
    like(d, "Fix: a larger device_memory_budget", "sim: ... with a Fix");
    run r = {MKRT_TRAVERSAL_SSSP, 4, NULL};
    bool ok_run = start(rt, &r) && mkrt_traversal_wait(r.t, SEC) == MKRT_OK;
    ok(ok_run && right(g, cpu, &r), "sim: ... its SSSP runs on the CPU pool, right");
    bool on;
    uint64_t most, resident;
    uint32_t split;
    explain(rt, &on, &most, &split, &resident);
    ok(!on, "sim: ... EXPLAIN: not on the device");
    mkrt_destroy(rt, SEC, NULL);
}

/* A device that hangs in a job round: the watchdog fails it, and the
 * round runs on the CPU pool through the same loop, right. */
static void device_fails(const test_graph *g, mkrt_runtime *cpu)
{
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_SIM;
    c.workers = 2;
    c.cells = g->v;
    c.watchdog_ms = 200;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    mkrt_graph mg = {g->v, g->off, g->dst, g->w};
    if (mkrt_create(&c, &rt, &err) != MKRT_OK || mkrt_graph_register(rt, &mg, &err) != MKRT_OK)
        bail_out("sim runtime: %s", err.message);
    mkrt__runtime_hold(rt, true);
    mkrt__runtime_device_hang(rt, 1, 0); /* the job round hangs before its first level */
    run r[2] = {{MKRT_TRAVERSAL_BFS, 6, NULL}, {MKRT_TRAVERSAL_CC, 0, NULL}};
    bool started = start(rt, &r[0]) && start(rt, &r[1]);
    mkrt__runtime_hold(rt, false);
    const mkrt_status w0 = started ? mkrt_traversal_wait(r[0].t, SEC) : MKRT_EINVAL;
    const mkrt_status w1 = started ? mkrt_traversal_wait(r[1].t, SEC) : MKRT_EINVAL;
    const bool waited = w0 == MKRT_OK && w1 == MKRT_OK;
    if (!waited)
        diag("waits: %s, %s", mkrt_status_name(w0), mkrt_status_name(w1));
    ok(waited && right(g, cpu, &r[0]) && right(g, cpu, &r[1]), "sim, a device hung in a job round: the BFS and CC "
       "ran again on the CPU pool, right");
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    is(s.device_failures, 1, "sim: ... the watchdog failed the device once");
    mkrt_destroy(rt, SEC, NULL);
}

#ifndef DEVICE_TRAVERSAL_REAL_GPU
#define DEVICE_TRAVERSAL_REAL_GPU 0
#endif

/* tests/cuda_traversal.c: the same on the machine's GPU (skipped without one). */
static int real_gpu(const test_graph *g, mkrt_runtime *cpu)
{
    each_kind(MKRT_BACKEND_CUDA, g, cpu);
    at_once(MKRT_BACKEND_CUDA, g, cpu, 0, 8);
    test_graph big = test_graph_random(1u << 18, 1u << 21, 3); /* wider levels: many blocks at work */
    mkrt_runtime *cpu_big = graph_rt(MKRT_BACKEND_CPU, &big, 0);
    each_kind(MKRT_BACKEND_CUDA, &big, cpu_big);
    mkrt_destroy(cpu_big, SEC, NULL);
    test_graph_free(&big);
    return 0;
}

int main(int argc, char **argv)
{
    (void)argc;
    if (DEVICE_TRAVERSAL_REAL_GPU) { /* skipped before anything is made */
        if (!mkrt__cuda_megakernel_built())
            plan_skip_all("the CUDA megakernel was not built (no nvcc)");
        cuda_real_or_skip();
    }
    test_graph g = test_graph_random(2000, 16000, 11);
    mkrt_runtime *cpu = graph_rt(MKRT_BACKEND_CPU, &g, 0);
    if (DEVICE_TRAVERSAL_REAL_GPU) {
        real_gpu(&g, cpu);
        mkrt_destroy(cpu, SEC, NULL);
        test_graph_free(&g);
        return done_testing();
    }
    each_kind(MKRT_BACKEND_SIM, &g, cpu);
    at_once(MKRT_BACKEND_SIM, &g, cpu, 0, 8);
    /* Room for the graph and one job slot: the plan in pieces. */
    at_once(MKRT_BACKEND_SIM, &g, cpu, graph_bytes(&g) + mkrt__mk_job_slot_bytes(g.v) * 3 / 2, 1);
    no_slot(&g, cpu);
    device_fails(&g, cpu);
    if (!mkrt__cuda_megakernel_built()) {
        skip(28, "the CUDA megakernel was not built (no nvcc): the CUDA backend cannot start");
    } else {
        (void)fake_cuda_open(argv[0]);
        each_kind(MKRT_BACKEND_CUDA, &g, cpu);
        at_once(MKRT_BACKEND_CUDA, &g, cpu, 0, 8);
        over_budget(cpu);
    }
    mkrt_destroy(cpu, SEC, NULL);
    test_graph_free(&g);
    return done_testing();
}
