/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/decide.c - the plan's decisions as pure functions of what the
 * data path measured (plan/decide.h says each rule and where it is from). */
#include "mkrt/graph.h"
#include "mkrt/op.h"
#include "plan/decide.h"

/* The launch policy's thresholds (vyre-semantics.md, launch policy). */
#define SATURATED_WAVES 4u
#define MEMORY_SHED_BPS 8500u
#define SPARSE_BPS 500u
#define DENSE_BPS 4000u
#define HYSTERESIS_BPS 250u
/* Direction optimisation (Beamer, Asanovic, Patterson): pull when the
 * frontier's edges exceed 1/ALPHA of the unsettled edges, stay pulled
 * while the frontier holds at least 1/BETA of the vertices (the
 * constants: mkrt/graph.h). */
#define PULL_ALPHA MKRT_GRAPH_PULL_ALPHA
#define PULL_BETA MKRT_GRAPH_PULL_BETA
/* FUSE takes layers up to this many share_min wide onto one participant. */
#define FUSE_SHARES 4u

mkrt_plan_pressure mkrt__decide_pressure(uint64_t queued, uint64_t lanes, uint64_t requeued)
{
    if (queued == 0 && requeued == 0)
        return MKRT_PLAN_PRESSURE_EMPTY;
    lanes = lanes ? lanes : 1;
    if (requeued > 0 || queued / SATURATED_WAVES >= lanes)
        return MKRT_PLAN_PRESSURE_SATURATED;
    return queued >= lanes ? MKRT_PLAN_PRESSURE_BALANCED : MKRT_PLAN_PRESSURE_LIGHT;
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

mkrt_topology_decision mkrt__decide_fuse(uint64_t items, uint64_t layers, uint64_t narrow,
                                         const mkrt__plan_costs *c, uint32_t memory_bps,
                                         mkrt_wave_topology prev)
{
    layers = layers ? layers : 1;
    double ns_item = c->cpu_ns_item.n ? c->cpu_ns_item.v : 8.0;
    double handoff = c->handoff_ns.n ? c->handoff_ns.v : 20000.0;
    /* One dispatch is one layer: its work at the measured cost; the launch
     * overhead is a hand-off and barrier; fusion pressure the share of
     * layers narrow enough for one participant; read back: the items. */
    double width = (double)items / (double)layers;
    mkrt_exec_sample s = mkrt_exec_sample_from_telemetry(items ? (uint32_t)(width * 10000.0 / (double)items) : 0,
                                                         items * 16u, width * ns_item);
    mkrt_graph_shape g = {items, items};
    /* required / budget in bps, as the selector computes it */
    mkrt_memory_budget m = {memory_bps, memory_bps ? 10000u : 0u};
    double fusion = (double)narrow / (double)layers;
    return prev == MKRT_WAVE_NONE ? mkrt_select_topology(&s, &g, &m, handoff, fusion, true)
                                  : mkrt_select_topology_stable(&s, &g, &m, handoff, fusion, prev, true);
}

uint32_t mkrt__decide_fuse_max(uint32_t share_min)
{
    return share_min * FUSE_SHARES;
}

mkrt_plan_route mkrt__decide_route(uint64_t n, bool builtin_only, const mkrt__plan_costs *c, bool on)
{
    if (!on || !builtin_only || c->dev_trip_ns.n < MKRT__EMA_TRUST)
        return MKRT_PLAN_ROUTE_DEVICE;
    /* Built-ins cost a few ns each on a CPU before the pool measured one. */
    double ns_item = c->cpu_ns_item.n ? c->cpu_ns_item.v : 8.0;
    return (double)n * ns_item < c->dev_trip_ns.v ? MKRT_PLAN_ROUTE_CPU_SMALL : MKRT_PLAN_ROUTE_DEVICE;
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

bool mkrt__decide_pull(uint64_t nf, uint64_t mf, uint64_t unsettled, uint64_t vertices, bool was, bool on)
{
    if (!on || nf == 0)
        return false;
    return was ? nf * PULL_BETA >= vertices : mf * PULL_ALPHA > unsettled;
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
