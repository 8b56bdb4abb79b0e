/* SPDX-License-Identifier: BSD-2-Clause */
/* src/graph/round.c - frontier rounds: the dispatcher's source of items
 * for a drain. Each lane (traversal) moves level by level: its rounds
 * take the vertices of its frontier r as chunk items (mkrt__chunk), up to
 * max_batch edges per round over all lanes, while the ops mark the next
 * level in w; r and w swap only once r is used up and no batch runs, so
 * every round of a level ends before the next level's first starts
 * (level-synchronous: a BFS visits each vertex once). A lane swaps at
 * most once per round, so a vertex appears once in a round. relaxed (all
 * bit accesses): the bits are hints, see mkrt__graph_mark; the graph is
 * read only once a bit was set, by an op that ran after registration. */
#include "base/bitmap.h"
#include "graph/graph_internal.h"
#include "graph/sweep.h"
#include "plan/decide.h"

static uint64_t value_now(const mkrt__traversal *t, uint32_t v)
{
    /* relaxed: ops lower values concurrently; a stale distance only
     * defers a vertex, which stays in far. */
    return atomic_load_explicit((_Atomic uint64_t *)&t->values[v], memory_order_relaxed);
}

/* Whether the lane's levels may run pulled: a user op registered with
 * pulls (the op table is frozen once rounds run), or a public BFS over a
 * symmetric graph. */
static bool lane_pulls(const mkrt__traversal *t)
{
    const mkrt__graph_engine *e = t->engine;
    return t->kind == MKRT__LANE_USER ? e->host.ops[e->lane_op[t->lane]].pulls : t->pulls;
}

/* The level that ends: a pulled level's frontier bits were read, not
 * taken; clears them (no batch runs). */
static void end_pulled_level(mkrt__traversal *t)
{
    if (t->x.pull)
        for (size_t w = 0; w < t->engine->words; w++)
            atomic_store_explicit(&t->r[w], 0, memory_order_relaxed);
    t->x.pull = false;
    t->x.pull_pending = false;
}

/* Distance buckets (delta-stepping's, over levels): a level of a
 * weighted RELAX or SSSP lane expands only its vertices whose distance is
 * below the bound; a chunk whose vertex is at or above it sets the vertex
 * aside in far (apply.c, on the worker: the dispatcher reads no distance),
 * so a vertex far from the root is not expanded at each of the many
 * distances it passes on the way down. The bound starts at, and moves up
 * to, the bucket above the nearest vertex of the level and of far
 * (next_min and far_min: the least distances the chunks wrote or
 * deferred, lower bounds). far goes back into the frontier when a level
 * starts with far_min below the bound, when the frontier runs empty, when
 * a level and far together hold fewer than bucket_min vertices (deferring
 * saves less than the extra levels cost), and on abort; the bound is 0
 * again when both are empty. */
static void set_bound(mkrt__traversal *t, uint64_t bound)
{
    t->x.bound = bound;
    /* relaxed: read by the workers after the launch (release). */
    atomic_store_explicit(&t->bound, bound, memory_order_relaxed);
}

static bool far_any(const mkrt__traversal *t)
{
    /* relaxed: set by the workers of completed batches (acquired by the
     * backend's wait), or of a running one only while aborting. */
    return atomic_load_explicit((_Atomic bool *)&t->far_any, memory_order_relaxed);
}

/* Moves far's vertices into the frontier `to`. */
static void far_restore(mkrt__traversal *t, _Atomic uint64_t *to)
{
    if (!far_any(t))
        return;
    /* QUEUE: far's vertices are in no queue; the frontier is scanned. */
    if (to == t->r)
        t->x.queued = false;
    else
        atomic_store_explicit(&t->wq_bad, true, memory_order_relaxed);
    atomic_store_explicit(&t->far_any, false, memory_order_relaxed);
    for (size_t w = 0; w < t->engine->words; w++)
        if (atomic_load_explicit(&t->far[w], memory_order_relaxed) != 0)
            atomic_fetch_or_explicit(&to[w], atomic_exchange_explicit(&t->far[w], 0, memory_order_relaxed),
                                     memory_order_relaxed);
    /* far's least distance is now the frontier's. */
    uint64_t fm = atomic_exchange_explicit(&t->far_min, UINT64_MAX, memory_order_relaxed);
    if (fm < atomic_load_explicit(&t->next_min, memory_order_relaxed))
        atomic_store_explicit(&t->next_min, fm, memory_order_relaxed);
}

static uint64_t popcount_words(const _Atomic uint64_t *bits, size_t words)
{
    return mkrt__bitmap_count(bits, words);
}

/* At a swap (no batch runs): the level's bound. The workers marked r's
 * vertices under the old bound (below it, the rest went to far): r needs
 * no filtering unless the bound moved up or far came back into it. */
static void start_bucket(mkrt__traversal *t)
{
    const mkrt__graph_engine *e = t->engine;
    const uint64_t old = t->x.bound;
    uint64_t near = atomic_load_explicit(&t->next_min, memory_order_relaxed);
    const bool far = far_any(t);
    const uint64_t far_min = far ? atomic_load_explicit(&t->far_min, memory_order_relaxed) : UINT64_MAX;
    near = far_min < near ? far_min : near;
    uint64_t n = t->x.queued ? t->x.rq_n : popcount_words(t->r, e->words);
    if (far && n < e->bucket_min)
        n += popcount_words(t->far, e->words);
    t->x.filter = false;
    if (near == UINT64_MAX || n < e->bucket_min) {
        far_restore(t, t->r);
        atomic_store_explicit(&t->next_min, UINT64_MAX, memory_order_relaxed);
        set_bound(t, 0);
        return;
    }
    uint64_t bound = (near / e->bucket_width + 1) * e->bucket_width;
    if (bound < near) /* wrapped: everything is in the last bucket */
        bound = UINT64_MAX;
    set_bound(t, bound > old ? bound : old);
    if (far && far_min < t->x.bound) {
        far_restore(t, t->r);
        t->x.filter = true;
    }
    t->x.filter = t->x.filter || t->x.bound > old;
    atomic_store_explicit(&t->next_min, UINT64_MAX, memory_order_relaxed);
}

/* Of the lane's frontier word w (taken), the vertices below the bound
 * (a filtered level, see start_bucket); the others go back to far. The
 * vertices expanded leave far. relaxed: far's bits and far_min are also
 * set by the workers of a running round. */
static uint64_t in_bucket(mkrt__traversal *t, size_t w, uint64_t mask)
{
    uint64_t later = 0, least = UINT64_MAX;
    if (t->x.filter && t->x.bound != 0)
        for (uint64_t x = mask; x != 0; x &= x - 1) {
            uint32_t bit = (uint32_t)__builtin_ctzll(x);
            uint64_t d = value_now(t, (uint32_t)(w * 64 + bit));
            if (d >= t->x.bound) {
                later |= (uint64_t)1 << bit;
                least = d < least ? d : least;
            }
        }
    const uint64_t expand = mask & ~later;
    if (later != 0) {
        atomic_fetch_or_explicit(&t->far[w], later, memory_order_relaxed);
        atomic_store_explicit(&t->far_any, true, memory_order_relaxed);
        uint64_t cur = atomic_load_explicit(&t->far_min, memory_order_relaxed);
        while (least < cur && !atomic_compare_exchange_weak_explicit(&t->far_min, &cur, least, memory_order_relaxed,
                                                                      memory_order_relaxed))
            ;
    }
    if (expand != 0 && far_any(t) && (atomic_load_explicit(&t->far[w], memory_order_relaxed) & expand))
        atomic_fetch_and_explicit(&t->far[w], ~expand, memory_order_relaxed);
    return expand;
}

/* QUEUE: the vertex of r's queue at i (MKRT__QUEUE_EMPTY: none).
 * relaxed: see the fields. */
static uint32_t rq_at(const mkrt__traversal *t, uint64_t i)
{
    return atomic_load_explicit(&t->rq[i], memory_order_relaxed);
}

/* Numbers for the levels' queues, unique in the process (qepoch). */
static _Atomic uint64_t queue_epochs;

/* A pulling lane's level settles its vertices (visited) and counts them
 * and their edges out, from the queue or the bitset. */
static void settle_level(mkrt__traversal *t, uint64_t *nf, uint64_t *mf)
{
    const mkrt__graph_engine *e = t->engine;
    const uint64_t *off = e->graph.offsets;
    /* relaxed (visited): read by the workers after the launch (release). */
    if (t->x.queued) {
        for (uint64_t i = 0; i < t->x.rq_n; i++) {
            const uint32_t v = rq_at(t, i);
            if (v == MKRT__QUEUE_EMPTY)
                continue;
            const uint64_t bit = (uint64_t)1 << (v % 64);
            atomic_store_explicit(&t->visited[v / 64],
                                  atomic_load_explicit(&t->visited[v / 64], memory_order_relaxed) | bit,
                                  memory_order_relaxed);
            *mf += off[v + 1] - off[v];
            ++*nf;
        }
        return;
    }
    for (size_t w = 0; w < e->words; w++) {
        uint64_t x = atomic_load_explicit(&t->r[w], memory_order_relaxed);
        if (x == 0)
            continue;
        atomic_store_explicit(&t->visited[w], atomic_load_explicit(&t->visited[w], memory_order_relaxed) | x,
                              memory_order_relaxed);
        *nf += (uint64_t)__builtin_popcountll(x);
        for (; x != 0; x &= x - 1) {
            uint32_t v = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(x));
            *mf += off[v + 1] - off[v];
        }
    }
}

/* Whether a decision is on (config.plan_off; without a planner, PULL
 * is on and QUEUE off: the rules, counted nowhere). */
static bool decision_on(const mkrt__graph_engine *e, uint32_t bit)
{
    return e->host.planner == NULL ? bit == MKRT_PLAN_PULL : !(e->host.planner->off & bit);
}

static void count(mkrt__graph_engine *e, mkrt_plan_counter c)
{
    if (e->host.planner != NULL)
        mkrt__planner_count(e->host.planner, c, 1);
}

/* PULL decided a level of nf vertices: its density and GraphBLAS class
 * (for EXPLAIN, source.c) and the counters. */
static void level_note(mkrt__graph_engine *e, uint64_t nf, bool pull)
{
    const uint64_t bps = e->graph.vertices ? nf * 10000u / e->graph.vertices : 0;
    e->level_density_bps = (uint32_t)(bps < 10000u ? bps : 10000u);
    e->level_class = mkrt__decide_frontier_class(e->level_density_bps, e->level_class);
    count(e, pull ? MKRT_PLAN_N_PULL_LEVELS : MKRT_PLAN_N_PUSH_LEVELS);
}

/* A new level (r just swapped in): a pulling lane's vertices settle and
 * the lane chooses push or pull for it; QUEUE chooses how the next
 * frontier (w) is kept. */
static void start_level(mkrt__traversal *t, bool aborting)
{
    mkrt__graph_engine *e = t->engine;
    if (!aborting && t->buckets)
        start_bucket(t);
    bool was = t->x.pull;
    t->x.pull = false;
    const uint64_t all = e->graph.offsets[e->graph.vertices];
    uint64_t nf = 0, mf = 0;
    if (lane_pulls(t)) {
        settle_level(t, &nf, &mf);
        if (nf != 0) {
            t->x.visited_dirty = true;
            uint64_t unsettled = all - t->x.visited_edges;
            t->x.visited_edges += mf;
            /* PULL (plan/decide.h): direction-optimizing levels, Beamer's
             * alpha and beta, on the level's counted vertices and edges. */
            bool pull = mkrt__decide_pull(nf, mf, unsettled, e->graph.vertices, was, decision_on(e, MKRT_PLAN_PULL));
            level_note(e, nf, pull);
            /* A pulled round needs room for two failure pairs per vertex
             * of a word (take_pulled). */
            if (pull && !aborting && e->host.max_batch >= 128) {
                t->x.pull = true;
                t->x.pull_pending = true;
                t->x.pull_word = 0;
            }
        }
    } else {
        nf = t->x.queued ? t->x.rq_n : popcount_words(t->r, e->words);
    }
    if (t->kind == MKRT__LANE_BFS && t->pulls) {
        /* A pulling BFS's levels are strict (a level's chunks all ran
         * before it swapped, take_lane): its frontier's vertices share one
         * depth, which its pulled chunks give their vertices. */
        uint64_t i = 0;
        while (t->x.queued && i < t->x.rq_n && rq_at(t, i) == MKRT__QUEUE_EMPTY)
            i++;
        if (t->x.queued && i < t->x.rq_n)
            t->depth = value_now(t, rq_at(t, i)) >> 32;
        else
            for (size_t w = 0; w < e->words; w++) {
                uint64_t x = atomic_load_explicit(&t->r[w], memory_order_relaxed);
                if (x != 0) {
                    t->depth = value_now(t, (uint32_t)(w * 64 + (size_t)__builtin_ctzll(x))) >> 32;
                    break;
                }
            }
    }
    mkrt__graph_count(t->x.pull ? &t->levels_pulled : &t->levels_pushed, 1);
    mkrt__graph_count(t->x.pull ? &e->levels_pulled : &e->levels_pushed, 1);
    /* QUEUE (plan/decide.h): the next frontier as a queue, or the bitset
     * alone, on the level's counted density, with hysteresis against the
     * lane's last choice (no planner: the bitset; a lane with distance
     * buckets: the bitset, see decide.h). relaxed: published by the
     * launch. */
    count(e, t->x.queued ? MKRT_PLAN_N_QUEUE_LEVELS : MKRT_PLAN_N_BITSET_LEVELS);
    e->level_queue = t->x.queued;
    const bool q = mkrt__decide_frontier_queue(nf, e->graph.vertices, t->x.queue_chosen,
                                               e->host.planner != NULL && !t->buckets &&
                                                   decision_on(e, MKRT_PLAN_QUEUE));
    t->x.queue_chosen = q;
    atomic_store_explicit(&t->qon, q && !aborting, memory_order_relaxed);
}

/* The lane ran empty: every vertex is unsettled again (no batch runs). */
static void unsettle(mkrt__traversal *t)
{
    if (t->x.visited_dirty)
        for (size_t w = 0; w < t->engine->words; w++)
            atomic_store_explicit(&t->visited[w], 0, memory_order_relaxed);
    t->x.visited_edges = 0;
    t->x.visited_dirty = false;
}

/* Pulled chunks, one per visited word with an unsettled vertex, at most
 * cap / 2 unsettled vertices (each fails at most once, in two failure
 * pairs). */
static size_t take_pulled(mkrt__traversal *t, mkrt_item *items, uint64_t cap)
{
    const mkrt__graph_engine *e = t->engine;
    uint64_t vertices = 0;
    size_t k = 0;
    while (t->x.pull_pending && k < e->host.max_batch) {
        const size_t w = t->x.pull_word;
        if (w >= e->words) {
            t->x.pull_pending = false;
            break;
        }
        uint64_t open = ~atomic_load_explicit(&t->visited[w], memory_order_relaxed);
        if (e->graph.vertices - w * 64 < 64)
            open &= ((uint64_t)1 << (e->graph.vertices - w * 64)) - 1;
        uint64_t n = (uint64_t)__builtin_popcountll(open);
        if (n > 0 && vertices + n > cap / 2)
            break;
        if (n > 0) {
            mkrt__chunk_put(&items[k++], &(mkrt__chunk){t->lane, (uint32_t)(w * 64), MKRT__CHUNK_PULL});
            vertices += n;
        }
        t->x.pull_word++;
    }
    return k;
}

/* Whether the lane has nothing left of its run (no batch runs). */
static bool lane_idle(const mkrt__traversal *t)
{
    return !t->x.scanning && t->x.mask == 0 && t->x.edge >= t->x.end && !t->x.pull_pending &&
           !far_any(t) && !t->x.visited_dirty && t->x.bound == 0 &&
           !atomic_load_explicit(&t->any, memory_order_relaxed);
}

enum { LANE_DONE, LANE_FULL, LANE_PULLED, LANE_PULL_WAITS };

/* The lane's share of a round: pushed chunks into items[*k..], up to cap
 * edges in all; or, when nothing was taken yet, a pulled round. */
static int take_lane(mkrt__traversal *t, mkrt_item *items, size_t *k, uint64_t *edges, uint64_t cap,
                     bool batch_running, bool aborting)
{
    mkrt__graph_engine *e = t->engine;
    /* The graph's rows are read only for a vertex taken from the frontier
     * (its bit set by an op that ran after registration): an idle lane
     * reads nothing a re-registration rewrites. */
    const uint64_t chunk = e->chunk;
    if (aborting && (t->x.pull || t->x.bound != 0)) {
        /* The pulled level's bits go out as pushed edges, and no vertex
         * waits for a later bucket. */
        t->x.pull = false;
        t->x.pull_pending = false;
        set_bound(t, 0);
        far_restore(t, t->r);
        t->x.queued = false; /* what is left of r: by the scan */
        t->x.scanning = true;
        t->x.word = 0;
    }
    for (;;) {
        if (t->x.edge < t->x.end) {
            uint64_t len = t->x.end - t->x.edge < chunk ? t->x.end - t->x.edge : chunk;
            if (*edges + len > cap || *k >= e->host.max_batch)
                return LANE_FULL;
            mkrt__chunk_put(&items[(*k)++], &(mkrt__chunk){t->lane, t->x.v, t->x.edge});
            t->x.took = true;
            *edges += len;
            t->x.edge += len;
            mkrt__graph_count(&t->edges, len);
        } else if (t->x.mask != 0) {
            uint32_t bit = (uint32_t)__builtin_ctzll(t->x.mask);
            t->x.mask &= t->x.mask - 1;
            uint32_t v = (uint32_t)((t->x.word - 1) * 64 + bit);
            t->x.v = v;
            t->x.edge = e->graph.offsets[v];
            t->x.end = e->graph.offsets[v + 1];
        } else if (t->x.scanning && !t->x.pull && t->x.queued) {
            /* QUEUE: the level's vertices from its queue; each clears its
             * bit of r (only this thread writes r while it is pushed). */
            if (t->x.rq_pos >= t->x.rq_n) {
                t->x.scanning = false;
                continue;
            }
            if (t->x.rq_pos + 8 < t->x.rq_n && rq_at(t, t->x.rq_pos + 8) != MKRT__QUEUE_EMPTY)
                __builtin_prefetch(&e->graph.offsets[rq_at(t, t->x.rq_pos + 8)], 0, 3);
            const uint32_t v = rq_at(t, t->x.rq_pos);
            /* Taken: empty again for when this queue is the next wq. */
            atomic_store_explicit(&t->rq[t->x.rq_pos++], MKRT__QUEUE_EMPTY, memory_order_relaxed);
            if (v == MKRT__QUEUE_EMPTY)
                continue; /* an entry its block left unused */
            const size_t w = v / 64;
            const uint64_t bit = (uint64_t)1 << (v % 64), word = atomic_load_explicit(&t->r[w], memory_order_relaxed);
            atomic_store_explicit(&t->r[w], word & ~bit, memory_order_relaxed);
            t->x.mask = word & bit;
            if (t->buckets && t->x.mask != 0)
                t->x.mask = in_bucket(t, w, t->x.mask);
            t->x.word = w + 1;
        } else if (t->x.scanning && !t->x.pull) {
            size_t w = t->x.word;
            while (w < e->words && atomic_load_explicit(&t->r[w], memory_order_relaxed) == 0)
                w++;
            if (w >= e->words) {
                t->x.scanning = false;
                continue;
            }
            /* Only this thread writes r while the level is pushed (the
             * workers mark w): a load and a store, no locked exchange. */
            t->x.mask = atomic_load_explicit(&t->r[w], memory_order_relaxed);
            atomic_store_explicit(&t->r[w], 0, memory_order_relaxed);
            if (t->buckets)
                t->x.mask = in_bucket(t, w, t->x.mask);
            t->x.word = w + 1;
            /* The word's vertices' rows are read one by one: start their
             * (random) loads together. */
            for (uint64_t x = t->x.mask; x != 0; x &= x - 1)
                __builtin_prefetch(&e->graph.offsets[w * 64 + (size_t)__builtin_ctzll(x)], 0, 3);
        } else if (t->x.pull_pending) {
            if (*k > 0)
                return LANE_PULL_WAITS; /* a pulled round is a round of its own */
            *k = take_pulled(t, items, t->lane < MKRT__LANE_PUBLIC ? cap : 2 * cap * 64);
            if (*k > 0)
                return LANE_PULLED;
        } else if (!t->x.swapped && !batch_running && !(t->x.took && t->pulls) &&
                   atomic_exchange_explicit(&t->any, false, memory_order_relaxed)) {
            /* The next level: no batch runs, so no op sets bits now; the
             * launch of the round publishes the swap to the workers. */
            end_pulled_level(t);
            _Atomic uint64_t *next = t->w;
            t->w = t->r;
            t->r = next;
            /* QUEUE: w's queue lists all of r's vertices unless it
             * overflowed or a bit came in without it; relaxed: see the
             * fields (no batch runs). */
            const uint64_t qn = atomic_load_explicit(&t->wq_n, memory_order_relaxed);
            t->x.queued = atomic_load_explicit(&t->qon, memory_order_relaxed) && qn <= t->qcap &&
                          !atomic_load_explicit(&t->wq_bad, memory_order_relaxed);
            /* The old rq becomes wq: what its level did not take goes
             * back to empty. */
            for (uint64_t i = t->x.rq_pos; i < t->x.rq_n; i++)
                atomic_store_explicit(&t->rq[i], MKRT__QUEUE_EMPTY, memory_order_relaxed);
            t->x.rq_n = qn < t->qcap ? qn : t->qcap;
            t->x.rq_pos = 0;
            _Atomic uint32_t *q = t->wq;
            t->wq = t->rq;
            t->rq = q;
            atomic_store_explicit(&t->wq_n, 0, memory_order_relaxed);
            atomic_store_explicit(&t->wq_bad, false, memory_order_relaxed);
            atomic_store_explicit(&t->qepoch, atomic_fetch_add_explicit(&queue_epochs, 1, memory_order_relaxed) + 1,
                                  memory_order_relaxed);
            t->x.scanning = true;
            t->x.word = 0;
            start_level(t, aborting);
            t->x.swapped = true;
        } else if (t->x.took || batch_running) {
            /* Its chunks of this round (or a batch) have yet to run: what
             * they mark decides whether the lane's run goes on. */
            return LANE_DONE;
        } else if (!t->x.swapped && far_any(t)) {
            /* The bucket is done: far is the next level. */
            far_restore(t, t->w);
            atomic_store_explicit(&t->any, true, memory_order_relaxed);
        } else if (!t->x.swapped && (t->x.visited_dirty || t->x.bound != 0 || t->x.pull)) {
            end_pulled_level(t); /* the last level */
            unsettle(t);
            set_bound(t, 0);
        } else if (t->x.active && lane_idle(t)) {
            mkrt__traversal_finish(t, aborting ? MKRT_ETIMEDOUT : MKRT_OK);
            return LANE_DONE;
        } else {
            return LANE_DONE;
        }
    }
}

/* Takes up the traversals started since the last look. */
static void take_starts(mkrt__graph_engine *e, uint32_t n)
{
    /* acquire: pairs with the release increment in mkrt__traversal_start. */
    uint64_t s = atomic_load_explicit(&e->starts, memory_order_acquire);
    if (s == atomic_load_explicit(&e->starts_seen, memory_order_relaxed))
        return;
    /* relaxed: read by idle dispatchers as a hint (mkrt__graph_wants). */
    atomic_store_explicit(&e->starts_seen, s, memory_order_relaxed);
    for (uint32_t l = MKRT__LANE_PUBLIC; l < n; l++) {
        mkrt__traversal *t = mkrt__lane_at(e, l);
        if (t == NULL)
            continue;
        /* acquire: pairs with the starter's release (its values and bits). */
        uint64_t started = atomic_load_explicit(&t->started, memory_order_acquire);
        if (started != t->x.seen) {
            t->x.seen = started;
            t->x.active = true;
            const uint64_t *off = e->graph.offsets;
            if (mkrt__graph_device_claim(t)) {
                /* the device runs it whole (graph/device.c) */
            } else if (t->kind == MKRT__LANE_CC || t->kind == MKRT__LANE_PR) {
                mkrt__sweep_begin(t); /* no frontier: phases over blocks */
            } else if (off[t->root] != off[t->root + 1]) {
                const uint64_t bit = (uint64_t)1 << (t->root % 64);
                if (!(atomic_fetch_or_explicit(&t->w[t->root / 64], bit, memory_order_relaxed) & bit))
                    mkrt__queue_add_one(t, t->root); /* QUEUE */
                atomic_store_explicit(&t->any, true, memory_order_relaxed);
            }
            t->run_edges_base = atomic_load_explicit(&t->edges, memory_order_relaxed);
        }
    }
}

mkrt__round mkrt__graph_round_take(mkrt__graph_engine *e, mkrt_item *items, bool batch_running)
{
    mkrt__round round = {0, 0, false};
    /* acquire: pairs with the release store in mkrt__graph_engine_set. */
    if (!atomic_load_explicit(&e->ready, memory_order_acquire))
        return round;
    /* acquire: pairs with the release store of aborting. */
    const bool aborting = atomic_load_explicit(e->host.aborting, memory_order_acquire);
    const uint32_t n = atomic_load_explicit(&e->nlanes, memory_order_acquire);
    take_starts(e, n);
    const uint64_t cap = e->host.max_batch;
    uint32_t start = e->next_lane < n ? e->next_lane : 0, next = start + 1 < n ? start + 1 : 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t l = (start + i) % n;
        mkrt__traversal *t = mkrt__lane_at(e, l);
        if (t == NULL || t->x.dev != MKRT__DEV_NONE) /* on the device: no rounds here (graph/device.c) */
            continue;
        /* A round's edges are capped so that their failures fit the
         * failure list (and, on abort, the failed items: the cell lanes'
         * edges are items); a public traversal's chunks are capped by
         * the items alone (fewer, larger rounds per level): its edges
         * never fail one by one. */
        const uint64_t lane_cap = l < MKRT__LANE_PUBLIC ? cap : cap * e->chunk;
        if (t->x.sweep) { /* CC, PageRank (graph/sweep.h): rounds of their own, as pulled ones */
            int sw = mkrt__sweep_take(t, items, &round.n, lane_cap, batch_running, aborting);
            if (sw == MKRT__SWEEP_ROUND) {
                round.pull = true;
                break;
            }
            if (sw == MKRT__SWEEP_WAITS)
                next = l;
            continue;
        }
        int got = take_lane(t, items, &round.n, &round.edges, lane_cap, batch_running, aborting);
        if (got == LANE_PULLED) {
            round.pull = true;
            break;
        }
        if (got == LANE_PULL_WAITS) {
            next = l; /* its pulled round comes next */
            continue;
        }
        if (got == LANE_FULL) {
            next = l; /* it has more */
            break;
        }
    }
    e->next_lane = next;
    for (uint32_t l = 0; l < n; l++) {
        mkrt__traversal *t = mkrt__lane_at(e, l);
        if (t != NULL)
            t->x.swapped = t->x.took = false;
    }
    if (!round.pull && round.edges != 0)
        mkrt__graph_count(&e->edges, round.edges);
    return round;
}

bool mkrt__graph_wants(mkrt__graph_engine *e)
{
    /* acquire: pairs with the release increment in mkrt__traversal_start;
     * relaxed: starts_seen is a hint written by the token's holder. */
    return atomic_load_explicit(&e->starts, memory_order_acquire) !=
           atomic_load_explicit(&e->starts_seen, memory_order_relaxed);
}

bool mkrt__graph_pending(mkrt__graph_engine *e)
{
    /* acquire: as in mkrt__graph_round_take. */
    if (e == NULL || !atomic_load_explicit(&e->ready, memory_order_acquire))
        return false;
    if (mkrt__graph_wants(e))
        return true;
    const uint32_t n = atomic_load_explicit(&e->nlanes, memory_order_acquire);
    for (uint32_t l = 0; l < n; l++) {
        const mkrt__traversal *t = mkrt__lane_at(e, l);
        if (t != NULL && (t->x.active || !lane_idle(t)))
            return true;
    }
    return false;
}

uint64_t mkrt__graph_pulled_take(mkrt__graph_engine *e)
{
    /* relaxed: the backend's completion (acquired by its wait) orders the
     * workers' adds; one pulled round runs at a time. */
    uint64_t n = atomic_exchange_explicit(&e->pulled, 0, memory_order_relaxed);
    mkrt__graph_count(&e->edges, n); /* the lane's: apply.c counts them */
    return n;
}

void mkrt__traversal_finish(mkrt__traversal *t, mkrt_status st)
{
    t->x.active = false;
    /* relaxed: published by the release store of finished below. */
    atomic_store_explicit(&t->status, (int32_t)st, memory_order_relaxed);
    /* release: pairs with the acquire in the waits (the values are final). */
    atomic_store_explicit(&t->finished, t->x.seen, memory_order_release);
    mkrt__waitq_notify(&t->engine->finished_wq);
}

void mkrt__graph_counters_read(const mkrt__graph_engine *e, mkrt__graph_counters *out)
{
    *out = (mkrt__graph_counters){0, 0, 0};
    if (e == NULL)
        return;
    /* relaxed: statistics. */
    out->levels_pushed = atomic_load_explicit((_Atomic uint64_t *)&e->levels_pushed, memory_order_relaxed);
    out->levels_pulled = atomic_load_explicit((_Atomic uint64_t *)&e->levels_pulled, memory_order_relaxed);
    out->edges_examined = atomic_load_explicit((_Atomic uint64_t *)&e->edges, memory_order_relaxed);
}
