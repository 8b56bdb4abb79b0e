/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/shape_cache.h - the runtime's plan cache on the data path: the
 * plan's learned decisions for a batch shape, in an RCU plan cache
 * (mkrt/plan_cache.h, liburcu), read lock-free by every thread that plans
 * a batch (whichever thread holds the dispatch token and runs the dedupe
 * stage: the dispatcher thread, a waiter that helps).
 *
 * The key is what the dedupe stage has measured of the batch before it
 * levels it, nothing invented (a made source's batch, a frontier round,
 * skips the dedupe stage, pipeline/dispatcher.c, so only the rings'
 * batches are keyed):
 *   ops      the OR of the admitted items' op numbers (the admit stage's
 *            own pass; bit 31: a user op among them), a signature of the
 *            op mix (two mixes with one OR share an entry: the outcome is
 *            measured again there and the entry replaced)
 *   size     bit length of the admitted items
 *   arms     bit length of the batch's arms (producers' runs, plan/batch.h)
 *   span     bit length of the handle range the batch touches over its
 *            items (the conflict density's bucket: a narrow span over many
 *            items conflicts, a wide one mostly does not)
 *   policy   the planner's off bits (a changed policy is another key)
 *
 * The value is what the stage learned the last time it ran such a batch,
 * each a decision that costs a pass over the batch to make again:
 *   arms     ARMS's detector (a hash-table pass over the batch): 1 it
 *            looked and found nothing, 2 it found items to skip, 0 never
 *            looked; 1 skips the detector (batch 1 and every 64th still
 *            probe, MKRT__ARMS_PROBE, so a changed load is seen)
 *   split    the parallel levelling (pipeline/prune.c): 1 the chunks'
 *            handles were disjoint (the split pass was exact), 2 a handle
 *            crossed chunks (the split was thrown away and the batch
 *            levelled serially), 3 exact and the chunks' handle ranges
 *            did not even overlap (the next split compares the ranges
 *            and claims no handle), 0 never tried; 2 keeps such batches
 *            on the serial pass (every 64th batch tries again)
 *   layers   bit length of the layers the levelling found
 * A value that no longer matches what was measured is replaced: the old
 * entry is unlinked and retired through RCU (call_rcu), the new one
 * published whole; readers keep using what they found until they leave
 * their read-side section. */
#ifndef MKRT_PLAN_SHAPE_CACHE_H
#define MKRT_PLAN_SHAPE_CACHE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "mkrt/plan_cache.h"

/* Shapes the runtime keeps (CLOCK eviction beyond): a workload has a few
 * shapes; 256 plans of a few hundred bytes each. */
#define MKRT__SHAPES_KEPT 256

typedef struct mkrt__shape {
    uint32_t ops;
    uint8_t size, arms, span;
    uint32_t policy;
} mkrt__shape;

typedef struct mkrt__shape_plan {
    uint8_t arms;   /* 0 never looked, 1 nothing found, 2 found */
    uint8_t split;  /* 0 never tried, 1 exact, 2 conflicted, 3 exact with disjoint handle ranges */
    uint8_t layers; /* bit length of the layers */
} mkrt__shape_plan;

/* The path's cache and its exact counters: one lookup per levelled batch,
 * a hit or a miss (mkrt_stats plan_cache_hits / plan_cache_misses). The
 * counters are written by the thread that plans (relaxed RMW: several
 * threads plan in turn), read by stats. */
typedef struct mkrt__shape_cache {
    mkrt_plan_cache *cache;
    _Atomic uint64_t hits, misses, replaced;
} mkrt__shape_cache;

/* Bit length of v (0 for 0). */
static inline uint8_t mkrt__bits(uint64_t v)
{
    return v == 0 ? 0 : (uint8_t)(64 - __builtin_clzll(v));
}

/* The cache (entries: the most shapes kept; CLOCK eviction beyond).
 * false: out of memory (err set). */
bool mkrt__shape_cache_init(mkrt__shape_cache *sc, size_t entries, mkrt_error *err);
void mkrt__shape_cache_fini(mkrt__shape_cache *sc);
/* Any planning thread, lock-free: the value for s into *out; true on a
 * hit, false on a miss (*out zeroed). Counts one hit or miss. */
bool mkrt__shape_cache_get(mkrt__shape_cache *sc, const mkrt__shape *s, mkrt__shape_plan *out);
/* The planning thread, after measuring: publishes v for s, retiring the
 * entry it replaces (the writer side: its mutex, an allocation; called
 * only when the value changed). false: out of memory (nothing cached,
 * the next batch of the shape misses again). */
bool mkrt__shape_cache_put(mkrt__shape_cache *sc, const mkrt__shape *s, const mkrt__shape_plan *v);

#endif
