/* SPDX-License-Identifier: BSD-2-Clause */
/* src/backend/mk_sim.c - the simulated megakernel (see mk_sim.h). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/alloc_internal.h"
#include "base/error_internal.h"
#include "base/waitq.h"
#include "backend/mk_loop.h"
#include "backend/mk_sim.h"
#include "backend/mk_trav.h"

/* The launch word's bits (mk_sim.h). */
enum { MKRT__SIM_ALIVE = 1u, MKRT__SIM_QUEUED = 2u };

/* The loop's thread runs the loop again for each relaunch queued while it
 * ran (sim_relaunch), as a GPU starts a launch queued on the kernel's
 * stream once the kernel before it leaves; it ends when none is queued,
 * or at shutdown. */
static int sim_loop(void *p)
{
    mkrt__mk_sim *s = p;
#ifdef MKRT_TEST_HOOKS
    mkrt__mk_loop_hooks hooks = {s->blocks,      NULL, &s->hang_batch, &s->hang_after_layer,
                                 NULL,           &s->level_nap_ns, &s->hang_ns};
#else
    mkrt__mk_loop_hooks hooks = {s->blocks, NULL, NULL, NULL, NULL, NULL, NULL};
#endif
    for (;;) {
        mkrt__mk_loop_run(s->ctl, &hooks);
        /* Not again after a fatal error (the host fails the engine; the
         * batch would run twice) or at shutdown. relaxed (error): this
         * thread stored it. relaxed (launch's load, and the exchange's
         * failure): the loop reads the doorbell with acquire; release
         * (the exchange): a thread that leaves publishes its cell writes
         * with the cleared word, which sim_wait_gone loads with acquire. */
        const bool stopped = mkrt__mk_loop_shutting_down(s->ctl) ||
                             atomic_load_explicit(&s->ctl->error, memory_order_relaxed) != MKRT_MK_ERR_NONE;
        uint32_t st = atomic_load_explicit(&s->launch, memory_order_relaxed);
        for (;;) {
            const bool again = (st & MKRT__SIM_QUEUED) && !stopped;
            if (atomic_compare_exchange_weak_explicit(&s->launch, &st, again ? MKRT__SIM_ALIVE : 0u,
                                                      memory_order_release, memory_order_relaxed)) {
                if (!again)
                    return 0;
                break;
            }
        }
        /* seq_cst: running again, not parked (protocol.h's handshake: the
         * host's doorbell store and load of parked are seq_cst too). */
        atomic_store(&s->ctl->parked, 0);
    }
}

mkrt_status mkrt__mk_sim_start(mkrt__mk_sim *s, uint32_t cells, uint32_t capacity, uint32_t blocks,
                               uint64_t append_capacity, uint64_t idle_ns, uint64_t resident_ns,
                               mkrt_error *err)
{
    memset(s, 0, sizeof *s);
    s->capacity = capacity;
    s->cell_count = cells;
    s->append_capacity = append_capacity;
    s->blocks = blocks ? blocks : 1;
    s->ctl = mkrt__alloc_zeroed(sizeof *s->ctl, MKRT_MK_LINE);
    s->cells = mkrt__alloc_zeroed((size_t)cells * sizeof *s->cells, MKRT_CACHE_LINE);
    size_t log_bytes;
    if (append_capacity > SIZE_MAX / (2 * sizeof(uint32_t)) - 1 ||
        !mkrt__mul_size((size_t)append_capacity, 2 * sizeof(uint32_t), &log_bytes))
        return mkrt__error_set(err, MKRT_EOVERFLOW,
                               "simulated megakernel: an APPEND log of %llu entries does not fit in "
                               "memory. Fix: lower the capacity.",
                               (unsigned long long)append_capacity);
    s->log_bytes = log_bytes + 8;
    s->append_log = mkrt__alloc_zeroed(s->log_bytes, MKRT_CACHE_LINE);
    for (int i = 0; i < 2; i++) {
        s->buffers[i] = mkrt__alloc((size_t)capacity * sizeof(mkrt_item), MKRT_CACHE_LINE);
        s->offsets[i] = mkrt__alloc((2 * (size_t)capacity + 1) * sizeof(uint32_t), MKRT_CACHE_LINE);
        s->fails[i] = mkrt__alloc(2 * (size_t)capacity * sizeof(uint32_t), MKRT_CACHE_LINE);
    }
    if (!s->ctl || !s->cells || !s->append_log || !s->buffers[0] || !s->buffers[1] || !s->offsets[0] ||
        !s->offsets[1] || !s->fails[0] || !s->fails[1]) {
        mkrt__mk_sim_stop(s);
        return mkrt__error_set(err, MKRT_ENOMEM, "simulated megakernel: allocation failed for %u "
                                                 "cells and %u-item buffers. Fix: smaller sizes.",
                               cells, capacity);
    }
    s->ctl->cells = (uint64_t)(uintptr_t)s->cells;
    s->ctl->cell_count = cells;
    s->ctl->blocks = s->blocks;
    s->ctl->append_log = (uint64_t)(uintptr_t)s->append_log;
    s->ctl->append_capacity = append_capacity;
    s->ctl->append_limit = append_capacity;
    s->ctl->idle_ns = idle_ns;
    s->ctl->resident_ns = resident_ns;
    atomic_init(&s->launch, MKRT__SIM_ALIVE);
    s->running = mkrt__thread_start(&s->thread, sim_loop, s) == 0;
    if (!s->running) {
        mkrt__mk_sim_stop(s);
        return mkrt__error_set(err, MKRT_ENOMEM, "simulated megakernel: no thread. Fix: raise the "
                                                 "thread limit.");
    }
    return MKRT_OK;
}

mkrt_status mkrt__mk_sim_graph(mkrt__mk_sim *s, uint32_t vertices, const uint64_t *offsets, const uint32_t *targets,
                               const uint32_t *weights, uint32_t jobs, mkrt_error *err)
{
    size_t bytes = (size_t)mkrt__mk_job_bits_bytes(vertices);
    size_t jbytes = (size_t)jobs * (size_t)mkrt__mk_job_bits_bytes(vertices);
    void *f = mkrt__alloc_zeroed(bytes, MKRT_CACHE_LINE);
    void *jb = jbytes != 0 ? mkrt__alloc_zeroed(jbytes, MKRT_CACHE_LINE) : NULL;
    if (f == NULL || (jbytes != 0 && jb == NULL)) {
        mkrt__free(f, bytes);
        mkrt__free(jb, jbytes);
        return mkrt__error_set(err, MKRT_ENOMEM,
                               "simulated megakernel: no memory for the RELAX bitmaps of %u vertices and "
                               "%u traversal jobs (%zu bytes). Fix: free memory.",
                               vertices, jobs, bytes + jbytes);
    }
    mkrt__free(s->relax_bits, s->relax_bits_bytes);
    mkrt__free(s->job_bits, s->job_bits_bytes);
    s->job_bits = jb;
    s->job_bits_bytes = jbytes;
    s->jobs = jobs;
    s->relax_bits = f;
    s->relax_bits_bytes = bytes;
    s->ctl->graph_offsets = (uint64_t)(uintptr_t)offsets;
    s->ctl->graph_targets = (uint64_t)(uintptr_t)targets;
    s->ctl->graph_weights = (uint64_t)(uintptr_t)weights;
    s->ctl->relax_bits = (uint64_t)(uintptr_t)f;
    s->ctl->vertices = vertices;
    return MKRT_OK;
}

static mkrt_status sim_stage(void *ctx, unsigned buffer, const mkrt_item *items, uint32_t count,
                             const uint32_t *offsets, const uint32_t *layer_blocks, uint32_t layers,
                             mkrt__mk_staged *out, mkrt_error *err)
{
    (void)err; /* host memory: the copies cannot fail (mk_host checked the size) */
    mkrt__mk_sim *s = ctx;
    memcpy(s->buffers[buffer], items, (size_t)count * sizeof *items);      /* cuMemcpyHtoDAsync */
    memcpy(s->offsets[buffer], offsets, ((size_t)layers + 1) * sizeof *offsets);
    uint32_t *blocks = s->offsets[buffer] + (size_t)s->capacity + 1;
    if (layer_blocks != NULL)
        memcpy(blocks, layer_blocks, (size_t)layers * sizeof *layer_blocks);
    out->blocks_addr = (uint64_t)(uintptr_t)blocks;
    out->items_addr = (uint64_t)(uintptr_t)s->buffers[buffer];
    out->offsets_addr = (uint64_t)(uintptr_t)s->offsets[buffer];
    out->fails_addr = (uint64_t)(uintptr_t)s->fails[buffer];
    out->fails = s->fails[buffer];
    return MKRT_OK;
}

/* The loop left on its own (idle or resident): launch it again. A loop
 * that saw our doorbell after it parked is still running (it may be
 * running a batch that hangs): the launch is queued for its thread, which
 * runs the loop again when it leaves, as a launch queued on the kernel's
 * stream would start; the host never blocks here, so its watchdog keeps
 * counting. A thread that ended (or is ending) is joined and another
 * started. */
static mkrt_status sim_relaunch(void *ctx, mkrt_error *err)
{
    mkrt__mk_sim *s = ctx;
    /* relaxed: as in sim_loop, no data with the word. */
    uint32_t st = atomic_load_explicit(&s->launch, memory_order_relaxed);
    while (st & MKRT__SIM_ALIVE)
        if (atomic_compare_exchange_weak_explicit(&s->launch, &st, MKRT__SIM_ALIVE | MKRT__SIM_QUEUED,
                                                  memory_order_relaxed, memory_order_relaxed))
            return MKRT_OK;
    mkrt__thread_join(s->thread);
    /* relaxed: the thread that read it last was joined. */
    atomic_store_explicit(&s->launch, MKRT__SIM_ALIVE, memory_order_relaxed);
    s->running = mkrt__thread_start(&s->thread, sim_loop, s) == 0;
    if (!s->running) {
        atomic_store_explicit(&s->launch, 0u, memory_order_relaxed);
        return mkrt__error_set(err, MKRT_ENOMEM, "simulated megakernel: no thread to relaunch the "
                                                 "loop. Fix: raise the thread limit.");
    }
    return MKRT_OK;
}

/* After shutdown: the loop's thread ended, with no launch queued on it
 * (sim_loop does not run the loop again at shutdown). */
static bool sim_wait_gone(void *ctx, uint64_t timeout_ns)
{
    mkrt__mk_sim *s = ctx;
    const uint64_t start = mkrt__mk_loop_now_ns();
    /* acquire: pairs with sim_loop's release as it clears the word; the
     * loop's writes of cells happen before the host's next reads. */
    while (atomic_load_explicit(&s->launch, memory_order_acquire) & MKRT__SIM_ALIVE) {
        if (mkrt__mk_loop_now_ns() - start >= timeout_ns)
            return false;
        mkrt__mk_loop_nap(50000);
    }
    return true;
}

const mkrt__mk_device_ops mkrt__mk_sim_ops = {sim_stage, NULL, NULL, sim_relaunch, NULL, NULL, sim_wait_gone};

void mkrt__mk_sim_stop(mkrt__mk_sim *s)
{
    if (s->running) {
        /* release: pairs with the sim's acquire loads of shutdown. */
        atomic_store_explicit(&s->ctl->shutdown, 1, memory_order_release);
        mkrt__thread_join(s->thread);
        s->running = false;
    }
    mkrt__free(s->ctl, sizeof *s->ctl);
    mkrt__free(s->cells, (size_t)s->cell_count * sizeof *s->cells);
    for (int i = 0; i < 2; i++) {
        mkrt__free(s->buffers[i], (size_t)s->capacity * sizeof(mkrt_item));
        mkrt__free(s->offsets[i], (2 * (size_t)s->capacity + 1) * sizeof(uint32_t));
        mkrt__free(s->fails[i], 2 * (size_t)s->capacity * sizeof(uint32_t));
    }
    mkrt__free(s->append_log, s->log_bytes);
    mkrt__free(s->relax_bits, s->relax_bits_bytes);
    mkrt__free(s->job_bits, s->job_bits_bytes);
    memset(s, 0, sizeof *s);
}

/* ---- the simulated device behind the megakernel backend (mk_device.h) ---- */

static bool sim_device_stop(void *ctx, uint64_t timeout_ns)
{
    (void)timeout_ns; /* the loop is told to give up: it always stops */
    mkrt__mk_sim_stop(ctx);
    return true;
}

static void sim_device_describe(const void *ctx, char *buf, size_t len)
{
    const mkrt__mk_sim *s = ctx;
    snprintf(buf, len, "sim: megakernel protocol against a simulated device (%u blocks, leaves after %llu us idle)",
             s->blocks, (unsigned long long)(s->ctl->idle_ns / 1000u));
}

static mkrt_status sim_device_graph_in(void *ctx, uint32_t vertices, const uint64_t *offsets,
                                       const uint32_t *targets, const uint32_t *weights, uint32_t jobs,
                                       uint64_t timeout_ns, mkrt_error *err)
{
    (void)timeout_ns; /* no kernel to wait for: the loop reads the graph between batches */
    return mkrt__mk_sim_graph(ctx, vertices, offsets, targets, weights, jobs, err);
}

/* The job's host arrays are the simulated device's memory: used in place
 * (nothing to copy either way); its bitmaps are the slot's. */
static mkrt_status sim_device_job_in(void *ctx, uint32_t slot, void *values, size_t vbytes, void *aux,
                                     size_t abytes, mkrt__mk_job *out, mkrt_error *err)
{
    const mkrt__mk_sim *s = ctx;
    (void)vbytes, (void)abytes;
    if (slot >= s->jobs)
        return mkrt__error_set(err, MKRT_EINVAL, "simulated megakernel: job slot %u of %u. Fix: a bug in the "
                                                 "megakernel backend.", slot, s->jobs);
    out->values = (uint64_t)(uintptr_t)values;
    out->aux = (uint64_t)(uintptr_t)aux;
    out->bits = (uint64_t)(uintptr_t)((char *)s->job_bits + (size_t)slot * (s->job_bits_bytes / s->jobs));
    return MKRT_OK;
}

static mkrt_status sim_device_job_out(void *ctx, uint32_t slot, void *values, size_t vbytes, void *aux,
                                      size_t abytes, mkrt_error *err)
{
    (void)ctx, (void)slot, (void)values, (void)vbytes, (void)aux, (void)abytes, (void)err;
    return MKRT_OK;
}

/* The simulated device keeps the RELAX job's bitmaps; the graph's arrays are the
 * runtime's (borrowed), counted as a GPU would hold them. No memory to
 * report: no default budget. */
static void sim_device_memory(const void *ctx, uint64_t *resident, uint64_t *budget)
{
    const mkrt__mk_sim *s = ctx;
    const uint64_t v = s->ctl->vertices;
    *resident = s->relax_bits_bytes;
    if (v != 0) {
        const uint64_t edges = ((const uint64_t *)(uintptr_t)s->ctl->graph_offsets)[v];
        *resident += (v + 1) * sizeof(uint64_t) + edges * sizeof(uint32_t) * (s->ctl->graph_weights != 0 ? 2 : 1);
        /* The job slots as a device holds them (values, aux, bitmaps), the
         * values being the traversals' host arrays here. */
        *resident += (uint64_t)s->jobs * mkrt__mk_job_slot_bytes((uint32_t)v);
    }
    *budget = 0;
}

#ifdef MKRT_TEST_HOOKS
static void sim_device_inject_hang(void *ctx, uint64_t seq, uint32_t layer, uint64_t ns)
{
    mkrt__mk_sim *s = ctx;
    /* relaxed, then release: the loop reads hang_batch with acquire first. */
    atomic_store_explicit(&s->hang_after_layer, layer, memory_order_relaxed);
    atomic_store_explicit(&s->hang_ns, ns, memory_order_relaxed);
    atomic_store_explicit(&s->hang_batch, seq, memory_order_release);
}

static void sim_device_level_nap(void *ctx, uint64_t ns)
{
    /* relaxed: a test knob, read by the loop at each level. */
    atomic_store_explicit(&((mkrt__mk_sim *)ctx)->level_nap_ns, ns, memory_order_relaxed);
}
#endif

const mkrt__mk_device mkrt__mk_sim_device = {
    .name = "sim",
    .protocol = &mkrt__mk_sim_ops,
    .stop = sim_device_stop,
    .describe = sim_device_describe,
    .graph_in = sim_device_graph_in,
    .job_in = sim_device_job_in,
    .job_out = sim_device_job_out,
    .memory = sim_device_memory,
#ifdef MKRT_TEST_HOOKS
    .inject_hang = sim_device_inject_hang,
    .level_nap = sim_device_level_nap,
#endif
};
