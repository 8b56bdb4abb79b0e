/* SPDX-License-Identifier: BSD-2-Clause */
/* src/graph/engine.c - the graph engine: the registered graph (borrowed,
 * checked by the runtime), its cell lanes (RELAX's and the expanding user
 * ops'), and the table of lanes the rounds go through. */
#include "base/bitmap.h"
#include "base/error_internal.h"
#include "graph/graph_internal.h"

/* The width of the distance buckets (round.c): the mean weight over the
 * mean degree, delta-stepping's delta for random weights (BUCKET_EDGES
 * scales it; 1 measured best on Kronecker graphs, where 2 to 16 relaxed
 * 15% to 60% more edges). 1 without weights. */
#define BUCKET_EDGES 1u
/* Levels smaller than this expand every vertex: a round costs about as
 * much as relaxing some thousands of edges, more than deferring saves in
 * a small level (at scale 12 buckets made SSSP 5x slower; at scale 18
 * they halve the edges relaxed). */
#define BUCKET_MIN 4096u

static uint64_t bucket_width(const mkrt_graph *g)
{
    uint64_t edges = g->offsets[g->vertices], sum = 0;
    if (g->weights == NULL || edges == 0)
        return 1;
    for (uint64_t e = 0; e < edges; e++)
        sum += g->weights[e];
    uint64_t w = (uint64_t)((double)sum * BUCKET_EDGES * g->vertices / ((double)edges * (double)edges));
    return w > 0 ? w : 1;
}

mkrt__graph_engine *mkrt__graph_engine_create(const mkrt__graph_host *host)
{
    mkrt__graph_engine *e = mkrt__alloc_zeroed(sizeof *e, MKRT_CACHE_LINE);
    if (e == NULL)
        return NULL;
    if (mkrt__mutex_init(&e->lock) != 0) {
        mkrt__free(e, sizeof *e);
        return NULL;
    }
    e->host = *host;
    mkrt__waitq_init_symmetric(&e->finished_wq);
    e->chunk = host->max_batch < MKRT__CHUNK_EDGES_MAX ? (uint32_t)host->max_batch : MKRT__CHUNK_EDGES_MAX;
    e->lane_op[0] = MKRT_OP_RELAX;
    e->bucket_min = BUCKET_MIN;
    return e;
}

void mkrt__graph_engine_destroy(mkrt__graph_engine *e)
{
    if (e == NULL)
        return;
    for (uint32_t l = 0; l < MKRT__LANES; l++)
        mkrt__traversal_free(atomic_load_explicit(&e->lanes[l], memory_order_relaxed));
    while (e->retired != NULL) {
        mkrt__traversal *t = e->retired;
        e->retired = t->retired_next;
        mkrt__traversal_free(t);
    }
    mkrt__free(e->edged, e->words * sizeof *e->edged);
    mkrt__free(e->rows, e->rows_bytes);
    mkrt__free(e->light, (size_t)e->graph.vertices * sizeof *e->light);
    mkrt__mutex_destroy(&e->lock);
    mkrt__free(e, sizeof *e);
}

mkrt__waitq *mkrt__graph_finished_wq(mkrt__graph_engine *e)
{
    return &e->finished_wq;
}

const mkrt_graph *mkrt__graph_engine_graph(const mkrt__graph_engine *e)
{
    return e != NULL && e->graph.vertices != 0 ? &e->graph : NULL;
}

mkrt_status mkrt__graph_engine_check(const mkrt__graph_engine *e, const mkrt_graph *g, mkrt_error *err)
{
    (void)e;
    for (uint32_t v = 0; v < g->vertices; v++)
        if (g->offsets[v + 1] < g->offsets[v])
            return mkrt__error_set(err, MKRT_EINVAL,
                                   "mkrt_graph_register: offsets decrease at vertex %u (%llu, then "
                                   "%llu). Fix: offsets[v + 1] >= offsets[v] for every vertex.",
                                   v, (unsigned long long)g->offsets[v], (unsigned long long)g->offsets[v + 1]);
    return MKRT_OK;
}

uint32_t mkrt__graph_lane_claim(mkrt__graph_engine *e, uint32_t op)
{
    if (e->lanes_used == MKRT_OP_EXPANDING_MAX)
        return 0;
    uint32_t lane = ++e->lanes_used;
    e->lane_op[lane] = op;
    return lane;
}

void mkrt__graph_bucket_min_set(mkrt__graph_engine *e, uint64_t n)
{
    e->bucket_min = n;
}

/* g's rows interleaved (the engine's rows), or NULL: no weights, a size
 * that does not fit, or no memory. A failure costs only speed, so it is
 * not an error: the pushes read the separate arrays. */
static uint32_t *rows_make(const mkrt_graph *g, size_t *bytes)
{
    const uint64_t edges = g->offsets[g->vertices];
    *bytes = 0;
    if (g->weights == NULL || edges == 0 || edges > SIZE_MAX / (2 * sizeof(uint32_t)))
        return NULL;
    uint32_t *rows = mkrt__alloc_large((size_t)edges * 2 * sizeof *rows, MKRT_CACHE_LINE); /* read at random */
    if (rows == NULL)
        return NULL;
    for (uint64_t i = 0; i < edges; i++) {
        rows[2 * i] = g->targets[i];
        rows[2 * i + 1] = g->weights[i];
    }
    *bytes = (size_t)edges * 2 * sizeof *rows;
    return rows;
}

/* The hubs' rows (MKRT__HUB_EDGES) in the engine's rows list their light
 * edges (weight below the bucket width) last; light[v] counts them (0
 * for the other vertices). The order of a row's edges is the engine's
 * own: the built-in pushes that read rows take a minimum. */
static void rows_split(const mkrt_graph *g, uint32_t *rows, uint32_t *light, uint64_t width)
{
    for (uint32_t v = 0; v < g->vertices; v++) {
        uint64_t i = g->offsets[v], j = g->offsets[v + 1];
        const uint64_t end = j;
        light[v] = 0;
        if (j - i < MKRT__HUB_EDGES)
            continue;
        while (i < j) { /* heavy edges to [offsets[v], i), light ones to [j, end) */
            if (rows[2 * i + 1] >= width) {
                i++;
                continue;
            }
            j--;
            const uint32_t t = rows[2 * i], w = rows[2 * i + 1];
            rows[2 * i] = rows[2 * j];
            rows[2 * i + 1] = rows[2 * j + 1];
            rows[2 * j] = t;
            rows[2 * j + 1] = w;
        }
        light[v] = (uint32_t)(end - j);
    }
}

mkrt_status mkrt__graph_engine_set(mkrt__graph_engine *e, const mkrt_graph *g, mkrt_error *err)
{
    const size_t words = ((size_t)g->vertices + 63) / 64;
    mkrt__traversal *fresh[MKRT__LANE_PUBLIC] = {0};
    _Atomic uint64_t *edged = mkrt__alloc_zeroed(words * sizeof *edged, MKRT_CACHE_LINE);
    if (edged == NULL)
        return mkrt__error_set(err, MKRT_ENOMEM,
                               "mkrt_graph_register could not allocate the edge bitset of %u vertices "
                               "(%zu bytes). Fix: free memory.",
                               g->vertices, words * sizeof *edged);
    for (size_t w = 0; w < words; w++) { /* no batch runs: whole words */
        uint64_t x = 0;
        for (uint32_t v = (uint32_t)(w * 64); v < g->vertices && v < w * 64 + 64; v++)
            x |= (uint64_t)(g->offsets[v] != g->offsets[v + 1]) << (v % 64);
        mkrt__bitmap_word_set(edged, w, x);
    }
    const mkrt_graph was = e->graph;
    const size_t was_words = e->words;
    e->graph = *g;
    e->words = words;
    for (uint32_t l = 0; l < MKRT__LANE_PUBLIC; l++) {
        fresh[l] = mkrt__traversal_new(e, l, l == 0 ? MKRT__LANE_RELAX : MKRT__LANE_USER, false);
        if (fresh[l] == NULL) {
            for (uint32_t j = 0; j < l; j++)
                mkrt__traversal_free(fresh[j]);
            e->graph = was;
            e->words = was_words;
            mkrt__free(edged, words * sizeof *edged);
            return mkrt__error_set(err, MKRT_ENOMEM,
                                   "mkrt_graph_register could not allocate the frontiers of %u vertices "
                                   "(%zu bytes). Fix: free memory.",
                                   g->vertices, (size_t)MKRT__LANE_PUBLIC * MKRT__TRAV_WORD_ARRAYS * words * sizeof(uint64_t));
        }
    }
    e->bucket_width = bucket_width(g);
    /* No batch has run (registration precedes the first producer): no
     * worker reads the old bitset. */
    mkrt__free(e->edged, was_words * sizeof *e->edged);
    e->edged = edged;
    mkrt__free(e->rows, e->rows_bytes);
    mkrt__free(e->light, (size_t)was.vertices * sizeof *e->light);
    /* The rows are the last allocation (a test fails it alone); without
     * either, no level splits (round.c, part_expand). */
    e->light = g->weights != NULL ? mkrt__alloc((size_t)g->vertices * sizeof *e->light, MKRT_CACHE_LINE) : NULL;
    e->rows = rows_make(g, &e->rows_bytes);
    if (e->rows != NULL && e->light != NULL) {
        rows_split(g, e->rows, e->light, e->bucket_width);
    } else {
        mkrt__free(e->light, (size_t)g->vertices * sizeof *e->light);
        e->light = NULL;
    }
    /* Registration precedes the first producer: no round runs. Public
     * traversals of an earlier graph are closed by the runtime's check. */
    for (uint32_t l = 0; l < MKRT__LANE_PUBLIC; l++) {
        mkrt__traversal *old = atomic_load_explicit(&e->lanes[l], memory_order_relaxed);
        if (old != NULL) {
            old->retired_next = e->retired;
            e->retired = old;
        }
        fresh[l]->buckets = l == 0 && g->weights != NULL;
        /* release: pairs with the acquire in mkrt__lane_at. */
        atomic_store_explicit(&e->lanes[l], fresh[l], memory_order_release);
    }
    uint32_t n = atomic_load_explicit(&e->nlanes, memory_order_relaxed);
    if (n < MKRT__LANE_PUBLIC)
        atomic_store_explicit(&e->nlanes, MKRT__LANE_PUBLIC, memory_order_release);
    /* release: pairs with the dispatcher's acquire loads (round.c). */
    atomic_store_explicit(&e->ready, true, memory_order_release);
    return MKRT_OK;
}

uint32_t mkrt__graph_engine_traversals(const mkrt__graph_engine *e)
{
    /* relaxed: under the op table's lock, before producers (a hint otherwise). */
    uint32_t n = atomic_load_explicit((_Atomic uint32_t *)&e->nlanes, memory_order_relaxed);
    return n > MKRT__LANE_PUBLIC ? n - MKRT__LANE_PUBLIC : 0;
}
