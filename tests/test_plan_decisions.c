/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_plan_decisions.c - the plan stage's decisions change how a
 * batch runs, on the CPU pool and on the simulated megakernel device:
 *   - the topology planner's choice sets how many workers or blocks take
 *     part in a layer (a 65-wide layer in a dense batch vs the same layer
 *     in a long, sparse batch);
 *   - one participant: the batch runs on one thread, no barrier;
 *   - several: several threads really run the layer (a rendezvous op that
 *     only returns once two threads are inside it);
 *   - on the device, blocks the plan leaves out of a layer run nothing
 *     (their progress words);
 *   - the frontier planner's memory split adds layers, with its peaks;
 *   - narrow layers, and runs of them inside a wide batch, cross no
 *     cross-thread barrier and run on one thread;
 *   - the default worker count and a batch's width follow the CPUs the
 *     process has and the producers still publishing;
 *   - a planning task (run_task) ends without the pool threads that did
 *     not enter it (asleep), and waits for those that did. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backend/cpu_pool.h"
#include "backend/megakernel_backend.h"
#include "base/cpus.h"
#include "base/thread.h" /* pthreads under TSan: see there */
#include "deaf_toggler.h"
#include "mkrt/runtime.h"
#include "runtime/test_hooks.h"
#include "tap.h"

#define SEC 5000000000ull

static _Atomic uint32_t next_tid = 1;
static _Thread_local uint32_t my_tid;

static uint32_t tid(void)
{
    if (my_tid == 0)
        my_tid = atomic_fetch_add(&next_tid, 1);
    return my_tid;
}

/* op 16: cells[out] = the running thread's id. */
static mkrt_status who(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    ctx->cells[it->out] = tid();
    return MKRT_OK;
}

/* op 17: as who, but returns only once two different threads have been
 * inside it at the same time (or after 2 s, so a failure cannot hang). */
static _Atomic uint32_t inside_mask;
static mkrt_status rendezvous(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    uint32_t me = tid();
    atomic_fetch_or(&inside_mask, 1u << (me % 32));
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        uint32_t m = atomic_load(&inside_mask);
        if ((m & (m - 1)) != 0)
            break; /* two bits: another thread is (or was) inside */
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec >= 2)
            break;
    }
    ctx->cells[it->out] = me;
    return MKRT_OK;
}

/* op 18: cells[out] = cells[in] + param (ADD as a user op: a user op's
 * layers keep their width, so a small batch still goes to the pool). */
static mkrt_status sum(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    ctx->cells[it->out] = ctx->cells[it->in] + it->param;
    return MKRT_OK;
}

static mkrt_runtime *start(mkrt_backend_kind kind, uint32_t workers, uint64_t budget)
{
    mkrt_config c = mkrt_config_default();
    c.backend = kind;
    c.workers = workers;
    c.cells = 4096;
    c.device_memory_budget = budget;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK) {
        diag("mkrt_create: %s", err.message);
        return NULL;
    }
    mkrt_op_desc w = {.fn = who, .name = "who", .frontier_bytes = 10, .scratch_bytes = 5};
    mkrt_op_desc r = {.fn = rendezvous, .name = "rendezvous"};
    mkrt_op_register(rt, 16, &w, NULL);
    mkrt_op_register(rt, 17, &r, NULL);
    mkrt_op_desc a = {.fn = sum, .name = "sum"};
    mkrt_op_register(rt, 18, &a, NULL);
    return rt;
}

/* Publishes items as one batch (the dispatcher is held meanwhile). */
static void one_batch(mkrt_runtime *rt, mkrt_producer *p, const mkrt_item *items, size_t n)
{
    mkrt__runtime_hold(rt, true);
    size_t done = 0;
    while (done < n) {
        size_t k = n - done < 256 ? n - done : 256;
        mkrt_publish(p, items + done, k, SEC, NULL);
        done += k;
    }
    mkrt__runtime_hold(rt, false);
    mkrt_drain(rt, SEC);
}

static size_t distinct(mkrt_runtime *rt, uint32_t from, uint32_t to)
{
    uint32_t seen[64];
    size_t n = 0;
    for (uint32_t h = from; h < to; h++) {
        uint64_t v = 0;
        mkrt_cell_read(rt, h, &v);
        bool dup = false;
        for (size_t i = 0; i < n; i++)
            dup |= seen[i] == (uint32_t)v;
        if (!dup && n < 64)
            seen[n++] = (uint32_t)v;
    }
    return n;
}

static mkrt_item item(uint32_t op, uint32_t in, uint32_t out, uint32_t param)
{
    return (mkrt_item){op, in, out, param};
}

static void cpu_topology_sets_participants(void)
{
    mkrt_runtime *rt = start(MKRT_BACKEND_CPU, 4, 0);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    static mkrt_item batch[256];
    /* Dense: one layer of 65 independent items. */
    for (uint32_t i = 0; i < 65; i++)
        batch[i] = item(16, 0, 100 + i, 0);
    one_batch(rt, p, batch, 65);
    mkrt__batch_plan dense = mkrt__test_last_plan(rt)->plan;
    uint32_t dense_p = mkrt__test_last_plan(rt)->participants[0];
    ok(mkrt__test_last_plan(rt)->layers == 1 && dense.topology == MKRT_WAVE_HYBRID && dense_p == 4,
       "a dense 65-wide layer: topology %s, %u of 4 workers take part",
       mkrt_wave_topology_name(dense.topology), dense_p);
    ok(distinct(rt, 100, 165) <= dense_p, "... and no more threads than that ran it (%zu)",
       distinct(rt, 100, 165));
    /* Sparse: the same 65-wide first layer, then a chain of 59 ADDs on
     * one cell (59 more layers): typical width 2 of 124 items. */
    size_t n = 0;
    for (uint32_t i = 0; i < 65; i++)
        batch[n++] = item(16, 0, 300 + i, 0);
    for (uint32_t i = 0; i < 59; i++)
        batch[n++] = item(MKRT_OP_ADD, 2000, 2000, 1);
    one_batch(rt, p, batch, n);
    mkrt__batch_plan sparse = mkrt__test_last_plan(rt)->plan;
    uint32_t sparse_p = mkrt__test_last_plan(rt)->participants[0];
    ok(mkrt__test_last_plan(rt)->layers == 59 && sparse.topology == MKRT_WAVE_WARP_SPARSE && sparse_p == 2,
       "the same layer in a long sparse batch: topology %s, %u workers take part",
       mkrt_wave_topology_name(sparse.topology), sparse_p);
    ok(distinct(rt, 300, 365) <= sparse_p, "... and no more threads than that ran it (%zu)",
       distinct(rt, 300, 365));
    ok(sparse.grid_barriers < 58,
       "one participant on both sides of a boundary needs no grid barrier (%u of 58)",
       sparse.grid_barriers);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

static void cpu_one_or_many(void)
{
    mkrt_runtime *rt = start(MKRT_BACKEND_CPU, 2, 0);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    static mkrt_item batch[512];
    for (uint32_t i = 0; i < 8; i++)
        batch[i] = item(16, 0, 10 + i, 0);
    one_batch(rt, p, batch, 8);
    ok(mkrt__test_last_plan(rt)->plan.workers == 1 && distinct(rt, 10, 18) == 1,
       "a narrow batch is planned for one participant and runs on one thread (%u planned, %zu ran)",
       mkrt__test_last_plan(rt)->plan.workers, distinct(rt, 10, 18));
    /* Chains on 4 cells, interleaved (4 layers of 4): one thread runs
     * them in drain order, and the items are never moved into layers. */
    for (uint32_t i = 0; i < 16; i++)
        batch[i] = item(MKRT_OP_ADD, 40 + i % 4, 40 + i % 4, i + 1);
    one_batch(rt, p, batch, 16);
    uint64_t sums[4] = {0};
    mkrt_cells_read(rt, 40, 4, sums);
    ok(mkrt__test_last_plan(rt)->layers == 4 && !mkrt__test_last_plan(rt)->layered && sums[0] == 1 + 5 + 9 + 13 &&
           sums[3] == 4 + 8 + 12 + 16,
       "a batch of 4 layers on one thread runs in drain order, not moved into layers (%zu layers, "
       "layered %d, sums %llu %llu)",
       mkrt__test_last_plan(rt)->layers, mkrt__test_last_plan(rt)->layered, (unsigned long long)sums[0],
       (unsigned long long)sums[3]);
    atomic_store(&inside_mask, 0);
    for (uint32_t i = 0; i < 512; i++)
        batch[i] = item(17, 0, 1000 + i, 0);
    one_batch(rt, p, batch, 512);
    size_t d = distinct(rt, 1000, 1512);
    ok(mkrt__test_last_plan(rt)->plan.workers == 2 && d == 2,
       "a wide layer is planned for 2 workers and 2 threads run it at once (%u planned, %zu ran)",
       mkrt__test_last_plan(rt)->plan.workers, d);
    /* The same wide layer, then chains behind it: the workers run it, so
     * the items are moved into layer order first. */
    for (uint32_t i = 0; i < 16; i++)
        batch[512 - 16 + i] = item(MKRT_OP_ADD, 40 + i % 4, 40 + i % 4, 1);
    atomic_store(&inside_mask, 0);
    one_batch(rt, p, batch, 512);
    mkrt_cells_read(rt, 40, 4, sums);
    ok(mkrt__test_last_plan(rt)->plan.workers == 2 && mkrt__test_last_plan(rt)->layered && sums[0] == 28 + 4,
       "a wide batch for 2 workers is moved into layer order first (workers %u, layered %d, sum %llu)",
       mkrt__test_last_plan(rt)->plan.workers, mkrt__test_last_plan(rt)->layered, (unsigned long long)sums[0]);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

static void cpu_memory_split(void)
{
    /* who's envelope: 10 + 4 x 5 = 30 bytes; a budget of 100 fits 3. */
    mkrt_runtime *rt = start(MKRT_BACKEND_CPU, 2, 100);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item batch[10];
    for (uint32_t i = 0; i < 10; i++)
        batch[i] = item(16, 0, 50 + i, 0);
    one_batch(rt, p, batch, 10);
    ok(mkrt__test_last_plan(rt)->layers == 4 && mkrt__test_last_plan(rt)->plan.split_layers == 3,
       "the frontier planner splits a 300-byte layer into 4 under a 100-byte budget (%zu layers)",
       mkrt__test_last_plan(rt)->layers);
    ok(mkrt__test_last_plan(rt)->plan.peak_frontier_bytes == 30 && mkrt__test_last_plan(rt)->plan.peak_scratch_bytes == 15,
       "... and the plan carries its peaks (frontier %llu, scratch %llu)",
       (unsigned long long)mkrt__test_last_plan(rt)->plan.peak_frontier_bytes,
       (unsigned long long)mkrt__test_last_plan(rt)->plan.peak_scratch_bytes);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

static void sim_blocks_follow_the_plan(void)
{
    mkrt_runtime *rt = start(MKRT_BACKEND_SIM, 2, 0); /* 4 simulated blocks */
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt__backend *dev = mkrt__test_device(rt);
    ok(dev->width == 4, "the simulated device has 4 blocks");
    static mkrt_item batch[64];
    for (uint32_t i = 0; i < 3; i++)
        batch[i] = item(MKRT_OP_STORE, 0, 20 + i, i + 1);
    one_batch(rt, p, batch, 3);
    uint64_t b0 = mkrt__megakernel_progress(dev, 0), b1 = mkrt__megakernel_progress(dev, 1);
    ok(mkrt__test_last_plan(rt)->plan.backend == 0 && mkrt__test_last_plan(rt)->participants[0] == 1 && b0 == 3 && b1 == 0,
       "a 3-wide layer is planned for 1 block: block 0 ran 3 items, block 1 none (%llx, %llx)",
       (unsigned long long)b0, (unsigned long long)b1);
    for (uint32_t i = 0; i < 64; i++)
        batch[i] = item(MKRT_OP_STORE, 0, 200 + i, i);
    one_batch(rt, p, batch, 64);
    uint32_t part = mkrt__test_last_plan(rt)->participants[0];
    uint64_t ran = 0;
    bool each = true;
    for (uint32_t b = 0; b < 4; b++) {
        uint64_t w = mkrt__megakernel_progress(dev, b);
        ran += (uint32_t)w;
        each &= (uint32_t)w == 64 / part;
    }
    ok(part == 4 && each && ran == 64, "a 64-wide layer is planned for 4 blocks: each ran 16 items");
    uint64_t v = 0;
    mkrt_cell_read(rt, 263, &v);
    is((int)v, 63, "... and the cells are right");
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(s.device_batches == 2 && strcmp(s.backend, "sim") == 0, "both batches ran on the device");
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}


static uint64_t pool_barriers(mkrt_runtime *rt)
{
    return mkrt__cpu_pool_barriers(mkrt__test_cpu_pool(rt));
}

/* A narrow batch crosses no barrier; a wide batch with a run of 20
 * one-item layers in the middle uses both workers for its wide layers,
 * runs the 20 on one thread, and crosses 2 barriers (into and out of the
 * run), not 21. */
static void cpu_narrow_runs_inline(void)
{
    mkrt_runtime *rt = start(MKRT_BACKEND_CPU, 2, 0);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    static mkrt_item batch[1100];
    size_t n = 0;
    for (uint32_t i = 0; i < 8; i++)
        batch[n++] = item(16, 0, 10 + i, 0);
    for (uint32_t k = 0; k < 12; k++) /* a chain on from cell 17: 12 more one-item layers */
        batch[n++] = item(16, 17 + k, 18 + k, 0);
    uint64_t before = pool_barriers(rt);
    one_batch(rt, p, batch, n);
    ok(mkrt__test_last_plan(rt)->layers == 13 && mkrt__test_last_plan(rt)->plan.workers == 1 && pool_barriers(rt) == before &&
           distinct(rt, 10, 30) == 1,
       "a narrow batch (13 layers) runs on one thread with no cross-thread barrier (%zu layers, %u "
       "workers, %llu barriers, %zu threads)",
       mkrt__test_last_plan(rt)->layers, mkrt__test_last_plan(rt)->plan.workers,
       (unsigned long long)(pool_barriers(rt) - before), distinct(rt, 10, 30));

    atomic_store(&inside_mask, 0);
    n = 0;
    for (uint32_t i = 0; i < 512; i++) /* layer 0: wide, two threads at once */
        batch[n++] = item(17, 0, 1000 + i, 0);
    for (uint32_t k = 0; k < 20; k++) /* layers 1..20: one item each */
        batch[n++] = item(16, k == 0 ? 1000 : 2999 + k, 3000 + k, 0);
    for (uint32_t i = 0; i < 512; i++) /* layer 21: wide again */
        batch[n++] = item(16, 3019, 1600 + i, 0);
    before = pool_barriers(rt);
    one_batch(rt, p, batch, n);
    bool narrow = true;
    for (size_t l = 1; l < 8; l++)
        narrow = narrow && mkrt__test_last_plan(rt)->participants[l] == 1;
    size_t wide = distinct(rt, 1000, 1512), run = distinct(rt, 3000, 3020);
    ok(mkrt__test_last_plan(rt)->layers == 22 && mkrt__test_last_plan(rt)->participants[0] == 2 && narrow && wide == 2,
       "a wide batch: its wide layer is planned for 2 workers and 2 threads ran it (%zu layers, %u "
       "planned, %zu ran)",
       mkrt__test_last_plan(rt)->layers, mkrt__test_last_plan(rt)->participants[0], wide);
    ok(run == 1, "... its run of 20 one-item layers ran on one thread (%zu)", run);
    ok(mkrt__test_last_plan(rt)->plan.grid_barriers == 2 && pool_barriers(rt) - before == 2,
       "... crossing 2 barriers, into and out of the run, not 21 (planned %u, crossed %llu)",
       mkrt__test_last_plan(rt)->plan.grid_barriers, (unsigned long long)(pool_barriers(rt) - before));
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

/* Whether cells [from, to) all hold thread id `who` (op 16 ran each). */
static bool all_by(mkrt_runtime *rt, uint32_t from, uint32_t to, uint64_t who)
{
    for (uint32_t h = from; h < to; h++) {
        uint64_t v = 0;
        if (mkrt_cell_read(rt, h, &v) != MKRT_OK || v != who)
            return false;
    }
    return true;
}

/* A launch no pool thread enters (the pool threads deaf to launches, as
 * if asleep or without a CPU): the holder, with nothing left to take,
 * closes it and runs the rest itself, its layers in order, crossing no
 * barrier, instead of waiting for threads that never come (before, a
 * launch waited for every member to acknowledge it, and this batch hung).
 * The batch: a wide layer, a chain of 20 one-item layers after it, and
 * a wide layer after the chain; then the same with the pool listening. */
static void cpu_launch_nobody_enters(void)
{
    mkrt_runtime *rt = start(MKRT_BACKEND_CPU, 2, 0);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt__backend *be = mkrt__test_cpu_pool(rt);
    static mkrt_item batch[1100];
    size_t n = 0;
    for (uint32_t i = 0; i < 512; i++)
        batch[n++] = item(16, 0, 1000 + i, 0);
    for (uint32_t k = 0; k < 20; k++)
        batch[n++] = item(16, k == 0 ? 1000 : 2999 + k, 3000 + k, 0);
    for (uint32_t i = 0; i < 512; i++)
        batch[n++] = item(16, 3019, 1600 + i, 0);
    for (uint32_t h = 1000; h < 3100; h++)
        mkrt_cell_write(rt, h, 0);
    mkrt__cpu_pool_launch_deaf(be, true);
    mkrt_stats a, b;
    mkrt_stats_read(rt, &a);
    const uint64_t before = pool_barriers(rt);
    one_batch(rt, p, batch, n);
    mkrt_stats_read(rt, &b);
    uint64_t who = 0;
    mkrt_cell_read(rt, 1000, &who);
    const uint32_t planned = mkrt__test_last_plan(rt)->participants[0];
    ok(planned == 2 && b.executed - a.executed == n && who != 0 && all_by(rt, 1000, 1512, who) &&
           all_by(rt, 3000, 3020, who) && all_by(rt, 1600, 2112, who),
       "no pool thread enters a batch planned for 2: its holder runs all %zu items, every layer (planned %u, "
       "executed %llu)",
       n, planned, (unsigned long long)(b.executed - a.executed));
    ok(pool_barriers(rt) == before && b.units_by_planner - a.units_by_planner == b.units_run - a.units_run,
       "... crossing no barrier (%llu), every unit the planner's (%llu of %llu)",
       (unsigned long long)(pool_barriers(rt) - before),
       (unsigned long long)(b.units_by_planner - a.units_by_planner),
       (unsigned long long)(b.units_run - a.units_run));
    mkrt__cpu_pool_launch_deaf(be, false);
    for (uint32_t h = 1000; h < 3100; h++)
        mkrt_cell_write(rt, h, 0);
    one_batch(rt, p, batch, n);
    uint64_t zero = 0;
    for (uint32_t h = 1000; h < 1512; h++) {
        uint64_t v = 0;
        mkrt_cell_read(rt, h, &v);
        zero += v == 0;
    }
    ok(zero == 0 && distinct(rt, 3000, 3020) == 1,
       "listening again: the same batch runs whole (%llu cells unwritten), its chain on one thread",
       (unsigned long long)zero);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

/* Launches that none, some or all of the pool threads enter, at random:
 * a thread switches the pool's deafness to launches every few
 * microseconds while 200 batches run (3 workers: 2 pool threads), each a
 * wide layer, a chain of 10 one-item layers and a wide layer that reads
 * the chain's end. Every batch completes, every item once and in order:
 * the cells equal a sequential run's. */
static void cpu_entries_at_random(void)
{
    enum { WIDE = 128, CHAIN = 10, ROUNDS = 200 };
    mkrt_runtime *rt = start(MKRT_BACKEND_CPU, 3, 0);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    deaf_toggler t = {mkrt__test_cpu_pool(rt), 4, 50000, false};
    mkrt__thread th;
    if (rt == NULL || p == NULL || mkrt__thread_start(&th, deaf_toggler_main, &t) != 0) {
        ok(false, "a runtime of 3 workers and a toggling thread start");
        return;
    }
    static uint64_t want[4096];
    static mkrt_item batch[2 * WIDE + CHAIN];
    const uint64_t barriers = pool_barriers(rt);
    for (uint32_t h = 0; h < 4096; h++)
        mkrt_cell_write(rt, h, 0);
    memset(want, 0, sizeof want);
    for (uint32_t r = 0; r < ROUNDS; r++) {
        size_t n = 0;
        for (uint32_t i = 0; i < WIDE; i++) /* layer 0: 100 + i += r + i */
            batch[n++] = item(18, 100 + i, 100 + i, r + i);
        for (uint32_t k = 0; k < CHAIN; k++) /* cell 50 += 1 + k, in order */
            batch[n++] = item(18, 50, 50, 1 + k);
        for (uint32_t i = 0; i < WIDE; i++) /* after the chain: 400 + i = cell 50 + i */
            batch[n++] = item(18, 50, 400 + i, i);
        for (size_t k = 0; k < n; k++)
            want[batch[k].out] = want[batch[k].in] + batch[k].param;
        one_batch(rt, p, batch, n);
    }
    atomic_store(&t.stop, true);
    mkrt__thread_join(th);
    uint32_t wrong = 0;
    for (uint32_t h = 0; h < 4096; h++) {
        uint64_t v = 0;
        mkrt_cell_read(rt, h, &v);
        wrong += v != want[h];
    }
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    diag("pool barriers crossed %llu, units by the planner %llu of %llu",
         (unsigned long long)(pool_barriers(rt) - barriers), (unsigned long long)s.units_by_planner,
         (unsigned long long)s.units_run);
    ok(wrong == 0 && s.executed == (uint64_t)ROUNDS * (2 * WIDE + CHAIN) && s.failed == 0,
       "%d batches entered by none, some or all pool threads at random: every item once, in order (%u cells "
       "wrong, %llu executed)",
       ROUNDS, wrong, (unsigned long long)s.executed);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

/* The default worker count: the process's CPUs, the dispatching thread
 * among the executors (a test override stands for the machine); a
 * batch's width: those less one per producer still publishing. */
static void cpu_workers_follow_cpus(void)
{
    static const uint32_t cpus[] = {1, 2, 3, 8};
    static const uint32_t want[] = {1, 2, 3, 8};
    for (int i = 0; i < 4; i++) {
        mkrt__cpus_override(cpus[i]);
        mkrt_runtime *rt = start(MKRT_BACKEND_CPU, 0, 0);
        mkrt_stats s;
        mkrt_stats_read(rt, &s);
        ok(rt != NULL && s.workers == want[i], "%u CPUs available: %u workers by default (%u)", cpus[i],
           want[i], s.workers);
        mkrt_destroy(rt, SEC, NULL);
    }
    mkrt__cpus_override(4);
    mkrt_runtime *rt = start(MKRT_BACKEND_CPU, 0, 0);
    mkrt_producer *a = mkrt_producer_open(rt, NULL), *b = mkrt_producer_open(rt, NULL);
    static mkrt_item batch[2048];
    for (uint32_t i = 0; i < 2048; i++)
        batch[i] = item(16, 0, i, 0);
    /* The dispatcher dozes, so this thread plans both batches itself,
     * from inside mkrt_drain (a helping wait): the counts are exact. */
    mkrt__runtime_doze(rt, true);
    mkrt_publish(a, batch, 1024, SEC, NULL);
    mkrt_drain(rt, SEC); /* a's producer (this thread) waits: nobody publishes */
    uint32_t alone = mkrt__test_last_plan(rt)->plan.width;
    mkrt_publish(a, batch, 1024, SEC, NULL);
    mkrt_publish(b, batch + 1024, 1024, SEC, NULL);
    mkrt_drain(rt, SEC); /* two producers in the batch, one thread waiting */
    mkrt__runtime_doze(rt, false);
    uint32_t busy = mkrt__test_last_plan(rt)->plan.width;
    ok(alone == 4 && busy == 3,
       "4 CPUs: a batch gets 4 workers while its producer waits, 3 while one of two still "
       "publishes (%u, %u)",
       alone, busy);
    mkrt_producer_close(a);
    mkrt_producer_close(b);
    mkrt_destroy(rt, SEC, NULL);
    mkrt__cpus_override(0);
    ok(mkrt__cpus_available() >= 1, "without the override: the process's CPUs (%u)", mkrt__cpus_available());
}

/* A worker count the user chose: a batch uses all of it while its
 * producers published ahead (their rings hold nothing more when it is
 * planned, above the CPUs too), and yields a CPU to a producer whose ring
 * still holds items, one that publishes while the batch runs (2 CPUs, 2
 * workers: 1). EXPLAIN's records give each batch's width. */
static void cpu_chosen_workers_yield(void)
{
    mkrt__cpus_override(2);
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CPU;
    c.workers = 2;
    c.cells = 4096;
    c.max_batch = 1024;
    c.burst_per_ring = 1024;
    mkrt_runtime *rt = NULL;
    if (mkrt_create(&c, &rt, NULL) != MKRT_OK)
        bail_out("mkrt_create");
    mkrt_producer *a = mkrt_producer_open(rt, NULL);
    static mkrt_item batch[2048];
    for (uint32_t i = 0; i < 2048; i++)
        batch[i] = item(MKRT_OP_ADD, i, i, 1);
    /* This thread plans every batch from inside mkrt_drain. */
    mkrt__runtime_doze(rt, true);
    mkrt_publish(a, batch, 1024, SEC, NULL);
    mkrt_drain(rt, SEC);
    mkrt_publish(a, batch, 2048, SEC, NULL); /* two batches: the first leaves 1024 in the ring */
    mkrt_drain(rt, SEC);
    mkrt__runtime_doze(rt, false);
    mkrt_plan_record r[8];
    size_t n = mkrt_plan_explain(rt, r, 8);
    ok(n == 3 && r[0].width == 2 && r[1].width == 1 && r[2].width == 2,
       "2 workers chosen on 2 CPUs: 2 for a batch published ahead, 1 while its producer's ring "
       "holds more, 2 for the last (%zu batches: %u, %u, %u)",
       n, n > 0 ? r[0].width : 0, n > 1 ? r[1].width : 0, n > 2 ? r[2].width : 0);
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(s.executed == 3072 && s.workers == 2, "... every item ran once (%llu), and the pool keeps 2 workers (%u)",
       (unsigned long long)s.executed, s.workers);
    mkrt_producer_close(a);
    mkrt_destroy(rt, SEC, NULL);
    /* Above the CPUs, with nothing published meanwhile: the user's 4. */
    mkrt_runtime *wide = start(MKRT_BACKEND_CPU, 4, 0);
    mkrt_producer *w = mkrt_producer_open(wide, NULL);
    one_batch(wide, w, batch, 2048);
    ok(mkrt__test_last_plan(wide)->plan.width == 4, "4 workers chosen on 2 CPUs, published ahead: width 4 (%u)",
       mkrt__test_last_plan(wide)->plan.width);
    mkrt_producer_close(w);
    mkrt_destroy(wide, SEC, NULL);
    mkrt__cpus_override(0);
}

/* A planning task's context: parts claimed by the executors, who ran. */
#define TASK_PARTS 4
typedef struct task_ctx {
    _Atomic uint32_t next;
    _Atomic uint32_t part_runs[TASK_PARTS];
    _Atomic uint32_t ran[2];   /* fn calls by executor */
    _Atomic bool pool_inside;  /* a pool thread has entered */
    bool wait_for_pool;        /* executor 0 waits (2 s at most) for one */
} task_ctx;

static void task_fn(void *p, uint32_t executor)
{
    task_ctx *t = p;
    atomic_fetch_add(&t->ran[executor < 2 ? executor : 1], 1);
    if (executor != 0)
        atomic_store(&t->pool_inside, true);
    if (executor == 0 && t->wait_for_pool) {
        struct timespec t0, now;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do
            clock_gettime(CLOCK_MONOTONIC, &now);
        while (!atomic_load(&t->pool_inside) && now.tv_sec - t0.tv_sec < 2);
    }
    for (uint32_t k; (k = atomic_fetch_add(&t->next, 1)) < TASK_PARTS;)
        atomic_fetch_add(&t->part_runs[k], 1);
}

/* One task on a fresh context (on this frame: a thread that touched it
 * after run_task returned would write a dead frame, which TSan and ASan
 * see); true when every part ran once and fn ran once here. */
static bool one_task(mkrt__backend *be, bool wait_for_pool, uint32_t *pool_runs)
{
    task_ctx t = {.wait_for_pool = wait_for_pool};
    if (!be->ops->run_task(be, task_fn, &t))
        return false;
    bool each = true;
    for (uint32_t k = 0; k < TASK_PARTS; k++)
        each &= atomic_load(&t.part_runs[k]) == 1;
    *pool_runs = atomic_load(&t.ran[1]);
    return each && atomic_load(&t.ran[0]) == 1;
}

/* A pool of 2 (one pool thread): deaf to tasks (as if asleep), 200 tasks
 * end with executor 0 alone, none waiting for it; listening, a task
 * whose executor 0 waits for the pool thread gets it, counted once; 5000
 * tasks back to back: every part once, and the pool thread's calls are
 * exactly the entries counted. */
static void cpu_task_needs_no_sleeper(void)
{
    mkrt__backend *be = NULL;
    mkrt_error err;
    if (mkrt__cpu_pool_start(NULL, 2, 16, NULL, &be, &err) != MKRT_OK) {
        ok(false, "a pool of 2 starts: %s", err.message);
        return;
    }
    uint32_t pool_runs = 0, pool_total = 0;
    bool all = true;
    mkrt__cpu_pool_task_deaf(be, true);
    for (int i = 0; i < 200; i++) {
        all &= one_task(be, false, &pool_runs);
        pool_total += pool_runs;
    }
    ok(all && pool_total == 0 && mkrt__cpu_pool_task_entries(be) == 0,
       "200 tasks, the pool thread deaf: each ends on executor 0 alone (%u pool calls, %llu entries)", pool_total,
       (unsigned long long)mkrt__cpu_pool_task_entries(be));
    mkrt__cpu_pool_task_deaf(be, false);
    all = one_task(be, true, &pool_runs);
    ok(all && pool_runs == 1 && mkrt__cpu_pool_task_entries(be) == 1,
       "listening: the pool thread enters a task while executor 0 runs it (%u calls, %llu entries)", pool_runs,
       (unsigned long long)mkrt__cpu_pool_task_entries(be));
    const uint64_t before = mkrt__cpu_pool_task_entries(be);
    pool_total = 0;
    for (int i = 0; i < 5000; i++) {
        all &= one_task(be, false, &pool_runs);
        pool_total += pool_runs;
    }
    ok(all && pool_total == mkrt__cpu_pool_task_entries(be) - before,
       "5000 tasks: every part runs once; the pool thread's calls (%u) are the entries counted (%llu)", pool_total,
       (unsigned long long)(mkrt__cpu_pool_task_entries(be) - before));
    be->ops->stop(be, SEC);
}

int main(void)
{
    cpu_topology_sets_participants();
    cpu_one_or_many();
    cpu_memory_split();
    cpu_narrow_runs_inline();
    cpu_launch_nobody_enters();
    cpu_entries_at_random();
    cpu_workers_follow_cpus();
    cpu_chosen_workers_yield();
    sim_blocks_follow_the_plan();
    cpu_task_needs_no_sleeper();
    return done_testing();
}
