/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/runtime.h
 * @brief The runtime: producers -> dispatcher -> megakernel.
 *
 * Producer threads publish items into their own lock-free rings. One
 * dispatcher thread drains the rings round robin (at most burst_per_ring
 * items per ring per pass, so no producer starves another), forms a batch,
 * drops exact duplicates, layers the batch by the handles its items read
 * and write, splits layers that exceed the device memory budget, looks the
 * batch's shape up in the plan cache, and launches it on the backend: a
 * persistent pool of worker threads (CPU, the default) that runs the batch
 * layer by layer with a barrier between layers. Batch k+1 is drained and
 * planned while batch k runs.
 *
 * Ordering contract (within a batch, items in drain order):
 * - B runs after A when B.in == A.out, B.out == A.out, or B.out == A.in.
 * - A producer's items are drained in publish order.
 * - Batches run in order: batch k completes before batch k+1 starts.
 * - Results are those of running the admitted items one after another in
 *   drain order. Dedupe never changes them: an exact duplicate (same op,
 *   in, out, param) of an earlier item of the batch is pruned only when the
 *   op is idempotent for it (::mkrt_op_desc::idempotent; built-ins: NOP and
 *   STORE always, ADD, MIN, RELAX and OR when in != out, APPEND and ACC
 *   never) and no item between the
 *   two writes (has as out) the duplicate's in or out handle.
 *
 * Emitted items (mkrt_op_emit(), and the edges ::MKRT_OP_RELAX emits):
 * - An emitted item runs after the item that emitted it has run: it goes
 *   into a later batch, never the emitter's (batches run in order). Items
 *   one op emits are drained in emission order, and before items that are
 *   emitted later; the ordering contract above then applies to them within
 *   their batch as to published items (drained before the producers'
 *   items of that batch), and dedupe prunes their exact duplicates (a
 *   frontier visits a vertex once per batch).
 * - Which later batch is not specified: emissions of one level may share
 *   a batch with those of the next when a level exceeds max_batch. Ops
 *   that need no order among themselves (mkrt_op_desc::commutes, and the
 *   update built-ins MIN, RELAX, OR and ACC) give the same result in any
 *   such order.
 * - Edges of a frontier (::MKRT_OP_RELAX, mkrt_op_emit_edges()) coalesce:
 *   a vertex marked several times before its edges are emitted has them
 *   emitted once. They run level by level: the vertices marked while a
 *   level runs form the next level, which starts once the level's last
 *   round completed. A level runs as frontier rounds: batches of their own
 *   of up to max_batch edge items, all in one layer, each reading its
 *   in cell (the frontier vertex) when it runs, while others of the round
 *   may lower that cell (a vertex lowered so is in the frontier again).
 *   The ops are monotone (a minimum), so the fixpoint that mkrt_quiesce()
 *   waits for is the same as in any sequential order; the cells between
 *   rounds are upper bounds of it.
 * - mkrt_drain() waits for published items only; mkrt_quiesce() also for
 *   everything they emit, transitively.
 *
 * Commuting items: items of one update op (MIN and RELAX together, OR,
 * ACC, or a user op registered with mkrt_op_desc::commutes) that write the
 * same handle and do not read it run in one layer, concurrently and
 * atomically, when no other item touches that handle between them in
 * drain order; results are those of any sequential order of them.
 *
 * Accounting: published + emitted = executed + pruned + failed, always,
 * once quiescent: every item is counted exactly once. When the device faults or
 * its watchdog trips, every admitted item of that batch is reported failed
 * (::MKRT_EDEVICE or ::MKRT_ETIMEDOUT; items refused at admission keep
 * their own status), including items the device ran before it failed: the
 * cells that batch writes are then undefined, and its APPENDs are dropped.
 *
 * Nothing is dropped silently: an item that cannot run (unknown op, handle
 * out of range, a failing user op, over the memory budget, or left when
 * destroy times out) goes to the error callback, or to the dead-letter ring
 * when there is no callback, and is counted as failed. Items are checked
 * (op known, handles below mkrt_config::cells: STORE, APPEND and ACC out,
 * ADD, MIN, RELAX and OR in and out, user ops in and out; a registered
 * graph for RELAX; room in the APPEND log) before dedupe and
 * layering, the same way on every backend, so a bad item never reaches an
 * op and never adds a layer.
 *
 * Bad arguments (NULL pointers, out-of-range numbers) to any call return
 * ::MKRT_EINVAL (or 0 / NULL where the call returns a count or a handle);
 * nothing aborts. (mkrt_destroy() of NULL is a no-op that returns
 * ::MKRT_OK.)
 *
 * Threads: a producer handle belongs to one thread at a time. Everything
 * else may be called from any thread. Stats can be read at any time.
 */
#ifndef MKRT_RUNTIME_H
#define MKRT_RUNTIME_H

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

/** @brief Largest mkrt_config::workers (mkrt_create(): ::MKRT_EINVAL above it). */
#define MKRT_CONFIG_WORKERS_MAX 1024u
/** @brief Largest mkrt_config::max_batch and mkrt_config::burst_per_ring. */
#define MKRT_CONFIG_MAX_BATCH_MAX ((size_t)1 << 24)
/** @brief Largest mkrt_config::max_producers. */
#define MKRT_CONFIG_PRODUCERS_MAX 4096u
/** @brief Largest mkrt_config::cells (8 GiB of cells). */
#define MKRT_CONFIG_CELLS_MAX (1u << 30)
/** @brief Largest mkrt_config::append_log_capacity (8 GiB of entries). */
#define MKRT_CONFIG_APPEND_LOG_MAX ((size_t)1 << 30)
/** @brief Largest mkrt_config::dead_letter_capacity. */
#define MKRT_CONFIG_DEAD_LETTERS_MAX ((size_t)1 << 24)
/** @brief Largest mkrt_config::cuda_max_blocks. */
#define MKRT_CONFIG_CUDA_BLOCKS_MAX 2048u
/** @brief Largest mkrt_config::cuda_user_ptx_size, in bytes. */
#define MKRT_CONFIG_CUDA_PTX_MAX ((size_t)64 << 20)
/** @brief Largest mkrt_config::device_idle_us and device_resident_us (60 s). */
#define MKRT_CONFIG_DEVICE_US_MAX 60000000u

/** @brief Which backend runs the batches. */
typedef enum mkrt_backend_kind {
    /** CUDA when built and usable, else CPU (the reason is in
     *  mkrt_backend_describe() and mkrt_stats::backend_detail). */
    MKRT_BACKEND_AUTO,
    MKRT_BACKEND_CPU, /**< The CPU worker pool. */
    /** The persistent megakernel on GPU 0 through the CUDA Driver API
     *  (libcuda.so.1 loaded at run time). Batches of built-in ops, and of
     *  device user ops, run on the GPU; batches with other user ops on the
     *  CPU pool, and so do batches with ::MKRT_OP_RELAX (emission runs on
     *  the host). A device fault or a watchdog trip sends the batch to the
     *  error path and the runtime carries on with the CPU pool. */
    MKRT_BACKEND_CUDA,
    /** The megakernel protocol (control block, doubled descriptors,
     *  doorbell, watchdog) against a host thread that plays the device: the
     *  GPU path's host side, testable anywhere. Batches with user ops (C
     *  functions) or ::MKRT_OP_RELAX run on the CPU pool; if the device fails or hangs, its
     *  batch goes to the error path and the runtime continues on the CPU. */
    MKRT_BACKEND_SIM
} mkrt_backend_kind;

/** @brief Opaque runtime (mkrt_create()). */
typedef struct mkrt_runtime mkrt_runtime;
/** @brief Opaque producer handle (mkrt_producer_open()); one thread at a time. */
typedef struct mkrt_producer mkrt_producer;

/**
 * @brief Error callback: told about every item that fails.
 *
 * Called on the dispatcher thread (or on a thread inside mkrt_wait() or
 * mkrt_drain() that runs pending batches itself), one item at a time; must not call back
 * into the runtime's blocking functions (mkrt_drain(), mkrt_wait(),
 * mkrt_destroy(), blocking publishes). `why` is ::MKRT_ENOTSUP (op not
 * registered), ::MKRT_EINVAL (handle not below mkrt_config::cells),
 * ::MKRT_EBUDGET (the op's envelope exceeds device_memory_budget),
 * ::MKRT_EOVERFLOW (APPEND log full), ::MKRT_ETIMEDOUT (left when
 * mkrt_destroy() timed out, or a watchdog trip), ::MKRT_EDEVICE (device
 * fault), or the failure status a user op returned.
 *
 * @param ctx mkrt_config::error_ctx.
 * @param item The failed item (valid during the call).
 * @param why Why it failed.
 * @param message A sentence with the item, the reason and a fix (valid
 *        during the call).
 */
typedef void (*mkrt_error_fn)(void *ctx, const mkrt_item *item, mkrt_status why,
                              const char *message);

/** @brief Largest mkrt_config::emit_capacity. */
#define MKRT_CONFIG_EMIT_MAX ((size_t)1 << 28)

/**
 * @brief Runtime configuration: start from mkrt_config_default().
 *
 * Each field: meaning (default) [accepted range]; mkrt_create() refuses a
 * value outside its range with ::MKRT_EINVAL.
 */
typedef struct mkrt_config {
    mkrt_backend_kind backend;     /**< Backend (AUTO) [AUTO, CPU, CUDA, SIM]. */
    /** CPU workers (0) [0..MKRT_CONFIG_WORKERS_MAX]; 0: one per CPU the
     *  process may run on (its affinity mask) less one for the dispatcher,
     *  at least 1, and each batch then uses only as many as are free of
     *  producers still publishing (on 2 CPUs: the batch runs on the
     *  dispatching thread). A number given here is used as is. */
    uint32_t workers;
    size_t ring_capacity;          /**< Ring slots per producer (16384: 256 KiB) [power of two, 2..MKRT_RING_CAPACITY_MAX]. */
    size_t max_batch;              /**< Items per batch (65536) [1..MKRT_CONFIG_MAX_BATCH_MAX]. */
    uint32_t max_producers;        /**< Producers open at once (64) [1..MKRT_CONFIG_PRODUCERS_MAX]. */
    /** Items per ring per drain pass (1024); at most max_batch are taken
     *  [1..MKRT_CONFIG_MAX_BATCH_MAX]. */
    size_t burst_per_ring;
    uint64_t device_memory_budget; /**< Bytes a layer may use; 0: unbounded (0) [any]. */
    uint32_t watchdog_ms;          /**< Device watchdog (CUDA, SIM); 0: none (5000) [any]. */
    /** 64-bit cells, handles 0..cells-1 (1 << 20) [1..MKRT_CONFIG_CELLS_MAX]. */
    uint32_t cells;
    /** APPEND log entries kept until consumed (1 << 20)
     *  [0..MKRT_CONFIG_APPEND_LOG_MAX]; 0: every APPEND fails with
     *  ::MKRT_EOVERFLOW. */
    size_t append_log_capacity;
    mkrt_error_fn on_error;        /**< Error callback; NULL: failures go to the dead-letter ring (NULL). */
    void *error_ctx;               /**< Passed to on_error (NULL). */
    /** Dead-letter ring slots (4096) [power of two,
     *  2..MKRT_CONFIG_DEAD_LETTERS_MAX]. */
    size_t dead_letter_capacity;
    /** CUDA backend: bound of the megakernel's grid (0: no bound)
     *  [0..MKRT_CONFIG_CUDA_BLOCKS_MAX]. The grid is the occupancy API's
     *  resident blocks per SM x SMs, bounded by this. */
    uint32_t cuda_max_blocks;
    /** CUDA backend: PTX text of the device user ops (NULL).
     *
     *  The PTX (`nvcc -rdc=true -ptx`) defines
     *  @code
     *  extern "C" __device__ unsigned mkrt_user_op(unsigned op,
     *      unsigned in, unsigned out, unsigned param,
     *      unsigned long long *cells, unsigned cell_count);
     *  @endcode
     *  returning 0 or a negative ::mkrt_status cast to unsigned; it is
     *  linked into the megakernel at mkrt_create(). Ops registered with
     *  mkrt_op_desc::device run there. */
    const char *cuda_user_ptx;
    /** Size of cuda_user_ptx in bytes; 0 means NUL-terminated (0)
     *  [0..MKRT_CONFIG_CUDA_PTX_MAX]; a size without text is refused. */
    size_t cuda_user_ptx_size;
    /** Device backends (CUDA, SIM): the megakernel leaves the GPU after
     *  this many microseconds without a batch, and the next batch
     *  launches it again (one kernel launch of latency). While it is
     *  resident every synchronising CUDA call of the process (module
     *  loads, cudaMalloc, cudaDeviceSynchronize, another runtime's
     *  mkrt_create) waits for it; 0 keeps it resident for good, which
     *  makes the GPU mkrt's alone (1000) [0..MKRT_CONFIG_DEVICE_US_MAX]. */
    uint32_t device_idle_us;
    /** Device backends: while busy, the megakernel also leaves at a batch
     *  boundary after this many microseconds of residence and is launched
     *  again at once, so that other CUDA work of the process gets the GPU
     *  at least that often; 0: never (10000) [0..MKRT_CONFIG_DEVICE_US_MAX]. */
    uint32_t device_resident_us;
    /** CUDA backend: where the cells and the APPEND log live (0) [0, 1].
     *  0: host memory mapped for the device (every device access crosses
     *  the bus; mkrt_cell_read() reads host memory). 1: device memory;
     *  mkrt_cell_read(), mkrt_cells_read(), mkrt_cell_write() and the log's
     *  readers become explicit copies (same contract), and the state moves
     *  with a copy of the cells and the log whenever a batch runs on the
     *  CPU pool instead (ops the device lacks). After a sticky device
     *  fault the cells and the log fall back to their last copy on the
     *  host. */
    uint32_t cuda_device_state;
    /** CUDA backend: megakernel blocks per SM; 0: as many as the occupancy
     *  API allows (0) [0..MKRT_CONFIG_CUDA_BLOCKS_MAX]. More blocks help wide
     *  layers and make every grid barrier dearer; `bench/cuda_bench` sweeps
     *  1, 2 and the maximum. */
    uint32_t cuda_blocks_per_sm;
    /** Emission queue slots: items emitted by ops (mkrt_op_emit()) that
     *  wait for a batch (65536) [0..MKRT_CONFIG_EMIT_MAX]; 0: every
     *  mkrt_op_emit() fails. A batch may emit what is free when it starts;
     *  more fails the emit with ::MKRT_EOVERFLOW. (mkrt_op_emit_edges()
     *  and RELAX do not use it.) */
    size_t emit_capacity;
} mkrt_config;

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

/** @brief A snapshot of the runtime's counters (mkrt_stats_read()). */
typedef struct mkrt_stats {
    uint64_t published, executed, pruned, failed;
    uint64_t batches, layers, global_barriers;
    uint64_t plan_cache_hits, plan_cache_misses;
    uint64_t ring_high_water;      /**< Most items seen waiting in one ring. */
    uint64_t dead_letters_dropped; /**< Failures lost because the dead-letter ring was full (also counted failed). */
    uint64_t latency_samples;      /**< Publish-to-completion samples taken. */
    uint64_t latency_p50_ns, latency_p99_ns, latency_p999_ns; /* publish to completion */
    uint32_t producers_open;       /**< Producers in the runtime (closed ones count until retired). */
    uint32_t workers;              /**< CPU workers. */
    const char *backend;           /**< What runs batches now: "cpu", "sim" or "cuda" (static string). */
    uint64_t device_batches;       /**< Batches the device ran. */
    uint64_t device_failures;      /**< Device errors or watchdog trips. */
    /** As mkrt_backend_describe(): the backend and why AUTO fell back; owned
     *  by the runtime, valid until mkrt_destroy(). */
    const char *backend_detail;
    uint64_t emitted; /**< Items emitted by ops (mkrt_op_emit(), ::MKRT_OP_RELAX). */
    /** Items that changed their output: on the CPU pool (mkrt_op_changed(),
     *  the update built-ins), and the update built-ins and traversal edges
     *  a megakernel device ran. */
    uint64_t changed;
    /** @var published
     *  @brief Items accepted by mkrt_publish() and friends. */
    /** @var executed
     *  @brief Items that ran successfully. Once the runtime is quiescent,
     *  published + emitted = executed + pruned + failed. */
    /** @var pruned
     *  @brief Items dropped as redundant duplicates. */
    /** @var failed
     *  @brief Items that went to the error path. */
    /** @var batches
     *  @brief Batches run. */
    /** @var layers
     *  @brief Layers (barrier groups) run, over all batches. */
    /** @var global_barriers
     *  @brief Barriers between layers, over all batches. */
    /** @var plan_cache_hits
     *  @brief Batch plans found in the runtime's plan cache. */
    /** @var plan_cache_misses
     *  @brief Batch plans that had to be built. */
    /** @var latency_p50_ns
     *  @brief Median publish-to-completion latency, in ns. */
    /** @var latency_p99_ns
     *  @brief 99th percentile publish-to-completion latency, in ns. */
    /** @var latency_p999_ns
     *  @brief 99.9th percentile publish-to-completion latency, in ns. */
} mkrt_stats;

/** @brief Counters of one producer (mkrt_stats_producers()). */
typedef struct mkrt_producer_stats {
    uint32_t id; /**< The producer's id, unique within the runtime, in opening order. */
    uint64_t published, completed;
    /** @var published
     *  @brief Items this producer published. */
    /** @var completed
     *  @brief Items of this producer that completed (ran, were pruned or failed). */
} mkrt_producer_stats;

/**
 * @brief The default configuration (the values in parentheses in ::mkrt_config).
 * @return The configuration, by value.
 * @par Thread safety
 * Any thread.
 */
mkrt_config mkrt_config_default(void);

/**
 * @brief Creates a runtime: starts the dispatcher and the backend.
 * @param cfg The configuration (copied); NULL: the defaults.
 * @param[out] rt The runtime (NULL on failure). Destroy it with
 *        mkrt_destroy().
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK `*rt` is running.
 * @retval MKRT_EINVAL rt is NULL, or a config field is outside its range
 *         (the message names the field, the value, the range and a fix).
 * @retval MKRT_EOVERFLOW cells or append_log_capacity need more bytes than
 *         the machine can address.
 * @retval MKRT_ENOMEM Memory or a thread could not be had; nothing is left
 *         allocated.
 * @retval MKRT_EDEVICE CUDA was requested but is not usable (AUTO falls
 *         back to the CPU instead).
 * @return The status, as listed (SIM may also report the simulated
 *         device's own ::MKRT_ENOMEM or ::MKRT_EOVERFLOW).
 * @par Thread safety
 * Any thread.
 */
mkrt_status mkrt_create(const mkrt_config *cfg, mkrt_runtime **rt, mkrt_error *err);

/**
 * @brief Stops intake, runs everything published, and frees the runtime.
 *
 * Later publishes get ::MKRT_ECLOSED. Everything already published runs;
 * then every thread is joined and everything freed. If that takes longer
 * than timeout_ns, whatever has not started running goes to the error
 * path with ::MKRT_ETIMEDOUT (the batch in progress still finishes).
 *
 * @param rt The runtime; NULL is a no-op that returns ::MKRT_OK.
 * @param timeout_ns Relative timeout for the drain; ::MKRT_TIMEOUT_INFINITE
 *        waits for ever.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Everything ran (or failed on the error path) and the
 *         runtime is gone.
 * @retval MKRT_ETIMEDOUT The drain timed out; the runtime is still gone.
 * @retval MKRT_EDEVICE The CUDA megakernel did not stop (an op that never
 *         returns): the runtime is gone but its cells and the device's
 *         memory stay allocated.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread, once. Producer threads may be inside mkrt_publish()
 * meanwhile (they get ::MKRT_ECLOSED); producers left open stay valid as
 * handles whose publish, fence and wait return ::MKRT_ECLOSED, and are
 * freed by mkrt_producer_close() (which may also race mkrt_destroy()).
 * mkrt_wait() may overlap it (returning when its ticket completed, or
 * ::MKRT_ECLOSED); calls that take the runtime itself (mkrt_drain(),
 * stats, cells, the log, mkrt_producer_open()) must not overlap it or
 * follow it.
 */
mkrt_status mkrt_destroy(mkrt_runtime *rt, uint64_t timeout_ns, mkrt_error *err);

/**
 * @brief Registers a user op.
 *
 * Registering the same number again replaces it. Only before the first
 * producer is opened successfully (a failed mkrt_producer_open() leaves no
 * trace); the op table is frozen after that.
 *
 * @param rt The runtime.
 * @param op Op number, MKRT_OP_USER_FIRST..MKRT_OP_MAX-1.
 * @param desc The op (copied; desc->name and desc->user must outlive the
 *        runtime).
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Registered.
 * @retval MKRT_EINVAL rt or desc is NULL, op is built in or out of range,
 *         desc->fn is NULL, or a producer was already opened.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread; serialised with mkrt_producer_open().
 */
mkrt_status mkrt_op_register(mkrt_runtime *rt, uint32_t op, const mkrt_op_desc *desc,
                             mkrt_error *err);

/**
 * @brief Opens a producer: a ring of its own to publish into.
 * @param rt The runtime.
 * @param err Filled on failure; may be NULL.
 * @return The producer (close it with mkrt_producer_close()), or NULL with
 *         err set: ::MKRT_EINVAL when rt is NULL, ::MKRT_EAGAIN when
 *         max_producers are open, ::MKRT_ECLOSED when the runtime is
 *         shutting down, ::MKRT_ENOMEM when memory is short.
 * @par Thread safety
 * Any thread. The producer then belongs to one thread at a time.
 */
mkrt_producer *mkrt_producer_open(mkrt_runtime *rt, mkrt_error *err);
/**
 * @brief Closes a producer.
 *
 * Everything it published stays queued and runs; the handle is gone (the
 * runtime retires it once its items are drained).
 *
 * @param p The producer; NULL is ignored.
 * @par Thread safety
 * The producer's owning thread; may race mkrt_destroy() from another
 * thread, also after it returned (the handle is then freed here).
 */
void mkrt_producer_close(mkrt_producer *p);

/**
 * @brief Publishes all n items, waiting for ring space up to timeout_ns.
 *
 * Items are copied, and drained in publish order.
 *
 * @param p The producer.
 * @param items The items; may be NULL when n is 0.
 * @param n Number of items.
 * @param timeout_ns Relative timeout; 0 tries once,
 *        ::MKRT_TIMEOUT_INFINITE waits for ever.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK All n items were published.
 * @retval MKRT_ETIMEDOUT The ring stayed full; a prefix was published
 *         (mkrt_publish_some() tells how long).
 * @retval MKRT_ECLOSED mkrt_destroy() began; a prefix may have been
 *         published.
 * @retval MKRT_EINVAL p is NULL, or items is NULL with n > 0.
 * @return The status, as listed.
 * @par Thread safety
 * The producer's owning thread; other producers publish concurrently.
 */
mkrt_status mkrt_publish(mkrt_producer *p, const mkrt_item *items, size_t n, uint64_t timeout_ns,
                         mkrt_error *err);
/**
 * @brief mkrt_publish(), telling how many items were published.
 * @param p The producer.
 * @param items The items; may be NULL when n is 0.
 * @param n Number of items.
 * @param timeout_ns Relative timeout; 0 tries once,
 *        ::MKRT_TIMEOUT_INFINITE waits for ever.
 * @param[out] published Items published (a prefix of items), whatever the
 *        result; may be NULL.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK All n items were published.
 * @retval MKRT_ETIMEDOUT The ring stayed full; `*published` < n.
 * @retval MKRT_ECLOSED mkrt_destroy() began; `*published` items went in.
 * @retval MKRT_EINVAL p is NULL, or items is NULL with n > 0.
 * @return The status, as listed.
 * @par Thread safety
 * The producer's owning thread.
 */
mkrt_status mkrt_publish_some(mkrt_producer *p, const mkrt_item *items, size_t n,
                              uint64_t timeout_ns, size_t *published, mkrt_error *err);
/**
 * @brief Publishes what fits without blocking.
 * @param p The producer.
 * @param items The items.
 * @param n Number of items.
 * @return How many of items[0..n) were accepted (a prefix): 0 when the
 *         ring is full, the runtime is closing, or an argument is bad.
 * @par Thread safety
 * The producer's owning thread.
 */
size_t mkrt_try_publish(mkrt_producer *p, const mkrt_item *items, size_t n);

/**
 * @brief A ticket covering everything this producer published so far.
 * @param p The producer.
 * @param[out] ticket The ticket: the number of items p has published.
 * @retval MKRT_OK `*ticket` is set.
 * @retval MKRT_EINVAL p or ticket is NULL.
 * @retval MKRT_ECLOSED mkrt_destroy() has returned.
 * @return The status, as listed.
 * @par Thread safety
 * The producer's owning thread.
 */
mkrt_status mkrt_fence(mkrt_producer *p, uint64_t *ticket);
/**
 * @brief Waits until every item covered by a ticket completed.
 *
 * Completed means ran, was pruned or failed. After ::MKRT_OK the cells
 * those items wrote can be read (mkrt_cell_read()). On the CPU backend,
 * while the dispatcher is idle the waiting thread runs the pending batches
 * itself (the same stages, in the same order: ordering is unchanged)
 * instead of sleeping until the dispatcher wakes.
 *
 * Deadline: the call returns by timeout_ns, or, when it is running an op
 * itself at that moment, as soon as that op returns (an op is never
 * interrupted; the overrun is at most one op's duration, or one chunk of
 * up to 256 edges of a graph traversal's expanding op). Whatever it has
 * not run by then (the rest of a batch, a batch drained meanwhile) is left
 * to the dispatcher and the workers, and runs exactly once, in order.
 *
 * @param p The producer that issued the ticket.
 * @param ticket From mkrt_fence().
 * @param timeout_ns Relative timeout; 0 checks once,
 *        ::MKRT_TIMEOUT_INFINITE waits for ever.
 * @retval MKRT_OK Everything the ticket covers completed.
 * @retval MKRT_ETIMEDOUT Not yet.
 * @retval MKRT_EINVAL At once, for a NULL producer or a ticket this
 *         producer never issued (above everything it has published).
 * @retval MKRT_ECLOSED The runtime stopped before the ticket completed.
 * @return The status, as listed.
 * @par Thread safety
 * The producer's owning thread; may overlap mkrt_destroy().
 */
mkrt_status mkrt_wait(mkrt_producer *p, uint64_t ticket, uint64_t timeout_ns);
/**
 * @brief Waits until everything published (by any producer) before the call has completed.
 *
 * Like mkrt_wait(), it runs pending batches itself on the CPU backend
 * while the dispatcher is idle, and keeps its deadline as mkrt_wait()
 * does (at worst one op of a batch it runs itself past timeout_ns; the
 * rest is left to the dispatcher). "Published before the call" is meant as
 * for mkrt_quiesce(): the item's publish call returned before this call
 * began. Items other threads publish meanwhile may or may not be waited
 * for; their completion never stands in for an older item's.
 *
 * @param rt The runtime.
 * @param timeout_ns Relative timeout; 0 checks once,
 *        ::MKRT_TIMEOUT_INFINITE waits for ever.
 * @retval MKRT_OK Everything published before the call completed.
 * @retval MKRT_ETIMEDOUT Not yet.
 * @retval MKRT_EINVAL rt is NULL.
 * @retval MKRT_ECLOSED The runtime stopped first.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread, not overlapping mkrt_destroy(); never from an op or the
 * error callback.
 */
mkrt_status mkrt_drain(mkrt_runtime *rt, uint64_t timeout_ns);
/**
 * @brief Waits until everything published before the call, and all it emitted, transitively, completed.
 *
 * Unlike mkrt_drain(), this also waits for the items that ops emitted
 * (mkrt_op_emit(), ::MKRT_OP_RELAX), the items those emitted, and so on.
 * After ::MKRT_OK every cell holds the result of everything published
 * before the call and of all it emitted (and of whatever ran meanwhile);
 * read them with mkrt_cells_read().
 *
 * It waits for a snapshot, not for a moment when the runtime is idle, so
 * it ends under any concurrent load (liveness): other producers may keep
 * publishing items that emit, and the call still returns once the
 * snapshot's work is done. To that end, while the call waits and work
 * that descends from the snapshot is still pending, the runtime takes no
 * new items from the producers' rings (they wait there, as under
 * backpressure; publishing goes on into the rings), so that work cannot
 * grow with the new load; it ends because emission chains end (a chain
 * that waits for other items to be taken in first, such as an op that
 * re-emits itself until some later item ran, makes the call time out). Emitted work is attributed to the
 * oldest batch it may descend from, so the call may also wait for some
 * items published after it began, never for an unbounded amount.
 * Deadline and helping as for mkrt_drain(): at worst one op past
 * timeout_ns.
 *
 * "Published before the call" means: the item's mkrt_publish(),
 * mkrt_publish_some() or mkrt_try_publish() call put it in its producer's
 * ring and returned, and that return happens before this call begins (the
 * same thread published it, or the publishing thread's return was followed
 * by a synchronization with this thread: a mutex, a join, an atomic
 * release/acquire). Such items run, and everything they emit, transitively,
 * before ::MKRT_OK, whatever other producers publish concurrently. Items
 * published concurrently with the call (their publish call has not
 * returned when it begins) may or may not be waited for; a snapshot whose
 * items emit for ever (a cycle of emissions) never completes (the call then
 * times out).
 *
 * @param rt The runtime.
 * @param timeout_ns Relative timeout; 0 checks once,
 *        ::MKRT_TIMEOUT_INFINITE waits for ever.
 * @retval MKRT_OK Quiescent.
 * @retval MKRT_ETIMEDOUT Not yet.
 * @retval MKRT_EINVAL rt is NULL.
 * @retval MKRT_ECLOSED The runtime stopped first.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread, not overlapping mkrt_destroy(); never from an op or the
 * error callback.
 */
mkrt_status mkrt_quiesce(mkrt_runtime *rt, uint64_t timeout_ns);

/**
 * @brief A snapshot of the counters.
 * @param rt The runtime.
 * @param[out] out The counters.
 * @retval MKRT_OK `*out` is set.
 * @retval MKRT_EINVAL rt or out is NULL.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread, at any time before mkrt_destroy().
 */
mkrt_status mkrt_stats_read(mkrt_runtime *rt, mkrt_stats *out);
/**
 * @brief Counters of the producers in the runtime.
 *
 * Open producers, and closed ones the runtime has not retired yet.
 *
 * @param rt The runtime.
 * @param[out] out Room for max entries.
 * @param max Most entries to fill.
 * @return How many entries were filled; 0 for a NULL rt, or a NULL out
 *         with max > 0.
 * @par Thread safety
 * Any thread, before mkrt_destroy().
 */
size_t mkrt_stats_producers(mkrt_runtime *rt, mkrt_producer_stats *out, size_t max);

/**
 * @brief Reads a cell.
 *
 * The value is consistent after mkrt_drain() or mkrt_wait() returned for
 * the items that wrote it.
 *
 * @param rt The runtime.
 * @param handle Cell index, below mkrt_config::cells.
 * @param[out] value The cell's value.
 * @retval MKRT_OK `*value` is set.
 * @retval MKRT_EINVAL rt or value is NULL, or handle >= cells.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread, before mkrt_destroy().
 */
mkrt_status mkrt_cell_read(mkrt_runtime *rt, uint32_t handle, uint64_t *value);
/**
 * @brief Reads cells first .. first + count - 1 into out, in one call.
 *
 * The same contract as mkrt_cell_read(): once mkrt_wait() has returned for
 * a ticket (or mkrt_drain() has returned), the values include the effects
 * of every item that ticket covers; cells that items still in flight touch
 * may hold any value they pass through. On a device backend this is one
 * bulk copy, so prefer it to a loop of mkrt_cell_read().
 *
 * @param rt The runtime.
 * @param first First cell index.
 * @param count How many cells; 0 reads nothing and succeeds.
 * @param[out] out Room for count values.
 * @retval MKRT_OK out[0 .. count-1] are set.
 * @retval MKRT_EINVAL rt is NULL, out is NULL with count > 0, or the range
 *         does not lie below mkrt_config::cells (nothing is written).
 * @return The status, as listed.
 * @par Thread safety
 * Any thread, before mkrt_destroy().
 */
mkrt_status mkrt_cells_read(mkrt_runtime *rt, uint32_t first, size_t count, uint64_t *out);
/**
 * @brief Writes a cell.
 *
 * Write a cell only while no published item that touches it may still
 * run.
 *
 * @param rt The runtime.
 * @param handle Cell index, below mkrt_config::cells.
 * @param value The value.
 * @retval MKRT_OK Written.
 * @retval MKRT_EINVAL rt is NULL, or handle >= cells.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread, before mkrt_destroy(); not concurrently with items or other
 * writers of the same cell.
 */
mkrt_status mkrt_cell_write(mkrt_runtime *rt, uint32_t handle, uint64_t value);

/**
 * @brief One entry of the APPEND log: (handle, param) of an APPEND that ran.
 *
 * The APPEND log is one ring of entries for all handles, in the order the
 * APPENDs ran (APPENDs to one handle run in drain order), of
 * append_log_capacity entries. An entry is visible once the batch that
 * appended it has completed (never half written). Entries stay until
 * consumed; an APPEND that finds the log full fails with ::MKRT_EOVERFLOW
 * (error path), so consume as you go in a long-running program. Readers
 * and consumers may run on any threads, concurrently with everything else.
 */
typedef struct mkrt_append_entry {
    uint32_t handle, param;
    /** @var handle
     *  @brief The APPEND's out handle. */
    /** @var param
     *  @brief The APPEND's param. */
} mkrt_append_entry;
/**
 * @brief The params APPENDed to a handle that are in the log, oldest first.
 *
 * Only completed, not yet consumed entries; nothing is removed.
 *
 * @param rt The runtime.
 * @param handle The handle.
 * @param[out] out Room for max params.
 * @param max Most params to write.
 * @return How many such entries there are (at most max are written); 0 for
 *         a NULL rt, or a NULL out with max > 0.
 * @par Thread safety
 * Any thread, concurrently with everything but mkrt_destroy().
 */
size_t mkrt_append_log_read(mkrt_runtime *rt, uint32_t handle, uint32_t *out, size_t max);
/**
 * @brief Takes the oldest completed entries out of the log and frees their room.
 *
 * All handles, log order. Concurrent consumers each get distinct entries,
 * together every entry exactly once.
 *
 * @param rt The runtime.
 * @param[out] out Room for max entries.
 * @param max Most entries to take.
 * @return How many entries were taken; 0 for a NULL rt, or a NULL out with
 *         max > 0.
 * @par Thread safety
 * Any thread, concurrently with everything but mkrt_destroy().
 */
size_t mkrt_append_log_consume(mkrt_runtime *rt, mkrt_append_entry *out, size_t max);

/**
 * @brief Takes failed items kept when there is no error callback.
 *
 * The dead-letter ring holds dead_letter_capacity items; failures beyond
 * that are counted in mkrt_stats::dead_letters_dropped.
 *
 * @param rt The runtime.
 * @param[out] out Room for max items.
 * @param max Most items to take.
 * @return How many items were taken, oldest first; 0 for a NULL rt, or a
 *         NULL out with max > 0.
 * @par Thread safety
 * Any thread, concurrently with everything but mkrt_destroy().
 */
size_t mkrt_dead_letters_pop(mkrt_runtime *rt, mkrt_item *out, size_t max);

/**
 * @brief Describes the backend and why it was chosen.
 *
 * For example "cpu: 2 workers", "cpu: 2 workers (auto fell back: ...)",
 * or, once a device failed, "cpu: 2 workers (the device failed and is not
 * used again: ...)".
 *
 * @param rt The runtime.
 * @return A string owned by the runtime (valid until mkrt_destroy()), or a
 *         static message saying so for a NULL rt.
 * @par Thread safety
 * Any thread, before mkrt_destroy().
 */
const char *mkrt_backend_describe(mkrt_runtime *rt);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_RUNTIME_H */
