/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/split.h - the memory split of one layer (the split stage,
 * pipeline/layer_split.c): the frontier planner's greedy split
 * (mkrt_plan_frontier_memory, plan/frontier.c) without its barrier
 * planning, since a layer's items are conflict-free and nothing orders
 * them. */
#ifndef MKRT_PLAN_SPLIT_H
#define MKRT_PLAN_SPLIT_H

#include "mkrt/barrier.h"
#include "mkrt/frontier.h"

/* Splits waves[0..wave_count) (one layer, in order) into chunks whose
 * fused bytes fit budget_bytes less resident_bytes; plan->barriers lists
 * the chunks (into s), with their peaks. MKRT_EBUDGET: a wave alone does
 * not fit. */
mkrt_status mkrt__plan_split_layer(mkrt_barrier_scratch *s, const mkrt_frontier_wave *waves, size_t wave_count,
                                   uint64_t resident_bytes, uint64_t budget_bytes, mkrt_frontier_plan *plan,
                                   mkrt_error *err);

#endif
