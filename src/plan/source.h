/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/source.h - the sources of work the pipeline drains, as one
 * small table of calls: the core runs a source's items without knowing
 * what they are, the way libuv's threadpool runs the callbacks it was
 * given without naming fs or dns.
 *
 * Two kinds of source:
 *   the rings   the producers' rings and the emission queue, drained by
 *               the drain stage itself (segments, DRAIN); their items are
 *               ops, admitted, deduplicated and layered by the stages, and
 *               any backend that accepts them may run them. The pipeline's
 *               own (mkrt__dispatch.rings); take and pending are NULL.
 *   made        a source that makes its items itself (made == true): every
 *               item admitted, distinct, and commuting with the others of
 *               its batch, so a batch of them is one layer and skips admit,
 *               dedupe and layering; the items mean something only to the
 *               source, so they run on the host (the CPU pool) through run,
 *               and a failure is explained by the source. The graph engine
 *               is one (src/graph), registered by the runtime at
 *               create (mkrt__dispatch_source_add).
 * A batch holds items of one source (mkrt__batch.source). Made sources
 * are drained in turn, each batch of theirs alternating with the rings'
 * batches while the rings hold items. */
#ifndef MKRT_PLAN_SOURCE_H
#define MKRT_PLAN_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/explain.h"
#include "mkrt/item.h"
#include "mkrt/status.h"
#include "ops/op_table.h"

/* What a take wrote. */
typedef struct mkrt__taken {
    size_t n;            /* items written; 0: nothing now */
    uint64_t stands_for; /* the emitted items they stand for, known at the take
                          * (what run will execute); ran adds the rest */
    bool levels;         /* items[0] (n == 1) is a run of levels: the pool runs
                          * it through part and next_level, not run */
} mkrt__taken;

/* A traversal a device runs whole (protocol.h, "Traversal jobs"): what a
 * made source hands the device backend for one item of a job round, and
 * where the backend writes what the run did. kind: MKRT__JOB_*, the
 * protocol's MKRT_MK_JOB_* numbers. values and aux are the source's host
 * arrays: the run's first values in, the results out. */
enum { MKRT__JOB_BFS = 1, MKRT__JOB_SSSP = 2, MKRT__JOB_CC = 3, MKRT__JOB_PR = 4 };
typedef struct mkrt__device_job {
    uint32_t kind, root;
    bool pulls;              /* BFS on a symmetric graph: levels may run pulled */
    uint32_t max_iterations; /* PageRank */
    double damping, tolerance;
    void *values, *aux;
    size_t value_bytes, aux_bytes;
    /* Written by whoever ran it (the device backend, or the source's run
     * on the host), before the batch completes; status MKRT_EDEVICE: the
     * device failed the round (the source runs the job again). */
    uint64_t levels_pushed, levels_pulled, edges;
    uint32_t iterations;
    mkrt_status status;
    bool done;
} mkrt__device_job;

typedef struct mkrt__source {
    const char *name;
    void *ctx; /* the source's own; the first argument of every call */
    bool made;
    /* Token holder: writes at most max_batch items (its own bound, fixed
     * when it registered) into items. batch_running: a batch of any
     * source is launched and not finished. */
    mkrt__taken (*take)(void *ctx, mkrt_item *items, bool batch_running);
    /* Token holder: whether it has work (items to take now or later). */
    bool (*pending)(void *ctx);
    /* Any thread, without the token: work arrived that the dispatcher has
     * not seen (it wakes an idle dispatcher); a hint. */
    bool (*wants)(void *ctx);
    /* Any worker: runs items[from, to) of a batch it made; failures as
     * (index, status) pairs, or as the source's own encoding, to fails. */
    void (*run)(void *ctx, const mkrt_item *items, size_t from, size_t to, mkrt__fail_list *fails);
    /* Token holder, after a batch of it completed: the emitted items it
     * stood for that the take could not know (they are known once it
     * ran); NULL: none. */
    uint64_t (*ran)(void *ctx);
    /* Token holder: the failure that starts at pairs[0] (left pairs from
     * there), of a batch of items[0..n): the item that failed and why;
     * *used: the pairs it took (at least 1). false: no item of the batch
     * (a pair a backend wrote out of range). */
    bool (*failed)(void *ctx, const mkrt_item *items, size_t n, const uint32_t *pairs, uint32_t left,
                   uint32_t *used, mkrt_item *item, mkrt_status *why);
    /* Token holder, destroy timed out: item was taken and will not run;
     * writes the items it stood for (each to fail with MKRT_ETIMEDOUT) to
     * out, at most max, and returns how many (0: it ends its own way). */
    size_t (*abandon)(void *ctx, const mkrt_item *item, mkrt_item *out, size_t max);
    /* Any thread: the bytes it keeps resident for its items (what the
     * memory planner counts against the device budget); NULL: none. */
    uint64_t (*resident_bytes)(void *ctx);
    /* Token holder, a batch of it completed: its part of the EXPLAIN
     * record (mkrt/explain.h) for items[0..n); NULL: none. */
    void (*note)(void *ctx, const mkrt_item *items, size_t n, mkrt_plan_record *r);
    /* A run of levels (a take that said levels; NULL: the source makes
     * none): the CPU pool's workers run it level after level inside their
     * loop, the way the device kernel runs a traversal, with no return to
     * the dispatcher between levels.
     * part: any worker of the run: claims (a fetch-add on the source's own
     * cursor) and runs one part of the open level; false: none is left.
     * next_level: the last arriver at the barrier after a level (every
     * part of it ran, and every worker's writes happen before this call):
     * ends the level and makes the next one's decisions; true: the next
     * level is open and the run goes on. yield (the dispatcher's rule,
     * DRAIN's level boundary, plan/decide.h): other work waits, so the run
     * ends here; the source also ends it for its own reasons (the work is
     * done, other work of its own waits, abort). Once it returned false
     * the item is the source's again (the token holder's next take).
     * *alone: the level it opened is too small to share (WAKE at a level
     * boundary, plan/decide.h): the calling thread runs it by itself while
     * the others stay in the barrier. */
    bool (*part)(void *ctx, const mkrt_item *item, mkrt__fail_list *fails);
    bool (*next_level)(void *ctx, const mkrt_item *item, bool yield, bool *alone);
    /* May be NULL. Token holder: the traversal job item stands for, or
     * NULL when it is not one. A round of jobs holds jobs only (at most
     * MKRT__DEVICE_JOBS_MAX); the plan stage routes it to a device that
     * takes that many (mkrt__backend.jobs_max), which runs them whole;
     * else run gets it on the host like any made batch. */
    mkrt__device_job *(*job)(void *ctx, const mkrt_item *item);
} mkrt__source;

/* The most jobs one batch holds (the protocol's MKRT_MK_JOBS_MAX). */
#define MKRT__DEVICE_JOBS_MAX 8u

/* The most sources a runtime has (the rings and the graph engine today). */
#define MKRT__SOURCES_MAX 4u

#endif
