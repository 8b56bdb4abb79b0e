/* SPDX-License-Identifier: BSD-2-Clause */
/* src/backend/mk_host.c - host side of the megakernel protocol. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/error_internal.h"
#include "base/waitq.h"
#include "backend/mk_host.h"
#include "mkrt/ring.h"

void mkrt__mk_host_init(mkrt__mk_host *h, mkrt__mk_control *ctl, const mkrt__mk_device_ops *ops,
                        void *ctx, uint32_t capacity)
{
    memset(h, 0, sizeof *h);
    h->ctl = ctl;
    h->ops = *ops;
    h->ctx = ctx;
    h->capacity = capacity;
    h->halt_ns = MKRT__MK_HALT_NS;
    /* relaxed: read before any batch, the device wrote it before its loop. */
    h->staged = h->rung = atomic_load_explicit(&ctl->done, memory_order_relaxed);
}

/* The engine is failed for good; why_failed says why. The device is told
 * to leave and given halt_ns to do so: a batch it still runs (slow, not
 * hung) would write cells after the host gave them to the CPU pool.
 * Returns whether it left. */
__attribute__((format(printf, 2, 3)))
static bool fail_engine(mkrt__mk_host *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int at = vsnprintf(h->why_failed, sizeof h->why_failed, fmt, ap);
    va_end(ap);
    h->failed = true;
    mkrt__mk_shutdown(h);
    const bool stopped = h->ops.wait_gone == NULL || h->ops.wait_gone(h->ctx, h->halt_ns);
    if (!stopped && at >= 0 && (size_t)at < sizeof h->why_failed)
        snprintf(h->why_failed + at, sizeof h->why_failed - (size_t)at,
                 "; it did not stop within %llu ms and may still write cells",
                 (unsigned long long)(h->halt_ns / 1000000u));
    return stopped;
}

static mkrt_status dead(mkrt__mk_host *h, mkrt_error *err)
{
    return mkrt__error_set(err, MKRT_EDEVICE,
                           "the megakernel device failed earlier (%s) and is not fed again. Fix: "
                           "restart the process to use the GPU, or use the CPU backend.",
                           h->why_failed);
}

static mkrt_status stage(mkrt__mk_host *h, const mkrt_item *items, uint32_t count, const uint32_t *offsets,
                         const uint32_t *layer_blocks, uint32_t layers, uint32_t njobs, uint64_t *seq,
                         mkrt_error *err)
{
    if (h->failed)
        return dead(h, err);
    if (count > h->capacity || layers > h->capacity)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "megakernel batch of %u items in %u layers exceeds the %u-item device "
                               "buffer. Fix: split the batch.",
                               count, layers, h->capacity);
    uint64_t next = h->staged + 1;
    /* relaxed: our own progress record; the device only reads desc after
     * the doorbell (release) below. */
    if (next > atomic_load_explicit(&h->ctl->done, memory_order_acquire) + 2)
        return mkrt__error_set(err, MKRT_ESTATE,
                               "megakernel batch %llu staged while batch %llu still owns its buffer. "
                               "Fix: wait for a batch before staging the one two after it.",
                               (unsigned long long)next, (unsigned long long)(next - 2));
    mkrt__mk_desc *d = &h->ctl->desc[next & 1];
    mkrt__mk_staged where;
    mkrt_status st = h->ops.stage(h->ctx, (unsigned)(next & 1), items, count, offsets, layer_blocks,
                                  layers, &where, err);
    if (st != MKRT_OK)
        return st;
    d->items = where.items_addr;
    d->layer_offsets = where.offsets_addr;
    d->layer_blocks = layer_blocks != NULL ? where.blocks_addr : 0;
    d->fails = where.fails_addr;
    /* relaxed: published with the descriptor by the doorbell's release. */
    atomic_store_explicit(&h->ctl->fail_count[next & 1], 0, memory_order_relaxed);
    d->count = count;
    d->layers = layers;
    d->seq = next;
    /* A batch with RELAX items is a job of the traversal engine when the
     * graph is on the device (without it the backend refuses RELAX): its
     * RELAX job, job 0, whose first level its layers mark (protocol.h,
     * "RELAX batches"). The record is written before the doorbell, whose
     * release publishes it; batch next - 2, its parity's last user, is
     * done (checked above). */
    uint32_t relax = 0;
    for (uint32_t i = 0; i < count && h->ctl->vertices != 0 && !relax; i++)
        relax = items[i].op == MKRT_OPS_RELAX;
    if (relax) {
        memset(&h->ctl->jobs[next & 1][0], 0, sizeof h->ctl->jobs[next & 1][0]);
        h->ctl->jobs[next & 1][0].kind = MKRT_MK_JOB_RELAX;
        njobs = 1;
    }
    d->relax_job = relax;
    d->njobs = njobs;
    /* The plan's topology: a batch whose layers all fit one block runs in
     * block 0 alone (megakernel.cu), without a grid barrier. */
    uint32_t one = h->ctl->blocks <= 1 && njobs == 0;
    if (!one && njobs == 0 && layer_blocks != NULL) {
        one = 1;
        for (uint32_t l = 0; l < layers && one; l++)
            one = mkrt__mk_layer_blocks(layer_blocks, l, h->ctl->blocks) == 1;
    }
    d->one_block = one;
    if (h->ops.publish_desc != NULL && (st = h->ops.publish_desc(h->ctx, (unsigned)(next & 1), d, err)) != MKRT_OK)
        return st;
    h->fails[next & 1] = where.fails;
    h->staged = next;
    *seq = next;
    return MKRT_OK;
}

mkrt_status mkrt__mk_stage(mkrt__mk_host *h, const mkrt_item *items, uint32_t count,
                           const uint32_t *offsets, const uint32_t *layer_blocks, uint32_t layers,
                           uint64_t *seq, mkrt_error *err)
{
    return stage(h, items, count, offsets, layer_blocks, layers, 0, seq, err);
}

mkrt_status mkrt__mk_stage_jobs(mkrt__mk_host *h, const mkrt__mk_job *jobs, uint32_t njobs, uint64_t *seq,
                                mkrt_error *err)
{
    if (njobs == 0 || njobs > MKRT_MK_JOBS_MAX)
        return mkrt__error_set(err, MKRT_EINVAL, "megakernel job batch of %u traversals (1 .. %u). Fix: a bug "
                                                 "in the megakernel backend.", njobs, MKRT_MK_JOBS_MAX);
    static const uint32_t none[1] = {0};
    static const mkrt_item no_item;
    /* The records first: the doorbell's release publishes them with the
     * descriptor (host-mapped control block). */
    const uint64_t next = h->staged + 1;
    /* acquire: as in stage; the records of batch next - 2 (same parity)
     * are not overwritten while it runs (stage refuses it too). */
    if (!h->failed && next > atomic_load_explicit(&h->ctl->done, memory_order_acquire) + 2)
        return mkrt__error_set(err, MKRT_ESTATE, "megakernel job batch %llu staged while batch %llu still owns "
                                                 "its records. Fix: wait for a batch before staging the one two "
                                                 "after it.", (unsigned long long)next, (unsigned long long)(next - 2));
    for (uint32_t i = 0; i < njobs; i++)
        h->ctl->jobs[next & 1][i] = jobs[i];
    return stage(h, &no_item, 0, none, NULL, 0, njobs, seq, err);
}


/* The kernel left the GPU on its own: launch it again (protocol.h). */
static mkrt_status relaunch_if_parked(mkrt__mk_host *h, mkrt_error *err)
{
    /* seq_cst: the load of the handshake (see mkrt__mk_ring); in the wait
     * loop it only needs to see the kernel's store eventually. */
    if (h->ops.relaunch == NULL || atomic_load(&h->ctl->parked) == 0)
        return MKRT_OK;
    /* relaxed: a kernel that parked writes nothing more until launched
     * again; one that un-parked after seeing our doorbell stores 0 too. */
    atomic_store_explicit(&h->ctl->parked, 0, memory_order_relaxed);
    h->relaunches++;
    mkrt_status st = h->ops.relaunch(h->ctx, err);
    if (st != MKRT_OK)
        fail_engine(h, "%s", err != NULL ? err->message : "relaunch failed");
    return st;
}

mkrt_status mkrt__mk_ring(mkrt__mk_host *h, mkrt_error *err)
{
    if (h->failed)
        return dead(h, err);
    if (h->rung == h->staged)
        return MKRT_OK;
    if (h->ops.flush != NULL) {
        mkrt_status st = h->ops.flush(h->ctx, err);
        if (st != MKRT_OK) {
            fail_engine(h, "%s", err != NULL ? err->message : "staging copy failed");
            return st;
        }
    }
    h->rung = h->staged;
    if (h->ops.relaunch == NULL) {
        /* release: pairs with the device's system-scope acquire of the
         * doorbell; publishes the descriptor and the staged buffers. */
        atomic_store_explicit(&h->ctl->doorbell, h->rung, memory_order_release);
        return MKRT_OK;
    }
    /* seq_cst (store, then relaunch_if_parked's load of another word): the
     * host's half of the parking handshake, pairing with mkrt__mk_loop_park
     * / the kernel's park (store parked, load doorbell): in the single
     * total order one side sees the other's store. The store also releases
     * the descriptor and the staged buffers. */
    atomic_store(&h->ctl->doorbell, h->rung);
    return relaunch_if_parked(h, err);
}

void mkrt__mk_result(const mkrt__mk_host *h, uint64_t seq, uint64_t *edges, uint64_t *changed, uint64_t *levels)
{
    /* Plain reads after mkrt__mk_wait's acquire of done, which the device
     * released after writing them. */
    *edges = h->ctl->result[seq & 1].edges;
    *changed = h->ctl->result[seq & 1].changed;
    *levels = h->ctl->result[seq & 1].levels;
}

void mkrt__mk_barriers(const mkrt__mk_host *h, uint64_t seq, uint32_t *grid, uint32_t *layer)
{
    /* Plain reads after mkrt__mk_wait's acquire of done, as above. */
    *grid = h->ctl->result[seq & 1].grid_barriers;
    *layer = h->ctl->result[seq & 1].layer_barriers;
}

uint32_t mkrt__mk_failures(const mkrt__mk_host *h, uint64_t seq, const uint32_t **list)
{
    const mkrt__mk_desc *d = &h->ctl->desc[seq & 1];
    /* relaxed: read after mkrt__mk_wait's acquire of done (which the
     * device released after its last claim). */
    uint32_t n = atomic_load_explicit(&((mkrt__mk_control *)h->ctl)->fail_count[seq & 1], memory_order_relaxed);
    *list = h->fails[seq & 1];
    return n < d->count ? n : d->count;
}

static void describe_progress(const mkrt__mk_host *h, char *buf, size_t len)
{
    uint32_t blocks = h->ctl->blocks < MKRT_MK_MAX_BLOCKS ? h->ctl->blocks : MKRT_MK_MAX_BLOCKS;
    size_t at = 0;
    buf[0] = '\0';
    /* Progress words in device memory: one copy of the first few, now that
     * the watchdog needs them (never while all is well). */
    uint64_t copied[5] = {0, 0, 0, 0, 0};
    bool in_device = h->ops.read_progress != NULL &&
                     h->ops.read_progress(h->ctx, copied, blocks < 5 ? blocks : 5) == MKRT_OK;
    for (uint32_t b = 0; b < blocks && at + 40 < len; b++) {
        /* acquire: pairs with the loop's release stores of progress: what a
         * block did before its last record happens before the host gives up
         * on the batch and the CPU takes its cells over. */
        uint64_t p = in_device ? copied[b < 5 ? b : 4]
                               : atomic_load_explicit(&h->ctl->progress[b], memory_order_acquire);
        if (b > 0 && b >= 4) { /* the first four blocks, then a summary */
            at += (size_t)snprintf(buf + at, len - at, ", ... (%u blocks)", blocks);
            break;
        }
        at += (size_t)snprintf(buf + at, len - at, "%sblock %u at layer %u after %u items",
                               b ? ", " : "", b, (unsigned)(p >> 32), (unsigned)p);
    }
}

mkrt_status mkrt__mk_wait(mkrt__mk_host *h, uint64_t seq, uint64_t timeout_ns, mkrt_error *err)
{
    if (h->failed)
        return dead(h, err);
    uint64_t start = mkrt__now_ns();
    /* relaxed: a sign of life (protocol.h), no data with it. */
    uint64_t levels = atomic_load_explicit(&h->ctl->levels_run, memory_order_relaxed);
    for (unsigned spin = 0;; spin++) {
        /* acquire: pairs with the device's system-scope release of done;
         * the device's cell writes for the batch are visible after it. */
        uint64_t done = atomic_load_explicit(&h->ctl->done, memory_order_acquire);
        uint32_t e = atomic_load_explicit(&h->ctl->error, memory_order_acquire);
        if (e != MKRT_MK_ERR_NONE) {
            fail_engine(h, "device error %u at item %u of batch %llu", e, h->ctl->error_item,
                        (unsigned long long)h->ctl->error_seq);
            return mkrt__error_set(err, MKRT_EDEVICE,
                                   "megakernel reported error %u (%s) at item %u of batch %llu. Fix: "
                                   "check the op and its handles; the device is not used again.",
                                   e,
                                   e == MKRT_MK_ERR_UNKNOWN_OP ? "unknown op"
                                   : e == MKRT_MK_ERR_HANDLE   ? "handle out of range"
                                                               : "user op failed",
                                   h->ctl->error_item, (unsigned long long)h->ctl->error_seq);
        }
        if (done >= seq)
            return MKRT_OK;
        /* Left at a batch boundary with this batch pending (resident_ns). */
        mkrt_status rst = relaunch_if_parked(h, err);
        if (rst != MKRT_OK)
            return rst;
        uint64_t waited = mkrt__now_ns() - start;
        if (timeout_ns != MKRT_TIMEOUT_INFINITE && waited >= timeout_ns &&
            atomic_load_explicit(&h->ctl->levels_run, memory_order_relaxed) != levels) {
            /* A traversal ran a level in this period: alive, a new period
             * (relaxed: as above). */
            levels = atomic_load_explicit(&h->ctl->levels_run, memory_order_relaxed);
            start += waited;
            continue;
        }
        if (timeout_ns != MKRT_TIMEOUT_INFINITE && waited >= timeout_ns) {
            char where[160];
            describe_progress(h, where, sizeof where);
            const bool stopped = fail_engine(h, "watchdog: batch %llu hung", (unsigned long long)seq);
            return mkrt__error_set(err, MKRT_ETIMEDOUT,
                                   "megakernel watchdog: batch %llu not done after %llu ms (%s; the "
                                   "device %s). Fix: look for an op that never returns; raise "
                                   "watchdog_ms for long batches (a traversal's levels count as "
                                   "progress).",
                                   (unsigned long long)seq, (unsigned long long)(waited / 1000000),
                                   where, stopped ? "stopped" : "did not stop and may still write cells");
        }
        if (spin < 1000) {
            mkrt__cpu_relax();
        } else {
            if (h->ops.probe != NULL && (spin & 15) == 0) {
                mkrt_error perr;
                mkrt_status pst = h->ops.probe(h->ctx, &perr);
                if (pst != MKRT_OK) {
                    fail_engine(h, "%s", perr.message);
                    return mkrt__error_set(err, pst, "%s", perr.message);
                }
            }
            struct timespec ts = {0, 20000}; /* 20 us: a PCIe round trip is about 1 us */
            nanosleep(&ts, NULL);
        }
    }
}

void mkrt__mk_shutdown(mkrt__mk_host *h)
{
    /* release: pairs with the device's acquire of shutdown in its spins. */
    atomic_store_explicit(&h->ctl->shutdown, 1, memory_order_release);
}
