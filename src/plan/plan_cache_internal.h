/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/plan_cache_internal.h - helpers shared by the plan cache files, and
 * test hooks. */
#ifndef MKRT_SRC_PLAN_CACHE_INTERNAL_H
#define MKRT_SRC_PLAN_CACHE_INTERNAL_H

#include "mkrt/plan_cache.h"

uint64_t mkrt__plan_key_hash(const mkrt_plan_key *k);
uint64_t mkrt__plan_identity_hash(const mkrt_plan_identity *id);
bool mkrt__plan_identity_equal(const mkrt_plan_identity *a, const mkrt_plan_identity *b);
mkrt_plan_identity mkrt__plan_identity_of(const mkrt_plan_key *k);

#ifdef MKRT_TEST_HOOKS
/* Test hook: sets the calling thread's hit counter (to check pinning). */
void mkrt__plan_cache_force_hits(mkrt_plan_cache *c, uint64_t value);
#endif

#endif
