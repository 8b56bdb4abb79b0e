/* SPDX-License-Identifier: BSD-2-Clause */
/* src/graph/apply.c - where a round's chunks run (any worker of the
 * backend that runs the round): a pushed chunk runs its lane's op on each
 * of its edges; a pulled chunk runs it, for each unsettled vertex of its
 * word, on the edges from the level's frontier until one changed it. */
#include "base/bitmap.h"
#include "graph/graph_internal.h"
#include "graph/sweep.h"
#include "ops/builtin_ops.h"

#define UNREACHED UINT64_MAX

/* A failure of a pulled edge: two consecutive pairs claimed at once,
 * (chunk index, status) and the edge index (low, high). A pulled round has
 * at most capacity / 2 vertices, each failing at most once. */
static inline void fail_list_add_edge(mkrt__fail_list *l, uint32_t index, uint32_t status, uint64_t edge)
{
    /* relaxed: hands out distinct slots, as mkrt__fail_list_add. */
    uint32_t at = atomic_fetch_add_explicit(&l->count, 2, memory_order_relaxed);
    if (at + 1 < l->capacity) {
        l->pairs[2 * at] = index;
        l->pairs[2 * at + 1] = status;
        l->pairs[2 * at + 2] = (uint32_t)edge;
        l->pairs[2 * at + 3] = (uint32_t)(edge >> 32);
    }
}

/* QUEUE (graph_internal.h): v's bit was just set in w by this thread's
 * OR: its entry in this thread's block of the level's queue. */
static _Thread_local struct {
    const mkrt__traversal *t;
    uint64_t epoch, next, end;
} qblock;

static inline void queue_add(mkrt__traversal *t, uint32_t v)
{
    /* relaxed: see the fields. */
    if (!atomic_load_explicit(&t->qon, memory_order_relaxed))
        return;
    const uint64_t epoch = atomic_load_explicit(&t->qepoch, memory_order_relaxed);
    if (qblock.t != t || qblock.epoch != epoch || qblock.next == qblock.end) {
        const uint64_t i = atomic_fetch_add_explicit(&t->wq_n, MKRT__QUEUE_BLOCK, memory_order_relaxed);
        qblock.t = t;
        qblock.epoch = epoch;
        qblock.next = i;
        qblock.end = i + MKRT__QUEUE_BLOCK;
    }
    const uint64_t i = qblock.next++;
    if (i < t->qcap)
        atomic_store_explicit(&t->wq[i], v, memory_order_relaxed);
    else /* full (wq_n says so at the swap): no more appends this level */
        atomic_store_explicit(&t->qon, false, memory_order_relaxed);
}

/* A pulling BFS's counts of the next frontier: the vertices whose bit
 * of w an op of this call set, and their edges (round.c, settle_level,
 * reads them at the swap to choose the next level's direction; when they
 * cover the whole frontier it needs no pass over it, a random read of
 * offsets per vertex on one thread while the others wait). Summed over
 * the chunks of one mkrt__graph_apply and added once at its end: added
 * per chunk they were two atomic adds per 64 vertices on one cache line
 * that every thread of the level writes. */
typedef struct level_counts {
    mkrt__traversal *t;
    uint64_t marked, degrees;
} level_counts;

static void level_counts_flush(level_counts *lc)
{
    if (lc->marked != 0) { /* then lc->t is the lane they were counted for */
        /* relaxed (both): read at the swap, after the barrier or the
         * batch's completion that orders this call before it. */
        atomic_fetch_add_explicit(&lc->t->pulled_marked, lc->marked, memory_order_relaxed);
        atomic_fetch_add_explicit(&lc->t->pulled_degrees, lc->degrees, memory_order_relaxed);
    }
    lc->marked = lc->degrees = 0;
}

static inline void level_count(level_counts *lc, mkrt__traversal *t, uint64_t marked, uint64_t degrees)
{
    if (lc->t != t) {
        level_counts_flush(lc);
        lc->t = t;
    }
    lc->marked += marked;
    lc->degrees += degrees;
}

/* relaxed (both): the bit and the flag are read by the dispatcher after
 * the batch's completion (acquire), or earlier with no harm: the items it
 * makes from them run in a later batch, which the launch orders after
 * this one. solo (the engine's host.solo, a constant where it is
 * inlined): one thread runs the ops, so the bit is set with a load and a
 * store, no locked OR. */
static inline __attribute__((always_inline)) bool lane_mark_as(const mkrt__graph_engine *e, mkrt__traversal *t,
                                                                uint32_t v, level_counts *lc, bool solo)
{
    if (v >= e->graph.vertices || !mkrt__bitmap_test(e->edged, v))
        return false; /* no edges */
    if (solo ? mkrt__bitmap_set_new_alone(t->w, v) : mkrt__bitmap_set_new(t->w, v)) {
        queue_add(t, v); /* QUEUE: this OR set it */
        if (lc != NULL)
            level_count(lc, t, 1, e->graph.offsets[v + 1] - e->graph.offsets[v]);
        mkrt__graph_raise(&t->any);
    }
    return true;
}

static inline bool lane_mark(const mkrt__graph_engine *e, mkrt__traversal *t, uint32_t v, level_counts *lc)
{
    return lane_mark_as(e, t, v, lc, false);
}

/* The same into far (distance buckets), at distance d: its word's lower
 * bound (far_low) goes down to d. solo: see lane_mark_as. */
static inline __attribute__((always_inline)) bool far_mark(const mkrt__graph_engine *e, mkrt__traversal *t, uint32_t v,
                                                           uint64_t d, bool solo)
{
    if (!mkrt__bitmap_test(e->edged, v))
        return false;
    if (solo) {
        (void)mkrt__bitmap_set_new_alone(t->far, v);
        (void)mkrt__graph_lower_alone(&t->far_low[v / 64], d);
    } else {
        mkrt__bitmap_set(t->far, v);
        mkrt__graph_lower(&t->far_low[v / 64], d);
    }
    mkrt__graph_raise(&t->far_any);
    return true;
}

bool mkrt__graph_mark(mkrt__graph_engine *e, uint32_t lane, uint32_t v)
{
    mkrt__traversal *t = lane < MKRT__LANES ? mkrt__lane_at(e, lane) : NULL;
    return t != NULL && lane_mark(e, t, v, NULL);
}

/* Edges [from, to) of a pushed chunk. */
static inline void chunk_range(const mkrt__graph_engine *e, const mkrt__chunk *c, uint64_t *from, uint64_t *to)
{
    const uint64_t end = e->graph.offsets[c->v + 1];
    *from = c->first;
    *to = end - c->first < e->chunk ? end : c->first + e->chunk;
}

/* Prefetching the values a range's chunks write: a cursor runs
 * EXPAND_AHEAD edges ahead of the one being run, across the chunks of the
 * range, and touches the target's value of each edge it passes, so the
 * random reads of a round overlap instead of queueing behind the op. 32
 * and 64 ran an SSSP on kron at 1 worker in 0.96x the time of 16 on an
 * EPYC with 1 MiB of L2 per core, the same at 2 workers
 * (bench/results/kernels_profile.md, tenth session). */
#define EXPAND_AHEAD 32u

/* Where a lane's pushes read their targets: the interleaved rows (target
 * at 2i, weight at 2i + 1; engine.c) for the built-in ops that read
 * weights (RELAX, SSSP) when the engine has them, else targets[i]. The
 * target of edge i is at [i << *shift]. */
static inline const uint32_t *lane_targets(const mkrt__graph_engine *e, const mkrt__traversal *t, unsigned *shift)
{
    const bool rows = e->rows != NULL && (t->kind == MKRT__LANE_RELAX || t->kind == MKRT__LANE_SSSP);
    *shift = rows ? 1 : 0;
    return rows ? e->rows : e->graph.targets;
}

typedef struct push_ahead {
    const mkrt_item *items;
    size_t k, to;
    uint64_t e, end;
    const uint64_t *values;
    const uint32_t *targets; /* lane_targets of the chunk's lane */
    const uint64_t *offs;
    unsigned shift;
} push_ahead;

/* The cursor enters a chunk of lane t: the arrays it prefetches from (a
 * pulling BFS's ops also read the new vertex's offsets: its degree,
 * lane_mark). */
static inline void ahead_lane(const mkrt__graph_engine *e, push_ahead *a, const mkrt__traversal *t)
{
    a->values = t->values;
    a->targets = lane_targets(e, t, &a->shift);
    a->offs = t->kind == MKRT__LANE_BFS && t->pulls ? e->graph.offsets : NULL;
}

static inline __attribute__((always_inline)) void ahead_step(const mkrt__graph_engine *e, push_ahead *a)
{
    while (a->e >= a->end) {
        if (++a->k >= a->to)
            return;
        mkrt__chunk c;
        mkrt__chunk_get(&a->items[a->k], &c);
        if (c.first >= MKRT__CHUNK_SWEEP) /* pulled or sweep: no edges to run ahead */
            return;
        ahead_lane(e, a, mkrt__lane_at(e, c.lane));
        chunk_range(e, &c, &a->e, &a->end);
    }
    const uint32_t tg = a->targets[a->e++ << a->shift];
    __builtin_prefetch(&a->values[tg], 1, 3);
    if (a->offs != NULL)
        __builtin_prefetch(&a->offs[tg], 0, 3);
}

/* *cell = min(*cell, v); true when it lowered it. solo (see
 * lane_mark_as): a load, a compare and a store; else an atomic minimum. */
static inline __attribute__((always_inline)) bool lower_value(uint64_t *cell, uint64_t v, bool solo)
{
    return solo ? mkrt__graph_lower_alone((_Atomic uint64_t *)cell, v) : mkrt__ops_atomic_min(cell, v);
}

/* Edges [from, to) of a chunk of a lane with distance buckets (graph/
 * round.c): a target lowered to the bound or above waits in far instead
 * of the next level. relaxed (all): the bound was set before the launch;
 * far, far_min and next_min are read by the dispatcher after the round's
 * completion. solo (a constant where it is inlined): one thread runs the
 * ops, no locked instruction per edge (0.97-0.99x the time of an SSSP on kron
 * at 1 thread: bench/results/kernels_profile.md). */
static inline __attribute__((always_inline)) uint64_t push_buckets(const mkrt__graph_engine *e, mkrt__traversal *t,
                                                                   push_ahead *a, uint64_t base, uint64_t from,
                                                                   uint64_t to, bool solo)
{
    uint64_t *values = t->values;
    const uint32_t *const rows = e->rows, *targets = e->graph.targets, *weights = e->graph.weights;
    const uint64_t bound = atomic_load_explicit(&t->bound, memory_order_relaxed);
    uint64_t least = UINT64_MAX, far_least = UINT64_MAX, changed = 0;
    for (uint64_t i = from; i < to; i++) {
        ahead_step(e, a);
        uint32_t w = rows ? rows[2 * i] : targets[i];
        uint64_t d = mkrt__ops_add_sat(base, rows ? rows[2 * i + 1] : weights ? weights[i] : 1);
        if (lower_value(&values[w], d, solo)) {
            changed++;
            if (bound != 0 && d >= bound) {
                if (far_mark(e, t, w, d, solo))
                    far_least = d < far_least ? d : far_least;
            } else if (lane_mark_as(e, t, w, NULL, solo)) {
                least = d < least ? d : least;
            }
        }
    }
    if (least != UINT64_MAX)
        mkrt__graph_lower(&t->next_min, least);
    if (far_least != UINT64_MAX)
        mkrt__graph_lower(&t->far_min, far_least);
    return changed;
}

/* A pushed chunk of a lane whose op is built in (RELAX, BFS, SSSP): one
 * atomic minimum per edge (solo: a load and a store, see lane_mark_as);
 * the source's value is read once, relaxed (other chunks of the round
 * may lower it meanwhile; then it is in the frontier again and expands
 * later). */
static inline __attribute__((always_inline)) uint64_t push_builtin_as(const mkrt__graph_engine *e, mkrt__traversal *t,
                                                                      const mkrt__chunk *c, push_ahead *a,
                                                                      level_counts *lc, bool solo)
{
    uint64_t from, to, changed = 0;
    chunk_range(e, c, &from, &to);
    uint64_t *values = t->values;
    const uint32_t *targets = e->graph.targets, *weights = e->graph.weights;
    uint64_t base = atomic_load_explicit((_Atomic uint64_t *)&values[c->v], memory_order_relaxed);
    if (base == UNREACHED)
        return 0;
    if (t->kind == MKRT__LANE_BFS) {
        const uint64_t nv = ((base >> 32) + 1) << 32 | c->v;
        level_counts *const counts = t->pulls ? lc : NULL; /* only a pulling lane settles */
        for (uint64_t i = from; i < to; i++) {
            ahead_step(e, a);
            uint32_t w = targets[i];
            /* relaxed: as mkrt__ops_atomic_min; most targets are settled. */
            if (atomic_load_explicit((_Atomic uint64_t *)&values[w], memory_order_relaxed) > nv &&
                lower_value(&values[w], nv, solo)) {
                changed++;
                (void)lane_mark_as(e, t, w, counts, solo);
            }
        }
        return changed;
    }
    /* The interleaved rows where the engine has them: one row start to
     * fetch instead of two (engine.c). */
    const uint32_t *const rows = e->rows;
    if (!t->buckets) {
        for (uint64_t i = from; i < to; i++) {
            ahead_step(e, a);
            uint32_t w = rows ? rows[2 * i] : targets[i];
            const uint64_t d = mkrt__ops_add_sat(base, rows ? rows[2 * i + 1] : weights ? weights[i] : 1);
            if (lower_value(&values[w], d, solo)) {
                changed++;
                (void)lane_mark_as(e, t, w, NULL, solo);
            }
        }
        return changed;
    }
    return push_buckets(e, t, a, base, from, to, solo);
}

static uint64_t push_builtin(const mkrt__graph_engine *e, mkrt__traversal *t, const mkrt__chunk *c, push_ahead *a,
                             level_counts *lc)
{
    return e->host.solo ? push_builtin_as(e, t, c, a, lc, true) : push_builtin_as(e, t, c, a, lc, false);
}

/* A pushed chunk of an expanding user op: the op on each edge. A failing
 * edge is reported as (k | j << 24, status): chunk k, its edge j. */
static uint64_t push_user(mkrt__graph_engine *e, mkrt__traversal *t, const mkrt__chunk *c, size_t k,
                          mkrt__fail_list *fails, push_ahead *a)
{
    uint64_t from, to, changed = 0, outer;
    chunk_range(e, c, &from, &to);
    const uint32_t op = e->lane_op[t->lane];
    const mkrt__op_entry *entry = &e->host.ops[op];
    struct mkrt__op_run run = {e->host.state, entry, false, false};
    mkrt_op_ctx ctx = {e->host.cells, e->host.ncells, entry->user, &e->graph, &run, 0};
    const uint32_t *targets = e->graph.targets, *weights = e->graph.weights;
    for (uint64_t i = from; i < to; i++) {
        ahead_step(e, a);
        mkrt_item edge = {op, c->v, targets[i], weights ? weights[i] : 1};
        run.changed = false;
        ctx.generation = mkrt__op_begin(&outer);
        mkrt_status st = mkrt__op_run_status(&run, entry->fn(&edge, &ctx));
        mkrt__op_end(outer);
        changed += run.changed;
        if (st != MKRT_OK)
            mkrt__fail_list_add(fails, (uint32_t)k | (uint32_t)(i - from) << 24, (uint32_t)st);
    }
    return changed;
}

#define PULL_AHEAD 4u
/* pull_bfs: its vertices test a bit per edge, little work per row. */
#define PULL_BFS_AHEAD 16u

static inline void pull_prefetch(const uint32_t *targets, const uint32_t *weights, const uint64_t *off, uint32_t v)
{
    __builtin_prefetch(&targets[off[v]], 0, 3);
    if (weights != NULL)
        __builtin_prefetch(&weights[off[v]], 0, 3);
}

/* A pulled chunk of a BFS: the unsettled vertices of one visited word,
 * each taking the first neighbour in the level's frontier as its parent
 * (GAPBS's bottom-up step). The chunk owns its 64 vertices in this round
 * (a pulled round has no other chunks of the lane), and the level is
 * strict (round.c), so an unsettled vertex is unreached (the visited
 * bits say so: its value is not read, 8 bytes a vertex that the level
 * streamed for nothing) and the depth is the level's: a plain store,
 * and one OR into the next frontier per chunk. */
static uint64_t pull_bfs(mkrt__graph_engine *e, mkrt__traversal *t, const mkrt__chunk *c, uint64_t *ran,
                         level_counts *lc)
{
    const mkrt_graph *g = &e->graph;
    const uint32_t first = c->v;
    const _Atomic uint64_t *level = t->r;
    /* relaxed: written by the dispatcher before the launch. */
    uint64_t todo = ~atomic_load_explicit(&t->visited[first / 64], memory_order_relaxed);
    if (g->vertices - first < 64)
        todo &= ((uint64_t)1 << (g->vertices - first)) - 1;
    const uint32_t *const targets = g->targets;
    const uint64_t *const off = g->offsets;
    _Atomic uint64_t *values = (_Atomic uint64_t *)t->values;
    const uint64_t depth = (t->depth + 1) << 32;
    uint64_t n = 0, marked = 0, degrees = 0;
    /* The rows' first lines, PULL_BFS_AHEAD vertices ahead of the one
     * being run: all of the word's rows at once (up to 64 loads) filled
     * the core's miss queue and cost 10-20% on urand (kron, whose rows
     * lie apart, needs the prefetch: 35% slower without it). */
    uint64_t ahead = todo;
    for (unsigned k = 0; k < PULL_BFS_AHEAD && ahead != 0; k++, ahead &= ahead - 1)
        pull_prefetch(targets, NULL, off, first + (uint32_t)__builtin_ctzll(ahead));
    for (; todo != 0; todo &= todo - 1) {
        const uint32_t bit = (uint32_t)__builtin_ctzll(todo), v = first + bit;
        if (ahead != 0) {
            pull_prefetch(targets, NULL, off, first + (uint32_t)__builtin_ctzll(ahead));
            ahead &= ahead - 1;
        }
        for (uint64_t i = off[v], end = off[v + 1]; i < end; i++) {
            const uint32_t u = targets[i];
            n++;
            if (mkrt__bitmap_test(level, u)) {
                /* relaxed: this chunk is the only writer of v in the
                 * round; read after the round's barrier or completion. */
                atomic_store_explicit(&values[v], depth | u, memory_order_relaxed);
                marked |= (uint64_t)1 << bit; /* it has edges: it joins the next level */
                degrees += end - off[v];
                break;
            }
        }
    }
    if (marked != 0) {
        /* relaxed: as lane_mark. */
        uint64_t fresh = marked & ~atomic_fetch_or_explicit(&t->w[first / 64], marked, memory_order_relaxed);
        if (fresh == marked)
            level_count(lc, t, mkrt__popcount64(fresh), degrees);
        for (; fresh != 0; fresh &= fresh - 1)
            queue_add(t, first + (uint32_t)__builtin_ctzll(fresh)); /* QUEUE */
        mkrt__graph_raise(&t->any);
    }
    *ran += n;
    return mkrt__popcount64(marked);
}

/* A pulled chunk: the unsettled vertices of one visited word, each
 * pulling from its frontier neighbours until one changed it. The level's
 * frontier (r) and the visited words change only between batches; relaxed
 * loads, as the ops only set bits of w meanwhile. A failing edge is
 * reported as two pairs (fail_list_add_edge). Adds the edges it ran
 * to *ran. */
static uint64_t pull_chunk(mkrt__graph_engine *e, mkrt__traversal *t, const mkrt__chunk *c, size_t k,
                           mkrt__fail_list *fails, uint64_t *ran)
{
    const mkrt_graph *g = &e->graph;
    const uint32_t first = c->v;
    const _Atomic uint64_t *level = t->r;
    /* relaxed: written by the dispatcher before the launch. */
    uint64_t todo = ~atomic_load_explicit(&t->visited[first / 64], memory_order_relaxed);
    if (g->vertices - first < 64)
        todo &= ((uint64_t)1 << (g->vertices - first)) - 1;
    const bool user = t->kind == MKRT__LANE_USER;
    const uint32_t op = user ? e->lane_op[t->lane] : 0;
    const mkrt__op_entry *entry = user ? &e->host.ops[op] : NULL;
    struct mkrt__op_run run = {e->host.state, entry, false, false};
    mkrt_op_ctx ctx = {e->host.cells, e->host.ncells, user ? entry->user : NULL, g, &run, 0};
    const uint32_t *const targets = g->targets, *const weights = g->weights;
    const uint64_t *const off = g->offsets;
    uint64_t *values = t->values;
    uint64_t changed = 0, n = 0, outer;
    uint64_t ahead = todo;
    for (unsigned i = 0; i < PULL_AHEAD && ahead != 0; i++, ahead &= ahead - 1)
        pull_prefetch(targets, weights, off, first + (uint32_t)__builtin_ctzll(ahead));
    for (; todo != 0; todo &= todo - 1) {
        const uint32_t v = first + (uint32_t)__builtin_ctzll(todo);
        if (ahead != 0) {
            pull_prefetch(targets, weights, off, first + (uint32_t)__builtin_ctzll(ahead));
            ahead &= ahead - 1;
        }
        for (uint64_t i = off[v], end = off[v + 1]; i < end; i++) {
            const uint32_t u = targets[i];
            if (!mkrt__bitmap_test(level, u))
                continue;
            n++;
            if (!user) { /* BFS: u is at the level's depth */
                uint64_t du = atomic_load_explicit((_Atomic uint64_t *)&values[u], memory_order_relaxed);
                if (mkrt__ops_atomic_min(&values[v], ((du >> 32) + 1) << 32 | u)) {
                    changed++;
                    (void)lane_mark(e, t, v, NULL);
                }
                break;
            }
            mkrt_item edge = {op, u, v, weights ? weights[i] : 1};
            run.changed = false;
            ctx.generation = mkrt__op_begin(&outer);
            mkrt_status st = mkrt__op_run_status(&run, entry->fn(&edge, &ctx));
            mkrt__op_end(outer);
            if (st != MKRT_OK) {
                fail_list_add_edge(fails, (uint32_t)k, (uint32_t)st, i);
                break;
            }
            if (run.changed) {
                changed++;
                break;
            }
        }
    }
    *ran += n;
    return changed;
}

void mkrt__graph_apply(mkrt__graph_engine *e, const mkrt_item *items, size_t from, size_t to,
                       mkrt__fail_list *fails, uint64_t *changed)
{
    uint64_t ch = 0, pulled = 0;
    level_counts lc = {NULL, 0, 0};
    push_ahead a = {items, from, to, 0, 0, NULL, NULL, NULL, 0};
    if (from < to) {
        mkrt__chunk c;
        mkrt__chunk_get(&items[from], &c);
        if (c.first < MKRT__CHUNK_SWEEP) {
            ahead_lane(e, &a, mkrt__lane_at(e, c.lane));
            chunk_range(e, &c, &a.e, &a.end);
            for (unsigned i = 0; i < EXPAND_AHEAD; i++)
                ahead_step(e, &a);
        }
    }
    for (size_t k = from; k < to; k++) {
        mkrt__chunk c;
        mkrt__chunk_get(&items[k], &c);
        mkrt__traversal *t = mkrt__lane_at(e, c.lane);
        if (c.first == MKRT__CHUNK_SWEEP)
            pulled += mkrt__sweep_apply(t, &c); /* a sweep's round: counted as a pulled one */
        else if (c.first == MKRT__CHUNK_PULL && t->kind == MKRT__LANE_BFS)
            ch += pull_bfs(e, t, &c, &pulled, &lc);
        else if (c.first == MKRT__CHUNK_PULL)
            ch += pull_chunk(e, t, &c, k, fails, &pulled);
        else if (t->kind == MKRT__LANE_USER)
            ch += push_user(e, t, &c, k, fails, &a);
        else
            ch += push_builtin(e, t, &c, &a, &lc);
    }
    *changed += ch;
    level_counts_flush(&lc);
    if (pulled != 0) {
        /* relaxed: read by the dispatcher after the round's completion
         * (the backend's release, its acquire). */
        atomic_fetch_add_explicit(&e->pulled, pulled, memory_order_relaxed);
        /* relaxed: a statistic, counted where it ran (a run of levels
         * ends its traversal before its batch completes). */
        atomic_fetch_add_explicit(&e->edges, pulled, memory_order_relaxed);
        /* A pulled or sweep round is one lane's: its counter (relaxed: a
         * statistic). */
        mkrt__chunk c;
        mkrt__chunk_get(&items[from], &c);
        atomic_fetch_add_explicit(&mkrt__lane_at(e, c.lane)->pulled_edges, pulled, memory_order_relaxed);
    }
}

uint64_t mkrt__graph_chunk_edge(const mkrt__graph_engine *e, const mkrt_item *chunk, uint32_t j, bool *exists)
{
    mkrt__chunk c;
    mkrt__chunk_get(chunk, &c);
    uint64_t from = 0, to = 0;
    if (c.first < MKRT__CHUNK_SWEEP) /* a sweep chunk's v is a block: no row */
        chunk_range(e, &c, &from, &to);
    *exists = c.first < MKRT__CHUNK_SWEEP && from + j < to;
    return from + j;
}

mkrt_item mkrt__graph_edge_item(const mkrt__graph_engine *e, const mkrt_item *chunk, uint64_t edge, bool pulled)
{
    mkrt__chunk c;
    mkrt__chunk_get(chunk, &c);
    const mkrt_graph *g = &e->graph;
    const uint32_t op = c.lane < MKRT__LANE_PUBLIC ? e->lane_op[c.lane] : MKRT_OP_NOP;
    const uint32_t w = g->weights ? g->weights[edge] : 1;
    if (!pulled)
        return (mkrt_item){op, c.v, g->targets[edge], w};
    /* The pulled vertex whose row holds the edge. */
    uint32_t v = c.v, last = g->vertices - v < 64 ? g->vertices - 1 : v + 63;
    while (v < last && g->offsets[v + 1] <= edge)
        v++;
    return (mkrt_item){op, g->targets[edge], v, w};
}

bool mkrt__graph_chunk_abandon(mkrt__graph_engine *e, const mkrt_item *chunk)
{
    mkrt__chunk c;
    mkrt__chunk_get(chunk, &c);
    mkrt__traversal *t = mkrt__lane_at(e, c.lane);
    if (t == NULL || c.lane < MKRT__LANE_PUBLIC)
        return t != NULL;
    /* relaxed: published by the finish's release store of finished. */
    atomic_store_explicit(&t->status, (int32_t)MKRT_ETIMEDOUT, memory_order_relaxed);
    return false;
}

bool mkrt__graph_chunk_pulled(const mkrt_item *chunk)
{
    mkrt__chunk c;
    mkrt__chunk_get(chunk, &c);
    return c.first == MKRT__CHUNK_PULL;
}
