/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/graph/sssp.c - SSSP rounds of the distributed engine.
 *
 * A round: the host lists the owned vertices whose distance fell since
 * their row was last scanned (best < done: the root, or vertices the
 * receive hook lowered), sorts them by distance and publishes one CHUNK
 * item per worker (every workers-th seed from its index). A CHUNK op runs
 * Dial's algorithm on its own bucket queue (weights 1..MKRT_MPI_GRAPH_WEIGHT_MAX, so the
 * queued distances lie within MKRT_MPI_GRAPH_WEIGHT_MAX of the current one: a circle of
 * MKRT_MPI_GRAPH_WEIGHT_MAX + 1 buckets): it pops the smallest distance, scans the row of
 * each vertex still at that distance and not yet scanned at it (`done`,
 * an atomic minimum, so two ops never scan a row at the same distance),
 * lowers local targets in `best` and queues them, and sends remote ones
 * as arrivals (deduplicated by sent_min). At one rank and one worker that
 * is Dijkstra with a bucket queue: every row once, no runtime item per
 * vertex. Arrivals lower `best` on their owner (receive hook) and are
 * picked up by the next round; done when no rank has a due vertex.
 *
 * One collective per round (mkrt__mpig_sssp_rounds): when its runtime is
 * quiescent, a rank contributes its due vertices per window of distance,
 * the arrivals it sent per destination rank, and the arrivals it sent per
 * window of their distance (counted by the senders: mkrt__mpig_count_sent). The
 * sum is the next round's plan: every rank knows how many arrivals will
 * reach it and waits for them locally (no second wave), and the windows
 * that hold a due vertex or an arrival are an over-estimate of those
 * that will hold a due vertex once the arrivals are in (an arrival that
 * does not lower its target is counted and not due): a window empty in
 * the sum is empty, so no round and no collective is spent on it, and
 * none is ended too early. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpig_state.h"

/* Weight order for one row's copy (insertion sort: rows are short, and a
 * hub's row is sorted once per open). */
static int by_weight(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int mkrt__mpig_sssp_open(mkrt_mpi_graph *e)
{
    e->nscratch = e->workers + 2;
    e->scratch = mkrt__alloc_zeroed(e->nscratch * sizeof *e->scratch, MKRT_CACHE_LINE);
    e->due = mkrt__alloc((size_t)e->vertices * sizeof *e->due, MKRT_CACHE_LINE);
    e->due2 = mkrt__alloc((size_t)e->vertices * sizeof *e->due2, MKRT_CACHE_LINE);
    e->csort = mkrt__alloc(((size_t)e->vertices + 4097u) * sizeof *e->csort, MKRT_CACHE_LINE);
    const uint64_t m = e->g->offsets[e->vertices];
    e->nwrow = m > 0 ? m : 1;
    e->wrow = mkrt__alloc(e->nwrow * sizeof *e->wrow, MKRT_CACHE_LINE);
    e->nlight = mkrt__alloc_zeroed((size_t)e->vertices * sizeof *e->nlight, MKRT_CACHE_LINE);
    e->hdone = mkrt__alloc((size_t)e->vertices * sizeof *e->hdone, MKRT_CACHE_LINE);
    if (e->scratch == NULL || e->due == NULL || e->due2 == NULL || e->csort == NULL ||
        e->wrow == NULL || e->nlight == NULL || e->hdone == NULL)
        return -1;
    for (unsigned i = 0; i < e->nscratch; i++)
        atomic_init(&e->scratch[i].busy, 0);
    return 0;
}

/* After the partition is known: the owned rows by weight (weight << 32 |
 * target), and how many of each are light (weight <= delta). */
void mkrt__mpig_sssp_rows(mkrt_mpi_graph *e)
{
    for (uint32_t v = 0; v < e->vertices; v++) {
        if (!mpig_mine(e, v))
            continue;
        const uint64_t lo = e->g->offsets[v], hi = e->g->offsets[v + 1];
        uint32_t light = 0;
        for (uint64_t i = lo; i < hi; i++) {
            const uint64_t w = e->g->weights != NULL ? e->g->weights[i] : 1; /* NULL: 1 */
            e->wrow[i] = w << 32 | e->g->targets[i];
            light += w <= e->delta;
        }
        qsort(e->wrow + lo, hi - lo, sizeof *e->wrow, by_weight);
        e->nlight[v] = light;
    }
}

int mkrt__mpig_sssp_ranks(mkrt_mpi_graph *e)
{
    const size_t size = (size_t)e->size;
    e->sent_to = mkrt__alloc(size * sizeof *e->sent_to, MKRT_CACHE_LINE);
    e->arr_bins = mkrt__alloc(MPIG_BINS * sizeof *e->arr_bins, MKRT_CACHE_LINE);
    e->wave = mkrt__alloc((3 + MPIG_BINS + size) * sizeof *e->wave, MKRT_CACHE_LINE);
    e->sent0 = mkrt__alloc(size * sizeof *e->sent0, MKRT_CACHE_LINE);
    if (e->sent_to == NULL || e->arr_bins == NULL || e->wave == NULL || e->sent0 == NULL)
        return -1;
    for (size_t r = 0; r < size; r++)
        atomic_init(&e->sent_to[r], 0);
    for (unsigned b = 0; b < MPIG_BINS; b++)
        atomic_init(&e->arr_bins[b], 0);
    return 0;
}

void mkrt__mpig_sssp_close(mkrt_mpi_graph *e)
{
    const size_t size = (size_t)e->size; /* as mkrt__mpig_sssp_ranks sized them (NULL: it did not run) */
    mkrt__free(e->sent_to, size * sizeof *e->sent_to);
    mkrt__free(e->arr_bins, MPIG_BINS * sizeof *e->arr_bins);
    mkrt__free(e->wave, (3 + MPIG_BINS + size) * sizeof *e->wave);
    mkrt__free(e->sent0, size * sizeof *e->sent0);
    for (unsigned i = 0; e->scratch != NULL && i < e->nscratch; i++)
        for (unsigned b = 0; b <= MKRT_MPI_GRAPH_WEIGHT_MAX; b++)
            mkrt__free(e->scratch[i].b[b].v, e->scratch[i].b[b].cap * sizeof *e->scratch[i].b[b].v);
    mkrt__free(e->scratch, e->nscratch * sizeof *e->scratch);
    mkrt__free(e->due, (size_t)e->vertices * sizeof *e->due);
    mkrt__free(e->due2, (size_t)e->vertices * sizeof *e->due2);
    mkrt__free(e->csort, ((size_t)e->vertices + 4097u) * sizeof *e->csort);
    mkrt__free(e->wrow, e->nwrow * sizeof *e->wrow);
    mkrt__free(e->nlight, (size_t)e->vertices * sizeof *e->nlight);
    mkrt__free(e->hdone, (size_t)e->vertices * sizeof *e->hdone);
}

/* Queues v in bucket b; false when out of memory. */
static bool push(mpig_bucket *b, uint32_t v)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 256;
        uint32_t *p = mkrt__alloc(cap * sizeof *p, MKRT_CACHE_LINE);
        if (p == NULL)
            return false;
        if (b->n > 0)
            memcpy(p, b->v, b->n * sizeof *p);
        mkrt__free(b->v, b->cap * sizeof *p);
        b->v = p;
        b->cap = cap;
    }
    b->v[b->n++] = v;
    return true;
}

/* Scans v's row at distance d (the edges `mode` takes): local targets
 * lowered (and queued, except in MPIG_HEAVY mode: they are due for a later
 * round), remote ones sent as arrivals. Adds the queued count to *queued. */
static mkrt_status relax(mkrt_mpi_graph *e, const mkrt_op_ctx *ctx, mpig_scratch *s, uint32_t v,
                         uint64_t d, size_t *queued)
{
    /* The row by weight: light edges (<= delta) first. */
    uint64_t lo = e->g->offsets[v], hi = e->g->offsets[v + 1];
    if (e->due_mode == MPIG_LIGHT)
        hi = lo + e->nlight[v];
    else if (e->due_mode == MPIG_HEAVY)
        lo += e->nlight[v];
    const uint64_t *row = e->wrow;
    mpig_stage stage = {.n = 0};
    mkrt_status st = MKRT_OK;
    for (uint64_t i = lo; i < hi && st == MKRT_OK; i++) {
        const uint32_t w = (uint32_t)row[i];
        const uint64_t nd = d + (row[i] >> 32);
        if (mpig_mine(e, w)) {
            if (mpig_min(&e->best[w], nd) > nd && s != NULL) {
                if (!push(&s->b[nd % (MKRT_MPI_GRAPH_WEIGHT_MAX + 1)], w))
                    st = MKRT_ENOMEM;
                ++*queued;
            }
            continue;
        }
        if (nd > ARRIVE_MAX)
            st = MKRT_EOVERFLOW; /* a distance of 2^31 - 4 or more does not fit an arrival */
        else if (mpig_min(&e->sent_min[w], nd) > nd) {
            st = mpig_stage_add(e, ctx, &stage, (mkrt_item){OP_SETTLE, v, w, ARRIVE | (uint32_t)nd});
        }
    }
    st = mpig_stage_end(e, ctx, &stage, st);
    atomic_fetch_add_explicit(&e->scanned, hi - lo, memory_order_relaxed); /* statistic */
    return st;
}

/* Dial's algorithm over every stride-th seed from first (see the top). */
static mkrt_status dial(mkrt_mpi_graph *e, const mkrt_op_ctx *ctx, mpig_scratch *s, uint32_t first)
{
    const uint32_t stride = e->due_stride, nseeds = e->due_n;
    uint32_t si = first;
    size_t queued = 0; /* entries in the buckets */
    uint64_t cur = 0;
    mkrt_status st = MKRT_OK;
    for (;;) {
        if (queued == 0) {
            if (si >= nseeds)
                break;
            cur = e->due[si].d;
        }
        if (cur >= e->due_bound)
            break; /* the rest stays due (best < done) for a later round */
        /* Seeds are sorted: those within the circle's span join now. */
        for (; si < nseeds && e->due[si].d <= cur + MKRT_MPI_GRAPH_WEIGHT_MAX; si += stride, queued++)
            if (!push(&s->b[e->due[si].d % (MKRT_MPI_GRAPH_WEIGHT_MAX + 1)], e->due[si].v))
                return MKRT_ENOMEM;
        mpig_bucket *b = &s->b[cur % (MKRT_MPI_GRAPH_WEIGHT_MAX + 1)];
        /* Weights are at least 1: nothing joins this bucket while it runs. */
        for (size_t k = 0; k < b->n && st == MKRT_OK; k++) {
            const uint32_t v = b->v[k];
            if (atomic_load_explicit(&e->best[v], memory_order_relaxed) != cur ||
                mpig_min(&e->done[v], cur) <= cur)
                continue; /* stale (a lower distance is queued) or scanned at cur already */
            if (e->due_mode == MPIG_ALL)
                mpig_min(&e->hdone[v], cur); /* its heavy edges too */
            st = relax(e, ctx, s, v, cur, &queued);
        }
        queued -= b->n;
        b->n = 0;
        if (st != MKRT_OK)
            break;
        cur++;
    }
    for (unsigned k = 0; k <= MKRT_MPI_GRAPH_WEIGHT_MAX; k++)
        s->b[k].n = 0; /* after a failure or the bound: start clean next time */
    return st;
}

mkrt_status mkrt__mpig_sssp_chunk(mkrt_mpi_graph *e, const mkrt_op_ctx *ctx, const mkrt_item *it)
{
    if (e->due_mode == MPIG_HEAVY) { /* settled vertices: their heavy edges, once */
        mkrt_status st = MKRT_OK;
        for (uint32_t k = it->in; k < e->due_n && st == MKRT_OK; k += e->due_stride)
            if (mpig_min(&e->hdone[e->due[k].v], e->due[k].d) > e->due[k].d)
                st = relax(e, ctx, NULL, e->due[k].v, e->due[k].d, NULL);
        return st;
    }
    for (unsigned i = 0; i < e->nscratch; i++) {
        mpig_scratch *s = &e->scratch[i];
        if (atomic_exchange_explicit(&s->busy, 1, memory_order_acq_rel) != 0)
            continue;
        mkrt_status st = dial(e, ctx, s, it->in);
        atomic_store_explicit(&s->busy, 0, memory_order_release); /* pairs with the exchange */
        return st;
    }
    return mkrt_op_emit(ctx, it, 1); /* every queue in use: run it again later */
}

static int by_distance(const void *a, const void *b)
{
    const mpig_seed *x = a, *y = b;
    return x->d < y->d ? -1 : x->d > y->d ? 1 : (x->v > y->v) - (x->v < y->v);
}

/* Sorts the n due vertices by distance, then vertex (they were listed by
 * vertex): a stable counting sort when their distances span at most
 * vertices + 4096 values (a window's do), else qsort. */
static void sort_due(mkrt_mpi_graph *e, uint32_t n)
{
    if (n < 2)
        return;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint32_t k = 0; k < n; k++) {
        lo = e->due[k].d < lo ? e->due[k].d : lo;
        hi = e->due[k].d > hi ? e->due[k].d : hi;
    }
    const uint64_t span = hi - lo + 1;
    if (span > (uint64_t)e->vertices + 4096u) {
        qsort(e->due, n, sizeof *e->due, by_distance);
        return;
    }
    uint32_t *at = e->csort;
    memset(at, 0, (size_t)(span + 1) * sizeof *at);
    for (uint32_t k = 0; k < n; k++)
        at[e->due[k].d - lo + 1]++;
    for (uint64_t i = 1; i <= span; i++)
        at[i] += at[i - 1];
    for (uint32_t k = 0; k < n; k++)
        e->due2[at[e->due[k].d - lo]++] = e->due[k];
    mpig_seed *t = e->due;
    e->due = e->due2;
    e->due2 = t;
}

/* One round: the owned vertices `take` picks (best in [lo_d, hi_d), and
 * due unless heavy), sorted by distance, published as CHUNK items (one
 * per worker). A publish failure is told to every rank with the next
 * counts (*failed). */
static void round_of(mkrt_mpi_graph *e, int mode, uint64_t lo_d, uint64_t hi_d, uint64_t *failed)
{
    const uint32_t lo = e->own_n > 0 ? e->own_lo : 0, hi = e->own_n > 0 ? lo + e->own_n : e->vertices;
    uint32_t n = 0;
    for (uint32_t v = lo; v < hi; v++) {
        if (!mpig_mine(e, v))
            continue;
        /* Relaxed: written before the last global quiescence (see the fields). */
        const uint64_t b = atomic_load_explicit(&e->best[v], memory_order_relaxed);
        if (b >= lo_d && b < hi_d &&
            b < atomic_load_explicit(mode == MPIG_HEAVY ? &e->hdone[v] : &e->done[v],
                                     memory_order_relaxed))
            e->due[n++] = (mpig_seed){b, v};
    }
    if (mode != MPIG_HEAVY)
        sort_due(e, n);
    e->due_n = n;
    e->due_mode = mode;
    e->due_bound = hi_d;
    e->due_stride = e->workers < n ? e->workers : (n > 0 ? n : 1);
    for (uint32_t k = 0; k < e->due_stride && n > 0; k++)
        e->seeds[k] = (mkrt_item){OP_SETTLE, k, k, CHUNK};
    if (n > 0 && mkrt_publish(e->producer, e->seeds, e->due_stride, MKRT_TIMEOUT_INFINITE, NULL) != MKRT_OK)
        *failed = 1;
}

/* How long a rank waits for its runtime before it joins the next count
 * (a busy rank still joins: a dead peer is caught by the layer's
 * collective timeout), and for the arrivals the count promised it. */
#define SLICE_NS 20000000u
#define ARRIVAL_WAIT_NS 30000000000u

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Waits until the layer has applied `want` arrivals in all (its received
 * count) and the runtime is quiescent; false after ARRIVAL_WAIT_NS. */
static bool await_arrivals(mkrt_mpi_graph *e, uint64_t want)
{
    const uint64_t t0 = mono_ns();
    mkrt_mpi_stats ms;
    for (unsigned spins = 0;; spins++) {
        mkrt_mpi_stats_read(e->mpi, &ms);
        if (ms.received >= want)
            break;
        if (mono_ns() - t0 > ARRIVAL_WAIT_NS)
            return false;
        if (spins < 64) {
            sched_yield();
        } else {
            struct timespec ts = {0, 10000};
            nanosleep(&ts, NULL);
        }
    }
    /* A batch the receive hook declined was published into the runtime. */
    return mkrt_quiesce(e->rt, ARRIVAL_WAIT_NS) == MKRT_OK;
}

/* One count: this rank's part (when its runtime is quiescent within a
 * slice), summed over the ranks into e->wave: [0] due vertices and
 * arrivals, [1] failed, [2] busy ranks, [3 ..] per window of delta from
 * base, then the arrivals sent to each rank since recv0/sent0. Failed
 * counts the runtime's items that failed since the search began
 * (failed0): a scan refused memory leaves its vertex due, and a round
 * that published it again would fail again for as long as memory stays
 * short (the rounds would never end). */
static void count_round(mkrt_mpi_graph *e, uint64_t base, uint64_t failed, uint64_t failed0,
                        const uint64_t *sent0)
{
    const uint32_t lo = e->own_n > 0 ? e->own_lo : 0, hi = e->own_n > 0 ? lo + e->own_n : e->vertices;
    uint64_t *w = e->wave;
    const size_t nw = 3 + MPIG_BINS + (size_t)e->size;
    memset(w, 0, nw * sizeof *w);
    const mkrt_status q = mkrt_quiesce(e->rt, SLICE_NS);
    mkrt_stats rs;
    w[1] = failed || (q != MKRT_OK && q != MKRT_ETIMEDOUT) ||
           (mkrt_stats_read(e->rt, &rs) == MKRT_OK && rs.failed != failed0);
    w[2] = q != MKRT_OK;
    if (q == MKRT_OK) { /* no op runs: the counters and best are stable here */
        uint64_t *bins = w + 3;
        for (unsigned b = 0; b < MPIG_BINS; b++) {
            /* Relaxed: ordered by the quiescence (see the fields). */
            bins[b] = atomic_load_explicit(&e->arr_bins[b], memory_order_relaxed);
            w[0] += bins[b];
        }
        for (uint32_t v = lo; v < hi; v++) {
            if (!mpig_mine(e, v))
                continue;
            /* Relaxed: the ops are quiescent; arrivals may still lower
             * best (hook): then the sender counted the new value. */
            const uint64_t b = atomic_load_explicit(&e->best[v], memory_order_relaxed);
            if (b >= atomic_load_explicit(&e->done[v], memory_order_relaxed))
                continue;
            const uint64_t bin = (b > base ? b - base : 0) / e->delta;
            w[0]++;
            bins[bin < MPIG_BINS - 1 ? bin : MPIG_BINS - 1]++;
        }
        for (int r = 0; r < e->size; r++) /* relaxed, as above */
            w[3 + MPIG_BINS + r] = atomic_load_explicit(&e->sent_to[r], memory_order_relaxed) - sent0[r];
    }
    mkrt_mpi_allreduce_sum(e->mpi, w, nw);
    e->coll++;
}

/* Delta-stepping between the ranks: the due vertices are counted per
 * bin of delta distances from `base` (summed over the ranks, with the
 * arrivals on their way: see the top, so every rank takes the same
 * window): the window starts at the first non-empty bin and covers the
 * next ones while their count stays at most `widen`. Light rounds scan
 * the window's due vertices' light edges (weight <= delta), as often as
 * arrivals lower some again; when nothing is due below the window's end
 * on any rank its distances are final and a heavy round scans the heavy
 * edges of the vertices below the end whose heavy edges were not scanned
 * at their distance (`hdone`). One rank (or a window past the counted
 * bins): all edges, no bound, Dijkstra by buckets. The arrivals of a
 * round are in (await_arrivals) before the next one is published. */
mkrt_status mkrt__mpig_sssp_rounds(mkrt_mpi_graph *e, uint64_t failed0)
{
    uint64_t base = 0; /* no due distance is below it (arrivals come from scans at base or more) */
    uint64_t win_hi = 0; /* the end of the last light window */
    uint64_t failed = 0;
    int heavy_due = 0; /* a light round ran in the window ending at win_hi */
    mkrt_mpi_stats ms;
    mkrt_mpi_stats_read(e->mpi, &ms); /* globally quiescent: nothing in flight */
    const uint64_t recv0 = ms.received;
    for (int r = 0; r < e->size; r++) /* relaxed: no op runs */
        e->sent0[r] = atomic_load_explicit(&e->sent_to[r], memory_order_relaxed);
    for (unsigned b = 0; b < MPIG_BINS; b++)
        atomic_store_explicit(&e->arr_bins[b], 0, memory_order_relaxed);
    e->arr_base = base;
    for (;;) {
        count_round(e, base, failed, failed0, e->sent0);
        const uint64_t *sums = e->wave;
        if (sums[1] != 0)
            return MKRT_ECLOSED;
        if (sums[2] != 0)
            continue; /* a rank's runtime is still busy: count again */
        /* Every rank is idle: the arrivals the count promised this rank. */
        if (!await_arrivals(e, recv0 + sums[3 + MPIG_BINS + e->rank])) {
            failed = 1; /* told to every rank by the next count */
            continue;
        }
        unsigned j = 0;
        while (sums[0] > 0 && sums[3 + j] == 0)
            j++;
        /* The next round's arrivals are counted from its base. */
        for (unsigned b = 0; b < MPIG_BINS; b++) /* relaxed: no op runs */
            atomic_store_explicit(&e->arr_bins[b], 0, memory_order_relaxed);
        if (heavy_due && (sums[0] == 0 || base + j * e->delta >= win_hi)) {
            heavy_due = 0; /* nothing due below win_hi: those distances are final */
            round_of(e, MPIG_HEAVY, 0, win_hi, &failed);
        } else if (sums[0] == 0) {
            return MKRT_OK;
        } else if (e->size == 1 || j == MPIG_BINS - 1) {
            base += j * e->delta;
            e->arr_base = base;
            round_of(e, MPIG_ALL, 0, UINT64_MAX, &failed);
        } else {
            uint64_t acc = sums[3 + j];
            unsigned k = 1;
            while (j + k < MPIG_BINS - 1 && acc + sums[3 + j + k] <= e->widen)
                acc += sums[3 + j + k++];
            base += j * e->delta;
            e->arr_base = base;
            win_hi = base + k * e->delta;
            heavy_due = 1;
            /* From 0, not base: a heavy round may have lowered a vertex
             * below base (a heavy edge of a vertex of an earlier window
             * that base passed before its heavy round); it counts in
             * window 0 and is scanned now. */
            round_of(e, MPIG_LIGHT, 0, win_hi, &failed);
        }
    }
}
