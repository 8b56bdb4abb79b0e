/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_op_ctx.c - a context that is not the live op's is refused by
 * every call that takes one (issue 22, defect 2): a copy of an op's
 * mkrt_op_ctx kept after the op returned, used with no op running and
 * from inside a later op (the same thread, likely the same stack slot),
 * and from another thread while an op runs. Nothing is queued, counted or
 * written through it, and mkrt_op_ctx_check says why with a Fix. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>

#include "mkrt/runtime.h"
#include "tap.h"

#define SEC 5000000000ull
#define CELLS 64
#define OP_SAVE 20  /* keeps a copy of its ctx, emits one NOP through its own */
#define OP_STALE 21 /* uses the kept copy from inside its own run */
#define OP_SLOW 22  /* waits until the test thread has tried the kept copy */

static mkrt_op_ctx kept;             /* the copy of OP_SAVE's ctx */
static _Atomic int kept_set;
static _Atomic int stale_emit, stale_edges, stale_min, stale_check, own_emit;
static _Atomic uint64_t stale_load;
static _Atomic int slow_started, slow_go;

static mkrt_status op_save(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    (void)it;
    kept = *ctx;
    atomic_store(&kept_set, 1);
    mkrt_item e = {MKRT_OP_NOP, 0, 0, 0};
    return mkrt_op_emit(ctx, &e, 1); /* the live ctx still works */
}

static mkrt_status op_stale(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    mkrt_item e = {MKRT_OP_STORE, 0, 1, 77};
    atomic_store(&stale_emit, mkrt_op_emit(&kept, &e, 1));
    atomic_store(&stale_edges, mkrt_op_emit_edges(&kept, 0));
    atomic_store(&stale_min, mkrt_op_cell_min(&kept, 2, 0));
    atomic_store(&stale_load, mkrt_op_cell_load(&kept, 3));
    atomic_store(&stale_check, mkrt_op_ctx_check(&kept, NULL));
    mkrt_op_changed(&kept);
    atomic_store(&own_emit, mkrt_op_ctx_check(ctx, NULL));
    ctx->cells[it->out] = 1;
    return MKRT_OK;
}

static mkrt_status op_slow(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    atomic_store(&slow_started, 1);
    while (!atomic_load(&slow_go))
        sched_yield();
    ctx->cells[it->out] = 5;
    return MKRT_OK;
}

static void reg(mkrt_runtime *rt, uint32_t op, mkrt_op_fn fn)
{
    mkrt_op_desc d = {.fn = fn, .name = "ctx-test"};
    mkrt_error err;
    if (mkrt_op_register(rt, op, &d, &err) != MKRT_OK)
        bail_out("register %u: %s", op, err.message);
}

static void publish_wait(mkrt_producer *p, mkrt_item it)
{
    uint64_t t;
    if (mkrt_publish(p, &it, 1, SEC, NULL) != MKRT_OK || mkrt_fence(p, &t) != MKRT_OK ||
        mkrt_wait(p, t, SEC) != MKRT_OK)
        bail_out("publish/wait failed");
}

int main(void)
{
    mkrt_config cfg = mkrt_config_default();
    cfg.backend = MKRT_BACKEND_CPU;
    cfg.cells = CELLS;
    cfg.workers = 2;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&cfg, &rt, &err) != MKRT_OK)
        bail_out("create: %s", err.message);
    reg(rt, OP_SAVE, op_save);
    reg(rt, OP_STALE, op_stale);
    reg(rt, OP_SLOW, op_slow);
    mkrt_producer *p = mkrt_producer_open(rt, &err);
    if (p == NULL)
        bail_out("open: %s", err.message);

    /* 1. The op ran and returned; its copy is used with no op running. */
    publish_wait(p, (mkrt_item){OP_SAVE, 0, 0, 0});
    ok(mkrt_quiesce(rt, SEC) == MKRT_OK && atomic_load(&kept_set), "the op kept a copy of its ctx");
    mkrt_stats s0, s1;
    mkrt_stats_read(rt, &s0);
    is(s0.emitted, 1, "the live ctx emitted its item");
    mkrt_item e = {MKRT_OP_STORE, 0, 4, 99};
    is(mkrt_op_emit(&kept, &e, 1), MKRT_EINVAL, "emit through a kept ctx, no op running: EINVAL");
    is(mkrt_op_emit_edges(&kept, 0), MKRT_EINVAL, "emit_edges through it: EINVAL");
    ok(!mkrt_op_cell_min(&kept, 4, 0), "cell_min through it refuses");
    is(mkrt_op_cell_load(&kept, 4), 0, "cell_load through it gives 0");
    mkrt_op_changed(&kept);
    mkrt_error_clear(&err);
    is(mkrt_op_ctx_check(&kept, &err), MKRT_EINVAL, "mkrt_op_ctx_check refuses it");
    like(err.message, "Fix:", "and says why, with a Fix: %s", err.message);
    like(err.message, "no op runs on this thread", "no op was running");
    is(mkrt_op_ctx_check(NULL, NULL), MKRT_EINVAL, "a NULL ctx is refused");
    mkrt_op_ctx forged = kept;
    forged.generation = 0;
    is(mkrt_op_emit(&forged, &e, 1), MKRT_EINVAL, "a ctx with generation 0 is refused");
    ok(mkrt_quiesce(rt, SEC) == MKRT_OK, "quiesced");
    mkrt_stats_read(rt, &s1);
    is(s1.emitted, s0.emitted, "nothing was emitted through the kept ctx");
    is(s1.changed, s0.changed, "nothing was counted as changed");
    uint64_t v = 1;
    mkrt_cell_read(rt, 4, &v);
    is(v, 0, "cell 4 untouched");

    /* 2. The kept copy used from inside a later op (the same threads run
     * it, often the same stack frame: a pointer compare would take it). */
    for (int round = 0; round < 20; round++) {
        publish_wait(p, (mkrt_item){OP_SAVE, 0, 0, 0});
        publish_wait(p, (mkrt_item){OP_STALE, 0, 10, 0});
        if (atomic_load(&stale_emit) != MKRT_EINVAL || atomic_load(&stale_edges) != MKRT_EINVAL ||
            atomic_load(&stale_min) || atomic_load(&stale_load) != 0 ||
            atomic_load(&stale_check) != MKRT_EINVAL || atomic_load(&own_emit) != MKRT_OK)
            break;
    }
    is(atomic_load(&stale_emit), MKRT_EINVAL, "emit through a kept ctx inside another op: EINVAL");
    is(atomic_load(&stale_edges), MKRT_EINVAL, "emit_edges likewise");
    ok(!atomic_load(&stale_min), "cell_min likewise refuses");
    is(atomic_load(&stale_load), 0, "cell_load likewise gives 0");
    is(atomic_load(&stale_check), MKRT_EINVAL, "mkrt_op_ctx_check refuses it there");
    is(atomic_load(&own_emit), MKRT_OK, "the running op's own ctx is accepted");
    ok(mkrt_quiesce(rt, SEC) == MKRT_OK, "quiesced");
    mkrt_stats s2;
    mkrt_stats_read(rt, &s2);
    is(s2.emitted, s1.emitted + 20, "only the live contexts emitted (one per OP_SAVE)");
    mkrt_cell_read(rt, 1, &v);
    is(v, 0, "the STORE offered through the kept ctx never ran");
    is(s2.published + s2.emitted, s2.executed + s2.pruned + s2.failed, "every item accounted for");

    /* 3. From another thread while an op runs: the kept copy is not that
     * op's either. */
    mkrt_item slow = {OP_SLOW, 0, 20, 0};
    if (mkrt_publish(p, &slow, 1, SEC, NULL) != MKRT_OK)
        bail_out("publish slow");
    while (!atomic_load(&slow_started))
        sched_yield();
    is(mkrt_op_emit(&kept, &e, 1), MKRT_EINVAL, "emit through a kept ctx while an op runs elsewhere: EINVAL");
    atomic_store(&slow_go, 1);
    ok(mkrt_quiesce(rt, SEC) == MKRT_OK, "quiesced");
    mkrt_stats s3;
    mkrt_stats_read(rt, &s3);
    is(s3.emitted, s2.emitted, "nothing emitted through it");

    mkrt_producer_close(p);
    ok(mkrt_destroy(rt, SEC, &err) == MKRT_OK, "destroy");
    return done_testing();
}
