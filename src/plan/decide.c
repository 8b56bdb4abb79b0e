/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/decide.c - the plan's decisions as pure functions of what the
 * data path measured (plan/decide.h says each rule and where it is from). */
#include "mkrt/graph.h"
#include "mkrt/op.h"
#include "mkrt/publish.h"
#include "ops/pull_rule.h"
#include "plan/decide.h"

/* The launch policy's thresholds (vyre-semantics.md, launch policy). */
#define SATURATED_WAVES 4u
#define MEMORY_SHED_BPS 8500u
#define SPARSE_BPS 500u
#define DENSE_BPS 4000u
#define HYSTERESIS_BPS 250u
/* FUSE takes layers up to this many share_min wide onto one participant. */
#define FUSE_SHARES 4u
/* FUSE: the seed selector's FusedWave band (fusion pressure 70%, launch
 * pressure 15%, memory at most 8500 bps; a fused choice holds to 60%,
 * 12.5% and 8750). */
#define FUSE_FUSION_BPS 7000u
#define FUSE_FUSION_HYSTERESIS_BPS 1000u
#define FUSE_LAUNCH_BPS 1500u
#define FUSE_MEMORY_BPS 8500u
/* SPREAD and QUEUE: the seed selector's frontier bands (warp-sparse at
 * most 3.125%, sparse at most 12.5%, 2.5% hysteresis; memory at 9000 bps
 * and above is the sparse red zone). */
#define SPREAD_WARP_BPS 312u
#define SPREAD_SPARSE_BPS 1250u
#define SPREAD_HYSTERESIS_BPS 250u
#define SPREAD_MEMORY_BPS 9000u

mkrt_plan_pressure mkrt__decide_pressure(uint64_t queued, uint64_t lanes, uint64_t requeued)
{
    if (queued == 0 && requeued == 0)
        return MKRT_PLAN_PRESSURE_EMPTY;
    lanes = lanes ? lanes : 1;
    if (requeued > 0 || queued / SATURATED_WAVES >= lanes)
        return MKRT_PLAN_PRESSURE_SATURATED;
    return queued >= lanes ? MKRT_PLAN_PRESSURE_BALANCED : MKRT_PLAN_PRESSURE_LIGHT;
}

uint32_t mkrt__decide_split(const mkrt__plan_costs *c, uint64_t n, uint32_t executors, bool probe)
{
    if (executors < 2 || c->level_ns_item.n < MKRT__EMA_TRUST || !(c->level_ns_item.v > 0.0))
        return 1;
    const double handoff = c->split_handoff_ns.n && !probe ? c->split_handoff_ns.v
                           : c->handoff_ns.n     ? c->handoff_ns.v
                                                 : MKRT__SPLIT_HANDOFF_NS;
    const uint32_t p = executors < MKRT__SPLIT_PARTS_MAX ? executors : MKRT__SPLIT_PARTS_MAX;
    const double moved = c->level_ns_item.v * (double)n * (1.0 - 1.0 / (double)p);
    return moved > handoff * 1.25 ? p : 1;
}

uint32_t mkrt__decide_share_min(const mkrt__plan_costs *c, bool on)
{
    if (!on || c->cpu_ns_item.n < MKRT__EMA_TRUST || c->handoff_ns.n < MKRT__EMA_TRUST ||
        !(c->cpu_ns_item.v > 0.0))
        return MKRT__SHARE_MIN_DEFAULT;
    /* A second participant pays when its share of the work saves more
     * than one hand-off (and the layer's barrier) costs. */
    double share = c->handoff_ns.v / c->cpu_ns_item.v;
    if (!(share >= MKRT__SHARE_MIN_LO))
        return MKRT__SHARE_MIN_LO;
    return share > MKRT__SHARE_MIN_HI ? MKRT__SHARE_MIN_HI : (uint32_t)share;
}

uint32_t mkrt__decide_shed_memory(uint32_t p, uint32_t memory_bps)
{
    if (memory_bps < MEMORY_SHED_BPS)
        return p;
    if (memory_bps > 10000u)
        memory_bps = 10000u;
    /* 7500 bps kept at the threshold, 5000 at 10000, linear between. */
    uint64_t keep = 7500u - (uint64_t)(memory_bps - MEMORY_SHED_BPS) * 2500u / (10000u - MEMORY_SHED_BPS);
    uint64_t q = (uint64_t)p * keep / 10000u;
    return q < 1 ? 1 : (uint32_t)q;
}

uint32_t mkrt__decide_cpu_width(uint32_t cpus, uint32_t busy_producers, uint32_t width)
{
    /* The dispatching thread is one of the executors (backend/cpu_pool.c):
     * every CPU the busy producers leave is the batch's. */
    uint32_t free_cpus = cpus > busy_producers ? cpus - busy_producers : 1;
    return free_cpus < width ? free_cpus : width;
}

mkrt_wave_topology mkrt__decide_fuse(uint64_t items, uint64_t layers, uint64_t narrow, const mkrt__plan_costs *c,
                                     uint32_t memory_bps, mkrt_wave_topology prev)
{
    /* Only on what the path measured: the CPU pool's ns per item and its
     * hand-off. Before both were sampled the rule is off. */
    if (c->cpu_ns_item.n == 0 || c->handoff_ns.n == 0 || items == 0)
        return MKRT_WAVE_HYBRID;
    layers = layers ? layers : 1;
    const bool was = prev == MKRT_WAVE_FUSED;
    /* One layer's work at the measured cost; the launch pressure is the
     * measured hand-off and barrier over it; the fusion pressure the
     * share of layers narrow enough for one participant. */
    const double layer_ns = (double)items / (double)layers * c->cpu_ns_item.v;
    const double launch_bps = layer_ns > 0.0 ? c->handoff_ns.v / layer_ns * 10000.0 : 0.0;
    const uint64_t fusion_bps = narrow * 10000u / layers;
    const bool fused = fusion_bps >= (was ? FUSE_FUSION_BPS - FUSE_FUSION_HYSTERESIS_BPS : FUSE_FUSION_BPS) &&
                       launch_bps >= (double)(was ? FUSE_LAUNCH_BPS - HYSTERESIS_BPS : FUSE_LAUNCH_BPS) &&
                       memory_bps <= (was ? FUSE_MEMORY_BPS + HYSTERESIS_BPS : FUSE_MEMORY_BPS);
    return fused ? MKRT_WAVE_FUSED : MKRT_WAVE_HYBRID;
}

mkrt_wave_topology mkrt__decide_spread(uint64_t width, uint64_t items, uint32_t memory_bps, mkrt_wave_topology prev)
{
    const uint64_t bps = items ? width * 10000u / items : 0;
    const bool sparse_prev = prev == MKRT_WAVE_SPARSE || prev == MKRT_WAVE_WARP_SPARSE;
    if (memory_bps >= SPREAD_MEMORY_BPS || (sparse_prev && memory_bps + HYSTERESIS_BPS >= SPREAD_MEMORY_BPS))
        return MKRT_WAVE_SPARSE;
    if (bps <= SPREAD_WARP_BPS + (prev == MKRT_WAVE_WARP_SPARSE ? SPREAD_HYSTERESIS_BPS : 0))
        return MKRT_WAVE_WARP_SPARSE;
    if (bps <= SPREAD_SPARSE_BPS + (prev == MKRT_WAVE_SPARSE ? SPREAD_HYSTERESIS_BPS : 0) &&
        !(prev == MKRT_WAVE_HYBRID && bps + SPREAD_HYSTERESIS_BPS >= SPREAD_SPARSE_BPS))
        return MKRT_WAVE_SPARSE;
    return MKRT_WAVE_HYBRID;
}

bool mkrt__decide_frontier_queue(uint64_t nf, uint64_t vertices, bool prev, bool on)
{
    if (!on || nf == 0 || vertices == 0)
        return false;
    const uint64_t bps = nf >= vertices ? 10000u : nf * 10000u / vertices;
    return bps <= SPREAD_SPARSE_BPS + (prev ? SPREAD_HYSTERESIS_BPS : 0);
}

uint32_t mkrt__decide_fuse_max(uint32_t share_min)
{
    return share_min * FUSE_SHARES;
}

mkrt_plan_route mkrt__decide_route(uint64_t n, bool builtin_only, const mkrt__plan_costs *c, bool on)
{
    /* Only on measured costs: the device's round trip and the CPU pool's
     * ns per item (a small batch of built-ins runs on one thread, so the
     * pool samples it before the device has its round trips). */
    if (!on || !builtin_only || c->dev_trip_ns.n < MKRT__EMA_TRUST || c->cpu_ns_item.n == 0)
        return MKRT_PLAN_ROUTE_DEVICE;
    return (double)n * c->cpu_ns_item.v < c->dev_trip_ns.v ? MKRT_PLAN_ROUTE_CPU_SMALL : MKRT_PLAN_ROUTE_DEVICE;
}

uint32_t mkrt__decide_drain_first(const uint64_t *waiting, const uint32_t *age, uint32_t slots,
                                  uint32_t rr, bool on, mkrt_plan_first *why)
{
    *why = MKRT_PLAN_FIRST_ROUND_ROBIN;
    if (!on || slots == 0)
        return rr;
    uint32_t aged = UINT32_MAX, fullest = UINT32_MAX, oldest = 0;
    uint64_t most = 0;
    /* From rr on, so ties go round robin. */
    for (uint32_t i = 0; i < slots; i++) {
        uint32_t s = (rr + i) % slots;
        if (waiting[s] == 0)
            continue;
        if (age[s] >= MKRT__AGE_PROMOTE && age[s] > oldest) {
            oldest = age[s];
            aged = s;
        }
        if (waiting[s] > most) {
            most = waiting[s];
            fullest = s;
        }
    }
    if (aged != UINT32_MAX) {
        *why = MKRT_PLAN_FIRST_AGED;
        return aged;
    }
    if (fullest != UINT32_MAX && fullest != rr) {
        *why = MKRT_PLAN_FIRST_FULLEST;
        return fullest;
    }
    return rr;
}

uint32_t mkrt__decide_class(bool interactive, bool bulk, uint32_t bulk_age, uint64_t bulk_wait_ns,
                            uint64_t max_age_ns, mkrt_plan_class_why *why)
{
    if (!interactive) {
        *why = MKRT_PLAN_CLASS_BULK_ONLY;
        return MKRT_CLASS_BULK;
    }
    if (!bulk) {
        *why = MKRT_PLAN_CLASS_INTERACTIVE;
        return MKRT_CLASS_INTERACTIVE;
    }
    /* The seeds' aging: work passed over priority_age_threshold times
     * goes first; and a wall-clock bound on top, so that slow interactive
     * batches cannot stretch 32 ticks into seconds. */
    if (bulk_age >= MKRT__AGE_PROMOTE) {
        *why = MKRT_PLAN_CLASS_AGED;
        return MKRT_CLASS_BULK;
    }
    if (max_age_ns != 0 && bulk_wait_ns >= max_age_ns) {
        *why = MKRT_PLAN_CLASS_MAX_AGE;
        return MKRT_CLASS_BULK;
    }
    *why = MKRT_PLAN_CLASS_FIRST;
    return MKRT_CLASS_INTERACTIVE;
}

size_t mkrt__decide_bulk_cap(const mkrt__ema *ns_item, uint64_t slice_ns, size_t max_batch)
{
    if (slice_ns == 0 || ns_item->n < MKRT__EMA_TRUST || !(ns_item->v > 0.0))
        return max_batch;
    double items = (double)slice_ns / ns_item->v;
    if (items >= (double)max_batch)
        return max_batch;
    size_t cap = items > (double)MKRT__BULK_CAP_MIN ? (size_t)items : MKRT__BULK_CAP_MIN;
    return cap < max_batch ? cap : max_batch;
}

bool mkrt__decide_level_yield(bool items_waiting, bool source_waiting, bool quiesce_waiting, bool on)
{
    return !on || items_waiting || source_waiting || quiesce_waiting;
}

bool mkrt__decide_level_alone(uint64_t edges, bool on)
{
    return on && edges < 2u * MKRT__SHARE_MIN_DEFAULT;
}

bool mkrt_graph_pull_next(uint64_t frontier, uint64_t frontier_edges, uint64_t unvisited_edges,
                          uint64_t vertices, bool pulled)
{
    /* The rule is written once, for the host and the device (the traversal
     * jobs' levels, backend/mk_trav.h and megakernel.cu): ops/pull_rule.h. */
    return mkrt__ops_pull_rule(frontier, frontier_edges, unvisited_edges, vertices, pulled);
}

bool mkrt__decide_pull(uint64_t nf, uint64_t mf, uint64_t unsettled, uint64_t vertices, bool was, bool on)
{
    return on && mkrt_graph_pull_next(nf, mf, unsettled, vertices, was);
}

mkrt_plan_frontier mkrt__decide_frontier_class(uint32_t bps, mkrt_plan_frontier prev)
{
    /* The previous class holds within 250 bps of its band. */
    if (prev == MKRT_PLAN_FRONTIER_SPARSE && bps <= SPARSE_BPS + HYSTERESIS_BPS)
        return prev;
    if (prev == MKRT_PLAN_FRONTIER_DENSE && bps + HYSTERESIS_BPS >= DENSE_BPS)
        return prev;
    if (prev == MKRT_PLAN_FRONTIER_HYBRID && bps + HYSTERESIS_BPS > SPARSE_BPS && bps < DENSE_BPS + HYSTERESIS_BPS)
        return prev;
    return bps <= SPARSE_BPS ? MKRT_PLAN_FRONTIER_SPARSE
           : bps >= DENSE_BPS ? MKRT_PLAN_FRONTIER_DENSE
                              : MKRT_PLAN_FRONTIER_HYBRID;
}

bool mkrt__decide_arm_covered(uint32_t op, uint32_t p_early, uint32_t p_late)
{
    switch (op) {
    case MKRT_OP_NOP:
        return true;
    case MKRT_OP_MIN:
    case MKRT_OP_RELAX:
        return p_late >= p_early; /* the saturating add is monotone in param */
    case MKRT_OP_OR:
        return (p_late & ~p_early) == 0;
    default:
        return false;
    }
}

uint64_t mkrt__decide_arms_look(const mkrt__plan_costs *c, uint64_t n, uint64_t seq)
{
    const uint64_t probe = n < MKRT__ARMS_PROBE_ITEMS ? n : MKRT__ARMS_PROBE_ITEMS;
    if (seq % MKRT__ARMS_PROBE == 1)
        return probe;
    if (c->slack_ns.n < MKRT__EMA_TRUST)
        return 0;
    if (c->arms_ns_item.n == 0 || c->arms_yield.n == 0)
        return probe;
    double cost = c->arms_ns_item.v * (double)n;
    double saved = c->cpu_ns_item.n ? c->arms_yield.v * (double)n * c->cpu_ns_item.v : 0.0;
    return c->arms_yield.v >= 0.01 && (cost <= c->slack_ns.v || saved >= cost) ? n : 0;
}
