/* SPDX-License-Identifier: BSD-2-Clause */
/* src/graph/engine.h - the graph engine's interface: what the runtime
 * calls. The engine is a client of the core: it owns the registered graph
 * and its traversals (graph/traversal.h) and reaches the pipeline and the
 * ops only through their tables. To the pipeline it is a made source of
 * work (plan/source.h, mkrt__graph_source): the drain takes frontier
 * rounds from it and the CPU pool hands a round's items back to it to run.
 * To the ops it fills the rows of the ops it claims (RELAX, the expanding
 * user ops: mkrt__op_entry.mark). The runtime registers both at create.
 * Nothing else of the runtime knows how a frontier is kept.
 *
 * A round's items are chunks (mkrt__chunk): 16 bytes with named fields,
 * copied into the batch's item slots. A batch that holds them has the
 * engine as its source; no op number is reserved for them and no field is
 * packed into another. */
#ifndef MKRT_SRC_GRAPH_ENGINE_H
#define MKRT_SRC_GRAPH_ENGINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/waitq.h"
#include "mkrt/graph.h"
#include "mkrt/item.h"
#include "mkrt/status.h"
#include "ops/op_table.h"
#include "plan/source.h"

typedef struct mkrt__graph_engine mkrt__graph_engine;

/* One item of a frontier round: the edges of vertex v in [first, first +
 * chunk) of the lane's traversal, or (first == MKRT__CHUNK_PULL) a pulled
 * chunk: the unsettled vertices v .. v + 63 of the lane, each pulling from
 * its neighbours in the level's frontier. */
typedef struct mkrt__chunk {
    uint32_t lane; /* the traversal's index in the engine */
    uint32_t v;
    uint64_t first;
} mkrt__chunk;
#define MKRT__CHUNK_PULL UINT64_MAX

/* What the engine borrows from the runtime (fixed at create). */
typedef struct mkrt__graph_host {
    struct mkrt_runtime *rt;       /* opaque: what the public traversal calls return to */
    struct mkrt__state *state;     /* the state group user ops run against (mkrt__op_run) */
    uint64_t *cells;               /* the cells the cell traversals work on */
    uint32_t ncells;
    const mkrt__op_entry *ops;     /* the op table (MKRT_OP_MAX entries) */
    size_t max_batch;
    _Atomic bool *aborting;        /* destroy timed out */
    mkrt__waitq *work_wq;          /* the dispatcher sleeps here (a start wakes it) */
    struct mkrt__planner *planner; /* PULL per level (plan/decide.h); NULL: the rule, counted nowhere */
    _Atomic uint64_t *changed;     /* where the edges that changed their target are counted (stats) */
    /* The CPU pool has one executor: one thread at a time runs the
     * rounds' and the levels' ops (its holder of the dispatch token), so
     * a relaxation needs no locked instruction (apply.c). */
    bool solo;
} mkrt__graph_host;

/* Cell traversals: lane 0 is RELAX's, lanes 1 .. MKRT_OP_EXPANDING_MAX are
 * the expanding user ops' (mkrt__op_entry.expand_slot); public traversals
 * (mkrt_traversal_open) take lanes from MKRT__LANE_PUBLIC on. */
#define MKRT__LANE_PUBLIC (1u + MKRT_OP_EXPANDING_MAX)
#define MKRT__LANES (MKRT__LANE_PUBLIC + MKRT_TRAVERSALS_MAX)

mkrt__graph_engine *mkrt__graph_engine_create(const mkrt__graph_host *host);
void mkrt__graph_engine_destroy(mkrt__graph_engine *e);
/* mkrt_graph_register's work, after the runtime's checks (the caller
 * holds the lock that freezes the op table). */
mkrt_status mkrt__graph_engine_set(mkrt__graph_engine *e, const mkrt_graph *g, mkrt_error *err);
/* Where traversal waiters sleep: notified when one finishes. */
mkrt__waitq *mkrt__graph_finished_wq(mkrt__graph_engine *e);
/* The registered graph, or NULL. */
const mkrt_graph *mkrt__graph_engine_graph(const mkrt__graph_engine *e);
/* The checks a graph must pass for this engine (degree per chunk). */
mkrt_status mkrt__graph_engine_check(const mkrt__graph_engine *e, const mkrt_graph *g, mkrt_error *err);
/* Public traversals ever opened (their lanes stay until destroy). */
uint32_t mkrt__graph_engine_traversals(const mkrt__graph_engine *e);
/* A lane for an expanding user op (1..MKRT_OP_EXPANDING_MAX), 0 when all
 * are taken. Before the first producer (under the op table's lock). */
uint32_t mkrt__graph_lane_claim(mkrt__graph_engine *e, uint32_t op);
/* Claims an op's row: its expansion (mark) is this engine's, on the lane
 * row->expand_slot (0: RELAX's). At create for RELAX's row, and for an
 * expanding user op's once its row is written (under the same lock). */
void mkrt__graph_row_claim(mkrt__graph_engine *e, mkrt__op_entry *row);
/* The engine as a source of work (plan/source.h), for the runtime to
 * register with the dispatch group at create. */
const mkrt__source *mkrt__graph_source(mkrt__graph_engine *e);
/* The device runs public traversals whole, `jobs` at once (0: none; the
 * device's job slots, mkrt__backend.jobs_max), after the graph went to it
 * (runtime/graph.c). graph/device.c */
void mkrt__graph_engine_device_jobs(mkrt__graph_engine *e, uint32_t jobs);
/* Test hook: levels of fewer vertices than this expand every vertex. */
void mkrt__graph_bucket_min_set(mkrt__graph_engine *e, uint64_t n);

/* v's edges are to be run by the lane's op at its next level (a frontier
 * bit); false when v is not a vertex with edges. Any worker. */
bool mkrt__graph_mark(mkrt__graph_engine *e, uint32_t lane, uint32_t v);

/* Work counters (stats readers, relaxed). */
typedef struct mkrt__graph_counters {
    uint64_t levels_pushed, levels_pulled, edges_examined;
} mkrt__graph_counters;
void mkrt__graph_counters_read(const mkrt__graph_engine *e, mkrt__graph_counters *out);

#endif
