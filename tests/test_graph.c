/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_graph.c - streaming graph workloads (issue 14) on the CPU pool
 * and on the simulated device: ops that emit (order after the emitter,
 * dedupe of emitted duplicates, a full emission queue), the commuting
 * update built-ins (MIN, OR, ACC: a frontier on one handle is one layer,
 * results as sequential) and quiescence with emission chains. The
 * registered graph and the traversal engine are in test_graph_traverse.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "count_alloc.h"
#include "graph_runtime.h"

/* ---- ops that emit ---- */

/* cells[out] = param, then emits ADD(out -> out + 1, 1): it can only see
 * param if it runs after its emitter. */
static mkrt_status emit_add(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    ctx->cells[it->out] = it->param;
    mkrt_item e = {MKRT_OP_ADD, it->out, it->out + 1, 1};
    return mkrt_op_emit(ctx, &e, 1);
}

/* Emits the same STORE twice in one call. */
static mkrt_status emit_twice(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    mkrt_item e[2] = {{MKRT_OP_STORE, 0, it->out, it->param}, {MKRT_OP_STORE, 0, it->out, it->param}};
    return mkrt_op_emit(ctx, e, 2);
}

/* Emits param ACC items onto out + 1 and records mkrt_op_emit's status in
 * cells[out] (as a negative number). */
static mkrt_status emit_n(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    mkrt_item e[64];
    for (uint32_t i = 0; i < it->param && i < 64; i++)
        e[i] = (mkrt_item){MKRT_OP_ACC, 0, it->out + 1, 1};
    mkrt_status st = mkrt_op_emit(ctx, e, it->param);
    ctx->cells[it->out] = (uint64_t)(int64_t)st;
    return st;
}

/* A chain: counts in cells[out] and emits itself with param - 1 down to 0. */
static mkrt_status chain(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    ctx->cells[it->out] += 1;
    if (it->param == 0)
        return MKRT_OK;
    mkrt_item e = {OP_CHAIN, it->in, it->out, it->param - 1};
    return mkrt_op_emit(ctx, &e, 1);
}
/* Bad calls of the emission API from inside an op; records the statuses. */
static mkrt_status bad_emit(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    mkrt_op_ctx copy = *ctx;
    copy.run = NULL;
    mkrt_item e = {MKRT_OP_NOP, 0, 0, 0};
    int okays = (mkrt_op_emit(NULL, &e, 1) == MKRT_EINVAL) + (mkrt_op_emit(&copy, &e, 1) == MKRT_EINVAL) +
                (mkrt_op_emit(ctx, NULL, 1) == MKRT_EINVAL) + (mkrt_op_emit(ctx, NULL, 0) == MKRT_OK) +
                (mkrt_op_emit_edges(ctx, 0) == MKRT_EINVAL) /* not registered with expands */ +
                (mkrt_op_emit_edges(NULL, 0) == MKRT_EINVAL) + (mkrt_op_cell_min(NULL, 0, 0) == false) +
                (mkrt_op_cell_min(ctx, CELLS, 0) == false);
    mkrt_op_changed(NULL);
    mkrt_op_changed(&copy);
    ctx->cells[it->out] = (uint64_t)okays;
    return MKRT_OK;
}
static void emission(mkrt_backend_kind kind)
{
    const char *k = kind_name(kind);
    mkrt_runtime *rt = start_with(kind, 64);
    reg(rt, OP_EMIT_ADD, emit_add, false, false, false);
    reg(rt, OP_EMIT_TWICE, emit_twice, false, false, false);
    reg(rt, OP_EMIT_N, emit_n, false, false, false);
    reg(rt, OP_BAD_EMIT, bad_emit, false, false, false);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);

    /* After the emitter: the emitted ADD sees what its emitter wrote, even
     * with a STORE to the emitter's cell later in the same batch (the
     * emitted item runs in a later batch, after it). */
    mkrt_item a[2] = {{OP_EMIT_ADD, 0, 10, 41}, {MKRT_OP_STORE, 0, 10, 100}};
    publish_one_batch(rt, p, a, 2);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: quiescent after an emission", k);
    is(cell(rt, 11), 101, "%s: the emitted item ran after its emitter and after the emitter's batch", k);
    is(stats(rt).emitted, 1, "%s: one item emitted", k);

    /* Dedupe: the same STORE emitted twice by one op, and twice more by a
     * second emitter of the same batch: 4 emitted, 3 pruned. */
    uint64_t pruned = stats(rt).pruned;
    mkrt_item t[2] = {{OP_EMIT_TWICE, 0, 20, 7}, {OP_EMIT_TWICE, 1, 20, 7}};
    publish_one_batch(rt, p, t, 2);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: quiescent", k);
    is(cell(rt, 20), 7, "%s: the emitted STORE ran", k);
    is(stats(rt).emitted, 5, "%s: 4 more emitted", k);
    is(stats(rt).pruned - pruned, 3, "%s: their exact duplicates were pruned (one runs)", k);

    /* A full queue: capacity 64; two emitters of 40 in one batch: one
     * gets the room, the other MKRT_EOVERFLOW, its item fails, nothing is
     * lost or half emitted. */
    uint64_t failed = stats(rt).failed;
    mkrt_item n[2] = {{OP_EMIT_N, 0, 30, 40}, {OP_EMIT_N, 0, 40, 40}};
    publish_one_batch(rt, p, n, 2);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: quiescent after a full queue", k);
    int64_t s30 = (int64_t)cell(rt, 30), s40 = (int64_t)cell(rt, 40);
    ok((s30 == MKRT_OK && s40 == MKRT_EOVERFLOW) || (s30 == MKRT_EOVERFLOW && s40 == MKRT_OK),
       "%s: one emit of 40 fits a queue of 64, the other is MKRT_EOVERFLOW (%lld, %lld)", k,
       (long long)s30, (long long)s40);
    is(cell(rt, 31) + cell(rt, 41), 40, "%s: all 40 of the one that fit ran, none of the other", k);
    is(stats(rt).failed - failed, 1, "%s: the op that got MKRT_EOVERFLOW failed (error path)", k);
    mkrt_item dead[4];
    size_t nd = mkrt_dead_letters_pop(rt, dead, 4);
    ok(nd == 1 && dead[0].op == OP_EMIT_N, "%s: ... and went to the dead letters", k);
    /* The next batch has the whole queue again. */
    mkrt_item n2 = {OP_EMIT_N, 0, 50, 64};
    publish(p, &n2, 1);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: quiescent", k);
    is((int64_t)cell(rt, 50), MKRT_OK, "%s: a later batch may fill the whole queue", k);
    is(cell(rt, 51), 64, "%s: ... and all of it runs", k);

    mkrt_item b = {OP_BAD_EMIT, 0, 60, 0};
    publish(p, &b, 1);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: quiescent", k);
    is(cell(rt, 60), 8, "%s: bad emission calls are refused with MKRT_EINVAL (or false) inside an op", k);
    ok(accounted(rt), "%s: published + emitted = executed + pruned + failed", k);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);

    /* Capacity 0: every emit fails. */
    rt = start_with(kind, 0);
    reg(rt, OP_EMIT_N, emit_n, false, false, false);
    p = mkrt_producer_open(rt, NULL);
    mkrt_item z = {OP_EMIT_N, 0, 30, 1};
    publish(p, &z, 1);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: quiescent", k);
    is((int64_t)cell(rt, 30), MKRT_EOVERFLOW, "%s: emit_capacity 0 refuses every emit", k);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

/* ---- quiescence ---- */

static void quiescence(mkrt_backend_kind kind)
{
    const char *k = kind_name(kind);
    mkrt_runtime *rt = start_with(kind, 1024);
    reg(rt, OP_CHAIN, chain, false, false, false);
    is(mkrt_quiesce(NULL, 0), MKRT_EINVAL, "%s: mkrt_quiesce(NULL) is MKRT_EINVAL", k);
    is(mkrt_quiesce(rt, 0), MKRT_OK, "%s: a new runtime is quiescent", k);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt__runtime_hold(rt, true);
    mkrt_item c[8];
    for (uint32_t i = 0; i < 8; i++)
        c[i] = (mkrt_item){OP_CHAIN, 0, 100 + i, 300 + i};
    publish(p, c, 8);
    is(mkrt_quiesce(rt, 0), MKRT_ETIMEDOUT, "%s: not quiescent while items wait", k);
    mkrt__runtime_hold(rt, false);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: quiescent after 8 chains of ~300 emissions", k);
    bool all = true;
    for (uint32_t i = 0; i < 8; i++)
        all &= cell(rt, 100 + i) == 301 + i;
    ok(all, "%s: every link of every chain ran before mkrt_quiesce returned", k);
    mkrt_stats s = stats(rt);
    is(s.emitted, 8 * 300 + 28, "%s: every link counted as emitted", k);
    ok(accounted(rt), "%s: published + emitted = executed + pruned + failed", k);
    /* An item published before the call is waited for even when the
     * runtime-wide totals say otherwise: a racing producer's item that the
     * dispatcher completed before its publish counted it (stood in for by
     * one completion added by hand), with the dispatcher held so that the
     * earlier item has not run and quiet is still set from before. */
    mkrt__runtime_hold(rt, true);
    mkrt_item late = {OP_CHAIN, 0, 150, 1};
    publish(p, &late, 1);
    mkrt__test_completed_add(rt, 1);
    is(mkrt_quiesce(rt, 0), MKRT_ETIMEDOUT, "%s: quiesce waits for an item published before it, "
       "though the totals match and the dispatcher was idle", k);
    is(mkrt_drain(rt, 0), MKRT_ETIMEDOUT, "%s: ... and so does mkrt_drain", k);
    mkrt__runtime_hold(rt, false);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: ... and returns once it ran", k);
    is(cell(rt, 150), 2, "%s: ... with its result (and its emission's) in the cells", k);
    mkrt__test_completed_add(rt, -1);
    /* destroy runs what is emitted too */
    mkrt_item one = {OP_CHAIN, 0, 200, 500};
    publish(p, &one, 1);
    mkrt_producer_close(p);
    mkrt_error err;
    is(mkrt_destroy(rt, SEC, &err), MKRT_OK, "%s: destroy waits for an emission chain", k);
}

/* ---- commuting ops ---- */

/* One batch of n items; returns the layers it took. */
static uint64_t layers_of(mkrt_runtime *rt, mkrt_producer *p, const mkrt_item *items, size_t n)
{
    uint64_t before = stats(rt).layers;
    publish_one_batch(rt, p, items, n);
    if (mkrt_quiesce(rt, SEC) != MKRT_OK)
        bail_out("not quiescent");
    return stats(rt).layers - before;
}

static void commuting(mkrt_backend_kind kind)
{
    const char *k = kind_name(kind);
    enum { N = 200, H = 3000, SRC = 1000 };
    mkrt_runtime *rt = start_with(kind, 64);
    reg(rt, OP_CMIN, cmin, true, true, false);
    reg(rt, OP_PMIN, cmin, true, false, false); /* the same op, not declared commuting */
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item items[N + 1];
    unsigned seed = 7;
    uint64_t want_min = UINT64_MAX;
    for (uint32_t i = 0; i < N; i++) {
        uint64_t v = 1000 + (uint64_t)(rand_r(&seed) % 100000);
        mkrt_cell_write(rt, SRC + i, v);
        uint32_t param = (uint32_t)(rand_r(&seed) % 50);
        want_min = v + param < want_min ? v + param : want_min;
    }
    uint64_t device = stats(rt).device_batches;

    mkrt_cell_write(rt, H, UINT64_MAX);
    for (uint32_t i = 0; i < N; i++)
        items[i] = (mkrt_item){MKRT_OP_MIN, SRC + i, H, 0};
    seed = 7;
    for (uint32_t i = 0; i < N; i++) {
        (void)rand_r(&seed);
        items[i].param = (uint32_t)(rand_r(&seed) % 50);
    }
    is(layers_of(rt, p, items, N), 1, "%s: %d MIN items on one handle run as one layer", k, N);
    is(cell(rt, H), want_min, "%s: ... with the sequential result", k);

    mkrt_cell_write(rt, H, 0);
    for (uint32_t i = 0; i < N; i++)
        items[i] = (mkrt_item){MKRT_OP_OR, SRC + i, H, 0};
    for (uint32_t i = 0; i < N; i++)
        items[i].param = (uint32_t)1 << (i % 32);
    uint64_t or_expect = 0;
    for (uint32_t i = 0; i < N; i++)
        or_expect |= cell(rt, SRC + i) | items[i].param;
    is(layers_of(rt, p, items, N), 1, "%s: %d OR items on one handle: one layer", k, N);
    is(cell(rt, H), or_expect, "%s: ... with the sequential result", k);

    mkrt_cell_write(rt, H, 5);
    for (uint32_t i = 0; i < N; i++)
        items[i] = (mkrt_item){MKRT_OP_ACC, H, H, 3}; /* ACC does not read in: in == out commutes */
    uint64_t pruned = stats(rt).pruned;
    is(layers_of(rt, p, items, N), 1, "%s: %d ACC items on one handle: one layer", k, N);
    is(cell(rt, H), 5 + 3 * N, "%s: ... every one accumulated (exact duplicates, none pruned)", k);
    is(stats(rt).pruned, pruned, "%s: ACC duplicates are never pruned", k);
    ok(stats(rt).device_batches > device || kind == MKRT_BACKEND_CPU,
       "%s: the update built-ins run on the device", k);

    /* Still ordered against other items on the handle: MIN x3, STORE, MIN x3. */
    mkrt_item mix[7] = {{MKRT_OP_MIN, SRC, H, 1},     {MKRT_OP_MIN, SRC + 1, H, 2},
                        {MKRT_OP_MIN, SRC + 2, H, 3}, {MKRT_OP_STORE, 0, H, 7},
                        {MKRT_OP_MIN, SRC, H, 0},     {MKRT_OP_MIN, SRC + 1, H, 0},
                        {MKRT_OP_MIN, SRC + 2, H, 0}};
    is(layers_of(rt, p, mix, 7), 3, "%s: MIN, a STORE, MIN on one handle: three layers", k);
    is(cell(rt, H), 7, "%s: ... the STORE's 7 is the minimum after it (sources are >= 1000)", k);
    /* A reader of the handle between two MINs closes the group. */
    mkrt_cell_write(rt, H, 50);
    mkrt_item rd[3] = {{MKRT_OP_MIN, SRC, H, 0}, {MKRT_OP_ADD, H, H + 1, 0}, {MKRT_OP_MIN, H + 2, H, 0}};
    mkrt_cell_write(rt, H + 2, 3);
    is(layers_of(rt, p, rd, 3), 3, "%s: a read of the handle orders the MINs around it", k);
    is(cell(rt, H + 1), 50, "%s: ... the reader saw the first MIN only", k);
    is(cell(rt, H), 3, "%s: ... and the second ran after it", k);

    /* A user op: one layer when declared commuting, one per item when not. */
    mkrt_cell_write(rt, H, UINT64_MAX);
    for (uint32_t i = 0; i < 50; i++)
        items[i] = (mkrt_item){OP_CMIN, SRC + i, H, 900 - i};
    is(layers_of(rt, p, items, 50), 1, "%s: a user op declared commuting: one layer", k);
    is(cell(rt, H), 851, "%s: ... minimum right", k);
    mkrt_cell_write(rt, H, UINT64_MAX);
    for (uint32_t i = 0; i < 50; i++)
        items[i] = (mkrt_item){OP_PMIN, SRC + i, H, 900 - i};
    is(layers_of(rt, p, items, 50), 50, "%s: the same op undeclared: one layer per item", k);
    is(cell(rt, H), 851, "%s: ... same result", k);
    ok(stats(rt).changed > 0, "%s: changed outputs are counted", k);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}
int main(void)
{
    count_alloc_install();
    for (size_t i = 0; i < 2; i++) {
        emission(kinds[i]);
        quiescence(kinds[i]);
        commuting(kinds[i]);
    }
    return done_testing();
}
