/* SPDX-License-Identifier: BSD-2-Clause */
/* src/graph/traversal.c - traversal objects: the cell lanes' (made at
 * registration) and the public BFS and SSSP traversals (mkrt/graph.h),
 * each with its own values and frontier, so several run at once. */
#include <stdio.h>

#include "base/error_internal.h"
#include "graph/graph_internal.h"
#include "graph/sweep.h"
#include "graph/traversal.h"

#define UNREACHED UINT64_MAX

mkrt__traversal *mkrt__traversal_new(mkrt__graph_engine *e, uint32_t lane, mkrt__lane_kind kind, bool own_values)
{
    mkrt__traversal *t = mkrt__alloc_zeroed(sizeof *t, MKRT_CACHE_LINE);
    if (t == NULL)
        return NULL;
    const size_t words = e->words;
    t->bits = mkrt__alloc_zeroed(MKRT__TRAV_WORD_ARRAYS * words * sizeof *t->bits, MKRT_CACHE_LINE);
    t->qcap = mkrt__queue_cap(words);
    t->queues = mkrt__alloc(2 * t->qcap * sizeof *t->queues, MKRT_CACHE_LINE);
    if (own_values)
        t->values = mkrt__alloc_large((size_t)e->graph.vertices * sizeof *t->values, MKRT_CACHE_LINE);
    else
        t->values = e->host.cells;
    if (t->bits == NULL || t->values == NULL || t->queues == NULL) {
        mkrt__free((void *)t->bits, MKRT__TRAV_WORD_ARRAYS * words * sizeof *t->bits);
        mkrt__free((void *)t->queues, 2 * t->qcap * sizeof *t->queues);
        if (own_values)
            mkrt__free(t->values, (size_t)e->graph.vertices * sizeof *t->values);
        mkrt__free(t, sizeof *t);
        return NULL;
    }
    t->engine = e;
    t->words = words;
    t->vertices = own_values ? e->graph.vertices : 0;
    t->lane = lane;
    t->kind = kind;
    t->w = t->bits;
    t->r = t->bits + words;
    t->visited = t->bits + 2 * words;
    t->far = t->bits + 3 * words;
    t->far_low = t->bits + 4 * words;
    t->hubs = t->bits + 5 * words;
    for (size_t i = 0; i < words; i++)
        atomic_init(&t->far_low[i], UINT64_MAX); /* no far vertex yet */
    t->wq = t->queues;
    t->rq = t->queues + t->qcap;
    for (size_t i = 0; i < 2 * t->qcap; i++)
        atomic_init(&t->queues[i], MKRT__QUEUE_EMPTY);
    atomic_init(&t->far_min, UINT64_MAX);
    atomic_init(&t->next_min, UINT64_MAX);
    if (own_values)
        for (uint32_t v = 0; v < e->graph.vertices; v++)
            t->values[v] = UNREACHED;
    return t;
}

void mkrt__traversal_free(mkrt__traversal *t)
{
    if (t == NULL)
        return;
    const mkrt__graph_engine *e = t->engine;
    mkrt__sweep_free(t);
    mkrt__free((void *)t->bits, MKRT__TRAV_WORD_ARRAYS * t->words * sizeof *t->bits);
    mkrt__free((void *)t->queues, 2 * t->qcap * sizeof *t->queues);
    if (t->values != e->host.cells)
        mkrt__free(t->values, (size_t)t->vertices * sizeof *t->values);
    mkrt__free(t, sizeof *t);
}

mkrt_status mkrt__traversal_open(mkrt__graph_engine *e, const mkrt_traversal_desc *d, mkrt_traversal **out,
                                 mkrt_error *err)
{
    if (d->kind < MKRT_TRAVERSAL_BFS || d->kind > MKRT_TRAVERSAL_PAGERANK)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_traversal_open: kind %d is not a traversal. Fix: MKRT_TRAVERSAL_BFS, "
                               "_SSSP, _CC or _PAGERANK.",
                               (int)d->kind);
    if (e == NULL || e->graph.vertices == 0)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_traversal_open: no graph is registered. Fix: call "
                               "mkrt_graph_register first.");
    static const mkrt__lane_kind kinds[] = {MKRT__LANE_BFS, MKRT__LANE_SSSP, MKRT__LANE_CC, MKRT__LANE_PR};
    const mkrt__lane_kind kind = kinds[d->kind - MKRT_TRAVERSAL_BFS];
    mkrt__mutex_lock(&e->lock);
    uint32_t n = atomic_load_explicit(&e->nlanes, memory_order_relaxed), lane = n;
    /* A closed traversal is reused (its memory stays until destroy, so a
     * round that still names its lane never reads freed memory). */
    for (uint32_t l = MKRT__LANE_PUBLIC; l < n; l++) {
        mkrt__traversal *t = atomic_load_explicit(&e->lanes[l], memory_order_relaxed);
        if (t != NULL && !t->open) {
            lane = l;
            break;
        }
    }
    if (lane == MKRT__LANES) {
        mkrt__mutex_unlock(&e->lock);
        return mkrt__error_set(err, MKRT_EAGAIN,
                               "mkrt_traversal_open: all %u traversals of the runtime are open. Fix: "
                               "close one (mkrt_traversal_close) and open again.",
                               MKRT_TRAVERSALS_MAX);
    }
    mkrt__traversal *t = lane < n ? atomic_load_explicit(&e->lanes[lane], memory_order_relaxed)
                                  : mkrt__traversal_new(e, lane, kind, true);
    if (t == NULL) {
        mkrt__mutex_unlock(&e->lock);
        return mkrt__error_set(err, MKRT_ENOMEM,
                               "mkrt_traversal_open: no memory for a traversal of %u vertices (%zu "
                               "bytes). Fix: free memory.",
                               e->graph.vertices,
                               (size_t)e->graph.vertices * 8 + MKRT__TRAV_WORD_ARRAYS * e->words * sizeof(uint64_t) +
                                   2 * mkrt__queue_cap(e->words) * sizeof(uint32_t));
    }
    /* A reused traversal is finished (close needs it): the dispatcher does
     * not touch its fields now. */
    if (kind == MKRT__LANE_CC || kind == MKRT__LANE_PR) {
        mkrt_status st = mkrt__sweep_open(t, d, err);
        if (st != MKRT_OK) {
            if (lane == n) /* not published: nobody else knows it */
                mkrt__traversal_free(t);
            mkrt__mutex_unlock(&e->lock);
            return st;
        }
    }
    t->kind = kind;
    t->pulls = kind == MKRT__LANE_BFS && d->symmetric;
    t->buckets = kind == MKRT__LANE_SSSP && e->graph.weights != NULL;
    t->open = true;
    atomic_store_explicit(&t->levels_pushed, 0, memory_order_relaxed);
    atomic_store_explicit(&t->levels_pulled, 0, memory_order_relaxed);
    atomic_store_explicit(&t->edges, 0, memory_order_relaxed);
    atomic_store_explicit(&t->pulled_edges, 0, memory_order_relaxed);
    atomic_store_explicit(&t->status, (int32_t)MKRT_OK, memory_order_relaxed);
    t->root = UINT32_MAX;
    if (lane == n) {
        /* release (both): pair with the acquire loads of the dispatcher
         * (mkrt__lane_at, nlanes): it sees the whole object. */
        atomic_store_explicit(&e->lanes[lane], t, memory_order_release);
        atomic_store_explicit(&e->nlanes, n + 1, memory_order_release);
    }
    mkrt__mutex_unlock(&e->lock);
    *out = t;
    return MKRT_OK;
}

/* relaxed loads of started: only the owner's thread writes it. */
static bool running(const mkrt__traversal *t)
{
    return atomic_load_explicit((_Atomic uint64_t *)&t->finished, memory_order_acquire) !=
           atomic_load_explicit((_Atomic uint64_t *)&t->started, memory_order_relaxed);
}

mkrt_status mkrt__traversal_start(mkrt__traversal *t, uint32_t root, const mkrt_pagerank_params *pr,
                                  mkrt_error *err)
{
    mkrt__graph_engine *e = t->engine;
    const bool sweep = t->kind == MKRT__LANE_CC || t->kind == MKRT__LANE_PR;
    if (pr != NULL && t->kind != MKRT__LANE_PR)
        return mkrt__error_set(err, MKRT_ENOTSUP,
                               "mkrt_traversal_start_pagerank: the traversal is not a PageRank. Fix: "
                               "mkrt_traversal_start, or open one with MKRT_TRAVERSAL_PAGERANK.");
    if (pr != NULL && mkrt__sweep_check(pr, err) != MKRT_OK)
        return MKRT_EINVAL;
    if (sweep && root != 0)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_traversal_start: a %s traversal covers the whole graph and has no "
                               "root, but got root %u. Fix: start it with root 0.",
                               t->kind == MKRT__LANE_CC ? "CC" : "PageRank", root);
    if (root >= e->graph.vertices)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_traversal_start: root %u is not a vertex (the graph has %u). Fix: "
                               "a root below %u.",
                               root, e->graph.vertices, e->graph.vertices);
    if (running(t))
        return mkrt__error_set(err, MKRT_ESTATE,
                               "mkrt_traversal_start: the traversal from %u is still running. Fix: "
                               "mkrt_traversal_wait for it first, or open another traversal.",
                               t->root);
    /* Finished: no round reads its values or bits (visited and far were
     * emptied by its last level). */
    if (sweep) {
        mkrt__sweep_reset(t, pr);
    } else {
        for (uint32_t v = 0; v < e->graph.vertices; v++)
            t->values[v] = UNREACHED;
        t->values[root] = t->kind == MKRT__LANE_BFS ? (uint64_t)root : 0;
    }
    t->root = root;
    /* release (both): pair with the dispatcher's acquire loads (starts,
     * then started): it sees the values and the root, and puts the root
     * into the frontier itself (round.c, take_starts). */
    atomic_store_explicit(&t->started, atomic_load_explicit(&t->started, memory_order_relaxed) + 1,
                          memory_order_release);
    atomic_fetch_add_explicit(&e->starts, 1, memory_order_release);
    mkrt__waitq_notify(e->host.work_wq);
    return MKRT_OK;
}

void mkrt__traversal_wait_target(mkrt__traversal *t, _Atomic uint64_t **counter, uint64_t *target)
{
    *counter = &t->finished;
    *target = atomic_load_explicit(&t->started, memory_order_relaxed); /* the owner's own writes */
}

mkrt_status mkrt__traversal_read(const mkrt__traversal *t, uint32_t first, size_t count, uint64_t *out,
                                 uint32_t *parents, double *ranks, uint32_t *iterations, mkrt_error *err)
{
    const mkrt__graph_engine *e = t->engine;
    const char *what = parents != NULL ? "mkrt_traversal_parents"
                       : ranks != NULL ? "mkrt_traversal_read_ranks"
                                       : "mkrt_traversal_read";
    static const char *const kind_name[] = {"RELAX", "user", "BFS", "SSSP", "CC", "PageRank"};
    if (first > e->graph.vertices || count > e->graph.vertices - first)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "%s: vertices %u .. %u + %zu, but the graph has %u. Fix: read within "
                               "0 .. %u.",
                               what, first, first, count, e->graph.vertices, e->graph.vertices);
    if (parents != NULL && t->kind != MKRT__LANE_BFS)
        return mkrt__error_set(err, MKRT_ENOTSUP,
                               "mkrt_traversal_parents: a%s %s traversal keeps no tree. Fix: read %s "
                               "with %s.",
                               t->kind == MKRT__LANE_SSSP ? "n" : "", kind_name[t->kind],
                               t->kind == MKRT__LANE_PR ? "scores" : t->kind == MKRT__LANE_CC ? "labels" : "distances",
                               t->kind == MKRT__LANE_PR ? "mkrt_traversal_read_ranks" : "mkrt_traversal_read");
    if ((ranks != NULL) != (t->kind == MKRT__LANE_PR) && parents == NULL)
        return mkrt__error_set(err, MKRT_ENOTSUP,
                               "%s: a%s %s traversal %s. Fix: read it with %s.", what,
                               t->kind == MKRT__LANE_SSSP ? "n" : "", kind_name[t->kind],
                               ranks != NULL ? "has no scores" : "keeps scores (doubles), not integers",
                               ranks != NULL ? "mkrt_traversal_read" : "mkrt_traversal_read_ranks");
    if (t->root == UINT32_MAX || running(t))
        return mkrt__error_set(err, MKRT_ESTATE,
                               "%s: the traversal %s. Fix: mkrt_traversal_start it, then "
                               "mkrt_traversal_wait until it returns MKRT_OK.",
                               what, t->root == UINT32_MAX ? "was never started" : "is still running");
    if (t->kind == MKRT__LANE_CC || t->kind == MKRT__LANE_PR) {
        mkrt__sweep_read(t, first, count, ranks != NULL ? NULL : out, ranks, iterations);
        return MKRT_OK;
    }
    for (size_t i = 0; i < count; i++) {
        uint64_t x = t->values[first + i];
        if (parents != NULL)
            parents[i] = x == UNREACHED ? UINT32_MAX : (uint32_t)x;
        else
            out[i] = x == UNREACHED || t->kind != MKRT__LANE_BFS ? x : x >> 32;
    }
    return MKRT_OK;
}

void mkrt__traversal_stats(const mkrt__traversal *t, mkrt_traversal_stats *out)
{
    /* relaxed: statistics, written by the dispatcher. */
    out->levels_pushed = atomic_load_explicit((_Atomic uint64_t *)&t->levels_pushed, memory_order_relaxed);
    out->levels_pulled = atomic_load_explicit((_Atomic uint64_t *)&t->levels_pulled, memory_order_relaxed);
    out->edges_examined = atomic_load_explicit((_Atomic uint64_t *)&t->edges, memory_order_relaxed) +
                          atomic_load_explicit((_Atomic uint64_t *)&t->pulled_edges, memory_order_relaxed);
}

mkrt_status mkrt__traversal_close(mkrt__traversal *t, mkrt_error *err)
{
    if (running(t))
        return mkrt__error_set(err, MKRT_ESTATE,
                               "mkrt_traversal_close: the traversal from %u is still running. Fix: "
                               "mkrt_traversal_wait for it first.",
                               t->root);
    mkrt__graph_engine *e = t->engine;
    mkrt__mutex_lock(&e->lock);
    t->open = false;
    mkrt__mutex_unlock(&e->lock);
    return MKRT_OK;
}

mkrt_status mkrt__traversal_status(const mkrt__traversal *t)
{
    /* relaxed: read after the acquire of finished (the waits). */
    return (mkrt_status)atomic_load_explicit((_Atomic int32_t *)&t->status, memory_order_relaxed);
}

struct mkrt_runtime *mkrt__traversal_runtime(const mkrt__traversal *t)
{
    return t->engine->host.rt;
}

uint64_t mkrt__traversal_far_moved(const mkrt_traversal *t)
{
    return t->x.far_moved;
}

uint64_t mkrt__traversal_hub_levels(const mkrt_traversal *t)
{
    return t->x.hub_levels;
}
