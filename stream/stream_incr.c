/* SPDX-License-Identifier: BSD-2-Clause */
/* src/stream/stream_incr.c - keeping BFS levels, SSSP distances and CC
 * labels exact as edges come and go, repairing only what changed.
 *
 * Every query is a monotone minimum: val[v] = min(start(v), min over edges
 * {x, v} of step(val[x], w)), with start the source's 0 (BFS, SSSP) or v
 * itself (CC). Each vertex remembers the neighbour its value came from
 * (parent): the dependency tree. A value is only ever set on a strict
 * improvement, so parents form a forest whose roots hold their start
 * values. The apply op runs, per query, over the log of a batch (the
 * graph already holds all of it), starting from the last fixpoint, where
 * values (BFS, SSSP) and depths (hops from the root, kept by every query)
 * grow strictly down the tree:
 *  1. a deletion of a tree edge (parent[v] == u) seeds v; a deletion of
 *     any other edge is safe and costs nothing. Seeds go in value (CC:
 *     depth) order; a seed that a neighbour gives the same value (BFS,
 *     SSSP: from a smaller value; CC: from a smaller depth, so never from
 *     below it) and that is not in a subtree reset before it is
 *     re-parented; otherwise it and the subtree below it (the neighbours
 *     whose parent is in it) are reset to start values;
 *  2. each reset vertex pulls the best value its neighbours offer;
 *  3. insertions whose edge is still there with that weight relax it
 *     both ways (improvements only);
 *  4. everything improved or pulled propagates, smallest value first.
 * Values outside the reset subtrees keep a parent chain of edges that
 * exist, so they are upper bounds, and every edge that may relax has its
 * source queued: the fixpoint reached equals a recompute (KickStarter's
 * trimming; the safe deletions are RisGraph's safe updates). */
#include <stdlib.h>
#include <string.h>

#include "base/alloc_internal.h"
#include "stream/stream_internal.h"

static uint64_t start_value(const mkrt__squery *q, uint32_t v)
{
    if (q->q.kind == MKRT_STREAM_CC)
        return v;
    return v == q->q.source ? 0 : MKRT_STREAM_UNREACHED;
}

/* ---- An indexed binary min-heap keyed by the query's values ------------- */

static void sift_up(mkrt__sscratch *w, const uint64_t *val, uint32_t i)
{
    uint32_t v = w->heap[i];
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (val[w->heap[p]] <= val[v])
            break;
        w->heap[i] = w->heap[p];
        w->hpos[w->heap[i]] = i;
        i = p;
    }
    w->heap[i] = v;
    w->hpos[v] = i;
}

static void push(mkrt__sscratch *w, const uint64_t *val, uint32_t v)
{
    if (w->hpos[v] == MKRT__SNONE) {
        w->heap[w->heap_n] = v;
        w->hpos[v] = w->heap_n++;
    }
    sift_up(w, val, w->hpos[v]); /* values only decrease while queued */
}

static uint32_t pop(mkrt__sscratch *w, const uint64_t *val)
{
    uint32_t top = w->heap[0], v = w->heap[--w->heap_n];
    w->hpos[top] = MKRT__SNONE;
    if (w->heap_n == 0)
        return top;
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= w->heap_n)
            break;
        if (c + 1 < w->heap_n && val[w->heap[c + 1]] < val[w->heap[c]])
            c++;
        if (val[w->heap[c]] >= val[v])
            break;
        w->heap[i] = w->heap[c];
        w->hpos[w->heap[i]] = i;
        i = c;
    }
    w->heap[i] = v;
    w->hpos[v] = i;
    return top;
}

/* ---- Changes --------------------------------------------------------------- */

static void dirty(mkrt_stream *s, mkrt__squery *q, uint32_t v)
{
    if (q->dstamp[v] != s->apply_no) {
        q->dstamp[v] = s->apply_no;
        q->cur[q->cur_n++] = v;
    }
}

static void set(mkrt_stream *s, mkrt__squery *q, uint32_t v, uint64_t value, uint32_t parent)
{
    q->val[v] = value;
    q->parent[v] = parent;
    q->depth[v] = parent == MKRT__SNONE ? 0 : q->depth[parent] + 1;
    dirty(s, q, v);
}

static uint32_t next_stamp(const mkrt_stream *s, mkrt__sscratch *w)
{
    if (++w->stamp == 0) {
        memset(w->mark, 0, (size_t)s->n * sizeof *w->mark);
        w->stamp = 1;
    }
    return w->stamp;
}

static uint64_t propagate(mkrt_stream *s, mkrt__sscratch *w, mkrt__squery *q)
{
    uint64_t relaxed = 0;
    while (w->heap_n > 0) {
        uint32_t x = pop(w, q->val);
        const mkrt__sadj *a = &s->adj[x];
        relaxed += a->deg;
        for (uint32_t i = 0; i < a->deg; i++) {
            uint32_t y = a->e[i].to;
            uint64_t c = mkrt__sstep(q->q.kind, q->val[x], a->e[i].w);
            if (c < q->val[y]) {
                set(s, q, y, c, x);
                push(w, q->val, y);
            }
        }
    }
    return relaxed;
}

static void relax(mkrt_stream *s, mkrt__sscratch *w, mkrt__squery *q, uint32_t x, uint32_t y, uint32_t wt)
{
    uint64_t c = mkrt__sstep(q->q.kind, q->val[x], wt);
    if (c < q->val[y]) {
        set(s, q, y, c, x);
        push(w, q->val, y);
    }
}

static const mkrt__slog_entry *entry(mkrt_stream *s, uint64_t i)
{
    /* relaxed: the apply op entered the gate with acquire. */
    const mkrt__slog_entry *ch = atomic_load_explicit(&s->chunk[i / MKRT__SLOG_CHUNK], memory_order_relaxed);
    return ch == NULL ? NULL : &ch[i % MKRT__SLOG_CHUNK];
}

/* Seeds sort by value, smallest first (qsort_r's context: the values). */
static int by_value(const void *a, const void *b, void *ctx)
{
    const uint64_t *val = ctx;
    uint64_t x = val[*(const uint32_t *)a], y = val[*(const uint32_t *)b];
    return x < y ? -1 : x > y;
}

/* Seeds sort by depth in the dependency tree, smallest first. */
static int by_depth(const void *a, const void *b, void *ctx)
{
    const uint32_t *depth = ctx;
    uint32_t x = depth[*(const uint32_t *)a], y = depth[*(const uint32_t *)b];
    return x < y ? -1 : x > y;
}

/* A seed that another neighbour gives the same value keeps it (a safe
 * deletion), re-parented. The neighbour must not hang below the seed: for
 * BFS and SSSP its value is smaller (values grow down the tree); for CC,
 * whose labels are equal down the tree, its depth is smaller (depths grow
 * down the tree at a fixpoint, KickStarter's level). Seeds go smallest
 * value (depth) first, so a reset subtree holding the neighbour is
 * already marked (in_s). */
static bool replaced(const mkrt_stream *s, const mkrt__sscratch *w, mkrt__squery *q, uint32_t v, uint32_t in_s, uint64_t *scanned)
{
    const mkrt__sadj *a = &s->adj[v];
    bool cc = q->q.kind == MKRT_STREAM_CC;
    *scanned += a->deg;
    for (uint32_t i = 0; i < a->deg; i++) {
        uint32_t x = a->e[i].to;
        if (w->mark[x] == in_s || q->val[x] == MKRT_STREAM_UNREACHED)
            continue;
        if (cc ? (q->val[x] == q->val[v] && q->depth[x] < q->depth[v])
               : (q->val[x] < q->val[v] && mkrt__sstep(q->q.kind, q->val[x], a->e[i].w) == q->val[v])) {
            q->parent[v] = x;
            q->depth[v] = q->depth[x] + 1; /* no deeper than before */
            return true;
        }
    }
    return false;
}

void mkrt__sincr_query(mkrt_stream *s, mkrt__sscratch *w, mkrt__squery *q, uint64_t n)
{
    uint64_t relaxed = 0;
    /* 1. Deleted tree edges seed (on the values and tree of the last
     *    fixpoint, where values and depths grow down the tree); a seed that cannot keep its value takes
     *    its subtree with it into the reset set (queue[0..qn)). */
    uint32_t seeded = next_stamp(s, w), stamp = next_stamp(s, w), ns = 0, qn = 0;
    for (uint64_t i = 0; i < n; i++) {
        const mkrt__slog_entry *e = entry(s, i);
        if (e == NULL || e->kind != MKRT__SOP_DELETE)
            continue;
        uint32_t child = q->parent[e->v] == e->u ? e->v : q->parent[e->u] == e->v ? e->u : MKRT__SNONE;
        if (child != MKRT__SNONE && w->mark[child] != seeded) {
            w->mark[child] = seeded;
            w->seeds[ns++] = child;
        }
    }
    if (ns > 1 && q->q.kind == MKRT_STREAM_CC)
        qsort_r(w->seeds, ns, sizeof *w->seeds, by_depth, q->depth);
    else if (ns > 1)
        qsort_r(w->seeds, ns, sizeof *w->seeds, by_value, q->val);
    for (uint32_t k = 0, head = 0; k < ns; k++) {
        uint32_t v = w->seeds[k];
        if (w->mark[v] == stamp || replaced(s, w, q, v, stamp, &relaxed))
            continue;
        w->mark[v] = stamp;
        w->queue[qn++] = v;
        for (; head < qn; head++) {
            uint32_t y = w->queue[head];
            const mkrt__sadj *a = &s->adj[y];
            relaxed += a->deg;
            for (uint32_t i = 0; i < a->deg; i++) {
                uint32_t x = a->e[i].to;
                if (q->parent[x] == y && w->mark[x] != stamp) {
                    w->mark[x] = stamp;
                    w->queue[qn++] = x;
                }
            }
        }
    }
    if (qn > 0) {
        for (uint32_t k = 0; k < qn; k++) {
            uint32_t y = w->queue[k];
            set(s, q, y, start_value(q, y), MKRT__SNONE);
        }
        /* 2. Each reset vertex pulls from its neighbours (the graph as it
         *    is now, insertions included). */
        for (uint32_t k = 0; k < qn; k++) {
            uint32_t y = w->queue[k], best_from = MKRT__SNONE;
            const mkrt__sadj *a = &s->adj[y];
            uint64_t best = q->val[y];
            relaxed += a->deg;
            for (uint32_t i = 0; i < a->deg; i++) {
                uint64_t c = mkrt__sstep(q->q.kind, q->val[a->e[i].to], a->e[i].w);
                if (c < best) {
                    best = c;
                    best_from = a->e[i].to;
                }
            }
            if (best_from != MKRT__SNONE)
                set(s, q, y, best, best_from);
            if (q->val[y] != MKRT_STREAM_UNREACHED)
                push(w, q->val, y);
        }
        atomic_fetch_add_explicit(&s->reset, qn, memory_order_relaxed); /* relaxed: a counter */
    }
    /* 3. Insertions relax their edge, if it is still there with that
     *    weight (one inserted and deleted again in the batch is not): the
     *    graph is asked only when both ends had a deletion in the batch. */
    uint32_t touched = next_stamp(s, w);
    for (uint64_t i = 0; i < n; i++) {
        const mkrt__slog_entry *e = entry(s, i);
        if (e != NULL && e->kind == MKRT__SOP_DELETE)
            w->mark[e->u] = w->mark[e->v] = touched;
    }
    for (uint64_t i = 0; i < n; i++) {
        const mkrt__slog_entry *e = entry(s, i);
        if (e != NULL && e->kind == MKRT__SOP_INSERT &&
            (w->mark[e->u] != touched || w->mark[e->v] != touched || mkrt__sgraph_weight(s, e->u, e->v) == e->w)) {
            relax(s, w, q, e->u, e->v, e->w);
            relax(s, w, q, e->v, e->u, e->w);
            relaxed += 2;
        }
    }
    /* 4. Propagate to the fixpoint. */
    relaxed += propagate(s, w, q);
    atomic_fetch_add_explicit(&s->relaxed, relaxed, memory_order_relaxed); /* relaxed: a counter */
}

uint64_t mkrt__sincr_begin(mkrt_stream *s, uint64_t n)
{
    if (++s->apply_no == 0) {
        for (uint32_t k = 0; k < s->cfg.queries; k++)
            memset(s->qs[k].dstamp, 0, (size_t)s->n * sizeof *s->qs[k].dstamp);
        s->apply_no = 1;
    }
    uint64_t ok = 0;
    for (uint64_t i = 0; i < n; i++) {
        const mkrt__slog_entry *e = entry(s, i);
        ok += e != NULL && e->kind != MKRT__SNONE;
    }
    return ok;
}

/* From scratch, into the writer's values and tree (load, and tests). */
void mkrt__sincr_full(mkrt_stream *s, uint32_t qi)
{
    mkrt__squery *q = &s->qs[qi];
    mkrt__sscratch *w = &s->scr[0];
    for (uint32_t v = 0; v < s->n; v++) {
        q->val[v] = start_value(q, v);
        q->parent[v] = MKRT__SNONE;
        q->depth[v] = 0;
    }
    w->heap_n = 0;
    if (q->q.kind != MKRT_STREAM_CC) {
        push(w, q->val, q->q.source);
        propagate(s, w, q);
    } else {
        /* Ascending order: the first vertex met of a component is its
         * smallest; a BFS from it gives the tree. */
        for (uint32_t r = 0; r < s->n; r++) {
            if (q->parent[r] != MKRT__SNONE || q->val[r] != r)
                continue;
            uint32_t head = 0, tail = 0;
            w->queue[tail++] = r;
            while (head < tail) {
                uint32_t x = w->queue[head++];
                const mkrt__sadj *a = &s->adj[x];
                for (uint32_t i = 0; i < a->deg; i++) {
                    uint32_t y = a->e[i].to;
                    if (q->val[y] > r) {
                        q->val[y] = r;
                        q->parent[y] = x;
                        q->depth[y] = q->depth[x] + 1;
                        w->queue[tail++] = y;
                    }
                }
            }
        }
    }
    q->cur_n = q->prev_n = 0;
}

static void scratch_free(const mkrt_stream *s, mkrt__sscratch *w)
{
    size_t n = s->n;
    mkrt__free(w->heap, n * sizeof(uint32_t));
    mkrt__free(w->hpos, n * sizeof(uint32_t));
    mkrt__free(w->mark, n * sizeof(uint32_t));
    mkrt__free(w->queue, n * sizeof(uint32_t));
    mkrt__free(w->seeds, n * sizeof(uint32_t));
    *w = (mkrt__sscratch){0};
}

int mkrt__sincr_scratch(const mkrt_stream *s, mkrt__sscratch *w)
{
    size_t n = s->n;
    w->heap = mkrt__alloc(n * sizeof(uint32_t), MKRT_CACHE_LINE);
    w->hpos = mkrt__alloc(n * sizeof(uint32_t), MKRT_CACHE_LINE);
    w->mark = mkrt__alloc_zeroed(n * sizeof(uint32_t), MKRT_CACHE_LINE);
    w->queue = mkrt__alloc(n * sizeof(uint32_t), MKRT_CACHE_LINE);
    w->seeds = mkrt__alloc(n * sizeof(uint32_t), MKRT_CACHE_LINE);
    if (w->heap == NULL || w->hpos == NULL || w->mark == NULL || w->queue == NULL || w->seeds == NULL) {
        scratch_free(s, w);
        return -1;
    }
    memset(w->hpos, 0xff, n * sizeof(uint32_t));
    w->heap_n = w->stamp = 0;
    return 0;
}

int mkrt__sincr_init(mkrt_stream *s)
{
    size_t n = s->n;
    if (mkrt__sincr_scratch(s, &s->scr[0]) != 0)
        return -1;
    for (uint32_t k = 0; k < s->cfg.queries; k++) {
        mkrt__squery *q = &s->qs[k];
        q->q = s->cfg.query[k];
        q->val = mkrt__alloc(n * sizeof(uint64_t), MKRT_CACHE_LINE);
        q->parent = mkrt__alloc(n * sizeof(uint32_t), MKRT_CACHE_LINE);
        q->depth = mkrt__alloc(n * sizeof(uint32_t), MKRT_CACHE_LINE);
        q->dstamp = mkrt__alloc_zeroed(n * sizeof(uint32_t), MKRT_CACHE_LINE);
        q->cur = mkrt__alloc(n * sizeof(uint32_t), MKRT_CACHE_LINE);
        q->prev = mkrt__alloc(n * sizeof(uint32_t), MKRT_CACHE_LINE);
        q->copy[0] = mkrt__alloc(n * sizeof(uint64_t), MKRT_CACHE_LINE);
        q->copy[1] = mkrt__alloc(n * sizeof(uint64_t), MKRT_CACHE_LINE);
        if (q->val == NULL || q->parent == NULL || q->depth == NULL || q->dstamp == NULL || q->cur == NULL || q->prev == NULL ||
            q->copy[0] == NULL || q->copy[1] == NULL)
            return -1;
        mkrt__sincr_full(s, k);
    }
    return 0;
}

void mkrt__sincr_free(mkrt_stream *s)
{
    size_t n = s->n;
    for (uint32_t t = 0; t < MKRT_STREAM_APPLY_THREADS_MAX; t++)
        scratch_free(s, &s->scr[t]);
    for (uint32_t k = 0; k < s->cfg.queries; k++) {
        mkrt__squery *q = &s->qs[k];
        mkrt__free(q->val, n * sizeof(uint64_t));
        mkrt__free(q->parent, n * sizeof(uint32_t));
        mkrt__free(q->depth, n * sizeof(uint32_t));
        mkrt__free(q->dstamp, n * sizeof(uint32_t));
        mkrt__free(q->cur, n * sizeof(uint32_t));
        mkrt__free(q->prev, n * sizeof(uint32_t));
        mkrt__free(q->copy[0], n * sizeof(uint64_t));
        mkrt__free(q->copy[1], n * sizeof(uint64_t));
    }
}
