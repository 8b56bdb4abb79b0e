/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/frontier.h
 * @brief Memory envelope of dependency-layered frontier waves.
 *
 * Behaviour (reference: vyre megakernel_frontier):
 * 1. Barrier-plan the waves (mkrt_plan_barriers()); its errors come first.
 * 2. group budget = budget_bytes - resident_graph_bytes; when resident
 *    exceeds the budget: ::MKRT_EBUDGET, "resident graph bytes".
 * 3. Split every barrier group, in order, greedily into chunks whose fused
 *    bytes fit the group budget, fused(w) = frontier + 4 x scratch + output
 *    (the 4 is the fused-wave scratch multiplier). A single wave that does
 *    not fit alone: ::MKRT_EBUDGET, "single fused frontier wave bytes",
 *    wherever it sits in its group (the reference checked only a group's
 *    first wave). A chunk whose bytes equal
 *    the budget stays fused. Every extra chunk costs one more global
 *    barrier.
 * 4. Peaks: the largest per-group sum of frontier, scratch and output bytes
 *    (without the x4), the widest group, and the amortized readback
 *    max(readback_bytes, peak output bytes).
 *
 * All byte arithmetic is checked: ::MKRT_EOVERFLOW names the field.
 *
 * The plan's barrier arrays live in the barrier scratch (valid until its
 * next use). One thread per scratch at a time; the functions are otherwise
 * pure.
 */
#ifndef MKRT_FRONTIER_H
#define MKRT_FRONTIER_H

#include <stddef.h>
#include <stdint.h>

#include "mkrt/barrier.h"
#include "mkrt/status.h"
#include "mkrt/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Scratch multiplier of a fused wave. */
#define MKRT_FUSED_SCRATCH_MULTIPLIER 4

/** @brief Memory a frontier wave needs. */
typedef struct mkrt_frontier_wave {
    uint64_t frontier_bytes; /**< Resident frontier bytes the wave touches. */
    uint64_t scratch_bytes;  /**< Temporary bytes before fusion scaling. */
    uint64_t output_bytes;   /**< Bytes the wave produces. */
} mkrt_frontier_wave;

/** @brief Result of mkrt_plan_frontier_memory(). */
typedef struct mkrt_frontier_plan {
    /** Groups after the budget split; arrays in the barrier scratch. */
    mkrt_barrier_plan barriers;
    uint64_t peak_frontier_bytes; /**< Largest per-group sum of frontier bytes. */
    uint64_t peak_scratch_bytes;  /**< Largest per-group sum of scratch bytes (not multiplied). */
    uint64_t peak_output_bytes;   /**< Largest per-group sum of output bytes. */
    /** max(readback_bytes, peak_output_bytes). */
    uint64_t amortized_readback_bytes;
    size_t max_group_width;       /**< Most waves in one group after the split. */
} mkrt_frontier_plan;

/**
 * @brief Fused bytes of one wave: frontier + 4 x scratch + output.
 * @param w The wave.
 * @param[out] bytes The sum.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK `*bytes` is set.
 * @retval MKRT_EINVAL w or bytes is NULL.
 * @retval MKRT_EOVERFLOW The sum does not fit 64 bits ("fused wave scratch
 *         bytes" or "fused wave bytes").
 * @return The status, as listed.
 * @par Thread safety
 * Any thread (pure).
 */
mkrt_status mkrt_frontier_fused_wave_bytes(const mkrt_frontier_wave *w, uint64_t *bytes,
                                           mkrt_error *err);

/**
 * @brief Plans the barrier groups of the waves under a memory budget.
 *
 * Steps 1 to 4 of the file overview.
 *
 * @param s Barrier scratch; the plan's arrays point into it.
 * @param waves wave_count waves; may be NULL when wave_count is 0.
 * @param wave_count Number of waves.
 * @param deps Dependency edges; may be NULL when dep_count is 0.
 * @param dep_count Number of edges.
 * @param resident_graph_bytes Bytes already resident for the graph.
 * @param budget_bytes Total device budget.
 * @param readback_bytes Readback to amortize (a floor for the amortized
 *        readback).
 * @param[out] plan The plan; written only on success.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK The plan is filled.
 * @retval MKRT_EINVAL s or plan is NULL, waves is NULL with wave_count > 0,
 *         or mkrt_plan_barriers() refused the edges.
 * @retval MKRT_ECYCLE The dependencies contain a cycle.
 * @retval MKRT_EBUDGET The resident graph exceeds the budget, or a single
 *         wave does not fit the group budget.
 * @retval MKRT_EOVERFLOW Byte arithmetic overflowed (the message names it).
 * @retval MKRT_ENOMEM Scratch growth failed.
 * @return The status, as listed.
 * @par Thread safety
 * The thread that owns the scratch.
 */
mkrt_status mkrt_plan_frontier_memory(mkrt_barrier_scratch *s, const mkrt_frontier_wave *waves,
                                      size_t wave_count, const mkrt_wave_dep *deps,
                                      size_t dep_count, uint64_t resident_graph_bytes,
                                      uint64_t budget_bytes, uint64_t readback_bytes,
                                      mkrt_frontier_plan *plan, mkrt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_FRONTIER_H */
