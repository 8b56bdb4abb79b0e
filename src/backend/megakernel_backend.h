/* SPDX-License-Identifier: BSD-2-Clause */
/* src/backend/megakernel_backend.h - the megakernel backend of the runtime: batches go
 * through the host protocol (mk_host) to a device, which is the GPU
 * (cuda_engine, MKRT_BACKEND_CUDA or AUTO) or the simulated device
 * (mk_sim, MKRT_BACKEND_SIM). Cells and the APPEND log are the runtime's
 * own arrays, mapped for the device (host-registered memory on a GPU), so
 * reads need no copy back.
 * Per batch: stage (may overlap the batch before it running), ring (after
 * that batch completed: the device's APPEND log continues at append_len),
 * wait (watchdog), then the failure list. */
#ifndef MKRT_BACKEND_DEVICE_H
#define MKRT_BACKEND_DEVICE_H

#include "runtime/runtime_internal.h"
#include "cuda/cuda_engine.h"
#include "backend/mk_host.h"
#include "backend/mk_sim.h"

typedef struct mkrt__device {
    mkrt_backend_kind kind; /* MKRT_BACKEND_SIM or MKRT_BACKEND_CUDA */
    mkrt__mk_sim sim;
    mkrt__cuda_engine cuda;
    mkrt__mk_host host;
    uint64_t staged_seq;    /* 0: nothing staged and not rung */
    uint64_t running_seq;   /* 0: nothing in flight */
    bool user_ops;          /* the device runs user ops (linked PTX) */
    struct mkrt__device *next_abandoned;
} mkrt__device;

/* kind: MKRT_BACKEND_SIM or MKRT_BACKEND_CUDA. */
mkrt_status mkrt__device_start(mkrt_runtime *rt, mkrt_backend_kind kind, mkrt__device **out,
                               mkrt_error *err);
/* Copies batch b to the device buffer of the next sequence number. */
mkrt_status mkrt__device_stage(mkrt__device *d, mkrt__batch *b, mkrt_error *err);
/* Starts the staged batch; the device's APPEND log continues at position
 * append_len and may not reach append_limit (protocol.h). On failure the
 * batch is not running. */
mkrt_status mkrt__device_ring(mkrt__device *d, uint64_t append_len, uint64_t append_limit,
                              mkrt_error *err);
/* Waits for the running batch with the watchdog (timeout_ns). On MKRT_OK,
 * *fails holds *nfails (index into b->exec, mkrt_status as uint32_t) pairs:
 * the batch's items that failed on the device. */
mkrt_status mkrt__device_wait(mkrt__device *d, uint64_t timeout_ns, const uint32_t **fails,
                              uint32_t *nfails, mkrt_error *err);
/* The APPEND log length after the last completed device batch. */
uint64_t mkrt__device_append_len(mkrt__device *d);
/* Stops the device. False when a hung GPU kernel could not be stopped:
 * the cells and the APPEND log must then not be freed. */
bool mkrt__device_stop(mkrt__device *d, uint64_t timeout_ns);
/* "sim: ..." or "cuda: ..." */
void mkrt__device_describe(const mkrt__device *d, char *buf, size_t len);

/* Test hook: the simulated device hangs in its n-th batch from now, after
 * `layer` layers. */
void mkrt__device_inject_hang(mkrt__device *d, uint64_t batches_from_now, uint32_t layer);

#endif
