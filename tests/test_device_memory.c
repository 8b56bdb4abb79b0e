/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_device_memory.c - device memory planned from real memory
 * (issue 36): with device_memory_budget 0 the CUDA backend takes the
 * budget from what the device reports (cuMemGetInfo, less the reserve of
 * cuda/cuda_engine.h), through the stand-in driver, whose memory is
 * modelled (FAKE_CUDA_MEM_TOTAL / FAKE_CUDA_MEM_OTHERS); the device's
 * resident bytes count in the split and in admission (on SIM, with a
 * configured budget); a graph over the budget is refused by the device
 * with the numbers and its traversals run on the CPU pool, right; a
 * device whose free memory went to others meanwhile fails the graph's
 * allocation cleanly; a start that does not fit is refused; EXPLAIN
 * shows the budget, the resident bytes and the split. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/cuda/cuda_loader.h"
#include "../src/cuda/protocol.h"
#include "../src/runtime/test_hooks.h"
#include "mkrt/mkrt.h"
#include "graph_fixture.h"
#include "fake_cuda.h"
#include "tap.h"

#define SEC 10000000000ull
#define MIB (1ull << 20)

static int (*fake_live)(void);

static void set_memory(uint64_t total, uint64_t others)
{
    fake_cuda_set_memory(total, others);
}

static mkrt_runtime *create(mkrt_config *c)
{
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(c, &rt, &err) != MKRT_OK)
        bail_out("mkrt_create: %s", err.message);
    return rt;
}

/* The plan of the last batch, after one batch of `n` ADDs ran. */
static mkrt_plan_record one_batch(mkrt_runtime *rt, uint32_t n)
{
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    for (uint32_t i = 0; i < n; i++) {
        mkrt_item a = {MKRT_OP_ADD, 0, i % 8, 1};
        mkrt_publish(p, &a, 1, SEC, NULL);
    }
    mkrt_drain(rt, SEC);
    mkrt_producer_close(p);
    mkrt_plan_record r[64];
    size_t got = mkrt_plan_explain(rt, r, 64);
    if (got == 0)
        bail_out("no plan record");
    return r[got - 1];
}

/* cuda_engine.h's reserve and budget, from what the modelled device has. */
static void default_budget(void)
{
    set_memory(1024 * MIB, 256 * MIB);
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CUDA;
    c.cells = 1024;
    c.max_batch = 4096;
    mkrt_runtime *rt = create(&c);
    mkrt_plan_record r = one_batch(rt, 100);
    /* 768 MiB are this process's; the engine's batch buffers take two of
     * 4096 x 16 + 8193 x 4 bytes (each part rounded up to 256) and its
     * counters 16; the reserve is 5% of 1 GiB, at least 64 MiB: 64 MiB. */
    is(r.memory_budget, 704 * MIB - 2 * (65536 + 33024) - 16,
       "cuda: device_memory_budget 0 takes the device's free memory less the reserve");
    is(r.budget_from_device, 1, "cuda: ... EXPLAIN says the budget is the device's");
    is(r.resident_bytes, 0, "cuda: ... EXPLAIN shows the resident bytes (no graph, cells in host memory: 0)");
    like(mkrt_backend_describe(rt), "device memory budget 703 MiB (the device's), 0 KiB resident", "cuda: ... and describe says so");
    like(mkrt_backend_describe(rt), "MiB free of 1024 at start", "cuda: ... with what the device reported");
    mkrt_destroy(rt, SEC, NULL);

    c.cuda_device_state = 1;
    rt = create(&c);
    r = one_batch(rt, 10);
    ok(r.resident_bytes == 1024 * 8 + (1u << 20) * 8 && r.memory_budget == 704 * MIB - 2 * (65536 + 33024) - 16 - 2048 * 8,
       "cuda: with the state in device memory, the cells and the log are resident, inside the budget");
    mkrt_destroy(rt, SEC, NULL);
    c.cuda_device_state = 0;

    c.device_memory_budget = 12345678;
    rt = create(&c);
    r = one_batch(rt, 10);
    ok(r.memory_budget == 12345678 && r.budget_from_device == 0, "cuda: a configured budget is kept as it is");
    mkrt_destroy(rt, SEC, NULL);

    set_memory(1024 * MIB, 1024 * MIB - 8 * MIB); /* 8 MiB left: the reserve is at most half of it */
    c.device_memory_budget = 0;
    rt = create(&c);
    r = one_batch(rt, 10);
    ok(r.memory_budget > 3 * MIB && r.memory_budget < 4 * MIB,
       "cuda: on a nearly full device the reserve is half the free memory (budget %llu)",
       (unsigned long long)r.memory_budget);
    mkrt_destroy(rt, SEC, NULL);
    is(fake_live(), 0, "cuda: nothing left allocated");
}

/* SSSP from root with the CPU pool's answer beside it. */
static bool sssp_matches(mkrt_runtime *rt, mkrt_runtime *cpu, const test_graph *g, uint32_t root)
{
    bool same = true;
    uint64_t *d[2] = {malloc(g->v * sizeof(uint64_t)), malloc(g->v * sizeof(uint64_t))};
    mkrt_runtime *rts[2] = {rt, cpu};
    for (int i = 0; i < 2; i++) {
        mkrt_producer *p = mkrt_producer_open(rts[i], NULL);
        for (uint32_t v = 0; v < g->v; v++)
            mkrt_cell_write(rts[i], v, UINT64_MAX);
        mkrt_cell_write(rts[i], g->v, 0);
        mkrt_item relax = {MKRT_OP_RELAX, g->v, root, 0};
        mkrt_publish(p, &relax, 1, SEC, NULL);
        same &= mkrt_quiesce(rts[i], SEC) == MKRT_OK;
        mkrt_cells_read(rts[i], 0, g->v, d[i]);
        mkrt_producer_close(p);
    }
    same &= memcmp(d[0], d[1], g->v * sizeof(uint64_t)) == 0;
    free(d[0]);
    free(d[1]);
    return same;
}

static mkrt_runtime *graph_runtime(mkrt_backend_kind kind, const test_graph *g, uint64_t budget)
{
    mkrt_config c = mkrt_config_default();
    c.backend = kind;
    c.workers = 2;
    c.cells = g->v + 1;
    c.max_batch = 4096;
    c.append_log_capacity = 16;
    c.device_memory_budget = budget;
    mkrt_runtime *rt = create(&c);
    mkrt_graph mg = {g->v, g->off, g->dst, g->w};
    mkrt_error err;
    if (mkrt_graph_register(rt, &mg, &err) != MKRT_OK)
        bail_out("mkrt_graph_register: %s", err.message);
    return rt;
}

/* A graph over the device's budget: refused by the device before any
 * allocation, with the numbers; its traversal runs on the CPU pool. */
static void graph_over_budget(void)
{
    test_graph g = test_graph_random(100000, 500000, 5); /* about 8.8 MB of CSR */
    set_memory(1024 * MIB, 1024 * MIB - 8 * MIB);          /* a budget of about 4 MiB */
    mkrt_runtime *rt = graph_runtime(MKRT_BACKEND_CUDA, &g, 0);
    mkrt_runtime *cpu = graph_runtime(MKRT_BACKEND_CPU, &g, 0);
    const char *d = mkrt_backend_describe(rt);
    like(d, "the graph is not on the device, RELAX runs on the CPU pool", "cuda: a graph over the device's budget stays off it");
    like(d, "graph of 100000 vertices, 1000000 edges needs 8850024 device bytes beside 0 resident",
         "cuda: ... what needs how much");
    like(d, "-byte budget (device's free memory less reserve)", "cuda: ... against which budget");
    like(d, "Fix: ", "cuda: ... and a Fix");
    ok(sssp_matches(rt, cpu, &g, 3), "cuda: ... its SSSP runs on the CPU pool, with the CPU's distances");
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    is(s.device_failures, 0, "cuda: ... and the device did not fail");
    mkrt_destroy(rt, SEC, NULL);
    mkrt_destroy(cpu, SEC, NULL);
    test_graph_free(&g);

    /* A graph that fits: on the device, and EXPLAIN of its traversal shows
     * the graph resident beside the device's budget. */
    g = test_graph_random(1500, 4000, 7);
    set_memory(1024 * MIB, 512 * MIB);
    rt = graph_runtime(MKRT_BACKEND_CUDA, &g, 0);
    cpu = graph_runtime(MKRT_BACKEND_CPU, &g, 0);
    ok(sssp_matches(rt, cpu, &g, 2), "cuda: a graph within the budget: its SSSP on the device, right");
    mkrt_plan_record rec[64];
    size_t got = mkrt_plan_explain(rt, rec, 64);
    const uint64_t graph = (g.v + 1) * 8ull + g.off[g.v] * 8ull + mkrt__mk_job_bits_bytes(g.v) +
                           MKRT_MK_JOBS_MAX * mkrt__mk_job_slot_bytes(g.v);
    ok(got > 0 && rec[got - 1].on_device == 1 && rec[got - 1].resident_bytes == graph &&
           rec[got - 1].budget_from_device == 1 && rec[got - 1].memory_budget > 400 * MIB,
       "cuda: ... EXPLAIN of the traversal: on the device, %llu bytes resident (CSR, RELAX bitmaps, job slots), budget %llu MiB",
       got ? (unsigned long long)rec[got - 1].resident_bytes : 0ull,
       got ? (unsigned long long)(rec[got - 1].memory_budget >> 20) : 0ull);
    mkrt_destroy(rt, SEC, NULL);
    mkrt_destroy(cpu, SEC, NULL);
    test_graph_free(&g);

    /* Within the budget when the runtime started, but others took the
     * memory since: the allocation fails cleanly, no crash. */
    g = test_graph_random(1500, 4000, 7);
    set_memory(1024 * MIB, 512 * MIB);
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CUDA;
    c.workers = 2;
    c.cells = g.v + 1;
    c.max_batch = 4096;
    rt = create(&c);
    cpu = graph_runtime(MKRT_BACKEND_CPU, &g, 0);
    set_memory(1024 * MIB, 1024 * MIB - 4096);
    mkrt_graph mg = {g.v, g.off, g.dst, g.w};
    mkrt_error err;
    is(mkrt_graph_register(rt, &mg, &err), MKRT_OK, "cuda: a device whose memory went to others: registered all the same");
    like(mkrt_backend_describe(rt), "CUDA_ERROR_OUT_OF_MEMORY", "cuda: ... describe names the driver's out-of-memory");
    ok(sssp_matches(rt, cpu, &g, 0), "cuda: ... the traversal runs on the CPU pool, right");
    mkrt_destroy(rt, SEC, NULL);
    mkrt_destroy(cpu, SEC, NULL);
    test_graph_free(&g);
    is(fake_live(), 0, "cuda: nothing left allocated");
}

/* A start that does not fit the device is refused with the numbers. */
static void start_refused(void)
{
    set_memory(1024 * MIB, 1024 * MIB - 1 * MIB);
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CUDA;
    c.cells = 64; /* max_batch 65536: two 1.5 MB batch buffers */
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    is(mkrt_create(&c, &rt, &err), MKRT_EDEVICE, "cuda: a megakernel that does not fit the device is refused");
    like(err.message, "bytes of device memory (two batch buffers of 65536 items) but Fake GPU has "
                      "1048576 bytes free of 1073741824. Fix: lower mkrt_config.max_batch",
         "cuda: ... with what, the numbers and a Fix");
    c.backend = MKRT_BACKEND_AUTO;
    is(mkrt_create(&c, &rt, &err), MKRT_OK, "auto: ... falls back to the CPU");
    like(mkrt_backend_describe(rt), "auto chose the CPU: the megakernel needs", "auto: ... and says why");
    mkrt_destroy(rt, SEC, NULL);
    is(fake_live(), 0, "cuda: nothing left allocated");
}

static _Atomic unsigned runs;
static mkrt_status count_op(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    (void)it;
    (void)ctx;
    atomic_fetch_add(&runs, 1);
    return MKRT_OK;
}

typedef struct failures {
    _Atomic unsigned n;
    mkrt_status last;
    uint32_t last_op;
} failures;

static void on_error(void *ctx, const mkrt_item *item, mkrt_status why, const char *message)
{
    (void)message;
    failures *f = ctx;
    f->last = why;
    f->last_op = item->op;
    atomic_fetch_add(&f->n, 1);
}

/* The split and admission count the device's resident bytes: on SIM, with
 * the graph on the device and a budget of resident + 100 bytes, ten
 * 30-byte items split as they would in 100 bytes, and a 200-byte item is
 * refused though the budget is larger. */
static void resident_counted(void)
{
    test_graph g = test_graph_path(64);
    /* megakernel_backend.c: the CSR and the RELAX job's bitmaps */
    const uint64_t resident = (g.v + 1) * sizeof(uint64_t) + g.off[g.v] * sizeof(uint32_t) +
                              mkrt__mk_job_bits_bytes(g.v);
    failures f;
    memset(&f, 0, sizeof f);
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_SIM;
    c.workers = 2;
    c.cells = 1024;
    c.device_memory_budget = resident + 100;
    c.on_error = on_error;
    c.error_ctx = &f;
    mkrt_runtime *rt = create(&c);
    mkrt_graph mg = {g.v, g.off, g.dst, NULL};
    mkrt_error err;
    if (mkrt_graph_register(rt, &mg, &err) != MKRT_OK)
        bail_out("mkrt_graph_register: %s", err.message);
    mkrt_op_desc small = {.fn = count_op, .frontier_bytes = 10, .scratch_bytes = 5, .name = "small"}; /* fused 30 */
    mkrt_op_desc huge = {.fn = count_op, .frontier_bytes = 200, .name = "huge"};
    mkrt_op_register(rt, 30, &small, NULL);
    mkrt_op_register(rt, 31, &huge, NULL);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt__runtime_hold(rt, true);
    mkrt_item items[11];
    for (uint32_t i = 0; i < 10; i++)
        items[i] = (mkrt_item){30, 100 + i, 200 + i, 0};
    items[10] = (mkrt_item){31, 300, 301, 0};
    mkrt_publish(p, items, 11, SEC, NULL);
    mkrt__runtime_hold(rt, false);
    mkrt_drain(rt, SEC);
    mkrt_plan_record r[64];
    size_t got = mkrt_plan_explain(rt, r, 64);
    ok(got >= 1 && r[got - 1].layers == 4 && r[got - 1].split_layers == 3 && atomic_load(&runs) == 10,
       "sim: the split counts the resident graph (10 x 30 bytes in budget - resident = 100: 4 layers)");
    ok(got >= 1 && r[got - 1].resident_bytes == resident && r[got - 1].memory_budget == resident + 100 &&
           r[got - 1].peak_layer_bytes > 0 && r[got - 1].peak_layer_bytes <= 100,
       "sim: EXPLAIN shows the resident bytes (%llu), the budget and the split's largest layer (%llu)",
       got ? (unsigned long long)r[got - 1].resident_bytes : 0ull,
       got ? (unsigned long long)r[got - 1].peak_layer_bytes : 0ull);
    ok(atomic_load(&f.n) == 1 && f.last == MKRT_EBUDGET && f.last_op == 31,
       "sim: admission counts it too: a 200-byte item fails with MKRT_EBUDGET under a larger budget");
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);

    /* A budget the graph does not fit: the device refuses it, the CPU runs it. */
    c.device_memory_budget = resident - 1;
    c.on_error = NULL;
    rt = create(&c);
    is(mkrt_graph_register(rt, &mg, &err), MKRT_OK, "sim: a graph over a configured budget: registered");
    like(mkrt_backend_describe(rt), "-byte budget (configured)",
         "sim: ... the device refused it, saying which budget");
    mkrt_destroy(rt, SEC, NULL);
    test_graph_free(&g);
}

int main(int argc, char **argv)
{
    (void)argc;
    resident_counted();
    if (!mkrt__cuda_megakernel_built()) {
        skip(26, "the CUDA megakernel was not built (no nvcc): the CUDA backend cannot start");
        return done_testing();
    }
    *(void **)&fake_live = fake_cuda_probe(fake_cuda_open(argv[0]), "fake_cuda_live");
    default_budget();
    graph_over_budget();
    start_refused();
    unsetenv("FAKE_CUDA_MEM_TOTAL");
    unsetenv("FAKE_CUDA_MEM_OTHERS");
    return done_testing();
}
