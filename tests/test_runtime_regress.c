/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_runtime_regress.c - regression tests for the defects that
 * independent testing found in the runtime (issue "Nothing lost, nothing
 * corrupted"), one group per defect, on the public API (plus the test hooks
 * that hold the dispatcher and hang the simulated device):
 *   config bounds and checked sizes; user-op handles checked on every
 *   backend; producer close racing destroy; device failures keep refused
 *   items; a never-issued ticket; NULL arguments on every runtime call;
 *   registration after open / after a failed open; the APPEND log shows only
 *   completed entries and can be consumed (also concurrently); dedupe never
 *   changes results (non-idempotent duplicates, writes in between). */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>

#include "../src/runtime/runtime_internal.h"
#include "base/thread.h"
#include "count_alloc.h"
#include "mkrt/runtime.h"
#include "tap.h"

#define SEC 5000000000ull
#define CELLS 256
#define OP_ACC 20   /* out += param (not idempotent) */
#define OP_MAX 21   /* out = max(out, param) (idempotent) */
#define OP_TOUCH 22 /* counts calls; writes nothing */
#define OP_BLOCK 23 /* waits for the test's go-ahead */

typedef struct failures {
    _Atomic uint64_t n;
    _Atomic uint64_t by_status[16]; /* index -status */
} failures;

static void on_error(void *ctx, const mkrt_item *item, mkrt_status why, const char *message)
{
    (void)item;
    (void)message;
    failures *f = ctx;
    atomic_fetch_add(&f->n, 1);
    if (why < 0 && why > -16)
        atomic_fetch_add(&f->by_status[-why], 1);
}

static uint64_t failed_with(failures *f, mkrt_status why)
{
    return atomic_load(&f->by_status[-why]);
}

static _Atomic uint64_t touch_calls;
static _Atomic int block_started, block_go;

static mkrt_status op_acc(const mkrt_item *it, const mkrt_op_ctx *c)
{
    c->cells[it->out] += it->param;
    return MKRT_OK;
}

static mkrt_status op_max(const mkrt_item *it, const mkrt_op_ctx *c)
{
    if (c->cells[it->out] < it->param)
        c->cells[it->out] = it->param;
    return MKRT_OK;
}

static mkrt_status op_touch(const mkrt_item *it, const mkrt_op_ctx *c)
{
    (void)c->cells[it->in]; /* the promise: cells[in] and cells[out] are valid */
    (void)c->cells[it->out];
    atomic_fetch_add(&touch_calls, 1);
    return MKRT_OK;
}

static mkrt_status op_block(const mkrt_item *it, const mkrt_op_ctx *c)
{
    (void)it;
    (void)c;
    atomic_store(&block_started, 1);
    while (!atomic_load(&block_go))
        sched_yield();
    return MKRT_OK;
}

static mkrt_config config(mkrt_backend_kind kind, failures *f)
{
    mkrt_config c = mkrt_config_default();
    c.backend = kind;
    c.cells = CELLS;
    c.workers = 2;
    c.on_error = f ? on_error : NULL;
    c.error_ctx = f;
    return c;
}

static mkrt_runtime *start(const mkrt_config *c)
{
    mkrt_runtime *rt;
    mkrt_error err;
    if (mkrt_create(c, &rt, &err) != MKRT_OK)
        bail_out("mkrt_create: %s", err.message);
    mkrt_op_desc acc = {.fn = op_acc, .name = "acc"};
    mkrt_op_desc max = {.fn = op_max, .name = "max", .idempotent = true};
    mkrt_op_desc touch = {.fn = op_touch, .name = "touch"};
    mkrt_op_desc block = {.fn = op_block, .name = "block"};
    if (mkrt_op_register(rt, OP_ACC, &acc, &err) || mkrt_op_register(rt, OP_MAX, &max, &err) ||
        mkrt_op_register(rt, OP_TOUCH, &touch, &err) || mkrt_op_register(rt, OP_BLOCK, &block, &err))
        bail_out("mkrt_op_register: %s", err.message);
    return rt;
}

static void stop(mkrt_runtime *rt)
{
    mkrt_error err;
    if (mkrt_destroy(rt, SEC, &err) != MKRT_OK)
        bail_out("mkrt_destroy: %s", err.message);
}

/* Publishes items as one batch (the dispatcher is held meanwhile) and
 * waits for them. */
static void run_batch(mkrt_runtime *rt, mkrt_producer *p, const mkrt_item *items, size_t n)
{
    mkrt__runtime_hold(rt, true);
    if (mkrt_publish(p, items, n, SEC, NULL) != MKRT_OK)
        bail_out("publish failed");
    mkrt__runtime_hold(rt, false);
    uint64_t t;
    mkrt_fence(p, &t);
    if (mkrt_wait(p, t, SEC) != MKRT_OK)
        bail_out("wait failed");
}

static uint64_t cell(mkrt_runtime *rt, uint32_t h)
{
    uint64_t v = 0;
    mkrt_cell_read(rt, h, &v);
    return v;
}

static void accounting_ok(mkrt_runtime *rt, const char *what)
{
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    is(s.published, s.executed + s.pruned + s.failed, "%s: published = executed + pruned + failed", what);
}

/* Defect 1: every config field has a bound; sizes are checked. */
static void test_config_bounds(void)
{
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    mkrt_config c;
#define REFUSED(field, stmt)                                                                       \
    do {                                                                                           \
        c = mkrt_config_default();                                                                 \
        stmt;                                                                                      \
        rt = (mkrt_runtime *)1;                                                                    \
        mkrt_status st_ = mkrt_create(&c, &rt, &err);                                              \
        ok(st_ == MKRT_EINVAL && rt == NULL, "config %s: refused with EINVAL (%d)", #stmt, st_);    \
        like(err.message, field, "  the message names %s", field);                                 \
        like(err.message, "Fix:", "  and says how to fix it");                                     \
    } while (0)
    REFUSED("append_log_capacity", c.append_log_capacity = SIZE_MAX / 8 + 2);
    REFUSED("append_log_capacity", c.append_log_capacity = SIZE_MAX);
    REFUSED("append_log_capacity", c.append_log_capacity = MKRT_CONFIG_APPEND_LOG_MAX + 1);
    REFUSED("cells", c.cells = 0);
    REFUSED("cells", c.cells = UINT32_MAX);
    REFUSED("ring_capacity", c.ring_capacity = 3);
    REFUSED("ring_capacity", c.ring_capacity = (size_t)1 << 62);
    REFUSED("max_batch", c.max_batch = 0);
    REFUSED("max_batch", c.max_batch = SIZE_MAX);
    REFUSED("max_producers", c.max_producers = 0);
    REFUSED("max_producers", c.max_producers = UINT32_MAX);
    REFUSED("burst_per_ring", c.burst_per_ring = 0);
    REFUSED("burst_per_ring", c.burst_per_ring = MKRT_CONFIG_MAX_BATCH_MAX + 1);
    c = mkrt_config_default();
    c.max_batch = 16; /* the default burst (1024) is more than a batch: taken 16 at a time */
    is(mkrt_create(&c, &rt, &err), MKRT_OK, "max_batch 16 with the default burst_per_ring is fine");
    if (rt != NULL)
        mkrt_destroy(rt, SEC, NULL);
    REFUSED("workers", c.workers = UINT32_MAX);
    REFUSED("dead_letter_capacity", c.dead_letter_capacity = 0);
    REFUSED("dead_letter_capacity", c.dead_letter_capacity = (size_t)1 << 40);
    REFUSED("backend", c.backend = (mkrt_backend_kind)99);
    REFUSED("cuda_max_blocks", c.cuda_max_blocks = UINT32_MAX);
    REFUSED("device_idle_us", c.device_idle_us = MKRT_CONFIG_DEVICE_US_MAX + 1);
    REFUSED("device_resident_us", c.device_resident_us = UINT32_MAX);
    REFUSED("cuda_device_state", c.cuda_device_state = 2);
    REFUSED("cuda_blocks_per_sm", c.cuda_blocks_per_sm = MKRT_CONFIG_CUDA_BLOCKS_MAX + 1);
    REFUSED("cuda_user_ptx", c.cuda_user_ptx_size = 10);
#undef REFUSED
    is(mkrt_create(NULL, NULL, &err), MKRT_EINVAL, "mkrt_create(NULL result) is EINVAL");

    /* A small log: APPENDs past it fail with EOVERFLOW and nothing is
     * written past the log (ASan watches). */
    failures f = {0};
    c = config(MKRT_BACKEND_CPU, &f);
    c.append_log_capacity = 3;
    rt = start(&c);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item items[10];
    for (uint32_t i = 0; i < 10; i++)
        items[i] = (mkrt_item){MKRT_OP_APPEND, 0, i, i};
    run_batch(rt, p, items, 10);
    is(failed_with(&f, MKRT_EOVERFLOW), 7, "append_log_capacity 3: 7 of 10 APPENDs overflow");
    mkrt_append_entry e[16];
    is(mkrt_append_log_consume(rt, e, 16), 3, "and 3 are in the log");
    accounting_ok(rt, "small log");
    mkrt_producer_close(p);
    stop(rt);

    c = config(MKRT_BACKEND_CPU, &f);
    c.append_log_capacity = 0;
    memset(&f, 0, sizeof f);
    rt = start(&c);
    p = mkrt_producer_open(rt, NULL);
    run_batch(rt, p, items, 2);
    is(failed_with(&f, MKRT_EOVERFLOW), 2, "append_log_capacity 0: every APPEND overflows");
    mkrt_producer_close(p);
    stop(rt);
}

/* Defect 2: user ops never see handles beyond the cells, on any backend. */
static void test_user_op_handles(mkrt_backend_kind kind, const char *name)
{
    failures f = {0};
    mkrt_config c = config(kind, &f);
    c.watchdog_ms = 2000;
    mkrt_runtime *rt = start(&c);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    atomic_store(&touch_calls, 0);
    mkrt_item items[] = {
        {OP_TOUCH, CELLS, 0, 1},      {OP_TOUCH, 0, CELLS, 2},          {OP_TOUCH, UINT32_MAX, 1, 3},
        {OP_TOUCH, 2, UINT32_MAX, 4}, {OP_TOUCH, 3, 4, 5},              {MKRT_OP_STORE, 0, CELLS, 1},
        {MKRT_OP_ADD, CELLS, 5, 1},   {MKRT_OP_APPEND, 0, CELLS + 9, 1}, {4000, 0, 0, 0},
    };
    run_batch(rt, p, items, sizeof items / sizeof *items);
    is(atomic_load(&touch_calls), 1, "%s: the user op ran only for its in-range item", name);
    is(failed_with(&f, MKRT_EINVAL), 7, "%s: 7 out-of-range items failed with EINVAL", name);
    is(failed_with(&f, MKRT_ENOTSUP), 1, "%s: the unknown op failed with ENOTSUP", name);
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    is(s.layers, 1, "%s: refused items added no layer", name);
    accounting_ok(rt, name);
    mkrt_producer_close(p);
    stop(rt);
}

/* Defect 3: mkrt_producer_close racing mkrt_destroy (TSan/ASan see the
 * use-after-free; a lost race used to spin for ever). The threads come
 * from base/thread.h, pthreads under TSan (glibc's thrd_create bypasses
 * TSan's interceptor: see there). */
typedef struct closer {
    mkrt_producer *p;
    _Atomic int *go;
    int publish;
} closer;

static int closer_main(void *arg)
{
    closer *c = arg;
    while (!atomic_load(c->go))
        sched_yield();
    mkrt_item it = {MKRT_OP_STORE, 0, 1, 1};
    for (int i = 0; i < c->publish; i++)
        if (mkrt_publish(c->p, &it, 1, 1000000, NULL) == MKRT_ECLOSED)
            break;
    uint64_t t;
    if (mkrt_fence(c->p, &t) == MKRT_OK)
        (void)mkrt_wait(c->p, t, 1000000);
    mkrt_producer_close(c->p);
    return 0;
}

/* Admission proves most batches whole from the ORs and ANDs of their ops
 * and handles; those are only bounds, so every batch they cannot prove
 * must still get the item-by-item answer: handles whose OR passes a cell
 * count that is not a power of two, a spread wider than the layering's
 * direct table, an op from 8 up, RELAX without a graph, APPENDs. */
static void test_admission_bounds(mkrt_backend_kind kind, const char *name)
{
    failures f = {0};
    mkrt_config c = config(kind, &f);
    c.cells = 1000;
    mkrt_runtime *rt = start(&c);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    const mkrt_item near[] = {{MKRT_OP_STORE, 0, 999, 7},  {MKRT_OP_STORE, 0, 24, 8},
                              {MKRT_OP_STORE, 0, 512, 9},  {MKRT_OP_STORE, 0, 511, 10},
                              {MKRT_OP_ADD, 999, 998, 1}};
    run_batch(rt, p, near, sizeof near / sizeof *near);
    ok(cell(rt, 999) == 7 && cell(rt, 24) == 8 && cell(rt, 512) == 9 && cell(rt, 511) == 10 &&
           cell(rt, 998) == 8 && atomic_load(&f.n) == 0,
       "%s: handles below 1000 cells whose OR is 1023 all run", name);
    const mkrt_item mixed[] = {{MKRT_OP_STORE, 0, 998, 5},  {MKRT_OP_STORE, 0, 1000, 6},
                               {MKRT_OP_RELAX, 1, 2, 1},    {9, 1, 2, 3},
                               {MKRT_OP_APPEND, 0, 3, 42}, {MKRT_OP_STORE, 0, 3, 11}};
    run_batch(rt, p, mixed, sizeof mixed / sizeof *mixed);
    is(failed_with(&f, MKRT_EINVAL), 1, "%s: the handle at the cell count is refused", name);
    is(failed_with(&f, MKRT_ENOTSUP), 2, "%s: RELAX without a graph and op 9 are refused", name);
    ok(cell(rt, 998) == 5 && cell(rt, 3) == 11, "%s: the rest of that batch ran", name);
    mkrt_append_entry e[2];
    is(mkrt_append_log_consume(rt, e, 2), 1, "%s: its APPEND is in the log", name);
    accounting_ok(rt, name);
    mkrt_producer_close(p);
    stop(rt);

    mkrt_config w = config(kind, &f);
    w.cells = 1u << 20;
    rt = start(&w);
    p = mkrt_producer_open(rt, NULL);
    const mkrt_item wide[] = {{MKRT_OP_STORE, 0, 5, 3},         {MKRT_OP_STORE, 0, 1000000, 4},
                              {MKRT_OP_ADD, 5, 1000000, 10},    {MKRT_OP_ADD, 1000000, 5, 1},
                              {MKRT_OP_STORE, 0, (1u << 20) - 1, 2}};
    run_batch(rt, p, wide, sizeof wide / sizeof *wide);
    ok(cell(rt, 1000000) == 13 && cell(rt, 5) == 14 && cell(rt, (1u << 20) - 1) == 2,
       "%s: handles 5 to 2^20 - 1 in one batch run in order", name);
    accounting_ok(rt, name);
    mkrt_producer_close(p);
    stop(rt);
}

/* A publish that entered before mkrt_destroy set closing, and pushes only
 * after the dispatcher found the rings empty, must still run: destroy's
 * caller saw mkrt_publish return OK. The producer waits on a full ring
 * while destroy is held between closing and closing the rings; the
 * dispatcher is then released, drains the ring and completes everything
 * published so far, and the waiting publish pushes its last item. The
 * dispatcher used to stop there (closing, rings empty, totals equal) and
 * leave that item in a ring nobody drained. */
typedef struct late_publisher {
    mkrt_producer *p;
    mkrt_item it;
    _Atomic int inside;
    mkrt_status st;
} late_publisher;

static int late_publisher_main(void *arg)
{
    late_publisher *lp = arg;
    atomic_store(&lp->inside, 1);
    lp->st = mkrt_publish(lp->p, &lp->it, 1, SEC, NULL);
    return 0;
}

typedef struct destroyer {
    mkrt_runtime *rt;
    mkrt_status st;
} destroyer;

static int destroyer_main(void *arg)
{
    destroyer *d = arg;
    d->st = mkrt_destroy(d->rt, SEC, NULL);
    return 0;
}

static void test_publish_outlives_dispatcher_check(void)
{
    enum { CAP = 16 };
    int rounds = 20, kept = 0, clean = 0;
    for (int r = 0; r < rounds; r++) {
        mkrt_config c = config(MKRT_BACKEND_CPU, NULL);
        c.workers = 1;
        c.ring_capacity = CAP;
        mkrt_runtime *rt = start(&c);
        atomic_store(&touch_calls, 0);
        mkrt_producer *p = mkrt_producer_open(rt, NULL);
        mkrt__runtime_hold(rt, true);
        mkrt_item fill[CAP];
        for (int i = 0; i < CAP; i++)
            fill[i] = (mkrt_item){OP_TOUCH, 0, 1, (uint32_t)i};
        if (mkrt_publish(p, fill, CAP, SEC, NULL) != MKRT_OK)
            bail_out("filling the ring");
        late_publisher lp = {p, {OP_TOUCH, 0, 1, CAP}, 0, MKRT_EINVAL};
        mkrt__thread pt, dt;
        mkrt__thread_start(&pt, late_publisher_main, &lp);
        while (!atomic_load(&lp.inside) || !(atomic_load(&p->state) & MKRT__PRODUCER_BUSY))
            sched_yield();
        for (int i = 0; i < 1000; i++) /* into its wait for room */
            sched_yield();
        mkrt__runtime_destroy_hold(rt, true);
        destroyer d = {rt, MKRT_EINVAL};
        mkrt__thread_start(&dt, destroyer_main, &d);
        while (!atomic_load(&rt->closing))
            sched_yield();
        mkrt__runtime_hold(rt, false);
        mkrt__thread_join(pt); /* the last item is in the ring (or refused) */
        mkrt__runtime_destroy_hold(rt, false);
        mkrt__thread_join(dt);
        uint64_t ran = atomic_load(&touch_calls);
        kept += ran == (uint64_t)CAP + (lp.st == MKRT_OK);
        clean += d.st == MKRT_OK;
        if (ran != (uint64_t)CAP + (lp.st == MKRT_OK) || d.st != MKRT_OK)
            diag("round %d: publish %s, %llu ran, destroy %s", r, mkrt_status_name(lp.st),
                 (unsigned long long)ran, mkrt_status_name(d.st));
        mkrt_producer_close(p);
    }
    is(kept, rounds, "late publish: %d rounds, every acknowledged item ran", rounds);
    is(clean, rounds, "late publish: %d rounds, every destroy returned OK", rounds);
}

static void test_close_races_destroy(void)
{
    int rounds = 150, clean = 0;
    for (int r = 0; r < rounds; r++) {
        mkrt_config c = config(MKRT_BACKEND_CPU, NULL);
        c.workers = 1;
        mkrt_runtime *rt;
        if (mkrt_create(&c, &rt, NULL) != MKRT_OK)
            bail_out("create");
        _Atomic int go = 0;
        closer cl[4];
        mkrt__thread th[4];
        for (int i = 0; i < 4; i++) {
            cl[i] = (closer){mkrt_producer_open(rt, NULL), &go, r % 3 * 20};
            mkrt__thread_start(&th[i], closer_main, &cl[i]);
        }
        atomic_store(&go, 1);
        if (r % 2)
            sched_yield();
        mkrt_error e = {0};
        mkrt_status st = mkrt_destroy(rt, SEC, &e);
        for (int i = 0; i < 4; i++)
            mkrt__thread_join(th[i]);
        if (st != MKRT_OK)
            diag("round %d: mkrt_destroy returned %s: %s", r, mkrt_status_name(st), e.message);
        clean += st == MKRT_OK;
    }
    is(clean, rounds, "close racing destroy: %d rounds, every destroy returned OK", rounds);
}

/* Defect 4: a device failure keeps the items refused while its batch was
 * planned (they used to vanish and count as executed). */
static void test_device_failure_keeps_refused(void)
{
    failures f = {0};
    mkrt_config c = config(MKRT_BACKEND_SIM, &f);
    c.watchdog_ms = 100;
    mkrt_runtime *rt = start(&c);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item items[] = {
        {MKRT_OP_STORE, 0, 1, 5}, {MKRT_OP_ADD, 1, 2, 1}, {MKRT_OP_STORE, 0, CELLS + 1, 5},
        {3000, 0, 0, 0},          {MKRT_OP_ADD, 2, 3, 1}, {MKRT_OP_APPEND, 0, 7, 1},
    };
    mkrt__runtime_hold(rt, true);
    mkrt__runtime_device_hang(rt, 1, 1);
    mkrt_publish(p, items, 6, SEC, NULL);
    mkrt__runtime_hold(rt, false);
    uint64_t t;
    mkrt_fence(p, &t);
    is(mkrt_wait(p, t, SEC), MKRT_OK, "device failure: the batch completes (on the error path)");
    is(atomic_load(&f.n), 6, "every item of the batch reached the error callback");
    is(failed_with(&f, MKRT_EINVAL), 1, "the bad handle with its own status");
    is(failed_with(&f, MKRT_ENOTSUP), 1, "the unknown op with its own status");
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    is(s.failed, 6, "all 6 counted failed");
    is(s.executed, 0, "none counted executed");
    is(s.device_failures, 1, "one device failure");
    accounting_ok(rt, "device failure");
    /* The runtime carries on on the CPU. */
    memset(&f, 0, sizeof f);
    run_batch(rt, p, items, 2);
    is(cell(rt, 2), 6, "after the failure, batches run on the CPU");
    mkrt_producer_close(p);
    stop(rt);
}

/* Defect 5: a ticket that was never issued is refused at once. */
static void test_wait_unissued(void)
{
    mkrt_config c = config(MKRT_BACKEND_CPU, NULL);
    mkrt_runtime *rt = start(&c);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    is(mkrt_wait(p, 1, MKRT_TIMEOUT_INFINITE), MKRT_EINVAL, "wait(ticket 1) before any publish: EINVAL");
    mkrt_item it = {MKRT_OP_STORE, 0, 1, 1};
    mkrt_publish(p, &it, 1, SEC, NULL);
    uint64_t t;
    mkrt_fence(p, &t);
    is(mkrt_wait(p, t + 1, MKRT_TIMEOUT_INFINITE), MKRT_EINVAL, "wait(fence + 1): EINVAL");
    is(mkrt_wait(p, UINT64_MAX, MKRT_TIMEOUT_INFINITE), MKRT_EINVAL, "wait(UINT64_MAX): EINVAL");
    is(mkrt_wait(p, t, SEC), MKRT_OK, "wait(fence): OK");
    is(mkrt_wait(p, 0, 0), MKRT_OK, "wait(0): OK at once");
    mkrt_producer_close(p);
    stop(rt);
}

/* Defect 6: NULL arguments to every runtime call. */
static void test_null_arguments(void)
{
    mkrt_error err;
    mkrt_item it = {0, 0, 0, 0};
    uint64_t v;
    mkrt_op_desc d = {.fn = op_acc};
    is(mkrt_op_register(NULL, OP_ACC, &d, &err), MKRT_EINVAL, "op_register(NULL rt)");
    like(err.message, "Fix:", "  with a Fix");
    mkrt_producer *p = mkrt_producer_open(NULL, &err);
    ok(p == NULL && err.status == MKRT_EINVAL, "producer_open(NULL rt) is NULL + EINVAL");
    mkrt_producer_close(NULL);
    is(mkrt_publish(NULL, &it, 1, 0, &err), MKRT_EINVAL, "publish(NULL producer)");
    is(mkrt_try_publish(NULL, &it, 1), 0, "try_publish(NULL producer)");
    is(mkrt_fence(NULL, &v), MKRT_EINVAL, "fence(NULL producer)");
    is(mkrt_wait(NULL, 0, 0), MKRT_EINVAL, "wait(NULL producer)");
    is(mkrt_drain(NULL, 0), MKRT_EINVAL, "drain(NULL rt)");
    is(mkrt_stats_read(NULL, NULL), MKRT_EINVAL, "stats_read(NULL, NULL)");
    is(mkrt_stats_producers(NULL, NULL, 4), 0, "stats_producers(NULL)");
    is(mkrt_cell_read(NULL, 0, &v), MKRT_EINVAL, "cell_read(NULL rt)");
    is(mkrt_cell_write(NULL, 0, 1), MKRT_EINVAL, "cell_write(NULL rt)");
    uint32_t u[4];
    mkrt_append_entry e[4];
    is(mkrt_append_log_read(NULL, 0, u, 4), 0, "append_log_read(NULL rt)");
    is(mkrt_append_log_consume(NULL, e, 4), 0, "append_log_consume(NULL rt)");
    is(mkrt_dead_letters_pop(NULL, &it, 1), 0, "dead_letters_pop(NULL rt)");
    ok(mkrt_backend_describe(NULL) != NULL, "backend_describe(NULL) is a message: %s",
       mkrt_backend_describe(NULL));
    is(mkrt_destroy(NULL, 0, NULL), MKRT_OK, "destroy(NULL) is a no-op");

    mkrt_config c = config(MKRT_BACKEND_CPU, NULL);
    mkrt_runtime *rt = start(&c);
    is(mkrt_op_register(rt, 30, NULL, &err), MKRT_EINVAL, "op_register(NULL desc)");
    mkrt_op_desc nofn = {.name = "nofn"};
    is(mkrt_op_register(rt, 30, &nofn, &err), MKRT_EINVAL, "op_register(NULL fn)");
    p = mkrt_producer_open(rt, NULL);
    is(mkrt_publish(p, NULL, 1, 0, &err), MKRT_EINVAL, "publish(NULL items, 1)");
    is(mkrt_publish(p, NULL, 0, 0, &err), MKRT_OK, "publish(NULL items, 0) publishes nothing");
    is(mkrt_try_publish(p, NULL, 3), 0, "try_publish(NULL items)");
    is(mkrt_fence(p, NULL), MKRT_EINVAL, "fence(NULL ticket)");
    mkrt_stats s;
    is(mkrt_stats_read(rt, NULL), MKRT_EINVAL, "stats_read(NULL out)");
    is(mkrt_stats_read(rt, &s), MKRT_OK, "stats_read OK");
    is(mkrt_stats_producers(rt, NULL, 4), 0, "stats_producers(NULL out, 4)");
    is(mkrt_cell_read(rt, 0, NULL), MKRT_EINVAL, "cell_read(NULL value)");
    is(mkrt_cell_read(rt, CELLS, &v), MKRT_EINVAL, "cell_read(handle = cells)");
    is(mkrt_cell_write(rt, CELLS, 1), MKRT_EINVAL, "cell_write(handle = cells)");
    is(mkrt_append_log_read(rt, 0, NULL, 4), 0, "append_log_read(NULL out, 4)");
    is(mkrt_append_log_consume(rt, NULL, 4), 0, "append_log_consume(NULL out, 4)");
    is(mkrt_dead_letters_pop(rt, NULL, 4), 0, "dead_letters_pop(NULL out, 4)");
    mkrt_producer_close(p);
    stop(rt);
}

/* Defect 7: registration after an open is EINVAL (as documented); a failed
 * open leaves no trace. */
static void test_registration_window(void)
{
    mkrt_config c = config(MKRT_BACKEND_CPU, NULL);
    c.max_producers = 1;
    mkrt_runtime *rt = start(&c);
    mkrt_op_desc d = {.fn = op_acc};
    mkrt_error err;
    count_alloc_fail_after(0);
    mkrt_producer *p = mkrt_producer_open(rt, &err);
    count_alloc_fail_after(UINT64_MAX);
    ok(p == NULL && err.status == MKRT_ENOMEM, "an open that runs out of memory fails (%s)",
       mkrt_status_name(err.status));
    is(mkrt_op_register(rt, 40, &d, &err), MKRT_OK, "registration still works after a failed open");
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    is(s.producers_open, 0, "the failed open left no producer");
    p = mkrt_producer_open(rt, &err);
    ok(p != NULL, "an open succeeds");
    mkrt_producer *q = mkrt_producer_open(rt, &err);
    ok(q == NULL && err.status == MKRT_EAGAIN, "a second open finds no slot (EAGAIN)");
    is(mkrt_op_register(rt, 41, &d, &err), MKRT_EINVAL, "registration after an open: EINVAL");
    like(err.message, "Fix:", "  with a Fix");
    mkrt_stats_producers(rt, NULL, 0);
    mkrt_producer_stats ps[2];
    is(mkrt_stats_producers(rt, ps, 2), 1, "one producer open");
    is(ps[0].id, 0, "and it has the first id (failed opens took none)");
    mkrt_producer_close(p);
    stop(rt);
}

/* Defect 8: readers see only completed entries. */
static int publish_block_batch(void *arg)
{
    mkrt_producer *p = arg;
    mkrt_item items[] = {{MKRT_OP_APPEND, 0, 9, 77}, {OP_BLOCK, 1, 9, 0}};
    mkrt_publish(p, items, 2, SEC, NULL);
    return 0;
}

static void test_log_completed_only(void)
{
    mkrt_config c = config(MKRT_BACKEND_CPU, NULL);
    mkrt_runtime *rt = start(&c);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    atomic_store(&block_started, 0);
    atomic_store(&block_go, 0);
    mkrt__runtime_hold(rt, true);
    publish_block_batch(p);
    mkrt__runtime_hold(rt, false);
    while (!atomic_load(&block_started))
        sched_yield();
    uint32_t out[4];
    is(mkrt_append_log_read(rt, 9, out, 4), 0,
       "the APPEND ran in layer 0 but its batch is still running: not visible");
    mkrt_append_entry e[4];
    is(mkrt_append_log_consume(rt, e, 4), 0, "nor consumable");
    atomic_store(&block_go, 1);
    uint64_t t;
    mkrt_fence(p, &t);
    mkrt_wait(p, t, SEC);
    is(mkrt_append_log_read(rt, 9, out, 4), 1, "after the batch completed: visible");
    is(out[0], 77, "with its param");
    mkrt_producer_close(p);
    stop(rt);
}

/* Defect 9: the log can be consumed, for ever, also concurrently. */
typedef struct consumer {
    mkrt_runtime *rt;
    _Atomic int *stop;
    uint64_t got, per_handle_bad;
    uint32_t next[8]; /* next param expected per handle */
} consumer;

static int consumer_main(void *arg)
{
    consumer *c = arg;
    mkrt_append_entry e[64];
    for (;;) {
        int stopping = atomic_load(c->stop);
        size_t k = mkrt_append_log_consume(c->rt, e, 64);
        for (size_t i = 0; i < k; i++) {
            uint32_t h = e[i].handle - 100;
            if (h >= 8 || e[i].param != c->next[h])
                c->per_handle_bad++;
            else
                c->next[h]++;
        }
        c->got += k;
        if (k == 0 && stopping)
            return 0;
        if (k == 0)
            sched_yield();
    }
}

static void test_log_consume(mkrt_backend_kind kind, const char *name)
{
    failures f = {0};
    mkrt_config c = config(kind, &f);
    c.append_log_capacity = 8;
    mkrt_runtime *rt = start(&c);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    int rounds_ok = 0;
    for (uint32_t r = 0; r < 50; r++) {
        mkrt_item items[5];
        for (uint32_t i = 0; i < 5; i++)
            items[i] = (mkrt_item){MKRT_OP_APPEND, 0, 3, r * 5 + i};
        run_batch(rt, p, items, 5);
        mkrt_append_entry e[8];
        size_t k = mkrt_append_log_consume(rt, e, 8);
        int good = k == 5;
        for (size_t i = 0; i < k; i++)
            good &= e[i].handle == 3 && e[i].param == r * 5 + (uint32_t)i;
        rounds_ok += good;
    }
    is(rounds_ok, 50, "%s: 250 APPENDs through an 8-entry log, consumed as they go", name);
    is(atomic_load(&f.n), 0, "%s: none overflowed", name);

    /* Concurrent: 2 producers (handles 100..103 and 104..107, params in
     * order per handle) and 2 consumers. */
    _Atomic int stopflag = 0;
    consumer cs[2];
    mkrt__thread th[2];
    for (int i = 0; i < 2; i++) {
        cs[i] = (consumer){rt, &stopflag, 0, 0, {0}};
        mkrt__thread_start(&th[i], consumer_main, &cs[i]);
    }
    mkrt_producer *q = mkrt_producer_open(rt, NULL);
    uint32_t sent[8] = {0};
    uint64_t total = 0;
    for (int round = 0; round < 400; round++) {
        for (int who = 0; who < 2; who++) {
            mkrt_item items[4];
            for (uint32_t i = 0; i < 4; i++) {
                uint32_t h = (uint32_t)who * 4 + i;
                items[i] = (mkrt_item){MKRT_OP_APPEND, 0, 100 + h, sent[h]++};
            }
            mkrt_publish(who ? q : p, items, 4, SEC, NULL);
            total += 4;
        }
        /* backpressure: wait for the consumers when the log is full-ish */
        mkrt_drain(rt, SEC);
    }
    mkrt_drain(rt, SEC);
    atomic_store(&stopflag, 1);
    for (int i = 0; i < 2; i++)
        mkrt__thread_join(th[i]);
    uint64_t overflow = failed_with(&f, MKRT_EOVERFLOW);
    is(cs[0].got + cs[1].got + overflow, total,
       "%s: every APPEND was consumed exactly once or overflowed (%llu consumed, %llu overflowed)", name,
       (unsigned long long)(cs[0].got + cs[1].got), (unsigned long long)overflow);
    accounting_ok(rt, name);
    mkrt_producer_close(q);
    mkrt_producer_close(p);
    stop(rt);
}

/* Defect 10: dedupe never changes results. */
static void test_dedupe_semantics(void)
{
    failures f = {0};
    mkrt_config c = config(MKRT_BACKEND_CPU, &f);
    mkrt_runtime *rt = start(&c);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item items[100];
    for (int i = 0; i < 100; i++)
        items[i] = (mkrt_item){MKRT_OP_ADD, 5, 5, 1};
    run_batch(rt, p, items, 100);
    is(cell(rt, 5), 100, "{ADD, 5, 5, 1} x 100 in one batch adds 100");
    for (int i = 0; i < 100; i++)
        items[i] = (mkrt_item){OP_ACC, 0, 6, 2};
    run_batch(rt, p, items, 100);
    is(cell(rt, 6), 200, "a non-idempotent user op runs every copy");
    for (int i = 0; i < 100; i++)
        items[i] = (mkrt_item){OP_MAX, 0, 7, 9};
    mkrt_stats before, after;
    mkrt_stats_read(rt, &before);
    run_batch(rt, p, items, 100);
    mkrt_stats_read(rt, &after);
    is(cell(rt, 7), 9, "an idempotent user op gives its result");
    is(after.pruned - before.pruned, 99, "and its 99 duplicates are pruned");
    mkrt_item interleaved[] = {{MKRT_OP_STORE, 0, 8, 1}, {MKRT_OP_STORE, 0, 8, 2}, {MKRT_OP_STORE, 0, 8, 1}};
    run_batch(rt, p, interleaved, 3);
    is(cell(rt, 8), 1, "STORE 1, STORE 2, STORE 1: the last write wins (the duplicate is not redundant)");
    mkrt_item reread[] = {{MKRT_OP_STORE, 0, 10, 5}, {MKRT_OP_ADD, 10, 11, 1}, {MKRT_OP_STORE, 0, 10, 7},
                          {MKRT_OP_ADD, 10, 11, 1}};
    run_batch(rt, p, reread, 4);
    is(cell(rt, 11), 8, "ADD 10->11 after its input changed runs again");
    mkrt_item appends[] = {{MKRT_OP_APPEND, 0, 12, 4}, {MKRT_OP_APPEND, 0, 12, 4}};
    run_batch(rt, p, appends, 2);
    uint32_t out[4];
    is(mkrt_append_log_read(rt, 12, out, 4), 2, "two identical APPENDs are two entries");
    accounting_ok(rt, "dedupe");
    mkrt_producer_close(p);
    stop(rt);
}

/* The ordering contract against a sequential reference: random batches of
 * built-ins and user ops with many duplicates, on CPU and SIM. */
static void reference_run(const mkrt_item *it, size_t n, uint64_t *cells)
{
    for (size_t i = 0; i < n; i++) {
        const mkrt_item *x = &it[i];
        switch (x->op) {
        case MKRT_OP_STORE: cells[x->out] = x->param; break;
        case MKRT_OP_ADD: cells[x->out] = cells[x->in] + x->param; break;
        case OP_ACC: cells[x->out] += x->param; break;
        case OP_MAX: cells[x->out] = cells[x->out] < x->param ? x->param : cells[x->out]; break;
        default: break;
        }
    }
}

static void test_sequential_reference(mkrt_backend_kind kind, const char *name)
{
    mkrt_config c = config(kind, NULL);
    mkrt_runtime *rt = start(&c);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    uint64_t ref[CELLS] = {0};
    unsigned seed = 99;
    static const uint32_t ops[] = {MKRT_OP_NOP, MKRT_OP_STORE, MKRT_OP_ADD, OP_ACC, OP_MAX};
    int equal = 0;
    uint64_t pruned = 0;
    for (int b = 0; b < 60; b++) {
        mkrt_item items[300];
        size_t n = 1 + (size_t)rand_r(&seed) % 300;
        for (size_t i = 0; i < n; i++) {
            if (i > 0 && rand_r(&seed) % 3 == 0) {
                items[i] = items[(size_t)rand_r(&seed) % i]; /* an exact duplicate */
                continue;
            }
            items[i] = (mkrt_item){ops[rand_r(&seed) % 5], (uint32_t)rand_r(&seed) % 12,
                                   (uint32_t)rand_r(&seed) % 12, (uint32_t)rand_r(&seed) % 50};
        }
        run_batch(rt, p, items, n);
        reference_run(items, n, ref);
        int same = 1;
        for (uint32_t h = 0; h < 12; h++)
            same &= cell(rt, h) == ref[h];
        equal += same;
    }
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    pruned = s.pruned;
    is(equal, 60, "%s: 60 random batches with duplicates equal the sequential reference", name);
    ok(pruned > 0, "%s: and dedupe pruned some (%llu)", name, (unsigned long long)pruned);
    accounting_ok(rt, name);
    mkrt_producer_close(p);
    stop(rt);
}

/* Allocation failure: mkrt_create fails cleanly at every allocation (ASan's
 * leak check sees anything left behind), and a running runtime whose
 * scratch cannot grow still runs batches correctly (unpruned, or one item
 * per layer). */
static void test_allocation_failures(void)
{
    int clean = 0, tried = 0;
    for (uint64_t k = 0; k < 400; k++) {
        mkrt_config c = config(MKRT_BACKEND_CPU, NULL);
        c.max_batch = 1024;
        c.cells = 1024;
        mkrt_runtime *rt = (mkrt_runtime *)1;
        mkrt_error err;
        count_alloc_fail_after(k);
        mkrt_status st = mkrt_create(&c, &rt, &err);
        count_alloc_fail_after(UINT64_MAX);
        if (st == MKRT_OK) {
            mkrt_destroy(rt, SEC, NULL);
            break;
        }
        tried++;
        clean += st == MKRT_ENOMEM && rt == NULL && strstr(err.message, "Fix:") != NULL;
    }
    ok(tried > 5, "mkrt_create met %d allocation failures", tried);
    is(clean, tried, "each one: MKRT_ENOMEM, no runtime, a Fix");

    mkrt_config c = config(MKRT_BACKEND_CPU, NULL);
    mkrt_runtime *rt = start(&c);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    uint64_t ref[CELLS] = {0};
    mkrt_item items[600];
    unsigned seed = 5;
    int equal = 0;
    for (int b = 0; b < 10; b++) {
        size_t n = 300 + (size_t)b * 30;
        for (size_t i = 0; i < n; i++)
            items[i] = (mkrt_item){MKRT_OP_ADD, (uint32_t)rand_r(&seed) % 40, (uint32_t)rand_r(&seed) % 40,
                                   (uint32_t)rand_r(&seed) % 9};
        count_alloc_fail_after(0); /* scratch growth fails while the batch is planned */
        run_batch(rt, p, items, n);
        count_alloc_fail_after(UINT64_MAX);
        reference_run(items, n, ref);
        int same = 1;
        for (uint32_t h = 0; h < 40; h++)
            same &= cell(rt, h) == ref[h];
        equal += same;
    }
    is(equal, 10, "batches planned without memory still give the sequential results");
    accounting_ok(rt, "no memory");
    mkrt_producer_close(p);
    stop(rt);
}

int main(void)
{
    count_alloc_install();
    test_config_bounds();
    test_user_op_handles(MKRT_BACKEND_CPU, "cpu");
    test_user_op_handles(MKRT_BACKEND_SIM, "sim");
    test_admission_bounds(MKRT_BACKEND_CPU, "cpu bounds");
    test_admission_bounds(MKRT_BACKEND_SIM, "sim bounds");
    test_close_races_destroy();
    test_publish_outlives_dispatcher_check();
    test_device_failure_keeps_refused();
    test_wait_unissued();
    test_null_arguments();
    test_registration_window();
    test_log_completed_only();
    test_log_consume(MKRT_BACKEND_CPU, "cpu log");
    test_log_consume(MKRT_BACKEND_SIM, "sim log");
    test_dedupe_semantics();
    test_sequential_reference(MKRT_BACKEND_CPU, "cpu");
    test_sequential_reference(MKRT_BACKEND_SIM, "sim");
    test_allocation_failures();
    return done_testing();
}
