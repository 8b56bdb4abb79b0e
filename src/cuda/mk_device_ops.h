/* SPDX-License-Identifier: BSD-2-Clause */
/* src/cuda/mk_device_ops.h - the per-batch protocol calls the host engine
 * (backend/mk_host.h) makes of a megakernel device: stage, flush, probe,
 * relaunch, descriptors, progress. The GPU engine (cuda_engine.c) and the
 * simulated device (backend/mk_sim.c) implement them; here, on the floor
 * below backend/, so the GPU engine reads no header of the floor above
 * (docs/design.md, "Source floors"). */
#ifndef MKRT_CUDA_MK_DEVICE_OPS_H
#define MKRT_CUDA_MK_DEVICE_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "cuda/protocol.h"
#include "mkrt/item.h"
#include "mkrt/status.h"

/* Where a staged batch lives: device addresses for the descriptor, and
 * the host view of its failure list (read after the batch is done). */
typedef struct mkrt__mk_staged {
    uint64_t items_addr, offsets_addr, blocks_addr, fails_addr;
    const uint32_t *fails;
} mkrt__mk_staged;

/* The device's side of the host engine. */
typedef struct mkrt__mk_device_ops {
    /* Copies the batch into device buffer `buffer` (0 or 1): items, the
     * layer offsets, and the plan's blocks per layer (layer_blocks, may be
     * NULL: every layer on every block; the device buffer keeps them after
     * the offsets, at capacity + 1). The copy may still be in flight when
     * it returns. */
    mkrt_status (*stage)(void *ctx, unsigned buffer, const mkrt_item *items, uint32_t count,
                         const uint32_t *offsets, const uint32_t *layer_blocks, uint32_t layers,
                         mkrt__mk_staged *out, mkrt_error *err);
    /* May be NULL. Completes the staged copies before the doorbell. */
    mkrt_status (*flush)(void *ctx, mkrt_error *err);
    /* May be NULL. Called now and then while waiting: MKRT_OK while the
     * device may still finish; an error when it cannot (a faulted kernel,
     * a sticky CUDA error), which fails the engine for good. */
    mkrt_status (*probe)(void *ctx, mkrt_error *err);
    /* May be NULL (a device that never leaves). Launches the kernel again
     * after it left on its own (protocol.h, "Leaving the GPU"), queued
     * behind any instance still running; an error fails the engine. */
    mkrt_status (*relaunch)(void *ctx, mkrt_error *err);
    /* May be NULL (the device reads the descriptors in the control block).
     * Copies descriptor d of buffer `buffer` to the device (completed by
     * flush, before the doorbell). */
    mkrt_status (*publish_desc)(void *ctx, unsigned buffer, const mkrt__mk_desc *d, mkrt_error *err);
    /* May be NULL (the progress words are in the control block). Copies
     * the first n blocks' progress words out (the watchdog's view). */
    mkrt_status (*read_progress)(void *ctx, uint64_t *out, uint32_t n);
    /* May be NULL (nothing runs after a failure). After the host stored
     * shutdown: waits until no instance of the loop runs (nor is queued),
     * for at most timeout_ns; true when none does, and every write of the
     * device's is then visible to the host. Frees nothing. */
    bool (*wait_gone)(void *ctx, uint64_t timeout_ns);
} mkrt__mk_device_ops;

#endif
