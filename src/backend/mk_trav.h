/* SPDX-License-Identifier: BSD-2-Clause */
/* src/backend/mk_trav.h - the device's traversal jobs (protocol.h,
 * "Traversal jobs") in C: BFS (direction-optimizing), SSSP, CC,
 * PageRank and a batch's RELAX job (over the cells, its first level
 * marked by the batch's RELAX items), run whole, level after level, with
 * the next level decided from the counts the level took. The device loop (mk_loop.h: the
 * simulated device and the stand-in driver) runs them as the kernel does
 * (src/cuda/megakernel.cu, step for step: the same levels, the same
 * bitmaps through base/bitmap.h, the same rule, ops/pull_rule.h); the
 * graph engine runs them on the host through the same calls when a job
 * batch comes back from a failed device (graph/device.c).
 *
 * The grid's blocks take a level's words grid-stride (block b: words b,
 * b + blocks, ...); here they run one after another, so the grid barrier
 * between levels is the order. Frontier bitmaps rotate over three (level
 * l reads F[l % 3], marks F[(l + 1) % 3] and zeroes F[(l + 2) % 3], which
 * no block reads or marks in level l), so no reset races with a read.
 * Header-only, for the stand-in driver (a separate shared object). */
#ifndef MKRT_BACKEND_MK_TRAV_H
#define MKRT_BACKEND_MK_TRAV_H

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "base/bitmap.h"
#include "cuda/protocol.h"
#include "ops/pull_rule.h"

#define MKRT__MK_UNREACHED UINT64_MAX

/* One job as the loop runs it: its record, its arrays (host views of
 * the device addresses) and the level's state. */
typedef struct mkrt__mk_trav {
    mkrt__mk_job *job;
    uint64_t *values;          /* BFS, SSSP */
    _Atomic uint32_t *labels;  /* CC */
    double *score;             /* PageRank */
    _Atomic uint32_t *contrib; /* PageRank: float bits */
    mkrt__bitmap *f[3], *visited;
    uint64_t words;
    uint32_t level;
    int live, pull;
    uint64_t nf, mf, unsettled; /* BFS: this level's vertices and edges, the edges not reached */
    uint64_t changed;           /* RELAX: the cells its edges lowered */
} mkrt__mk_trav;

static inline float mkrt__mk_float_of(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint32_t mkrt__mk_bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Job start: every bitmap clear, the root in F[0] (and visited). values
 * and aux hold the run's first values (the host wrote them). */
static inline void mkrt__mk_trav_begin(mkrt__mk_trav *t, const mkrt__mk_graph_view *g, uint64_t *values, void *aux,
                                       void *bits)
{
    mkrt__mk_job *j = t->job;
    t->words = mkrt__mk_frontier_words(g->vertices);
    for (int i = 0; i < 3; i++)
        t->f[i] = (mkrt__bitmap *)bits + (size_t)i * t->words;
    t->visited = (mkrt__bitmap *)bits + 3 * (size_t)t->words;
    for (uint64_t w = 0; w < 4 * t->words; w++)
        mkrt__bitmap_word_set((mkrt__bitmap *)bits, w, 0);
    t->values = values;
    t->labels = (_Atomic uint32_t *)(void *)values;
    t->score = (double *)(void *)values;
    t->contrib = (_Atomic uint32_t *)aux;
    t->level = 0;
    t->live = 1;
    t->pull = 0;
    t->changed = 0;
    j->levels_pushed = j->levels_pulled = j->edges = 0;
    j->iterations = 0;
    if (j->kind == MKRT_MK_JOB_BFS || j->kind == MKRT_MK_JOB_SSSP) {
        mkrt__bitmap_set(t->f[0], j->root);
        mkrt__bitmap_set(t->visited, j->root);
        t->nf = 1;
        t->mf = g->offsets[j->root + 1] - g->offsets[j->root];
        t->unsettled = g->offsets[g->vertices] - t->mf;
    }
}

/* A RELAX job's start (protocol.h, "RELAX batches"): its values are the
 * cells and its bitmaps the RELAX job's, clear but for F[0], which the
 * batch's layers marked (`marked` vertices: none, no level to run). */
static inline void mkrt__mk_trav_begin_relax(mkrt__mk_trav *t, const mkrt__mk_graph_view *g, uint64_t *cells,
                                             void *bits, uint64_t marked)
{
    t->words = mkrt__mk_frontier_words(g->vertices);
    for (int i = 0; i < 3; i++)
        t->f[i] = (mkrt__bitmap *)bits + (size_t)i * t->words;
    t->visited = (mkrt__bitmap *)bits + 3 * (size_t)t->words; /* unused */
    t->values = cells;
    t->labels = NULL;
    t->score = NULL;
    t->contrib = NULL;
    t->level = 0;
    t->live = marked != 0;
    t->pull = 0;
    t->changed = 0;
    t->job->levels_pushed = t->job->levels_pulled = t->job->edges = 0;
    t->job->iterations = 0;
}

/* BFS, pushed: block b's words of F[cur]; each vertex's edges claim
 * their unvisited targets (one claimer each: the visited bit). */
static inline void mkrt__mk_bfs_push(mkrt__mk_trav *t, const mkrt__mk_graph_view *g, uint32_t b, uint32_t blocks,
                                     uint64_t *nf, uint64_t *mf, uint64_t *edges)
{
    mkrt__bitmap *cur = t->f[t->level % 3], *nxt = t->f[(t->level + 1) % 3];
    const uint64_t depth = (uint64_t)(t->level + 1) << 32;
    for (uint64_t w = b; w < t->words; w += blocks)
        for (uint64_t mask = mkrt__bitmap_take(cur, w); mask != 0; mask &= mask - 1) {
            const uint32_t v = (uint32_t)(w * 64 + mkrt__bitmap_lowest(mask));
            for (uint64_t e = g->offsets[v]; e < g->offsets[v + 1]; e++) {
                const uint32_t u = g->targets[e];
                (*edges)++;
                if (mkrt__bitmap_set_new(t->visited, u)) {
                    /* relaxed: the level's barrier publishes it. */
                    atomic_store_explicit((_Atomic uint64_t *)&t->values[u], depth | v, memory_order_relaxed);
                    mkrt__bitmap_set(nxt, u);
                    (*nf)++;
                    *mf += g->offsets[u + 1] - g->offsets[u];
                }
            }
        }
}

/* BFS, pulled: block b's words of unvisited vertices; each takes the
 * first neighbour in F[cur] as its parent. A word is one block's, so the
 * visited bits it sets are its own. */
static inline void mkrt__mk_bfs_pull(mkrt__mk_trav *t, const mkrt__mk_graph_view *g, uint32_t b, uint32_t blocks,
                                     uint64_t *nf, uint64_t *mf, uint64_t *edges)
{
    const mkrt__bitmap *cur = t->f[t->level % 3];
    mkrt__bitmap *nxt = t->f[(t->level + 1) % 3];
    const uint64_t depth = (uint64_t)(t->level + 1) << 32;
    for (uint64_t w = b; w < t->words; w += blocks) {
        uint64_t todo = ~mkrt__bitmap_word(t->visited, w);
        if (w == t->words - 1 && g->vertices % 64 != 0)
            todo &= ((uint64_t)1 << (g->vertices % 64)) - 1;
        for (; todo != 0; todo &= todo - 1) {
            const uint32_t u = (uint32_t)(w * 64 + mkrt__bitmap_lowest(todo));
            for (uint64_t e = g->offsets[u]; e < g->offsets[u + 1]; e++) {
                const uint32_t p = g->targets[e];
                (*edges)++;
                if (mkrt__bitmap_test(cur, p)) {
                    /* relaxed: as in the push. */
                    atomic_store_explicit((_Atomic uint64_t *)&t->values[u], depth | p, memory_order_relaxed);
                    mkrt__bitmap_set(t->visited, u);
                    mkrt__bitmap_set(nxt, u);
                    (*nf)++;
                    *mf += g->offsets[u + 1] - g->offsets[u];
                    break;
                }
            }
        }
    }
}

/* SSSP: block b's words of F[cur]; each edge lowers its target's
 * distance (atomic minimum) and marks a lowered target for the next
 * level. Ends when a level marks nothing: every distance is final. A
 * RELAX job's level is the same over the cells, counting each lowering
 * (*changed, NULL for SSSP) and marking a lowered target only when it has
 * edges (mkrt__mk_relax_mark). */
static inline void mkrt__mk_sssp_level(mkrt__mk_trav *t, const mkrt__mk_graph_view *g, uint32_t b, uint32_t blocks,
                                       uint64_t *nf, uint64_t *edges, uint64_t *changed)
{
    mkrt__bitmap *cur = t->f[t->level % 3], *nxt = t->f[(t->level + 1) % 3];
    for (uint64_t w = b; w < t->words; w += blocks)
        for (uint64_t mask = mkrt__bitmap_take(cur, w); mask != 0; mask &= mask - 1) {
            const uint32_t v = (uint32_t)(w * 64 + mkrt__bitmap_lowest(mask));
            /* relaxed: read once; a later lowering marks v again. */
            const uint64_t d = atomic_load_explicit((_Atomic uint64_t *)&t->values[v], memory_order_relaxed);
            for (uint64_t e = g->offsets[v]; e < g->offsets[v + 1]; e++) {
                const uint32_t u = g->targets[e];
                (*edges)++;
                if (!mkrt__ops_atomic_min(&t->values[u], mkrt__ops_add_sat(d, g->weights != 0 ? g->weights[e] : 1)))
                    continue;
                if (changed == NULL) {
                    *nf += mkrt__bitmap_set_new(nxt, u);
                } else {
                    (*changed)++;
                    *nf += (uint64_t)mkrt__mk_relax_mark(g, nxt, u);
                }
            }
        }
}

/* Lowers label[i] to x (relaxed CAS loop: labels only go down); whether
 * it lowered it. */
static inline int mkrt__mk_label_min(_Atomic uint32_t *label, uint32_t i, uint32_t x)
{
    uint32_t was = atomic_load_explicit(&label[i], memory_order_relaxed);
    while (x < was)
        if (atomic_compare_exchange_weak_explicit(&label[i], &was, x, memory_order_relaxed, memory_order_relaxed))
            return 1;
    return 0;
}

/* CC: one sweep of block b's vertices: each edge takes both ends to the
 * smaller label (edges count both ways: weak components, as the CPU
 * engine's links). A sweep that lowers nothing ends the run: every
 * label is then its component's smallest vertex. */
static inline void mkrt__mk_cc_sweep(mkrt__mk_trav *t, const mkrt__mk_graph_view *g, uint32_t b, uint32_t blocks,
                                     uint64_t *changed, uint64_t *edges)
{
    for (uint64_t w = b; w < t->words; w += blocks)
        for (uint32_t v = (uint32_t)(w * 64); v < g->vertices && v < (w + 1) * 64; v++)
            for (uint64_t e = g->offsets[v]; e < g->offsets[v + 1]; e++) {
                const uint32_t u = g->targets[e];
                const uint32_t lv = atomic_load_explicit(&t->labels[v], memory_order_relaxed);
                const uint32_t lu = atomic_load_explicit(&t->labels[u], memory_order_relaxed);
                (*edges)++;
                if (lu < lv)
                    *changed += (uint64_t)mkrt__mk_label_min(t->labels, v, lu);
                else if (lv < lu)
                    *changed += (uint64_t)mkrt__mk_label_min(t->labels, u, lv);
            }
}

/* PageRank: one iteration over block b's vertices (as the CPU engine's:
 * each gathers its row's contributions, writes its score and its own
 * contribution at once); adds its L1 change. */
static inline void mkrt__mk_pr_iteration(mkrt__mk_trav *t, const mkrt__mk_graph_view *g, uint32_t b, uint32_t blocks,
                                         double *change, uint64_t *edges)
{
    const double d = t->job->damping, base = (1.0 - d) / g->vertices;
    for (uint64_t w = b; w < t->words; w += blocks)
        for (uint32_t v = (uint32_t)(w * 64); v < g->vertices && v < (w + 1) * 64; v++) {
            const uint64_t lo = g->offsets[v], hi = g->offsets[v + 1];
            double sum = 0;
            for (uint64_t e = lo; e < hi; e++)
                sum += mkrt__mk_float_of(atomic_load_explicit(&t->contrib[g->targets[e]], memory_order_relaxed));
            *edges += hi - lo;
            const double now = base + d * sum;
            *change += fabs(now - t->score[v]);
            t->score[v] = now;
            atomic_store_explicit(&t->contrib[v], mkrt__mk_bits_of(hi > lo ? (float)(now / (double)(hi - lo)) : 0.0f),
                                  memory_order_relaxed);
        }
}

/* One level (sweep, iteration) of a live job over `blocks` blocks, then
 * what the next one is (the kernel decides it alike in every block from
 * the counts, after the grid barrier). */
static inline void mkrt__mk_trav_level(mkrt__mk_trav *t, const mkrt__mk_graph_view *g, uint32_t blocks)
{
    mkrt__mk_job *j = t->job;
    uint64_t nf = 0, mf = 0, edges = 0;
    double change = 0;
    const uint64_t clear = (t->level + 2) % 3;
    for (uint32_t b = 0; b < blocks; b++) {
        for (uint64_t w = b; w < t->words; w += blocks) /* read last level, marked next level */
            mkrt__bitmap_word_set(t->f[clear], w, 0);
        if (j->kind == MKRT_MK_JOB_BFS)
            (t->pull ? mkrt__mk_bfs_pull : mkrt__mk_bfs_push)(t, g, b, blocks, &nf, &mf, &edges);
        else if (j->kind == MKRT_MK_JOB_SSSP)
            mkrt__mk_sssp_level(t, g, b, blocks, &nf, &edges, NULL);
        else if (j->kind == MKRT_MK_JOB_RELAX)
            mkrt__mk_sssp_level(t, g, b, blocks, &nf, &edges, &t->changed);
        else if (j->kind == MKRT_MK_JOB_CC)
            mkrt__mk_cc_sweep(t, g, b, blocks, &nf, &edges);
        else
            mkrt__mk_pr_iteration(t, g, b, blocks, &change, &edges);
    }
    /* The grid barrier: the level's counts are complete. */
    j->edges += edges;
    if (t->pull)
        j->levels_pulled++;
    else
        j->levels_pushed++;
    t->level++;
    if (j->kind == MKRT_MK_JOB_PR) {
        j->iterations++;
        t->live = change >= j->tolerance && j->iterations < j->max_iterations;
    } else if (j->kind == MKRT_MK_JOB_BFS) {
        t->unsettled -= mf < t->unsettled ? mf : t->unsettled;
        t->pull = j->pulls && mkrt__ops_pull_rule(nf, mf, t->unsettled, g->vertices, t->pull);
        t->nf = nf;
        t->mf = mf;
        t->live = nf != 0;
    } else {
        t->live = nf != 0;
    }
}

/* Runs jobs[0 .. n) at once to their ends: round after round, each live
 * job's next level; `pre(ctx, level)`, may be NULL, runs before each
 * round (the device loop's watchdog word and hang hook; nonzero: stop). */
static inline int mkrt__mk_trav_run(mkrt__mk_trav *ts, uint32_t n, const mkrt__mk_graph_view *g, uint32_t blocks,
                                    int (*pre)(void *ctx, uint32_t round), void *ctx)
{
    for (uint32_t round = 0;; round++) {
        int live = 0;
        for (uint32_t i = 0; i < n; i++)
            live |= ts[i].live;
        if (!live)
            return 0;
        if (pre != NULL && pre(ctx, round))
            return 1;
        for (uint32_t i = 0; i < n; i++)
            if (ts[i].live)
                mkrt__mk_trav_level(&ts[i], g, blocks);
    }
}

#endif
