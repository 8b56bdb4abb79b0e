/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/dispatcher.c - the dispatcher thread: drain, dedupe, layer, split,
 * plan, launch, complete. Double-buffered: batch k+1 is drained and
 * planned while the backend runs batch k. */
#include <stdio.h>
#include <string.h>

#include "base/error_internal.h"
#include "runtime/runtime_internal.h"
#include "backend/megakernel_backend.h"

/* Batches up to this many items run on the dispatcher thread itself. */
#define INLINE_BATCH_MAX 64

static uint64_t load_relaxed(_Atomic uint64_t *v)
{
    return atomic_load_explicit(v, memory_order_relaxed);
}

/* Dispatcher-owned statistics: single writer, relaxed (readers snapshot). */
static void add_stat(_Atomic uint64_t *v, uint64_t d)
{
    atomic_store_explicit(v, load_relaxed(v) + d, memory_order_relaxed);
}

static void note_segment(mkrt__batch *b, mkrt_producer *p)
{
    if (b->nseg > 0 && b->segs[b->nseg - 1].p == p)
        b->segs[b->nseg - 1].end = p->drained;
    else
        b->segs[b->nseg++] = (mkrt__segment){p, p->drained};
}

/* Frees producers that were closed and whose every item has completed. */
static void retire_closed(mkrt_runtime *rt, uint32_t slot, mkrt_producer *p)
{
    pthread_mutex_lock(&rt->producers_lock);
    /* release: pairs with acquire loads of slots (drain, stats). */
    atomic_store_explicit(&rt->slots[slot], NULL, memory_order_release);
    atomic_fetch_sub_explicit(&rt->producers_open, 1, memory_order_relaxed);
    pthread_mutex_unlock(&rt->producers_lock);
    mkrt__producer_free(p);
}

/* Round-robin passes over the producer rings, at most burst_per_ring items
 * per ring per pass, until the batch is full or a pass finds nothing. */
static size_t drain_into(mkrt_runtime *rt, mkrt__batch *b)
{
    const uint32_t slots = rt->cfg.max_producers;
    size_t n = 0;
    b->nseg = 0;
    b->n = 0;
    bool progress = true;
    while (progress && n < rt->cfg.max_batch) {
        progress = false;
        for (uint32_t i = 0; i < slots && n < rt->cfg.max_batch; i++) {
            uint32_t slot = (rt->rr + i) % slots;
            /* acquire: pairs with the release store in mkrt_producer_open. */
            mkrt_producer *p = atomic_load_explicit(&rt->slots[slot], memory_order_acquire);
            if (p == NULL)
                continue;
            size_t waiting = mkrt_spsc_ring_size(p->ring);
            if (waiting > p->high_water) {
                p->high_water = waiting;
                if (waiting > load_relaxed(&rt->high_water))
                    atomic_store_explicit(&rt->high_water, waiting, memory_order_relaxed);
            }
            size_t want = rt->cfg.max_batch - n;
            want = want < rt->cfg.burst_per_ring ? want : rt->cfg.burst_per_ring;
            size_t k = mkrt_spsc_ring_pop(p->ring, b->items + n, want);
            if (k > 0) {
                n += k;
                p->drained += k;
                note_segment(b, p);
                progress = true;
            } else if (atomic_load(&p->state) == MKRT__PRODUCER_CLOSED &&
                       /* relaxed: published is final once the state is
                        * CLOSED with BUSY clear (seq_cst load above, after
                        * the closer's release), and only this thread
                        * writes completed and drained. */
                       load_relaxed(&p->completed) == load_relaxed(&p->published) &&
                       p->drained == load_relaxed(&p->published)) {
                retire_closed(rt, slot, p);
            }
        }
        rt->rr = (rt->rr + 1) % slots;
    }
    b->n = n;
    return n;
}

static void fail_now(mkrt__batch *b, const mkrt_item *it, mkrt_status why)
{
    /* relaxed: dispatcher-only before launch. */
    uint32_t i = atomic_fetch_add_explicit(&b->failed_n, 1, memory_order_relaxed);
    b->failed[i] = *it;
    b->failed_why[i] = why;
}

static unsigned bitlen(uint64_t v)
{
    return v == 0 ? 0 : 64u - (unsigned)__builtin_clzll(v);
}

/* Stage admit: every item is checked by the one admission rule
 * (mkrt__item_admit) and APPENDs get room in the log, before dedupe and
 * layering, so a refused item never adds a layer and no backend sees it.
 * Admitted items are compacted in drain order at the front of b->items;
 * refused ones go to the failure list. Room: the log's capacity less what
 * is in it (done - consumed) less what the running batch reserved. */
static void admit(mkrt_runtime *rt, mkrt__batch *b, uint64_t running_appends)
{
    atomic_store_explicit(&b->failed_n, 0, memory_order_relaxed); /* dispatcher-only */
    /* acquire: pairs with the release CAS in mkrt_append_log_consume: the
     * consumer's reads of the slots it freed happen before they are reused. */
    uint64_t consumed = atomic_load_explicit(&rt->append_consumed, memory_order_acquire);
    uint64_t used = load_relaxed(&rt->append_done) - consumed + running_appends;
    uint64_t cap = rt->cfg.append_log_capacity;
    uint64_t room = cap > used ? cap - used : 0, appends = 0;
    size_t w = 0;
    for (size_t i = 0; i < b->n; i++) {
        mkrt_item it = b->items[i];
        mkrt_status st = mkrt__item_admit(rt, &it);
        if (st == MKRT_OK && it.op == MKRT_OP_APPEND)
            st = appends < room ? (appends++, MKRT_OK) : MKRT_EOVERFLOW;
        if (st != MKRT_OK) {
            fail_now(b, &it, st);
            continue;
        }
        b->items[w++] = it;
    }
    b->admitted = w;
    b->appends = appends;
    b->refused = atomic_load_explicit(&b->failed_n, memory_order_relaxed);
}

/* Stage dedupe: prunes only the duplicates that cannot change the result
 * (the ordering contract); out of memory runs the batch unpruned. Returns
 * the kept items. */
static const mkrt_item *dedupe(mkrt_runtime *rt, mkrt__batch *b)
{
    mkrt_error err;
    size_t kept = b->admitted, pruned = 0;
    if (mkrt_dedupe_prune_ordered(rt->dedupe, b->items, b->admitted, mkrt__item_idempotent, rt,
                                  b->dedup, &kept, &pruned, NULL, &err) != MKRT_OK) {
        kept = b->admitted;
        pruned = 0;
    }
    b->kept = kept;
    return pruned ? b->dedup : b->items;
}

typedef struct build_ctx {
    mkrt_runtime *rt;
    unsigned n_bits, layer_bits;
} build_ctx;

/* Plans a batch shape: the execution topology for its width, and the claim
 * chunk: about four claims per worker per layer of typical width. */
static mkrt_status build_plan(void *p, const mkrt_plan_key *key, mkrt_wave_topology prev,
                              mkrt_plan *plan, mkrt_error *err)
{
    (void)key;
    (void)err;
    const build_ctx *x = p;
    uint64_t n = x->n_bits ? (uint64_t)1 << (x->n_bits - 1) : 0;
    uint64_t layers = x->layer_bits ? (uint64_t)1 << (x->layer_bits - 1) : 1;
    uint64_t width = n / layers;
    mkrt_exec_sample s = {1000.0, n ? (double)width / (double)n : 0.0, 0};
    mkrt_graph_shape g = {n, n};
    mkrt_memory_budget m = {0, x->rt->cfg.device_memory_budget};
    plan->decision = mkrt_select_topology_stable(&s, &g, &m, 0, 0, prev, true);
    uint64_t chunk = width / ((uint64_t)x->rt->workers * 4);
    chunk = chunk < 16 ? 16 : chunk > 1024 ? 1024 : chunk;
    plan->geometry.workgroup_size_x = (uint32_t)chunk;
    plan->worker_groups = x->rt->workers;
    return MKRT_OK;
}

static void plan_batch(mkrt_runtime *rt, mkrt__batch *b, uint64_t running_appends)
{
    mkrt_error err;
    admit(rt, b, running_appends);
    const mkrt_item *src = dedupe(rt, b);
    const size_t kept = b->kept;
    mkrt_layer_plan lp;
    bool layered = mkrt_layer_batch(rt->layering, src, kept, &lp, &err) == MKRT_OK;
    /* Gather into layer order, splitting layers whose fused bytes exceed
     * the device memory budget (greedy, as the frontier planner does).
     * Without a layering (allocation failure) every item is its own layer:
     * slow but within the ordering contract. */
    const uint64_t budget = rt->cfg.device_memory_budget;
    /* A batch runs on the megakernel device when every item is a built-in
     * op or a device user op the device has linked; a C-only user op
     * sends the batch to the CPU pool. */
    b->on_device = rt->use_device;
    const bool dev_user_ops = rt->device != NULL && rt->device->user_ops;
    for (size_t i = 0; i < kept && b->on_device; i++) {
        uint32_t op = src[i].op;
        b->on_device = op <= MKRT_OP_APPEND || (dev_user_ops && rt->ops[op].device);
    }
    size_t layers = 0, e = 0, nl = layered ? lp.layer_count : kept;
    b->layer_offsets[0] = 0;
    for (size_t l = 0; l < nl; l++) {
        size_t from = layered ? lp.layer_offsets[l] : l, to = layered ? lp.layer_offsets[l + 1] : l + 1;
        size_t start = e;
        uint64_t cur = 0;
        for (size_t k = from; k < to; k++) {
            const mkrt_item *it = &src[layered ? lp.layer_items[k] : k];
            uint64_t fb = rt->ops[it->op].fused_bytes; /* admitted: op < MKRT_OP_MAX, fb <= budget */
            if (budget != 0 && e > start && cur + fb > budget) {
                b->layer_offsets[++layers] = (uint32_t)e;
                start = e;
                cur = 0;
            }
            b->exec[e++] = *it;
            cur += fb;
        }
        if (e > start)
            b->layer_offsets[++layers] = (uint32_t)e;
    }
    b->layers = layers;
    b->exec_n = e;
    for (size_t l = 0; l < layers; l++)
        atomic_store_explicit(&b->cursors[l], 0, memory_order_relaxed); /* published by launch */

    build_ctx x = {rt, bitlen(e), bitlen(layers)};
    mkrt_device_key dev = mkrt_device_key_cpu();
    dev.max_workgroup_size = rt->workers;
    mkrt_exec_sample s = {1000.0, 0.0, 0};
    mkrt_memory_budget m = {0, budget};
    mkrt_plan_key key = mkrt_plan_key_make((uint64_t)x.n_bits << 8 | x.layer_bits,
                                           MKRT_ANALYSIS_DATAFLOW, 0, &dev, rt->workers, &s, &m, 0, 0);
    mkrt_plan plan;
    if (mkrt_plan_cache_get_or_plan_copy(rt->plans, &key, build_plan, &x, &plan, &err) == MKRT_OK)
        b->chunk = plan.geometry.workgroup_size_x;
    else
        b->chunk = 64;
    add_stat(&rt->layers, layers);
    add_stat(&rt->barriers, layers ? layers - 1 : 0);
}

static void report(mkrt_runtime *rt, const mkrt_item *it, mkrt_status why)
{
    if (rt->cfg.on_error != NULL) {
        char msg[MKRT_ERROR_MESSAGE_MAX];
        const char *name = it->op < MKRT_OP_MAX && rt->ops[it->op].name ? rt->ops[it->op].name : "op";
        snprintf(msg, sizeof msg,
                 "%s %u (in %u, out %u, param %u; %u cells, APPEND log of %zu) failed: %s. Fix: %s.",
                 name, it->op, it->in, it->out, it->param, rt->cfg.cells, rt->cfg.append_log_capacity,
                 mkrt_status_describe(why),
                 why == MKRT_ENOTSUP     ? "register the op with mkrt_op_register before publishing"
                 : why == MKRT_EINVAL    ? "use handles below the configured cell count"
                 : why == MKRT_EBUDGET   ? "raise device_memory_budget or lower the op's envelope"
                 : why == MKRT_EOVERFLOW ? "consume the APPEND log with mkrt_append_log_consume, or raise "
                                           "append_log_capacity"
                 : why == MKRT_ETIMEDOUT ? "give mkrt_destroy more time or drain before destroying"
                                         : "see the op's own documentation");
        rt->cfg.on_error(rt->cfg.error_ctx, it, why, msg);
    } else if (mkrt_mpmc_ring_push(rt->dead, it, 1) == 0) {
        add_stat(&rt->dead_dropped, 1);
    }
}

static void complete_batch(mkrt_runtime *rt, mkrt__batch *b)
{
    uint32_t failed = atomic_load_explicit(&b->failed_n, memory_order_relaxed);
    for (uint32_t i = 0; i < failed; i++)
        report(rt, &b->failed[i], b->failed_why[i]);
    /* Every drained item in exactly one of the three (see mkrt__batch). */
    add_stat(&rt->executed, b->kept - (failed - b->refused));
    add_stat(&rt->pruned, b->admitted - b->kept);
    add_stat(&rt->failed, failed);
    /* The batch's APPENDs are complete (the backend's done was acquired;
     * a failed device batch left append_len where it was).
     * release: pairs with the acquire loads in the log's readers. */
    atomic_store_explicit(&rt->append_done, load_relaxed(&rt->append_len), memory_order_release);
    add_stat(&rt->batches, 1);
    uint64_t now = mkrt__now_ns();
    for (size_t i = 0; i < b->nseg; i++) {
        mkrt_producer *p = b->segs[i].p;
        /* release: pairs with the acquire load in mkrt_wait. */
        atomic_store_explicit(&p->completed, b->segs[i].end, memory_order_release);
        mkrt_item stamp;
        while (mkrt_spsc_ring_pop(p->stamps, &stamp, 1) == 1) {
            uint64_t end = (uint64_t)stamp.op | (uint64_t)stamp.in << 32;
            uint64_t at = (uint64_t)stamp.out | (uint64_t)stamp.param << 32;
            mkrt__hist_record(&rt->latency, now > at ? now - at : 0, 1);
            if (end >= b->segs[i].end)
                break; /* later stamps belong to later batches */
        }
    }
    /* release: pairs with the acquire load in mkrt_drain; every counter
     * above is visible to a drain that returns. */
    atomic_fetch_add_explicit(&rt->completed_total, b->n, memory_order_release);
    mkrt__waitq_notify(&rt->done_wq);
}

static bool rings_empty(mkrt_runtime *rt)
{
    for (uint32_t s = 0; s < rt->cfg.max_producers; s++) {
        mkrt_producer *p = atomic_load_explicit(&rt->slots[s], memory_order_acquire);
        if (p != NULL && (mkrt_spsc_ring_size(p->ring) > 0 ||
                          ((atomic_load(&p->state) & MKRT__PRODUCER_LIFE) == MKRT__PRODUCER_CLOSED &&
                           load_relaxed(&p->completed) == load_relaxed(&p->published))))
            return false; /* work, or a closed producer to retire */
    }
    return true;
}

/* The device is not used again; the runtime carries on with the CPU pool. */
static void mark_device_failed(mkrt_runtime *rt, const mkrt_error *err)
{
    rt->use_device = false;
    add_stat(&rt->device_failures, 1);
    snprintf(rt->backend_failure, sizeof rt->backend_failure,
             "cpu: %u workers (the device failed and is not used again: %s)", rt->workers, err->message);
    /* release: pairs with the acquire in mkrt_backend_describe. */
    atomic_store_explicit(&rt->device_failed, true, memory_order_release);
}

/* The device failed or hung on batch b: every item of the batch goes to
 * the error path (some may have run; none is lost). */
static void device_failed(mkrt_runtime *rt, mkrt__batch *b, mkrt_status why, const mkrt_error *err)
{
    /* relaxed: dispatcher-only. Items refused at admission stay listed. */
    atomic_store_explicit(&b->failed_n, b->refused, memory_order_relaxed);
    for (size_t k = 0; k < b->exec_n; k++)
        fail_now(b, &b->exec[k], why);
    mark_device_failed(rt, err);
}

/* A failure-list status back to an mkrt_status. */
static mkrt_status device_status(uint32_t v)
{
    int32_t s = (int32_t)v;
    return s <= MKRT_EAGAIN && s >= MKRT_ESTATE ? (mkrt_status)s : MKRT_EDEVICE;
}

/* Waits for the batch running on the device, with the watchdog; items the
 * device listed as failed go to the error path. */
static void wait_device(mkrt_runtime *rt, mkrt__batch *b)
{
    mkrt_error err;
    uint64_t limit = rt->cfg.watchdog_ms ? (uint64_t)rt->cfg.watchdog_ms * 1000000u : MKRT_TIMEOUT_INFINITE;
    const uint32_t *list;
    uint32_t n;
    mkrt_status st = mkrt__device_wait(rt->device, limit, &list, &n, &err);
    if (st != MKRT_OK) {
        device_failed(rt, b, st, &err);
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        if (list[2 * i] < b->exec_n)
            fail_now(b, &b->exec[list[2 * i]], device_status(list[2 * i + 1]));
    /* relaxed: dispatcher-owned between batches (see mkrt__device_ring). */
    atomic_store_explicit(&rt->append_len, mkrt__device_append_len(rt->device), memory_order_relaxed);
    add_stat(&rt->device_batches, 1);
}

static void wait_backend(mkrt_runtime *rt)
{
    while (!mkrt__cpu_pool_done(rt->cpu)) {
        uint32_t e = mkrt__waitq_prepare(&rt->work_wq);
        if (mkrt__cpu_pool_done(rt->cpu)) {
            mkrt__waitq_finish(&rt->work_wq);
            return;
        }
        mkrt__waitq_sleep(&rt->work_wq, e, NULL);
        mkrt__waitq_finish(&rt->work_wq);
    }
}

/* Waits for the batch in flight (if any) on its backend and completes it. */
static void finish_running(mkrt_runtime *rt, mkrt__batch **running)
{
    if (*running == NULL)
        return;
    if ((*running)->on_device)
        wait_device(rt, *running);
    else
        wait_backend(rt);
    complete_batch(rt, *running);
    *running = NULL;
}

/* Destroy timed out: everything still queued fails with MKRT_ETIMEDOUT. */
static void fail_remaining(mkrt_runtime *rt, mkrt__batch *b)
{
    while (drain_into(rt, b) > 0) {
        atomic_store_explicit(&b->failed_n, 0, memory_order_relaxed);
        for (size_t i = 0; i < b->n; i++)
            fail_now(b, &b->items[i], MKRT_ETIMEDOUT);
        b->admitted = b->kept = 0;
        b->refused = (uint32_t)b->n;
        complete_batch(rt, b);
    }
}

void *mkrt__dispatcher_main(void *arg)
{
    mkrt_runtime *rt = arg;
    mkrt__batch *running = NULL;
    unsigned cur = 0;
    for (;;) {
        /* Test hook: park between batches while held (see runtime_internal.h). */
        if (atomic_load(&rt->held) && !atomic_load_explicit(&rt->aborting, memory_order_acquire)) {
            finish_running(rt, &running);
            atomic_store(&rt->parked, true);
            mkrt__waitq_notify(&rt->done_wq);
            while (atomic_load(&rt->held) && !atomic_load_explicit(&rt->aborting, memory_order_acquire)) {
                uint32_t e = mkrt__waitq_prepare(&rt->work_wq);
                if (atomic_load(&rt->held) && !atomic_load_explicit(&rt->aborting, memory_order_acquire))
                    mkrt__waitq_sleep(&rt->work_wq, e, NULL);
                mkrt__waitq_finish(&rt->work_wq);
            }
            atomic_store(&rt->parked, false);
            rt->rr = 0;
        }
        mkrt__batch *b = &rt->batch[cur];
        bool aborting = atomic_load_explicit(&rt->aborting, memory_order_acquire);
        size_t n = aborting ? 0 : drain_into(rt, b);
        if (n > 0)
            plan_batch(rt, b, running != NULL ? running->appends : 0);
        /* A device batch is staged while the batch before it still runs
         * (its own buffer; the copy overlaps), and rung once that batch
         * has completed. */
        bool staged = false;
        if (n > 0 && b->exec_n > 0 && b->on_device && rt->use_device) {
            mkrt_error err;
            if (mkrt__device_stage(rt->device, b, &err) == MKRT_OK)
                staged = true;
            else
                mark_device_failed(rt, &err); /* nothing of b ran: it goes to the CPU */
        }
        finish_running(rt, &running);
        if (n > 0) {
            if (b->on_device && !rt->use_device)
                b->on_device = false; /* the device failed while this batch was planned */
            if (b->exec_n > 0 && b->on_device) {
                mkrt_error err;
                /* relaxed: append_len is dispatcher-owned between batches;
                 * acquire: see admit (the device may reuse freed slots). */
                uint64_t len = atomic_load_explicit(&rt->append_len, memory_order_relaxed);
                uint64_t limit = atomic_load_explicit(&rt->append_consumed, memory_order_acquire) +
                                 rt->cfg.append_log_capacity;
                if (staged && mkrt__device_ring(rt->device, len, limit, &err) == MKRT_OK) {
                    running = b;
                    cur ^= 1;
                    continue;
                }
                if (staged)
                    mark_device_failed(rt, &err);
                b->on_device = false; /* not rung: nothing ran; the CPU runs it below */
            }
            if (b->exec_n > 0 && b->exec_n <= INLINE_BATCH_MAX) {
                /* Small batch: run it here, layer by layer (one thread needs
                 * no barrier); saves the hand-offs to and from the workers,
                 * which dominate latency at light load. The previous batch
                 * has completed above, so batches stay in order. */
                for (size_t l = 0; l < b->layers; l++)
                    mkrt__exec_range(rt, b, b->layer_offsets[l], b->layer_offsets[l + 1]);
                complete_batch(rt, b);
            } else if (b->exec_n > 0) {
                b->started_ns = mkrt__now_ns();
                mkrt__cpu_pool_launch(rt->cpu, b);
                running = b;
                cur ^= 1;
            } else {
                complete_batch(rt, b); /* everything pruned or refused */
            }
            continue;
        }
        if (aborting) {
            fail_remaining(rt, b);
            break;
        }
        /* acquire: pairs with the release store of closing in mkrt_destroy. */
        if (atomic_load_explicit(&rt->closing, memory_order_acquire) &&
            load_relaxed(&rt->completed_total) ==
                atomic_load_explicit(&rt->published_total, memory_order_acquire) &&
            rings_empty(rt))
            break;
        uint32_t e = mkrt__waitq_prepare(&rt->work_wq);
        bool idle = rings_empty(rt) && !atomic_load(&rt->held);
        if (idle && !atomic_load_explicit(&rt->closing, memory_order_acquire) &&
            !atomic_load_explicit(&rt->aborting, memory_order_acquire))
            mkrt__waitq_sleep(&rt->work_wq, e, NULL);
        else if (atomic_load_explicit(&rt->closing, memory_order_acquire) && idle) {
            /* closing with items still in flight elsewhere: nap briefly */
            struct timespec ts;
            mkrt__waitq_sleep(&rt->work_wq, e, mkrt__deadline(1000000, &ts));
        }
        mkrt__waitq_finish(&rt->work_wq);
    }
    /* release: pairs with the acquire in mkrt_destroy. */
    atomic_store_explicit(&rt->stopped, true, memory_order_release);
    mkrt__waitq_notify(&rt->done_wq);
    return NULL;
}
