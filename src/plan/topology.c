/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/topology.c - execution topology selection and memory envelopes. */
#include <math.h>

#include "base/error_internal.h"
#include "mkrt/topology.h"

#define WARP_SPARSE_DENSITY 0.03125
#define SPARSE_DENSITY 0.125
#define DENSE_DENSITY 0.70
#define BLOCK_DENSE_DENSITY 0.85
#define FUSION_PRESSURE 0.70
#define FUSION_PRESSURE_HYSTERESIS 0.10
#define FRONTIER_HYSTERESIS 0.025
#define MEMORY_RED_ZONE_BPS 9000u
#define MEMORY_HYSTERESIS_BPS 250u
#define LAUNCH_PRESSURE_BPS 1500u
#define LAUNCH_HYSTERESIS_BPS 250u
#define FUSION_READBACK_BYTES 4096u
#define FUSION_MEMORY_CEILING_BPS 8500u
#define DENSE_AVERAGE_DEGREE_BPS 20000u
#define WARP_SPARSE_AVERAGE_DEGREE_BPS 80000u

static uint32_t pressure_bps(uint64_t required, uint64_t budget)
{
    if (budget == 0)
        return required == 0 ? 0 : 10000;
    unsigned __int128 p = (unsigned __int128)required * 10000 / budget;
    return p > 10000 ? 10000 : (uint32_t)p;
}

static uint64_t degree_bps(const mkrt_graph_shape *g)
{
    if (g->node_count == 0)
        return g->edge_count == 0 ? 0 : UINT64_MAX;
    unsigned __int128 d = (unsigned __int128)g->edge_count * 10000 / g->node_count;
    return d > UINT64_MAX ? UINT64_MAX : (uint64_t)d;
}

static uint32_t launch_bps(double overhead, double cost)
{
    if (!(cost > 0) || !isfinite(cost))
        return 0;
    double num = fmax(overhead, 0.0);
    if (isinf(num))
        return UINT32_MAX;
    if (!(num > 0))
        return 0;
    double v = round(num / cost * 10000.0);
    if (!(v > 0))
        return 0;
    return v >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static double unit(double v)
{
    if (!isfinite(v))
        return 0.0;
    return v < 0 ? 0.0 : v > 1 ? 1.0 : v;
}

static const mkrt_exec_sample zero_sample = {0.0, 0.0, 0};
static const mkrt_graph_shape zero_graph = {0, 0};
static const mkrt_memory_budget zero_budget = {0, 0};

mkrt_topology_decision mkrt_select_topology(const mkrt_exec_sample *s, const mkrt_graph_shape *g,
                                            const mkrt_memory_budget *m, double launch_overhead_ns,
                                            double fusion_pressure, bool device_wide_barrier)
{
    s = s != NULL ? s : &zero_sample;
    g = g != NULL ? g : &zero_graph;
    m = m != NULL ? m : &zero_budget;
    mkrt_topology_decision d;
    d.memory_pressure_bps = pressure_bps(m->required_bytes, m->budget_bytes);
    d.average_degree_bps = degree_bps(g);
    d.launch_pressure_bps = launch_bps(launch_overhead_ns, s->dispatch_cost_ns);
    double density = unit(s->frontier_density);
    double fusion = unit(device_wide_barrier ? fusion_pressure : 0.0);
    if (d.memory_pressure_bps >= MEMORY_RED_ZONE_BPS)
        d.topology = MKRT_WAVE_SPARSE;
    else if (fusion >= FUSION_PRESSURE && d.launch_pressure_bps >= LAUNCH_PRESSURE_BPS &&
             s->readback_bytes >= FUSION_READBACK_BYTES &&
             d.memory_pressure_bps <= FUSION_MEMORY_CEILING_BPS)
        d.topology = MKRT_WAVE_FUSED;
    else if (density <= WARP_SPARSE_DENSITY && d.average_degree_bps <= WARP_SPARSE_AVERAGE_DEGREE_BPS)
        d.topology = MKRT_WAVE_WARP_SPARSE;
    else if (density <= SPARSE_DENSITY)
        d.topology = MKRT_WAVE_SPARSE;
    else if (density >= BLOCK_DENSE_DENSITY && d.average_degree_bps >= DENSE_AVERAGE_DEGREE_BPS)
        d.topology = MKRT_WAVE_BLOCK_DENSE;
    else if (density >= DENSE_DENSITY && d.average_degree_bps >= DENSE_AVERAGE_DEGREE_BPS)
        d.topology = MKRT_WAVE_DENSE;
    else
        d.topology = MKRT_WAVE_HYBRID;
    return d;
}

mkrt_topology_decision mkrt_select_topology_stable(const mkrt_exec_sample *s,
                                                   const mkrt_graph_shape *g,
                                                   const mkrt_memory_budget *m,
                                                   double launch_overhead_ns,
                                                   double fusion_pressure,
                                                   mkrt_wave_topology previous,
                                                   bool device_wide_barrier)
{
    mkrt_topology_decision d =
        mkrt_select_topology(s, g, m, launch_overhead_ns, fusion_pressure, device_wide_barrier);
    if (previous == MKRT_WAVE_NONE || d.memory_pressure_bps >= MEMORY_RED_ZONE_BPS)
        return d;
    s = s != NULL ? s : &zero_sample;
    double density = unit(s->frontier_density);
    double fusion = unit(device_wide_barrier ? fusion_pressure : 0.0);
    mkrt_wave_topology t = d.topology;
    /* Thresholds computed in double exactly as the reference does. */
    if ((previous == MKRT_WAVE_SPARSE || previous == MKRT_WAVE_WARP_SPARSE) &&
        d.memory_pressure_bps >= MEMORY_RED_ZONE_BPS - MEMORY_HYSTERESIS_BPS)
        t = MKRT_WAVE_SPARSE;
    else if (previous == MKRT_WAVE_WARP_SPARSE &&
             density <= WARP_SPARSE_DENSITY + FRONTIER_HYSTERESIS &&
             d.average_degree_bps <= WARP_SPARSE_AVERAGE_DEGREE_BPS)
        t = MKRT_WAVE_WARP_SPARSE;
    else if (previous == MKRT_WAVE_SPARSE && density <= SPARSE_DENSITY + FRONTIER_HYSTERESIS)
        t = MKRT_WAVE_SPARSE;
    else if (previous == MKRT_WAVE_HYBRID && d.topology == MKRT_WAVE_SPARSE &&
             density >= SPARSE_DENSITY - FRONTIER_HYSTERESIS)
        t = MKRT_WAVE_HYBRID;
    else if (previous == MKRT_WAVE_HYBRID &&
             (d.topology == MKRT_WAVE_DENSE || d.topology == MKRT_WAVE_BLOCK_DENSE) &&
             density <= DENSE_DENSITY + FRONTIER_HYSTERESIS)
        t = MKRT_WAVE_HYBRID;
    else if (previous == MKRT_WAVE_DENSE && density >= DENSE_DENSITY - FRONTIER_HYSTERESIS &&
             d.average_degree_bps >= DENSE_AVERAGE_DEGREE_BPS)
        t = MKRT_WAVE_DENSE;
    else if (previous == MKRT_WAVE_BLOCK_DENSE &&
             density >= BLOCK_DENSE_DENSITY - FRONTIER_HYSTERESIS &&
             d.average_degree_bps >= DENSE_AVERAGE_DEGREE_BPS)
        t = MKRT_WAVE_BLOCK_DENSE;
    else if (previous == MKRT_WAVE_FUSED && fusion >= FUSION_PRESSURE - FUSION_PRESSURE_HYSTERESIS &&
             d.launch_pressure_bps >= LAUNCH_PRESSURE_BPS - LAUNCH_HYSTERESIS_BPS &&
             s->readback_bytes >= FUSION_READBACK_BYTES &&
             d.memory_pressure_bps <= FUSION_MEMORY_CEILING_BPS + MEMORY_HYSTERESIS_BPS)
        t = MKRT_WAVE_FUSED;
    d.topology = t;
    return d;
}

const char *mkrt_wave_topology_name(mkrt_wave_topology t)
{
    static const char *const n[] = {"WarpSparseFrontier", "SparseFrontier", "BlockDenseFrontier",
                                    "DenseFrontier",      "HybridFrontier", "FusedWave"};
    return (unsigned)t < 6 ? n[t] : "Unknown";
}

static mkrt_status overflow(mkrt_error *err, const char *field)
{
    return mkrt__error_set(err, MKRT_EOVERFLOW,
                           "megakernel memory planner overflowed while accumulating %s. Fix: shard "
                           "the graph or the frontier waves before planning.",
                           field);
}

mkrt_status mkrt_topology_scratch_bytes(mkrt_wave_topology t, uint64_t base, uint64_t *out,
                                        mkrt_error *err)
{
    if (out == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_topology_scratch_bytes got a NULL result pointer. Fix: pass "
                               "where to store the bytes.");
    uint64_t v = base;
    switch (t) {
    case MKRT_WAVE_WARP_SPARSE: v = base > 32 ? base : 32; break;
    case MKRT_WAVE_SPARSE: v = base; break;
    case MKRT_WAVE_BLOCK_DENSE:
        if (__builtin_mul_overflow(base > 1024 ? base : 1024, (uint64_t)2, &v))
            return overflow(err, "block dense topology scratch bytes");
        break;
    case MKRT_WAVE_DENSE:
        if (__builtin_mul_overflow(base, (uint64_t)2, &v))
            return overflow(err, "dense topology scratch bytes");
        break;
    case MKRT_WAVE_HYBRID:
        if (__builtin_mul_overflow(base, (uint64_t)3, &v))
            return overflow(err, "hybrid topology scratch bytes");
        break;
    case MKRT_WAVE_FUSED:
        if (__builtin_mul_overflow(base, (uint64_t)4, &v))
            return overflow(err, "fused topology scratch bytes");
        break;
    default:
        return mkrt__error_set(err, MKRT_EINVAL,
                               "topology %d is not an mkrt_wave_topology. Fix: pass a topology "
                               "returned by the selector.",
                               (int)t);
    }
    *out = v;
    return MKRT_OK;
}

mkrt_status mkrt_graph_resident_bytes(const mkrt_graph_shape *g, const mkrt_byte_layout *l,
                                      uint64_t *out, mkrt_error *err)
{
    if (g == NULL || l == NULL || out == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "graph byte planning got a NULL %s. Fix: pass valid pointers.",
                               g == NULL ? "graph shape" : l == NULL ? "byte layout" : "result pointer");
    uint64_t nodes, edges;
    if (__builtin_mul_overflow(g->node_count, l->bytes_per_node, &nodes))
        return overflow(err, "node layout bytes");
    if (__builtin_mul_overflow(g->edge_count, l->bytes_per_edge, &edges))
        return overflow(err, "edge layout bytes");
    if (__builtin_add_overflow(nodes, edges, out))
        return overflow(err, "graph layout bytes");
    return MKRT_OK;
}

mkrt_status mkrt_plan_memory_budget(mkrt_wave_topology t, const mkrt_graph_shape *g,
                                    const mkrt_byte_layout *l, uint64_t budget_bytes,
                                    mkrt_memory_plan *out, mkrt_error *err)
{
    if (out == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_plan_memory_budget got a NULL result pointer. Fix: pass "
                               "where to store the plan.");
    mkrt_memory_plan p;
    mkrt_status st = mkrt_graph_resident_bytes(g, l, &p.graph_bytes, err);
    if (st == MKRT_OK)
        st = mkrt_topology_scratch_bytes(t, l->scratch_bytes, &p.scratch_bytes, err);
    if (st != MKRT_OK)
        return st;
    p.frontier_bytes = l->frontier_bytes;
    p.output_bytes = l->output_bytes;
    if (__builtin_add_overflow(p.graph_bytes, p.frontier_bytes, &p.required_bytes))
        return overflow(err, "graph plus frontier bytes");
    if (__builtin_add_overflow(p.required_bytes, p.scratch_bytes, &p.required_bytes))
        return overflow(err, "scratch bytes");
    if (__builtin_add_overflow(p.required_bytes, p.output_bytes, &p.required_bytes))
        return overflow(err, "output bytes");
    p.budget_bytes = budget_bytes;
    if (p.required_bytes > budget_bytes)
        return mkrt__error_set(err, MKRT_EBUDGET,
                               "megakernel %s topology requires %llu bytes but budget allows %llu "
                               "(%llu nodes, %llu edges). Fix: choose a sparse topology, shard the "
                               "graph, or raise the budget.",
                               mkrt_wave_topology_name(t), (unsigned long long)p.required_bytes,
                               (unsigned long long)budget_bytes, (unsigned long long)g->node_count,
                               (unsigned long long)g->edge_count);
    p.memory_pressure_bps = pressure_bps(p.required_bytes, budget_bytes);
    *out = p;
    return MKRT_OK;
}

mkrt_status mkrt_plan_execution(const mkrt_exec_sample *s, const mkrt_graph_shape *g,
                                const mkrt_byte_layout *l, uint64_t budget_bytes,
                                double launch_overhead_ns, double fusion_pressure,
                                bool device_wide_barrier, mkrt_exec_plan *out, mkrt_error *err)
{
    if (s == NULL || out == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_plan_execution got a NULL %s. Fix: pass valid pointers.",
                               s == NULL ? "schedule sample" : "result pointer");
    mkrt_memory_plan sparse;
    mkrt_status st = mkrt_plan_memory_budget(MKRT_WAVE_SPARSE, g, l, budget_bytes, &sparse, err);
    if (st != MKRT_OK)
        return st;
    mkrt_memory_budget m = {sparse.required_bytes, budget_bytes};
    mkrt_topology_decision d =
        mkrt_select_topology(s, g, &m, launch_overhead_ns, fusion_pressure, device_wide_barrier);
    mkrt_memory_plan chosen;
    st = mkrt_plan_memory_budget(d.topology, g, l, budget_bytes, &chosen, err);
    if (st == MKRT_OK) {
        *out = (mkrt_exec_plan){d.topology, chosen, false};
        return MKRT_OK;
    }
    if (st == MKRT_EBUDGET && d.topology != MKRT_WAVE_SPARSE) {
        mkrt_error_clear(err);
        *out = (mkrt_exec_plan){MKRT_WAVE_SPARSE, sparse, true};
        return MKRT_OK;
    }
    return st;
}

mkrt_exec_sample mkrt_exec_sample_from_telemetry(uint32_t logical_thread_utilization_bps,
                                                 uint64_t readback_bytes, double dispatch_cost_ns)
{
    return (mkrt_exec_sample){dispatch_cost_ns, (double)logical_thread_utilization_bps / 10000.0,
                              readback_bytes};
}

