/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/batch_planner.c - stage plan: which backend runs the batch and
 * how (plan/batch.h, mkrt__batch_plan).
 *
 * Route: the first backend that has not failed and accepts every item
 * (the CPU pool, last, accepts all).
 * Shape: SPREAD (plan/decide.h) chooses the topology of the typical
 * layer from what the batch measures: its density (layer width / batch
 * size) and the memory pressure (the sources' resident bytes and the
 * split's peaks against the budget), with hysteresis against its last
 * choice. The claim size is about four claims per participant of a
 * typical layer, 16..1024 items, and never below the backend's grain.
 * Per layer: a participant should get at least `spread` claims, where the
 * topology sets the spread: warp-sparse 4, sparse 2, the dense shapes 1
 * (a sparse layer is latency-bound: fewer participants, fewer threads
 * woken, and one participant on both sides of a boundary needs no grid
 * barrier). participants = clamp(ceil(width / (chunk x spread)), 1, width
 * of the backend). */
#include "pipeline/stages.h"
#include "pipeline/dispatch.h"

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

static bool plan_on(const mkrt__dispatch *dp, uint32_t bit)
{
    return !(dp->planner.off & bit);
}

/* The first device, in order of preference, that has not failed and
 * accepts the batch, unless ROUTE keeps a small batch of built-ins on the
 * CPU pool (plan/decide.h; not a batch of a made source, nor with the
 * state in device memory, which would move for it); else the CPU pool, which takes every batch. */
static uint32_t route(mkrt__dispatch *dp, mkrt__batch *b)
{
    uint32_t pool = 0, dev = UINT32_MAX;
    /* A made source's round of traversal jobs (plan/source.h, job) runs
     * whole on a device with room for them; its other items run where the
     * source is: the host. */
    const bool jobs = b->source->made && b->source->job != NULL && b->exec_n > 0 &&
                      b->source->job(b->source->ctx, &b->exec[0]) != NULL;
    for (uint32_t i = 0; i < dp->nbackends; i++) {
        const mkrt__backend *be = dp->backends[i];
        if (be->is_cpu_pool)
            pool = i;
        else if (dev == UINT32_MAX && !be->failed &&
                 (jobs ? b->exec_n <= be->jobs_max
                       : !b->source->made && be->ops->accepts(be, b->exec, b->exec_n)))
            dev = i;
    }
    b->note.route = MKRT_PLAN_ROUTE_CPU_ONLY;
    if (dev == UINT32_MAX)
        return pool;
    if (jobs) {
        b->note.route = MKRT_PLAN_ROUTE_DEVICE;
        return dev;
    }
    b->note.route = mkrt__decide_route(b->exec_n, b->user_ops == 0 && !b->source->made && !dp->device_state,
                                       &dp->planner.costs, plan_on(dp, MKRT_PLAN_ROUTE));
    /* A RELAX item the device accepted starts a whole traversal there (the
     * graph is resident): its cost is the traversal's, not n items', so the
     * batch is never "small". Scanned only when ROUTE would keep it, which
     * is a few items. */
    for (size_t i = 0; b->note.route == MKRT_PLAN_ROUTE_CPU_SMALL && i < b->exec_n; i++)
        if (b->exec[i].op == MKRT_OP_RELAX)
            b->note.route = MKRT_PLAN_ROUTE_DEVICE;
    if (b->note.route == MKRT_PLAN_ROUTE_CPU_SMALL) {
        mkrt__planner_count(&dp->planner, MKRT_PLAN_N_CPU_ROUTED, 1);
        return pool;
    }
    return dev;
}

/* Memory pressure of the batch against the budget, in bps (0: no
 * budget): the split's peak layer bytes and what is resident (the
 * device's count, or the sources' resident bytes and the device state),
 * all of it measured or counted, against the budget. */
static uint32_t memory_bps(const mkrt__dispatch *dp, const mkrt__batch *b)
{
    const uint64_t budget = dp->cfg->device_memory_budget;
    if (budget == 0)
        return 0;
    unsigned __int128 need = (unsigned __int128)b->plan.peak_frontier_bytes + b->plan.peak_scratch_bytes +
                             b->plan.peak_output_bytes;
    /* What is resident: the device's own count where a device holds the
     * runtime's data (state.h, device_resident: the graph and its
     * frontier, the cells and the log in device memory), else what the
     * sources keep resident for their items (plan/source.h) and the
     * device state's cells and log; the larger, so nothing counts twice.
     * relaxed: a size. */
    unsigned __int128 host = 0;
    for (uint32_t i = 0; i < dp->nsources; i++)
        if (dp->sources[i]->resident_bytes != NULL)
            host += dp->sources[i]->resident_bytes(dp->sources[i]->ctx);
    if (dp->device_state)
        host += (unsigned __int128)dp->state->cells_bytes + dp->state->log_bytes;
    const uint64_t device = atomic_load_explicit(&dp->state->device_resident, memory_order_relaxed);
    need += host > device ? host : device;
    const unsigned __int128 bps = need * 10000u / budget;
    return bps < 10000u ? (uint32_t)bps : 10000u;
}

/* MKRT__SHARE_MIN_DEFAULT (plan/decide.h): the fewest items one participant
 * of a CPU layer of built-in ops gets before WAKE measured the costs, and with
 * WAKE off:
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

/* The producers of b that published again since b was drained (their
 * rings hold items): the ones that still use a CPU while b runs, counted
 * up to `most`. Read by the token's holder, which drained b: none of b's
 * producers is retired before b completes (drain.c, retire_closed). A
 * producer whose items span several segments may count more than once;
 * the count is a hint and `most` bounds it. */
static uint32_t producers_publishing(const mkrt__batch *b, uint32_t most)
{
    uint32_t n = 0;
    const mkrt_producer *last = NULL;
    for (size_t i = 0; i < b->nseg && n < most; i++) {
        const mkrt_producer *p = b->segs[i].p;
        if (p != last && mkrt_spsc_ring_size(p->ring) > 0)
            n++;
        last = p;
    }
    return n;
}

/* How many CPUs a batch on the pool may use: the process's CPUs less one
 * for each producer that still publishes, at least 1 (the thread that
 * dispatches is one of the executors, cpu_pool.c). Re-read for every
 * batch, so the width follows the producers while the runtime runs; on 2
 * CPUs with a busy producer it is 1, and the batch runs on the
 * dispatching thread (oversubscribing the CPUs with workers was measured
 * slower, issue 13). With the default worker count a producer of the
 * batch is busy unless it is inside mkrt_wait or mkrt_drain. With a
 * count the user chose, only a producer that published again since the
 * batch was drained is: the user's width stands for work published
 * ahead of its run, and yields where a producer that publishes all the
 * time needs its CPU (independent items at 2 workers on 2 CPUs: 0.65x
 * -> 0.96x one worker's rate, bench/results/megakernel.md). */
uint32_t mkrt__plan_cpu_width(mkrt__dispatch *dp, const mkrt__batch *b, uint32_t width)
{
    if (!plan_on(dp, MKRT_PLAN_SHED))
        return width;
    const uint32_t most = dp->cpus > 1 ? dp->cpus - 1 : 1;
    uint32_t busy;
    if (dp->cfg->workers != 0) {
        busy = producers_publishing(b, most);
        if (busy == 0)
            return width; /* the user's count, above the CPUs too */
    } else {
        /* relaxed: counts read as hints; a stale one only mis-sizes one batch. */
        uint32_t open = atomic_load_explicit(&dp->producers->producers_open, memory_order_relaxed);
        uint32_t waiting = atomic_load_explicit(&dp->waiting, memory_order_relaxed);
        uint32_t active = b->nseg < open ? (uint32_t)b->nseg : open;
        busy = active > waiting ? active - waiting : 0;
    }
    return mkrt__decide_cpu_width(dp->cpus, busy, width);
}

void mkrt__stage_plan(mkrt__dispatch *dp, mkrt__batch *b)
{
    mkrt__batch_plan *plan = &b->plan;
    plan->backend = route(dp, b);
    const mkrt__backend *be = dp->backends[plan->backend];
    plan->width = be->width ? be->width : 1;
    uint32_t full = plan->width;
    if (be->is_cpu_pool)
        plan->width = mkrt__plan_cpu_width(dp, b, plan->width);
    const uint32_t mem_bps = memory_bps(dp, b);
    if (plan_on(dp, MKRT_PLAN_SHED))
        plan->width = mkrt__decide_shed_memory(plan->width, mem_bps);
    if (plan->width < full)
        mkrt__planner_count(&dp->planner, MKRT_PLAN_N_SHED, 1);
    const uint64_t n = b->exec_n, typical = n / (b->layers ? b->layers : 1);
    /* SPREAD: the typical layer's measured density and the memory
     * pressure (plan/decide.h). */
    plan->topology = mkrt__decide_spread(typical, n, mem_bps, dp->planner.spread_prev);
    dp->planner.spread_prev = plan->topology;
    uint64_t chunk = typical / ((uint64_t)be->width * 4);
    plan->chunk = (uint32_t)(chunk < 16 ? 16 : chunk > 1024 ? 1024 : chunk);
    uint64_t per = (uint64_t)plan->chunk * spread_of(plan->topology);
    /* Built-in ops cost nanoseconds each; a user op may cost far more, so
     * a batch with user ops keeps the topology's spread alone. WAKE: the
     * share from the measured costs (plan/decide.h). */
    uint32_t share_min = mkrt__decide_share_min(&dp->planner.costs, plan_on(dp, MKRT_PLAN_WAKE));
    if (be->is_cpu_pool && b->user_ops == 0 && per < share_min)
        per = share_min;
    plan->workers = 1;
    plan->grid_barriers = 0;
    uint64_t narrow = 0, woken = 0;
    for (size_t l = 0; l < b->layers; l++) {
        uint64_t width = b->layer_offsets[l + 1] - b->layer_offsets[l];
        uint64_t p = (width + per - 1) / per;
        p = p < 1 ? 1 : p > plan->width ? plan->width : p;
        plan->participants[l] = (uint32_t)p;
        narrow += width <= per;
        woken += p < plan->width;
    }
    /* FUSE: FusedWave on the batch's measured shape, with hysteresis. */
    mkrt_wave_topology fd = MKRT_WAVE_HYBRID;
    uint32_t fused = 0;
    if (plan_on(dp, MKRT_PLAN_FUSE) && b->layers > 1 && plan->width > 1) {
        fd = mkrt__decide_fuse(b->exec_n, b->layers, narrow, &dp->planner.costs, mem_bps, dp->planner.fuse_prev);
        dp->planner.fuse_prev = fd;
        uint64_t fuse_max = (uint64_t)mkrt__decide_fuse_max((uint32_t)(per < UINT32_MAX / 4 ? per : UINT32_MAX / 4));
        for (size_t l = 0; fd == MKRT_WAVE_FUSED && l < b->layers; l++)
            if (plan->participants[l] > 1 && b->layer_offsets[l + 1] - b->layer_offsets[l] <= fuse_max) {
                plan->participants[l] = 1;
                fused++;
            }
    }
    for (size_t l = 0; l < b->layers; l++)
        if (plan->participants[l] > plan->workers)
            plan->workers = plan->participants[l];
    for (size_t l = 0; l + 1 < b->layers; l++)
        plan->grid_barriers += mkrt__plan_grid_barrier_after(plan, l, b->layers);
    if (woken)
        mkrt__planner_count(&dp->planner, MKRT_PLAN_N_WAKE_NARROWED, woken);
    if (fused)
        mkrt__planner_count(&dp->planner, MKRT_PLAN_N_FUSED, fused);
    mkrt_plan_record *r = &b->note;
    r->items = b->exec_n;
    r->layers = (uint32_t)b->layers;
    r->on_device = !be->is_cpu_pool;
    r->memory_bps = mem_bps;
    r->memory_budget = dp->cfg->device_memory_budget;
    r->budget_from_device = dp->state->budget_from_device;
    /* relaxed: a size (state.h). */
    r->resident_bytes = atomic_load_explicit(&dp->state->device_resident, memory_order_relaxed);
    r->split_layers = b->plan.split_layers;
    r->peak_layer_bytes = b->plan.peak_frontier_bytes + b->plan.peak_scratch_bytes + b->plan.peak_output_bytes;
    const mkrt__plan_costs *c = &dp->planner.costs;
    r->cpu_ps_per_item = c->cpu_ns_item.n ? (uint64_t)(c->cpu_ns_item.v * 1000.0) : 0;
    r->handoff_ns = c->handoff_ns.n ? (uint64_t)c->handoff_ns.v : 0;
    r->device_trip_ns = c->dev_trip_ns.n ? (uint64_t)c->dev_trip_ns.v : 0;
    r->width = plan->width;
    r->workers = plan->workers;
    r->share_min = (uint32_t)(per < UINT32_MAX ? per : UINT32_MAX);
    r->grid_barriers = plan->grid_barriers;
    r->fused_layers = fused;
    r->topology = (uint32_t)fd;
}
