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
#include "pipeline/dispatch.h"

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

/* The first device, in order of preference, that has not failed and
 * accepts the batch; else the CPU pool, which takes every batch. */
static uint32_t route(mkrt__dispatch *dp, const mkrt__batch *b)
{
    uint32_t pool = 0;
    for (uint32_t i = 0; i < dp->nbackends; i++) {
        const mkrt__backend *be = dp->backends[i];
        if (be->is_cpu_pool)
            pool = i;
        else if (!be->failed && be->ops->accepts(be, b->exec, b->exec_n))
            return i;
    }
    return pool;
}

/* The fewest items one participant of a CPU layer of built-in ops gets:
 * such a layer narrower than twice this runs on one thread, and a run of
 * them needs no barrier (batch.h). Where the number came from: one hand-off
 * to the workers plus one layer barrier costs 10-50 us on the 2-CPU
 * development VMs (issue 13), a built-in ADD 5-10 ns, so a second
 * participant pays from a few thousand items. Swept with
 * `MKRT_DEV_SHARE_MIN=v build/bench/peer_bench --mkrt-only` (a temporary
 * override, since removed) over v = 16, 256, 1024, 2048, 4096, 16384,
 * 65536, mkrt at 2 workers, two passes: 16 was the worst (chains
 * step-major 16-19 M items/s against 22-40 for the others); 1024..16384
 * were within the VM's noise of each other, so the cost model picks 2048
 * among them. Re-sweep on a quiet machine with more CPUs. */
#define MKRT__CPU_SHARE_MIN_ITEMS 2048u

/* How many CPUs a batch on the pool may use when the worker count is the
 * default: the process's CPUs less one for the thread that dispatches and
 * one for each producer of the batch that is still publishing (not inside
 * mkrt_wait or mkrt_drain), at least 1. Re-read for every batch, so the
 * width follows the producers while the runtime runs; on 2 CPUs with a
 * busy producer it is 1, and the batch runs on the dispatching thread
 * (oversubscribing the CPUs with workers was measured slower, issue 13). */
static uint32_t cpu_width(mkrt__dispatch *dp, const mkrt__batch *b, uint32_t width)
{
    if (dp->cfg->workers != 0)
        return width; /* the user chose the workers */
    /* relaxed: counts read as hints; a stale one only mis-sizes one batch. */
    uint32_t open = atomic_load_explicit(&dp->producers->producers_open, memory_order_relaxed);
    uint32_t waiting = atomic_load_explicit(&dp->waiting, memory_order_relaxed);
    uint32_t active = b->nseg < open ? (uint32_t)b->nseg : open;
    uint32_t busy = active > waiting ? active - waiting : 0;
    uint32_t free_cpus = dp->cpus > busy + 1 ? dp->cpus - busy - 1 : 1;
    return free_cpus < width ? free_cpus : width;
}

void mkrt__stage_plan(mkrt__dispatch *dp, mkrt__batch *b)
{
    mkrt__batch_plan *plan = &b->plan;
    plan->backend = route(dp, b);
    const mkrt__backend *be = dp->backends[plan->backend];
    plan->width = be->width ? be->width : 1;
    if (be->is_cpu_pool)
        plan->width = cpu_width(dp, b, plan->width);
    shape x = {b, be, dp->cfg->device_memory_budget};
    const unsigned n_bits = bitlen(b->exec_n), layer_bits = bitlen(b->layers);
    mkrt_device_key dev = mkrt_device_key_cpu();
    dev.max_workgroup_size = plan->width;
    mkrt_exec_sample s = {1000.0, 0.0, 0};
    mkrt_memory_budget m = {0, x.budget};
    mkrt_plan_key key = mkrt_plan_key_make((uint64_t)n_bits << 8 | layer_bits, MKRT_ANALYSIS_DATAFLOW,
                                           plan->backend, &dev, plan->width, &s, &m, 0, 0);
    mkrt_plan cached;
    mkrt_error err;
    if (mkrt_plan_cache_get_or_plan_copy(dp->plans, &key, build_plan, &x, &cached, &err) == MKRT_OK) {
        plan->topology = cached.decision.topology;
        plan->chunk = cached.geometry.workgroup_size_x;
    } else { /* out of memory in the cache: a plain plan */
        plan->topology = MKRT_WAVE_HYBRID;
        plan->chunk = 64;
    }
    uint64_t per = (uint64_t)plan->chunk * spread_of(plan->topology);
    /* Built-in ops cost nanoseconds each; a user op may cost far more, so
     * a batch with user ops keeps the topology's spread alone. */
    uint64_t share_min = MKRT__CPU_SHARE_MIN_ITEMS;
    if (be->is_cpu_pool && b->user_ops == 0 && per < share_min)
        per = share_min;
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
