/* SPDX-License-Identifier: BSD-2-Clause */
/* planlib/src/sizing_cache.c - per-thread memos for grid plans and geometries.
 *
 * Small fixed tables scanned linearly (128 entries of a few words: the scan
 * is cheaper than hashing would be), recency by a per-table clock that is
 * reset together with every entry's last_seen when it would wrap. When a
 * table is full the entry with the smallest last_seen goes. Thread-local:
 * no sharing, no locks. */
#include <string.h>

#include "planlib_base.h"
#include "mkrt_planlib/sizing.h"

#define KEY_WORDS 14

typedef struct memo_entry {
    uint64_t key[KEY_WORDS];
    uint64_t last_seen;
    bool used;
    mkrt_status status;
    mkrt_launch_geometry geometry;
    uint32_t workers;
} memo_entry;

typedef struct memo_table {
    memo_entry e[MKRT_SIZING_CACHE_CAPACITY];
    size_t entries;
    uint64_t clock;
} memo_table;

static _Thread_local memo_table grid_memo, geometry_memo;
static _Thread_local uint64_t memo_hits, memo_misses;

static void policy_words(const mkrt_sizing_policy *p, uint64_t *w)
{
    w[0] = (uint64_t)p->default_worker_count << 32 | p->occupancy_worker_divisor;
    w[1] = (uint64_t)p->max_dispatch_workgroups << 32 | p->powerful_invocation_threshold;
    w[2] = (uint64_t)p->powerful_min_worker_groups << 32 | p->persistent_runtime_node_max;
    w[3] = (uint64_t)p->fused_over_dispatch_multiplier << 32 | p->min_portable_workgroup_x;
    w[4] = (uint64_t)p->default_portable_workgroup_x << 32 | p->max_portable_workgroup_x;
}

static uint64_t tick(memo_table *t)
{
    if (t->clock == UINT64_MAX) {
        t->clock = 0;
        for (size_t i = 0; i < MKRT_SIZING_CACHE_CAPACITY; i++)
            t->e[i].last_seen = 0;
    }
    return ++t->clock;
}

static memo_entry *lookup(memo_table *t, const uint64_t *key)
{
    for (size_t i = 0; i < MKRT_SIZING_CACHE_CAPACITY; i++)
        if (t->e[i].used && memcmp(t->e[i].key, key, sizeof t->e[i].key) == 0) {
            t->e[i].last_seen = tick(t);
            memo_hits = memo_hits == UINT64_MAX ? memo_hits : memo_hits + 1;
            return &t->e[i];
        }
    memo_misses = memo_misses == UINT64_MAX ? memo_misses : memo_misses + 1;
    return NULL;
}

static memo_entry *insert(memo_table *t, const uint64_t *key)
{
    memo_entry *slot = NULL;
    for (size_t i = 0; i < MKRT_SIZING_CACHE_CAPACITY && slot == NULL; i++)
        if (!t->e[i].used)
            slot = &t->e[i];
    if (slot == NULL) { /* full: the least recently used goes */
        slot = &t->e[0];
        for (size_t i = 1; i < MKRT_SIZING_CACHE_CAPACITY; i++)
            if (t->e[i].last_seen < slot->last_seen)
                slot = &t->e[i];
    } else {
        t->entries++;
    }
    memcpy(slot->key, key, sizeof slot->key);
    slot->used = true;
    slot->last_seen = tick(t);
    return slot;
}

mkrt_status mkrt_sizing_optimal_grid_cached(const mkrt_sizing_policy *p, uint32_t queue_len,
                                            uint32_t requested_workers,
                                            const mkrt_grid_limits *limits,
                                            mkrt_launch_geometry *geometry, uint32_t *worker_groups,
                                            mkrt_error *err)
{
    if (p == NULL || limits == NULL || geometry == NULL || worker_groups == NULL) /* not memoised */
        return mkrt_sizing_optimal_grid(p, queue_len, requested_workers, limits, geometry,
                                        worker_groups, err);
    uint64_t key[KEY_WORDS] = {0};
    policy_words(p, key);
    key[5] = (uint64_t)queue_len << 32 | requested_workers;
    key[6] = (uint64_t)limits->max_workgroup_size_x << 32 | limits->max_workgroups_per_dimension;
    key[7] = limits->max_invocations_per_workgroup;
    memo_entry *m = lookup(&grid_memo, key);
    if (m == NULL) {
        mkrt_launch_geometry g;
        uint32_t w = 0;
        mkrt_status st = mkrt_sizing_optimal_grid(p, queue_len, requested_workers, limits, &g, &w, err);
        if (st != MKRT_OK)
            return st; /* errors are not memoised */
        m = insert(&grid_memo, key);
        m->geometry = g;
        m->workers = w;
    }
    *geometry = m->geometry;
    *worker_groups = m->workers;
    return MKRT_OK;
}

mkrt_launch_geometry mkrt_geometry_from_slots_cached(const mkrt_sizing_policy *p, uint32_t slots,
                                                     uint32_t workers, uint32_t max_x)
{
    if (p == NULL) /* not memoised */
        return mkrt_geometry_from_slots(NULL, slots, workers, max_x);
    uint64_t key[KEY_WORDS] = {0};
    policy_words(p, key);
    key[5] = (uint64_t)slots << 32 | workers;
    key[6] = max_x;
    memo_entry *m = lookup(&geometry_memo, key);
    if (m == NULL) {
        m = insert(&geometry_memo, key);
        m->geometry = mkrt_geometry_from_slots(p, slots, workers, max_x);
    }
    return m->geometry;
}

mkrt_sizing_cache_stats mkrt_sizing_cache_stats_read(void)
{
    return (mkrt_sizing_cache_stats){grid_memo.entries, geometry_memo.entries, memo_hits, memo_misses};
}

void mkrt_sizing_cache_reset(void)
{
    memset(&grid_memo, 0, sizeof grid_memo);
    memset(&geometry_memo, 0, sizeof geometry_memo);
    memo_hits = memo_misses = 0;
}
