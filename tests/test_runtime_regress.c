/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_runtime_regress.c - regression tests for the defects that
 * independent testing found in the runtime (issue "Nothing lost, nothing
 * corrupted"), one group per defect, on the public API (plus the test hooks
 * that hold the dispatcher and hang the simulated device):
 *   config bounds and checked sizes; user-op handles checked on every
 *   backend; producer close racing destroy; device failures keep refused
 *   items; a never-issued ticket; NULL arguments on every runtime call;
 *   registration after open / after a failed open. The APPEND log, dedupe,
 *   the sequential reference and allocation failures are in
 *   test_runtime_regress_state.c. */
#include "runtime_regress.h"

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
        while (!atomic_load(&lp.inside) || !mkrt__test_producer_busy(p))
            sched_yield();
        for (int i = 0; i < 1000; i++) /* into its wait for room */
            sched_yield();
        mkrt__runtime_destroy_hold(rt, true);
        destroyer d = {rt, MKRT_EINVAL};
        mkrt__thread_start(&dt, destroyer_main, &d);
        while (!mkrt__test_closing(rt))
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
    return done_testing();
}

