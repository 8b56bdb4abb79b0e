/* SPDX-License-Identifier: BSD-2-Clause */
/* src/graph/sweep.h - the sweep kinds of public traversal: connected
 * components and PageRank (mkrt/graph.h). A sweep's run is a sequence of
 * phases; a phase visits every block of vertices once. On the CPU pool
 * the phases are a run of levels (plan/source.h, part and next_level):
 * the workers claim blocks from the lane's part_next, and the barrier's
 * last arriver makes the step between two phases (CC's sample,
 * PageRank's convergence test) and opens the next, with no return to the
 * dispatcher. Where no run may be handed (another lane has work, abort),
 * a phase is a frontier round of sweep chunks, one per block, run like a
 * pulled round (the edges are counted once it ran), and the next phase
 * starts when the phase's chunks are all taken and no batch runs. The
 * blocks (about equal edges + vertices, whole bitmap words each) are made
 * once, at open (the graph cannot change once a traversal is open). */
#ifndef MKRT_SRC_GRAPH_SWEEP_H
#define MKRT_SRC_GRAPH_SWEEP_H

#include "graph/graph_internal.h"

/* A sweep chunk: mkrt__chunk.first; .v is the block | the phase's op << 24. */
#define MKRT__CHUNK_SWEEP (UINT64_MAX - 1)

/* What mkrt__sweep_take wrote. */
enum { MKRT__SWEEP_NONE, MKRT__SWEEP_ROUND, MKRT__SWEEP_WAITS, MKRT__SWEEP_LEVELS };

/* Open (under the engine's lock; the traversal is not running): makes or
 * reuses the arrays of d's kind and checks its parameters. */
mkrt_status mkrt__sweep_open(mkrt__traversal *t, const mkrt_traversal_desc *d, mkrt_error *err);
void mkrt__sweep_free(mkrt__traversal *t);
/* PageRank's parameters are valid (NULL: the defaults). */
mkrt_status mkrt__sweep_check(const mkrt_pagerank_params *p, mkrt_error *err);
/* Start (the starter's thread; not running): the run's parameters (p:
 * PageRank's, NULL: the defaults) and first values. */
void mkrt__sweep_reset(mkrt__traversal *t, const mkrt_pagerank_params *p);
/* Dispatcher: the run was taken up (round.c, take_starts). */
void mkrt__sweep_begin(mkrt__traversal *t);
/* Dispatcher: the run's next chunks into items[*k..] when *k is 0 (a
 * round of its own: MKRT__SWEEP_ROUND); MKRT__SWEEP_WAITS when it has
 * chunks but the round holds others; ends the run when its last phase is
 * done and no batch runs. With levels, a phase that has not begun is
 * handed whole to a run of levels instead (MKRT__SWEEP_LEVELS: nothing
 * written; the caller writes the run's item). */
int mkrt__sweep_take(mkrt__traversal *t, mkrt_item *items, size_t *k, uint64_t cap, bool batch_running,
                     bool aborting, bool levels);
/* A run's worker: claims one block of the open phase (the lane's
 * part_next) and runs it, adding its edges to *edges; false: none left. */
bool mkrt__sweep_part(mkrt__traversal *t, uint64_t *edges);
/* A run's barrier, last arriver (under the rounds' lock; every block of
 * the phase ran): the step to the next phase, which it opens (true), or
 * the end of the traversal (false). */
bool mkrt__sweep_next(mkrt__traversal *t);
/* Any worker: runs one sweep chunk; returns the edges it examined. */
uint64_t mkrt__sweep_apply(mkrt__traversal *t, const mkrt__chunk *c);
/* The device job of a run (graph/device.c): its arrays and parameters;
 * and, once it ran there, the iterations it took. */
void mkrt__sweep_job(mkrt__traversal *t, mkrt__device_job *j);
void mkrt__sweep_job_done(mkrt__traversal *t, uint32_t iterations);
/* Copies a finished run's labels (CC) or scores (PageRank). */
void mkrt__sweep_read(const mkrt__traversal *t, uint32_t first, size_t count, uint64_t *labels, double *ranks,
                      uint32_t *iterations);

#endif
