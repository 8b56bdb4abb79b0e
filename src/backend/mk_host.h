/* SPDX-License-Identifier: BSD-2-Clause */
/* src/backend/mk_host.h - the host side of the megakernel protocol (see
 * src/cuda/protocol.h), shared by the CUDA backend and the simulated
 * device used in tests; what it asks of the device is cuda/mk_device_ops.h's
 * mkrt__mk_device_ops.
 *
 * Per batch: stage (copy items and layer offsets into the device buffer
 * of the next sequence number and fill its descriptor), then ring (publish
 * the sequence number), then wait (poll `done` with a deadline). Staging
 * batch k+1 may overlap the device running batch k; the buffer of k+1 was
 * last used by k-1, which the caller has waited for.
 * The watchdog trips when a batch made no progress for its timeout: a
 * traversal's levels (protocol.h, levels_run) are progress.
 * A timeout or a device error marks the engine failed for good: a hung or
 * faulted device is never fed again (sticky CUDA errors poison the
 * process's context anyway). The failure stops the device first: shutdown,
 * then up to halt_ns for the loop to leave, so that a device that was slow,
 * not hung, does not write cells the CPU pool has taken over (the failure's
 * message says when it did not leave).
 */
#ifndef MKRT_BACKEND_MK_HOST_H
#define MKRT_BACKEND_MK_HOST_H

#include <stdbool.h>
#include <stddef.h>

#include "cuda/mk_device_ops.h"
#include "mkrt/item.h"
#include "mkrt/status.h"

typedef struct mkrt__mk_host {
    mkrt__mk_control *ctl; /* host view of the control block */
    mkrt__mk_device_ops ops;
    void *ctx;
    uint32_t capacity;        /* items (and layers) a staging buffer holds */
    const uint32_t *fails[2]; /* host views of the staged failure lists */
    uint64_t staged;      /* last staged sequence number */
    uint64_t rung;        /* last rung */
    uint64_t relaunches;  /* launches after the kernel left on its own */
    uint64_t halt_ns;     /* how long a failure waits for the loop to leave
                           * (MKRT__MK_HALT_NS until the owner sets it) */
    bool failed;
    char why_failed[MKRT_ERROR_MESSAGE_MAX];
} mkrt__mk_host;

/* A failure's wait for the loop to leave, unless the owner sets halt_ns. */
#define MKRT__MK_HALT_NS 10000000000ull

/* capacity: the items (and layers) each of the device's two staging
 * buffers holds; mkrt__mk_stage refuses a larger batch. */
void mkrt__mk_host_init(mkrt__mk_host *h, mkrt__mk_control *ctl, const mkrt__mk_device_ops *ops,
                        void *ctx, uint32_t capacity);
/* Stages the next batch (layer_blocks: the plan's blocks per layer, or
 * NULL for all); returns its sequence number in *seq. */
mkrt_status mkrt__mk_stage(mkrt__mk_host *h, const mkrt_item *items, uint32_t count,
                           const uint32_t *offsets, const uint32_t *layer_blocks, uint32_t layers,
                           uint64_t *seq, mkrt_error *err);
/* Stages a job batch (protocol.h, "Traversal jobs"): no items, the
 * records jobs[0 .. njobs) (their device addresses filled in). */
mkrt_status mkrt__mk_stage_jobs(mkrt__mk_host *h, const mkrt__mk_job *jobs, uint32_t njobs, uint64_t *seq,
                                mkrt_error *err);
/* Publishes every staged batch to the device (after flush), relaunching
 * the kernel if it left the GPU. An error fails the engine. */
mkrt_status mkrt__mk_ring(mkrt__mk_host *h, mkrt_error *err);
/* Waits for batch seq: MKRT_OK, MKRT_EDEVICE (the device reported an error,
 * or the engine had failed), MKRT_ETIMEDOUT (watchdog; the message says
 * where each block stopped). */
mkrt_status mkrt__mk_wait(mkrt__mk_host *h, uint64_t seq, uint64_t timeout_ns, mkrt_error *err);
/* After mkrt__mk_wait(seq) returned MKRT_OK: the items of batch seq that
 * failed on the device, as (index into the staged items, mkrt_status as
 * uint32_t) pairs in *list; returns how many. */
uint32_t mkrt__mk_failures(const mkrt__mk_host *h, uint64_t seq, const uint32_t **list);
/* After mkrt__mk_wait(seq) returned MKRT_OK: what batch seq did on the
 * device (protocol.h, result[]): the edge items its traversal ran, the
 * update items that changed their output, and the traversal's levels. */
void mkrt__mk_result(const mkrt__mk_host *h, uint64_t seq, uint64_t *edges, uint64_t *changed, uint64_t *levels);
/* ... and the barriers the device took after its layers: grid-wide, and
 * among a layer's blocks only (protocol.h, mkrt__mk_barrier_after). */
void mkrt__mk_barriers(const mkrt__mk_host *h, uint64_t seq, uint32_t *grid, uint32_t *layer);
/* Tells the device loop to leave. */
void mkrt__mk_shutdown(mkrt__mk_host *h);

#endif
