/* SPDX-License-Identifier: BSD-2-Clause */
/* planlib/src/planners.c - the seeds' planners the runtime does not call
 * (mkrt_planlib/planners.h): the uncached frontier execution planner
 * (libmkrt's public frontier memory and execution planners in a row), the
 * fusion-pressure homotopy, and a topology decision's text. Moved here
 * from libmkrt's src/plan/ (issue 23). */
#include <math.h>
#include <stdio.h>

#include "mkrt_planlib/planners.h"
#include "envelope.h"
#include "planlib_base.h"

/* The selector's memory red zone (src/plan/topology.c), for the reason. */
#define MEMORY_RED_ZONE_BPS 9000u

size_t mkrt_topology_explain(const mkrt_topology_decision *d, char *buf, size_t len)
{
    if (buf == NULL)
        len = 0;
    if (d == NULL) {
        if (len > 0)
            buf[0] = '\0';
        return 0;
    }
    const char *reason;
    switch (d->topology) {
    case MKRT_WAVE_WARP_SPARSE: reason = "ultra_sparse_warp_specialized"; break;
    case MKRT_WAVE_SPARSE:
        reason = d->memory_pressure_bps >= MEMORY_RED_ZONE_BPS ? "memory_pressure_sparse_safety"
                                                               : "low_density_sparse_queue";
        break;
    case MKRT_WAVE_BLOCK_DENSE: reason = "high_density_block_specialized"; break;
    case MKRT_WAVE_DENSE: reason = "dense_coalesced_frontier"; break;
    case MKRT_WAVE_HYBRID: reason = "transition_band_hybrid"; break;
    case MKRT_WAVE_FUSED: reason = "launch_and_readback_pressure_fused"; break;
    default: reason = "unknown"; break;
    }
    int n = snprintf(buf, len,
                     "megakernel-topology-v1|topology=%s|memory_pressure_bps=%u|average_degree_bps=%llu|"
                     "launch_pressure_bps=%u|reason=%s",
                     mkrt_wave_topology_name(d->topology), d->memory_pressure_bps,
                     (unsigned long long)d->average_degree_bps, d->launch_pressure_bps, reason);
    return n < 0 ? 0 : (size_t)n;
}

static double clamp01(double v)
{
    return v < 0 ? 0 : v > 1 ? 1 : v;
}

mkrt_status mkrt_schedule_fusion_pressure(const mkrt_exec_sample *samples, size_t n,
                                          double launch_overhead_ns, uint32_t n_steps, double dt,
                                          double *out, mkrt_error *err)
{
    if ((samples == NULL || out == NULL) && n > 0)
        return mkrt__pl_error_set(err, MKRT_EINVAL,
                               "mkrt_schedule_fusion_pressure got a NULL %s for %zu candidates. "
                               "Fix: pass arrays of n entries.",
                               samples == NULL ? "sample array" : "output array", n);
    if (!isfinite(dt) || dt < 0)
        return mkrt__pl_error_set(err, MKRT_EINVAL,
                               "megakernel schedule step %g is not a finite value >= 0 (invalid "
                               "step). Fix: pass a step in [0, 1].",
                               dt);
    if (!isfinite(launch_overhead_ns) || launch_overhead_ns < 0)
        return mkrt__pl_error_set(err, MKRT_EINVAL,
                               "megakernel schedule launch overhead %g ns is not a finite value >= 0. "
                               "Fix: measure the launch overhead in nanoseconds.",
                               launch_overhead_ns);
    double max_cost = 0, max_rb = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(samples[i].dispatch_cost_ns) || samples[i].dispatch_cost_ns < 0)
            return mkrt__pl_error_set(err, MKRT_EINVAL,
                                   "megakernel schedule sample %zu has an invalid cost %g ns. Fix: "
                                   "pass finite costs >= 0.",
                                   i, samples[i].dispatch_cost_ns);
        double d = samples[i].frontier_density;
        if (!isfinite(d) || d < 0 || d > 1)
            return mkrt__pl_error_set(err, MKRT_EINVAL,
                                   "megakernel schedule sample %zu has an invalid frontier density "
                                   "%g. Fix: pass a density in [0, 1].",
                                   i, d);
        max_cost = fmax(max_cost, samples[i].dispatch_cost_ns);
        max_rb = fmax(max_rb, (double)samples[i].readback_bytes);
    }
    for (size_t i = 0; i < n; i++)
        out[i] = 0.0;
    if (n == 0 || n_steps == 0 || (max_cost == 0 && max_rb == 0 && launch_overhead_ns == 0))
        return MKRT_OK;
    double step = clamp01(dt), inv_cost = max_cost > 0 ? 1.0 / max_cost : 0.0;
    double inv_rb = max_rb > 0 ? 1.0 / max_rb : 0.0, L = launch_overhead_ns;
    for (uint32_t k = 0; k < n_steps; k++) {
        double alpha = (double)(k + 1) / (double)n_steps;
        for (size_t i = 0; i < n; i++) {
            double cost = samples[i].dispatch_cost_ns, fp = samples[i].frontier_density;
            double cp = cost * inv_cost, rp = (double)samples[i].readback_bytes * inv_rb;
            double denom = L + cost, lp = denom > 0 ? clamp01(L / denom) : 0.0;
            double target =
                alpha * clamp01(0.55 * cp * (0.65 + 0.35 * fp) + 0.25 * rp + 0.15 * lp + 0.05 * fp);
            out[i] += step * (target - out[i]);
        }
    }
    for (size_t i = 0; i < n; i++)
        out[i] = clamp01(out[i]);
    return MKRT_OK;
}

mkrt_status mkrt__pl_envelope(mkrt_barrier_scratch *s, const mkrt_exec_sample *sample, const mkrt_graph_shape *graph,
                              const mkrt_byte_layout *layout, const mkrt_frontier_wave *waves, size_t wave_count,
                              const mkrt_wave_dep *deps, size_t dep_count, uint64_t budget_bytes,
                              mkrt_frontier_plan *plan, mkrt_exec_sample *topo_sample, mkrt_byte_layout *peaks,
                              mkrt_error *err)
{
    if (sample == NULL || plan == NULL)
        return mkrt__pl_error_set(err, MKRT_EINVAL,
                                  "frontier execution planning got a NULL %s. Fix: pass valid pointers.",
                                  sample == NULL ? "schedule sample" : "frontier plan");
    uint64_t graph_bytes;
    mkrt_status st = mkrt_graph_resident_bytes(graph, layout, &graph_bytes, err);
    if (st == MKRT_OK)
        st = mkrt_plan_frontier_memory(s, waves, wave_count, deps, dep_count, graph_bytes, budget_bytes,
                                       sample->readback_bytes, plan, err);
    if (st != MKRT_OK)
        return st;
    *topo_sample = *sample;
    topo_sample->readback_bytes = plan->amortized_readback_bytes;
    *peaks = (mkrt_byte_layout){layout->bytes_per_node, layout->bytes_per_edge, plan->peak_frontier_bytes,
                                plan->peak_scratch_bytes, plan->peak_output_bytes};
    return MKRT_OK;
}

mkrt_status mkrt_plan_frontier_execution(mkrt_barrier_scratch *s, const mkrt_exec_sample *sample,
                                         const mkrt_graph_shape *graph,
                                         const mkrt_byte_layout *layout,
                                         const mkrt_frontier_wave *waves, size_t wave_count,
                                         const mkrt_wave_dep *deps, size_t dep_count,
                                         uint64_t budget_bytes, double launch_overhead_ns,
                                         double fusion_pressure, bool device_wide_barrier,
                                         mkrt_exec_plan *execution, mkrt_frontier_plan *plan,
                                         mkrt_error *err)
{
    if (execution == NULL)
        return mkrt__pl_error_set(err, MKRT_EINVAL,
                               "mkrt_plan_frontier_execution got a NULL execution plan. Fix: "
                               "pass valid pointers.");
    mkrt_exec_sample topo;
    mkrt_byte_layout peaks;
    mkrt_status st = mkrt__pl_envelope(s, sample, graph, layout, waves, wave_count, deps,
                                             dep_count, budget_bytes, plan, &topo, &peaks, err);
    if (st != MKRT_OK)
        return st;
    return mkrt_plan_execution(&topo, graph, &peaks, budget_bytes, launch_overhead_ns,
                               fusion_pressure, device_wide_barrier, execution, err);
}
