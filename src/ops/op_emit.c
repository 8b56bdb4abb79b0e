/* SPDX-License-Identifier: BSD-2-Clause */
/* src/ops/op_emit.c - what a running op may do besides its cells: emit
 * follow-up items into the emission queue (see state/state.h for its
 * positions), say that it changed its output, and lower a cell atomically.
 * All of it runs on the thread that runs the op. */
#include <string.h>

#include "base/error_internal.h"
#include "mkrt/graph.h"
#include "ops/builtin_ops.h"
#include "ops/op_table.h"
#include "state/state.h"

/* Whether ctx is the live op's on this thread: its generation (unique in
 * the process) is the one this thread's op call set. ctx->run is read only
 * after that: it is then the running call's record, on this stack. */
static inline bool live(const mkrt_op_ctx *ctx)
{
    return ctx != NULL && ctx->generation != 0 && ctx->generation == mkrt__op_live && ctx->run != NULL;
}

mkrt_status mkrt_op_ctx_check(const mkrt_op_ctx *ctx, mkrt_error *err)
{
    if (ctx == NULL)
        return mkrt__error_set(err, MKRT_EINVAL, "the op context is NULL. Fix: pass the mkrt_op_ctx "
                                                 "your op function was called with.");
    if (live(ctx))
        return MKRT_OK;
    uint64_t now = mkrt__op_live;
    if (now == 0)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "the op context (generation %llu) is not a live op's: no op runs on "
                               "this thread (the context was kept after its op returned, or made by "
                               "hand). Fix: call mkrt_op_emit and the other mkrt_op_* calls only "
                               "inside the op, with the ctx it was given, before it returns.",
                               (unsigned long long)ctx->generation);
    return mkrt__error_set(err, MKRT_EINVAL,
                           "the op context (generation %llu) is not the live op's: the op running on "
                           "this thread has generation %llu (the context is an earlier op's or "
                           "another thread's). Fix: use only the ctx the running op was called "
                           "with; emit from an op, never from a context saved for later.",
                           (unsigned long long)ctx->generation, (unsigned long long)now);
}

mkrt_status mkrt_op_emit(const mkrt_op_ctx *ctx, const mkrt_item *items, size_t n)
{
    if (!live(ctx) || (items == NULL && n > 0))
        return MKRT_EINVAL;
    if (n == 0)
        return MKRT_OK;
    mkrt__state *sg = ctx->run->state;
    /* The queue of the running batch's class: emitted work inherits it. */
    mkrt__emitq *q = &sg->emitq[sg->emit_class];
    const uint64_t cap = sg->cfg->emit_capacity, limit = q->limit;
    /* relaxed (load and CAS): the claim only hands out disjoint positions;
     * the items written there reach the dispatcher through the batch's
     * completion (release by the workers, acquire by the dispatcher). */
    uint64_t at = atomic_load_explicit(&q->claim, memory_order_relaxed);
    do {
        if (n > limit - at) { /* at <= limit always */
            ctx->run->emit_full = true; /* the op's run: its thread's stack */
            return MKRT_EOVERFLOW;
        }
    } while (!atomic_compare_exchange_weak_explicit(&q->claim, &at, at + n, memory_order_relaxed,
                                                    memory_order_relaxed));
    size_t slot = (size_t)(at % cap), first = cap - slot < n ? (size_t)(cap - slot) : n;
    memcpy(q->ring + slot, items, first * sizeof *items);
    memcpy(q->ring, items + first, (n - first) * sizeof *items);
    return MKRT_OK;
}

mkrt_status mkrt_op_emit_edges(const mkrt_op_ctx *ctx, uint32_t v)
{
    if (!live(ctx) || ctx->run->op == NULL || ctx->run->op->expand_slot == 0 || ctx->run->op->mark == NULL ||
        ctx->graph == NULL || v >= ctx->graph->vertices)
        return MKRT_EINVAL;
    const mkrt__op_entry *row = ctx->run->op;
    (void)row->mark(row->engine, row->expand_slot, v); /* no edges: nothing to emit */
    return MKRT_OK;
}

void mkrt_op_changed(const mkrt_op_ctx *ctx)
{
    if (live(ctx))
        ctx->run->changed = true;
}

uint64_t mkrt_op_cell_load(const mkrt_op_ctx *ctx, uint32_t handle)
{
    if (!live(ctx) || ctx->cells == NULL || handle >= ctx->cell_count)
        return 0;
    /* relaxed: the value alone matters (a frontier round's concurrent
     * lowering is the mkrt__ops_atomic_min it may race with). */
    return atomic_load_explicit((_Atomic uint64_t *)&ctx->cells[handle], memory_order_relaxed);
}

bool mkrt_op_cell_min(const mkrt_op_ctx *ctx, uint32_t handle, uint64_t value)
{
    if (!live(ctx) || ctx->cells == NULL || handle >= ctx->cell_count)
        return false;
    if (!mkrt__ops_atomic_min(&ctx->cells[handle], value))
        return false;
    mkrt_op_changed(ctx);
    return true;
}
