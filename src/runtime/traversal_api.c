/* SPDX-License-Identifier: BSD-2-Clause */
/* src/runtime/traversal_api.c - the public traversals (mkrt/graph.h):
 * argument checks and the runtime's part (closing, the waits); the graph
 * engine (graph/traversal.c) keeps their state and runs them. */
#include "base/error_internal.h"
#include "graph/traversal.h"
#include "runtime/api_internal.h"

mkrt_status mkrt_traversal_open(mkrt_runtime *rt, const mkrt_traversal_desc *d, mkrt_traversal **out,
                                mkrt_error *err)
{
    if (out != NULL)
        *out = NULL;
    if (rt == NULL || d == NULL || out == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_traversal_open got a NULL %s. Fix: pass the runtime, a "
                               "mkrt_traversal_desc and where to put the traversal.",
                               rt == NULL ? "runtime" : d == NULL ? "description" : "out pointer");
    /* acquire: pairs with the release store of closing in mkrt_destroy. */
    if (atomic_load_explicit(&rt->producers.closing, memory_order_acquire))
        return mkrt__error_set(err, MKRT_ECLOSED,
                               "mkrt_traversal_open: the runtime is being destroyed. Fix: open "
                               "traversals before mkrt_destroy.");
    return mkrt__traversal_open(rt->state.graph, d, out, err);
}

static mkrt_status start(mkrt_traversal *t, uint32_t root, const mkrt_pagerank_params *pr, mkrt_error *err)
{
    mkrt_runtime *rt = mkrt__traversal_runtime(t);
    /* acquire: as in mkrt_traversal_open. */
    if (atomic_load_explicit(&rt->producers.closing, memory_order_acquire))
        return mkrt__error_set(err, MKRT_ECLOSED,
                               "mkrt_traversal_start: the runtime is being destroyed. Fix: start "
                               "searches before mkrt_destroy.");
    return mkrt__traversal_start(t, root, pr, err);
}

mkrt_status mkrt_traversal_start(mkrt_traversal *t, uint32_t root, mkrt_error *err)
{
    if (t == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_traversal_start got a NULL traversal. Fix: pass one from "
                               "mkrt_traversal_open.");
    return start(t, root, NULL, err);
}

mkrt_status mkrt_traversal_start_pagerank(mkrt_traversal *t, const mkrt_pagerank_params *p, mkrt_error *err)
{
    if (t == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_traversal_start_pagerank got a NULL traversal. Fix: pass one from "
                               "mkrt_traversal_open with MKRT_TRAVERSAL_PAGERANK.");
    static const mkrt_pagerank_params defaults = {0, 0, 0};
    return start(t, 0, p != NULL ? p : &defaults, err);
}

mkrt_status mkrt_traversal_wait(mkrt_traversal *t, uint64_t timeout_ns)
{
    if (t == NULL)
        return MKRT_EINVAL;
    _Atomic uint64_t *counter;
    uint64_t target;
    mkrt__traversal_wait_target(t, &counter, &target);
    /* On the engine's queue: it is notified when a traversal finishes,
     * not at every batch (eight waiters would wake for each). */
    mkrt_runtime *rt = mkrt__traversal_runtime(t);
    mkrt_status st = mkrt__wait_until_on(rt, counter, target, timeout_ns, mkrt__graph_finished_wq(rt->state.graph));
    return st == MKRT_OK ? mkrt__traversal_status(t) : st;
}

mkrt_status mkrt_traversal_read(const mkrt_traversal *t, uint32_t first, size_t count, uint64_t *out,
                                mkrt_error *err)
{
    if (t == NULL || (out == NULL && count > 0))
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_traversal_read got a NULL %s. Fix: pass the traversal and room "
                               "for count values.",
                               t == NULL ? "traversal" : "out");
    return mkrt__traversal_read(t, first, count, out, NULL, NULL, NULL, err);
}

mkrt_status mkrt_traversal_parents(const mkrt_traversal *t, uint32_t first, size_t count, uint32_t *out,
                                   mkrt_error *err)
{
    if (t == NULL || out == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_traversal_parents got a NULL %s. Fix: pass the traversal and "
                               "room for count parents.",
                               t == NULL ? "traversal" : "out");
    return mkrt__traversal_read(t, first, count, NULL, out, NULL, NULL, err);
}

mkrt_status mkrt_traversal_read_ranks(const mkrt_traversal *t, uint32_t first, size_t count, double *out,
                                      uint32_t *iterations, mkrt_error *err)
{
    if (t == NULL || (out == NULL && count > 0))
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_traversal_read_ranks got a NULL %s. Fix: pass the traversal and "
                               "room for count scores.",
                               t == NULL ? "traversal" : "out");
    double none;
    return mkrt__traversal_read(t, first, count, NULL, NULL, out != NULL ? out : &none, iterations, err);
}

mkrt_status mkrt_traversal_stats_read(const mkrt_traversal *t, mkrt_traversal_stats *out)
{
    if (t == NULL || out == NULL)
        return MKRT_EINVAL;
    mkrt__traversal_stats(t, out);
    return MKRT_OK;
}

mkrt_status mkrt_traversal_close(mkrt_traversal *t, mkrt_error *err)
{
    if (t == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_traversal_close got a NULL traversal. Fix: pass one from "
                               "mkrt_traversal_open.");
    return mkrt__traversal_close(t, err);
}
