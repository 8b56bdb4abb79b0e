/* src/backend/mk_host.h - the host side of the megakernel protocol (see
 * src/cuda/protocol.h), shared by the CUDA backend and the simulated
 * device used in tests.
 *
 * Per batch: stage (copy items and layer offsets into the device buffer
 * of the next sequence number and fill its descriptor), then ring (publish
 * the sequence number), then wait (poll `done` with a deadline). Staging
 * batch k+1 may overlap the device running batch k; the buffer of k+1 was
 * last used by k-1, which the caller has waited for.
 * A timeout or a device error marks the engine failed for good: a hung or
 * faulted device is never fed again (sticky CUDA errors poison the
 * process's context anyway).
 */
#ifndef MKRT_BACKEND_MK_HOST_H
#define MKRT_BACKEND_MK_HOST_H

#include <stdbool.h>
#include <stddef.h>

#include "../cuda/protocol.h"
#include "mkrt/item.h"
#include "mkrt/status.h"

/* Copies the batch into device buffer `buffer` (0 or 1) and returns the
 * device addresses of the items and the offsets. */
typedef mkrt_status (*mkrt__mk_stage_fn)(void *ctx, unsigned buffer, const mkrt_item *items,
                                         uint32_t count, const uint32_t *offsets, uint32_t layers,
                                         uint64_t *items_addr, uint64_t *offsets_addr,
                                         mkrt_error *err);

typedef struct mkrt__mk_host {
    mkrt_mk_control *ctl; /* host view of the control block */
    mkrt__mk_stage_fn stage;
    void *stage_ctx;
    uint64_t staged;      /* last staged sequence number */
    uint64_t rung;        /* last rung */
    bool failed;
    char why_failed[200];
} mkrt__mk_host;

void mkrt__mk_host_init(mkrt__mk_host *h, mkrt_mk_control *ctl, mkrt__mk_stage_fn stage, void *ctx);
/* Stages the next batch; returns its sequence number in *seq. */
mkrt_status mkrt__mk_stage(mkrt__mk_host *h, const mkrt_item *items, uint32_t count,
                           const uint32_t *offsets, uint32_t layers, uint64_t *seq, mkrt_error *err);
/* Publishes every staged batch to the device. */
void mkrt__mk_ring(mkrt__mk_host *h);
/* Waits for batch seq: MKRT_OK, MKRT_EDEVICE (the device reported an error,
 * or the engine had failed), MKRT_ETIMEDOUT (watchdog; the message says
 * where each block stopped). */
mkrt_status mkrt__mk_wait(mkrt__mk_host *h, uint64_t seq, uint64_t timeout_ns, mkrt_error *err);
/* Tells the device loop to leave. */
void mkrt__mk_shutdown(mkrt__mk_host *h);

#endif
