/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/layer_split.c - stages layer and split.
 *
 * layer: the dedupe stage (pipeline/prune.c) gave every kept item its
 * level in the same pass that pruned (conflict-free layers: no two items
 * of a layer touch one cell in a conflicting way); this stage gathers
 * items[0..kept) into exec[] layer by layer.
 * split: with a memory budget, every layer goes through the frontier
 * planner (mkrt_plan_frontier_memory) as one barrier group of waves, one
 * wave per item with its op's envelope (user ops; built-ins need no
 * bytes); the planner splits the group greedily into chunks whose fused
 * bytes fit the budget less the resident bytes, and reports its peaks.
 * Each chunk becomes a layer of its own, run behind one more barrier.
 * The resident term is the runtime's data on the device (state.h,
 * device_resident: the graph and its frontier, the cells and the log
 * where they live in device memory). The budget is the
 * user's, or by default the device's (runtime/lifecycle.c). Without a
 * budget (0, unbounded) nothing is split: the layers are only counted,
 * and the place stage, once the plan says who runs the batch, moves the
 * items into exec by a counting sort on their levels (one copy, no index
 * array) - or not at all when one thread of the CPU pool runs them: in
 * drain order every item still comes after the earlier items it
 * conflicts with, which is all the layers promise, and the batch runs
 * straight from where the dedupe stage left it.
 * The levelling or the split failing for memory (scratch growth) runs
 * every item as a layer of its own: slow, but within the ordering
 * contract. */
#include "pipeline/layer_internal.h"
#include "pipeline/stages.h"
#include "pipeline/dispatch.h"

/* Appends the items of one layer to exec, split as the frontier planner
 * says; returns the new layer count. */
static size_t split_layer(mkrt__dispatch *dp, mkrt__batch *b, const mkrt_item *src, const uint32_t *idx,
                          size_t width, size_t layers)
{
    const uint64_t budget = dp->cfg->device_memory_budget;
    mkrt_frontier_plan fp;
    mkrt_error err;
    bool planned = false;
    if (budget != 0) {
        for (size_t k = 0; k < width; k++) {
            const mkrt_item *it = &src[idx[k]];
            dp->waves[k] = mkrt__ops_is_user(it->op) ? dp->state->ops[it->op].envelope : (mkrt_frontier_wave){0, 0, 0};
        }
        /* relaxed: a size (state.h). */
        const uint64_t resident = atomic_load_explicit(&dp->state->device_resident, memory_order_relaxed);
        planned = mkrt_plan_frontier_memory(dp->split, dp->waves, width, NULL, 0, resident, budget, 0, &fp,
                                            &err) == MKRT_OK;
    }
    if (!planned) {
        /* No budget: the layer as it is. Out of memory: item by item (an
         * admitted item always fits the budget alone). */
        size_t per = budget == 0 ? width : 1;
        for (size_t k = 0; k < width; k++) {
            b->exec[b->exec_n++] = src[idx[k]];
            if ((k + 1) % per == 0 || k + 1 == width)
                b->layer_offsets[++layers] = (uint32_t)b->exec_n;
        }
        return layers;
    }
    const mkrt_barrier_plan *g = &fp.barriers;
    for (size_t c = 0; c < g->group_count; c++) {
        for (size_t k = g->group_offsets[c]; k < g->group_offsets[c + 1]; k++)
            b->exec[b->exec_n++] = src[idx[g->waves[k]]];
        b->layer_offsets[++layers] = (uint32_t)b->exec_n;
    }
    b->plan.split_layers += g->group_count > 0 ? (uint32_t)g->group_count - 1 : 0;
    if (fp.peak_frontier_bytes > b->plan.peak_frontier_bytes)
        b->plan.peak_frontier_bytes = fp.peak_frontier_bytes;
    if (fp.peak_scratch_bytes > b->plan.peak_scratch_bytes)
        b->plan.peak_scratch_bytes = fp.peak_scratch_bytes;
    if (fp.peak_output_bytes > b->plan.peak_output_bytes)
        b->plan.peak_output_bytes = fp.peak_output_bytes;
    return layers;
}

void mkrt__stage_layer_split(mkrt__dispatch *dp, mkrt__batch *b)
{
    const mkrt_item *src = b->items;
    const size_t kept = b->kept, levels = b->layers;
    b->exec = b->exec_buf;
    b->layered = true;
    b->exec_n = 0;
    b->layer_offsets[0] = 0;
    b->plan.split_layers = 0;
    b->plan.peak_frontier_bytes = b->plan.peak_scratch_bytes = b->plan.peak_output_bytes = 0;
    size_t layers = 0;
    if (levels == 0 && kept > 0) {
        /* The dedupe stage could not level the batch (out of memory). */
        for (size_t k = 0; k < kept; k++) {
            b->exec[b->exec_n++] = src[k];
            b->layer_offsets[++layers] = (uint32_t)b->exec_n;
        }
    } else if (dp->cfg->device_memory_budget == 0) {
        /* No budget, nothing to split: the levels as they are, counted;
         * the items stay in drain order until mkrt__stage_place. */
        mkrt__layer_count(dp->scratch->layering, kept, levels, b->layer_offsets);
        b->exec = b->items;
        b->layered = levels <= 1;
        b->exec_n = kept;
        layers = levels;
    } else {
        mkrt_layer_plan lp;
        mkrt__layer_plan_csr(dp->scratch->layering, kept, levels, &lp);
        for (size_t l = 0; l < lp.layer_count; l++)
            layers = split_layer(dp, b, src, lp.layer_items + lp.layer_offsets[l],
                                 lp.layer_offsets[l + 1] - lp.layer_offsets[l], layers);
    }
    b->layers = layers;
}

void mkrt__stage_place(mkrt__dispatch *dp, mkrt__batch *b)
{
    if (b->layered || (dp->backends[b->plan.backend]->is_cpu_pool && b->plan.workers <= 1))
        return;
    /* The levels are still the dedupe stage's for this batch, in this
     * thread's scratch: no other batch is levelled between its split and
     * its launch, and mkrt__stage_own_levels levelled it here if another
     * thread did. */
    mkrt__layer_scatter(dp->scratch->layering, b->items, b->kept, b->layers, b->exec_buf, b->layer_offsets);
    b->exec = b->exec_buf;
    b->layered = true;
}
