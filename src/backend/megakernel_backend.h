/* SPDX-License-Identifier: BSD-2-Clause */
/* src/backend/megakernel_backend.h - the megakernel backend: batches go
 * through the host protocol (mk_host) to a device, which is the GPU
 * (cuda/cuda_engine, MKRT_BACKEND_CUDA or AUTO) or the simulated device
 * (mk_sim, MKRT_BACKEND_SIM). Cells and the APPEND log are the runtime's
 * own arrays, mapped for the device (host-registered memory on a GPU), so
 * reads need no copy back; or, with mkrt_config.cuda_device_state, they
 * live in device memory and the backend has the state operations of
 * backend.h (runtime/device_state.c moves the state between backends).
 * prepare stages the batch (items, layer offsets, the plan's blocks per
 * layer) while the batch before it runs; launch rings the doorbell with
 * the log window; wait polls with the watchdog and returns the device's
 * failure list, and hands the log's new length back to the runtime. */
#ifndef MKRT_BACKEND_MEGAKERNEL_BACKEND_H
#define MKRT_BACKEND_MEGAKERNEL_BACKEND_H

#include "backend/backend.h"
#include "cuda/protocol.h"
#include "state/state.h"
#include "mkrt/runtime.h"


/* The runtime's batch buffers a device may copy batches from by DMA (the
 * items and exec arrays of its two batches). */
#define MKRT__MK_BATCH_BUFS 4

/* kind: MKRT_BACKEND_SIM or MKRT_BACKEND_CUDA. bufs (may be NULL, entries
 * may be NULL): the batch buffers, buf_bytes each, that the GPU registers
 * for DMA at start. The device's default memory budget comes back in
 * (*out)->memory_budget, and its resident bytes in sg->device_resident. */
mkrt_status mkrt__megakernel_start(mkrt__state *sg, uint32_t workers, mkrt_backend_kind kind,
                                   void *const bufs[MKRT__MK_BATCH_BUFS], size_t buf_bytes, mkrt__backend **out,
                                   mkrt_error *err);

#ifdef MKRT_TEST_HOOKS
/* Test hooks (test builds only). The simulated device hangs in its n-th batch from now,
 * after `layer` layers (no effect on a GPU): until shutdown (ns 0), or
 * for ns, after which the batch carries on (a slow device). */
void mkrt__megakernel_inject_hang(mkrt__backend *be, uint64_t batches_from_now, uint32_t layer, uint64_t ns);
/* Block `block`'s progress word: (layer << 32) | items it ran in that
 * layer (protocol.h); blocks a layer's plan left out keep their last.
 * With the state in device memory, a copy (blocks 0..7 only, else 0). */
uint64_t mkrt__megakernel_progress(const mkrt__backend *be, uint32_t block);
/* The jobs of the last batch the device finished (protocol.h, "Traversal
 * jobs"): how many (0: none), and job 0's record into *job (a batch with
 * RELAX items: its RELAX job). Call while no batch runs. */
uint32_t mkrt__megakernel_last_jobs(const mkrt__backend *be, mkrt__mk_job *job);
/* The simulated device's traversal levels each take at least ns (a long
 * traversal for the watchdog; no effect on a GPU). */
void mkrt__megakernel_level_nap(mkrt__backend *be, uint64_t ns);
#endif

#endif
