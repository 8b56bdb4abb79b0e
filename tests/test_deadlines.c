/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_deadlines.c - a waiter that runs batches itself (helping, on
 * the CPU backend) keeps its deadline (issue 22, defect 1): mkrt_wait,
 * mkrt_drain and mkrt_quiesce asked for 50 ms on a batch of 100 ops of
 * 20 ms each return MKRT_ETIMEDOUT soon after 50 ms (at worst after the op
 * the waiter is running returns; the bound allows that op and 500 ms of
 * slack for a loaded machine), and the rest of the batch still runs, each
 * item exactly once (also for a batch of 300 shorter ops, which the
 * helper leaves to the workers whole). The dispatcher thread dozes (a test hook) so that
 * only the waiter can take the batch: the case that ran the whole batch
 * on the waiter. With one worker the batch runs on the waiter's thread
 * (and its rest on the worker); with two it runs on the workers while
 * the waiter waits for them. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../src/runtime/test_hooks.h"
#include "mkrt/runtime.h"
#include "tap.h"

#define SEC 1000000000ull
#define MS 1000000ull
#define ITEMS 100
#define OP_MS 20
#define MANY 300   /* more items of user ops than a helper runs on its thread */
#define MANY_MS 2
#define ASK_MS 50
#define SLACK_MS 500
#define OP_SLOW 20 /* sleeps param ms, counts its run of item `out` */
#define OP_FAN 21  /* emits ITEMS OP_SLOW items */

static _Atomic uint32_t runs[MANY];

static mkrt_status op_slow(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    (void)ctx;
    struct timespec ts = {0, (long)it->param * 1000000L};
    nanosleep(&ts, NULL);
    if (it->out < MANY)
        atomic_fetch_add(&runs[it->out], 1);
    return MKRT_OK;
}

static mkrt_status op_fan(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    (void)it;
    mkrt_item slow[ITEMS];
    for (uint32_t i = 0; i < ITEMS; i++)
        slow[i] = (mkrt_item){OP_SLOW, i, i, OP_MS};
    return mkrt_op_emit(ctx, slow, ITEMS);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

static void reset_runs(void)
{
    for (int i = 0; i < MANY; i++)
        atomic_store(&runs[i], 0);
}

/* Each of the n items ran exactly once, and the counters add up. */
static void check_n(mkrt_runtime *rt, const char *what, int n)
{
    ok(mkrt_quiesce(rt, 30 * SEC) == MKRT_OK, "%s: the rest of the batch completes", what);
    int once = 0;
    for (int i = 0; i < n; i++)
        once += atomic_load(&runs[i]) == 1;
    is(once, n, "%s: each of the %d items ran exactly once", what, n);
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    is(s.published + s.emitted, s.executed + s.pruned + s.failed,
       "%s: published + emitted = executed + pruned + failed", what);
    is(s.failed, 0, "%s: nothing failed", what);
}

static mkrt_runtime *start(uint32_t workers, mkrt_producer **p)
{
    mkrt_config cfg = mkrt_config_default();
    cfg.backend = MKRT_BACKEND_CPU;
    cfg.cells = 1024;
    cfg.workers = workers;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&cfg, &rt, &err) != MKRT_OK)
        bail_out("create: %s", err.message);
    mkrt_op_desc slow = {.fn = op_slow, .name = "slow"}, fan = {.fn = op_fan, .name = "fan"};
    if (mkrt_op_register(rt, OP_SLOW, &slow, &err) != MKRT_OK ||
        mkrt_op_register(rt, OP_FAN, &fan, &err) != MKRT_OK)
        bail_out("register: %s", err.message);
    if ((*p = mkrt_producer_open(rt, &err)) == NULL)
        bail_out("open: %s", err.message);
    return rt;
}

static void check_once(mkrt_runtime *rt, const char *what)
{
    check_n(rt, what, ITEMS);
}

static uint64_t publish_n(mkrt_producer *p, uint32_t n, uint32_t ms)
{
    mkrt_item items[MANY];
    for (uint32_t i = 0; i < n; i++)
        items[i] = (mkrt_item){OP_SLOW, i, i, ms};
    uint64_t t = 0;
    if (mkrt_publish(p, items, n, SEC, NULL) != MKRT_OK || mkrt_fence(p, &t) != MKRT_OK)
        bail_out("publish");
    return t;
}

static uint64_t publish_batch(mkrt_producer *p)
{
    return publish_n(p, ITEMS, OP_MS);
}

static void within(uint64_t t0, mkrt_status st, const char *what)
{
    uint64_t ms = (now_ns() - t0) / MS;
    is(st, MKRT_ETIMEDOUT, "%s (%d ms asked): MKRT_ETIMEDOUT", what, ASK_MS);
    ok(ms <= ASK_MS + OP_MS + SLACK_MS, "%s returned after %llu ms (bound %d ms: the deadline, one op, slack)",
       what, (unsigned long long)ms, ASK_MS + OP_MS + SLACK_MS);
}

static void run(uint32_t workers)
{
    char what[64];
    mkrt_producer *p;
    mkrt_runtime *rt = start(workers, &p);
    mkrt__runtime_doze(rt, true); /* only waiters run batches */

    /* mkrt_wait */
    reset_runs();
    uint64_t t = publish_batch(p);
    uint64_t t0 = now_ns();
    snprintf(what, sizeof what, "%u worker(s): mkrt_wait", workers);
    within(t0, mkrt_wait(p, t, ASK_MS * MS), what);
    ok(mkrt_wait(p, t, 30 * SEC) == MKRT_OK, "%s: a later wait sees the ticket complete", what);
    check_once(rt, what);

    /* mkrt_drain */
    reset_runs();
    publish_batch(p);
    t0 = now_ns();
    snprintf(what, sizeof what, "%u worker(s): mkrt_drain", workers);
    within(t0, mkrt_drain(rt, ASK_MS * MS), what);
    check_once(rt, what);

    /* mkrt_quiesce: the published item completes first, then its
     * emitted batch of slow items is what the call helps with. */
    reset_runs();
    mkrt_item fan = {OP_FAN, 0, 500, 0};
    if (mkrt_publish(p, &fan, 1, SEC, NULL) != MKRT_OK || mkrt_fence(p, &t) != MKRT_OK ||
        mkrt_wait(p, t, 30 * SEC) != MKRT_OK)
        bail_out("fan");
    t0 = now_ns();
    snprintf(what, sizeof what, "%u worker(s): mkrt_quiesce", workers);
    within(t0, mkrt_quiesce(rt, ASK_MS * MS), what);
    check_once(rt, what);

    /* A batch of more user ops than a helper runs on its own thread goes
     * to the workers whole; the waiter still keeps its deadline. */
    reset_runs();
    t = publish_n(p, MANY, MANY_MS);
    t0 = now_ns();
    snprintf(what, sizeof what, "%u worker(s): mkrt_wait on %d items", workers, MANY);
    within(t0, mkrt_wait(p, t, ASK_MS * MS), what);
    check_n(rt, what, MANY);

    /* The dispatcher takes over what a waiter leaves. */
    reset_runs();
    t = publish_batch(p);
    snprintf(what, sizeof what, "%u worker(s): left to the dispatcher", workers);
    t0 = now_ns();
    within(t0, mkrt_wait(p, t, ASK_MS * MS), what);
    mkrt__runtime_doze(rt, false);
    check_once(rt, what);

    mkrt_producer_close(p);
    mkrt_error err;
    ok(mkrt_destroy(rt, 30 * SEC, &err) == MKRT_OK, "%u worker(s): destroy", workers);
}

int main(void)
{
    run(1);
    run(2);
    return done_testing();
}
