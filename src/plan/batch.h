/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/batch.h - a batch on its way down the data path, and the
 * plan its backend obeys.
 *
 *   drain   items[0..n) from the producers' rings, in drain order
 *   admit   items[0..admitted): the admitted ones, compacted in place;
 *           refused ones on the failure list
 *   dedupe  items[0..kept): redundant duplicates pruned, in place
 *   layer   the layering of items[0..kept) (conflict-free layers)
 *   split   layer_offsets[0..layers]: the layering with every layer split
 *           where its bytes exceed the memory budget (the frontier
 *           planner); exec[0..exec_n): the items in layer order (layered),
 *           or, where nothing was split, items[0..kept) in drain order
 *           until the place stage needs them moved
 *   plan    plan: the backend, and per layer how many workers or blocks
 *           take part, the claim size and the barriers
 *   place   exec in layer order, unless the CPU pool runs the batch on one
 *           thread: then in drain order, a valid order of the same layers
 *           (every item after the earlier items it conflicts with), and
 *           the items are not moved at all
 *   run     the backend returns its failures as (index into exec, status)
 *   complete
 * Every drained item ends in exactly one of executed (kept - run
 * failures), pruned (admitted - kept) and failed (refused + run failures).
 * Two batches alternate (double buffering): batch k+1 goes through the
 * stages while batch k runs. Every array is sized for max_batch items at
 * create: no allocation per batch.
 * The pipeline's stages fill it, but it is defined here, in plan/, the
 * lowest floor that reads its fields (measure.c): backend/ (which runs
 * it) and plan/ read it without including a header of pipeline/, the
 * floor above them (docs/design.md, "Source floors"). */
#ifndef MKRT_PLAN_BATCH_H
#define MKRT_PLAN_BATCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/explain.h"
#include "mkrt/item.h"
#include "mkrt/status.h"
#include "mkrt/topology.h"

typedef struct mkrt_producer mkrt_producer;

/* One producer's contiguous share of a batch. */
typedef struct mkrt__segment {
    mkrt_producer *p;
    uint64_t end; /* p->drained after this segment */
    size_t at;    /* its first item's index in items as drained */
} mkrt__segment;

/* What the backend does with the batch (written by the plan stage, read
 * by the backend; published to its threads by the launch). */
typedef struct mkrt__batch_plan {
    uint32_t backend;            /* index into the runtime's backends */
    mkrt_wave_topology topology; /* the topology planner's choice for this shape */
    uint32_t width;              /* workers (CPU pool) or blocks (device) it has */
    uint32_t workers;            /* most participants of any layer; 1: one thread runs it
                                  * (the CPU pool runs it on the calling thread) */
    uint32_t chunk;              /* items per claim (CPU pool) */
    uint32_t *participants;      /* per layer: workers or blocks that take part (1..width) */
    uint32_t grid_barriers;      /* layer boundaries that need every participant */
    uint32_t split_layers;       /* layers the memory split added */
    uint64_t peak_frontier_bytes, peak_scratch_bytes, peak_output_bytes; /* the split's peaks */
} mkrt__batch_plan;

typedef struct mkrt__batch {
    size_t n;                 /* items drained */
    size_t emitted_n;         /* of which emitted by ops (items[0..emitted_n) as drained) */
    uint32_t klass;           /* latency class (mkrt_class): of every item drained, and of
                               * what its ops emit (drain.c, state/state.h) */
    const struct mkrt__source *source; /* where its items came from (plan/source.h):
                               * the rings', or a made source's (one layer, its own items) */
    uint64_t stands_for;      /* a made source's: the emitted items its items stand for
                               * (the take's, plus what it ran, at completion) */
    mkrt_item *items;         /* drained; admitted, then kept, compacted in front */
    mkrt__segment *segs;
    size_t nseg;
    size_t admitted;          /* items that passed admission */
    uint64_t appends;         /* admitted APPENDs (room reserved in the log) */
    uint32_t user_ops;        /* admitted items of user ops (the rest are built-in) */
    uint32_t op_sig;          /* the OR of the admitted items' op numbers, bit 31 set
                               * with a user op among them (plan/shape_cache.h) */
    uint32_t handle_lo, handle_hi; /* lowest and highest handle (in or out) admitted */
    uint32_t refused;         /* failure-list entries written by admission */
    size_t kept;              /* items left after dedupe */
    uint64_t level_seq;       /* its levelling (dispatch.h; 0: not levelled) */
    mkrt_item *exec;          /* the kept items, in layer order when `layered`; else
                               * items[0..kept) in drain order (pipeline/stages.h) */
    mkrt_item *exec_buf;      /* where exec is in layer order (max_batch items) */
    bool layered;
    size_t exec_n;
    uint32_t *layer_offsets;  /* layers + 1 */
    size_t layers;
    _Atomic uint32_t *cursors; /* per layer claim cursor (CPU pool) */
    mkrt__batch_plan plan;
    /* Set by a device that ran the batch's traversal (cuda/protocol.h):
     * the edge items it ran (emitted RELAX items) and its levels (layers
     * after a grid barrier each); 0 otherwise. Zeroed by complete. */
    uint64_t device_edges;
    uint64_t device_levels;
    /* A made source's run of levels (plan/source.h, mkrt__taken.levels):
     * exec[0] runs through the source's part and next_level on every
     * worker of the CPU pool, whatever the plan's width. yield (set by the
     * dispatcher at launch; any thread, without the token): whether other
     * work waits, so that the run ends at the next level boundary. */
    bool levels;
    bool (*yield)(void *ctx);
    void *yield_ctx;
    /* A helper's deadline for the launch (CLOCK_MONOTONIC ns; UINT64_MAX:
     * none, the dispatcher's launches): the CPU pool's one-thread run
     * stops there and leaves the rest to its workers (cpu_pool.c). */
    uint64_t until;
    /* Quiescence (pipeline/dispatch.h, pending_root): the batch's number in
     * drain order (from 1), and its root: the oldest batch number its work
     * descends from (its own, or the emission's it drained, if older). */
    uint64_t seq, root;
    /* The plan's record of the batch (mkrt/explain.h), filled by the
     * drain and plan stages, timed from launch (launched_ns) and put in
     * the EXPLAIN ring at completion (dispatcher-only). */
    mkrt_plan_record note;
    uint64_t launched_ns;
    mkrt_item *failed;        /* failed items and why (dispatcher-only) */
    mkrt_status *failed_why;
    uint32_t failed_n;
} mkrt__batch;

/* Whether the boundary after layer l needs every participant: not when
 * one participant runs both sides (it orders them itself). The CPU pool
 * and the device (protocol.h, mkrt__mk_grid_barrier_after) follow it. */
static inline bool mkrt__plan_grid_barrier_after(const mkrt__batch_plan *p, size_t l, size_t layers)
{
    return l + 1 < layers && !(p->participants[l] == 1 && p->participants[l + 1] == 1);
}

/* Puts an item on the batch's failure list (dispatcher-only). */
static inline void mkrt__batch_fail(mkrt__batch *b, const mkrt_item *it, mkrt_status why)
{
    b->failed[b->failed_n] = *it;
    b->failed_why[b->failed_n] = why;
    b->failed_n++;
}

#endif
