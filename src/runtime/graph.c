/* SPDX-License-Identifier: BSD-2-Clause */
/* src/runtime/graph.c - mkrt_graph_register: the read-only CSR graph the
 * ops read (borrowed, checked once; the graph engine, graph/, keeps it
 * and its traversals), and the device's copy of the graph. */
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
    mkrt_status st = mkrt__graph_engine_check(rt->graph, g, err);
    if (st != MKRT_OK)
        return st;
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
    /* Under the lock mkrt_producer_open freezes the op table with: the
     * dispatcher and the ops read the graph only for items of producers
     * opened later (as in mkrt_op_register). */
    mkrt__mutex_lock(&rt->producers.producers_lock);
    if (rt->ops_frozen) {
        mkrt__mutex_unlock(&rt->producers.producers_lock);
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_graph_register after the first producer was opened. Fix: "
                               "register the graph right after mkrt_create.");
    }
    if (mkrt__graph_engine_traversals(rt->graph) != 0) {
        mkrt__mutex_unlock(&rt->producers.producers_lock);
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_graph_register after mkrt_traversal_open. Fix: register the "
                               "graph before opening traversals.");
    }
    if ((st = mkrt__graph_engine_set(rt->graph, g, err)) != MKRT_OK) {
        mkrt__mutex_unlock(&rt->producers.producers_lock);
        return st;
    }
    /* The graph the ops read (mkrt_op_ctx.graph, RELAX's admission):
     * published to the dispatcher and the workers by the first producer's
     * open, as the engine's copy. */
    rt->state.graph = mkrt__graph_engine_graph(rt->graph);
    /* The device's copy (cuda/protocol.h, "RELAX batches" and "Traversal jobs"): no
     * batch has run, so the dispatcher is not using it; state_lock keeps
     * the application's state copies out meanwhile. A device that cannot
     * take the graph refuses RELAX (the CPU pool runs it) and says why in
     * mkrt_backend_describe(). */
    mkrt__backend *dev = mkrt__backends_device(rt->dispatch.backends, rt->dispatch.nbackends);
    if (dev != NULL && dev->ops->graph_in != NULL) {
        mkrt_error why;
        mkrt__mutex_lock(&rt->dispatch.state_lock);
        (void)dev->ops->graph_in(dev, g, &why);
        /* The public traversals run whole on the device where it has job
         * slots for them (graph/device.c); else on the CPU pool. */
        mkrt__graph_engine_device_jobs(rt->graph, dev->jobs_max);
        mkrt__mutex_unlock(&rt->dispatch.state_lock);
        mkrt__runtime_describe_device(rt);
    }
    mkrt__mutex_unlock(&rt->producers.producers_lock);
    return MKRT_OK;
}
