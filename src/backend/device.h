/* src/backend/device.h - the megakernel backend of the runtime: batches go
 * through the host protocol (mk_host) to a device. The device is either
 * the GPU (not driven by this build yet) or the simulated device (a host
 * thread over the same control block), selected by MKRT_BACKEND_SIM.
 * Cells and the APPEND log are the runtime's own arrays, mapped for the
 * device (host-mapped memory on a GPU), so reads need no copy back. */
#ifndef MKRT_BACKEND_DEVICE_H
#define MKRT_BACKEND_DEVICE_H

#include "../runtime_internal.h"
#include "mk_host.h"
#include "mk_sim.h"

typedef struct mkrt__device {
    mkrt__mk_sim sim;
    mkrt__mk_host host;
    uint64_t running_seq; /* 0: nothing in flight */
} mkrt__device;

mkrt_status mkrt__device_start(mkrt_runtime *rt, mkrt__device **out, mkrt_error *err);
/* Stages and rings the batch; the device's APPEND log continues at
 * append_len. On failure the batch is not running. */
mkrt_status mkrt__device_launch(mkrt__device *d, mkrt__batch *b, uint64_t append_len, mkrt_error *err);
/* The APPEND log length after the last completed device batch. */
uint64_t mkrt__device_append_len(mkrt__device *d);
/* Waits for the running batch with the watchdog (timeout_ns). */
mkrt_status mkrt__device_wait(mkrt__device *d, uint64_t timeout_ns, mkrt_error *err);
void mkrt__device_stop(mkrt__device *d);

/* Test hook: the simulated device hangs in its n-th batch from now, after
 * `layer` layers. */
void mkrt__device_inject_hang(mkrt__device *d, uint64_t batches_from_now, uint32_t layer);

#endif
