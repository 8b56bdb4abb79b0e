/* SPDX-License-Identifier: BSD-2-Clause */
/* src/backend/megakernel_backend.c - see device.h. */
#include <stdio.h>
#include <string.h>

#include "base/alloc_internal.h"
#include "base/error_internal.h"
#include "backend/megakernel_backend.h"

static mkrt_status start_sim(mkrt_runtime *rt, mkrt__device *d, mkrt_error *err)
{
    uint32_t blocks = rt->workers * 2; /* grid-stride "blocks" of the simulated kernel */
    mkrt_status st = mkrt__mk_sim_start(&d->sim, 1, (uint32_t)rt->cfg.max_batch, blocks, 1, err);
    if (st != MKRT_OK)
        return st;
    /* Map the runtime's cells and log for the device: the loop uses what
     * the control block points to. The runtime's APPEND log has the
     * device's layout, (handle, param) pairs of 32-bit words. */
    d->sim.ctl->cells = (uint64_t)(uintptr_t)rt->cells;
    d->sim.ctl->cell_count = rt->cfg.cells;
    d->sim.ctl->append_log = (uint64_t)(uintptr_t)rt->append_log;
    d->sim.ctl->append_capacity = rt->cfg.append_log_capacity;
    d->sim.ctl->append_limit = 0; /* set by each doorbell */
    mkrt__mk_host_init(&d->host, d->sim.ctl, &mkrt__mk_sim_ops, &d->sim);
    return MKRT_OK;
}

static mkrt_status start_cuda(mkrt_runtime *rt, mkrt__device *d, mkrt_error *err)
{
    _Static_assert(sizeof(*rt->append_log) == 2 * sizeof(uint32_t), "log entries are pairs");
    mkrt__cuda_engine_config c = {
        .cells = rt->cells,
        .cell_count = rt->cfg.cells,
        .append_log = (uint32_t *)(uintptr_t)rt->append_log,
        .append_capacity = rt->cfg.append_log_capacity,
        .capacity = (uint32_t)rt->cfg.max_batch,
        .max_blocks = rt->cfg.cuda_max_blocks,
        .user_ptx = rt->cfg.cuda_user_ptx,
        .user_ptx_size = rt->cfg.cuda_user_ptx_size,
    };
    mkrt_status st = mkrt__cuda_engine_start(&d->cuda, &c, err);
    if (st != MKRT_OK)
        return st;
    d->user_ops = d->cuda.user_ops;
    mkrt__mk_host_init(&d->host, d->cuda.ctl, &mkrt__cuda_engine_ops, &d->cuda);
    return MKRT_OK;
}

mkrt_status mkrt__device_start(mkrt_runtime *rt, mkrt_backend_kind kind, mkrt__device **out,
                               mkrt_error *err)
{
    mkrt__device *d = mkrt__alloc_zeroed(sizeof *d, alignof(mkrt__device));
    if (d == NULL)
        return mkrt__error_set(err, MKRT_ENOMEM, "device backend: out of memory. Fix: free memory.");
    d->kind = kind;
    mkrt_status st = kind == MKRT_BACKEND_CUDA ? start_cuda(rt, d, err) : start_sim(rt, d, err);
    if (st != MKRT_OK) {
        mkrt__free(d, sizeof *d);
        return st;
    }
    *out = d;
    return MKRT_OK;
}

mkrt_status mkrt__device_stage(mkrt__device *d, mkrt__batch *b, mkrt_error *err)
{
    return mkrt__mk_stage(&d->host, b->exec, (uint32_t)b->exec_n, b->layer_offsets,
                          (uint32_t)b->layers, &d->staged_seq, err);
}

mkrt_status mkrt__device_ring(mkrt__device *d, uint64_t append_len, uint64_t append_limit,
                              mkrt_error *err)
{
    /* relaxed: published to the device by the doorbell's release in
     * mkrt__mk_ring; the previous batch is done, so the device is not
     * claiming slots now. */
    atomic_store_explicit(&d->host.ctl->append_len, append_len, memory_order_relaxed);
    d->host.ctl->append_limit = append_limit;
    mkrt_status st = mkrt__mk_ring(&d->host, err);
    if (st != MKRT_OK)
        return st;
    d->running_seq = d->staged_seq;
    d->staged_seq = 0;
    return MKRT_OK;
}

mkrt_status mkrt__device_wait(mkrt__device *d, uint64_t timeout_ns, const uint32_t **fails,
                              uint32_t *nfails, mkrt_error *err)
{
    mkrt_status st = mkrt__mk_wait(&d->host, d->running_seq, timeout_ns, err);
    *nfails = st == MKRT_OK ? mkrt__mk_failures(&d->host, d->running_seq, fails) : 0;
    d->running_seq = 0;
    return st;
}

/* Devices whose GPU kernel would not stop: kept for the life of the
 * process (a hung kernel may still touch their memory), and reachable from
 * here so that leak checkers see them as kept, not lost. */
static mkrt__device *_Atomic abandoned;

bool mkrt__device_stop(mkrt__device *d, uint64_t timeout_ns)
{
    if (d == NULL)
        return true;
    bool freed = true;
    if (d->kind == MKRT_BACKEND_CUDA)
        freed = mkrt__cuda_engine_stop(&d->cuda, timeout_ns);
    else
        mkrt__mk_sim_stop(&d->sim);
    if (freed) {
        mkrt__free(d, sizeof *d);
        return true;
    }
    /* relaxed: only the list's reachability matters, nobody walks it. */
    d->next_abandoned = atomic_exchange_explicit(&abandoned, d, memory_order_relaxed);
    return false;
}

void mkrt__device_describe(const mkrt__device *d, char *buf, size_t len)
{
    if (d->kind == MKRT_BACKEND_CUDA)
        snprintf(buf, len, "cuda: %s", d->cuda.describe);
    else
        snprintf(buf, len, "sim: megakernel protocol against a simulated device (%u blocks)",
                 d->sim.blocks);
}

void mkrt__device_inject_hang(mkrt__device *d, uint64_t batches_from_now, uint32_t layer)
{
    if (d->kind != MKRT_BACKEND_SIM)
        return;
    /* relaxed, then release: the loop reads hang_batch with acquire first. */
    atomic_store_explicit(&d->sim.hang_after_layer, layer, memory_order_relaxed);
    atomic_store_explicit(&d->sim.hang_batch, d->host.staged + batches_from_now, memory_order_release);
}

uint64_t mkrt__device_append_len(mkrt__device *d)
{
    /* relaxed: read after mkrt__device_wait's acquire of done. */
    return atomic_load_explicit(&d->host.ctl->append_len, memory_order_relaxed);
}
