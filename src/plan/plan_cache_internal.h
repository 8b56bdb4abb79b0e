/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/plan_cache_internal.h - helpers shared by the plan cache files, and
 * test hooks. The cache is two files: plan_cache.c (the table, its
 * lifecycle, the read side and inserts) and plan_cache_evict.c (the writer
 * side's removals: CLOCK eviction, retirement through RCU, invalidation and
 * teardown). Both see the node and cache layouts below. */
#ifndef MKRT_SRC_PLAN_CACHE_INTERNAL_H
#define MKRT_SRC_PLAN_CACHE_INTERNAL_H

#include <stdatomic.h>
#include <stdalign.h>

#include "mkrt/plan_cache.h"
#include "base/alloc_internal.h"
#include "base/rcu.h"
#include "base/thread.h"
#include <urcu/rculfhash.h>

uint64_t mkrt__plan_key_hash(const mkrt_plan_key *k);
uint64_t mkrt__plan_identity_hash(const mkrt_plan_identity *id);
bool mkrt__plan_identity_equal(const mkrt_plan_identity *a, const mkrt_plan_identity *b);
mkrt_plan_identity mkrt__plan_identity_of(const mkrt_plan_key *k);

#ifdef MKRT_TEST_HOOKS
/* Test hook: sets the calling thread's hit counter (to check pinning). */
void mkrt__plan_cache_force_hits(mkrt_plan_cache *c, uint64_t value);
#endif

/* ---- the cache's layout (plan_cache.c's header comment) --------------- */

typedef struct identity_node {
    struct cds_lfht_node lfht;
    struct rcu_head rcu;
    mkrt_plan_identity id;
    uint64_t hash;
    /* (serial << 8) | (topology + 1); 0 = none. Stored under the writer
     * mutex, read by missing threads. */
    _Atomic uint64_t latest;
    size_t live; /* entries of this identity in the ring; writer-only */
    _Atomic uint8_t published; /* as plan_node.published */
} identity_node;

typedef struct plan_node {
    struct cds_lfht_node lfht;
    struct rcu_head rcu;
    mkrt_plan plan;              /* immutable once published */
    /* Set (release) once the node is fully built, read (acquire) by every
     * reader before it looks at `plan`: the publication edge in terms that
     * ThreadSanitizer sees (liburcu's own is uninstrumented). */
    _Atomic uint8_t published;
    _Atomic uint8_t referenced;  /* CLOCK second-chance bit */
    uint64_t hash;
    size_t bytes;                /* the whole allocation */
    size_t ring_index;           /* writer-only */
    /* Written by the writer (seq_cst, serial first) once the node is in
     * the table; read lock-free by hits (identity_note_hit). */
    _Atomic uint64_t serial;             /* insert order */
    identity_node *_Atomic identity;
    struct plan_node *retire_next; /* retirement batch chain; writer-only */
    size_t tail[];               /* group offsets then group waves */
} plan_node;

typedef struct stripe {
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t hits;
    _Atomic uint64_t misses;
    _Atomic uint64_t races;
} stripe;

struct mkrt_plan_cache {
    struct cds_lfht *ht;
    struct cds_lfht *ids;
    size_t max_entries, max_bytes;
    mkrt__mutex writer;
    plan_node **ring;
    size_t *free_slots;
    size_t free_top, hand;
    uint64_t serial;
    /* Unlinked nodes waiting to be handed to call_rcu as one batch: one
     * grace-period callback per RETIRE_BATCH removals instead of one per
     * removal (each call_rcu may wake liburcu's worker thread, which then
     * competes with the readers for the CPUs). */
    plan_node *retire_head;
    size_t retire_count;
    /* Written under `writer`, read by stats readers (relaxed snapshots). */
    _Atomic uint64_t entries, bytes, evictions, invalidations;
    stripe stripes[MKRT_THREAD_SLOTS + 1]; /* the last one is shared (RMW) */
};

/* ---- shared by both files --------------------------------------------- */

/* Match callbacks run inside liburcu's lookup on nodes other threads
 * published; each reads the node's publication word first (acquire, pairs
 * with the release store made before the node was added). */
static inline int match_plan(struct cds_lfht_node *n, const void *key)
{
    plan_node *p = caa_container_of(n, plan_node, lfht);
    (void)atomic_load_explicit(&p->published, memory_order_acquire);
    return mkrt_plan_key_equal(&p->plan.key, key);
}

static inline int match_identity(struct cds_lfht_node *n, const void *key)
{
    identity_node *p = caa_container_of(n, identity_node, lfht);
    (void)atomic_load_explicit(&p->published, memory_order_acquire);
    return mkrt__plan_identity_equal(&p->id, key);
}

static inline void identity_set(identity_node *id, uint64_t serial, mkrt_wave_topology t)
{
    /* release: pairs with the acquire load in identity_previous. */
    atomic_store_explicit(&id->latest, serial << 8 | ((uint64_t)t + 1), memory_order_release);
}

static inline plan_node *lookup(mkrt_plan_cache *c, const mkrt_plan_key *key, uint64_t h)
{
    struct cds_lfht_iter it;
    cds_lfht_lookup(c->ht, h, match_plan, key, &it);
    struct cds_lfht_node *found = cds_lfht_iter_get_node(&it);
    if (found == NULL)
        return NULL;
    plan_node *n = caa_container_of(found, plan_node, lfht);
    /* acquire: pairs with the release store of `published` before add_unique. */
    (void)atomic_load_explicit(&n->published, memory_order_acquire);
    return n;
}

/* plan_cache_evict.c, called with c->writer held inside a read-side
 * section: evicts one entry (CLOCK), and finds or adds the identity node
 * of `id` (NULL when out of memory: hysteresis is lost, nothing else). */
void mkrt__plan_cache_evict_one(mkrt_plan_cache *c);
identity_node *mkrt__plan_cache_identity_get_or_add(mkrt_plan_cache *c,
                                                    const mkrt_plan_identity *id, uint64_t h);

#endif
