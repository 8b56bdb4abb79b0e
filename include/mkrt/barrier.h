/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/barrier.h
 * @brief Minimum global barriers for a wave dependency DAG.
 *
 * Behaviour (reference: vyre megakernel_barrier): Kahn layering of the
 * waves 0..wave_count-1 under the dependencies (before -> after). Each
 * layer ("group") holds waves whose dependencies are all in earlier groups;
 * groups run back to back with one global barrier between two groups, so
 * global_barriers = group_count - 1 (0 for an empty plan). The first group
 * lists the waves without dependencies in ascending order; every later
 * group lists waves in the order they became ready (walking the previous
 * group in order, and each wave's targets in input order) - not sorted.
 * With no dependencies, one group holds every wave.
 *
 * Errors, checked edge by edge in input order:
 * - ::MKRT_EINVAL: an endpoint >= wave_count (also any edge when
 *   wave_count is 0), or a self dependency (before == after, checked after
 *   the range check of that edge);
 * - ::MKRT_ECYCLE: the graph has a cycle; the message gives the number of
 *   waves that could not be scheduled;
 * - ::MKRT_EOVERFLOW: a counter or offset overflowed (the message names it);
 * - ::MKRT_ENOMEM: scratch growth failed (the message names the array).
 *
 * Scratch: CSR adjacency (offsets + targets, the per-wave counts reused as
 * the write cursor) and the result arrays, owned by the caller and reused;
 * capacities only grow. Plans point into the scratch and stay valid until
 * its next use. One thread per scratch at a time.
 */
#ifndef MKRT_BARRIER_H
#define MKRT_BARRIER_H

#include <stddef.h>
#include <stdint.h>

#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief One dependency edge: wave `before` must finish before wave `after` starts. */
typedef struct mkrt_wave_dep {
    size_t before; /**< Wave that must finish ... */
    size_t after;  /**< ... before this wave starts. */
} mkrt_wave_dep;

/**
 * @brief Barrier groups of a wave graph in CSR form.
 *
 * The arrays point into the scratch that planned them and stay valid until
 * its next use or destruction.
 */
typedef struct mkrt_barrier_plan {
    size_t wave_count;           /**< Waves planned. */
    size_t group_count;          /**< Barrier groups; 0 for an empty plan. */
    size_t global_barriers;      /**< group_count - 1, or 0. */
    const size_t *group_offsets; /**< group_count + 1 entries into waves. */
    const size_t *waves;         /**< Wave indices, group by group. */
} mkrt_barrier_plan;

/** @brief Opaque, reusable working memory of mkrt_plan_barriers(). */
typedef struct mkrt_barrier_scratch mkrt_barrier_scratch;

/**
 * @brief Creates a scratch pre-sized for the given shape.
 * @param wave_capacity Waves to reserve room for (0 is fine: it grows on use).
 * @param dep_capacity Dependencies to reserve room for (0 is fine).
 * @param err Filled on failure; may be NULL.
 * @return The scratch, or NULL with ::MKRT_EOVERFLOW or ::MKRT_ENOMEM in
 *         err when it cannot be sized. Free it with
 *         mkrt_barrier_scratch_destroy().
 * @par Thread safety
 * Any thread.
 */
mkrt_barrier_scratch *mkrt_barrier_scratch_create(size_t wave_capacity, size_t dep_capacity,
                                                  mkrt_error *err);
/**
 * @brief Frees a scratch; plans that point into it become invalid.
 * @param s The scratch; NULL is ignored.
 * @par Thread safety
 * The thread that owns the scratch.
 */
void mkrt_barrier_scratch_destroy(mkrt_barrier_scratch *s);
/**
 * @brief Waves the scratch holds without growing.
 * @param s The scratch.
 * @return The wave capacity; 0 for a NULL scratch.
 * @par Thread safety
 * The thread that owns the scratch.
 */
size_t mkrt_barrier_scratch_wave_capacity(const mkrt_barrier_scratch *s);
/**
 * @brief Dependencies the scratch holds without growing.
 * @param s The scratch.
 * @return The dependency capacity; 0 for a NULL scratch.
 * @par Thread safety
 * The thread that owns the scratch.
 */
size_t mkrt_barrier_scratch_dependency_capacity(const mkrt_barrier_scratch *s);

/**
 * @brief Plans the minimum barrier groups of waves 0..wave_count-1.
 *
 * See the file overview for the group order and the checks.
 *
 * @param s The scratch (grown as needed).
 * @param wave_count Waves in the graph.
 * @param deps Dependency edges; may be NULL when dep_count is 0.
 * @param dep_count Number of edges.
 * @param[out] plan The groups; its arrays point into s.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK The plan is filled.
 * @retval MKRT_EINVAL s or plan is NULL, deps is NULL with dep_count > 0, an
 *         endpoint is out of range, or a wave depends on itself.
 * @retval MKRT_ECYCLE The dependencies contain a cycle.
 * @retval MKRT_EOVERFLOW A count or offset overflowed size_t.
 * @retval MKRT_ENOMEM Scratch growth failed.
 * @return The status, as listed; on failure plan is not written.
 * @par Thread safety
 * The thread that owns the scratch; different scratches are independent.
 */
mkrt_status mkrt_plan_barriers(mkrt_barrier_scratch *s, size_t wave_count,
                               const mkrt_wave_dep *deps, size_t dep_count,
                               mkrt_barrier_plan *plan, mkrt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_BARRIER_H */
