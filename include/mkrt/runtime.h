/* SPDX-License-Identifier: BSD-2-Clause */
/* mkrt/runtime.h - the runtime: producers -> dispatcher -> megakernel.
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
 *   B runs after A when B.in == A.out, B.out == A.out, or B.out == A.in.
 *   A producer's items are drained in publish order.
 *   Batches run in order: batch k completes before batch k+1 starts.
 *   Results are those of running the admitted items one after another in
 *   drain order. Dedupe never changes them: an exact duplicate (same op,
 *   in, out, param) of an earlier item of the batch is pruned only when
 *   the op is idempotent for it (mkrt_op_desc.idempotent; built-ins: NOP
 *   and STORE always, ADD when in != out, APPEND never) and no item
 *   between the two writes (has as out) the duplicate's in or out handle.
 * Accounting: published = executed + pruned + failed, always, once drained:
 * every item is counted exactly once. When the device faults or its
 * watchdog trips, every admitted item of that batch is reported failed
 * (MKRT_EDEVICE or MKRT_ETIMEDOUT; items refused at admission keep their own
 * status), including items the device ran before it failed: the cells that
 * batch writes are then undefined, and its APPENDs are dropped.
 * Nothing is dropped silently: an item that cannot run (unknown op, handle
 * out of range, a failing user op, over the memory budget, or left when
 * destroy times out) goes to the error callback, or to the dead-letter ring
 * when there is no callback, and is counted as failed. Items are checked
 * (op known, handles below mkrt_config.cells: STORE and APPEND out, ADD in
 * and out, user ops in and out; room in the APPEND log) before dedupe and
 * layering, the same way on every backend, so a bad item never reaches an
 * op and never adds a layer.
 * Bad arguments (NULL pointers, out-of-range numbers) to any call return
 * MKRT_EINVAL (or 0 / NULL where the call returns a count or a handle);
 * nothing aborts.
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

/* Built-in ops. User ops use numbers from MKRT_OP_USER_FIRST up. */
enum {
    MKRT_OP_NOP = 0,    /* nothing */
    MKRT_OP_STORE = 1,  /* cell[out] = param */
    MKRT_OP_ADD = 2,    /* cell[out] = cell[in] + param */
    MKRT_OP_APPEND = 3, /* append param to out's log (observable order) */
    MKRT_OP_USER_FIRST = 16
};
#define MKRT_OP_MAX 4096 /* ops are numbered 0..MKRT_OP_MAX-1 */

/* Upper bounds of mkrt_config fields (mkrt_create: MKRT_EINVAL above them). */
#define MKRT_CONFIG_WORKERS_MAX 1024u
#define MKRT_CONFIG_MAX_BATCH_MAX ((size_t)1 << 24)
#define MKRT_CONFIG_PRODUCERS_MAX 4096u
#define MKRT_CONFIG_CELLS_MAX (1u << 30)          /* 8 GiB of cells */
#define MKRT_CONFIG_APPEND_LOG_MAX ((size_t)1 << 30) /* 8 GiB of entries */
#define MKRT_CONFIG_DEAD_LETTERS_MAX ((size_t)1 << 24)
#define MKRT_CONFIG_CUDA_BLOCKS_MAX 2048u
#define MKRT_CONFIG_CUDA_PTX_MAX ((size_t)64 << 20)

typedef enum mkrt_backend_kind {
    MKRT_BACKEND_AUTO, /* CUDA when built and usable, else CPU (the reason is in
                        * mkrt_backend_describe and mkrt_stats.backend_detail) */
    MKRT_BACKEND_CPU,
    /* The persistent megakernel on GPU 0 through the CUDA Driver API
     * (libcuda.so.1 loaded at run time). Batches of built-in ops, and of
     * device user ops, run on the GPU; batches with other user ops on the
     * CPU pool. A device fault or a watchdog trip sends the batch to the
     * error path and the runtime carries on with the CPU pool. */
    MKRT_BACKEND_CUDA,
    /* The megakernel protocol (control block, doubled descriptors,
     * doorbell, watchdog) against a host thread that plays the device: the
     * GPU path's host side, testable anywhere. Batches with user ops (C
     * functions) run on the CPU pool; if the device fails or hangs, its
     * batch goes to the error path and the runtime continues on the CPU. */
    MKRT_BACKEND_SIM
} mkrt_backend_kind;

typedef struct mkrt_runtime mkrt_runtime;
typedef struct mkrt_producer mkrt_producer;

/* Called on the dispatcher thread for every item that fails; must not call
 * back into the runtime's blocking functions. */
typedef void (*mkrt_error_fn)(void *ctx, const mkrt_item *item, mkrt_status why,
                              const char *message);

/* Each field: meaning (default) [accepted range]. */
typedef struct mkrt_config {
    mkrt_backend_kind backend;     /* AUTO [AUTO, CPU, CUDA, SIM] */
    uint32_t workers;              /* 0: one per online CPU [0..MKRT_CONFIG_WORKERS_MAX] */
    size_t ring_capacity;          /* per producer (4096) [power of two, 2..MKRT_RING_CAPACITY_MAX] */
    size_t max_batch;              /* items per batch (65536) [1..MKRT_CONFIG_MAX_BATCH_MAX] */
    uint32_t max_producers;        /* open at once (64) [1..MKRT_CONFIG_PRODUCERS_MAX] */
    size_t burst_per_ring;         /* items per ring per drain pass (1024), at most max_batch
                                    * are taken [1..MKRT_CONFIG_MAX_BATCH_MAX] */
    uint64_t device_memory_budget; /* bytes a layer may use, 0: unbounded [any] */
    uint32_t watchdog_ms;          /* device watchdog (CUDA, SIM); 0: none (5000) [any] */
    uint32_t cells;                /* 64-bit cells, handles 0..cells-1 (1 << 20)
                                    * [1..MKRT_CONFIG_CELLS_MAX] */
    /* APPEND log entries kept until consumed (1 << 20) [0..MKRT_CONFIG_APPEND_LOG_MAX];
     * 0: every APPEND fails with MKRT_EOVERFLOW. */
    size_t append_log_capacity;
    mkrt_error_fn on_error;        /* NULL: failures go to the dead-letter ring */
    void *error_ctx;
    size_t dead_letter_capacity;   /* (4096) [power of two, 2..MKRT_CONFIG_DEAD_LETTERS_MAX] */
    /* CUDA backend. The megakernel's grid is the occupancy API's resident
     * blocks per SM x SMs, bounded by cuda_max_blocks (0: no bound). Device
     * user ops: PTX text defining
     *   extern "C" __device__ unsigned mkrt_user_op(unsigned op,
     *       unsigned in, unsigned out, unsigned param,
     *       unsigned long long *cells, unsigned cell_count);
     * (nvcc -rdc=true -ptx), returning 0 or a negative mkrt_status cast to
     * unsigned; linked into the megakernel at mkrt_create. Ops registered
     * with mkrt_op_desc.device run there; size 0 means NUL-terminated.
     * cuda_max_blocks [0..MKRT_CONFIG_CUDA_BLOCKS_MAX]; the PTX at most
     * MKRT_CONFIG_CUDA_PTX_MAX bytes, and a size without text is refused. */
    uint32_t cuda_max_blocks;
    const char *cuda_user_ptx;
    size_t cuda_user_ptx_size;
} mkrt_config;

/* What a user op sees. Cells may be read and written only at the item's
 * in and out handles (the ordering contract covers nothing else). */
typedef struct mkrt_op_ctx {
    uint64_t *cells;
    uint32_t cell_count;
    void *user;
} mkrt_op_ctx;

typedef mkrt_status (*mkrt_op_fn)(const mkrt_item *item, const mkrt_op_ctx *ctx);

typedef struct mkrt_op_desc {
    mkrt_op_fn fn;
    void *user;
    /* Memory envelope of one item of this op, for the frontier planner:
     * a layer's items are split into chunks whose fused bytes (frontier +
     * 4 x scratch + output) fit device_memory_budget. */
    uint64_t frontier_bytes, scratch_bytes, output_bytes;
    const char *name; /* for messages; may be NULL */
    /* The op is also defined by mkrt_user_op in mkrt_config.cuda_user_ptx:
     * on the CUDA backend its items run on the GPU. fn stays its CPU
     * implementation (CPU backend, fallback) and must give the same
     * results. */
    bool device;
    /* Running an item twice in a row has the effect of running it once
     * (for example out = max(out, param), or out = f(in) with in != out),
     * so dedupe may prune its exact duplicates (see the ordering contract
     * above). false (the default, and the safe choice): every copy runs,
     * as for an op that accumulates (out += param). */
    bool idempotent;
} mkrt_op_desc;

typedef struct mkrt_stats {
    uint64_t published, executed, pruned, failed;
    uint64_t batches, layers, global_barriers;
    uint64_t plan_cache_hits, plan_cache_misses;
    uint64_t ring_high_water;      /* most items seen waiting in one ring */
    uint64_t dead_letters_dropped; /* dead-letter ring full (also counted failed) */
    uint64_t latency_samples;
    uint64_t latency_p50_ns, latency_p99_ns, latency_p999_ns; /* publish to completion */
    uint32_t producers_open;
    uint32_t workers;
    const char *backend;        /* "cpu", "sim" or "cuda" (what runs batches now) */
    uint64_t device_batches;    /* batches the device ran */
    uint64_t device_failures;   /* device errors or watchdog trips */
    const char *backend_detail; /* as mkrt_backend_describe: why AUTO fell back */
} mkrt_stats;

typedef struct mkrt_producer_stats {
    uint32_t id;
    uint64_t published, completed;
} mkrt_producer_stats;

mkrt_config mkrt_config_default(void);

/* Starts the dispatcher and the backend. cfg NULL: the defaults.
 * MKRT_EINVAL (rt NULL, or a config field outside its range, with the field,
 * the value, the range and a Fix), MKRT_ENOMEM (nothing is left allocated),
 * MKRT_EDEVICE (CUDA requested but not usable; AUTO falls back to CPU). */
mkrt_status mkrt_create(const mkrt_config *cfg, mkrt_runtime **rt, mkrt_error *err);

/* Stops intake (later publishes: MKRT_ECLOSED), runs everything already
 * published, joins every thread and frees everything. If that takes longer
 * than timeout_ns, whatever has not started running goes to the error path
 * with MKRT_ETIMEDOUT (the batch in progress still finishes) and
 * MKRT_ETIMEDOUT is returned. Producer threads may be inside mkrt_publish
 * meanwhile (they get MKRT_ECLOSED); producers left open stay valid as
 * handles whose publish, fence and wait return MKRT_ECLOSED, and are freed
 * by mkrt_producer_close (which may also race mkrt_destroy). mkrt_wait may
 * overlap it (returning when its ticket completed, or MKRT_ECLOSED); calls
 * that take the runtime itself (mkrt_drain, stats, cells, the log) must not
 * overlap it or follow it. */
mkrt_status mkrt_destroy(mkrt_runtime *rt, uint64_t timeout_ns, mkrt_error *err);

/* Registers op (MKRT_OP_USER_FIRST..MKRT_OP_MAX-1) before any producer is
 * opened (registering the same number again replaces it). MKRT_EINVAL for
 * a NULL rt or desc, a built-in number, an out-of-range number, a NULL fn,
 * or a registration after the first producer opened successfully (a failed
 * mkrt_producer_open leaves no trace). */
mkrt_status mkrt_op_register(mkrt_runtime *rt, uint32_t op, const mkrt_op_desc *desc,
                             mkrt_error *err);

/* NULL + err when rt is NULL (MKRT_EINVAL), max_producers are open
 * (MKRT_EAGAIN), the runtime is shutting down (MKRT_ECLOSED), or memory is
 * short (MKRT_ENOMEM). */
mkrt_producer *mkrt_producer_open(mkrt_runtime *rt, mkrt_error *err);
/* Everything published stays queued and runs; the handle is gone. May race
 * mkrt_destroy from another thread. NULL is ignored. */
void mkrt_producer_close(mkrt_producer *p);

/* Publishes all n items, waiting for ring space up to timeout_ns.
 * MKRT_OK, or MKRT_ETIMEDOUT / MKRT_ECLOSED after publishing a prefix
 * (mkrt_publish_some tells how long). Items are copied. */
mkrt_status mkrt_publish(mkrt_producer *p, const mkrt_item *items, size_t n, uint64_t timeout_ns,
                         mkrt_error *err);
mkrt_status mkrt_publish_some(mkrt_producer *p, const mkrt_item *items, size_t n,
                              uint64_t timeout_ns, size_t *published, mkrt_error *err);
/* Non-blocking: how many of items[0..n) were accepted (a prefix). */
size_t mkrt_try_publish(mkrt_producer *p, const mkrt_item *items, size_t n);

/* A ticket covering everything this producer published so far.
 * MKRT_EINVAL for NULL arguments, MKRT_ECLOSED after mkrt_destroy. */
mkrt_status mkrt_fence(mkrt_producer *p, uint64_t *ticket);
/* Waits until every item covered by ticket completed (ran, was pruned or
 * failed). MKRT_ETIMEDOUT otherwise; MKRT_EINVAL at once for a NULL
 * producer or a ticket this producer never issued (above everything it has
 * published); MKRT_ECLOSED once the runtime stopped. */
mkrt_status mkrt_wait(mkrt_producer *p, uint64_t ticket, uint64_t timeout_ns);
/* Waits until everything published before the call has completed.
 * MKRT_EINVAL for a NULL rt. */
mkrt_status mkrt_drain(mkrt_runtime *rt, uint64_t timeout_ns);

/* A snapshot of the counters. MKRT_EINVAL for NULL arguments. */
mkrt_status mkrt_stats_read(mkrt_runtime *rt, mkrt_stats *out);
/* Fills up to max entries for the open producers; returns how many (0 for
 * NULL arguments). */
size_t mkrt_stats_producers(mkrt_runtime *rt, mkrt_producer_stats *out, size_t max);

/* Cell values. Consistent after mkrt_drain/mkrt_wait returned for the items
 * that wrote them; write a cell only while no published item that touches
 * it may still run. MKRT_EINVAL for NULL arguments or handle >= cells. */
mkrt_status mkrt_cell_read(mkrt_runtime *rt, uint32_t handle, uint64_t *value);
mkrt_status mkrt_cell_write(mkrt_runtime *rt, uint32_t handle, uint64_t value);

/* The APPEND log: one ring of (handle, param) entries for all handles, in
 * the order the APPENDs ran (APPENDs to one handle run in drain order), of
 * append_log_capacity entries. An entry is visible once the batch that
 * appended it has completed (never half written). Entries stay until
 * consumed; an APPEND that finds the log full fails with MKRT_EOVERFLOW
 * (error path), so consume as you go in a long-running program. Readers and
 * consumers may run on any threads, concurrently with everything else. */
typedef struct mkrt_append_entry {
    uint32_t handle, param;
} mkrt_append_entry;
/* The params APPENDed to handle that are in the log (completed, not yet
 * consumed), oldest first; returns how many there are (writes at most max).
 * 0 for a NULL rt, or a NULL out with max > 0. */
size_t mkrt_append_log_read(mkrt_runtime *rt, uint32_t handle, uint32_t *out, size_t max);
/* Takes up to max of the oldest completed entries (all handles, log order)
 * out of the log and frees their room; returns how many. Concurrent
 * consumers each get distinct entries, together every entry exactly once.
 * 0 for a NULL rt, or a NULL out with max > 0. */
size_t mkrt_append_log_consume(mkrt_runtime *rt, mkrt_append_entry *out, size_t max);

/* Failed items kept when there is no error callback (0 for NULL arguments). */
size_t mkrt_dead_letters_pop(mkrt_runtime *rt, mkrt_item *out, size_t max);

/* "cpu: 2 workers" / "cuda: ..., fell back to cpu because ...". A static
 * message saying so for a NULL rt. */
const char *mkrt_backend_describe(mkrt_runtime *rt);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_RUNTIME_H */
