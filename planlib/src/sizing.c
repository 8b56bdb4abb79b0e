/* SPDX-License-Identifier: BSD-2-Clause */
/* planlib/src/sizing.c - launch geometry arithmetic. */
#include "planlib_base.h"
#include "mkrt_planlib/sizing.h"

mkrt_sizing_policy mkrt_sizing_policy_standard(void)
{
    return (mkrt_sizing_policy){64, 256, 1024, 4096, 64, 64, 4, 32, 64, 256};
}

static uint32_t sat_add(uint32_t a, uint32_t b)
{
    uint32_t r;
    return __builtin_add_overflow(a, b, &r) ? UINT32_MAX : r;
}

static uint32_t sat_mul(uint32_t a, uint32_t b)
{
    uint32_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT32_MAX : r;
}

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }
static uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }

uint32_t mkrt_sizing_workgroup_size(uint32_t workers, uint32_t max_x)
{
    return workers == 0 ? 1 : min_u32(workers, max_u32(max_x, 1));
}

uint32_t mkrt_sizing_padded_slot_count(uint32_t n, uint32_t workgroup_size)
{
    uint32_t wg = max_u32(workgroup_size, 1);
    uint32_t groups = max_u32(1, sat_add(n, wg - 1) / wg);
    return sat_mul(groups, wg);
}

void mkrt_sizing_dispatch_grid(const mkrt_sizing_policy *p, uint32_t workers, uint32_t slots,
                               uint32_t workgroup_size, uint32_t grid[3])
{
    if (p == NULL || grid == NULL)
        return;
    uint32_t wg = max_u32(workgroup_size, 1);
    uint32_t groups = max_u32(1, sat_add(slots, wg - 1) / wg);
    grid[0] = min_u32(min_u32(groups, max_u32(workers, 1)), p->max_dispatch_workgroups);
    grid[1] = 1;
    grid[2] = 1;
}

uint32_t mkrt_sizing_default_worker_groups(const mkrt_sizing_policy *p, uint32_t max_groups,
                                           uint32_t max_invocations)
{
    if (p == NULL)
        return 0;
    uint32_t occ = max_groups / max_u32(p->occupancy_worker_divisor, 1);
    occ = min_u32(max_u32(occ, 1), p->max_dispatch_workgroups);
    uint32_t floor = max_invocations >= p->powerful_invocation_threshold
                         ? p->powerful_min_worker_groups
                         : 1;
    return max_u32(occ, floor);
}

bool mkrt_sizing_fused_allowed(const mkrt_sizing_policy *p, uint64_t fused_slots,
                               uint64_t dispatch_slots)
{
    uint64_t cap;
    if (p == NULL)
        return false;
    if (__builtin_mul_overflow(dispatch_slots, (uint64_t)p->fused_over_dispatch_multiplier, &cap))
        return true;
    return fused_slots <= cap;
}

mkrt_launch_geometry mkrt_geometry_from_slots(const mkrt_sizing_policy *p, uint32_t slots,
                                              uint32_t workers, uint32_t max_x)
{
    mkrt_launch_geometry g = {0, 0, {0, 0, 0}};
    if (p == NULL)
        return g;
    g.workgroup_size_x = mkrt_sizing_workgroup_size(workers, max_x);
    g.slot_count = mkrt_sizing_padded_slot_count(slots, g.workgroup_size_x);
    mkrt_sizing_dispatch_grid(p, workers, g.slot_count, g.workgroup_size_x, g.dispatch_grid);
    return g;
}

uint32_t mkrt_geometry_covering_worker_groups(const mkrt_launch_geometry *g)
{
    if (g == NULL)
        return 0;
    return g->slot_count / max_u32(g->workgroup_size_x, 1);
}

mkrt_status mkrt_geometry_from_item_count(const mkrt_sizing_policy *p, uint64_t n,
                                          uint32_t workers, uint32_t max_x,
                                          mkrt_launch_geometry *out, mkrt_error *err)
{
    if (p == NULL || out == NULL)
        return mkrt__pl_error_set(err, MKRT_EINVAL,
                               "mkrt_geometry_from_item_count got a NULL %s. Fix: pass valid "
                               "pointers.",
                               p == NULL ? "sizing policy" : "result pointer");
    if (n > UINT32_MAX)
        return mkrt__pl_error_set(err, MKRT_EOVERFLOW,
                               "megakernel item count %llu exceeds the u32 slot space. Fix: shard "
                               "the queue before launch.",
                               (unsigned long long)n);
    mkrt_launch_geometry g = mkrt_geometry_from_slots(p, (uint32_t)n, workers, max_x);
    if (g.slot_count < n)
        return mkrt__pl_error_set(err, MKRT_EOVERFLOW,
                               "megakernel slot padding saturated at %u slots for %llu items. Fix: "
                               "shard the queue before launch.",
                               g.slot_count, (unsigned long long)n);
    *out = g;
    return MKRT_OK;
}

mkrt_status mkrt_sizing_optimal_grid(const mkrt_sizing_policy *p, uint32_t queue_len,
                                     uint32_t requested_workers, const mkrt_grid_limits *limits,
                                     mkrt_launch_geometry *geometry, uint32_t *worker_groups,
                                     mkrt_error *err)
{
    static const char *const names[] = {"max_workgroup_size_x", "max_compute_workgroups_per_dimension",
                                        "max_compute_invocations_per_workgroup"};
    if (p == NULL || limits == NULL || geometry == NULL || worker_groups == NULL)
        return mkrt__pl_error_set(err, MKRT_EINVAL,
                               "mkrt_sizing_optimal_grid got a NULL %s. Fix: pass valid pointers.",
                               p == NULL        ? "sizing policy"
                               : limits == NULL ? "grid limits"
                               : geometry == NULL ? "geometry result"
                                                  : "worker-group result");
    const uint32_t vals[] = {limits->max_workgroup_size_x, limits->max_workgroups_per_dimension,
                             limits->max_invocations_per_workgroup};
    for (int i = 0; i < 3; i++)
        if (vals[i] == 0)
            return mkrt__pl_error_set(err, MKRT_EINVAL,
                                   "megakernel %s must be non-zero. Fix: pass the device's real "
                                   "launch limits.",
                                   names[i]);
    uint32_t G = limits->max_workgroups_per_dimension;
    uint32_t occupancy =
        min_u32(mkrt_sizing_default_worker_groups(p, G, limits->max_invocations_per_workgroup), G);
    uint32_t workers = max_u32(1, requested_workers == 0 ? occupancy : min_u32(requested_workers, G));
    *geometry = mkrt_geometry_from_slots(p, max_u32(queue_len, 1), workers,
                                         limits->max_workgroup_size_x);
    *worker_groups = workers;
    return MKRT_OK;
}
