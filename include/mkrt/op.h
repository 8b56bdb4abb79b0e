/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/op.h
 * @brief Ops: the built-in op numbers, what a user op sees, and what it may call.
 *
 * A user op (::mkrt_op_fn) is registered with mkrt_op_register()
 * (mkrt/runtime.h) from an ::mkrt_op_desc; while it runs it may emit
 * follow-up items (mkrt_op_emit(), mkrt_op_emit_edges()) and update cells
 * atomically. The ordering of ops and of what they emit is in
 * mkrt/runtime.h's overview.
 */
#ifndef MKRT_OP_H
#define MKRT_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/item.h"
#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Built-in ops. User ops use numbers from ::MKRT_OP_USER_FIRST up. */
enum {
    MKRT_OP_NOP = 0,    /**< Nothing (handles are not checked). */
    MKRT_OP_STORE = 1,  /**< cell[out] = param. */
    MKRT_OP_ADD = 2,    /**< cell[out] = cell[in] + param. */
    MKRT_OP_APPEND = 3, /**< Append param to out's entries in the APPEND log (observable order). */
    /** cell[out] = min(cell[out], cell[in] + param), the sum saturating at
     *  UINT64_MAX. Commutes with itself and with ::MKRT_OP_RELAX on out. */
    MKRT_OP_MIN = 4,
    /** ::MKRT_OP_MIN that, when it lowers cell[out], emits out's edges in
     *  the registered graph (mkrt/graph.h): one item (RELAX, out, w,
     *  weight) per edge out -> w. Needs a registered graph. */
    MKRT_OP_RELAX = 5,
    /** cell[out] |= cell[in] | param. Commutes with itself on out. */
    MKRT_OP_OR = 6,
    /** cell[out] += param (an accumulating atomic add; in is not read).
     *  Commutes with itself on out; never pruned as a duplicate. */
    MKRT_OP_ACC = 7,
    MKRT_OP_USER_FIRST = 16 /**< First op number mkrt_op_register() accepts. */
};
/** @brief Most user ops registered with mkrt_op_desc::expands. */
#define MKRT_OP_EXPANDING_MAX 7u
/** @brief Ops are numbered 0..MKRT_OP_MAX-1. */
#define MKRT_OP_MAX 4096

struct mkrt_graph;
struct mkrt__op_run;

/**
 * @brief What a user op sees.
 *
 * Cells may be read and written only at the item's in and out handles (the
 * ordering contract covers nothing else). An op registered with
 * mkrt_op_desc::commutes shares its layer with other items of the op on
 * the same out handle: it must update cells[out] atomically (for example
 * with mkrt_op_cell_min()).
 */
typedef struct mkrt_op_ctx {
    uint64_t *cells;     /**< The runtime's cells. */
    uint32_t cell_count; /**< mkrt_config::cells. */
    void *user;          /**< mkrt_op_desc::user. */
    /** The graph registered with mkrt_graph_register() (read-only), or
     *  NULL when none is. */
    const struct mkrt_graph *graph;
    /** The runtime's record of this run (emission, change); only for
     *  mkrt_op_emit() and mkrt_op_changed(). */
    struct mkrt__op_run *run;
    /** Which run of an op this context belongs to (set by the runtime,
     *  unique per call of an op function). The mkrt_op_* calls accept the
     *  context only while that run is the live op on the calling thread: a
     *  copy kept after the op returned is refused (mkrt_op_ctx_check()). */
    uint64_t generation;
} mkrt_op_ctx;

/**
 * @brief A user op's CPU implementation.
 *
 * Runs on a worker thread (or, for narrow layers, on the thread that
 * dispatches: the dispatcher, or a thread inside mkrt_wait() or
 * mkrt_drain() that runs pending batches while the dispatcher is idle);
 * items of one layer run concurrently on different threads, so the
 * function must be thread-safe for items with different handles. It must
 * not call mkrt_drain(), mkrt_wait() or mkrt_destroy().
 *
 * @param item The item (in and out are below cell_count).
 * @param ctx Cells and the op's user pointer.
 * @return ::MKRT_OK, or a failure status: the item then goes to the error
 *         path with that status.
 */
typedef mkrt_status (*mkrt_op_fn)(const mkrt_item *item, const mkrt_op_ctx *ctx);

/**
 * @brief Emits follow-up items from a running op.
 *
 * The items are copied into the runtime's emission queue and run later,
 * in a batch after the one of the emitting item (see "Emitted items" in
 * the file overview): they are admitted, deduped, layered and counted like
 * published items (mkrt_stats::emitted), and mkrt_quiesce() waits for
 * them. All or nothing: either all n items are queued or none is.
 *
 * @param ctx The context the op was called with.
 * @param items The items (copied); may be NULL when n is 0.
 * @param n How many.
 * @retval MKRT_OK All n items are queued.
 * @retval MKRT_EOVERFLOW The emission queue has no room for n more items
 *         in this batch (mkrt_config::emit_capacity less what waits);
 *         nothing was queued. Return it from the op to send the item to
 *         the error path, or emit fewer.
 * @retval MKRT_EINVAL ctx is NULL or not the context of the op running on
 *         this thread (a copy used after its op returned, or from another
 *         thread: nothing is queued, and no other op's emission is
 *         touched; mkrt_op_ctx_check() says why, with a Fix), or items is
 *         NULL with n > 0.
 * @return The status, as listed.
 * @par Thread safety
 * Only inside the op the context was given to, on its thread.
 */
mkrt_status mkrt_op_emit(const mkrt_op_ctx *ctx, const mkrt_item *items, size_t n);
/**
 * @brief Emits, later, one item per edge of vertex v of the registered graph.
 *
 * The items are (op, v, w, weight) for each edge v -> w (weight 1 without
 * weights), where op is the running op, which must be registered with
 * mkrt_op_desc::expands. They are emitted items (see the file overview):
 * v joins the op's frontier, a bitset over the vertices, and the
 * dispatcher turns frontier vertices into items in later batches, reading
 * cells[v] only when those items run. So emissions of one vertex coalesce
 * (a vertex marked several times before its edges are emitted has them
 * emitted once), and a frontier never overflows: unlike mkrt_op_emit(),
 * this cannot fail for room.
 *
 * @param ctx The context the op was called with.
 * @param v A vertex of the registered graph (its cell handle).
 * @retval MKRT_OK Marked (a vertex without edges emits nothing).
 * @retval MKRT_EINVAL ctx is NULL or not the context of the op running on
 *         this thread (see mkrt_op_emit()), the op was not registered with
 *         expands, no graph is registered, or v is not
 *         below its vertices.
 * @return The status, as listed.
 * @par Thread safety
 * Only inside the op the context was given to, on its thread.
 */
mkrt_status mkrt_op_emit_edges(const mkrt_op_ctx *ctx, uint32_t v);
/**
 * @brief Says that the running op changed its output (counted in mkrt_stats::changed).
 * @param ctx The context the op was called with; NULL or a context that is
 *        not the live op's on this thread (mkrt_op_ctx_check()) is ignored.
 * @par Thread safety
 * Only inside the op the context was given to, on its thread.
 */
void mkrt_op_changed(const mkrt_op_ctx *ctx);
/**
 * @brief Whether ctx is the context of the op running on the calling thread.
 *
 * Every mkrt_op_* call that takes a context checks this first: a context
 * belongs to one call of an op function (mkrt_op_ctx::generation) and is
 * live only until that call returns, on the thread that made it. A copy
 * used later, or on another thread, is refused (mkrt_op_emit() returns
 * ::MKRT_EINVAL and queues nothing) even when another op runs there now.
 * The check is a compare of two 64-bit words.
 *
 * @param ctx The context.
 * @param err Receives what is wrong and a Fix, on failure (may be NULL).
 * @retval MKRT_OK ctx is the live op's.
 * @retval MKRT_EINVAL ctx is NULL, or its op returned, or it is another
 *         thread's.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread (the answer is about the calling thread).
 */
mkrt_status mkrt_op_ctx_check(const mkrt_op_ctx *ctx, mkrt_error *err);
/**
 * @brief Atomically lowers cells[handle] to value if value is smaller.
 *
 * For ops registered with mkrt_op_desc::commutes, whose items on one
 * handle may run concurrently.
 *
 * @param ctx The op's context.
 * @param handle The item's out handle.
 * @param value The candidate.
 * @return true when the cell was lowered (then also mkrt_op_changed()),
 *         false when it already held value or less, or for a NULL ctx, a
 *         ctx that is not the live op's (mkrt_op_ctx_check(); the cell is
 *         not touched) or a handle not below cell_count.
 * @par Thread safety
 * Inside an op; atomic with respect to other items on the same handle.
 */
bool mkrt_op_cell_min(const mkrt_op_ctx *ctx, uint32_t handle, uint64_t value);
/**
 * @brief Reads cells[handle] atomically (relaxed).
 *
 * For the in cell of an expanding op's edge items
 * (mkrt_op_emit_edges()): the edges of a frontier run together, so the
 * cell an edge item reads may be lowered by another of them meanwhile.
 *
 * @param ctx The op's context.
 * @param handle A handle below cell_count.
 * @return The value; 0 for a NULL ctx, a ctx that is not the live op's
 *         (mkrt_op_ctx_check()) or a handle not below cell_count.
 * @par Thread safety
 * Inside an op.
 */
uint64_t mkrt_op_cell_load(const mkrt_op_ctx *ctx, uint32_t handle);

/** @brief Registration of a user op (mkrt_op_register()). */
typedef struct mkrt_op_desc {
    mkrt_op_fn fn; /**< CPU implementation; required. */
    void *user;    /**< Passed as mkrt_op_ctx::user. */
    uint64_t frontier_bytes, scratch_bytes, output_bytes;
    /** @var frontier_bytes
     *  @brief Frontier bytes of one item of this op.
     *
     *  With scratch_bytes and output_bytes, the op's memory envelope for the
     *  frontier planner: a layer's items are split into chunks whose fused
     *  bytes (frontier + 4 x scratch + output) fit
     *  mkrt_config::device_memory_budget, and an item whose own fused bytes
     *  exceed a non-zero budget fails with ::MKRT_EBUDGET. */
    /** @var scratch_bytes
     *  @brief Scratch bytes of one item of this op (counted 4 times when fused). */
    /** @var output_bytes
     *  @brief Output bytes of one item of this op. */
    const char *name; /**< For messages; may be NULL. */
    /** The op is also defined by mkrt_user_op in mkrt_config::cuda_user_ptx:
     *  on the CUDA backend its items run on the GPU. fn stays its CPU
     *  implementation (CPU backend, fallback) and must give the same
     *  results. */
    bool device;
    /** Running an item twice in a row has the effect of running it once
     *  (for example out = max(out, param), or out = f(in) with in != out),
     *  so dedupe may prune its exact duplicates (see the ordering contract
     *  in the file overview). false (the default, and the safe choice):
     *  every copy runs, as for an op that accumulates (out += param). */
    bool idempotent;
    /** Items of this op commute with each other on the same out handle
     *  (the op updates cells[out] atomically: a minimum, an OR, a sum), so
     *  those that write one handle run in one layer, in any order and
     *  concurrently, instead of one layer each. They are still ordered
     *  against every other item that touches the handle, and an item whose
     *  in equals its out is ordered as usual. false (the default): items on
     *  one handle run one after another in drain order. */
    bool commutes;
    /** The op may call mkrt_op_emit_edges() (at most
     *  ::MKRT_OP_EXPANDING_MAX ops per runtime). */
    bool expands;
    /** The runtime may run a level of this op's frontier pulled (bottom-up,
     *  as a direction-optimizing BFS does) when the level is large: instead
     *  of running the op on every edge u -> v of every frontier vertex u, it
     *  runs it, for each vertex v that has not settled, on v's edges
     *  u -> v whose u is in the frontier, in v's edge order, and stops at
     *  the first that changed v (mkrt_op_changed()). Requires expands and
     *  commutes (mkrt_op_register(): ::MKRT_EINVAL otherwise). The op
     *  promises, and the runtime does not check:
     *  - the registered graph is symmetric (it holds v -> u for each u -> v);
     *  - a vertex settles when it joins the op's frontier: the op never
     *    changes it again until the frontier runs empty (no vertex waiting,
     *    no batch running), when every vertex becomes unsettled again;
     *  - once an edge of a level changed v, the level's later edges into v
     *    (in v's edge order) would not change it.
     *  A BFS that keeps the smallest (depth, parent) over a graph whose rows
     *  are sorted keeps all three, and gets the same result either way. The
     *  items a pulled level runs are counted as emitted, like pushed edges.
     *  false (the default): every level runs pushed. */
    bool pulls;
} mkrt_op_desc;

#ifdef __cplusplus
}
#endif
#endif /* MKRT_OP_H */
