/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_quiesce_load.c - mkrt_quiesce ends under load (issue 22,
 * defect 3): while other producers keep publishing items whose ops emit
 * (chains of emitted items) and built-in items, a thread publishes its own
 * chains and quiesces. Every call returns MKRT_OK (the liveness promise),
 * and when it does, each of the caller's chains has run to its end (the
 * snapshot promise: everything published before the call and all it
 * emitted, transitively). On the CPU backend and on MKRT_BACKEND_SIM
 * (whose device runs the built-in batches). No timing is asserted: a call
 * that never ended would fail at its (generous) timeout. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/thread.h"
#include "mkrt/runtime.h"
#include "tap.h"

#define SEC 1000000000ull
#define OP_CHAIN 20   /* param > 0: emits itself with param - 1; 0: cells[out] += 1 */
#define LOADERS 2     /* producers that keep publishing */
#define MINE 64       /* chains the quiescing thread publishes per round */
#define DEPTH 4       /* links per chain */
#define ROUNDS 3
#define MINE_BASE 4096 /* the quiescing thread's cells (one per chain) */

static _Atomic int stop;

/* Each link takes a few microseconds, so that the dispatcher is never
 * idle while the loaders publish: their rings refill while a batch runs
 * (the runtime is never quiet, the case where quiescence never came). */
static void spin_us(uint64_t us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((uint64_t)(b.tv_sec - a.tv_sec) * SEC + (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec < us * 1000u);
}

static mkrt_status op_chain(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    spin_us(5);
    if (it->param == 0) {
        ctx->cells[it->out] += 1;
        return MKRT_OK;
    }
    mkrt_item next = {OP_CHAIN, it->in, it->out, it->param - 1};
    return mkrt_op_emit(ctx, &next, 1);
}

typedef struct loader {
    mkrt_runtime *rt;
    int index;
    uint64_t published;
} loader;

/* Publishes chains (and built-in ADDs) until told to stop. */
static int load(void *arg)
{
    loader *l = arg;
    mkrt_error err;
    mkrt_producer *p = mkrt_producer_open(l->rt, &err);
    if (p == NULL)
        return 1;
    mkrt_item items[128];
    uint32_t k = 0;
    while (!atomic_load(&stop)) {
        for (int i = 0; i < 128; i++, k++) {
            uint32_t h = (uint32_t)l->index * 1024 + k % 1024;
            items[i] = i % 2 ? (mkrt_item){MKRT_OP_ADD, h, h, 1} : (mkrt_item){OP_CHAIN, h, h, DEPTH};
        }
        size_t done = 0;
        mkrt_publish_some(p, items, 128, SEC / 10, &done, NULL);
        l->published += done;
    }
    uint64_t t;
    if (mkrt_fence(p, &t) == MKRT_OK)
        mkrt_wait(p, t, 30 * SEC);
    mkrt_producer_close(p);
    return 0;
}

static void run(mkrt_backend_kind kind, const char *name)
{
    mkrt_config cfg = mkrt_config_default();
    cfg.backend = kind;
    cfg.cells = 8192;
    cfg.max_batch = 1024;     /* what a batch emits fits the emission queue */
    cfg.ring_capacity = 1024; /* a small snapshot: each quiesce waits for what the rings hold */
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&cfg, &rt, &err) != MKRT_OK)
        bail_out("%s: create: %s", name, err.message);
    mkrt_op_desc chain = {.fn = op_chain, .name = "chain"};
    if (mkrt_op_register(rt, OP_CHAIN, &chain, &err) != MKRT_OK)
        bail_out("%s: register: %s", name, err.message);
    mkrt_producer *p = mkrt_producer_open(rt, &err);
    if (p == NULL)
        bail_out("%s: open: %s", name, err.message);
    atomic_store(&stop, 0);
    mkrt__thread th[LOADERS];
    loader ls[LOADERS];
    for (int i = 0; i < LOADERS; i++) {
        ls[i] = (loader){rt, i, 0};
        if (mkrt__thread_start(&th[i], load, &ls[i]) != 0)
            bail_out("thread");
    }
    /* Let the load build up. */
    struct timespec ts = {0, 50000000L};
    nanosleep(&ts, NULL);
    int ended = 0, complete = 0;
    for (int round = 1; round <= ROUNDS; round++) {
        mkrt_item mine[MINE];
        for (uint32_t i = 0; i < MINE; i++)
            mine[i] = (mkrt_item){OP_CHAIN, MINE_BASE + i, MINE_BASE + i, DEPTH};
        if (mkrt_publish(p, mine, MINE, 10 * SEC, NULL) != MKRT_OK)
            bail_out("%s: publish", name);
        mkrt_status st = mkrt_quiesce(rt, 20 * SEC);
        ended += st == MKRT_OK;
        uint64_t cells[MINE];
        mkrt_cells_read(rt, MINE_BASE, MINE, cells);
        int done = 0;
        for (int i = 0; i < MINE; i++)
            done += cells[i] == (uint64_t)round;
        complete += done == MINE;
        if (st != MKRT_OK || done != MINE)
            diag("%s: round %d: quiesce %s, %d of %d chains ended", name, round, mkrt_status_name(st),
                 done, MINE);
    }
    is(ended, ROUNDS, "%s: every quiesce under emitting load returned MKRT_OK", name);
    is(complete, ROUNDS, "%s: and then every chain of the caller had run to its end", name);
    atomic_store(&stop, 1);
    uint64_t loaded = 0;
    for (int i = 0; i < LOADERS; i++) {
        mkrt__thread_join(th[i]);
        loaded += ls[i].published;
    }
    ok(loaded > 0, "%s: the other producers published meanwhile (%llu items)", name,
       (unsigned long long)loaded);
    ok(mkrt_quiesce(rt, 30 * SEC) == MKRT_OK, "%s: quiescent once the load stopped", name);
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    is(s.published, loaded + (uint64_t)MINE * ROUNDS, "%s: every publish counted", name);
    is(s.published + s.emitted, s.executed + s.pruned + s.failed,
       "%s: published + emitted = executed + pruned + failed", name);
    is(s.failed, 0, "%s: nothing failed", name);
    mkrt_producer_close(p);
    ok(mkrt_destroy(rt, 30 * SEC, &err) == MKRT_OK, "%s: destroy", name);
}

int main(void)
{
    run(MKRT_BACKEND_CPU, "cpu");
    run(MKRT_BACKEND_SIM, "sim");
    return done_testing();
}
