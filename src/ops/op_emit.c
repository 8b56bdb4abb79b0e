/* SPDX-License-Identifier: BSD-2-Clause */
/* src/ops/op_emit.c - what a running op may do besides its cells: emit
 * follow-up items into the emission queue (see runtime_internal.h for its
 * positions), say that it changed its output, and lower a cell atomically.
 * All of it runs on the thread that runs the op. */
#include <string.h>

#include "ops/builtin_ops.h"
#include "ops/op_table.h"
#include "runtime/runtime_internal.h"

mkrt_status mkrt_op_emit(const mkrt_op_ctx *ctx, const mkrt_item *items, size_t n)
{
    if (ctx == NULL || ctx->run == NULL || ctx->run->rt == NULL || (items == NULL && n > 0))
        return MKRT_EINVAL;
    if (n == 0)
        return MKRT_OK;
    mkrt_runtime *rt = ctx->run->rt;
    const uint64_t cap = rt->cfg.emit_capacity, limit = rt->emit_limit;
    /* relaxed (load and CAS): the claim only hands out disjoint positions;
     * the items written there reach the dispatcher through the batch's
     * completion (release by the workers, acquire by the dispatcher). */
    uint64_t at = atomic_load_explicit(&rt->emit_claim, memory_order_relaxed);
    do {
        if (n > limit - at) /* at <= limit always */
            return MKRT_EOVERFLOW;
    } while (!atomic_compare_exchange_weak_explicit(&rt->emit_claim, &at, at + n, memory_order_relaxed,
                                                    memory_order_relaxed));
    size_t slot = (size_t)(at % cap), first = cap - slot < n ? (size_t)(cap - slot) : n;
    memcpy(rt->emit_ring + slot, items, first * sizeof *items);
    memcpy(rt->emit_ring, items + first, (n - first) * sizeof *items);
    return MKRT_OK;
}

mkrt_status mkrt_op_emit_edges(const mkrt_op_ctx *ctx, uint32_t v)
{
    if (ctx == NULL || ctx->run == NULL || ctx->run->rt == NULL || ctx->run->expand_slot == 0 ||
        ctx->graph == NULL || v >= ctx->graph->vertices)
        return MKRT_EINVAL;
    (void)mkrt__frontier_add(ctx->run->rt, ctx->run->expand_slot, v); /* no edges: nothing to emit */
    return MKRT_OK;
}

void mkrt_op_changed(const mkrt_op_ctx *ctx)
{
    if (ctx != NULL && ctx->run != NULL)
        ctx->run->changed = true;
}

uint64_t mkrt_op_cell_load(const mkrt_op_ctx *ctx, uint32_t handle)
{
    if (ctx == NULL || ctx->cells == NULL || handle >= ctx->cell_count)
        return 0;
    /* relaxed: the value alone matters (a frontier round's concurrent
     * lowering is the mkrt__ops_atomic_min it may race with). */
    return atomic_load_explicit((_Atomic uint64_t *)&ctx->cells[handle], memory_order_relaxed);
}

bool mkrt_op_cell_min(const mkrt_op_ctx *ctx, uint32_t handle, uint64_t value)
{
    if (ctx == NULL || ctx->cells == NULL || handle >= ctx->cell_count)
        return false;
    if (!mkrt__ops_atomic_min(&ctx->cells[handle], value))
        return false;
    mkrt_op_changed(ctx);
    return true;
}
