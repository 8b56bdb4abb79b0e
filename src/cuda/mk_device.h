/* SPDX-License-Identifier: BSD-2-Clause */
/* src/cuda/mk_device.h - a megakernel device: the one interface through
 * which the megakernel backend (backend/megakernel_backend.c) drives the
 * device it runs on, the simulated one (backend/mk_sim.c) or the GPU
 * (cuda_device.c). It is in cuda/, the floor below backend/, so that the
 * GPU engine implements it without reading a header of the floor above.
 *
 * The per-batch protocol (stage, flush, probe, relaunch, descriptors,
 * progress) is mk_device_ops.h's mkrt__mk_device_ops, which the host
 * engine (backend/mk_host.h) calls; this adds what the backend itself
 * asks of a device: stop it, describe it, give it the registered graph,
 * and, for a device that holds the cells and the APPEND log in its own
 * memory, the explicit copies of that state (backend.h, state_in...).
 * ctx is the device's own object (mkrt__mk_sim, mkrt__cuda_engine),
 * started by its start function.
 */
#ifndef MKRT_CUDA_MK_DEVICE_H
#define MKRT_CUDA_MK_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda/mk_device_ops.h"
#include "mkrt/status.h"

typedef struct mkrt__mk_device {
    const char *name;                    /* "sim", "cuda": mkrt_stats.backend */
    const mkrt__mk_device_ops *protocol; /* for mkrt__mk_host (backend/mk_host.h) */
    /* Stops the device and frees what it allocated. False when it would
     * not stop within timeout_ns (a hung GPU kernel): the memory it maps
     * must then be kept. */
    bool (*stop)(void *ctx, uint64_t timeout_ns);
    /* What it is, in a line (mkrt_backend_describe). */
    void (*describe)(const void *ctx, char *buf, size_t len);
    /* The registered graph (runtime/graph.c), the RELAX job's bitmaps
     * (protocol.h, "RELAX batches", zeroed), and room for `jobs` traversal
     * jobs (protocol.h, "Traversal jobs": mkrt__mk_job_slot_bytes each),
     * before any batch ran; timeout_ns bounds waiting for a running kernel
     * to leave the GPU first. */
    mkrt_status (*graph_in)(void *ctx, uint32_t vertices, const uint64_t *offsets, const uint32_t *targets,
                            const uint32_t *weights, uint32_t jobs, uint64_t timeout_ns, mkrt_error *err);
    /* A job's arrays into job slot `slot` (below the graph_in's jobs), no
     * job batch in flight: the run's first values (vbytes of values, and
     * abytes of aux, may be 0) go to the device, and *out gets the device
     * addresses of its values, aux and bitmaps. job_out copies a finished
     * job's values (and aux) back. A device on the host's memory uses the
     * host arrays in place. */
    mkrt_status (*job_in)(void *ctx, uint32_t slot, void *values, size_t vbytes, void *aux, size_t abytes,
                          mkrt__mk_job *out, mkrt_error *err);
    mkrt_status (*job_out)(void *ctx, uint32_t slot, void *values, size_t vbytes, void *aux, size_t abytes,
                           mkrt_error *err);
    /* Device memory: the bytes it holds for the runtime now (*resident)
     * and the budget it reported at start (*budget, 0: none, for a device
     * without memory of its own to report). */
    void (*memory)(const void *ctx, uint64_t *resident, uint64_t *budget);
    /* All NULL for a device that runs on the runtime's host arrays (the
     * simulated device, a GPU with host-mapped state); else backend.h's
     * state operations, with the same contracts. */
    mkrt_status (*state_in)(void *ctx, mkrt_error *err);
    mkrt_status (*state_out)(void *ctx, mkrt_error *err);
    mkrt_status (*cells_read)(void *ctx, uint32_t first, size_t count, uint64_t *out, mkrt_error *err);
    mkrt_status (*cell_write)(void *ctx, uint32_t handle, uint64_t value, mkrt_error *err);
    mkrt_status (*log_read)(void *ctx, uint64_t from, size_t n, uint64_t *out, mkrt_error *err);
#ifdef MKRT_TEST_HOOKS
    /* Test hooks, may be NULL (no effect on that device): hang in batch
     * seq once `layer` layers ran (ns 0: until shutdown; else a slow op
     * that takes ns and lets the batch carry on, mk_loop.h hang_ns); nap
     * ns at each traversal level. */
    void (*inject_hang)(void *ctx, uint64_t seq, uint32_t layer, uint64_t ns);
    void (*level_nap)(void *ctx, uint64_t ns);
#endif
} mkrt__mk_device;

#endif
