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
#include "base/thread.h"
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
 * again when both are empty.
 *
 * A hub (MKRT__HUB_EDGES edges or more) is expanded by halves in a run's
 * levels under a bound (delta-stepping's light and heavy edges): a level
 * runs only its light edges (weight below the bucket width: they may
 * land in the bucket) and sets it aside in hubs; once the bucket's levels
 * are done, one more level runs the set-aside hubs' whole rows. A hub
 * that a later level of the bucket lowers again then runs its heavy
 * edges once, not once per level (on a Kronecker graph its re-expansions
 * were 9% of SSSP's edges: bench/results/kernels_profile.md). */
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

/* Hubs (MKRT__HUB_EDGES) whose heavy edges wait for their bucket's end
 * (hubs, set by the workers' light levels; relaxed: as far_any). */
static bool hubs_any(const mkrt__traversal *t)
{
    return atomic_load_explicit((_Atomic bool *)&t->hubs_any, memory_order_relaxed);
}

/* QUEUE: vertices come into the frontier `to` without an entry in its
 * queue (far's, the hubs'): that frontier is scanned. No batch runs
 * (relaxed: see the fields). */
static void unlisted_into(mkrt__traversal *t, const _Atomic uint64_t *to)
{
    if (to == t->r)
        t->x.queued = false;
    else
        atomic_store_explicit(&t->wq_bad, true, memory_order_relaxed);
}

/* The waiting hubs go into the frontier `to` (no batch runs, or the lane
 * is aborting): a level of their whole rows (their light edges, which ran
 * already, run again: a few, and a minimum). relaxed: see hubs. */
static void hubs_to(mkrt__traversal *t, _Atomic uint64_t *to)
{
    if (!hubs_any(t))
        return;
    unlisted_into(t, to);
    for (size_t w = 0; w < t->engine->words; w++) {
        const uint64_t x = atomic_load_explicit(&t->hubs[w], memory_order_relaxed);
        if (x != 0) {
            atomic_store_explicit(&t->hubs[w], 0, memory_order_relaxed);
            atomic_fetch_or_explicit(&to[w], x, memory_order_relaxed);
        }
    }
    atomic_store_explicit(&t->hubs_any, false, memory_order_relaxed);
}

/* Moves far's vertices into the frontier `to`: those of the words whose
 * lower bound (far_low) is below `limit` (UINT64_MAX: all of them; a limit
 * that would move none moves all). The words left keep their bits and
 * bounds, and far_min becomes the least of their bounds; the least
 * distance of what moved (the larger of the two lower bounds it has: its
 * words' and far_min) becomes the frontier's (next_min). No batch runs. */
static void far_restore(mkrt__traversal *t, _Atomic uint64_t *to, uint64_t limit)
{
    if (!far_any(t))
        return;
    unlisted_into(t, to);
    const size_t words = t->engine->words;
    uint64_t moved = UINT64_MAX, left = UINT64_MAX;
    bool any_moved = false, any_left = false;
    for (int pass = 0; pass < 2 && !any_moved; pass++) {
        if (pass == 1)
            limit = UINT64_MAX; /* the limit moved none: all */
        any_left = false;
        left = UINT64_MAX;
        for (size_t w = 0; w < words; w++) {
            const uint64_t x = atomic_load_explicit(&t->far[w], memory_order_relaxed);
            if (x == 0)
                continue;
            const uint64_t low = atomic_load_explicit(&t->far_low[w], memory_order_relaxed);
            if (limit != UINT64_MAX && low >= limit) {
                any_left = true;
                left = low < left ? low : left;
                continue;
            }
            atomic_store_explicit(&t->far[w], 0, memory_order_relaxed);
            atomic_fetch_or_explicit(&to[w], x, memory_order_relaxed);
            atomic_store_explicit(&t->far_low[w], UINT64_MAX, memory_order_relaxed);
            moved = low < moved ? low : moved;
            any_moved = true;
            t->x.far_moved += mkrt__popcount64(x);
        }
    }
    atomic_store_explicit(&t->far_any, any_left, memory_order_relaxed);
    const uint64_t fm = atomic_exchange_explicit(&t->far_min, left, memory_order_relaxed);
    /* far_min was a lower bound of every far vertex, far_low of its word's. */
    moved = fm > moved ? fm : moved;
    if (any_moved && moved < atomic_load_explicit(&t->next_min, memory_order_relaxed))
        atomic_store_explicit(&t->next_min, moved, memory_order_relaxed);
}

/* The lane leaves its buckets (no bound from here, or an abort): every
 * vertex set aside, far's and the waiting hubs', goes back into r. */
static void all_set_aside_to_r(mkrt__traversal *t)
{
    far_restore(t, t->r, UINT64_MAX);
    hubs_to(t, t->r);
}

/* The end of the bucket that holds distance d (UINT64_MAX where it would
 * wrap: everything is in the last bucket). */
static uint64_t bucket_above(const mkrt__graph_engine *e, uint64_t d)
{
    const uint64_t end = (d / e->bucket_width + 1) * e->bucket_width;
    return end < d ? UINT64_MAX : end;
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
    uint64_t n = t->x.queued ? t->x.rq_n : mkrt__bitmap_count(t->r, e->words);
    if (far && n < e->bucket_min)
        n += mkrt__bitmap_count(t->far, e->words);
    t->x.filter = false;
    if (near == UINT64_MAX || n < e->bucket_min) {
        all_set_aside_to_r(t);
        atomic_store_explicit(&t->next_min, UINT64_MAX, memory_order_relaxed);
        set_bound(t, 0);
        return;
    }
    const uint64_t bound = bucket_above(e, near);
    set_bound(t, bound > old ? bound : old);
    if (far && far_min < t->x.bound) {
        far_restore(t, t->r, t->x.bound);
        t->x.filter = true;
    }
    t->x.filter = t->x.filter || t->x.bound > old;
    atomic_store_explicit(&t->next_min, UINT64_MAX, memory_order_relaxed);
}

/* Of the lane's frontier word w (taken), the vertices below the bound
 * (a filtered level, see start_bucket); the others go back to far. The
 * vertices expanded leave far. The filter has no branch on a distance:
 * most of its reads miss, and a branch on each one's value would stall
 * the next read behind a mispredicted one (0.96x the time of an SSSP on
 * kron at 1 thread). relaxed: far's bits and far_min are also set by
 * the workers of a running round. */
static uint64_t in_bucket(mkrt__traversal *t, size_t w, uint64_t mask)
{
    uint64_t later = 0, least = UINT64_MAX;
    const uint64_t bound = t->x.bound;
    if (t->x.filter && bound != 0)
        for (uint64_t x = mask; x != 0; x &= x - 1) {
            const uint32_t bit = (uint32_t)__builtin_ctzll(x);
            const uint64_t d = value_now(t, (uint32_t)(w * 64 + bit));
            const uint64_t due = (uint64_t)(d < bound);
            later |= (due ^ 1) << bit;
            const uint64_t late = due ? UINT64_MAX : d;
            least = late < least ? late : least;
        }
    const uint64_t expand = mask & ~later;
    if (later != 0) {
        atomic_fetch_or_explicit(&t->far[w], later, memory_order_relaxed);
        mkrt__graph_lower(&t->far_low[w], least);
        atomic_store_explicit(&t->far_any, true, memory_order_relaxed);
        mkrt__graph_lower(&t->far_min, least);
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
 * and their edges out, from the queue or the bitset. The edges are a read
 * of offsets per vertex, except where the level's vertices are all the
 * ones a pulled level's chunks put into w (pull_bfs counted their edges
 * then, with the rows at hand): the counts agree. relaxed (all): no batch
 * runs; visited is read by the workers after the launch (release). */
static void settle_level(mkrt__traversal *t, uint64_t *nf, uint64_t *mf)
{
    const mkrt__graph_engine *e = t->engine;
    const uint64_t *off = e->graph.offsets;
    const uint64_t marked = atomic_exchange_explicit(&t->pulled_marked, 0, memory_order_relaxed);
    const uint64_t degrees = atomic_exchange_explicit(&t->pulled_degrees, 0, memory_order_relaxed);
    if (t->x.queued) {
        for (uint64_t i = 0; i < t->x.rq_n; i++) {
            const uint32_t v = rq_at(t, i);
            if (v == MKRT__QUEUE_EMPTY)
                continue;
            const uint64_t bit = (uint64_t)1 << (v % 64);
            atomic_store_explicit(&t->visited[v / 64],
                                  atomic_load_explicit(&t->visited[v / 64], memory_order_relaxed) | bit,
                                  memory_order_relaxed);
            ++*nf;
        }
    } else {
        for (size_t w = 0; w < e->words; w++) {
            uint64_t x = atomic_load_explicit(&t->r[w], memory_order_relaxed);
            if (x == 0)
                continue;
            atomic_store_explicit(&t->visited[w], atomic_load_explicit(&t->visited[w], memory_order_relaxed) | x,
                                  memory_order_relaxed);
            *nf += mkrt__popcount64(x);
        }
    }
    if (*nf == marked) {
        *mf += degrees;
        return;
    }
    if (t->x.queued) {
        for (uint64_t i = 0; i < t->x.rq_n; i++) {
            const uint32_t v = rq_at(t, i);
            if (v != MKRT__QUEUE_EMPTY)
                *mf += off[v + 1] - off[v];
        }
        return;
    }
    for (size_t w = 0; w < e->words; w++)
        for (uint64_t x = atomic_load_explicit(&t->r[w], memory_order_relaxed); x != 0; x &= x - 1) {
            const uint32_t v = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(x));
            *mf += off[v + 1] - off[v];
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
    if (!aborting && t->buckets && !t->x.hubs_next)
        start_bucket(t);
    else if (t->x.hubs_next)
        t->x.filter = false; /* the bucket's hubs: below its bound, which stays */
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
        nf = t->x.queued ? t->x.rq_n : mkrt__bitmap_count(t->r, e->words);
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
        uint64_t n = mkrt__popcount64(open);
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
           !far_any(t) && !hubs_any(t) && !t->x.visited_dirty && t->x.bound == 0 &&
           !atomic_load_explicit(&t->any, memory_order_relaxed);
}

/* Whether a lane other than t (NULL: any lane) has work: a run of levels
 * gives way to it, and no lane is handed to a run while two have work
 * (their rounds share batches). Under the rounds' lock (the lanes' x is
 * written only under it); a run's lane counts without a look at its x. */
static bool others_wait(const mkrt__graph_engine *e, const mkrt__traversal *t)
{
    const uint32_t n = atomic_load_explicit((_Atomic uint32_t *)&e->nlanes, memory_order_acquire);
    uint32_t busy = 0;
    for (uint32_t l = 0; l < n; l++) {
        const mkrt__traversal *o = mkrt__lane_at(e, l);
        if (o != NULL && o != t &&
            (atomic_load_explicit((_Atomic bool *)&o->in_levels, memory_order_acquire) || o->x.active ||
             !lane_idle(o)) &&
            ++busy > (t == NULL ? 1u : 0u))
            return true;
    }
    return false;
}

enum { LANE_DONE, LANE_FULL, LANE_PULLED, LANE_PULL_WAITS, LANE_LEVELS, LANE_LEVELS_WAIT };

/* How a lane's levels run (take_lane): as rounds of chunks only; handed
 * to a run of levels at its next level if its kind runs them (a round of
 * its own); or inside
 * that run (the barrier's next_level: the lane's next level opens for the
 * workers' parts, nothing is written to items). */
enum { LEVELS_OFF, LEVELS_HAND, LEVELS_RUN };

/* A public BFS or SSSP runs its levels in the CPU pool's workers (a run
 * of levels); the cell lanes (their bits are set by other batches' ops,
 * their edges may fail one by one) run as rounds. The sweeps' phases are
 * runs too, handed by mkrt__sweep_take (graph/sweep.h). */
static bool lane_runs_levels(const mkrt__traversal *t)
{
    return t->lane >= MKRT__LANE_PUBLIC && (t->kind == MKRT__LANE_BFS || t->kind == MKRT__LANE_SSSP);
}

/* A run of levels: the level just started (start_level) is open to the
 * workers' parts. They take r's words, rq's entries or visited's words
 * (pulled) from part_next on, so the rounds' cursor is left used up: the
 * parts empty r's words and a queued level's entries themselves (a
 * pulled level's entries are emptied at the swap, as the rounds'). relaxed
 * (part_next): published by the launch or the barrier (release). */
static void open_level(mkrt__traversal *t)
{
    t->x.scanning = false;
    t->x.pull_pending = false;
    t->x.mask = 0;
    t->x.edge = t->x.end = 0;
    if (t->x.queued && !t->x.pull)
        t->x.rq_pos = t->x.rq_n;
    atomic_store_explicit(&t->part_next, 0, memory_order_relaxed);
}

/* WAKE at a level boundary (plan/decide.h): whether the open level runs
 * on the thread that opened it, from its edges out, counted until they
 * are enough to share (a pulled level's work is over the unsettled
 * vertices: always shared). relaxed: see the fields. */
static bool level_alone(const mkrt__traversal *t)
{
    const mkrt__graph_engine *e = t->engine;
    if (t->x.pull || !decision_on(e, MKRT_PLAN_WAKE))
        return false;
    const uint64_t *off = e->graph.offsets, enough = 2u * MKRT__SHARE_MIN_DEFAULT;
    uint64_t edges = 0;
    if (t->x.queued) {
        for (uint64_t i = 0; i < t->x.rq_n && edges < enough; i++) {
            const uint32_t v = rq_at(t, i);
            if (v != MKRT__QUEUE_EMPTY)
                edges += off[v + 1] - off[v];
        }
    } else {
        for (size_t w = 0; w < e->words && edges < enough; w++)
            for (uint64_t x = atomic_load_explicit(&t->r[w], memory_order_relaxed); x != 0; x &= x - 1) {
                const uint32_t v = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(x));
                edges += off[v + 1] - off[v];
            }
    }
    return mkrt__decide_level_alone(edges, true);
}

/* The lane's share of a round: pushed chunks into items[*k..], up to cap
 * edges in all; or, when nothing was taken yet, a pulled round, or the
 * lane's next level as a run of levels (levels, above). */
static int take_lane(mkrt__traversal *t, mkrt_item *items, size_t *k, uint64_t *edges, uint64_t cap,
                     bool batch_running, bool aborting, int levels)
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
        t->x.light = false;
        all_set_aside_to_r(t);
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
                   atomic_load_explicit(&t->any, memory_order_relaxed)) {
            /* A run of levels is a round of its own. The lane's kind is
             * read only now: it has work, so it is open (traversal.c
             * writes the kind of a finished one). */
            const bool run = levels == LEVELS_RUN || (levels == LEVELS_HAND && lane_runs_levels(t));
            if (run && *k > 0)
                return LANE_LEVELS_WAIT;
            /* The next level: no batch runs, so no op sets bits now; the
             * launch of the round (or the run's barrier) publishes the swap
             * to the workers. */
            atomic_store_explicit(&t->any, false, memory_order_relaxed);
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
            /* A run's level under a bound runs its hubs' light edges only,
             * where the engine has them apart (part_expand). */
            t->x.light = run && !aborting && t->x.bound != 0 && e->light != NULL && !t->x.hubs_next;
            t->x.hubs_next = false;
            t->x.swapped = true;
            if (run) {
                open_level(t);
                t->x.alone = level_alone(t);
                return LANE_LEVELS;
            }
        } else if (t->x.took || batch_running) {
            /* Its chunks of this round (or a batch) have yet to run: what
             * they mark decides whether the lane's run goes on. */
            return LANE_DONE;
        } else if (!t->x.swapped && hubs_any(t)) {
            /* The bucket's levels are done: its hubs' whole rows are its
             * last level (their heavy edges reach past its bound). */
            hubs_to(t, t->w);
            t->x.hubs_next = true;
            t->x.hub_levels++;
            atomic_store_explicit(&t->any, true, memory_order_relaxed);
        } else if (!t->x.swapped && far_any(t)) {
            /* The bucket is done: far's next bucket is the next level
             * (the words that may hold it; start_bucket's filter sends
             * their vertices above it back). */
            far_restore(t, t->w, bucket_above(e, atomic_load_explicit(&t->far_min, memory_order_relaxed)));
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
    bool all = true;
    for (uint32_t l = MKRT__LANE_PUBLIC; l < n; l++) {
        mkrt__traversal *t = mkrt__lane_at(e, l);
        if (t == NULL)
            continue;
        /* acquire: pairs with the starter's release (its values and bits). */
        uint64_t started = atomic_load_explicit(&t->started, memory_order_acquire);
        if (started != t->x.seen && atomic_load_explicit(&t->in_levels, memory_order_acquire)) {
            /* Its last run's barrier has yet to give the lane back (it
             * finished it first): a later round takes the start up. */
            all = false;
        } else if (started != t->x.seen) {
            t->x.seen = started;
            t->x.active = true;
            const uint64_t *off = e->graph.offsets;
            if (mkrt__graph_device_claim(t)) {
                /* the device runs it whole (graph/device.c) */
            } else if (t->kind == MKRT__LANE_CC || t->kind == MKRT__LANE_PR) {
                mkrt__sweep_begin(t); /* no frontier: phases over blocks */
            } else if (off[t->root] != off[t->root + 1]) {
                /* relaxed: no batch runs the lane (settle_level). */
                atomic_store_explicit(&t->pulled_marked, 0, memory_order_relaxed);
                atomic_store_explicit(&t->pulled_degrees, 0, memory_order_relaxed);
                const uint64_t bit = (uint64_t)1 << (t->root % 64);
                if (!(atomic_fetch_or_explicit(&t->w[t->root / 64], bit, memory_order_relaxed) & bit))
                    mkrt__queue_add_one(t, t->root); /* QUEUE */
                atomic_store_explicit(&t->any, true, memory_order_relaxed);
            }
            t->run_edges_base = atomic_load_explicit(&t->edges, memory_order_relaxed);
        }
    }
    /* relaxed: read by idle dispatchers as a hint (mkrt__graph_wants). */
    if (all)
        atomic_store_explicit(&e->starts_seen, s, memory_order_relaxed);
}

/* The lanes' round state, one writer at a time: the token holder's
 * rounds or a run's barrier (graph_internal.h, rounds_lock). acquire:
 * pairs with the release in rounds_unlock (the last writer's state). */
static void rounds_lock(mkrt__graph_engine *e)
{
    bool free_lock = false;
    while (!atomic_compare_exchange_weak_explicit(&e->rounds_lock, &free_lock, true, memory_order_acquire,
                                                  memory_order_relaxed)) {
        free_lock = false;
        mkrt__thread_yield();
    }
}

static void rounds_unlock(mkrt__graph_engine *e)
{
    /* release: pairs with the acquire in rounds_lock. */
    atomic_store_explicit(&e->rounds_lock, false, memory_order_release);
}

/* The round is lane t's run of levels, one item (MKRT__CHUNK_LEVELS). */
static void hand_run(mkrt__traversal *t, mkrt_item *items, mkrt__round *round)
{
    mkrt__chunk_put(&items[0], &(mkrt__chunk){t->lane, 0, MKRT__CHUNK_LEVELS});
    /* relaxed: the launch publishes it with the lane's state; the holder
     * itself reads it next. */
    atomic_store_explicit(&t->in_levels, true, memory_order_relaxed);
    round->n = 1;
    round->levels = true;
}

static mkrt__round round_take(mkrt__graph_engine *e, mkrt_item *items, bool batch_running)
{
    mkrt__round round = {0, 0, false, false};
    /* acquire: pairs with the release store of aborting. */
    const bool aborting = atomic_load_explicit(e->host.aborting, memory_order_acquire);
    const uint32_t n = atomic_load_explicit(&e->nlanes, memory_order_acquire);
    take_starts(e, n);
    const bool shared = others_wait(e, NULL); /* two lanes or more have work */
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
        if (atomic_load_explicit(&t->in_levels, memory_order_acquire))
            continue; /* its levels run in the workers (the run's barrier) */
        const bool may_run = !aborting && !shared;
        if (t->x.sweep) { /* CC, PageRank (graph/sweep.h): runs of phases, or rounds as pulled ones */
            int sw = mkrt__sweep_take(t, items, &round.n, lane_cap, batch_running, aborting, may_run);
            if (sw == MKRT__SWEEP_LEVELS) {
                hand_run(t, items, &round);
                break;
            }
            if (sw == MKRT__SWEEP_ROUND) {
                round.pull = true;
                break;
            }
            if (sw == MKRT__SWEEP_WAITS)
                next = l;
            continue;
        }
        int got = take_lane(t, items, &round.n, &round.edges, lane_cap, batch_running, aborting,
                            may_run ? LEVELS_HAND : LEVELS_OFF);
        if (got == LANE_LEVELS) {
            hand_run(t, items, &round);
            break;
        }
        if (got == LANE_PULLED) {
            round.pull = true;
            break;
        }
        if (got == LANE_PULL_WAITS || got == LANE_LEVELS_WAIT) {
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
        /* acquire: as above (a run's lane is the run's). */
        if (t != NULL && !atomic_load_explicit(&t->in_levels, memory_order_acquire))
            t->x.swapped = t->x.took = false;
    }
    if (!round.pull && round.edges != 0)
        /* relaxed: a statistic; the workers add theirs (apply.c, parts). */
        atomic_fetch_add_explicit(&e->edges, round.edges, memory_order_relaxed);
    return round;
}

mkrt__round mkrt__graph_round_take(mkrt__graph_engine *e, mkrt_item *items, bool batch_running)
{
    /* acquire: pairs with the release store in mkrt__graph_engine_set. */
    if (!atomic_load_explicit(&e->ready, memory_order_acquire))
        return (mkrt__round){0, 0, false, false};
    rounds_lock(e);
    mkrt__round r = round_take(e, items, batch_running);
    rounds_unlock(e);
    return r;
}

/* ---- runs of levels (plan/source.h: part, next_level) ----------------
 * A public BFS or SSSP's levels run in the CPU pool's workers, level after
 * level with a barrier, the way the device kernel runs them: each worker
 * claims parts of the open level straight from the frontier (a fetch-add
 * on part_next: bitset words, queue entries, or visited words when
 * pulled) and runs their vertices' edges as chunks (apply.c); the
 * barrier's last arriver swaps the frontier and makes the next level's
 * decisions (take_lane, start_level: PULL, QUEUE, the buckets) under the
 * rounds' lock. A part takes r's words (or rq's entries) itself, as the
 * rounds' cursor does: r is empty when the level ends. */
#define PART_WORDS 32u   /* bitset words a pushed part takes */
#define PART_ENTRIES 64u /* queue entries a queued part takes */
#define PART_PULLED 16u  /* visited words a pulled part takes (2 made about ten
                             RMWs per 128 vertices on lines every thread
                             writes: bench/results/graph.md, pulled parts) */
#define PART_ITEMS 64u   /* chunks run at once (apply.c runs ahead over them) */

typedef struct part_run {
    mkrt__graph_engine *e;
    mkrt__fail_list *fails;
    size_t n;
    uint64_t changed, edges;
    mkrt_item items[PART_ITEMS];
} part_run;

static void part_flush(part_run *p)
{
    if (p->n > 0)
        mkrt__graph_apply(p->e, p->items, 0, p->n, p->fails, &p->changed);
    p->n = 0;
}

static void part_chunk(part_run *p, const mkrt__chunk *c)
{
    mkrt__chunk_put(&p->items[p->n++], c);
    if (p->n == PART_ITEMS)
        part_flush(p);
}

/* Vertex v's edges, as the rounds' chunks of them. Its row (targets,
 * and weights where the kind reads them, or the interleaved rows) starts at a random place: its
 * first lines are fetched now, while the chunks put before it run
 * (apply.c runs them PART_ITEMS at a time). */
static void part_expand(part_run *p, mkrt__traversal *t, uint32_t v)
{
    const mkrt_graph *g = &p->e->graph;
    uint64_t first = g->offsets[v];
    const uint64_t end = g->offsets[v + 1];
    if (t->x.light && end - first >= MKRT__HUB_EDGES) {
        /* A hub of a light level: its light edges (the last of its row,
         * engine.c) now, its whole row at the bucket's end (relaxed: see
         * hubs). */
        const uint32_t light = p->e->light[v];
        if (light < end - first) {
            mkrt__bitmap_set(t->hubs, v);
            mkrt__graph_raise(&t->hubs_any);
        }
        first = end - light;
    }
    if (first == end)
        return;
    if (p->e->rows != NULL && t->kind == MKRT__LANE_SSSP) {
        __builtin_prefetch(&p->e->rows[2 * first], 0, 3); /* interleaved (engine.c) */
        /* and its distance, which every relaxation of the row adds to
         * (apply.c reads it first): 0.94x the time of an SSSP on kron at
         * 1 thread (bench/results/kernels_profile.md, ninth session). */
        __builtin_prefetch(&t->values[v], 0, 3);
    } else {
        __builtin_prefetch(&g->targets[first], 0, 3);
        if (g->weights != NULL && t->kind == MKRT__LANE_SSSP)
            __builtin_prefetch(&g->weights[first], 0, 3);
    }
    for (uint64_t f = first; f < end; f += p->e->chunk)
        part_chunk(p, &(mkrt__chunk){t->lane, v, f});
    p->edges += end - first;
}

/* A pushed part's vertices, in order, PART_AHEAD ahead of the one being
 * expanded: their offsets (a random read each) are fetched while the
 * vertices before them expand. A sparse level (an SSSP bucket has a few
 * vertices per word) would otherwise wait for each row's offsets in turn. */
#define PART_AHEAD 16u

typedef struct part_ahead {
    const uint64_t *xs; /* the part's taken words */
    size_t i, n, w0;
    uint64_t left;      /* bits of xs[i] not yet passed */
} part_ahead;

static void part_ahead_step(part_ahead *a, const uint64_t *off)
{
    while (a->left == 0) {
        if (++a->i >= a->n)
            return;
        a->left = a->xs[a->i];
    }
    __builtin_prefetch(&off[(a->w0 + a->i) * 64 + (size_t)__builtin_ctzll(a->left)], 0, 3);
    a->left &= a->left - 1;
}

/* relaxed (all bits and entries): see the file's head; part_next hands
 * out disjoint ranges, so a pushed part's words of r are its own. */
static bool part_pushed(part_run *p, mkrt__traversal *t)
{
    const size_t words = p->e->words;
    const uint64_t w0 = atomic_fetch_add_explicit(&t->part_next, PART_WORDS, memory_order_relaxed);
    if (w0 >= words)
        return false;
    const size_t n = words - w0 < PART_WORDS ? words - (size_t)w0 : PART_WORDS;
    uint64_t xs[PART_WORDS];
    for (size_t i = 0; i < n; i++) {
        const size_t w = (size_t)w0 + i;
        uint64_t x = atomic_load_explicit(&t->r[w], memory_order_relaxed);
        if (x != 0) {
            atomic_store_explicit(&t->r[w], 0, memory_order_relaxed);
            if (t->buckets)
                x = in_bucket(t, w, x);
        }
        xs[i] = x;
    }
    const uint64_t *off = p->e->graph.offsets;
    part_ahead a = {xs, 0, n, (size_t)w0, xs[0]};
    for (unsigned k = 0; k < PART_AHEAD; k++)
        part_ahead_step(&a, off);
    for (size_t i = 0; i < n; i++)
        for (uint64_t x = xs[i]; x != 0; x &= x - 1) {
            part_ahead_step(&a, off);
            part_expand(p, t, (uint32_t)(((size_t)w0 + i) * 64 + (size_t)__builtin_ctzll(x)));
        }
    return true;
}

/* QUEUE: entries of rq; each is emptied for when rq is the next wq, and
 * clears its vertex's bit of r (other parts clear other bits of the
 * word: an atomic AND). */
static bool part_queued(part_run *p, mkrt__traversal *t)
{
    const uint64_t n = t->x.rq_n;
    const uint64_t i0 = atomic_fetch_add_explicit(&t->part_next, PART_ENTRIES, memory_order_relaxed);
    if (i0 >= n)
        return false;
    const uint64_t end = n - i0 < PART_ENTRIES ? n : i0 + PART_ENTRIES;
    for (uint64_t i = i0; i < end; i++) {
        const uint32_t v = rq_at(t, i);
        if (v != MKRT__QUEUE_EMPTY)
            __builtin_prefetch(&p->e->graph.offsets[v], 0, 3);
    }
    for (uint64_t i = i0; i < end; i++) {
        const uint32_t v = rq_at(t, i);
        if (v == MKRT__QUEUE_EMPTY)
            continue; /* an entry its block left unused */
        atomic_store_explicit(&t->rq[i], MKRT__QUEUE_EMPTY, memory_order_relaxed);
        const size_t w = v / 64;
        const uint64_t bit = (uint64_t)1 << (v % 64);
        uint64_t mask = atomic_fetch_and_explicit(&t->r[w], ~bit, memory_order_relaxed) & bit;
        if (mask != 0 && t->buckets)
            mask = in_bucket(t, w, mask);
        if (mask != 0)
            part_expand(p, t, v);
    }
    return true;
}

/* A pulled level: a pulled chunk per visited word with an unsettled
 * vertex (apply.c counts its edges). */
static bool part_pulled(part_run *p, mkrt__traversal *t)
{
    const mkrt__graph_engine *e = p->e;
    const uint64_t w0 = atomic_fetch_add_explicit(&t->part_next, PART_PULLED, memory_order_relaxed);
    if (w0 >= e->words)
        return false;
    const size_t end = e->words - w0 < PART_PULLED ? e->words : (size_t)w0 + PART_PULLED;
    for (size_t w = (size_t)w0; w < end; w++) {
        uint64_t open = ~atomic_load_explicit(&t->visited[w], memory_order_relaxed);
        if (e->graph.vertices - w * 64 < 64)
            open &= ((uint64_t)1 << (e->graph.vertices - w * 64)) - 1;
        if (open != 0)
            part_chunk(p, &(mkrt__chunk){t->lane, (uint32_t)(w * 64), MKRT__CHUNK_PULL});
    }
    return true;
}

bool mkrt__graph_level_part(mkrt__graph_engine *e, const mkrt_item *item, mkrt__fail_list *fails)
{
    mkrt__chunk c;
    mkrt__chunk_get(item, &c);
    mkrt__traversal *t = mkrt__lane_at(e, c.lane);
    part_run p;
    p.e = e;
    p.fails = fails;
    p.n = 0;
    p.changed = p.edges = 0;
    /* The level's state (x) was written before the launch or the barrier
     * that opened the level (release; this thread acquired it). */
    if (t->x.sweep) {
        uint64_t edges = 0;
        const bool more = mkrt__sweep_part(t, &edges);
        if (edges != 0) {
            /* relaxed: as a sweep round's (apply.c) and a part's below. */
            atomic_fetch_add_explicit(&e->pulled, edges, memory_order_relaxed);
            atomic_fetch_add_explicit(&e->edges, edges, memory_order_relaxed);
            atomic_fetch_add_explicit(&t->pulled_edges, edges, memory_order_relaxed);
        }
        return more;
    }
    const bool more = t->x.pull ? part_pulled(&p, t) : t->x.queued ? part_queued(&p, t) : part_pushed(&p, t);
    part_flush(&p);
    if (p.edges != 0) {
        /* relaxed: statistics and the run's emitted edges, read by the
         * token holder after the run completed (the pool's release, its
         * wait's acquire): ran() takes them as a pulled round's. */
        atomic_fetch_add_explicit(&e->pulled, p.edges, memory_order_relaxed);
        atomic_fetch_add_explicit(&e->edges, p.edges, memory_order_relaxed);
        atomic_fetch_add_explicit(&t->edges, p.edges, memory_order_relaxed);
    }
    if (p.changed != 0)
        /* relaxed: a statistic, as source.c's run. */
        atomic_fetch_add_explicit(e->host.changed, p.changed, memory_order_relaxed);
    return more;
}

bool mkrt__graph_next_level(mkrt__graph_engine *e, const mkrt_item *item, bool yield, bool *alone)
{
    mkrt__chunk c;
    mkrt__chunk_get(item, &c);
    mkrt__traversal *t = mkrt__lane_at(e, c.lane);
    *alone = false;
    rounds_lock(e);
    /* acquire: pairs with the release store of aborting. */
    const bool aborting = atomic_load_explicit(e->host.aborting, memory_order_acquire);
    bool go = false;
    if (yield || aborting || others_wait(e, t)) {
        /* The rounds take the lane from its level boundary; a pulled
         * level's frontier was read, not taken (as the swap would). */
        if (!t->x.sweep) /* a sweep's phase ended whole: the rounds begin the next */
            end_pulled_level(t);
        count(e, MKRT_PLAN_N_LEVEL_YIELDS);
    } else if (t->x.sweep) {
        go = mkrt__sweep_next(t);
        if (go)
            count(e, MKRT_PLAN_N_LEVELS_ON);
    } else {
        size_t k = 0;
        uint64_t edges = 0;
        t->x.swapped = t->x.took = false;
        /* No part runs: as a round with no batch running. Writes no item
         * (LEVELS_RUN: the next level opens for the parts). */
        go = take_lane(t, NULL, &k, &edges, 0, false, false, LEVELS_RUN) == LANE_LEVELS;
        t->x.swapped = false;
        if (go)
            count(e, MKRT_PLAN_N_LEVELS_ON);
        *alone = go && t->x.alone;
    }
    if (!go)
        /* release: pairs with the acquire loads of the holder's rounds:
         * the lane's state as the run left it. */
        atomic_store_explicit(&t->in_levels, false, memory_order_release);
    rounds_unlock(e);
    return go;
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
        /* acquire: pairs with the release that gave a run's lane back. */
        if (t != NULL && (atomic_load_explicit((_Atomic bool *)&t->in_levels, memory_order_acquire) ||
                          t->x.active || !lane_idle(t)))
            return true;
    }
    return false;
}

uint64_t mkrt__graph_pulled_take(mkrt__graph_engine *e)
{
    /* relaxed: the backend's completion (acquired by its wait) orders the
     * workers' adds; one pulled round runs at a time. */
    return atomic_exchange_explicit(&e->pulled, 0, memory_order_relaxed); /* apply.c counted e->edges */
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
