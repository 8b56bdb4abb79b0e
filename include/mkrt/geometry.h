/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/geometry.h
 * @brief The launch geometry a cached plan carries (mkrt/plan_cache.h);
 * the optional planning library (libmkrt_planlib, mkrt_planlib/sizing.h)
 * computes it.
 */
#ifndef MKRT_GEOMETRY_H
#define MKRT_GEOMETRY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Launch geometry of one dispatch. */
typedef struct mkrt_launch_geometry {
    uint32_t workgroup_size_x; /**< Lanes per workgroup. */
    uint32_t slot_count;       /**< Item slots, padded to a multiple of workgroup_size_x. */
    uint32_t dispatch_grid[3]; /**< Workgroups per dimension; [1] and [2] are 1. */
} mkrt_launch_geometry;

#ifdef __cplusplus
}
#endif
#endif /* MKRT_GEOMETRY_H */
