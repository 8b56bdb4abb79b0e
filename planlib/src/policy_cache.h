/* SPDX-License-Identifier: BSD-2-Clause */
/* planlib/src/policy_cache.h - the per-thread launch recommendation memo. */
#ifndef MKRT_SRC_POLICY_CACHE_H
#define MKRT_SRC_POLICY_CACHE_H

#include <stdbool.h>

#include "mkrt_planlib/policy.h"

/* Every field of the policy and the request, widened to 64 bits, so that
 * keys compare exactly with memcmp (no padding bytes involved). */
#define MKRT_LAUNCH_KEY_WORDS 40
typedef struct mkrt__launch_key {
    uint64_t w[MKRT_LAUNCH_KEY_WORDS];
} mkrt__launch_key;

void mkrt__launch_key_make(const mkrt_launch_policy *p, const mkrt_launch_request *r,
                           mkrt__launch_key *k);
/* Counts a hit or a miss. */
bool mkrt__launch_cache_get(const mkrt__launch_key *k, mkrt_launch_recommendation *out);
/* Inserts or overwrites; evicts the least recently used other key when
 * over capacity. Silently does nothing when the thread's memo cannot be
 * allocated (the memo is an optimisation, never a failure). */
void mkrt__launch_cache_insert(const mkrt__launch_key *k, const mkrt_launch_recommendation *rec);

#endif
