/* src/backend/device.c - see device.h. */
#include <string.h>

#include "../error_internal.h"
#include "device.h"

mkrt_status mkrt__device_start(mkrt_runtime *rt, mkrt__device **out, mkrt_error *err)
{
    mkrt__device *d = mkrt__alloc_zeroed(sizeof *d, alignof(mkrt__device));
    if (d == NULL)
        return mkrt__error_set(err, MKRT_ENOMEM, "device backend: out of memory. Fix: free memory.");
    uint32_t blocks = rt->workers * 2; /* grid-stride "blocks" of the simulated kernel */
    mkrt_status st = mkrt__mk_sim_start(&d->sim, 1, (uint32_t)rt->cfg.max_batch, blocks, 1, err);
    if (st != MKRT_OK) {
        mkrt__free(d, sizeof *d);
        return st;
    }
    /* Map the runtime's cells and log for the device (on a GPU these would
     * be host-mapped pinned memory). */
    d->sim.ctl->cells = (uint64_t)(uintptr_t)rt->cells;
    d->sim.ctl->cell_count = rt->cfg.cells;
    /* The runtime's APPEND log has the device's layout: (handle, param) pairs
     * of 32-bit words. The length moves between host and device around each
     * device batch (mkrt__device_launch / the dispatcher after completion). */
    d->sim.ctl->append_log = (uint64_t)(uintptr_t)rt->append_log;
    d->sim.ctl->append_capacity = rt->cfg.append_log_capacity;
    mkrt__mk_host_init(&d->host, d->sim.ctl, mkrt__mk_sim_stage, &d->sim);
    *out = d;
    return MKRT_OK;
}

mkrt_status mkrt__device_launch(mkrt__device *d, mkrt__batch *b, uint64_t append_len, mkrt_error *err)
{
    /* relaxed: published to the device by the doorbell's release below. */
    atomic_store_explicit(&d->host.ctl->append_len, append_len, memory_order_relaxed);
    uint64_t seq;
    mkrt_status st = mkrt__mk_stage(&d->host, b->exec, (uint32_t)b->exec_n, b->layer_offsets,
                                    (uint32_t)b->layers, &seq, err);
    if (st != MKRT_OK)
        return st;
    mkrt__mk_ring(&d->host);
    d->running_seq = seq;
    return MKRT_OK;
}

mkrt_status mkrt__device_wait(mkrt__device *d, uint64_t timeout_ns, mkrt_error *err)
{
    mkrt_status st = mkrt__mk_wait(&d->host, d->running_seq, timeout_ns, err);
    d->running_seq = 0;
    return st;
}

void mkrt__device_stop(mkrt__device *d)
{
    if (d == NULL)
        return;
    mkrt__mk_sim_stop(&d->sim);
    mkrt__free(d, sizeof *d);
}

void mkrt__device_inject_hang(mkrt__device *d, uint64_t batches_from_now, uint32_t layer)
{
    /* relaxed, then release: the sim reads hang_batch with acquire first. */
    atomic_store_explicit(&d->sim.hang_after_layer, layer, memory_order_relaxed);
    atomic_store_explicit(&d->sim.hang_batch, d->host.staged + batches_from_now, memory_order_release);
}

uint64_t mkrt__device_append_len(mkrt__device *d)
{
    /* relaxed: read after mkrt__device_wait's acquire of done. */
    return atomic_load_explicit(&d->host.ctl->append_len, memory_order_relaxed);
}
