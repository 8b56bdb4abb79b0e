/* SPDX-License-Identifier: BSD-2-Clause */
/* src/cuda/cuda_engine.h - the megakernel on a real GPU, through the
 * Driver API (loaded by cuda_loader.c).
 *
 * Start: primary context of device 0; module from the embedded fatbin, or
 * the relocatable megakernel linked with the user's PTX (cuLink*);
 * occupancy-sized grid (blocks per SM from the occupancy API x SMs,
 * bounded by max_blocks); the control block and the failure lists in
 * host-mapped pinned memory; the runtime's cells and APPEND log registered
 * as host-mapped memory (the device writes them in place, so reading a
 * cell needs no copy back); two pinned staging buffers and two device
 * buffers; one cooperative launch on a non-blocking stream. Everything is
 * allocated before the launch: allocating or freeing device memory while
 * a persistent kernel runs can wait on that kernel. The kernel leaves the
 * GPU after idle_ns without a batch (and after resident_ns at a batch
 * boundary) and mk_host relaunches it on the same stream (protocol.h,
 * "Leaving the GPU"); while the kernel runs the engine makes no call that
 * synchronises with it (only async copies and queries on its own
 * non-blocking streams, and launches).
 * Staging: batches of up to MKRT__CUDA_ZERO_COPY_MAX items are read by the
 * device straight from pinned memory (no copy to wait for); larger ones
 * are copied with cuMemcpyHtoDAsync on a second stream, completed by flush
 * before the doorbell, by DMA straight from the runtime's batch buffers
 * when they are registered (cfg.dma: cuMemHostRegister at start; where
 * registration fails, through a host copy into the pinned staging buffer
 * first, and describe says so). Stage k+1 may overlap batch k running.
 * With cfg.device_state the cells, the log and the progress words are in
 * device memory (see the state functions below); the descriptors stay in
 * the mapped control block and small batches are still read in place, so
 * a batch costs no copy and no stream synchronisation there either.
 * Memory: the device's free and total memory (cuMemGetInfo) are read at
 * start, before allocating (a start that would not fit is refused with the
 * numbers), and after: memory_budget is what the runtime's data may hold
 * on the device (mkrt__cuda_engine_resident: the cells and the log in
 * device memory, the graph and its frontier), those already there
 * included: the free memory after the engine's own buffers less the
 * reserve (mkrt__cuda_mem_reserve), plus the resident bytes.
 * Every call makes the context current on the calling thread first.
 */
#ifndef MKRT_BACKEND_CUDA_ENGINE_H
#define MKRT_BACKEND_CUDA_ENGINE_H

#include <stdbool.h>

#include "cuda/cuda_loader.h"
#include "cuda/mk_device_ops.h"

#define MKRT__CUDA_ZERO_COPY_MAX 4096u
#define MKRT__CUDA_BLOCK_THREADS 256u
/* Device memory left to the driver, other processes and the application's
 * own CUDA work when the budget is taken from the device: 5% of the total,
 * at least 64 MiB, never more than half of what is free. */
#define MKRT__CUDA_MEM_RESERVE_MIN (64ull << 20)
uint64_t mkrt__cuda_mem_reserve(uint64_t free_bytes, uint64_t total_bytes);
/* Host ranges (the runtime's batch buffers) registered for DMA. */
#define MKRT__CUDA_DMA_RANGES 4
typedef struct mkrt__cuda_host_range {
    void *host;
    size_t bytes;
} mkrt__cuda_host_range;

typedef struct mkrt__cuda_engine_config {
    uint64_t *cells;          /* host array to map, page aligned */
    uint32_t cell_count;
    uint32_t *append_log;     /* (handle, param) pairs, page aligned; may be NULL */
    uint64_t append_capacity; /* pairs */
    uint32_t capacity;        /* items per batch */
    uint32_t max_blocks;      /* 0: as many as can be resident */
    const char *user_ptx;     /* may be NULL: no device user ops */
    size_t user_ptx_size;     /* bytes, 0: strlen */
    uint64_t idle_ns;         /* the kernel leaves after this long idle (0: never) */
    uint64_t resident_ns;     /* ... and at a batch boundary after this long (0: never) */
    bool device_state;        /* cells and log in device memory (else host-mapped) */
    uint32_t blocks_per_sm;   /* 0: the occupancy API's maximum; else at most that */
    /* Host buffers whose batches are copied by DMA from where they are
     * (registered at start); NULL hosts are skipped. */
    mkrt__cuda_host_range dma[MKRT__CUDA_DMA_RANGES];
} mkrt__cuda_engine_config;

typedef struct mkrt__cuda_staging {
    void *host;               /* pinned, mapped: items | offsets | failure list */
    CUdeviceptr mapped;       /* its device address */
    CUdeviceptr dev;          /* device memory: items | offsets */
} mkrt__cuda_staging;

typedef struct mkrt__cuda_engine {
    mkrt__cuda_api cu;
    CUcontext ctx;
    bool ctx_retained;
    CUmodule mod;
    CUfunction fn;
    CUstream run, copy;
    mkrt__mk_control *ctl;
    CUdeviceptr ctl_dev;
    uint64_t *cells;
    size_t cells_bytes;
    bool cells_registered;
    uint32_t *append_log;
    size_t log_bytes;
    bool log_registered;
    /* The batch buffers registered for DMA (cfg.dma), with their device
     * view; dma_fail: why registration failed (large batches then take a
     * host copy), "" when every range is registered. */
    mkrt__cuda_host_range dma[MKRT__CUDA_DMA_RANGES];
    bool dma_registered[MKRT__CUDA_DMA_RANGES];
    char dma_fail[160];
    uint64_t dma_copies, host_copies; /* large batches staged each way */
    /* Device memory: what the engine holds (cuMemAlloc, all of it; the
     * graph's and frontier's part), what the device reported at start,
     * and the runtime's budget taken from it. */
    uint64_t dev_bytes, graph_bytes;
    uint64_t mem_free, mem_total, memory_budget;
    mkrt__cuda_staging staging[2];
    size_t items_bytes, offsets_bytes, fails_bytes; /* per staging buffer */
    uint32_t capacity, blocks, blocks_per_sm;
    uint64_t idle_ns;
    /* Device-resident state (cfg.device_state): the cells and the log in
     * device memory, copied on the state stream through a pinned bounce
     * buffer; callers serialise (the runtime's state_lock). */
    bool device_state;
    CUdeviceptr d_cells, d_log;
    CUstream state;
    uint64_t *bounce;
    /* ... and with it the progress words in device memory; the watchdog
     * copies them out on its own stream. */
    CUdeviceptr d_progress;
    CUstream watch;
    uint64_t *progress_host;  /* pinned, 8 words */
    /* The batch counters (protocol.h, mkrt__mk_counters), allocated before
     * the first launch; and the registered graph and the RELAX job's
     * bitmaps (protocol.h, "RELAX batches"), allocated while the kernel
     * is off the GPU (graph). */
    CUdeviceptr d_counters;
    CUdeviceptr d_offsets, d_targets, d_weights, d_relax_bits;
    /* The traversal jobs' slots (protocol.h, "Traversal jobs"), with the
     * graph: jobs of job_slot_bytes each, in one allocation. */
    CUdeviceptr d_jobs;
    uint32_t jobs;
    size_t job_slot_bytes;
    bool user_ops;            /* linked with user PTX */
    bool launched;
    bool copy_pending;        /* a staged HtoD copy not yet flushed */
    bool abandoned;           /* stop found the kernel still running: memory kept */
    char describe[512];
} mkrt__cuda_engine;

/* The runtime's data in device memory now, in bytes (see above). */
uint64_t mkrt__cuda_engine_resident(const mkrt__cuda_engine *e);

/* MKRT_EDEVICE (what failed, the CUDA error's name and text, a Fix),
 * MKRT_ENOMEM. On failure nothing is left allocated. */
mkrt_status mkrt__cuda_engine_start(mkrt__cuda_engine *e, const mkrt__cuda_engine_config *cfg,
                                    mkrt_error *err);
/* The device operations for mkrt__mk_host (ctx = the engine). */
extern const mkrt__mk_device_ops mkrt__cuda_engine_ops;
/* Asks the kernel to leave (mkrt__mk_shutdown first) and waits for it up
 * to timeout_ns, then frees everything. Returns false when the kernel did
 * not leave: the engine then keeps the control block, the staging buffers
 * and the registration of the cells and log (a hung kernel may still
 * touch them), and the caller must not free the cells or the log. */
bool mkrt__cuda_engine_stop(mkrt__cuda_engine *e, uint64_t timeout_ns);

/* Copies the registered graph to the device and allocates the RELAX
 * job's zeroed bitmaps and `jobs` traversal job slots (replacing the ones
 * before), for the traversals (protocol.h). No batch may be in flight. Allocations and
 * synchronous copies wait for a running kernel, so it first asks the
 * kernel to leave (evict) and waits up to timeout_ns for it to be gone;
 * the next doorbell launches it again. Errors: MKRT_EDEVICE (the kernel
 * would not leave, an allocation or a copy failed; the graph is then not
 * on the device). */
mkrt_status mkrt__cuda_engine_graph(mkrt__cuda_engine *e, uint32_t vertices, const uint64_t *offsets,
                                    const uint32_t *targets, const uint32_t *weights, uint32_t jobs,
                                    uint64_t timeout_ns, mkrt_error *err);
/* A traversal job's first values into slot `slot` (and its device
 * addresses into *out), and a finished job's back: copies on the copy
 * stream, completed before returning (mk_device.h, job_in/job_out). */
mkrt_status mkrt__cuda_engine_job_in(mkrt__cuda_engine *e, uint32_t slot, void *values, size_t vbytes, void *aux,
                                     size_t abytes, mkrt__mk_job *out, mkrt_error *err);
mkrt_status mkrt__cuda_engine_job_out(mkrt__cuda_engine *e, uint32_t slot, void *values, size_t vbytes, void *aux,
                                      size_t abytes, mkrt_error *err);

/* Device-resident state (backend.h's state_in .. log_read): explicit
 * copies on the engine's state stream, a non-blocking stream, so they run
 * beside the resident kernel. Callers serialise them. */
#define MKRT__CUDA_BOUNCE_WORDS 8192u
mkrt_status mkrt__cuda_engine_state_in(mkrt__cuda_engine *e, mkrt_error *err);
mkrt_status mkrt__cuda_engine_state_out(mkrt__cuda_engine *e, mkrt_error *err);
mkrt_status mkrt__cuda_engine_cells_read(mkrt__cuda_engine *e, uint32_t first, size_t count, uint64_t *out,
                                         mkrt_error *err);
mkrt_status mkrt__cuda_engine_cell_write(mkrt__cuda_engine *e, uint32_t handle, uint64_t value,
                                         mkrt_error *err);
mkrt_status mkrt__cuda_engine_log_read(mkrt__cuda_engine *e, uint64_t from, size_t n, uint64_t *out,
                                       mkrt_error *err);

#endif
