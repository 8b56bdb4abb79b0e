/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/plan_cache_evict.c - the plan cache's removals (see
 * mkrt/plan_cache.h): CLOCK eviction, retirement of unlinked nodes through
 * RCU in batches, invalidation by device, policy or key, and teardown. The
 * table, the read side and inserts are in plan_cache.c; the layouts in
 * plan_cache_internal.h.
 */
#include <string.h>

#include "plan/plan_cache_internal.h"

/* Frees a chain of retired nodes linked through retire_next. */
static void free_plan_chain(struct rcu_head *head)
{
    mkrt__rcu_tsan_acquire();
    plan_node *n = caa_container_of(head, plan_node, rcu);
    while (n != NULL) {
        plan_node *next = n->retire_next;
        size_t bytes = n->bytes;
        memset(n, 0x5A, bytes);
        mkrt__free(n, bytes);
        n = next;
    }
}

static void free_identity_node(struct rcu_head *head)
{
    mkrt__rcu_tsan_acquire();
    identity_node *n = caa_container_of(head, identity_node, rcu);
    mkrt__free(n, sizeof *n);
}

/* ---- writer side (c->writer held, inside a read-side section) -------- */

#define RETIRE_BATCH 32

/* Hands the pending retirement batch to call_rcu (writer mutex held). */
static void flush_retired(mkrt_plan_cache *c)
{
    if (c->retire_head == NULL)
        return;
    mkrt__rcu_call(&c->retire_head->rcu, free_plan_chain);
    c->retire_head = NULL;
    c->retire_count = 0;
}

static void retire(mkrt_plan_cache *c, plan_node *n)
{
    n->retire_next = c->retire_head;
    c->retire_head = n;
    if (++c->retire_count >= RETIRE_BATCH)
        flush_retired(c);
}

/* Unlinks n from ht and the ring and retires it. */
static void remove_node(mkrt_plan_cache *c, plan_node *n)
{
    if (cds_lfht_del(c->ht, &n->lfht) != 0)
        return; /* already gone (cannot happen under the writer mutex) */
    c->ring[n->ring_index] = NULL;
    c->free_slots[c->free_top++] = n->ring_index;
    /* relaxed: writer-mutex-protected totals, snapshotted by stats. */
    atomic_store_explicit(&c->entries, atomic_load_explicit(&c->entries, memory_order_relaxed) - 1,
                          memory_order_relaxed);
    atomic_store_explicit(&c->bytes, atomic_load_explicit(&c->bytes, memory_order_relaxed) - n->bytes,
                          memory_order_relaxed);
    identity_node *id = atomic_load(&n->identity);
    if (id != NULL) {
        id->live--;
        /* relaxed: writer-only re-read of our own store. */
        uint64_t latest = atomic_load_explicit(&id->latest, memory_order_relaxed);
        if (latest >> 8 == n->serial) {
            /* The identity's latest plan leaves: fall back to its newest
             * remaining entry (O(ring); evictions are misses anyway). */
            plan_node *best = NULL;
            for (size_t i = 0; i < c->max_entries && id->live > 0; i++) {
                plan_node *m = c->ring[i];
                if (m != NULL && m->identity == id && (best == NULL || m->serial > best->serial))
                    best = m;
            }
            if (best != NULL)
                identity_set(id, best->serial, best->plan.decision.topology);
            else
                atomic_store_explicit(&id->latest, 0, memory_order_release);
        }
        if (id->live == 0 && cds_lfht_del(c->ids, &id->lfht) == 0)
            mkrt__rcu_call(&id->rcu, free_identity_node);
    }
    retire(c, n);
}

void mkrt__plan_cache_evict_one(mkrt_plan_cache *c)
{
    for (;;) {
        plan_node *n = c->ring[c->hand];
        c->hand = c->hand + 1 == c->max_entries ? 0 : c->hand + 1;
        if (n == NULL)
            continue;
        /* relaxed: a usage hint; a lost update only changes who is evicted. */
        if (atomic_load_explicit(&n->referenced, memory_order_relaxed)) {
            atomic_store_explicit(&n->referenced, 0, memory_order_relaxed);
            continue;
        }
        remove_node(c, n);
        atomic_store_explicit(&c->evictions,
                              atomic_load_explicit(&c->evictions, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        return;
    }
}

identity_node *mkrt__plan_cache_identity_get_or_add(mkrt_plan_cache *c,
                                                    const mkrt_plan_identity *id, uint64_t h)
{
    struct cds_lfht_iter it;
    cds_lfht_lookup(c->ids, h, match_identity, id, &it);
    struct cds_lfht_node *found = cds_lfht_iter_get_node(&it);
    if (found != NULL)
        return caa_container_of(found, identity_node, lfht);
    identity_node *n = mkrt__alloc_zeroed(sizeof *n, alignof(identity_node));
    if (n == NULL)
        return NULL; /* hysteresis is lost for this identity, nothing else */
    n->id = *id;
    n->hash = h;
    cds_lfht_node_init(&n->lfht);
    /* release: pairs with the acquire load in match_identity. */
    atomic_store_explicit(&n->published, 1, memory_order_release);
    cds_lfht_add(c->ids, h, &n->lfht); /* writer mutex held: no duplicate */
    return n;
}

/* ---- invalidation and teardown ---------------------------------------- */

typedef bool (*node_pred)(const plan_node *n, const void *arg);

static size_t remove_where(mkrt_plan_cache *c, node_pred pred, const void *arg)
{
    size_t removed = 0;
    mkrt__rcu_read_lock();
    mkrt__mutex_lock(&c->writer);
    for (size_t i = 0; i < c->max_entries; i++) {
        plan_node *n = c->ring[i];
        if (n != NULL && pred(n, arg)) {
            remove_node(c, n);
            removed++;
        }
    }
    atomic_store_explicit(&c->invalidations,
                          atomic_load_explicit(&c->invalidations, memory_order_relaxed) + removed,
                          memory_order_relaxed);
    flush_retired(c); /* bulk removals free their memory without waiting for more */
    mkrt__mutex_unlock(&c->writer);
    mkrt__rcu_read_unlock();
    return removed;
}

static bool same_device(const plan_node *n, const void *arg)
{
    const mkrt_device_key *d = arg;
    mkrt_plan_key a = {0}, b = {0};
    a.device = n->plan.key.device;
    b.device = *d;
    return mkrt_plan_key_equal(&a, &b);
}

static bool older_policy(const plan_node *n, const void *arg)
{
    return n->plan.key.policy_fingerprint < *(const uint64_t *)arg;
}

static bool any_node(const plan_node *n, const void *arg)
{
    (void)n;
    (void)arg;
    return true;
}

size_t mkrt_plan_cache_invalidate_device(mkrt_plan_cache *c, const mkrt_device_key *device)
{
    if (c == NULL || device == NULL)
        return 0;
    return remove_where(c, same_device, device);
}

size_t mkrt_plan_cache_invalidate_policy_before(mkrt_plan_cache *c, uint64_t current)
{
    if (c == NULL)
        return 0;
    return remove_where(c, older_policy, &current);
}

size_t mkrt_plan_cache_remove(mkrt_plan_cache *c, const mkrt_plan_key *key)
{
    size_t removed = 0;
    if (c == NULL || key == NULL)
        return 0;
    mkrt__rcu_read_lock();
    mkrt__mutex_lock(&c->writer);
    plan_node *n = lookup(c, key, key->hash);
    if (n != NULL) {
        remove_node(c, n);
        removed = 1;
        atomic_store_explicit(&c->invalidations,
                              atomic_load_explicit(&c->invalidations, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    }
    mkrt__mutex_unlock(&c->writer);
    mkrt__rcu_read_unlock();
    return removed;
}

size_t mkrt_plan_cache_clear(mkrt_plan_cache *c)
{
    if (c == NULL)
        return 0;
    return remove_where(c, any_node, NULL);
}

void mkrt_plan_cache_destroy(mkrt_plan_cache *c)
{
    if (c == NULL)
        return;
    mkrt_plan_cache_clear(c);
    /* Identity nodes left without entries were removed with them; any
     * others (allocation races) go now. */
    mkrt__rcu_read_lock();
    struct cds_lfht_iter it;
    struct cds_lfht_node *node;
    cds_lfht_for_each(c->ids, &it, node) {
        if (cds_lfht_del(c->ids, node) == 0)
            mkrt__rcu_call(&caa_container_of(node, identity_node, lfht)->rcu, free_identity_node);
    }
    mkrt__rcu_read_unlock();
    urcu_memb_barrier(); /* every retired node is freed before we go on */
    cds_lfht_destroy(c->ht, NULL);
    cds_lfht_destroy(c->ids, NULL);
    mkrt__mutex_destroy(&c->writer);
    size_t slots = c->max_entries ? c->max_entries : 1;
    mkrt__free(c->ring, slots * sizeof *c->ring);
    mkrt__free(c->free_slots, slots * sizeof *c->free_slots);
    mkrt__free(c, sizeof *c);
}
