/* SPDX-License-Identifier: BSD-2-Clause */
/* src/graph/engine.h - the graph engine's interface: what the pipeline,
 * the ops and the runtime call. The engine owns the registered graph and
 * its traversals (graph/traversal.h); the pipeline asks it for a frontier
 * round (a source of items for a drain) and a backend hands the round's
 * items back to it to run (the place they apply). Nothing else of the
 * runtime knows how a frontier is kept.
 *
 * A round's items are chunks (mkrt__chunk): 16 bytes with named fields,
 * copied into the batch's item slots. A batch that holds them says so
 * (mkrt__batch.round); no op number is reserved for them and no field is
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
/* Test hook: levels of fewer vertices than this expand every vertex. */
void mkrt__graph_bucket_min_set(mkrt__graph_engine *e, uint64_t n);

/* v's edges are to be run by the lane's op at its next level (a frontier
 * bit); false when v is not a vertex with edges. Any worker. */
bool mkrt__graph_mark(mkrt__graph_engine *e, uint32_t lane, uint32_t v);

/* ---- the dispatcher's side (the dispatch token's holder) ---- */
typedef struct mkrt__round {
    size_t n;         /* chunks written */
    uint64_t edges;   /* edge items they stand for (pushed rounds) */
    bool pull;        /* a pulled round: the edges are known once it ran */
} mkrt__round;
/* Writes a round into items (at most max_batch edges); n 0: none now.
 * batch_running: a batch is launched and not finished (a level may then
 * not end). */
mkrt__round mkrt__graph_round_take(mkrt__graph_engine *e, mkrt_item *items, bool batch_running);
/* Whether the engine has work: frontier bits, a level under way, or a
 * traversal started and not yet taken up. */
bool mkrt__graph_pending(mkrt__graph_engine *e);
/* Any thread, without the token: a traversal was started since the
 * dispatcher last looked (it wakes the dispatcher). */
bool mkrt__graph_wants(mkrt__graph_engine *e);
/* After a pulled round completed: the edges it ran. */
uint64_t mkrt__graph_pulled_take(mkrt__graph_engine *e);
/* The edge item a round's chunk ran as its failed edge: fail pair (a, b)
 * as written by mkrt__graph_apply (pushed: a = k | j << 24; pulled: the
 * edge index follows as a second pair). */
mkrt_item mkrt__graph_edge_item(const mkrt__graph_engine *e, const mkrt_item *chunk, uint64_t edge,
                                bool pulled);
uint64_t mkrt__graph_chunk_edge(const mkrt__graph_engine *e, const mkrt_item *chunk, uint32_t j, bool *exists);
/* Destroy timed out: a round that is not run; public traversals in it end
 * with MKRT_ETIMEDOUT. Returns whether the chunk stands for items (a cell
 * lane's: fail its edges one by one). */
bool mkrt__graph_chunk_abandon(mkrt__graph_engine *e, const mkrt_item *chunk);

/* ---- the backend's side (any worker) ---- */
/* Runs round chunks items[from, to); failures of user ops go to fails;
 * adds to *changed the edges that changed their target. */
void mkrt__graph_apply(mkrt__graph_engine *e, const mkrt_item *items, size_t from, size_t to,
                       mkrt__fail_list *fails, uint64_t *changed);

/* Work counters (stats readers, relaxed). */
typedef struct mkrt__graph_counters {
    uint64_t levels_pushed, levels_pulled, edges_examined;
} mkrt__graph_counters;
void mkrt__graph_counters_read(const mkrt__graph_engine *e, mkrt__graph_counters *out);

#endif
