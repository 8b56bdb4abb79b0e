/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt_planlib/sizing.h
 * @brief Launch geometry: workgroup width, padded slots, grid.
 *
 * Behaviour (reference: vyre MegakernelSizingPolicy / SchedulingPolicy):
 * - workgroup width = 1 when workers == 0, else min(workers, max(max_x, 1))
 *   (the worker count becomes the lane width);
 * - padded slots = max(1, ceil(n / wg)) * wg, saturating at UINT32_MAX;
 * - dispatch grid = [min(max(1, ceil(slots / wg)), max(workers, 1),
 *   max_dispatch_workgroups), 1, 1];
 * - default workers = max(clamp(max_groups / occupancy_worker_divisor, 1,
 *   max_dispatch_workgroups), invocations >= powerful threshold ?
 *   powerful_min_worker_groups : 1).
 *
 * Pure functions; safe from any thread (the *_cached variants use
 * per-thread memos). A NULL policy or geometry makes the value-returning
 * calls return 0 / false / a zeroed geometry (and dispatch_grid with a NULL
 * grid a no-op); the status-returning calls return ::MKRT_EINVAL for any
 * NULL pointer but err.
 */
#ifndef MKRT_PLANLIB_SIZING_H
#define MKRT_PLANLIB_SIZING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/geometry.h"
#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Sizing constants; mkrt_sizing_policy_standard() gives the values in brackets.
 *
 * Fields marked "not read here" are carried for callers; they still take
 * part in the memo keys of the *_cached functions and the launch policy.
 */
typedef struct mkrt_sizing_policy {
    uint32_t default_worker_count;          /**< Default worker count for callers [64]; not read by the functions here. */
    uint32_t occupancy_worker_divisor;      /**< max_groups divisor for the occupancy default [256]. */
    uint32_t max_dispatch_workgroups;       /**< Upper bound of the dispatch grid [1024]. */
    uint32_t powerful_invocation_threshold; /**< Invocations per workgroup that mark a powerful device [4096]. */
    uint32_t powerful_min_worker_groups;    /**< Worker-group floor on a powerful device [64]. */
    uint32_t persistent_runtime_node_max;   /**< Node bound of a persistent runtime [64]; not read here. */
    uint32_t fused_over_dispatch_multiplier; /**< Fused slots allowed per plain slot [4]. */
    uint32_t min_portable_workgroup_x;      /**< Smallest portable workgroup width [32]; not read here. */
    uint32_t default_portable_workgroup_x;  /**< Default portable workgroup width [64]; not read here. */
    uint32_t max_portable_workgroup_x;      /**< Largest portable workgroup width [256]; not read here. */
} mkrt_sizing_policy;


/** @brief A device's launch limits. */
typedef struct mkrt_grid_limits {
    uint32_t max_workgroup_size_x;          /**< Widest workgroup (non-zero). */
    uint32_t max_workgroups_per_dimension;  /**< Most workgroups per grid dimension (non-zero). */
    uint32_t max_invocations_per_workgroup; /**< Most invocations per workgroup (non-zero). */
} mkrt_grid_limits;

/**
 * @brief The standard sizing policy (the values in brackets in ::mkrt_sizing_policy).
 * @return The policy, by value.
 * @par Thread safety
 * Any thread.
 */
mkrt_sizing_policy mkrt_sizing_policy_standard(void);

/**
 * @brief Workgroup width: 1 when workers is 0, else min(workers, max(max_x, 1)).
 * @param workers Worker count (becomes the lane width).
 * @param max_x Device's widest workgroup.
 * @return The width, at least 1.
 * @par Thread safety
 * Any thread (pure).
 */
uint32_t mkrt_sizing_workgroup_size(uint32_t workers, uint32_t max_x);
/**
 * @brief Slots for n items padded to whole workgroups.
 * @param n Items.
 * @param workgroup_size Workgroup width (0 counts as 1).
 * @return max(1, ceil(n / wg)) * wg, saturating at UINT32_MAX.
 * @par Thread safety
 * Any thread (pure).
 */
uint32_t mkrt_sizing_padded_slot_count(uint32_t n, uint32_t workgroup_size);
/**
 * @brief Dispatch grid for a slot count.
 *
 * grid = [min(max(1, ceil(slots / wg)), max(workers, 1),
 * p->max_dispatch_workgroups), 1, 1].
 *
 * @param p The policy; NULL makes the call a no-op.
 * @param workers Worker count.
 * @param slots Slots to cover.
 * @param workgroup_size Workgroup width (0 counts as 1).
 * @param[out] grid Three entries; NULL makes the call a no-op.
 * @par Thread safety
 * Any thread (pure).
 */
void mkrt_sizing_dispatch_grid(const mkrt_sizing_policy *p, uint32_t workers, uint32_t slots,
                               uint32_t workgroup_size, uint32_t grid[3]);
/**
 * @brief Occupancy-derived default worker groups (see the file overview).
 * @param p The policy.
 * @param max_groups Workgroups the device can keep resident.
 * @param max_invocations Invocations per workgroup of the device.
 * @return The worker groups, at least 1; 0 for a NULL policy.
 * @par Thread safety
 * Any thread (pure).
 */
uint32_t mkrt_sizing_default_worker_groups(const mkrt_sizing_policy *p, uint32_t max_groups,
                                           uint32_t max_invocations);
/**
 * @brief Whether a fused dispatch is allowed.
 *
 * A fused dispatch may cover at most fused_over_dispatch_multiplier times
 * the slots of the plain dispatch.
 *
 * @param p The policy.
 * @param fused_slots Slots of the fused dispatch.
 * @param dispatch_slots Slots of the plain dispatch.
 * @return true when fused_slots <= multiplier x dispatch_slots (also when
 *         that product overflows); false for a NULL policy.
 * @par Thread safety
 * Any thread (pure).
 */
bool mkrt_sizing_fused_allowed(const mkrt_sizing_policy *p, uint64_t fused_slots,
                               uint64_t dispatch_slots);

/**
 * @brief Geometry for a slot count: width, padded slots, grid.
 * @param p The policy.
 * @param slots Slots (items) to cover.
 * @param workers Worker count.
 * @param max_x Device's widest workgroup.
 * @return The geometry; all zeros for a NULL policy.
 * @par Thread safety
 * Any thread (pure).
 */
mkrt_launch_geometry mkrt_geometry_from_slots(const mkrt_sizing_policy *p, uint32_t slots,
                                              uint32_t workers, uint32_t max_x);
/**
 * @brief Worker groups that cover a geometry's slots.
 * @param g The geometry.
 * @return slot_count / workgroup_size_x (a width of 0 counts as 1); 0 for NULL.
 * @par Thread safety
 * Any thread (pure).
 */
uint32_t mkrt_geometry_covering_worker_groups(const mkrt_launch_geometry *g);
/**
 * @brief Geometry for n items, refusing counts the slot space cannot hold.
 * @param p The policy.
 * @param n Items.
 * @param workers Worker count.
 * @param max_x Device's widest workgroup.
 * @param[out] out The geometry; written only on success.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK `*out` is set.
 * @retval MKRT_EINVAL p or out is NULL.
 * @retval MKRT_EOVERFLOW n > UINT32_MAX, or padding would saturate below n.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread (pure).
 */
mkrt_status mkrt_geometry_from_item_count(const mkrt_sizing_policy *p, uint64_t n,
                                          uint32_t workers, uint32_t max_x,
                                          mkrt_launch_geometry *out, mkrt_error *err);

/**
 * @brief The grid for a queue under a device's limits.
 *
 * workers = requested_workers capped by max_workgroups_per_dimension, or
 * the occupancy default (mkrt_sizing_default_worker_groups(), also capped)
 * when requested_workers is 0; at least 1. The geometry covers
 * max(queue_len, 1) slots.
 *
 * @param p The policy.
 * @param queue_len Items queued.
 * @param requested_workers Worker groups asked for; 0 derives them.
 * @param limits The device's limits; each must be non-zero.
 * @param[out] geometry The geometry.
 * @param[out] worker_groups The worker groups used.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Both outputs are set.
 * @retval MKRT_EINVAL A pointer but err is NULL, or a limit is 0.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread (pure).
 */
mkrt_status mkrt_sizing_optimal_grid(const mkrt_sizing_policy *p, uint32_t queue_len,
                                     uint32_t requested_workers, const mkrt_grid_limits *limits,
                                     mkrt_launch_geometry *geometry, uint32_t *worker_groups,
                                     mkrt_error *err);

/**
 * @brief Entries in each per-thread sizing memo.
 *
 * The *_cached functions memoise mkrt_sizing_optimal_grid() and
 * mkrt_geometry_from_slots() per thread (reference: the planner's
 * grid-plan and geometry caches): this many entries each, least recently
 * used evicted, no locks. Results are identical to the uncached calls.
 */
#define MKRT_SIZING_CACHE_CAPACITY 128
/**
 * @brief mkrt_sizing_optimal_grid() through the calling thread's memo.
 *
 * Errors are not memoised; calls with a NULL pointer bypass the memo.
 *
 * @param p The policy.
 * @param queue_len Items queued.
 * @param requested_workers Worker groups asked for; 0 derives them.
 * @param limits The device's limits.
 * @param[out] geometry The geometry.
 * @param[out] worker_groups The worker groups used.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Both outputs are set.
 * @retval MKRT_EINVAL As for mkrt_sizing_optimal_grid().
 * @return The status, as listed.
 * @par Thread safety
 * Any thread; each thread has its own memo.
 */
mkrt_status mkrt_sizing_optimal_grid_cached(const mkrt_sizing_policy *p, uint32_t queue_len,
                                            uint32_t requested_workers,
                                            const mkrt_grid_limits *limits,
                                            mkrt_launch_geometry *geometry, uint32_t *worker_groups,
                                            mkrt_error *err);
/**
 * @brief mkrt_geometry_from_slots() through the calling thread's memo.
 * @param p The policy (NULL bypasses the memo and gives a zeroed geometry).
 * @param slots Slots to cover.
 * @param workers Worker count.
 * @param max_x Device's widest workgroup.
 * @return The geometry.
 * @par Thread safety
 * Any thread; each thread has its own memo.
 */
mkrt_launch_geometry mkrt_geometry_from_slots_cached(const mkrt_sizing_policy *p, uint32_t slots,
                                                     uint32_t workers, uint32_t max_x);

/** @brief Counters of the calling thread's sizing memos. */
typedef struct mkrt_sizing_cache_stats {
    size_t grid_entries, geometry_entries;
    uint64_t hits, misses;
    /** @var grid_entries
     *  @brief Entries in the grid memo. */
    /** @var geometry_entries
     *  @brief Entries in the geometry memo. */
    /** @var hits
     *  @brief Lookups answered by either memo (saturating). */
    /** @var misses
     *  @brief Lookups that computed (saturating). */
} mkrt_sizing_cache_stats;
/**
 * @brief The calling thread's sizing memo counters.
 * @return The counters, by value.
 * @par Thread safety
 * Any thread; reads only the caller's memos.
 */
mkrt_sizing_cache_stats mkrt_sizing_cache_stats_read(void);
/**
 * @brief Empties the calling thread's sizing memos and zeroes their counters.
 * @par Thread safety
 * Any thread; touches only the caller's memos.
 */
void mkrt_sizing_cache_reset(void);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_SIZING_H */
