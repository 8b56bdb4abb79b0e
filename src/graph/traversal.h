/* SPDX-License-Identifier: BSD-2-Clause */
/* src/graph/traversal.h - the public traversals' calls into the graph
 * engine (graph/traversal.c); the runtime's API wraps them (the waits run
 * in runtime/, which helps the dispatcher). */
#ifndef MKRT_SRC_GRAPH_TRAVERSAL_H
#define MKRT_SRC_GRAPH_TRAVERSAL_H

#include "graph/engine.h"
#include "mkrt/graph.h"

mkrt_status mkrt__traversal_open(mkrt__graph_engine *e, const mkrt_traversal_desc *d, mkrt_traversal **out,
                                 mkrt_error *err);
/* pr: PageRank's parameters (mkrt_traversal_start_pagerank), else NULL. */
mkrt_status mkrt__traversal_start(mkrt_traversal *t, uint32_t root, const mkrt_pagerank_params *pr,
                                  mkrt_error *err);
/* What a wait for the last start waits on: *counter reaching target. */
void mkrt__traversal_wait_target(mkrt_traversal *t, _Atomic uint64_t **counter, uint64_t *target);
/* Values (out), or with parents BFS parents, or with ranks PageRank's
 * scores (and the iterations the run took). */
mkrt_status mkrt__traversal_read(const mkrt_traversal *t, uint32_t first, size_t count, uint64_t *out,
                                 uint32_t *parents, double *ranks, uint32_t *iterations, mkrt_error *err);
void mkrt__traversal_stats(const mkrt_traversal *t, mkrt_traversal_stats *out);
mkrt_status mkrt__traversal_close(mkrt_traversal *t, mkrt_error *err);
mkrt_status mkrt__traversal_status(const mkrt_traversal *t);
struct mkrt_runtime *mkrt__traversal_runtime(const mkrt_traversal *t);
/* Far's vertices its bucket restores moved into a frontier since it was
 * opened (a test's figure; read after a wait, which orders it). */
uint64_t mkrt__traversal_far_moved(const mkrt_traversal *t);
/* Levels of hubs' whole rows (round.c) it ran since it was opened (the
 * same). */
uint64_t mkrt__traversal_hub_levels(const mkrt_traversal *t);

#endif
