/* SPDX-License-Identifier: BSD-2-Clause */
/* stream/stream_par.c - the graph changes of a large mkrt_stream_apply
 * batch, and the repair of a large log, on several threads: the caller
 * and mkrt_stream_config::apply_threads - 1 helpers the stream starts
 * and keeps asleep between batches (a mutex and two condition
 * variables: they block, never spin, on a machine they share).
 *
 * The rows are split into 8 parts per thread (ranges of vertices); a
 * thread claims whole parts from a counter, so the caller runs every
 * part itself when a helper is slow to wake. The owner of a part runs, in batch
 * order, each update's side on the rows it owns (an edge {u, v} is in row
 * u and in row v: mkrt__sgraph_half_*), so no two threads touch one row
 * and no lock is taken; both sides of an update decide alike (the graph
 * is symmetric and each row sees its updates in batch order). First each
 * part reserves room for its rows' insertions (a separate round: when
 * memory fails nothing has changed yet and the caller applies the batch
 * alone), then it applies, then it shrinks the rows a deletion left a
 * quarter full (a serial batch shrinks them as it goes; the contents and
 * order of every row are the same). The repair of a large log runs one
 * query per part (mkrt__spar_repair), each thread with its scratch. */
#include <string.h>

#include "base/alloc_internal.h"
#include "base/thread.h"
#include "stream/stream_internal.h"

/* Parts per thread: enough that the caller can take a late helper's share. */
#define PARTS_PER_THREAD 8u
#define PARTS_MAX (PARTS_PER_THREAD * MKRT_STREAM_APPLY_THREADS_MAX)

typedef struct helper_arg {
    mkrt_stream *s;
    uint32_t thread; /* 1.. (the caller is 0) */
} helper_arg;

struct mkrt__spool {
    uint32_t threads, parts, started;
    mkrt__thread th[MKRT_STREAM_APPLY_THREADS_MAX];
    helper_arg arg[MKRT_STREAM_APPLY_THREADS_MAX];
    mkrt__mutex m;
    mkrt__cond go, done;
    uint64_t gen;  /* rounds started (under m) */
    uint32_t busy; /* helpers still in this round (under m) */
    bool stop;
    void (*job)(mkrt_stream *s, uint32_t part, uint32_t thread);
    uint32_t round_parts; /* parts of this round */
    _Atomic uint32_t next_part; /* the round's next unclaimed part */
    _Atomic uint32_t failed;    /* a reservation failed this batch */
    /* The batch: its items, one entry each, each part's list of them
     * (order[off[p]..off[p+1]-1], in batch order: an update is in the
     * lists of both its rows' parts), the outcome of each list entry on
     * the part of its row out (res, beside order: each part writes its
     * own stretch), and per-row insert counts. */
    const mkrt_item *items;
    size_t n, cap;
    mkrt__spitem *it;
    uint32_t *order;
    int32_t *res;
    uint32_t off[PARTS_MAX + 1];
    uint32_t *cnt;
    /* A parallel repair: its log entries and the queries, costliest
     * kind first (SSSP, BFS, CC), one part each. */
    uint64_t log_n;
    uint32_t qorder[MKRT_STREAM_QUERIES_MAX];
};

/* Parts are ranges of vertex numbers: a row's entry (mkrt__sadj) and its
 * insert count then share cache lines with rows of the same part only
 * (hashed parts had the two threads writing one line: slower than one). */
static uint32_t part_of(const mkrt_stream *s, uint32_t v)
{
    return (uint32_t)((uint64_t)v * s->pool->parts / s->n);
}

/* Claims parts until none is left. */
static void work(mkrt_stream *s, uint32_t thread)
{
    mkrt__spool *p = s->pool;
    for (;;) {
        /* relaxed: the claim only has to be unique; the parts' data is
         * ordered by the round's mutex (started before, joined after). */
        uint32_t part = atomic_fetch_add_explicit(&p->next_part, 1, memory_order_relaxed);
        if (part >= p->round_parts)
            return;
        p->job(s, part, thread);
    }
}

static int helper(void *arg)
{
    mkrt_stream *s = ((helper_arg *)arg)->s;
    uint32_t thread = ((helper_arg *)arg)->thread;
    mkrt__spool *p = s->pool;
    uint64_t seen = 0;
    mkrt__mutex_lock(&p->m);
    for (;;) {
        while (p->gen == seen && !p->stop)
            mkrt__cond_wait(&p->go, &p->m);
        if (p->stop)
            break;
        seen = p->gen;
        mkrt__mutex_unlock(&p->m);
        work(s, thread);
        mkrt__mutex_lock(&p->m);
        if (--p->busy == 0)
            mkrt__cond_signal(&p->done);
    }
    mkrt__mutex_unlock(&p->m);
    return 0;
}

/* One round: every part of job, on the caller and the helpers. */
static void round_run(mkrt_stream *s, void (*job)(mkrt_stream *s, uint32_t part, uint32_t thread), uint32_t parts)
{
    mkrt__spool *p = s->pool;
    mkrt__mutex_lock(&p->m);
    p->job = job;
    p->round_parts = parts;
    atomic_store_explicit(&p->next_part, 0, memory_order_relaxed); /* relaxed: published by the mutex */
    p->busy = p->started;
    p->gen++;
    mkrt__cond_broadcast(&p->go);
    mkrt__mutex_unlock(&p->m);
    work(s, 0);
    mkrt__mutex_lock(&p->m);
    while (p->busy != 0)
        mkrt__cond_wait(&p->done, &p->m);
    mkrt__mutex_unlock(&p->m);
}

static void job_reserve(mkrt_stream *s, uint32_t part, uint32_t thread)
{
    (void)thread;
    mkrt__spool *p = s->pool;
    for (uint32_t k = p->off[part]; k < p->off[part + 1]; k++) {
        const mkrt_item *x = &p->items[p->order[k]];
        if (!p->it[p->order[k]].insert)
            continue;
        if (part_of(s, x->out) == part)
            p->cnt[x->out]++;
        if (part_of(s, x->in) == part)
            p->cnt[x->in]++;
    }
    for (uint32_t k = p->off[part]; k < p->off[part + 1]; k++) {
        const mkrt_item *x = &p->items[p->order[k]];
        if (!p->it[p->order[k]].insert)
            continue;
        for (int side = 0; side < 2; side++) {
            uint32_t v = side == 0 ? x->out : x->in;
            if (part_of(s, v) != part || p->cnt[v] == 0)
                continue;
            if (mkrt__sgraph_reserve(s, v, p->cnt[v]) != 0)
                atomic_store_explicit(&p->failed, 1, memory_order_relaxed); /* relaxed: read after the round's join */
            p->cnt[v] = 0;
        }
    }
}

static void job_apply(mkrt_stream *s, uint32_t part, uint32_t thread)
{
    (void)thread;
    mkrt__spool *p = s->pool;
    for (uint32_t k = p->off[part]; k < p->off[part + 1]; k++) {
        bool insert = p->it[p->order[k]].insert;
        const mkrt_item *x = &p->items[p->order[k]];
        if (part_of(s, x->out) == part) /* this entry is the item's at */
            p->res[k] = insert ? mkrt__sgraph_half_insert(s, x->out, x->in, x->param)
                               : (int)mkrt__sgraph_half_delete(s, x->out, x->in);
        if (part_of(s, x->in) == part) {
            int r = insert ? mkrt__sgraph_half_insert(s, x->in, x->out, x->param)
                           : (int)mkrt__sgraph_half_delete(s, x->in, x->out);
            (void)r; /* the same outcome as row out's side */
        }
    }
    for (uint32_t k = p->off[part]; k < p->off[part + 1]; k++) {
        const mkrt_item *x = &p->items[p->order[k]];
        if (p->it[p->order[k]].insert)
            continue;
        if (part_of(s, x->out) == part)
            mkrt__sgraph_trim(s, x->out);
        if (part_of(s, x->in) == part)
            mkrt__sgraph_trim(s, x->in);
    }
}

mkrt__spitem *mkrt__spar_items(mkrt_stream *s, const mkrt_item *items, size_t n)
{
    mkrt__spool *p = s->pool;
    if (p == NULL || n < MKRT__SPAR_MIN || n > UINT32_MAX / 2)
        return NULL;
    if (n > p->cap) {
        size_t cap = n > 2 * p->cap ? n : 2 * p->cap;
        mkrt__spitem *it = mkrt__alloc(cap * sizeof *it, MKRT_CACHE_LINE);
        uint32_t *order = mkrt__alloc(2 * cap * sizeof *order, MKRT_CACHE_LINE);
        int32_t *res = mkrt__alloc(2 * cap * sizeof *res, MKRT_CACHE_LINE);
        if (it == NULL || order == NULL || res == NULL) {
            mkrt__free(it, cap * sizeof *it);
            mkrt__free(order, 2 * cap * sizeof *order);
            mkrt__free(res, 2 * cap * sizeof *res);
            return NULL; /* the caller applies the batch alone */
        }
        mkrt__free(p->it, p->cap * sizeof *p->it);
        mkrt__free(p->order, 2 * p->cap * sizeof *p->order);
        mkrt__free(p->res, 2 * p->cap * sizeof *p->res);
        p->it = it;
        p->order = order;
        p->res = res;
        p->cap = cap;
    }
    p->items = items;
    p->n = n;
    for (size_t i = 0; i < n; i++)
        p->it[i].slot = NULL;
    return p->it;
}

/* Each part's list of the updates that change the graph (a counting sort
 * by part, batch order kept). */
static void lists(mkrt_stream *s)
{
    mkrt__spool *p = s->pool;
    uint32_t pos[PARTS_MAX + 1];
    memset(p->off, 0, sizeof p->off);
    for (size_t i = 0; i < p->n; i++) {
        if (p->it[i].slot == NULL)
            continue;
        uint32_t pu = part_of(s, p->items[i].out), pv = part_of(s, p->items[i].in);
        p->off[pu + 1]++;
        if (pv != pu)
            p->off[pv + 1]++;
    }
    for (uint32_t q = 0; q < p->parts; q++)
        p->off[q + 1] += p->off[q];
    memcpy(pos, p->off, sizeof pos);
    for (size_t i = 0; i < p->n; i++) {
        if (p->it[i].slot == NULL)
            continue;
        uint32_t pu = part_of(s, p->items[i].out), pv = part_of(s, p->items[i].in);
        p->it[i].at = pos[pu];
        p->order[pos[pu]++] = (uint32_t)i;
        if (pv != pu)
            p->order[pos[pv]++] = (uint32_t)i;
    }
}

void mkrt__spar_changes(mkrt_stream *s)
{
    mkrt__spool *p = s->pool;
    lists(s);
    atomic_store_explicit(&p->failed, 0, memory_order_relaxed); /* relaxed: published by the round's mutex */
    round_run(s, job_reserve, p->parts);
    if (atomic_load_explicit(&p->failed, memory_order_relaxed) != 0) { /* relaxed: after the join */
        /* Some row's room could not be had: nothing changed but room, so
         * the caller applies the batch alone, each update growing its
         * rows (and failing with MKRT_ENOMEM where they cannot grow). */
        for (size_t i = 0; i < p->n; i++) {
            const mkrt__spitem *e = &p->it[i];
            const mkrt_item *x = &p->items[i];
            if (e->slot != NULL)
                p->res[e->at] = e->insert ? mkrt__sgraph_insert(s, x->out, x->in, x->param)
                                          : (int)mkrt__sgraph_delete(s, x->out, x->in);
        }
        return;
    }
    round_run(s, job_apply, p->parts);
    int64_t net = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->it[i].slot != NULL && p->res[p->it[i].at] == 0)
            net += p->it[i].insert ? 1 : -1;
    /* relaxed: a count for stats (mkrt__sgraph_insert/_delete's). */
    if (net >= 0)
        atomic_fetch_add_explicit(&s->edges, (uint64_t)net, memory_order_relaxed);
    else
        atomic_fetch_sub_explicit(&s->edges, (uint64_t)-net, memory_order_relaxed);
}

static void job_repair(mkrt_stream *s, uint32_t part, uint32_t thread)
{
    mkrt__sincr_query(s, &s->scr[thread], &s->qs[s->pool->qorder[part]], s->pool->log_n);
}

bool mkrt__spar_repair(mkrt_stream *s, uint64_t n)
{
    mkrt__spool *p = s->pool;
    if (p == NULL || s->cfg.queries < 2 || n < MKRT__SPAR_MIN)
        return false;
    p->log_n = n;
    round_run(s, job_repair, s->cfg.queries);
    return true;
}

int mkrt__spar_outcome(const mkrt_stream *s, size_t i)
{
    return s->pool->res[s->pool->it[i].at];
}

void mkrt__spar_free(mkrt_stream *s)
{
    mkrt__spool *p = s->pool;
    if (p == NULL)
        return;
    mkrt__mutex_lock(&p->m);
    p->stop = true;
    mkrt__cond_broadcast(&p->go);
    mkrt__mutex_unlock(&p->m);
    for (uint32_t t = 0; t < p->started; t++)
        mkrt__thread_join_result(p->th[t], NULL);
    mkrt__cond_destroy(&p->go);
    mkrt__cond_destroy(&p->done);
    mkrt__mutex_destroy(&p->m);
    mkrt__free(p->it, p->cap * sizeof *p->it);
    mkrt__free(p->order, 2 * p->cap * sizeof *p->order);
    mkrt__free(p->res, 2 * p->cap * sizeof *p->res);
    mkrt__free(p->cnt, (size_t)s->n * sizeof *p->cnt);
    mkrt__free(p, sizeof *p);
    s->pool = NULL;
}

int mkrt__spar_init(mkrt_stream *s)
{
    uint32_t threads = s->cfg.apply_threads;
    if (threads <= 1)
        return 0;
    mkrt__spool *p = mkrt__alloc_zeroed(sizeof *p, MKRT_CACHE_LINE);
    if (p == NULL)
        return -1;
    p->cnt = mkrt__alloc_zeroed((size_t)s->n * sizeof *p->cnt, MKRT_CACHE_LINE);
    if (p->cnt == NULL || mkrt__mutex_init(&p->m) != 0) {
        mkrt__free(p->cnt, (size_t)s->n * sizeof *p->cnt);
        mkrt__free(p, sizeof *p);
        return -1;
    }
    int go = mkrt__cond_init(&p->go), done = mkrt__cond_init(&p->done);
    if (go != 0 || done != 0) {
        if (go == 0)
            mkrt__cond_destroy(&p->go);
        if (done == 0)
            mkrt__cond_destroy(&p->done);
        mkrt__mutex_destroy(&p->m);
        mkrt__free(p->cnt, (size_t)s->n * sizeof *p->cnt);
        mkrt__free(p, sizeof *p);
        return -1;
    }
    p->threads = threads;
    p->parts = threads * PARTS_PER_THREAD;
    s->pool = p;
    /* The costliest kinds first: a thread that takes SSSP takes little else. */
    static const mkrt_stream_kind by_cost[3] = {MKRT_STREAM_SSSP, MKRT_STREAM_BFS, MKRT_STREAM_CC};
    uint32_t nq = 0;
    for (int c = 0; c < 3; c++)
        for (uint32_t k = 0; k < s->cfg.queries; k++)
            if (s->cfg.query[k].kind == by_cost[c])
                p->qorder[nq++] = k;
    /* A helper repairs when there are 2 queries or more: its scratch. */
    for (uint32_t t = 1; t < threads && s->cfg.queries > 1; t++)
        if (mkrt__sincr_scratch(s, &s->scr[t]) != 0) {
            mkrt__spar_free(s);
            return -1;
        }
    for (uint32_t t = 0; t + 1 < threads; t++) {
        p->arg[t] = (helper_arg){s, t + 1};
        if (mkrt__thread_start(&p->th[t], helper, &p->arg[t]) != 0) {
            mkrt__spar_free(s);
            return -1;
        }
        p->started++;
    }
    return 0;
}
