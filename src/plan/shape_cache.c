/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/shape_cache.c - the data path's plan cache (plan/shape_cache.h)
 * over the RCU plan cache (plan_cache.c). A value is three small numbers
 * carried in the plan's launch geometry (workgroup_size_x: arms,
 * slot_count: split, dispatch_grid[0]: layers); the key's identity holds
 * the shape (graph_layout_hash: the op signature; custom_tag: the buckets
 * and the policy) under MKRT_ANALYSIS_CUSTOM and the CPU's device key. */
#include <string.h>

#include "base/error_internal.h"
#include "base/rcu.h"
#include "plan/shape_cache.h"

static mkrt_plan_key key_of(const mkrt__shape *s)
{
    mkrt_plan_key k;
    memset(&k, 0, sizeof k);
    k.graph_layout_hash = s->ops;
    k.analysis_kind = MKRT_ANALYSIS_CUSTOM;
    k.custom_tag = (uint64_t)s->policy << 24 | (uint64_t)s->size << 16 | (uint64_t)s->arms << 8 | s->span;
    k.device = mkrt_device_key_cpu();
    mkrt_plan_key_rehash(&k);
    return k;
}

bool mkrt__shape_cache_init(mkrt__shape_cache *sc, size_t entries, mkrt_error *err)
{
    mkrt_plan_cache_config cfg = mkrt_plan_cache_config_default();
    cfg.max_entries = entries;
    atomic_init(&sc->hits, 0);
    atomic_init(&sc->misses, 0);
    atomic_init(&sc->replaced, 0);
    return mkrt_plan_cache_create(&cfg, &sc->cache, err) == MKRT_OK;
}

void mkrt__shape_cache_fini(mkrt__shape_cache *sc)
{
    mkrt_plan_cache_destroy(sc->cache);
    sc->cache = NULL;
}

bool mkrt__shape_cache_get(mkrt__shape_cache *sc, const mkrt__shape *s, mkrt__shape_plan *out)
{
    const mkrt_plan_key k = key_of(s);
    memset(out, 0, sizeof *out);
    mkrt__rcu_read_lock();
    const mkrt_plan *p = mkrt_plan_cache_find(sc->cache, &k);
    if (p != NULL) {
        out->arms = (uint8_t)p->geometry.workgroup_size_x;
        out->split = (uint8_t)p->geometry.slot_count;
        out->layers = (uint8_t)p->geometry.dispatch_grid[0];
    }
    mkrt__rcu_read_unlock();
    /* relaxed: counters, read as a snapshot by mkrt_stats. */
    atomic_fetch_add_explicit(p != NULL ? &sc->hits : &sc->misses, 1, memory_order_relaxed);
    return p != NULL;
}

static mkrt_status build(void *ctx, const mkrt_plan_key *key, mkrt_wave_topology previous, mkrt_plan *plan,
                         mkrt_error *err)
{
    (void)key;
    (void)previous;
    (void)err;
    const mkrt__shape_plan *v = ctx;
    plan->geometry.workgroup_size_x = v->arms;
    plan->geometry.slot_count = v->split;
    plan->geometry.dispatch_grid[0] = v->layers;
    plan->geometry.dispatch_grid[1] = plan->geometry.dispatch_grid[2] = 1;
    return MKRT_OK;
}

bool mkrt__shape_cache_put(mkrt__shape_cache *sc, const mkrt__shape *s, const mkrt__shape_plan *v)
{
    const mkrt_plan_key k = key_of(s);
    /* The entry it replaces leaves the table now and is freed after a
     * grace period (readers that found it keep it until then). */
    if (mkrt_plan_cache_remove(sc->cache, &k) > 0)
        atomic_fetch_add_explicit(&sc->replaced, 1, memory_order_relaxed); /* relaxed: a counter */
    const mkrt_plan *p;
    mkrt__rcu_read_lock();
    mkrt_status st = mkrt_plan_cache_get_or_plan(sc->cache, &k, build, (void *)v, &p, NULL);
    mkrt__rcu_read_unlock();
    return st == MKRT_OK;
}
