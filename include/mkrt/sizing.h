/* SPDX-License-Identifier: BSD-2-Clause */
/* mkrt/sizing.h - launch geometry: workgroup width, padded slots, grid.
 *
 * Behaviour (reference: vyre MegakernelSizingPolicy / SchedulingPolicy):
 *   workgroup width  = 1 when workers == 0, else min(workers, max(max_x, 1))
 *                      (the worker count becomes the lane width);
 *   padded slots     = max(1, ceil(n / wg)) * wg, saturating at UINT32_MAX;
 *   dispatch grid    = [min(max(1, ceil(slots / wg)), max(workers, 1),
 *                      max_dispatch_workgroups), 1, 1];
 *   default workers  = max(clamp(max_groups / occupancy_worker_divisor, 1,
 *                      max_dispatch_workgroups), invocations >= powerful
 *                      threshold ? powerful_min_worker_groups : 1).
 * Pure functions; safe from any thread. A NULL policy or geometry makes
 * the value-returning calls return 0 / false / a zeroed geometry (and
 * dispatch_grid with a NULL grid a no-op); the status-returning calls
 * return MKRT_EINVAL for any NULL pointer but err.
 */
#ifndef MKRT_SIZING_H
#define MKRT_SIZING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mkrt_sizing_policy {
    uint32_t default_worker_count;          /* 64 */
    uint32_t occupancy_worker_divisor;      /* 256 */
    uint32_t max_dispatch_workgroups;       /* 1024 */
    uint32_t powerful_invocation_threshold; /* 4096 */
    uint32_t powerful_min_worker_groups;    /* 64 */
    uint32_t persistent_runtime_node_max;   /* 64 */
    uint32_t fused_over_dispatch_multiplier; /* 4 */
    uint32_t min_portable_workgroup_x;      /* 32 */
    uint32_t default_portable_workgroup_x;  /* 64 */
    uint32_t max_portable_workgroup_x;      /* 256 */
} mkrt_sizing_policy;

typedef struct mkrt_launch_geometry {
    uint32_t workgroup_size_x;
    uint32_t slot_count;       /* padded to a multiple of workgroup_size_x */
    uint32_t dispatch_grid[3];
} mkrt_launch_geometry;

typedef struct mkrt_grid_limits {
    uint32_t max_workgroup_size_x;
    uint32_t max_workgroups_per_dimension;
    uint32_t max_invocations_per_workgroup;
} mkrt_grid_limits;

mkrt_sizing_policy mkrt_sizing_policy_standard(void);

uint32_t mkrt_sizing_workgroup_size(uint32_t workers, uint32_t max_x);
uint32_t mkrt_sizing_padded_slot_count(uint32_t n, uint32_t workgroup_size);
void mkrt_sizing_dispatch_grid(const mkrt_sizing_policy *p, uint32_t workers, uint32_t slots,
                               uint32_t workgroup_size, uint32_t grid[3]);
uint32_t mkrt_sizing_default_worker_groups(const mkrt_sizing_policy *p, uint32_t max_groups,
                                           uint32_t max_invocations);
/* A fused dispatch may cover at most fused_over_dispatch_multiplier times
 * the slots of the plain dispatch. */
bool mkrt_sizing_fused_allowed(const mkrt_sizing_policy *p, uint64_t fused_slots,
                               uint64_t dispatch_slots);

mkrt_launch_geometry mkrt_geometry_from_slots(const mkrt_sizing_policy *p, uint32_t slots,
                                              uint32_t workers, uint32_t max_x);
/* slot_count / workgroup_size_x. */
uint32_t mkrt_geometry_covering_worker_groups(const mkrt_launch_geometry *g);
/* Geometry for n items; MKRT_EOVERFLOW when n > UINT32_MAX or padding
 * would saturate below n. */
mkrt_status mkrt_geometry_from_item_count(const mkrt_sizing_policy *p, uint64_t n,
                                          uint32_t workers, uint32_t max_x,
                                          mkrt_launch_geometry *out, mkrt_error *err);

/* The grid for a queue: workers = requested (capped by the limit) or the
 * occupancy default when requested is 0. MKRT_EINVAL when a limit is 0. */
mkrt_status mkrt_sizing_optimal_grid(const mkrt_sizing_policy *p, uint32_t queue_len,
                                     uint32_t requested_workers, const mkrt_grid_limits *limits,
                                     mkrt_launch_geometry *geometry, uint32_t *worker_groups,
                                     mkrt_error *err);

/* Per-thread memos of the two computations above (reference: the planner's
 * grid-plan and geometry caches): 128 entries each, least recently used
 * evicted, no locks. Results are identical to the uncached calls. */
#define MKRT_SIZING_CACHE_CAPACITY 128
mkrt_status mkrt_sizing_optimal_grid_cached(const mkrt_sizing_policy *p, uint32_t queue_len,
                                            uint32_t requested_workers,
                                            const mkrt_grid_limits *limits,
                                            mkrt_launch_geometry *geometry, uint32_t *worker_groups,
                                            mkrt_error *err);
mkrt_launch_geometry mkrt_geometry_from_slots_cached(const mkrt_sizing_policy *p, uint32_t slots,
                                                     uint32_t workers, uint32_t max_x);

typedef struct mkrt_sizing_cache_stats {
    size_t grid_entries, geometry_entries;
    uint64_t hits, misses;
} mkrt_sizing_cache_stats;
mkrt_sizing_cache_stats mkrt_sizing_cache_stats_read(void);
void mkrt_sizing_cache_reset(void);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_SIZING_H */
