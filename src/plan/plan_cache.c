/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/plan_cache.c - the RCU-protected plan cache (see mkrt/plan_cache.h):
 * the table, its lifecycle, the read side and inserts; removals are in
 * plan_cache_evict.c, the layouts in plan_cache_internal.h.
 *
 * Structure:
 *   ht        liburcu rculfhash of plan nodes, keyed by mkrt_plan_key;
 *   ids       rculfhash of identity nodes: the topology most recently
 *             planned per (layout hash, analysis, device, policy), the
 *             "previous" for hysteresis;
 *   ring      CLOCK ring of node pointers (max_entries slots), with a stack
 *             of free slot indices; writer-only;
 *   stripes   per-thread-slot hit/miss/race counters, one cache line each.
 * Readers touch ht (lookup), the node, and their own stripe. Everything
 * else happens under `writer`, a mutex readers never take.
 */
#include <string.h>

#include "base/error_internal.h"
#include "plan/plan_cache_internal.h"

/* ---- keys ------------------------------------------------------------ */

static inline uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h * 0xBF58476D1CE4E5B9ull;
}


uint64_t mkrt_plan_checksum(const mkrt_plan *p)
{
    if (p == NULL)
        return 0;
    uint64_t h = p->key.hash;
    h = mix(h, (uint64_t)p->decision.topology << 32 | p->decision.memory_pressure_bps);
    h = mix(h, p->decision.average_degree_bps);
    h = mix(h, p->decision.launch_pressure_bps);
    const uint64_t mem[] = {p->memory.graph_bytes,    p->memory.frontier_bytes,
                            p->memory.scratch_bytes,  p->memory.output_bytes,
                            p->memory.required_bytes, p->memory.budget_bytes,
                            p->memory.memory_pressure_bps};
    for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++)
        h = mix(h, mem[i]);
    h = mix(h, (uint64_t)p->geometry.workgroup_size_x << 32 | p->geometry.slot_count);
    h = mix(h, (uint64_t)p->geometry.dispatch_grid[0] << 32 | p->worker_groups);
    h = mix(h, p->group_count);
    if (p->group_count > 0 && p->group_offsets != NULL) {
        for (size_t g = 0; g <= p->group_count; g++)
            h = mix(h, p->group_offsets[g]);
        for (size_t k = 0; k < p->group_offsets[p->group_count]; k++)
            h = mix(h, p->group_waves[k]);
    }
    return h;
}

/* ---- counters -------------------------------------------------------- */

static void bump(mkrt_plan_cache *c, size_t field)
{
    int slot = mkrt__thread_slot();
    _Atomic uint64_t *ctr;
    stripe *s = &c->stripes[slot < 0 ? MKRT_THREAD_SLOTS : slot];
    ctr = field == 0 ? &s->hits : field == 1 ? &s->misses : &s->races;
    if (slot < 0) {
        /* Shared stripe: RMW; saturating is best effort under contention. */
        if (atomic_load_explicit(ctr, memory_order_relaxed) != UINT64_MAX)
            atomic_fetch_add_explicit(ctr, 1, memory_order_relaxed);
        return;
    }
    /* relaxed: a statistics counter with one writer (this slot's thread);
     * readers sum snapshots. */
    uint64_t v = atomic_load_explicit(ctr, memory_order_relaxed);
    if (v != UINT64_MAX)
        atomic_store_explicit(ctr, v + 1, memory_order_relaxed);
}

#ifdef MKRT_TEST_HOOKS
void mkrt__plan_cache_force_hits(mkrt_plan_cache *c, uint64_t value)
{
    mkrt__rcu_thread_enter();
    int slot = mkrt__thread_slot();
    /* relaxed: test hook on this thread's own counter. */
    atomic_store_explicit(&c->stripes[slot < 0 ? MKRT_THREAD_SLOTS : slot].hits, value,
                          memory_order_relaxed);
}
#endif

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

void mkrt_plan_cache_stats_read(mkrt_plan_cache *c, mkrt_plan_cache_stats *out)
{
    mkrt_plan_cache_stats s = {0};
    if (out == NULL)
        return;
    if (c == NULL) {
        *out = s;
        return;
    }
    for (size_t i = 0; i <= MKRT_THREAD_SLOTS; i++) {
        /* relaxed: independent counters, a snapshot is all that is promised. */
        s.hits = sat_add(s.hits, atomic_load_explicit(&c->stripes[i].hits, memory_order_relaxed));
        s.misses = sat_add(s.misses, atomic_load_explicit(&c->stripes[i].misses, memory_order_relaxed));
        s.insert_races = sat_add(s.insert_races, atomic_load_explicit(&c->stripes[i].races, memory_order_relaxed));
    }
    /* relaxed: written under the writer mutex; a snapshot suffices. */
    s.evictions = atomic_load_explicit(&c->evictions, memory_order_relaxed);
    s.invalidations = atomic_load_explicit(&c->invalidations, memory_order_relaxed);
    s.entries = atomic_load_explicit(&c->entries, memory_order_relaxed);
    s.bytes = atomic_load_explicit(&c->bytes, memory_order_relaxed);
    *out = s;
}

/* ---- lifecycle ------------------------------------------------------- */

mkrt_plan_cache_config mkrt_plan_cache_config_default(void)
{
    return (mkrt_plan_cache_config){MKRT_PLAN_CACHE_DEFAULT_ENTRIES, 0};
}

static size_t node_bytes(size_t group_count, size_t waves)
{
    size_t tail = 0;
    if (group_count > 0 && !mkrt__add_size(group_count + 1, waves, &tail))
        return SIZE_MAX;
    if (tail > (SIZE_MAX - sizeof(plan_node)) / sizeof(size_t))
        return SIZE_MAX;
    return sizeof(plan_node) + tail * sizeof(size_t);
}

mkrt_status mkrt_plan_cache_create(const mkrt_plan_cache_config *cfg, mkrt_plan_cache **out,
                                   mkrt_error *err)
{
    mkrt_plan_cache_config d = mkrt_plan_cache_config_default();
    if (cfg == NULL)
        cfg = &d;
    if (out == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_plan_cache_create got a NULL result pointer. Fix: pass the "
                               "address of an mkrt_plan_cache pointer.");
    *out = NULL;
    if (cfg->max_entries > MKRT_PLAN_CACHE_MAX_ENTRIES)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "plan cache capacity of %zu entries exceeds the limit of %zu. Fix: "
                               "use at most %zu entries (a plan cache that large is a leak).",
                               cfg->max_entries, MKRT_PLAN_CACHE_MAX_ENTRIES,
                               MKRT_PLAN_CACHE_MAX_ENTRIES);
    if (cfg->max_bytes != 0 && cfg->max_bytes < node_bytes(0, 0))
        return mkrt__error_set(err, MKRT_EINVAL,
                               "plan cache byte capacity of %zu is below one plan (%zu bytes). "
                               "Fix: use 0 for no byte bound or at least %zu bytes.",
                               cfg->max_bytes, node_bytes(0, 0), node_bytes(0, 0));
    mkrt_plan_cache *c = mkrt__alloc_zeroed(sizeof *c, alignof(mkrt_plan_cache));
    size_t slots = cfg->max_entries ? cfg->max_entries : 1;
    if (c != NULL) {
        c->ring = mkrt__alloc_zeroed(slots * sizeof *c->ring, alignof(plan_node *));
        c->free_slots = mkrt__alloc(slots * sizeof *c->free_slots, alignof(size_t));
    }
    mkrt__rcu_thread_enter();
    if (c != NULL && c->ring != NULL && c->free_slots != NULL) {
        unsigned long init = 64;
        while (init < cfg->max_entries && init < (1ul << 20))
            init *= 2;
        c->ht = cds_lfht_new_flavor(init, 64, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
                                    &urcu_memb_flavor, NULL);
        c->ids = cds_lfht_new_flavor(64, 64, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
                                     &urcu_memb_flavor, NULL);
    }
    bool locked = c != NULL && c->ht != NULL && c->ids != NULL && mkrt__mutex_init(&c->writer) == 0;
    if (!locked) {
        if (c != NULL) {
            if (c->ht)
                cds_lfht_destroy(c->ht, NULL);
            if (c->ids)
                cds_lfht_destroy(c->ids, NULL);
            mkrt__free(c->ring, slots * sizeof *c->ring);
            mkrt__free(c->free_slots, slots * sizeof *c->free_slots);
            mkrt__free(c, sizeof *c);
        }
        return mkrt__error_set(err, MKRT_ENOMEM,
                               "plan cache allocation failed for %zu entries. Fix: use a smaller "
                               "max_entries or free memory.",
                               cfg->max_entries);
    }
    c->max_entries = cfg->max_entries;
    c->max_bytes = cfg->max_bytes;
    for (size_t i = 0; i < cfg->max_entries; i++)
        c->free_slots[i] = cfg->max_entries - 1 - i;
    c->free_top = cfg->max_entries;
    *out = c;
    return MKRT_OK;
}

static void free_plan_node(struct rcu_head *head)
{
    mkrt__rcu_tsan_acquire();
    plan_node *n = caa_container_of(head, plan_node, rcu);
    size_t bytes = n->bytes;
    /* Poison: a reader that kept a pointer past its read-side section sees
     * garbage (and a checksum mismatch), not a plausible stale plan. */
    memset(n, 0x5A, bytes);
    mkrt__free(n, bytes);
}

/* ---- read side ------------------------------------------------------- */
/* A hit is its identity's most recent use: the hysteresis of the next miss
 * compares against this plan's topology (as the reference updates its
 * identity map on hits). Lock-free; a CAS only when the topology changes,
 * so a hot identity's line stays shared among readers. */
static void identity_note_hit(plan_node *n)
{
    /* acquire: pairs with the writer's (seq_cst) store of identity, after
     * its store of serial; the identity node is freed through RCU only. */
    identity_node *id = atomic_load_explicit(&n->identity, memory_order_acquire);
    if (id == NULL)
        return;
    const uint64_t topo = (uint64_t)n->plan.decision.topology + 1;
    /* relaxed: the CAS below re-checks it. */
    uint64_t latest = atomic_load_explicit(&id->latest, memory_order_relaxed);
    while ((latest & 0xFF) != topo) {
        uint64_t want = atomic_load_explicit(&n->serial, memory_order_relaxed) << 8 | topo;
        /* release: pairs with the acquire load in identity_previous. */
        if (atomic_compare_exchange_weak_explicit(&id->latest, &latest, want, memory_order_release,
                                                  memory_order_relaxed))
            break;
    }
}

static void touch(plan_node *n)
{
    /* relaxed: second-chance hint; write only when clear, so a hot entry's
     * line stays shared among readers. */
    if (!atomic_load_explicit(&n->referenced, memory_order_relaxed))
        atomic_store_explicit(&n->referenced, 1, memory_order_relaxed);
    identity_note_hit(n);
}

/* Read-side sections the caller holds through the public lock, so that an
 * unbalanced unlock cannot corrupt liburcu's per-thread nesting count. */
static _Thread_local unsigned long public_read_depth;

void mkrt_plan_cache_read_lock(void)
{
    mkrt__rcu_read_lock();
    public_read_depth++;
}

void mkrt_plan_cache_read_unlock(void)
{
    if (public_read_depth == 0)
        return; /* no matching read_lock: ignored (plan_cache.h) */
    public_read_depth--;
    mkrt__rcu_read_unlock();
}

const mkrt_plan *mkrt_plan_cache_find(mkrt_plan_cache *c, const mkrt_plan_key *key)
{
    if (c == NULL || key == NULL)
        return NULL;
    mkrt__rcu_thread_enter();
    plan_node *n = lookup(c, key, key->hash);
    if (n == NULL) {
        bump(c, 1);
        return NULL;
    }
    touch(n);
    bump(c, 0);
    return &n->plan;
}

static mkrt_wave_topology identity_previous(mkrt_plan_cache *c, const mkrt_plan_key *key)
{
    mkrt_plan_identity id = mkrt__plan_identity_of(key);
    struct cds_lfht_iter it;
    cds_lfht_lookup(c->ids, mkrt__plan_identity_hash(&id), match_identity, &id, &it);
    struct cds_lfht_node *found = cds_lfht_iter_get_node(&it);
    if (found == NULL)
        return MKRT_WAVE_NONE;
    identity_node *n = caa_container_of(found, identity_node, lfht);
    /* acquire: pairs with the release store in identity_set. */
    uint64_t latest = atomic_load_explicit(&n->latest, memory_order_acquire);
    return latest == 0 ? MKRT_WAVE_NONE : (mkrt_wave_topology)((latest & 0xFF) - 1);
}

/* Copies a built plan into one allocation: header + group arrays. */
static mkrt_status make_node(const mkrt_plan *built, const mkrt_plan_key *key, plan_node **node,
                             mkrt_error *err)
{
    size_t waves = built->group_count ? built->group_offsets[built->group_count] : 0;
    if (built->group_count > 0 && waves > 0 && built->group_waves == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "plan builder returned %zu barrier groups over %zu waves without a "
                               "wave array. Fix: set group_waves (kept in ctx) or group_count to 0.",
                               built->group_count, waves);
    size_t bytes = node_bytes(built->group_count, waves);
    plan_node *n = bytes == SIZE_MAX ? NULL : mkrt__alloc(bytes, alignof(plan_node));
    if (n == NULL)
        return mkrt__error_set(err, MKRT_ENOMEM,
                               "plan cache could not allocate a plan of %zu barrier groups (%zu "
                               "bytes). Fix: shard the batch or free memory.",
                               built->group_count, bytes);
    memset(n, 0, sizeof *n);
    n->plan = *built;
    n->plan.key = *key;
    n->bytes = bytes;
    if (built->group_count > 0) {
        memcpy(n->tail, built->group_offsets, (built->group_count + 1) * sizeof(size_t));
        memcpy(n->tail + built->group_count + 1, built->group_waves, waves * sizeof(size_t));
        n->plan.group_offsets = n->tail;
        n->plan.group_waves = n->tail + built->group_count + 1;
    } else {
        n->plan.group_offsets = NULL;
        n->plan.group_waves = NULL;
    }
    n->plan.checksum = mkrt_plan_checksum(&n->plan);
    n->hash = key->hash;
    cds_lfht_node_init(&n->lfht);
    /* release: pairs with the acquire load in lookup(). */
    atomic_store_explicit(&n->published, 1, memory_order_release);
    *node = n;
    return MKRT_OK;
}

mkrt_status mkrt_plan_cache_get_or_plan(mkrt_plan_cache *c, const mkrt_plan_key *key,
                                        mkrt_plan_build_fn build, void *ctx,
                                        const mkrt_plan **out, mkrt_error *err)
{
    if (c == NULL || key == NULL || build == NULL || out == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_plan_cache_get_or_plan got a NULL cache, key, builder or "
                               "result pointer. Fix: pass valid pointers.");
    mkrt__rcu_thread_enter();
    uint64_t h = key->hash;
    plan_node *n = lookup(c, key, h);
    if (n != NULL) {
        touch(n);
        bump(c, 0);
        *out = &n->plan;
        return MKRT_OK;
    }
    bump(c, 1);
    mkrt_plan built;
    memset(&built, 0, sizeof built);
    built.key = *key;
    mkrt_status st = build(ctx, key, identity_previous(c, key), &built, err);
    if (st != MKRT_OK)
        return st;
    if (built.group_count > 0 && built.group_offsets == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "plan builder returned %zu barrier groups without group offsets. "
                               "Fix: set group_offsets (kept in ctx) or group_count to 0.",
                               built.group_count);
    if (built.group_count >= (SIZE_MAX - sizeof(plan_node)) / sizeof(size_t))
        return mkrt__error_set(err, MKRT_EOVERFLOW,
                               "plan builder returned %zu barrier groups, more than a plan can "
                               "hold. Fix: shard the batch.",
                               built.group_count);
    if ((st = make_node(&built, key, &n, err)) != MKRT_OK)
        return st;
    if (c->max_entries == 0 || (c->max_bytes != 0 && n->bytes > c->max_bytes)) {
        /* Not cacheable: hand it out and retire it at once; the caller's
         * read-side section keeps it alive until read_unlock. */
        *out = &n->plan;
        mkrt__rcu_call(&n->rcu, free_plan_node);
        return MKRT_OK;
    }
    mkrt__mutex_lock(&c->writer);
    struct cds_lfht_node *kept = cds_lfht_add_unique(c->ht, h, match_plan, key, &n->lfht);
    if (kept != &n->lfht) {
        mkrt__mutex_unlock(&c->writer);
        mkrt__free(n, n->bytes); /* never visible to anyone */
        plan_node *winner = caa_container_of(kept, plan_node, lfht);
        /* acquire: pairs with the winner's release of `published`. */
        (void)atomic_load_explicit(&winner->published, memory_order_acquire);
        bump(c, 2);
        touch(winner);
        *out = &winner->plan;
        return MKRT_OK;
    }
    /* relaxed: totals under the writer mutex. */
    while (atomic_load_explicit(&c->entries, memory_order_relaxed) >= c->max_entries ||
           (c->max_bytes != 0 &&
            atomic_load_explicit(&c->bytes, memory_order_relaxed) + n->bytes > c->max_bytes)) {
        if (atomic_load_explicit(&c->entries, memory_order_relaxed) == 0)
            break;
        mkrt__plan_cache_evict_one(c);
    }
    n->ring_index = c->free_slots[--c->free_top];
    c->ring[n->ring_index] = n;
    n->serial = ++c->serial;
    atomic_store_explicit(&c->entries, atomic_load_explicit(&c->entries, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    atomic_store_explicit(&c->bytes, atomic_load_explicit(&c->bytes, memory_order_relaxed) + n->bytes,
                          memory_order_relaxed);
    mkrt_plan_identity id = mkrt__plan_identity_of(key);
    identity_node *idn =
        mkrt__plan_cache_identity_get_or_add(c, &id, mkrt__plan_identity_hash(&id));
    if (idn != NULL) {
        idn->live++;
        identity_set(idn, n->serial, n->plan.decision.topology);
        atomic_store(&n->identity, idn); /* after serial: see identity_note_hit */
    }
    mkrt__mutex_unlock(&c->writer);
    *out = &n->plan;
    return MKRT_OK;
}

mkrt_status mkrt_plan_cache_get_or_plan_copy(mkrt_plan_cache *c, const mkrt_plan_key *key,
                                             mkrt_plan_build_fn build, void *ctx, mkrt_plan *out,
                                             mkrt_error *err)
{
    if (out == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_plan_cache_get_or_plan_copy got a NULL result pointer. Fix: "
                               "pass where to copy the plan.");
    mkrt__rcu_read_lock();
    const mkrt_plan *p;
    mkrt_status st = mkrt_plan_cache_get_or_plan(c, key, build, ctx, &p, err);
    if (st == MKRT_OK) {
        *out = *p;
        out->group_offsets = NULL;
        out->group_waves = NULL;
    }
    mkrt__rcu_read_unlock();
    return st;
}
