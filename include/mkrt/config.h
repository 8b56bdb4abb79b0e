/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/config.h
 * @brief The runtime's handle types and its configuration (mkrt_create()).
 *
 * ::mkrt_config, its limits (MKRT_CONFIG_*_MAX) and defaults
 * (mkrt_config_default()), the backend choice and the error callback;
 * the opaque ::mkrt_runtime and ::mkrt_producer the other runtime headers
 * take.
 */
#ifndef MKRT_CONFIG_H
#define MKRT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/explain.h"
#include "mkrt/item.h"
#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/** @brief Largest mkrt_config::class_max_age_us (60 s). */
#define MKRT_CONFIG_CLASS_AGE_MAX 60000000u
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
    /** CPU workers (0) [0..MKRT_CONFIG_WORKERS_MAX]: the threads that
     *  execute items, the dispatching thread among them (workers - 1 are
     *  started beside it). 0: one per CPU the process may run on (its
     *  affinity mask), and each batch then uses only as many as are free
     *  of producers still publishing (on 2 CPUs with one busy producer:
     *  the batch runs on the dispatching thread). A number given here
     *  starts that many; a batch uses all of them unless a producer of
     *  it publishes again while it is planned (SHED, mkrt_plan_off): then
     *  it leaves that producer a CPU, as the default does. */
    uint32_t workers;
    size_t ring_capacity;          /**< Ring slots per producer (16384: 256 KiB) [power of two, 2..MKRT_RING_CAPACITY_MAX]. */
    size_t max_batch;              /**< Items per batch (65536) [1..MKRT_CONFIG_MAX_BATCH_MAX]. */
    uint32_t max_producers;        /**< Producers open at once (64) [1..MKRT_CONFIG_PRODUCERS_MAX]. */
    /** Items per ring per drain pass (1024); at most max_batch are taken
     *  [1..MKRT_CONFIG_MAX_BATCH_MAX]. */
    size_t burst_per_ring;
    /** Device memory the runtime may use, in bytes (0) [any]: what the
     *  device holds of its data (the registered graph and its frontier, the
     *  cells and the APPEND log when they live in device memory) plus a
     *  layer's envelope (the device's own batch buffers are taken at start,
     *  which is refused when they do not fit); a layer that does not fit is split,
     *  an item that does not fit alone fails with ::MKRT_EBUDGET, a graph
     *  that does not fit stays off the device (its traversals run on the
     *  CPU pool; mkrt_backend_describe() says why). 0 on the CUDA backend:
     *  the device's free memory at mkrt_create() (cuMemGetInfo) less a
     *  reserve of 5% of its total memory, at least 64 MiB and at most half
     *  of what is free; mkrt_plan_explain() shows the budget and the
     *  resident bytes. 0 elsewhere (SIM, CPU): unbounded. */
    uint64_t device_memory_budget;
    /** Device watchdog (CUDA, SIM): a batch without progress this long
     *  fails, and the device then gets as long again to stop before the
     *  CPU pool takes over; 0: none (5000) [any]. */
    uint32_t watchdog_ms;
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
    /** The plan's decisions turned off, for A/B runs (0: every decision
     *  on) [an OR of the MKRT_PLAN_* bits of mkrt/explain.h, at most
     *  MKRT_PLAN_ALL]. The environment variable MKRT_PLAN_OFF, when set,
     *  replaces it: "none", "all", a comma list of wake, shed, fuse,
     *  route, drain, pull, arms and queue, or a number. */
    uint32_t plan_off;
    /** Latency classes (mkrt_producer_set_class()): the longest bulk work
     *  waits while interactive work keeps the drain, in microseconds,
     *  measured from the first batch that passed it over; then a bulk
     *  batch goes first (5000) [0..MKRT_CONFIG_CLASS_AGE_MAX]; 0: no time
     *  bound (bulk still goes first after 32 batches in a row). */
    uint32_t class_max_age_us;
    /** Latency classes: while an interactive producer is open, a bulk
     *  batch is cut to the items that run in about this many microseconds
     *  (at the measured run time per item of the bulk batches before), so
     *  interactive work arriving meanwhile waits about that long (250)
     *  [0..MKRT_CONFIG_CLASS_AGE_MAX]; 0: bulk batches are cut by
     *  max_batch only. */
    uint32_t class_slice_us;
} mkrt_config;

/**
 * @brief The default configuration (the values in parentheses in ::mkrt_config).
 * @return The configuration, by value.
 * @par Thread safety
 * Any thread.
 */
mkrt_config mkrt_config_default(void);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_CONFIG_H */
