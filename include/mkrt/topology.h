/* SPDX-License-Identifier: BSD-2-Clause */
/* mkrt/topology.h - execution topology of a wave megakernel and its memory
 * envelope.
 *
 * Behaviour (reference: vyre megakernel_execution, §3 of the semantics):
 *   metrics   memory pressure = min(10000, floor(required * 10000 / budget))
 *             (budget 0: 0 if nothing is required, else 10000);
 *             average degree = floor(edges * 10000 / nodes), saturating
 *             (nodes 0: 0 without edges, else UINT64_MAX);
 *             launch pressure = round(launch_overhead / dispatch_cost *
 *             10000) (0 for a non-finite or non-positive cost);
 *             density and fusion pressure clamped to [0, 1], non-finite = 0;
 *             fusion pressure is 0 on a device without a device-wide barrier.
 *   rule      memory >= 9000 -> SPARSE; fusion >= 0.70, launch >= 1500,
 *             readback >= 4096 and memory <= 8500 -> FUSED_WAVE; density <=
 *             0.03125 and degree <= 80000 -> WARP_SPARSE; density <= 0.125 ->
 *             SPARSE; density >= 0.85 and degree >= 20000 -> BLOCK_DENSE;
 *             density >= 0.70 and degree >= 20000 -> DENSE; else HYBRID.
 *   stable    hysteresis against the previous topology (frontier 0.025,
 *             fusion 0.10, memory and launch 250 bps); see
 *             mkrt_select_topology_stable.
 *   scratch   per topology: warp sparse max(s, 32), sparse s, block dense
 *             2 max(s, 1024), dense 2 s, hybrid 3 s, fused 4 s.
 *   memory    required = graph + frontier + topology scratch + output;
 *             over the budget: MKRT_EBUDGET ("Fix: choose a sparse
 *             topology"); execution planning falls back to SPARSE then.
 * Pure functions; safe from any thread. The selectors read a NULL sample,
 * graph or budget as all zeros; the status-returning calls return
 * MKRT_EINVAL for a NULL pointer (err aside) and for a topology outside
 * the enum.
 */
#ifndef MKRT_TOPOLOGY_H
#define MKRT_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mkrt_wave_topology {
    MKRT_WAVE_WARP_SPARSE,
    MKRT_WAVE_SPARSE,
    MKRT_WAVE_BLOCK_DENSE,
    MKRT_WAVE_DENSE,
    MKRT_WAVE_HYBRID,
    MKRT_WAVE_FUSED
} mkrt_wave_topology;

/* "No previous topology" for the stable selector. */
#define MKRT_WAVE_NONE ((mkrt_wave_topology)-1)

typedef struct mkrt_exec_sample {
    double dispatch_cost_ns;
    double frontier_density; /* 0..1 */
    uint64_t readback_bytes;
} mkrt_exec_sample;

typedef struct mkrt_graph_shape {
    uint64_t node_count;
    uint64_t edge_count;
} mkrt_graph_shape;

typedef struct mkrt_memory_budget {
    uint64_t required_bytes;
    uint64_t budget_bytes;
} mkrt_memory_budget;

typedef struct mkrt_topology_decision {
    mkrt_wave_topology topology;
    uint32_t memory_pressure_bps;
    uint64_t average_degree_bps;
    uint32_t launch_pressure_bps;
} mkrt_topology_decision;

/* Bytes per graph element and per fused wave group. */
typedef struct mkrt_byte_layout {
    uint64_t bytes_per_node;
    uint64_t bytes_per_edge;
    uint64_t frontier_bytes;
    uint64_t scratch_bytes; /* before the topology multiplier */
    uint64_t output_bytes;
} mkrt_byte_layout;

typedef struct mkrt_memory_plan {
    uint64_t graph_bytes;
    uint64_t frontier_bytes;
    uint64_t scratch_bytes; /* after the topology multiplier */
    uint64_t output_bytes;
    uint64_t required_bytes;
    uint64_t budget_bytes;
    uint32_t memory_pressure_bps;
} mkrt_memory_plan;

typedef struct mkrt_exec_plan {
    mkrt_wave_topology topology;
    mkrt_memory_plan memory;
    bool downgraded_to_sparse; /* the selected topology did not fit */
} mkrt_exec_plan;

mkrt_topology_decision mkrt_select_topology(const mkrt_exec_sample *s, const mkrt_graph_shape *g,
                                            const mkrt_memory_budget *m, double launch_overhead_ns,
                                            double fusion_pressure, bool device_wide_barrier);
/* The plain decision with its topology replaced by the first rule that
 * holds: memory >= 9000 keeps it; previous sparse/warp-sparse and memory >=
 * 8750 -> SPARSE; previous warp-sparse, density <= 0.05625 and degree <=
 * 80000 -> WARP_SPARSE; previous sparse and density <= 0.15 -> SPARSE;
 * previous hybrid and plain sparse with density >= 0.10 -> HYBRID;
 * previous hybrid and plain dense/block-dense with density <= 0.725 ->
 * HYBRID; previous dense, density >= 0.675, degree >= 20000 -> DENSE;
 * previous block dense, density >= 0.825, degree >= 20000 -> BLOCK_DENSE;
 * previous fused, fusion >= 0.60, launch >= 1250, readback >= 4096, memory
 * <= 8750 -> FUSED_WAVE. MKRT_WAVE_NONE (or any value outside the enum) as
 * previous gives the plain one. */
mkrt_topology_decision mkrt_select_topology_stable(const mkrt_exec_sample *s,
                                                   const mkrt_graph_shape *g,
                                                   const mkrt_memory_budget *m,
                                                   double launch_overhead_ns,
                                                   double fusion_pressure,
                                                   mkrt_wave_topology previous,
                                                   bool device_wide_barrier);

/* "megakernel-topology-v1|topology=...|memory_pressure_bps=...|
 * average_degree_bps=...|launch_pressure_bps=...|reason=..." into buf
 * (snprintf semantics; a NULL buf counts as len 0); returns the full length,
 * 0 (and an empty buf) for a NULL d. */
size_t mkrt_topology_explain(const mkrt_topology_decision *d, char *buf, size_t len);
/* "WarpSparseFrontier", "SparseFrontier", ... */
const char *mkrt_wave_topology_name(mkrt_wave_topology t);

mkrt_status mkrt_topology_scratch_bytes(mkrt_wave_topology t, uint64_t base, uint64_t *out,
                                        mkrt_error *err);
/* node_count * bytes_per_node + edge_count * bytes_per_edge, checked
 * ("node layout bytes", "edge layout bytes", "graph layout bytes"). */
mkrt_status mkrt_graph_resident_bytes(const mkrt_graph_shape *g, const mkrt_byte_layout *l,
                                      uint64_t *out, mkrt_error *err);
mkrt_status mkrt_plan_memory_budget(mkrt_wave_topology t, const mkrt_graph_shape *g,
                                    const mkrt_byte_layout *l, uint64_t budget_bytes,
                                    mkrt_memory_plan *out, mkrt_error *err);
mkrt_status mkrt_plan_execution(const mkrt_exec_sample *s, const mkrt_graph_shape *g,
                                const mkrt_byte_layout *l, uint64_t budget_bytes,
                                double launch_overhead_ns, double fusion_pressure,
                                bool device_wide_barrier, mkrt_exec_plan *out, mkrt_error *err);

/* A schedule sample from device telemetry: density = utilization / 10000. */
mkrt_exec_sample mkrt_exec_sample_from_telemetry(uint32_t logical_thread_utilization_bps,
                                                 uint64_t readback_bytes, double dispatch_cost_ns);

/* Scale-aware fusion pressure per candidate (reference: the megakernel
 * schedule homotopy), what callers pass as fusion_pressure. For steps
 * k = 0..n_steps-1 with a = (k+1)/n_steps, each out[i] moves by
 * clamp(dt, 0, 1) towards a * clamp(0.55 cp (0.65 + 0.35 d) + 0.25 rp +
 * 0.15 lp + 0.05 d, 0, 1), where cp and rp are the cost and readback
 * relative to the largest, d the density and lp = L / (L + cost); the
 * result is clamped to [0, 1]. out has n entries (caller-owned).
 * MKRT_EINVAL, naming the first bad value: dt or launch overhead not finite
 * or negative, a cost not finite or negative, a density outside [0, 1]. */
mkrt_status mkrt_schedule_fusion_pressure(const mkrt_exec_sample *samples, size_t n,
                                          double launch_overhead_ns, uint32_t n_steps, double dt,
                                          double *out, mkrt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_TOPOLOGY_H */
