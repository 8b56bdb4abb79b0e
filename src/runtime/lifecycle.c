/* SPDX-License-Identifier: BSD-2-Clause */
/* src/runtime/lifecycle.c - mkrt_create and mkrt_destroy: the runtime's
 * memory, its backends and its dispatcher thread, and what describes them. */
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <unistd.h>

#include "base/cpus.h"
#include "base/error_internal.h"
#include "base/spin_wait.h"
#include "runtime/api_internal.h"
#include "queue/spsc_wait.h"
#include "backend/cpu_pool.h"
#include "backend/megakernel_backend.h"

static void free_batch(mkrt__batch *b, size_t cap)
{
    mkrt__free(b->items, cap * sizeof *b->items);
    mkrt__free(b->segs, cap * sizeof *b->segs);
    mkrt__free(b->exec_buf, cap * sizeof *b->exec_buf);
    mkrt__free(b->layer_offsets, (cap + 1) * sizeof *b->layer_offsets);
    mkrt__free(b->cursors, cap * sizeof *b->cursors);
    mkrt__free(b->plan.participants, cap * sizeof *b->plan.participants);
    mkrt__free(b->failed, cap * sizeof *b->failed);
    mkrt__free(b->failed_why, cap * sizeof *b->failed_why);
}

static bool alloc_batch(mkrt__batch *b, size_t cap)
{
    memset(b, 0, sizeof *b);
    b->items = mkrt__alloc(cap * sizeof *b->items, MKRT_CACHE_LINE);
    b->segs = mkrt__alloc(cap * sizeof *b->segs, MKRT_CACHE_LINE);
    b->exec = b->exec_buf = mkrt__alloc(cap * sizeof *b->exec_buf, MKRT_CACHE_LINE);
    b->layer_offsets = mkrt__alloc((cap + 1) * sizeof *b->layer_offsets, MKRT_CACHE_LINE);
    b->cursors = mkrt__alloc(cap * sizeof *b->cursors, MKRT_CACHE_LINE);
    b->plan.participants = mkrt__alloc(cap * sizeof *b->plan.participants, MKRT_CACHE_LINE);
    b->failed = mkrt__alloc(cap * sizeof *b->failed, MKRT_CACHE_LINE);
    b->failed_why = mkrt__alloc(cap * sizeof *b->failed_why, MKRT_CACHE_LINE);
    return b->items && b->segs && b->exec && b->layer_offsets && b->cursors &&
           b->plan.participants && b->failed && b->failed_why;
}

static void free_runtime(mkrt_runtime *rt)
{
    for (int i = 0; i < 2; i++)
        free_batch(&rt->dispatch.batch[i], rt->cfg.max_batch);
    mkrt__free(rt->producers.slots, rt->cfg.max_producers * sizeof *rt->producers.slots);
    mkrt__free(rt->state.cells, rt->state.cells_bytes);
    mkrt__free((void *)rt->state.append_log, rt->state.log_bytes);
    for (uint32_t c = 0; c < MKRT__CLASSES; c++)
        mkrt__free(rt->state.emitq[c].ring, mkrt__emit_ring_slots(&rt->cfg) * sizeof *rt->state.emitq[c].ring);
    mkrt__graph_engine_destroy(rt->graph);
    mkrt__dispatch_scratch_destroy(rt->dispatch.own_scratch);
    for (size_t i = 0; i < MKRT_THREAD_SLOTS; i++)
        mkrt__dispatch_scratch_destroy(rt->dispatch.helper_scratch[i]);
    mkrt_barrier_scratch_destroy(rt->dispatch.split);
    mkrt__free(rt->dispatch.waves, rt->cfg.max_batch * sizeof *rt->dispatch.waves);
    mkrt_mpmc_ring_destroy(rt->state.dead);
    mkrt__mutex_destroy(&rt->producers.producers_lock);
    mkrt__mutex_destroy(&rt->dispatch.state_lock);
    mkrt__planner_fini(&rt->dispatch.planner);
    mkrt__shape_cache_fini(&rt->dispatch.shapes);
    mkrt__free(rt, sizeof *rt);
}

/* Starts the backends: the megakernel device for SIM, CUDA and AUTO (AUTO
 * records why it fell back), then the CPU pool, which runs what the
 * device cannot and takes over if it fails. */
static mkrt_status start_backends(mkrt_runtime *rt, mkrt_error *err)
{
    const mkrt_config *cfg = &rt->cfg;
    mkrt_error why;
    mkrt_status st = MKRT_OK;
    mkrt__backend *device = NULL, *cpu = NULL;
    /* The batch buffers a GPU copies large batches from by DMA. */
    void *const bufs[MKRT__MK_BATCH_BUFS] = {rt->dispatch.batch[0].items, rt->dispatch.batch[0].exec_buf,
                                             rt->dispatch.batch[1].items, rt->dispatch.batch[1].exec_buf};
    const size_t buf_bytes = cfg->max_batch * sizeof(mkrt_item);
    if (cfg->backend == MKRT_BACKEND_SIM)
        st = mkrt__megakernel_start(&rt->state, rt->workers, MKRT_BACKEND_SIM, bufs, buf_bytes, &device, err);
    else if (cfg->backend == MKRT_BACKEND_CUDA || cfg->backend == MKRT_BACKEND_AUTO)
        st = mkrt__megakernel_start(&rt->state, rt->workers, MKRT_BACKEND_CUDA, bufs, buf_bytes, &device, &why);
    if (st != MKRT_OK && cfg->backend == MKRT_BACKEND_CUDA)
        return mkrt__error_set(err, MKRT_EDEVICE,
                               "CUDA backend requested but unusable: %s (Or use MKRT_BACKEND_AUTO, "
                               "which falls back to the CPU.)",
                               why.message);
    if (st != MKRT_OK && cfg->backend == MKRT_BACKEND_SIM)
        return st;
    /* Without a device the pool's threads take the dispatch token when it
     * is free (pipeline/dispatcher.c, the roam); a device's calls stay on
     * the dispatcher thread, which set up its context. */
    const mkrt__roam *roam = device == NULL ? mkrt__dispatch_roam(&rt->dispatch) : NULL;
    if ((st = mkrt__cpu_pool_start(&rt->state, rt->workers, (uint32_t)cfg->max_batch, roam, &cpu, err)) !=
        MKRT_OK) {
        if (device != NULL && !device->ops->stop(device, 5000000000u)) {
            rt->state.cells = NULL; /* a GPU that would not stop keeps them */
            rt->state.append_log = NULL;
        }
        return st;
    }
    if (device != NULL)
        rt->dispatch.backends[rt->dispatch.nbackends++] = device;
    rt->dispatch.backends[rt->dispatch.nbackends++] = cpu;
    rt->dispatch.cpu_only = mkrt__backends_device(rt->dispatch.backends, rt->dispatch.nbackends) == NULL;
    /* device_memory_budget 0: the device's own (cuMemGetInfo at start less
     * the reserve, cuda/cuda_engine.h), where it reports one; the split,
     * the admission and SHED then plan against real memory by default. */
    if (rt->cfg.device_memory_budget == 0 && device != NULL && device->memory_budget != 0) {
        rt->cfg.device_memory_budget = device->memory_budget;
        rt->state.budget_from_device = true;
    }
    rt->dispatch.device_state = device != NULL && device->ops->state_in != NULL;
    if (device == NULL && cfg->backend == MKRT_BACKEND_AUTO) {
        /* Not a failure: the reason, without the Fix an explicit CUDA gets. */
        snprintf(rt->backend_desc, sizeof rt->backend_desc, "cpu: %u workers (auto chose the CPU: %.*s)",
                 rt->workers, mkrt__error_reason_len(why.message), why.message);
        return MKRT_OK;
    }
    if (device == NULL) {
        snprintf(rt->backend_desc, sizeof rt->backend_desc, "cpu: %u workers", rt->workers);
        return MKRT_OK;
    }
    mkrt__runtime_describe_device(rt);
    return MKRT_OK;
}

void mkrt__runtime_describe_device(mkrt_runtime *rt)
{
    char dev[MKRT_ERROR_MESSAGE_MAX + 192];
    mkrt__backend *device = mkrt__backends_device(rt->dispatch.backends, rt->dispatch.nbackends);
    device->ops->describe(device, dev, sizeof dev);
    char mem[96] = "";
    if (rt->cfg.device_memory_budget != 0)
        /* relaxed: a size (state.h). */
        snprintf(mem, sizeof mem, "; device memory budget %llu MiB (%s), %llu KiB resident",
                 (unsigned long long)(rt->cfg.device_memory_budget >> 20),
                 rt->state.budget_from_device ? "the device's" : "configured",
                 (unsigned long long)(atomic_load_explicit(&rt->state.device_resident, memory_order_relaxed) >> 10));
    snprintf(rt->backend_desc, sizeof rt->backend_desc,
             "%.*s%s; watchdog %u ms; batches with ops the device lacks on %u CPU workers",
             (int)(sizeof rt->backend_desc - 192), dev, mem, rt->cfg.watchdog_ms, rt->workers);
}

/* Stops the backends; a GPU kernel that would not stop keeps the cells
 * and the log (they are leaked rather than freed under it). */
static bool stop_backends(mkrt_runtime *rt)
{
    uint64_t limit = rt->cfg.watchdog_ms ? (uint64_t)rt->cfg.watchdog_ms * 1000000u : 5000000000u;
    bool stopped = true;
    for (uint32_t i = 0; i < rt->dispatch.nbackends; i++)
        stopped &= rt->dispatch.backends[i]->ops->stop(rt->dispatch.backends[i], limit);
    if (!stopped) {
        rt->state.cells = NULL;
        rt->state.append_log = NULL;
    }
    /* cpu_only stays as it was: it is fixed at create, and a waiter still
     * inside mkrt_wait reads it (mkrt__dispatch_help) until destroy has
     * seen it leave; the backends themselves are gone now. */
    return stopped;
}

mkrt_status mkrt_create(const mkrt_config *cfg, mkrt_runtime **out, mkrt_error *err)
{
    mkrt_config d = mkrt_config_default();
    if (out == NULL)
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_create got a NULL result pointer. Fix: pass "
                                                 "the address of an mkrt_runtime pointer.");
    *out = NULL;
    if (cfg == NULL)
        cfg = &d;
    size_t cbytes = 0, lbytes = 0;
    mkrt_status st = mkrt__config_check(cfg, &cbytes, &lbytes, err);
    uint32_t plan_off = cfg->plan_off;
    if (st == MKRT_OK)
        st = mkrt__config_plan_env(&plan_off, err);
    if (st != MKRT_OK)
        return st;
    mkrt_runtime *rt = mkrt__alloc_zeroed(sizeof *rt, alignof(mkrt_runtime));
    if (rt == NULL)
        return mkrt__error_set(err, MKRT_ENOMEM, "mkrt_create could not allocate the runtime (%zu "
                                                 "bytes). Fix: free memory.",
                               sizeof *rt);
    rt->cfg = *cfg;
    rt->cfg.plan_off = plan_off;
    /* The default uses every CPU of the process: the thread that dispatches
     * is one of the executors (backend/cpu_pool.c); the plan narrows a
     * batch while producers are busy (batch_planner.c, SHED). */
    rt->cpus = mkrt__cpus_available();
    rt->workers = cfg->workers ? cfg->workers : rt->cpus > 0 ? rt->cpus : 1;
    /* The groups (runtime_internal.h) point at what they share. */
    rt->state.cfg = &rt->cfg;
    rt->state.ops = rt->ops;
    rt->dispatch.cfg = &rt->cfg;
    rt->dispatch.producers = &rt->producers;
    rt->dispatch.state = &rt->state;
    rt->dispatch.stats = &rt->stats;
    rt->dispatch.workers = rt->workers;
    rt->dispatch.cpus = rt->cpus;
    bool ok = mkrt__mutex_init(&rt->producers.producers_lock) == 0;
    ok &= mkrt__mutex_init(&rt->dispatch.state_lock) == 0;
    mkrt__waitq_init_symmetric(&rt->dispatch.work_wq);
    mkrt__spin_budget_init(&rt->dispatch.idle_spin);
    mkrt__spin_budget_init(&rt->dispatch.token_spin);
    mkrt__waitq_init_symmetric(&rt->dispatch.done_wq);
    ok = alloc_batch(&rt->dispatch.batch[0], cfg->max_batch) && alloc_batch(&rt->dispatch.batch[1], cfg->max_batch) && ok;
    rt->producers.slots = mkrt__alloc_zeroed(cfg->max_producers * sizeof *rt->producers.slots, alignof(mkrt_producer *));
    rt->state.cells_bytes = cbytes;
    rt->state.log_bytes = lbytes;
    rt->state.cells = mkrt__alloc_large_zeroed(cbytes, MKRT__PAGE_BYTES); /* read at random */
    rt->state.append_log = mkrt__alloc_zeroed(lbytes, MKRT__PAGE_BYTES);
    rt->state.emitq[MKRT_CLASS_BULK].ring =
        mkrt__alloc(mkrt__emit_ring_slots(cfg) * sizeof *rt->state.emitq[0].ring, MKRT_CACHE_LINE);
    atomic_init(&rt->dispatch.pending_root, UINT64_MAX);
    rt->dispatch.emit_root = UINT64_MAX;
    const mkrt__graph_host host = {rt, &rt->state, rt->state.cells, cfg->cells, rt->ops, cfg->max_batch,
                                   &rt->dispatch.aborting, &rt->dispatch.work_wq, &rt->dispatch.planner,
                                   &rt->state.changed, rt->workers == 1};
    rt->graph = rt->state.cells != NULL ? mkrt__graph_engine_create(&host) : NULL;
    /* The sources of work: the rings, then the graph engine, which also
     * claims RELAX's row of the op table. */
    mkrt__dispatch_sources_init(&rt->dispatch, &rt->state);
    if (rt->graph != NULL) {
        mkrt__graph_row_claim(rt->graph, &rt->ops[MKRT_OP_RELAX]);
        ok = mkrt__dispatch_source_add(&rt->dispatch, mkrt__graph_source(rt->graph)) && ok;
    }
    rt->dispatch.own_scratch = mkrt__dispatch_scratch_create(NULL);
    rt->dispatch.scratch = rt->dispatch.own_scratch;
    rt->dispatch.split = mkrt_barrier_scratch_create(cfg->max_batch, 0, NULL);
    rt->dispatch.waves = mkrt__alloc(cfg->max_batch * sizeof *rt->dispatch.waves, MKRT_CACHE_LINE);
    rt->state.dead = mkrt_mpmc_ring_create(cfg->dead_letter_capacity, NULL);
    ok = mkrt__planner_init(&rt->dispatch.planner, cfg->max_producers, plan_off) && ok;
    rt->dispatch.planner.max_age_ns = (uint64_t)cfg->class_max_age_us * 1000u;
    rt->dispatch.planner.slice_ns = (uint64_t)cfg->class_slice_us * 1000u;
    ok = mkrt__shape_cache_init(&rt->dispatch.shapes, MKRT__SHAPES_KEPT, NULL) && ok;
    if (!ok || !rt->producers.slots || !rt->state.cells || !rt->graph || !rt->state.append_log || !rt->state.emitq[MKRT_CLASS_BULK].ring || !rt->dispatch.own_scratch ||
        !rt->dispatch.split || !rt->dispatch.waves || !rt->state.dead) {
        free_runtime(rt);
        return mkrt__error_set(err, MKRT_ENOMEM,
                               "mkrt_create could not allocate its buffers (max_batch %zu, cells %u, "
                               "append log %zu). Fix: lower those sizes or free memory.",
                               cfg->max_batch, cfg->cells, cfg->append_log_capacity);
    }
    if ((st = start_backends(rt, err)) != MKRT_OK) {
        free_runtime(rt);
        return st;
    }
    if (mkrt__thread_start(&rt->dispatcher, mkrt__dispatcher_main, &rt->dispatch) != 0) {
        stop_backends(rt);
        free_runtime(rt);
        return mkrt__error_set(err, MKRT_ENOMEM,
                               "mkrt_create could not start the dispatcher thread. Fix: raise the "
                               "thread limit.");
    }
    *out = rt;
    return MKRT_OK;
}


mkrt_status mkrt_destroy(mkrt_runtime *rt, uint64_t timeout_ns, mkrt_error *err)
{
    if (rt == NULL)
        return MKRT_OK;
    /* seq_cst: the store half of the handshake with owner_enter (store
     * closing, load state here; fetch_or state, load closing there). */
    atomic_store(&rt->producers.closing, true);
#ifdef MKRT_TEST_HOOKS
    /* acquire: pairs with the release store in mkrt__runtime_destroy_hold. */
    while (atomic_load_explicit(&rt->dispatch.hooks.destroy_held, memory_order_acquire))
        sched_yield();
#endif
    /* Producer rings refuse new items from here on; a push that overlapped
     * the close is either refused or in the ring, and the drain below
     * takes it. */
    mkrt__mutex_lock(&rt->producers.producers_lock);
    for (uint32_t s = 0; s < rt->cfg.max_producers; s++) {
        mkrt_producer *p = atomic_load_explicit(&rt->producers.slots[s], memory_order_relaxed);
        if (p != NULL)
            mkrt_spsc_ring_close(p->ring);
    }
    mkrt__mutex_unlock(&rt->producers.producers_lock);
    mkrt__waitq_notify(&rt->dispatch.work_wq);
    /* Wait for publishers and closers still inside (a closed ring wakes any
     * that sleep on it), so the drain target below covers everything they
     * published. Producers are retired only by the dispatcher, under the
     * lock, so a slot's producer stays valid while we look at it. */
    for (uint32_t s = 0; s < rt->cfg.max_producers; s++) {
        mkrt__mutex_lock(&rt->producers.producers_lock);
        mkrt_producer *p = atomic_load_explicit(&rt->producers.slots[s], memory_order_relaxed);
        /* seq_cst: the load half of the handshake with owner_enter. */
        while (p != NULL && (atomic_load(&p->state) & MKRT__PRODUCER_BUSY)) {
            mkrt__mutex_unlock(&rt->producers.producers_lock);
            sched_yield();
            mkrt__mutex_lock(&rt->producers.producers_lock);
            p = atomic_load_explicit(&rt->producers.slots[s], memory_order_relaxed);
        }
        mkrt__mutex_unlock(&rt->producers.producers_lock);
    }
    /* Only now may the dispatcher stop: a publish that entered before
     * closing may still have been about to push when the dispatcher found
     * the rings empty (its push then lands in a ring nobody drains, an
     * acknowledged item lost). release: pairs with the acquire load in the
     * dispatcher's shutdown check, which then sees every push those
     * publishes made (their owner_leave released them to the loads of
     * state above). */
    atomic_store_explicit(&rt->producers.sealed, true, memory_order_release);
    mkrt__waitq_notify(&rt->dispatch.work_wq);
    mkrt_status st = mkrt_quiesce(rt, timeout_ns); /* what was published and what it emits */
    if (st != MKRT_OK) {
        atomic_store_explicit(&rt->dispatch.aborting, true, memory_order_release);
        mkrt__waitq_notify(&rt->dispatch.work_wq);
    }
    mkrt__thread_join(rt->dispatcher);
    bool device_stopped = stop_backends(rt); /* before the cells they write are freed */
    /* Producers still in their slots (the dispatcher has stopped: nobody
     * else retires them now). A closed one is ours to free once its closer
     * has left; an open one becomes an orphan, by a CAS that succeeds only
     * while its owner is outside every call (waiters leave: the dispatcher
     * has stopped), and its owner frees it in mkrt_producer_close. After
     * the CAS we never touch it again. */
    for (uint32_t s = 0; s < rt->cfg.max_producers; s++) {
        mkrt_producer *p = atomic_load_explicit(&rt->producers.slots[s], memory_order_relaxed);
        if (p == NULL)
            continue;
        for (;;) {
            uint32_t state = atomic_load(&p->state); /* seq_cst: see owner_enter */
            if (state & (MKRT__PRODUCER_BUSY | MKRT__PRODUCER_WAITING)) {
                mkrt__waitq_notify(&rt->dispatch.done_wq);
                sched_yield();
                continue;
            }
            if (state == MKRT__PRODUCER_CLOSED) {
                mkrt__producer_free(p);
                break;
            }
            if (atomic_compare_exchange_strong(&p->state, &state, MKRT__PRODUCER_ORPHANED))
                break;
        }
    }
    uint64_t failed = atomic_load_explicit(&rt->stats.failed, memory_order_relaxed);
    free_runtime(rt);
    if (st != MKRT_OK)
        return mkrt__error_set(err, MKRT_ETIMEDOUT,
                               "mkrt_destroy timed out after %llu ns; the items that had not started "
                               "went to the error path (%llu failed in all). Fix: drain before "
                               "destroying or allow more time.",
                               (unsigned long long)timeout_ns, (unsigned long long)failed);
    if (!device_stopped)
        return mkrt__error_set(err, MKRT_EDEVICE,
                               "mkrt_destroy: the CUDA megakernel did not stop (an op that never "
                               "returns); its memory and the runtime's cells stay allocated. Fix: "
                               "look for the op that hangs; restart the process to free the GPU.");
    return MKRT_OK;
}


const char *mkrt_backend_describe(mkrt_runtime *rt)
{
    if (rt == NULL)
        return "no runtime: mkrt_backend_describe got NULL (Fix: pass the runtime from mkrt_create)";
    /* acquire: pairs with the release in backend_failed (dispatcher.c),
     * after which backend_failure is complete and never written again. */
    if (atomic_load_explicit(&rt->dispatch.backend_failed, memory_order_acquire))
        return rt->dispatch.backend_failure;
    return rt->backend_desc;
}
