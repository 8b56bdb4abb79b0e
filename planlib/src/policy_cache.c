/* SPDX-License-Identifier: BSD-2-Clause */
/* planlib/src/policy_cache.c - per-thread memo of launch recommendations.
 *
 * Each thread owns one table (allocated on first use, freed by a
 * thread-specific-storage destructor when the thread exits), so no access is shared and no
 * lock or atomic is needed. Open addressing over 2 x capacity slots with
 * backward-shift deletion; recency is a per-table clock (reset with every
 * last_seen when it would wrap, as the reference does). */
#include <string.h>

#include "planlib_base.h"
#include "base/thread.h"
#include "policy_cache.h"

#define SLOTS (2 * MKRT_LAUNCH_CACHE_CAPACITY)

typedef struct slot {
    bool used;
    uint64_t hash;
    uint64_t last_seen;
    mkrt__launch_key key;
    mkrt_launch_recommendation rec;
} slot;

typedef struct memo {
    slot slots[SLOTS];
    size_t entries;
    uint64_t clock, hits, misses;
} memo;

static mkrt__tss memo_key;
static mkrt__once_flag memo_once = MKRT__ONCE_INIT;
static _Thread_local memo *tls_memo;

static void memo_free(void *m)
{
    mkrt__pl_free(m);
}

static void memo_key_init(void)
{
    mkrt__tss_create(&memo_key, memo_free);
}

static memo *get_memo(bool create)
{
    if (tls_memo != NULL || !create)
        return tls_memo;
    mkrt__call_once(&memo_once, memo_key_init);
    memo *m = mkrt__pl_alloc_zeroed(sizeof *m);
    if (m != NULL) {
        mkrt__tss_set(memo_key, m);
        tls_memo = m;
    }
    return m;
}

void mkrt__launch_key_make(const mkrt_launch_policy *p, const mkrt_launch_request *r,
                           mkrt__launch_key *k)
{
    const mkrt_sizing_policy *s = &p->sizing;
    uint64_t w[MKRT_LAUNCH_KEY_WORDS] = {
        s->default_worker_count, s->occupancy_worker_divisor, s->max_dispatch_workgroups,
        s->powerful_invocation_threshold, s->powerful_min_worker_groups,
        s->persistent_runtime_node_max, s->fused_over_dispatch_multiplier,
        s->min_portable_workgroup_x, s->default_portable_workgroup_x, s->max_portable_workgroup_x,
        p->min_hit_capacity, p->hit_capacity_multiplier, p->saturated_waves,
        p->hot_opcode_threshold, p->hot_window_threshold, p->jit_queue_len_threshold,
        p->priority_age_threshold, p->sparse_frontier_threshold_bps,
        p->dense_frontier_threshold_bps, p->memory_pressure_threshold_bps,
        p->fusion_edge_threshold, p->scratch_bytes_per_hit,
        r->queue_len, r->requested_worker_groups, r->max_workgroup_size_x,
        r->max_compute_workgroups_per_dimension, r->max_compute_invocations_per_workgroup,
        r->requested_hit_capacity, r->expected_hits_per_item, r->hot_opcode_count,
        r->hot_window_count, r->requeue_count, r->max_priority_age, r->graph_node_count,
        r->graph_edge_count, r->frontier_density_bps, r->memory_pressure_bps,
        r->resident_device_bytes, r->device_memory_budget_bytes, 0};
    memcpy(k->w, w, sizeof w);
}

static uint64_t key_hash(const mkrt__launch_key *k)
{
    uint64_t h = 0x243F6A8885A308D3ull;
    for (size_t i = 0; i < MKRT_LAUNCH_KEY_WORDS; i++) {
        h ^= k->w[i];
        h *= 0x100000001B3ull;
        h ^= h >> 29;
    }
    return h;
}

static slot *find(memo *m, const mkrt__launch_key *k, uint64_t h)
{
    for (size_t i = h % SLOTS;; i = (i + 1) % SLOTS) {
        slot *s = &m->slots[i];
        if (!s->used)
            return s;
        if (s->hash == h && memcmp(&s->key, k, sizeof *k) == 0)
            return s;
    }
}

static void maybe_reset_clock(memo *m)
{
    if (m->clock == UINT64_MAX) {
        m->clock = 0;
        for (size_t i = 0; i < SLOTS; i++)
            m->slots[i].last_seen = 0;
    }
}

static uint64_t tick(memo *m)
{
    maybe_reset_clock(m);
    return ++m->clock;
}

static uint64_t sat_inc(uint64_t v)
{
    return v == UINT64_MAX ? v : v + 1;
}

bool mkrt__launch_cache_get(const mkrt__launch_key *k, mkrt_launch_recommendation *out)
{
    memo *m = get_memo(true);
    if (m == NULL)
        return false;
    maybe_reset_clock(m);
    slot *s = find(m, k, key_hash(k));
    if (!s->used) {
        m->misses = sat_inc(m->misses);
        return false;
    }
    s->last_seen = tick(m);
    m->hits = sat_inc(m->hits);
    *out = s->rec;
    return true;
}

/* Removes slot `i` and closes the probe gap (linear-probing deletion). */
static void remove_at(memo *m, size_t i)
{
    m->slots[i].used = false;
    m->entries--;
    for (size_t j = (i + 1) % SLOTS; m->slots[j].used; j = (j + 1) % SLOTS) {
        size_t home = m->slots[j].hash % SLOTS;
        /* Move j back into i when its home is not in the cyclic range (i, j]. */
        bool in_range = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!in_range) {
            m->slots[i] = m->slots[j];
            m->slots[j].used = false;
            i = j;
        }
    }
}

void mkrt__launch_cache_insert(const mkrt__launch_key *k, const mkrt_launch_recommendation *rec)
{
    memo *m = get_memo(true);
    if (m == NULL)
        return;
    uint64_t h = key_hash(k);
    uint64_t now = tick(m);
    slot *s = find(m, k, h);
    if (!s->used) {
        s->used = true;
        s->hash = h;
        s->key = *k;
        m->entries++;
    }
    s->rec = *rec;
    s->last_seen = now;
    while (m->entries > MKRT_LAUNCH_CACHE_CAPACITY) {
        size_t victim = SLOTS;
        for (size_t i = 0; i < SLOTS; i++) {
            const slot *c = &m->slots[i];
            if (c->used && !(c->hash == h && memcmp(&c->key, k, sizeof *k) == 0) &&
                (victim == SLOTS || c->last_seen < m->slots[victim].last_seen))
                victim = i;
        }
        remove_at(m, victim);
    }
}

mkrt_launch_cache_stats mkrt_launch_cache_stats_read(void)
{
    memo *m = get_memo(false);
    mkrt_launch_cache_stats st = {0, 0, 0};
    if (m != NULL)
        st = (mkrt_launch_cache_stats){m->entries, m->hits, m->misses};
    return st;
}

void mkrt_launch_cache_reset(void)
{
    memo *m = get_memo(false);
    if (m != NULL)
        memset(m, 0, sizeof *m);
}
