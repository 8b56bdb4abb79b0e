/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/topology.h
 * @brief Execution topology of a wave megakernel and its memory envelope.
 *
 * Behaviour (reference: vyre megakernel_execution, §3 of the semantics):
 * - metrics: memory pressure = min(10000, floor(required * 10000 / budget))
 *   (budget 0: 0 if nothing is required, else 10000); average degree =
 *   floor(edges * 10000 / nodes), saturating (nodes 0: 0 without edges,
 *   else UINT64_MAX); launch pressure = round(launch_overhead /
 *   dispatch_cost * 10000) (0 for a non-finite or non-positive cost);
 *   density and fusion pressure clamped to [0, 1], non-finite = 0; fusion
 *   pressure is 0 on a device without a device-wide barrier.
 * - rule, first match: memory >= 9000 -> SPARSE; fusion >= 0.70, launch >=
 *   1500, readback >= 4096 and memory <= 8500 -> FUSED; density <= 0.03125
 *   and degree <= 80000 -> WARP_SPARSE; density <= 0.125 -> SPARSE; density
 *   >= 0.85 and degree >= 20000 -> BLOCK_DENSE; density >= 0.70 and degree
 *   >= 20000 -> DENSE; else HYBRID.
 * - stable: hysteresis against the previous topology (frontier 0.025,
 *   fusion 0.10, memory and launch 250 bps); see
 *   mkrt_select_topology_stable().
 * - scratch, per topology: warp sparse max(s, 32), sparse s, block dense
 *   2 max(s, 1024), dense 2 s, hybrid 3 s, fused 4 s.
 * - memory: required = graph + frontier + topology scratch + output; over
 *   the budget: ::MKRT_EBUDGET ("Fix: choose a sparse topology"); execution
 *   planning falls back to SPARSE then.
 *
 * Pure functions; safe from any thread. The selectors read a NULL sample,
 * graph or budget as all zeros; the status-returning calls return
 * ::MKRT_EINVAL for a NULL pointer (err aside) and for a topology outside
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

/** @brief How a wave megakernel maps a frontier onto the device. */
typedef enum mkrt_wave_topology {
    MKRT_WAVE_WARP_SPARSE, /**< Ultra-sparse frontier, warp-specialised ("WarpSparseFrontier"). */
    MKRT_WAVE_SPARSE,      /**< Low-density frontier; also the memory-safe fallback ("SparseFrontier"). */
    MKRT_WAVE_BLOCK_DENSE, /**< High-density frontier, block-specialised ("BlockDenseFrontier"). */
    MKRT_WAVE_DENSE,       /**< Dense, coalesced frontier ("DenseFrontier"). */
    MKRT_WAVE_HYBRID,      /**< The transition band between sparse and dense ("HybridFrontier"). */
    MKRT_WAVE_FUSED        /**< Waves fused under launch and readback pressure ("FusedWave"). */
} mkrt_wave_topology;

/** @brief "No previous topology" for mkrt_select_topology_stable(). */
#define MKRT_WAVE_NONE ((mkrt_wave_topology)-1)

/** @brief A schedule sample: what one dispatch of the workload looks like. */
typedef struct mkrt_exec_sample {
    double dispatch_cost_ns; /**< Cost of one dispatch, in ns. */
    double frontier_density; /**< Active fraction of the frontier, 0..1. */
    uint64_t readback_bytes; /**< Bytes read back per dispatch. */
} mkrt_exec_sample;

/** @brief Size of the graph being processed. */
typedef struct mkrt_graph_shape {
    uint64_t node_count; /**< Nodes. */
    uint64_t edge_count; /**< Edges. */
} mkrt_graph_shape;

/** @brief Memory required against the budget, for memory pressure. */
typedef struct mkrt_memory_budget {
    uint64_t required_bytes; /**< Bytes the work needs. */
    uint64_t budget_bytes;   /**< Bytes available (0: pressure 10000 unless nothing is required). */
} mkrt_memory_budget;

/** @brief A selected topology and the metrics it was chosen on. */
typedef struct mkrt_topology_decision {
    mkrt_wave_topology topology;  /**< The selected topology. */
    uint32_t memory_pressure_bps; /**< Memory pressure, 0..10000 basis points. */
    uint64_t average_degree_bps;  /**< Edges per node x 10000, saturating. */
    uint32_t launch_pressure_bps; /**< Launch overhead / dispatch cost x 10000, saturating. */
} mkrt_topology_decision;

/** @brief Bytes per graph element and per fused wave group. */
typedef struct mkrt_byte_layout {
    uint64_t bytes_per_node; /**< Resident bytes per graph node. */
    uint64_t bytes_per_edge; /**< Resident bytes per graph edge. */
    uint64_t frontier_bytes; /**< Frontier bytes of a wave group. */
    uint64_t scratch_bytes;  /**< Scratch bytes before the topology multiplier. */
    uint64_t output_bytes;   /**< Output bytes of a wave group. */
} mkrt_byte_layout;

/** @brief Memory envelope of one topology (mkrt_plan_memory_budget()). */
typedef struct mkrt_memory_plan {
    uint64_t graph_bytes;         /**< node_count x bytes_per_node + edge_count x bytes_per_edge. */
    uint64_t frontier_bytes;      /**< The layout's frontier bytes. */
    uint64_t scratch_bytes;       /**< Scratch after the topology multiplier. */
    uint64_t output_bytes;        /**< The layout's output bytes. */
    uint64_t required_bytes;      /**< Sum of the four above. */
    uint64_t budget_bytes;        /**< The budget planned against. */
    uint32_t memory_pressure_bps; /**< required / budget in basis points, at most 10000. */
} mkrt_memory_plan;

/** @brief Result of execution planning: a topology that fits, with its envelope. */
typedef struct mkrt_exec_plan {
    mkrt_wave_topology topology; /**< The topology to run. */
    mkrt_memory_plan memory;     /**< Its memory envelope. */
    bool downgraded_to_sparse;   /**< The selected topology did not fit; SPARSE is used instead. */
} mkrt_exec_plan;

/**
 * @brief Selects a topology by the rule in the file overview.
 * @param s Schedule sample; NULL reads as all zeros.
 * @param g Graph shape; NULL reads as all zeros.
 * @param m Memory required and budget; NULL reads as all zeros.
 * @param launch_overhead_ns Launch overhead per dispatch (negative counts
 *        as 0, +inf saturates the launch pressure).
 * @param fusion_pressure Fusion pressure, clamped to [0, 1].
 * @param device_wide_barrier Without one, fusion pressure counts as 0.
 * @return The decision and its metrics.
 * @par Thread safety
 * Any thread (pure).
 */
mkrt_topology_decision mkrt_select_topology(const mkrt_exec_sample *s, const mkrt_graph_shape *g,
                                            const mkrt_memory_budget *m, double launch_overhead_ns,
                                            double fusion_pressure, bool device_wide_barrier);
/**
 * @brief Selects a topology with hysteresis against the previous one.
 *
 * The plain decision with its topology replaced by the first rule that
 * holds: memory >= 9000 keeps it; previous sparse/warp-sparse and memory >=
 * 8750 -> SPARSE; previous warp-sparse, density <= 0.05625 and degree <=
 * 80000 -> WARP_SPARSE; previous sparse and density <= 0.15 -> SPARSE;
 * previous hybrid and plain sparse with density >= 0.10 -> HYBRID; previous
 * hybrid and plain dense/block-dense with density <= 0.725 -> HYBRID;
 * previous dense, density >= 0.675, degree >= 20000 -> DENSE; previous
 * block dense, density >= 0.825, degree >= 20000 -> BLOCK_DENSE; previous
 * fused, fusion >= 0.60, launch >= 1250, readback >= 4096, memory <= 8750 ->
 * FUSED. ::MKRT_WAVE_NONE (or any value outside the enum) as previous gives
 * the plain decision.
 *
 * @param s Schedule sample; NULL reads as all zeros.
 * @param g Graph shape; NULL reads as all zeros.
 * @param m Memory required and budget; NULL reads as all zeros.
 * @param launch_overhead_ns Launch overhead per dispatch.
 * @param fusion_pressure Fusion pressure, clamped to [0, 1].
 * @param previous The topology chosen last time, or ::MKRT_WAVE_NONE.
 * @param device_wide_barrier Without one, fusion pressure counts as 0.
 * @return The decision; the metrics are those of the plain selector.
 * @par Thread safety
 * Any thread (pure).
 */
mkrt_topology_decision mkrt_select_topology_stable(const mkrt_exec_sample *s,
                                                   const mkrt_graph_shape *g,
                                                   const mkrt_memory_budget *m,
                                                   double launch_overhead_ns,
                                                   double fusion_pressure,
                                                   mkrt_wave_topology previous,
                                                   bool device_wide_barrier);

/**
 * @brief Name of a topology.
 * @param t The topology.
 * @return A static string: "WarpSparseFrontier", "SparseFrontier",
 *         "BlockDenseFrontier", "DenseFrontier", "HybridFrontier",
 *         "FusedWave", or "Unknown" outside the enum.
 * @par Thread safety
 * Any thread.
 */
const char *mkrt_wave_topology_name(mkrt_wave_topology t);

/**
 * @brief Scratch bytes of a topology for a base scratch size.
 * @param t The topology.
 * @param base Scratch bytes before the multiplier.
 * @param[out] out The multiplied bytes (see "scratch" in the file overview).
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK `*out` is set.
 * @retval MKRT_EINVAL out is NULL, or t is outside the enum.
 * @retval MKRT_EOVERFLOW The product does not fit 64 bits.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread (pure).
 */
mkrt_status mkrt_topology_scratch_bytes(mkrt_wave_topology t, uint64_t base, uint64_t *out,
                                        mkrt_error *err);
/**
 * @brief Resident graph bytes: node_count x bytes_per_node + edge_count x bytes_per_edge.
 * @param g Graph shape.
 * @param l Byte layout (only the per-node and per-edge sizes are used).
 * @param[out] out The bytes.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK `*out` is set.
 * @retval MKRT_EINVAL g, l or out is NULL.
 * @retval MKRT_EOVERFLOW Checked arithmetic overflowed ("node layout
 *         bytes", "edge layout bytes" or "graph layout bytes").
 * @return The status, as listed.
 * @par Thread safety
 * Any thread (pure).
 */
mkrt_status mkrt_graph_resident_bytes(const mkrt_graph_shape *g, const mkrt_byte_layout *l,
                                      uint64_t *out, mkrt_error *err);
/**
 * @brief Memory envelope of one topology against a budget.
 *
 * required = graph + frontier + topology scratch + output.
 *
 * @param t The topology.
 * @param g Graph shape.
 * @param l Byte layout.
 * @param budget_bytes The budget.
 * @param[out] out The envelope; written only on success.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK The envelope fits; `*out` is set.
 * @retval MKRT_EINVAL g, l or out is NULL, or t is outside the enum.
 * @retval MKRT_EOVERFLOW Byte arithmetic overflowed (the message names it).
 * @retval MKRT_EBUDGET required exceeds budget_bytes (the message has both
 *         numbers and suggests a sparse topology).
 * @return The status, as listed.
 * @par Thread safety
 * Any thread (pure).
 */
mkrt_status mkrt_plan_memory_budget(mkrt_wave_topology t, const mkrt_graph_shape *g,
                                    const mkrt_byte_layout *l, uint64_t budget_bytes,
                                    mkrt_memory_plan *out, mkrt_error *err);
/**
 * @brief Execution planning: select a topology, then fit it to the budget.
 *
 * The SPARSE envelope is planned first (its required bytes feed the
 * selector's memory pressure); then the selected topology is planned, and
 * when it does not fit the plan falls back to SPARSE with
 * downgraded_to_sparse set.
 *
 * @param s Schedule sample.
 * @param g Graph shape.
 * @param l Byte layout.
 * @param budget_bytes The budget.
 * @param launch_overhead_ns Launch overhead per dispatch.
 * @param fusion_pressure Fusion pressure in [0, 1].
 * @param device_wide_barrier Without one, fusion pressure counts as 0.
 * @param[out] out The plan; written only on success.
 * @param err Filled on failure; may be NULL. When the plan is downgraded
 *        to SPARSE the call succeeds and err is reset with
 *        mkrt_error_clear().
 * @retval MKRT_OK `*out` is set.
 * @retval MKRT_EINVAL s, g, l or out is NULL.
 * @retval MKRT_EOVERFLOW Byte arithmetic overflowed.
 * @retval MKRT_EBUDGET Not even the SPARSE envelope fits the budget.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread (pure).
 */
mkrt_status mkrt_plan_execution(const mkrt_exec_sample *s, const mkrt_graph_shape *g,
                                const mkrt_byte_layout *l, uint64_t budget_bytes,
                                double launch_overhead_ns, double fusion_pressure,
                                bool device_wide_barrier, mkrt_exec_plan *out, mkrt_error *err);

/**
 * @brief A schedule sample from device telemetry.
 * @param logical_thread_utilization_bps Utilization in basis points;
 *        density = utilization / 10000 (not clamped here).
 * @param readback_bytes Bytes read back per dispatch.
 * @param dispatch_cost_ns Cost of one dispatch, in ns.
 * @return The sample.
 * @par Thread safety
 * Any thread (pure).
 */
mkrt_exec_sample mkrt_exec_sample_from_telemetry(uint32_t logical_thread_utilization_bps,
                                                 uint64_t readback_bytes, double dispatch_cost_ns);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_TOPOLOGY_H */
