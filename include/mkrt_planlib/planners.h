/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt_planlib/planners.h
 * @brief Planners of the seeds that the runtime does not call: the
 * uncached frontier execution planner, fusion-pressure scheduling and the
 * text of a topology decision.
 *
 * Moved out of libmkrt (issue 23). The runtime decides a frontier level's
 * queue or bitset with QUEUE's rule on the level's counted density
 * (mkrt/explain.h), takes FUSE's fusion pressure from the share of narrow
 * layers, and reports its topology as a number in mkrt_plan_record. These
 * build on libmkrt's public planners (link -lmkrt_planlib -lmkrt); the
 * cached planners are in mkrt_planlib/cached.h.
 */
#ifndef MKRT_PLANLIB_PLANNERS_H
#define MKRT_PLANLIB_PLANNERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/barrier.h"
#include "mkrt/frontier.h"
#include "mkrt/status.h"
#include "mkrt/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Formats a decision as one line of key=value fields.
 *
 * The text is "megakernel-topology-v1|topology=...|memory_pressure_bps=...|
 * average_degree_bps=...|launch_pressure_bps=...|reason=...", written with
 * snprintf semantics (truncated, NUL-terminated when len > 0).
 *
 * @param d The decision.
 * @param buf Where to write; NULL counts as len 0.
 * @param len Size of buf.
 * @return The full length of the text (excluding the NUL), as snprintf;
 *         0 (and an empty buf) for a NULL d.
 * @par Thread safety
 * Any thread.
 */
size_t mkrt_topology_explain(const mkrt_topology_decision *d, char *buf, size_t len);

/**
 * @brief Scale-aware fusion pressure per candidate.
 *
 * Reference: the megakernel schedule homotopy; the result is what callers
 * pass as fusion_pressure. Starting from 0, for steps k = 0..n_steps-1 with
 * a = (k+1)/n_steps, each out[i] moves by clamp(dt, 0, 1) towards
 * a * clamp(0.55 cp (0.65 + 0.35 d) + 0.25 rp + 0.15 lp + 0.05 d, 0, 1),
 * where cp and rp are the cost and readback relative to the largest, d the
 * density and lp = L / (L + cost); the result is clamped to [0, 1]. With
 * n = 0, n_steps = 0, or all costs, readbacks and L zero, every out[i]
 * is 0.
 *
 * @param samples n candidates; may be NULL when n is 0.
 * @param n Number of candidates.
 * @param launch_overhead_ns L, finite and >= 0.
 * @param n_steps Number of homotopy steps.
 * @param dt Step size, finite and >= 0 (values above 1 act as 1).
 * @param[out] out n entries (caller-owned).
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK out[0..n) is set.
 * @retval MKRT_EINVAL Naming the first bad value: samples or out NULL with
 *         n > 0, dt or the launch overhead not finite or negative, a cost
 *         not finite or negative, a density outside [0, 1]. out is not
 *         written.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread (pure).
 */
mkrt_status mkrt_schedule_fusion_pressure(const mkrt_exec_sample *samples, size_t n,
                                          double launch_overhead_ns, uint32_t n_steps, double dt,
                                          double *out, mkrt_error *err);

/**
 * @brief Frontier execution planning: memory plan, then topology.
 *
 * Graph bytes from the layout's per-node and per-edge sizes
 * (mkrt_graph_resident_bytes()), the memory plan above (readback = the
 * sample's), then mkrt_plan_execution() with the three peaks as the wave
 * bytes and the amortized readback in the sample. The layout's
 * frontier/scratch/output fields are ignored.
 *
 * @param s Barrier scratch; the frontier plan's arrays point into it.
 * @param sample Schedule sample (cost, density, readback).
 * @param graph Graph shape.
 * @param layout Bytes per node and per edge.
 * @param waves wave_count waves; may be NULL when wave_count is 0.
 * @param wave_count Number of waves.
 * @param deps Dependency edges; may be NULL when dep_count is 0.
 * @param dep_count Number of edges.
 * @param budget_bytes Total device budget.
 * @param launch_overhead_ns Launch overhead per dispatch.
 * @param fusion_pressure Fusion pressure in [0, 1] (see
 *        mkrt_schedule_fusion_pressure()).
 * @param device_wide_barrier Whether the device has a device-wide barrier
 *        (without one, fusion pressure counts as 0).
 * @param[out] execution The execution plan.
 * @param[out] plan The frontier memory plan.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Both plans are filled.
 * @retval MKRT_EINVAL Any pointer but err is NULL (deps and waves may be
 *         NULL when their count is 0), or as for
 *         mkrt_plan_frontier_memory().
 * @retval MKRT_ECYCLE The dependencies contain a cycle.
 * @retval MKRT_EBUDGET As for mkrt_plan_frontier_memory(), or not even
 *         the sparse topology fits (mkrt_plan_execution()).
 * @retval MKRT_EOVERFLOW Byte arithmetic overflowed (the message names it).
 * @retval MKRT_ENOMEM Scratch growth failed.
 * @return The status, as listed. `*plan` is written as soon as the memory
 *         planning succeeds, even when the execution planning then fails.
 * @par Thread safety
 * The thread that owns the scratch.
 */
mkrt_status mkrt_plan_frontier_execution(mkrt_barrier_scratch *s, const mkrt_exec_sample *sample,
                                         const mkrt_graph_shape *graph,
                                         const mkrt_byte_layout *layout,
                                         const mkrt_frontier_wave *waves, size_t wave_count,
                                         const mkrt_wave_dep *deps, size_t dep_count,
                                         uint64_t budget_bytes, double launch_overhead_ns,
                                         double fusion_pressure, bool device_wide_barrier,
                                         mkrt_exec_plan *execution, mkrt_frontier_plan *plan,
                                         mkrt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_PLANLIB_PLANNERS_H */
