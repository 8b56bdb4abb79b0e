/* SPDX-License-Identifier: BSD-2-Clause */
/* planlib/src/cached_planners.c - the reference planners (topology
 * selection, execution planning, frontier execution planning) through a
 * plan cache (mkrt_planlib/cached.h; moved out of libmkrt, issue 32). */
#include <string.h>

#include "envelope.h"
#include "mkrt_planlib/cached.h"
#include "planlib_base.h"

typedef struct select_ctx {
    const mkrt_exec_sample *sample;
    const mkrt_graph_shape *graph;
    const mkrt_memory_budget *memory;
    double launch;
    double fusion; /* already gated by the device */
} select_ctx;

static mkrt_status build_selection(void *p, const mkrt_plan_key *key, mkrt_wave_topology previous,
                                   mkrt_plan *plan, mkrt_error *err)
{
    (void)key;
    (void)err;
    const select_ctx *x = p;
    /* The device gating happened when the key was made, so the selector
     * sees a fusion-capable device here (as the reference does). */
    plan->decision = previous == MKRT_WAVE_NONE
                         ? mkrt_select_topology(x->sample, x->graph, x->memory, x->launch, x->fusion, true)
                         : mkrt_select_topology_stable(x->sample, x->graph, x->memory, x->launch,
                                                       x->fusion, previous, true);
    plan->memory.required_bytes = x->memory->required_bytes;
    plan->memory.budget_bytes = x->memory->budget_bytes;
    plan->memory.memory_pressure_bps = plan->decision.memory_pressure_bps;
    return MKRT_OK;
}

/* The arguments every cached planner needs; MKRT_EINVAL naming the first
 * that is missing or out of range. */
static mkrt_status check_planner_args(const char *fn, const mkrt_plan_cache *c,
                                      const mkrt_plan_identity *id, const mkrt_exec_sample *sample,
                                      const mkrt_graph_shape *graph, const void *out,
                                      mkrt_error *err)
{
    const char *missing = c == NULL        ? "cache"
                          : id == NULL     ? "plan identity"
                          : sample == NULL ? "schedule sample"
                          : graph == NULL  ? "graph shape"
                          : out == NULL    ? "result pointer"
                                           : NULL;
    if (missing != NULL)
        return mkrt__pl_error_set(err, MKRT_EINVAL, "%s got a NULL %s. Fix: pass valid pointers.", fn,
                               missing);
    if ((unsigned)id->analysis_kind > MKRT_ANALYSIS_CUSTOM)
        return mkrt__pl_error_set(err, MKRT_EINVAL,
                               "%s got analysis kind %d, which is not an mkrt_analysis_kind. Fix: "
                               "use MKRT_ANALYSIS_CUSTOM with a custom_tag for other analyses.",
                               fn, (int)id->analysis_kind);
    return MKRT_OK;
}

mkrt_status mkrt_plan_cache_select_topology(mkrt_plan_cache *c, const mkrt_plan_identity *id,
                                            const mkrt_exec_sample *sample,
                                            const mkrt_graph_shape *graph,
                                            const mkrt_memory_budget *memory,
                                            double launch_overhead_ns, double fusion_pressure,
                                            mkrt_topology_decision *out, mkrt_error *err)
{
    mkrt_status st = check_planner_args("mkrt_plan_cache_select_topology", c, id, sample, graph,
                                        out, err);
    if (st != MKRT_OK)
        return st;
    if (memory == NULL)
        return mkrt__pl_error_set(err, MKRT_EINVAL,
                               "mkrt_plan_cache_select_topology got a NULL memory budget. Fix: "
                               "pass valid pointers.");
    double fusion = id->device.supports_grid_sync ? fusion_pressure : 0.0;
    mkrt_plan_key key = mkrt_plan_key_make(id->graph_layout_hash, id->analysis_kind, id->custom_tag,
                                           &id->device, id->policy_fingerprint, sample, memory,
                                           launch_overhead_ns, fusion);
    select_ctx x = {sample, graph, memory, launch_overhead_ns, fusion};
    mkrt_plan plan;
    st = mkrt_plan_cache_get_or_plan_copy(c, &key, build_selection, &x, &plan, err);
    if (st == MKRT_OK)
        *out = plan.decision;
    return st;
}

mkrt_status mkrt_plan_cache_plan_execution(mkrt_plan_cache *c, const mkrt_plan_identity *id,
                                           const mkrt_exec_sample *sample,
                                           const mkrt_graph_shape *graph,
                                           const mkrt_byte_layout *layout, uint64_t budget_bytes,
                                           double launch_overhead_ns, double fusion_pressure,
                                           mkrt_exec_plan *out, mkrt_error *err)
{
    mkrt_status st = check_planner_args("mkrt_plan_cache_plan_execution", c, id, sample, graph,
                                        out, err);
    if (st != MKRT_OK)
        return st;
    mkrt_memory_plan sparse;
    st = mkrt_plan_memory_budget(MKRT_WAVE_SPARSE, graph, layout, UINT64_MAX, &sparse, err);
    if (st != MKRT_OK)
        return st;
    mkrt_memory_budget m = {sparse.required_bytes, budget_bytes};
    mkrt_topology_decision d;
    st = mkrt_plan_cache_select_topology(c, id, sample, graph, &m, launch_overhead_ns,
                                         fusion_pressure, &d, err);
    if (st != MKRT_OK)
        return st;
    mkrt_memory_plan mem;
    st = mkrt_plan_memory_budget(d.topology, graph, layout, budget_bytes, &mem, err);
    if (st == MKRT_OK) {
        *out = (mkrt_exec_plan){d.topology, mem, false};
        return MKRT_OK;
    }
    if (st != MKRT_EBUDGET || d.topology == MKRT_WAVE_SPARSE)
        return st;
    mkrt_error_clear(err);
    st = mkrt_plan_memory_budget(MKRT_WAVE_SPARSE, graph, layout, budget_bytes, &mem, err);
    if (st == MKRT_OK)
        *out = (mkrt_exec_plan){MKRT_WAVE_SPARSE, mem, true};
    return st;
}

mkrt_status mkrt_plan_cache_plan_frontier(mkrt_plan_cache *c, const mkrt_plan_identity *id,
                                          mkrt_barrier_scratch *scratch,
                                          const mkrt_exec_sample *sample,
                                          const mkrt_graph_shape *graph,
                                          const mkrt_byte_layout *layout,
                                          const mkrt_frontier_wave *waves, size_t wave_count,
                                          const mkrt_wave_dep *deps, size_t dep_count,
                                          uint64_t budget_bytes, double launch_overhead_ns,
                                          double fusion_pressure, mkrt_frontier_exec_plan *out,
                                          mkrt_error *err)
{
    mkrt_status st = check_planner_args("mkrt_plan_cache_plan_frontier", c, id, sample, graph, out,
                                        err);
    if (st != MKRT_OK)
        return st;
    mkrt_exec_sample topo;
    mkrt_byte_layout peaks;
    st = mkrt__pl_envelope(scratch, sample, graph, layout, waves, wave_count, deps, dep_count,
                                 budget_bytes, &out->frontier, &topo, &peaks, err);
    if (st != MKRT_OK)
        return st;
    return mkrt_plan_cache_plan_execution(c, id, &topo, graph, &peaks, budget_bytes,
                                          launch_overhead_ns, fusion_pressure, &out->execution, err);
}
