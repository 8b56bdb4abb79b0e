/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt_planlib/cached.h
 * @brief The seeds' planners through an RCU plan cache: topology
 * selection, execution planning and frontier execution planning, each
 * keyed by a plan identity and a quantised sample, with the stable
 * selector's hysteresis against the identity's last decision.
 *
 * Moved out of libmkrt (issue 32): the runtime's decisions are pure rules
 * fed measured inputs (mkrt/explain.h) and consult no plan cache, so
 * these serve programs that plan their own launches. The cache itself
 * (mkrt_plan_cache_create, get_or_plan, ...) stays in libmkrt
 * (mkrt/plan_cache.h). Link -lmkrt_planlib -lmkrt.
 */
#ifndef MKRT_PLANLIB_CACHED_H
#define MKRT_PLANLIB_CACHED_H

#include <stddef.h>
#include <stdint.h>

#include "mkrt/barrier.h"
#include "mkrt/frontier.h"
#include "mkrt/plan_cache.h"
#include "mkrt/status.h"
#include "mkrt/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Cached topology selection.
 *
 * Fusion is gated by device.supports_grid_sync, the key quantises the
 * sample, and a miss runs the stable selector against the identity's
 * previous topology (the plain one without).
 *
 * @param c The cache.
 * @param id The plan identity.
 * @param sample Schedule sample.
 * @param graph Graph shape.
 * @param memory Memory required and budget.
 * @param launch_overhead_ns Launch overhead per dispatch.
 * @param fusion_pressure Fusion pressure (used only with grid sync).
 * @param[out] out The decision.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK `*out` is set.
 * @retval MKRT_EINVAL A pointer but err is NULL, or id->analysis_kind is
 *         outside the enum.
 * @retval MKRT_ENOMEM The plan could not be cached.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread, concurrently with every cache call but destroy (takes its
 * own read-side section).
 */
mkrt_status mkrt_plan_cache_select_topology(mkrt_plan_cache *c, const mkrt_plan_identity *id,
                                            const mkrt_exec_sample *sample,
                                            const mkrt_graph_shape *graph,
                                            const mkrt_memory_budget *memory,
                                            double launch_overhead_ns, double fusion_pressure,
                                            mkrt_topology_decision *out, mkrt_error *err);
/**
 * @brief Cached execution planning.
 *
 * The topology comes from the cache (keyed by the sparse envelope's
 * pressure), then its memory plan is validated against the exact budget on
 * every call; a non-sparse topology that does not fit is downgraded to
 * sparse (and err, if given, is reset with mkrt_error_clear()).
 *
 * @param c The cache.
 * @param id The plan identity.
 * @param sample Schedule sample.
 * @param graph Graph shape.
 * @param layout Byte layout.
 * @param budget_bytes The budget.
 * @param launch_overhead_ns Launch overhead per dispatch.
 * @param fusion_pressure Fusion pressure (used only with grid sync).
 * @param[out] out The plan; written only on success.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK `*out` is set.
 * @retval MKRT_EINVAL A pointer but err is NULL, or id->analysis_kind is
 *         outside the enum.
 * @retval MKRT_EOVERFLOW Byte arithmetic overflowed.
 * @retval MKRT_EBUDGET Not even the sparse envelope fits the budget.
 * @retval MKRT_ENOMEM The plan could not be cached.
 * @return The status, as listed.
 * @par Thread safety
 * As mkrt_plan_cache_select_topology().
 */
mkrt_status mkrt_plan_cache_plan_execution(mkrt_plan_cache *c, const mkrt_plan_identity *id,
                                           const mkrt_exec_sample *sample,
                                           const mkrt_graph_shape *graph,
                                           const mkrt_byte_layout *layout, uint64_t budget_bytes,
                                           double launch_overhead_ns, double fusion_pressure,
                                           mkrt_exec_plan *out, mkrt_error *err);

/** @brief Result of mkrt_plan_cache_plan_frontier(). */
typedef struct mkrt_frontier_exec_plan {
    mkrt_exec_plan execution;    /**< Topology and memory envelope. */
    mkrt_frontier_plan frontier; /**< Barrier groups and peaks; arrays live in the barrier scratch. */
} mkrt_frontier_exec_plan;

/**
 * @brief Frontier execution planning with the topology from the cache.
 *
 * Barriers, budget split and peaks as mkrt_plan_frontier_memory(); the
 * readback fed to the selector is the amortized readback, and the peaks
 * replace layout's frontier/scratch/output fields (which are ignored).
 *
 * @param c The cache.
 * @param id The plan identity.
 * @param scratch Barrier scratch; out->frontier's arrays point into it.
 * @param sample Schedule sample.
 * @param graph Graph shape.
 * @param layout Bytes per node and per edge.
 * @param waves wave_count waves; may be NULL when wave_count is 0.
 * @param wave_count Number of waves.
 * @param deps Dependency edges; may be NULL when dep_count is 0.
 * @param dep_count Number of edges.
 * @param budget_bytes The budget.
 * @param launch_overhead_ns Launch overhead per dispatch.
 * @param fusion_pressure Fusion pressure (used only with grid sync).
 * @param[out] out Both plans; out->frontier is written as soon as the
 *        memory planning succeeds.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK `*out` is set.
 * @retval MKRT_EINVAL A pointer but err is NULL (deps and waves may be NULL
 *         when their count is 0), id->analysis_kind is outside the enum, or
 *         as for mkrt_plan_frontier_memory().
 * @retval MKRT_ECYCLE The dependencies contain a cycle.
 * @retval MKRT_EBUDGET As for mkrt_plan_frontier_memory(), or not even the
 *         sparse envelope fits.
 * @retval MKRT_EOVERFLOW Byte arithmetic overflowed.
 * @retval MKRT_ENOMEM Scratch growth failed, or the plan could not be cached.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread that owns the scratch, concurrently with every cache call but
 * destroy.
 */
mkrt_status mkrt_plan_cache_plan_frontier(mkrt_plan_cache *c, const mkrt_plan_identity *id,
                                          mkrt_barrier_scratch *scratch,
                                          const mkrt_exec_sample *sample,
                                          const mkrt_graph_shape *graph,
                                          const mkrt_byte_layout *layout,
                                          const mkrt_frontier_wave *waves, size_t wave_count,
                                          const mkrt_wave_dep *deps, size_t dep_count,
                                          uint64_t budget_bytes, double launch_overhead_ns,
                                          double fusion_pressure, mkrt_frontier_exec_plan *out,
                                          mkrt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_PLANLIB_CACHED_H */
