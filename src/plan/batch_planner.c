/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/batch_planner.c - stage plan: which backend runs the batch and
 * how (pipeline/batch.h, mkrt__batch_plan).
 *
 * Route: the first backend that has not failed and accepts every item
 * (the CPU pool, last, accepts all).
 * Shape: the batch's size and layer count (as bit lengths) and the
 * backend's width key the RCU plan cache; on a miss the topology planner
 * (mkrt_select_topology_stable, hysteresis against the identity's last
 * decision) chooses the execution topology for the typical layer: its
 * frontier density is layer width / batch size, the graph is the batch's
 * items, the memory the split's peak bytes against the budget. The claim
 * size is about four claims per participant of a typical layer, 16..1024
 * items, and never below the backend's grain.
 * Per layer: a participant should get at least `spread` claims, where the
 * topology sets the spread: warp-sparse 4, sparse 2, the dense shapes 1
 * (a sparse layer is latency-bound: fewer participants, fewer threads
 * woken, and one participant on both sides of a boundary needs no grid
 * barrier). participants = clamp(ceil(width / (chunk x spread)), 1, width
 * of the backend). */
#include "pipeline/stages.h"
#include "runtime/runtime_internal.h"

static unsigned bitlen(uint64_t v)
{
    return v == 0 ? 0 : 64u - (unsigned)__builtin_clzll(v);
}

typedef struct shape {
    const mkrt__batch *b;
    const mkrt__backend *be;
    uint64_t budget;
} shape;

/* The cache's builder: the topology planner's decision and the claim size
 * for a batch shape. */
static mkrt_status build_plan(void *p, const mkrt_plan_key *key, mkrt_wave_topology prev,
                              mkrt_plan *plan, mkrt_error *err)
{
    (void)key;
    (void)err;
    const shape *x = p;
    const mkrt__batch *b = x->b;
    uint64_t n = b->exec_n, layers = b->layers ? b->layers : 1, width = n / layers;
    uint64_t peak = b->plan.peak_frontier_bytes + b->plan.peak_scratch_bytes + b->plan.peak_output_bytes;
    mkrt_exec_sample s = {1000.0, n ? (double)width / (double)n : 0.0, 0};
    mkrt_graph_shape g = {n, n};
    mkrt_memory_budget m = {peak, x->budget};
    plan->decision = prev == MKRT_WAVE_NONE ? mkrt_select_topology(&s, &g, &m, 0, 0, true)
                                            : mkrt_select_topology_stable(&s, &g, &m, 0, 0, prev, true);
    uint64_t chunk = width / ((uint64_t)x->be->width * 4);
    chunk = chunk < 16 ? 16 : chunk > 1024 ? 1024 : chunk;
    plan->geometry.workgroup_size_x = (uint32_t)chunk;
    plan->worker_groups = x->be->width;
    return MKRT_OK;
}

static uint32_t spread_of(mkrt_wave_topology t)
{
    switch (t) {
    case MKRT_WAVE_WARP_SPARSE:
        return 4;
    case MKRT_WAVE_SPARSE:
        return 2;
    default:
        return 1;
    }
}

static uint32_t route(mkrt_runtime *rt, const mkrt__batch *b)
{
    for (uint32_t i = 0; i + 1 < rt->nbackends; i++) {
        const mkrt__backend *be = rt->backends[i];
        if (!be->failed && be->ops->accepts(be, b->exec, b->exec_n))
            return i;
    }
    return rt->nbackends - 1;
}

void mkrt__stage_plan(mkrt_runtime *rt, mkrt__batch *b)
{
    mkrt__batch_plan *plan = &b->plan;
    plan->backend = route(rt, b);
    const mkrt__backend *be = rt->backends[plan->backend];
    plan->width = be->width ? be->width : 1;
    shape x = {b, be, rt->cfg.device_memory_budget};
    const unsigned n_bits = bitlen(b->exec_n), layer_bits = bitlen(b->layers);
    mkrt_device_key dev = mkrt_device_key_cpu();
    dev.max_workgroup_size = plan->width;
    mkrt_exec_sample s = {1000.0, 0.0, 0};
    mkrt_memory_budget m = {0, x.budget};
    mkrt_plan_key key = mkrt_plan_key_make((uint64_t)n_bits << 8 | layer_bits, MKRT_ANALYSIS_DATAFLOW,
                                           plan->backend, &dev, plan->width, &s, &m, 0, 0);
    mkrt_plan cached;
    mkrt_error err;
    if (mkrt_plan_cache_get_or_plan_copy(rt->plans, &key, build_plan, &x, &cached, &err) == MKRT_OK) {
        plan->topology = cached.decision.topology;
        plan->chunk = cached.geometry.workgroup_size_x;
    } else { /* out of memory in the cache: a plain plan */
        plan->topology = MKRT_WAVE_HYBRID;
        plan->chunk = 64;
    }
    const uint64_t per = (uint64_t)plan->chunk * spread_of(plan->topology);
    plan->workers = 1;
    plan->grid_barriers = 0;
    for (size_t l = 0; l < b->layers; l++) {
        uint64_t width = b->layer_offsets[l + 1] - b->layer_offsets[l];
        uint64_t p = (width + per - 1) / per;
        p = p < 1 ? 1 : p > plan->width ? plan->width : p;
        plan->participants[l] = (uint32_t)p;
        if (p > plan->workers)
            plan->workers = (uint32_t)p;
    }
    for (size_t l = 0; l + 1 < b->layers; l++)
        plan->grid_barriers += mkrt__plan_grid_barrier_after(plan, l, b->layers);
}
