/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_runtime_sim.c - the runtime on MKRT_BACKEND_SIM: the real
 * dispatcher feeding the megakernel protocol (control block, descriptors,
 * doorbell, watchdog) with a host thread playing the device. Same results
 * as the CPU backend; a hung device trips the watchdog, its batch goes to
 * the error path and the runtime carries on with the CPU pool. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/runtime/test_hooks.h"
#include "backend_compare.h"
#include "mkrt/runtime.h"
#include "tap.h"

#define SEC 5000000000ull
#define CELLS 512

typedef struct failures {
    _Atomic uint64_t n;
    mkrt_status last;
} failures;

static void on_error(void *ctx, const mkrt_item *item, mkrt_status why, const char *message)
{
    (void)item;
    (void)message;
    failures *f = ctx;
    f->last = why;
    atomic_fetch_add(&f->n, 1);
}

static mkrt_runtime *start(mkrt_backend_kind kind, failures *f, uint32_t watchdog_ms)
{
    mkrt_config c = mkrt_config_default();
    c.backend = kind;
    c.cells = CELLS;
    c.on_error = on_error;
    c.error_ctx = f;
    c.watchdog_ms = watchdog_ms;
    mkrt_runtime *rt;
    mkrt_error err;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK)
        bail_out("mkrt_create: %s", err.message);
    return rt;
}

/* The same seeded workload on a runtime; returns the cells. */
static void workload(mkrt_runtime *rt, uint64_t *cells_out, uint32_t *log_out, size_t *log_n)
{
    mkrt_producer *a = mkrt_producer_open(rt, NULL), *b = mkrt_producer_open(rt, NULL);
    unsigned seed = 4242;
    mkrt_item buf[200];
    for (int round = 0; round < 300; round++) {
        mkrt__runtime_hold(rt, true); /* deterministic batches: a's then b's */
        for (int who = 0; who < 2; who++) {
            size_t n = 1 + (size_t)(rand_r(&seed) % 200);
            for (size_t i = 0; i < n; i++) {
                uint32_t op = 1 + (uint32_t)rand_r(&seed) % 3; /* STORE, ADD, APPEND */
                buf[i] = (mkrt_item){op, (uint32_t)rand_r(&seed) % CELLS, (uint32_t)rand_r(&seed) % CELLS,
                                     (uint32_t)rand_r(&seed) % 1000};
            }
            mkrt_publish(who ? b : a, buf, n, SEC, NULL);
        }
        mkrt__runtime_hold(rt, false);
        mkrt_drain(rt, SEC);
    }
    for (uint32_t h = 0; h < CELLS; h++)
        mkrt_cell_read(rt, h, &cells_out[h]);
    *log_n = 0;
    for (uint32_t h = 0; h < 8; h++) {
        size_t n = mkrt_append_log_read(rt, h, log_out + *log_n, 4096);
        *log_n += n < 4096 ? n : 4096;
    }
    mkrt_producer_close(a);
    mkrt_producer_close(b);
}

static void same_results_as_cpu(void)
{
    static uint64_t cpu_cells[CELLS], sim_cells[CELLS];
    static uint32_t cpu_log[8 * 4096], sim_log[8 * 4096];
    size_t cpu_n, sim_n;
    failures f = {0, MKRT_OK};
    mkrt_runtime *rt = start(MKRT_BACKEND_CPU, &f, 0);
    workload(rt, cpu_cells, cpu_log, &cpu_n);
    mkrt_destroy(rt, SEC, NULL);
    rt = start(MKRT_BACKEND_SIM, &f, 5000);
    workload(rt, sim_cells, sim_log, &sim_n);
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(memcmp(cpu_cells, sim_cells, sizeof cpu_cells) == 0,
       "600 random batches: the simulated device leaves the same cells as the CPU backend");
    ok(cpu_n == sim_n && memcmp(cpu_log, sim_log, cpu_n * sizeof *cpu_log) == 0,
       "... and the same APPEND logs, in the same order (%zu entries)", sim_n);
    ok(strcmp(s.backend, "sim") == 0 && s.device_batches > 0 && s.device_failures == 0,
       "the batches ran on the device (%llu device batches)", (unsigned long long)s.device_batches);
    ok(s.published == s.executed + s.pruned + s.failed && atomic_load(&f.n) == 0,
       "published = executed + pruned + failed, no failures");
    mkrt_destroy(rt, SEC, NULL);
}

static _Atomic uint64_t user_runs;
static mkrt_status user_op(const mkrt_item *item, const mkrt_op_ctx *ctx)
{
    ctx->cells[item->out] = 7;
    atomic_fetch_add(&user_runs, 1);
    return MKRT_OK;
}

static void routing_and_validation(void)
{
    failures f = {0, MKRT_OK};
    mkrt_runtime *rt = start(MKRT_BACKEND_SIM, &f, 5000);
    mkrt_op_desc d = {.fn = user_op, .name = "user"};
    mkrt_op_register(rt, 20, &d, NULL);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item u[] = {{20, 0, 9, 0}, {MKRT_OP_ADD, 9, 10, 1}};
    bc_one_batch(rt, p, u, 2);
    uint64_t v;
    mkrt_cell_read(rt, 10, &v);
    ok(atomic_load(&user_runs) == 1 && v == 8, "a batch with a user op runs on the CPU pool, in order (8)");
    mkrt_item bad[] = {{MKRT_OP_STORE, 0, CELLS + 5, 1}, {MKRT_OP_STORE, 0, 3, 3}};
    bc_one_batch(rt, p, bad, 2);
    mkrt_cell_read(rt, 3, &v);
    ok(atomic_load(&f.n) == 1 && f.last == MKRT_EINVAL && v == 3,
       "a bad handle in a device batch fails on the host; the rest runs on the device");
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(s.device_failures == 0 && strcmp(s.backend, "sim") == 0, "... and the device stays healthy");
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

static void watchdog(void)
{
    failures f = {0, MKRT_OK};
    mkrt_runtime *rt = start(MKRT_BACKEND_SIM, &f, 100);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item warm[] = {{MKRT_OP_STORE, 0, 1, 5}};
    mkrt_publish(p, warm, 1, SEC, NULL);
    mkrt_drain(rt, SEC);
    mkrt__runtime_hold(rt, true);
    mkrt__runtime_device_hang(rt, 1, 1); /* the next batch hangs after its first layer */
    mkrt_item chain[] = {{MKRT_OP_STORE, 0, 2, 1}, {MKRT_OP_ADD, 2, 3, 1}, {MKRT_OP_ADD, 3, 4, 1}};
    mkrt_publish(p, chain, 3, SEC, NULL);
    mkrt__runtime_hold(rt, false);
    is(mkrt_drain(rt, SEC), MKRT_OK, "a hung device does not hang the runtime");
    ok(atomic_load(&f.n) == 3 && f.last == MKRT_ETIMEDOUT,
       "the watchdog sends every item of the hung batch to the error path (3, MKRT_ETIMEDOUT)");
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(s.device_failures == 1 && strcmp(s.backend, "cpu") == 0, "the device is marked failed");
    ok(strstr(mkrt_backend_describe(rt), "watchdog") != NULL && strstr(mkrt_backend_describe(rt), "layer") != NULL,
       "describe says why, with where the blocks stopped: %.120s", mkrt_backend_describe(rt));
    mkrt_item after[] = {{MKRT_OP_STORE, 0, 5, 40}, {MKRT_OP_ADD, 5, 6, 2}};
    mkrt_publish(p, after, 2, SEC, NULL);
    mkrt_drain(rt, SEC);
    uint64_t v;
    mkrt_cell_read(rt, 6, &v);
    ok(v == 42, "later batches run on the CPU pool (42)");
    mkrt_stats_read(rt, &s);
    ok(s.published == s.executed + s.pruned + s.failed, "published = executed + pruned + failed");
    mkrt_producer_close(p);
    is(mkrt_destroy(rt, SEC, NULL), MKRT_OK, "destroy ends the hung simulated device");
}

/* A device that is slow, not hung: the watchdog trips while the batch
 * still runs. The failed engine stops the device before the CPU pool takes
 * the cells over, so its late writes cannot undo later batches; one that
 * does not stop within another watchdog period is said to. */
static void slow_device(uint32_t watchdog_ms, uint64_t slow_ms, bool stops)
{
    failures f = {0, MKRT_OK};
    mkrt_runtime *rt = start(MKRT_BACKEND_SIM, &f, watchdog_ms);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item warm[] = {{MKRT_OP_STORE, 0, 1, 5}};
    mkrt_publish(p, warm, 1, SEC, NULL);
    mkrt_drain(rt, SEC);
    mkrt__runtime_hold(rt, true);
    /* The next batch's second layer takes slow_ms; its other layers run. */
    mkrt__runtime_device_stall(rt, 1, 1, slow_ms * 1000000u);
    mkrt_item chain[] = {{MKRT_OP_STORE, 0, 2, 1}, {MKRT_OP_ADD, 2, 3, 1}, {MKRT_OP_ADD, 3, 4, 1},
                         {MKRT_OP_ADD, 4, 5, 1}, {MKRT_OP_ADD, 5, 6, 1}};
    mkrt_publish(p, chain, 5, SEC, NULL);
    mkrt__runtime_hold(rt, false);
    is(mkrt_drain(rt, SEC), MKRT_OK, "slow device (%llu ms, watchdog %u ms): the runtime drains",
       (unsigned long long)slow_ms, watchdog_ms);
    ok(atomic_load(&f.n) == 5 && f.last == MKRT_ETIMEDOUT, "... every item of its batch failed (5, ETIMEDOUT)");
    const char *why = mkrt_backend_describe(rt);
    if (stops)
        ok(strstr(why, "device stopped") != NULL, "... the device was stopped first: %.200s", why);
    else
        ok(strstr(why, "did not stop") != NULL, "... describe says the device did not stop: %.200s", why);
    /* A device that did not stop may still write its batch's cells (4 to
     * 6 here): the later batch keeps clear of them then. */
    mkrt_item after[] = {{MKRT_OP_STORE, 0, stops ? 6 : 8, 77}, {MKRT_OP_STORE, 0, stops ? 4 : 9, 78}};
    mkrt_publish(p, after, 2, SEC, NULL);
    mkrt_drain(rt, SEC);
    if (stops) {
        struct timespec nap = {0, (long)(slow_ms + 100) * 1000000L}; /* past the device's would-be end */
        nanosleep(&nap, NULL);
        uint64_t v6, v4;
        mkrt_cell_read(rt, 6, &v6);
        mkrt_cell_read(rt, 4, &v4);
        ok(v6 == 77 && v4 == 78, "... and its late layers did not overwrite the CPU's later stores (%llu, %llu)",
           (unsigned long long)v6, (unsigned long long)v4);
    }
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(s.published == s.executed + s.pruned + s.failed && s.failed == 5, "... published = executed + pruned + "
       "failed, 5 failed");
    mkrt_producer_close(p);
    is(mkrt_destroy(rt, SEC, NULL), MKRT_OK, "... destroy ends the device");
}

int main(void)
{
    same_results_as_cpu();
    routing_and_validation();
    watchdog();
    slow_device(200, 300, true);
    slow_device(100, 500, false);
    return done_testing();
}
