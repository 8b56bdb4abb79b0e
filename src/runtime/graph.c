/* SPDX-License-Identifier: BSD-2-Clause */
/* src/runtime/graph.c - mkrt_graph_register: the read-only CSR graph the
 * ops read (borrowed, checked once), RELAX's frontier bitset, and the
 * device's copy of the graph. */
#include <stdalign.h>
#include <string.h>

#include "base/error_internal.h"
#include "runtime/runtime_internal.h"

/* The whole graph is checked before anything changes. */
static mkrt_status check_graph(const mkrt_runtime *rt, const mkrt_graph *g, mkrt_error *err)
{
    if (g->vertices == 0 || g->vertices > rt->cfg.cells)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_graph_register: %u vertices, but vertex v is cell v and the "
                               "runtime has %u cells. Fix: give 1..%u vertices, or raise "
                               "mkrt_config.cells.",
                               g->vertices, rt->cfg.cells, rt->cfg.cells);
    if (g->offsets == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_graph_register: offsets is NULL for %u vertices. Fix: pass "
                               "vertices + 1 offsets.",
                               g->vertices);
    if (g->offsets[0] != 0)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_graph_register: offsets[0] is %llu, not 0. Fix: start the CSR "
                               "rows at 0.",
                               (unsigned long long)g->offsets[0]);
    /* A frontier round numbers a vertex's chunks in MKRT__EXPAND_CHUNK_BITS. */
    const uint64_t max_degree = (uint64_t)rt->dispatch.graph_state.expand_chunk * MKRT__EXPAND_PULL; /* the last is the pull mark */
    for (uint32_t v = 0; v < g->vertices; v++) {
        if (g->offsets[v + 1] < g->offsets[v])
            return mkrt__error_set(err, MKRT_EINVAL,
                                   "mkrt_graph_register: offsets decrease at vertex %u (%llu, then "
                                   "%llu). Fix: offsets[v + 1] >= offsets[v] for every vertex.",
                                   v, (unsigned long long)g->offsets[v],
                                   (unsigned long long)g->offsets[v + 1]);
        if (g->offsets[v + 1] - g->offsets[v] > max_degree)
            return mkrt__error_set(err, MKRT_EOVERFLOW,
                                   "mkrt_graph_register: vertex %u has %llu edges, more than %llu "
                                   "(with max_batch %zu). Fix: split the vertex or raise max_batch.",
                                   v, (unsigned long long)(g->offsets[v + 1] - g->offsets[v]),
                                   (unsigned long long)max_degree, rt->cfg.max_batch);
    }
    uint64_t edges = g->offsets[g->vertices];
    if (edges > MKRT_GRAPH_EDGES_MAX)
        return mkrt__error_set(err, MKRT_EOVERFLOW,
                               "mkrt_graph_register: %llu edges exceed the limit of %llu. Fix: "
                               "partition the graph.",
                               (unsigned long long)edges, (unsigned long long)MKRT_GRAPH_EDGES_MAX);
    if (edges > 0 && g->targets == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_graph_register: targets is NULL for %llu edges. Fix: pass "
                               "offsets[vertices] targets.",
                               (unsigned long long)edges);
    for (uint64_t e = 0; e < edges; e++)
        if (g->targets[e] >= g->vertices)
            return mkrt__error_set(err, MKRT_EINVAL,
                                   "mkrt_graph_register: edge %llu targets vertex %u, but the graph "
                                   "has %u vertices. Fix: keep every target below vertices.",
                                   (unsigned long long)e, g->targets[e], g->vertices);
    return MKRT_OK;
}

/* The width of RELAX's distance buckets (see pipeline/drain.c): the mean
 * weight over the mean degree, delta-stepping's delta for random weights
 * (BUCKET_EDGES scales it; 1 measured best on Kronecker graphs, where 2
 * to 16 relaxed 15% to 60% more edges). 1 without weights. */
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
    /* sum / edges (mean weight) x BUCKET_EDGES / (edges / vertices) */
    uint64_t w = (uint64_t)((double)sum * BUCKET_EDGES * g->vertices / ((double)edges * (double)edges));
    return w > 0 ? w : 1;
}

mkrt_status mkrt_graph_register(mkrt_runtime *rt, const mkrt_graph *g, mkrt_error *err)
{
    if (rt == NULL || g == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_graph_register got a NULL %s. Fix: pass the runtime and an "
                               "mkrt_graph.",
                               rt == NULL ? "runtime" : "graph");
    mkrt_status st = check_graph(rt, g, err);
    if (st != MKRT_OK)
        return st;
    size_t slot_words = ((size_t)g->vertices + 63) / 64, words = slot_words * MKRT__EXPAND_SLOTS;
    /* w, r, visited, far (mkrt__frontier_alloc_words) */
    _Atomic uint64_t *bits = mkrt__alloc_zeroed((3 * words + slot_words) * sizeof *bits, MKRT_CACHE_LINE);
    if (bits == NULL)
        return mkrt__error_set(err, MKRT_ENOMEM,
                               "mkrt_graph_register could not allocate the frontier of %u vertices "
                               "(%zu bytes). Fix: free memory.",
                               g->vertices, (3 * words + slot_words) * sizeof *bits);
    const uint64_t width = bucket_width(g);
    /* Under the lock mkrt_producer_open freezes the op table with: the
     * dispatcher and the ops read the graph only for items of producers
     * opened later (as in mkrt_op_register). */
    mkrt__mutex_lock(&rt->producers.producers_lock);
    if (rt->ops_frozen) {
        mkrt__mutex_unlock(&rt->producers.producers_lock);
        mkrt__free((void *)bits, (3 * words + slot_words) * sizeof *bits);
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_graph_register after the first producer was opened. Fix: "
                               "register the graph right after mkrt_create.");
    }
    mkrt__free((void *)rt->dispatch.graph_state.frontier, mkrt__frontier_alloc_words(&rt->dispatch.graph_state) * sizeof *rt->dispatch.graph_state.frontier);
    rt->dispatch.graph_state.frontier = bits;
    rt->dispatch.graph_state.frontier_w = bits;
    rt->dispatch.graph_state.frontier_r = bits + words;
    rt->dispatch.graph_state.visited = bits + 2 * words;
    rt->dispatch.graph_state.far = bits + 3 * words; /* zeroed, as expand.far_n (no bit set yet) */
    rt->dispatch.graph_state.frontier_words = words;
    rt->dispatch.graph_state.slot_words = slot_words;
    rt->dispatch.graph_state.slot_op[0] = MKRT_OP_RELAX;
    rt->dispatch.graph_state.graph = *g;
    rt->dispatch.graph_state.bucket_width = width;
    rt->dispatch.graph_state.bucket_min = BUCKET_MIN;
    /* The device's copy (cuda/protocol.h, "Traversals on the device"): no
     * batch has run, so the dispatcher is not using it; state_lock keeps
     * the application's state copies out meanwhile. A device that cannot
     * take the graph refuses RELAX (the CPU pool runs it) and says why in
     * mkrt_backend_describe(). */
    mkrt__backend *dev = mkrt__backends_device(rt->dispatch.backends, rt->dispatch.nbackends);
    if (dev != NULL && dev->ops->graph_in != NULL) {
        mkrt_error why;
        mkrt__mutex_lock(&rt->dispatch.state_lock);
        (void)dev->ops->graph_in(dev, g, &why);
        mkrt__mutex_unlock(&rt->dispatch.state_lock);
        mkrt__runtime_describe_device(rt);
    }
    mkrt__mutex_unlock(&rt->producers.producers_lock);
    return MKRT_OK;
}
