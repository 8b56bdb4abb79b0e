/* SPDX-License-Identifier: BSD-2-Clause */
/* src/runtime/runtime.c - the public runtime API: lifecycle, ops, producers,
 * publishing, fences, drain, stats. */
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <unistd.h>

#include "base/cpus.h"
#include "base/error_internal.h"
#include "base/spin_wait.h"
#include "runtime/runtime_internal.h"
#include "queue/spsc_wait.h"
#include "backend/cpu_pool.h"
#include "backend/megakernel_backend.h"

mkrt_config mkrt_config_default(void)
{
    mkrt_config c;
    memset(&c, 0, sizeof c);
    c.backend = MKRT_BACKEND_AUTO;
    c.workers = 0;
    c.ring_capacity = 16384;
    c.max_batch = 65536;
    c.max_producers = 64;
    c.burst_per_ring = 1024;
    c.device_memory_budget = 0;
    c.watchdog_ms = 5000;
    c.cells = 1u << 20;
    c.append_log_capacity = 1u << 20;
    c.dead_letter_capacity = 4096;
    c.device_idle_us = 1000;
    c.device_resident_us = 10000;
    c.emit_capacity = 65536;
    return c;
}

static bool pow2(size_t v)
{
    return v >= 2 && (v & (v - 1)) == 0;
}

/* Cells and the APPEND log may be registered with the CUDA driver, which
 * pins whole pages: give them pages of their own. */
#define PAGE_BYTES 4096u

/* count x size rounded up to whole pages (at least one), or false when
 * that does not fit in size_t. */
static bool page_bytes(size_t count, size_t size, size_t *out)
{
    size_t b;
    if (!mkrt__mul_size(count, size, &b) || !mkrt__add_size(b, PAGE_BYTES - 1, &b))
        return false;
    b = b / PAGE_BYTES * PAGE_BYTES;
    *out = b ? b : PAGE_BYTES;
    return true;
}

#define RANGE_FIX(field, value, lo, hi, fix)                                                     \
    mkrt__error_set(err, MKRT_EINVAL, "mkrt_config." field " %llu is outside %llu..%llu. Fix: " fix, \
                    (unsigned long long)(value), (unsigned long long)(lo), (unsigned long long)(hi))

/* Every field against its documented range (runtime.h), and every size
 * computed from the fields with checked arithmetic. */
static mkrt_status check_config(const mkrt_config *c, size_t *cells_bytes, size_t *log_bytes,
                                mkrt_error *err)
{
    if ((unsigned)c->backend > MKRT_BACKEND_SIM)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_config.backend %d is not an mkrt_backend_kind. Fix: use "
                               "MKRT_BACKEND_AUTO.",
                               (int)c->backend);
    if (!pow2(c->ring_capacity) || c->ring_capacity > MKRT_RING_CAPACITY_MAX)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_config.ring_capacity %zu is not a power of two in 2..%zu. Fix: "
                               "use 4096 (the default) or another power of two.",
                               c->ring_capacity, (size_t)MKRT_RING_CAPACITY_MAX);
    if (c->max_batch == 0 || c->max_batch > MKRT_CONFIG_MAX_BATCH_MAX)
        return RANGE_FIX("max_batch", c->max_batch, 1, MKRT_CONFIG_MAX_BATCH_MAX,
                         "use 65536 (the default).");
    if (c->max_producers == 0 || c->max_producers > MKRT_CONFIG_PRODUCERS_MAX)
        return RANGE_FIX("max_producers", c->max_producers, 1, MKRT_CONFIG_PRODUCERS_MAX,
                         "use 64 (the default).");
    if (c->burst_per_ring == 0 || c->burst_per_ring > MKRT_CONFIG_MAX_BATCH_MAX)
        return RANGE_FIX("burst_per_ring", c->burst_per_ring, 1, MKRT_CONFIG_MAX_BATCH_MAX,
                         "use 1024 (the default); 0 would never drain a ring.");
    if (c->workers > MKRT_CONFIG_WORKERS_MAX)
        return RANGE_FIX("workers", c->workers, 0, MKRT_CONFIG_WORKERS_MAX,
                         "use 0 for one per CPU.");
    if (c->cells == 0 || c->cells > MKRT_CONFIG_CELLS_MAX)
        return RANGE_FIX("cells", c->cells, 1, MKRT_CONFIG_CELLS_MAX,
                         "give the runtime at least one cell and at most the maximum.");
    if (c->append_log_capacity > MKRT_CONFIG_APPEND_LOG_MAX)
        return RANGE_FIX("append_log_capacity", c->append_log_capacity, 0, MKRT_CONFIG_APPEND_LOG_MAX,
                         "use 1 << 20 (the default) and consume the log with "
                         "mkrt_append_log_consume as you go.");
    if (!pow2(c->dead_letter_capacity) || c->dead_letter_capacity > MKRT_CONFIG_DEAD_LETTERS_MAX)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_config.dead_letter_capacity %zu is not a power of two in 2..%zu. "
                               "Fix: use 4096 (the default).",
                               c->dead_letter_capacity, (size_t)MKRT_CONFIG_DEAD_LETTERS_MAX);
    if (c->emit_capacity > MKRT_CONFIG_EMIT_MAX)
        return RANGE_FIX("emit_capacity", c->emit_capacity, 0, MKRT_CONFIG_EMIT_MAX,
                         "use 65536 (the default), or more for ops that emit much per batch.");
    if (c->cuda_max_blocks > MKRT_CONFIG_CUDA_BLOCKS_MAX)
        return RANGE_FIX("cuda_max_blocks", c->cuda_max_blocks, 0, MKRT_CONFIG_CUDA_BLOCKS_MAX,
                         "use 0 to size the grid by occupancy.");
    if (c->cuda_blocks_per_sm > MKRT_CONFIG_CUDA_BLOCKS_MAX)
        return RANGE_FIX("cuda_blocks_per_sm", c->cuda_blocks_per_sm, 0, MKRT_CONFIG_CUDA_BLOCKS_MAX,
                         "use 0 for the occupancy API's maximum.");
    if (c->cuda_device_state > 1)
        return RANGE_FIX("cuda_device_state", c->cuda_device_state, 0, 1,
                         "use 0 (host-mapped) or 1 (device memory).");
    if (c->device_idle_us > MKRT_CONFIG_DEVICE_US_MAX)
        return RANGE_FIX("device_idle_us", c->device_idle_us, 0, MKRT_CONFIG_DEVICE_US_MAX,
                         "use 1000 (the default), or 0 to keep the megakernel resident.");
    if (c->device_resident_us > MKRT_CONFIG_DEVICE_US_MAX)
        return RANGE_FIX("device_resident_us", c->device_resident_us, 0, MKRT_CONFIG_DEVICE_US_MAX,
                         "use 10000 (the default), or 0 never to leave while busy.");
    if (c->cuda_user_ptx == NULL && c->cuda_user_ptx_size != 0)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_config.cuda_user_ptx_size is %zu but cuda_user_ptx is NULL. Fix: "
                               "set both, or neither.",
                               c->cuda_user_ptx_size);
    if (c->cuda_user_ptx_size > MKRT_CONFIG_CUDA_PTX_MAX)
        return RANGE_FIX("cuda_user_ptx_size", c->cuda_user_ptx_size, 0, MKRT_CONFIG_CUDA_PTX_MAX,
                         "link fewer user ops.");
    if (!page_bytes(c->cells, sizeof(uint64_t), cells_bytes) ||
        !page_bytes(c->append_log_capacity, sizeof(uint64_t), log_bytes))
        return mkrt__error_set(err, MKRT_EOVERFLOW,
                               "mkrt_config.cells %u or append_log_capacity %zu needs more bytes than "
                               "this machine can address. Fix: lower them.",
                               c->cells, c->append_log_capacity);
    return MKRT_OK;
}

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
        free_batch(&rt->batch[i], rt->cfg.max_batch);
    mkrt__free(rt->slots, rt->cfg.max_producers * sizeof *rt->slots);
    mkrt__free(rt->cells, rt->cells_bytes);
    mkrt__free((void *)rt->append_log, rt->log_bytes);
    mkrt__free(rt->emit_ring, mkrt__emit_ring_slots(&rt->cfg) * sizeof *rt->emit_ring);
    mkrt__free((void *)rt->frontier, 3 * rt->frontier_words * sizeof *rt->frontier);
    mkrt_layer_scratch_destroy(rt->layering);
    mkrt_barrier_scratch_destroy(rt->split);
    mkrt__free(rt->waves, rt->cfg.max_batch * sizeof *rt->waves);
    if (rt->plans != NULL)
        mkrt_plan_cache_destroy(rt->plans);
    mkrt_mpmc_ring_destroy(rt->dead);
    mkrt__mutex_destroy(&rt->producers_lock);
    mkrt__mutex_destroy(&rt->state_lock);
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
    if (cfg->backend == MKRT_BACKEND_SIM)
        st = mkrt__megakernel_start(rt, MKRT_BACKEND_SIM, &device, err);
    else if (cfg->backend == MKRT_BACKEND_CUDA || cfg->backend == MKRT_BACKEND_AUTO)
        st = mkrt__megakernel_start(rt, MKRT_BACKEND_CUDA, &device, &why);
    if (st != MKRT_OK && cfg->backend == MKRT_BACKEND_CUDA)
        return mkrt__error_set(err, MKRT_EDEVICE,
                               "CUDA backend requested but unusable: %s (Or use MKRT_BACKEND_AUTO, "
                               "which falls back to the CPU.)",
                               why.message);
    if (st != MKRT_OK && cfg->backend == MKRT_BACKEND_SIM)
        return st;
    if ((st = mkrt__cpu_pool_start(rt, rt->workers, (uint32_t)cfg->max_batch, &cpu, err)) != MKRT_OK) {
        if (device != NULL && !device->ops->stop(device, 5000000000u)) {
            rt->cells = NULL; /* a GPU that would not stop keeps them */
            rt->append_log = NULL;
        }
        return st;
    }
    if (device != NULL)
        rt->backends[rt->nbackends++] = device;
    rt->backends[rt->nbackends++] = cpu;
    rt->cpu_only = mkrt__backends_device(rt->backends, rt->nbackends) == NULL;
    rt->device_state = device != NULL && device->ops->state_in != NULL;
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
    mkrt__backend *device = mkrt__backends_device(rt->backends, rt->nbackends);
    device->ops->describe(device, dev, sizeof dev);
    snprintf(rt->backend_desc, sizeof rt->backend_desc,
             "%.*s; watchdog %u ms; batches with ops the device lacks on %u CPU workers",
             (int)(sizeof rt->backend_desc - 96), dev, rt->cfg.watchdog_ms, rt->workers);
}

/* Stops the backends; a GPU kernel that would not stop keeps the cells
 * and the log (they are leaked rather than freed under it). */
static bool stop_backends(mkrt_runtime *rt)
{
    uint64_t limit = rt->cfg.watchdog_ms ? (uint64_t)rt->cfg.watchdog_ms * 1000000u : 5000000000u;
    bool stopped = true;
    for (uint32_t i = 0; i < rt->nbackends; i++)
        stopped &= rt->backends[i]->ops->stop(rt->backends[i], limit);
    if (!stopped) {
        rt->cells = NULL;
        rt->append_log = NULL;
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
    mkrt_status st = check_config(cfg, &cbytes, &lbytes, err);
    if (st != MKRT_OK)
        return st;
    mkrt_runtime *rt = mkrt__alloc_zeroed(sizeof *rt, alignof(mkrt_runtime));
    if (rt == NULL)
        return mkrt__error_set(err, MKRT_ENOMEM, "mkrt_create could not allocate the runtime (%zu "
                                                 "bytes). Fix: free memory.",
                               sizeof *rt);
    rt->cfg = *cfg;
    /* The default leaves one of the process's CPUs to the dispatcher; the
     * plan narrows a batch further while producers are busy (batch_planner.c). */
    rt->cpus = mkrt__cpus_available();
    rt->workers = cfg->workers ? cfg->workers : rt->cpus > 1 ? rt->cpus - 1 : 1;
    bool ok = mkrt__mutex_init(&rt->producers_lock) == 0;
    ok &= mkrt__mutex_init(&rt->state_lock) == 0;
    mkrt__waitq_init_symmetric(&rt->work_wq);
    mkrt__spin_budget_init(&rt->idle_spin);
    mkrt__spin_budget_init(&rt->token_spin);
    mkrt__waitq_init_symmetric(&rt->done_wq);
    ok = alloc_batch(&rt->batch[0], cfg->max_batch) && alloc_batch(&rt->batch[1], cfg->max_batch) && ok;
    rt->slots = mkrt__alloc_zeroed(cfg->max_producers * sizeof *rt->slots, alignof(mkrt_producer *));
    rt->cells_bytes = cbytes;
    rt->log_bytes = lbytes;
    rt->cells = mkrt__alloc_zeroed(cbytes, PAGE_BYTES);
    rt->append_log = mkrt__alloc_zeroed(lbytes, PAGE_BYTES);
    rt->emit_ring = mkrt__alloc(mkrt__emit_ring_slots(cfg) * sizeof *rt->emit_ring, MKRT_CACHE_LINE);
    atomic_init(&rt->pending_root, UINT64_MAX);
    rt->emit_root = UINT64_MAX;
    rt->expand_chunk = cfg->max_batch < MKRT__EXPAND_CHUNK_MAX ? (uint32_t)cfg->max_batch : MKRT__EXPAND_CHUNK_MAX;
    rt->layering = mkrt_layer_scratch_create(NULL);
    rt->split = mkrt_barrier_scratch_create(cfg->max_batch, 0, NULL);
    rt->waves = mkrt__alloc(cfg->max_batch * sizeof *rt->waves, MKRT_CACHE_LINE);
    rt->dead = mkrt_mpmc_ring_create(cfg->dead_letter_capacity, NULL);
    mkrt_plan_cache_config pc = mkrt_plan_cache_config_default();
    if (mkrt_plan_cache_create(&pc, &rt->plans, NULL) != MKRT_OK)
        rt->plans = NULL;
    if (!ok || !rt->slots || !rt->cells || !rt->append_log || !rt->emit_ring || !rt->layering ||
        !rt->split || !rt->waves || !rt->dead || !rt->plans) {
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
    if (mkrt__thread_start(&rt->dispatcher, mkrt__dispatcher_main, rt) != 0) {
        stop_backends(rt);
        free_runtime(rt);
        return mkrt__error_set(err, MKRT_ENOMEM,
                               "mkrt_create could not start the dispatcher thread. Fix: raise the "
                               "thread limit.");
    }
    *out = rt;
    return MKRT_OK;
}

mkrt_status mkrt_op_register(mkrt_runtime *rt, uint32_t op, const mkrt_op_desc *desc, mkrt_error *err)
{
    if (rt == NULL)
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_op_register got a NULL runtime. Fix: pass the "
                                                 "runtime from mkrt_create.");
    if (op < MKRT_OP_USER_FIRST || op >= MKRT_OP_MAX)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "op %u cannot be registered: user ops are numbered %u..%u (0..%u are "
                               "built in). Fix: pick a number in the user range.",
                               op, MKRT_OP_USER_FIRST, MKRT_OP_MAX - 1, MKRT_OP_USER_FIRST - 1);
    if (desc == NULL || desc->fn == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "op %u has no %s. Fix: pass an mkrt_op_desc with fn set.", op,
                               desc == NULL ? "descriptor (desc is NULL)" : "function (fn is NULL)");
    if (desc->pulls && !(desc->expands && desc->commutes))
        return mkrt__error_set(err, MKRT_EINVAL,
                               "op %u asks to be pulled but does not %s. Fix: set expands and "
                               "commutes with pulls, or leave pulls false.",
                               op, desc->expands ? "commute (commutes is false)" : "expand (expands is false)");
    mkrt_frontier_wave envelope = {desc->frontier_bytes, desc->scratch_bytes, desc->output_bytes};
    uint64_t fused;
    if (mkrt_frontier_fused_wave_bytes(&envelope, &fused, NULL) != MKRT_OK)
        fused = UINT64_MAX; /* never fits a budget: refused at admission */
    /* Under the lock that mkrt_producer_open freezes the table with: the
     * dispatcher reads an entry only for items of a producer opened after
     * (the slot's release store orders this write before its reads). */
    mkrt__mutex_lock(&rt->producers_lock);
    if (rt->ops_frozen) {
        mkrt__mutex_unlock(&rt->producers_lock);
        return mkrt__error_set(err, MKRT_EINVAL,
                               "op %u registered after the first producer was opened. Fix: register "
                               "every op right after mkrt_create.",
                               op);
    }
    uint32_t slot = rt->ops[op].fn != NULL ? rt->ops[op].expand_slot : 0;
    if (desc->expands && slot == 0) {
        if (rt->slots_used == MKRT_OP_EXPANDING_MAX) {
            mkrt__mutex_unlock(&rt->producers_lock);
            return mkrt__error_set(err, MKRT_EINVAL,
                                   "op %u cannot expand: %u user ops already do (the most there "
                                   "may be). Fix: let one op expand and tell cases apart by param.",
                                   op, MKRT_OP_EXPANDING_MAX);
        }
        slot = ++rt->slots_used;
        rt->slot_op[slot] = op;
    }
    rt->ops[op] = (mkrt__op_entry){desc->fn, desc->user, envelope, fused, desc->name, desc->device,
                                   desc->idempotent, desc->commutes, desc->expands ? slot : 0,
                                   desc->pulls};
    mkrt__mutex_unlock(&rt->producers_lock);
    return MKRT_OK;
}

static mkrt_producer *open_refused(mkrt_error *err, mkrt_status st, const char *why)
{
    mkrt__error_set(err, st, "mkrt_producer_open: %s", why);
    return NULL;
}

mkrt_producer *mkrt_producer_open(mkrt_runtime *rt, mkrt_error *err)
{
    if (rt == NULL)
        return open_refused(err, MKRT_EINVAL, "the runtime is NULL. Fix: pass the runtime from "
                                              "mkrt_create.");
    if (atomic_load_explicit(&rt->closing, memory_order_acquire))
        return open_refused(err, MKRT_ECLOSED, "mkrt_destroy began. Fix: open producers before "
                                               "shutting down.");
    mkrt_producer *p = mkrt__alloc_zeroed(sizeof *p, alignof(mkrt_producer));
    mkrt_spsc_ring *ring = mkrt_spsc_ring_create(rt->cfg.ring_capacity, NULL);
    mkrt_spsc_ring *stamps = mkrt_spsc_ring_create(256, NULL);
    if (p == NULL || ring == NULL || stamps == NULL) {
        mkrt__free(p, sizeof *p);
        mkrt_spsc_ring_destroy(ring);
        mkrt_spsc_ring_destroy(stamps);
        mkrt__error_set(err, MKRT_ENOMEM,
                        "mkrt_producer_open could not allocate a %zu-item ring. Fix: lower "
                        "ring_capacity or free memory.",
                        rt->cfg.ring_capacity);
        return NULL;
    }
    p->rt = rt;
    p->ring = ring;
    p->stamps = stamps;
    mkrt__spin_budget_init(&p->room_spin);
    /* A closed producer keeps its slot until the dispatcher retires it
     * (once its items completed): a full table with closed producers in it
     * waits for that, up to RETIRE_WAIT_NS, rather than refusing an open
     * that follows a close. */
    const uint64_t RETIRE_WAIT_NS = 2000000000u;
    uint64_t waited_since = 0;
    uint32_t slot, retiring;
    bool closing, locked;
    for (;;) {
        mkrt__mutex_lock(&rt->producers_lock);
        locked = true;
        slot = rt->cfg.max_producers;
        retiring = 0;
        for (uint32_t s = 0; s < rt->cfg.max_producers; s++) {
            mkrt_producer *q = atomic_load_explicit(&rt->slots[s], memory_order_relaxed);
            if (q == NULL) {
                slot = s;
                break;
            }
            /* Under producers_lock the dispatcher cannot free q (it
             * clears the slot under the lock first). relaxed: a stale
             * OPEN only means one more look. */
            retiring += (atomic_load_explicit(&q->state, memory_order_relaxed) & MKRT__PRODUCER_LIFE) ==
                        MKRT__PRODUCER_CLOSED;
        }
        /* acquire: pairs with the release store of closing in mkrt_destroy,
         * which closes the rings of the producers in the slots under this
         * lock: a producer added after that would have an open ring. */
        closing = atomic_load_explicit(&rt->closing, memory_order_acquire);
        if (slot < rt->cfg.max_producers || closing || retiring == 0)
            break;
        mkrt__mutex_unlock(&rt->producers_lock);
        locked = false;
        uint64_t now = mkrt__now_ns();
        if (waited_since == 0)
            waited_since = now;
        else if (now - waited_since > RETIRE_WAIT_NS)
            break;
        mkrt__waitq_notify(&rt->work_wq); /* the dispatcher retires closed producers */
        mkrt__thread_sleep_ns(100000);
    }
    if (slot == rt->cfg.max_producers || closing) {
        if (locked)
            mkrt__mutex_unlock(&rt->producers_lock);
        mkrt__producer_free(p);
        if (closing)
            return open_refused(err, MKRT_ECLOSED, "mkrt_destroy began. Fix: open producers "
                                                   "before shutting down.");
        mkrt__error_set(err, MKRT_EAGAIN,
                        "all %u producer slots are in use (%u of them by closed producers whose "
                        "items had not completed after %llu ms). Fix: close a producer or raise "
                        "mkrt_config.max_producers.",
                        rt->cfg.max_producers, retiring,
                        (unsigned long long)(RETIRE_WAIT_NS / 1000000u));
        return NULL;
    }
    /* Only a successful open freezes the op table and takes an id. */
    rt->ops_frozen = true;
    p->slot = slot;
    p->id = rt->next_producer_id++;
    atomic_fetch_add_explicit(&rt->producers_open, 1, memory_order_relaxed);
    /* release: pairs with the dispatcher's acquire load of the slot. */
    atomic_store_explicit(&rt->slots[slot], p, memory_order_release);
    mkrt__mutex_unlock(&rt->producers_lock);
    return p;
}

void mkrt__producer_free(mkrt_producer *p)
{
    mkrt_spsc_ring_destroy(p->ring);
    mkrt_spsc_ring_destroy(p->stamps);
    mkrt__free(p, sizeof *p);
}

/* The owner enters a call that touches the runtime: BUSY is set (seq_cst,
 * against mkrt_destroy's store of closing and loads of state, see
 * runtime_internal.h). False when the producer is orphaned or the runtime
 * is closing: the caller has left again and must not touch the runtime. */
static bool owner_enter(mkrt_producer *p, uint32_t bit, bool refuse_closing)
{
    uint32_t s = atomic_fetch_or(&p->state, bit);
    if ((s & MKRT__PRODUCER_LIFE) == MKRT__PRODUCER_ORPHANED ||
        (refuse_closing && atomic_load(&p->rt->closing))) {
        /* release: pairs with destroy's loads of state; nothing touched. */
        atomic_fetch_and_explicit(&p->state, ~bit, memory_order_release);
        return false;
    }
    return true;
}

/* The owner's last touch of the runtime in this call is behind it. */
static void owner_leave(mkrt_producer *p, uint32_t bit)
{
    /* release: pairs with the loads of state in mkrt_destroy and the
     * dispatcher, which may free the runtime or the producer after. */
    atomic_fetch_and_explicit(&p->state, ~bit, memory_order_release);
}

void mkrt_producer_close(mkrt_producer *p)
{
    if (p == NULL)
        return;
    /* seq_cst: against mkrt_destroy's CAS OPEN -> ORPHANED. BUSY is held
     * across the notify, the last touch of the runtime. */
    uint32_t expect = MKRT__PRODUCER_OPEN;
    if (atomic_compare_exchange_strong(&p->state, &expect,
                                       MKRT__PRODUCER_CLOSED | MKRT__PRODUCER_BUSY)) {
        mkrt__waitq_notify(&p->rt->work_wq); /* the runtime retires it once drained */
        owner_leave(p, MKRT__PRODUCER_BUSY); /* p may be freed from here on */
        return;
    }
    /* Orphaned by mkrt_destroy, which never looks at p again: ours to free. */
    mkrt__producer_free(p);
}

mkrt_status mkrt_publish_some(mkrt_producer *p, const mkrt_item *items, size_t n,
                              uint64_t timeout_ns, size_t *published, mkrt_error *err)
{
    size_t dummy;
    size_t *done = published ? published : &dummy;
    *done = 0;
    if (p == NULL || (n > 0 && items == NULL))
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_publish got a NULL producer or items for %zu "
                                                 "item(s). Fix: pass valid pointers.",
                               n);
    if (!owner_enter(p, MKRT__PRODUCER_BUSY, true)) {
        bool orphan = (atomic_load_explicit(&p->state, memory_order_relaxed) & MKRT__PRODUCER_LIFE) ==
                      MKRT__PRODUCER_ORPHANED; /* relaxed: only the message depends on it */
        return mkrt__error_set(err, MKRT_ECLOSED,
                               "mkrt_publish of %zu item(s) after mkrt_destroy %s; nothing was "
                               "published. Fix: finish publishing before shutting down.",
                               n, orphan ? "returned" : "began");
    }
    mkrt_runtime *rt = p->rt;
    /* Push what fits, tell the dispatcher, and only then wait for room:
     * a producer must never sleep on a full ring the dispatcher does not
     * know about. */
    mkrt_status st = MKRT_OK;
    struct timespec tsbuf;
    const struct timespec *deadline = NULL;
    bool have_deadline = false;
    while (*done < n) {
        size_t k = mkrt_spsc_ring_push(p->ring, items + *done, n - *done);
        if (k > 0) {
            *done += k;
            /* relaxed: only this thread writes published; readers (fence,
             * stats, the dispatcher after close) get it through their own
             * edges. */
            uint64_t total = atomic_load_explicit(&p->published, memory_order_relaxed) + k;
            atomic_store_explicit(&p->published, total, memory_order_relaxed);
            /* release: pairs with the acquire loads of published_total in
             * drain and in the dispatcher's shutdown check. */
            atomic_fetch_add_explicit(&rt->published_total, k, memory_order_release);
            uint64_t now = mkrt__now_ns();
            mkrt_item stamp = {(uint32_t)total, (uint32_t)(total >> 32), (uint32_t)now,
                               (uint32_t)(now >> 32)};
            (void)mkrt_spsc_ring_push(p->stamps, &stamp, 1); /* a sample; skipped when full */
            mkrt__waitq_notify(&rt->work_wq);
            continue;
        }
        if (timeout_ns == 0) {
            st = mkrt_spsc_ring_is_closed(p->ring) ? MKRT_ECLOSED : MKRT_ETIMEDOUT;
            break;
        }
        if (!have_deadline) {
            deadline = mkrt__deadline(timeout_ns, &tsbuf);
            have_deadline = true;
        }
        /* The dispatcher frees room within a batch's time: spin for it
         * (never past the timeout) while every producer and the
         * dispatcher can have a CPU (relaxed: a count read as a hint). */
        uint32_t open = atomic_load_explicit(&rt->producers_open, memory_order_relaxed);
        st = mkrt__spsc_ring_wait_space(p->ring, &p->room_spin, rt->cpus > open ? timeout_ns : 0, deadline);
        if (st != MKRT_OK)
            break;
    }
    size_t ring_capacity = rt->cfg.ring_capacity; /* for the message below */
    owner_leave(p, MKRT__PRODUCER_BUSY);          /* this call's last touch of the runtime */
    if (st == MKRT_ECLOSED)
        return mkrt__error_set(err, MKRT_ECLOSED,
                               "mkrt_publish: the runtime closed after %zu of %zu item(s) were "
                               "published. Fix: finish publishing before shutting down.",
                               *done, n);
    if (st == MKRT_ETIMEDOUT)
        return mkrt__error_set(err, MKRT_ETIMEDOUT,
                               "mkrt_publish timed out after %zu of %zu item(s): the producer ring "
                               "(%zu items) stayed full. Fix: wait longer, raise ring_capacity, or "
                               "publish with mkrt_try_publish and back off.",
                               *done, n, ring_capacity);
    return st;
}

mkrt_status mkrt_publish(mkrt_producer *p, const mkrt_item *items, size_t n, uint64_t timeout_ns,
                         mkrt_error *err)
{
    return mkrt_publish_some(p, items, n, timeout_ns, NULL, err);
}

size_t mkrt_try_publish(mkrt_producer *p, const mkrt_item *items, size_t n)
{
    size_t done = 0;
    mkrt_publish_some(p, items, n, 0, &done, NULL);
    return done;
}

mkrt_status mkrt_fence(mkrt_producer *p, uint64_t *ticket)
{
    if (p == NULL || ticket == NULL)
        return MKRT_EINVAL;
    /* relaxed: the owner's own view; an orphan has everything it will get. */
    if ((atomic_load_explicit(&p->state, memory_order_relaxed) & MKRT__PRODUCER_LIFE) ==
        MKRT__PRODUCER_ORPHANED)
        return MKRT_ECLOSED;
    /* relaxed: this thread is the only writer of published. */
    *ticket = atomic_load_explicit(&p->published, memory_order_relaxed);
    return MKRT_OK;
}

/* counter >= target. acquire: pairs with the release stores in the
 * complete stage. */
static bool reached(_Atomic uint64_t *counter, uint64_t target)
{
    return atomic_load_explicit(counter, memory_order_acquire) >= target;
}

/* The deadline of a wait of timeout_ns from now (CLOCK_MONOTONIC ns,
 * UINT64_MAX: none), and as a timespec in *ts (NULL: none). */
static uint64_t deadline_ns(uint64_t timeout_ns, struct timespec *ts, const struct timespec **deadline)
{
    *deadline = NULL;
    if (timeout_ns == MKRT_TIMEOUT_INFINITE)
        return UINT64_MAX;
    uint64_t now = mkrt__now_ns(), until = now + timeout_ns;
    if (until < now || until == UINT64_MAX)
        return UINT64_MAX; /* saturates: for ever */
    ts->tv_sec = (time_t)(until / 1000000000u);
    ts->tv_nsec = (long)(until % 1000000000u);
    *deadline = ts;
    return until;
}

/* Waits until reached(): spins a little, runs pending batches itself while
 * the dispatcher is idle (mkrt__dispatch_help, which keeps to the
 * deadline: it returns after the op it runs when the deadline passes),
 * then sleeps on done_wq. The deadline is fixed on entry, so time spent
 * helping counts. */
static mkrt_status wait_loop(mkrt_runtime *rt, _Atomic uint64_t *counter, uint64_t target,
                             uint64_t timeout_ns)
{
    if (reached(counter, target))
        return MKRT_OK;
    struct timespec ts;
    const struct timespec *deadline = NULL;
    const uint64_t until = timeout_ns == 0 ? 0 : deadline_ns(timeout_ns, &ts, &deadline);
    /* On one CPU, spinning only delays the thread it waits for. */
    const unsigned spins = rt->cpus > 1 ? 256 : 0;
    for (unsigned spin = 0; spin < spins && timeout_ns != 0; spin++) {
        /* A completion is often microseconds away: look before sleeping. */
        if (reached(counter, target))
            return MKRT_OK;
        /* The dispatcher is idle (its token is free): run what is pending
         * here rather than wait for it to wake (pipeline/dispatcher.c). */
        if (mkrt__dispatch_help(rt, counter, target, until))
            continue;
        mkrt__cpu_relax();
    }
    for (;;) {
        if (reached(counter, target))
            return MKRT_OK;
        if (atomic_load_explicit(&rt->stopped, memory_order_acquire))
            return reached(counter, target) ? MKRT_OK : MKRT_ECLOSED;
        if (timeout_ns == 0)
            return MKRT_ETIMEDOUT;
        if (mkrt__dispatch_help(rt, counter, target, until))
            continue;
        uint32_t e = mkrt__waitq_prepare(&rt->done_wq);
        if (reached(counter, target) || atomic_load_explicit(&rt->stopped, memory_order_acquire)) {
            mkrt__waitq_finish(&rt->done_wq);
            continue;
        }
        mkrt_status st = mkrt__waitq_sleep(&rt->done_wq, e, deadline);
        mkrt__waitq_finish(&rt->done_wq);
        if (st == MKRT_ETIMEDOUT)
            return reached(counter, target) ? MKRT_OK : MKRT_ETIMEDOUT;
    }
}

static mkrt_status wait_until(mkrt_runtime *rt, _Atomic uint64_t *counter, uint64_t target,
                              uint64_t timeout_ns)
{
    /* relaxed: a count the plan stage reads as a hint (batch_planner.c). */
    atomic_fetch_add_explicit(&rt->waiting, 1, memory_order_relaxed);
    mkrt_status st = wait_loop(rt, counter, target, timeout_ns);
    atomic_fetch_sub_explicit(&rt->waiting, 1, memory_order_relaxed); /* as above */
    return st;
}

mkrt_status mkrt_wait(mkrt_producer *p, uint64_t ticket, uint64_t timeout_ns)
{
    if (p == NULL)
        return MKRT_EINVAL;
    /* relaxed: only this (the owner's) thread writes published. A ticket
     * above it was never issued and would never complete. */
    if (ticket > atomic_load_explicit(&p->published, memory_order_relaxed))
        return MKRT_EINVAL;
    if (!owner_enter(p, MKRT__PRODUCER_WAITING, false))
        return MKRT_ECLOSED;
    mkrt_status st = wait_until(p->rt, &p->completed, ticket, timeout_ns);
    owner_leave(p, MKRT__PRODUCER_WAITING);
    return st;
}

static mkrt_status wait_producers(mkrt_runtime *rt, uint64_t timeout_ns);

/* What is left of timeout_ns since start (0: none given or infinite). */
static uint64_t time_left(uint64_t start, uint64_t timeout_ns)
{
    if (start == 0)
        return timeout_ns;
    uint64_t spent = mkrt__now_ns() - start;
    return spent < timeout_ns ? timeout_ns - spent : 0;
}

/* The totals first (the fast path: spinning, helping), then each producer:
 * the totals alone can be fooled by a racing publish whose item completed
 * before an older one (see wait_producers). */
mkrt_status mkrt_drain(mkrt_runtime *rt, uint64_t timeout_ns)
{
    if (rt == NULL)
        return MKRT_EINVAL;
    uint64_t start = timeout_ns != 0 && timeout_ns != MKRT_TIMEOUT_INFINITE ? mkrt__now_ns() : 0;
    /* acquire: pairs with the release increments in mkrt_publish_some. */
    uint64_t target = atomic_load_explicit(&rt->published_total, memory_order_acquire);
    mkrt_status st = wait_until(rt, &rt->completed_total, target, timeout_ns);
    return st != MKRT_OK ? st : wait_producers(rt, time_left(start, timeout_ns));
}

/* Whether the producer in slot s (p, with id; looked at earlier) completed
 * target items, or is gone (retired only once all its items completed).
 * Under producers_lock, which the dispatcher retires producers under, so
 * p is alive while the slot still holds it (the id tells a producer that
 * reuses p's memory apart). */
static bool producer_caught_up(mkrt_runtime *rt, uint32_t s, const mkrt_producer *p, uint32_t id,
                               uint64_t target)
{
    mkrt__mutex_lock(&rt->producers_lock);
    /* relaxed: the slot is written under the lock held here. acquire:
     * pairs with the release store of completed in the complete stage. */
    bool done = atomic_load_explicit(&rt->slots[s], memory_order_relaxed) != p || p->id != id ||
                atomic_load_explicit(&p->completed, memory_order_acquire) >= target;
    mkrt__mutex_unlock(&rt->producers_lock);
    return done;
}

/* Waits until every producer completed what it had published when looked
 * at (each producer's own counters: the runtime-wide published_total may
 * lag an item that a racing publish already pushed and the dispatcher
 * completed, so comparing the totals could count that item for an older
 * one that has not run). */
static mkrt_status wait_producers(mkrt_runtime *rt, uint64_t timeout_ns)
{
    struct timespec ts;
    const struct timespec *deadline = NULL;
    const uint64_t until = timeout_ns == 0 ? 0 : deadline_ns(timeout_ns, &ts, &deadline);
    /* What helping runs up to (the totals: a bound for the helper only;
     * the producers' own counters decide). acquire: pairs with the
     * release increments in mkrt_publish_some. */
    const uint64_t total = atomic_load_explicit(&rt->published_total, memory_order_acquire);
    for (uint32_t s = 0; s < rt->cfg.max_producers; s++) {
        mkrt__mutex_lock(&rt->producers_lock);
        mkrt_producer *p = atomic_load_explicit(&rt->slots[s], memory_order_relaxed); /* under the lock */
        uint32_t id = p != NULL ? p->id : 0;
        /* relaxed: written by the producer only; a publish that happens
         * before this call is seen (coherence). */
        uint64_t target = p != NULL ? atomic_load_explicit(&p->published, memory_order_relaxed) : 0;
        mkrt__mutex_unlock(&rt->producers_lock);
        while (p != NULL && !producer_caught_up(rt, s, p, id, target)) {
            /* acquire: pairs with the dispatcher's release store of stopped. */
            if (atomic_load_explicit(&rt->stopped, memory_order_acquire))
                return MKRT_ECLOSED;
            if (timeout_ns == 0)
                return MKRT_ETIMEDOUT;
            /* Runs pending batches (or finishes one a helper left) while
             * the dispatcher is idle, as wait_loop does. */
            if (mkrt__dispatch_help(rt, &rt->completed_total, total, until))
                continue;
            uint32_t e = mkrt__waitq_prepare(&rt->done_wq);
            if (!producer_caught_up(rt, s, p, id, target) &&
                mkrt__waitq_sleep(&rt->done_wq, e, deadline) == MKRT_ETIMEDOUT &&
                !producer_caught_up(rt, s, p, id, target)) {
                mkrt__waitq_finish(&rt->done_wq);
                return MKRT_ETIMEDOUT;
            }
            mkrt__waitq_finish(&rt->done_wq);
        }
    }
    return MKRT_OK;
}

/* Quiescent for a snapshot (docs/design.md, runtime_internal.h): first
 * everything published before the call completed (per producer,
 * wait_producers); its batches are numbered S or less (S: completed_seq
 * then), and so is the root of everything they emitted, transitively.
 * Then quiesce_target is raised to S, which (while this call waits) stops
 * the drain from taking new items from the rings while work rooted at S
 * or below is pending, and the call waits until pending_root passes S.
 * Both waits keep to the caller's deadline (helping included). */
mkrt_status mkrt_quiesce(mkrt_runtime *rt, uint64_t timeout_ns)
{
    if (rt == NULL)
        return MKRT_EINVAL;
    uint64_t start = timeout_ns != 0 && timeout_ns != MKRT_TIMEOUT_INFINITE ? mkrt__now_ns() : 0;
    mkrt_status st = wait_producers(rt, timeout_ns);
    if (st != MKRT_OK)
        return st;
    /* acquire: pairs with the release store in publish_roots (complete.c),
     * made before the producers' completions that wait_producers acquired:
     * S covers their batches, and pending_root is as recent. */
    uint64_t snap = atomic_load_explicit(&rt->completed_seq, memory_order_acquire);
    /* relaxed: the dispatcher reads the target at each drain; a late look
     * only delays the stop of new items, and the wait below is exact. */
    uint64_t t = atomic_load_explicit(&rt->quiesce_target, memory_order_relaxed);
    while (t < snap && !atomic_compare_exchange_weak_explicit(&rt->quiesce_target, &t, snap,
                                                              memory_order_relaxed, memory_order_relaxed))
        ;
    atomic_fetch_add_explicit(&rt->quiescing, 1, memory_order_relaxed); /* relaxed: as the target */
    st = wait_until(rt, &rt->pending_root, snap + 1, time_left(start, timeout_ns));
    atomic_fetch_sub_explicit(&rt->quiescing, 1, memory_order_relaxed); /* as above */
    return st;
}

mkrt_status mkrt_destroy(mkrt_runtime *rt, uint64_t timeout_ns, mkrt_error *err)
{
    if (rt == NULL)
        return MKRT_OK;
    /* seq_cst: the store half of the handshake with owner_enter (store
     * closing, load state here; fetch_or state, load closing there). */
    atomic_store(&rt->closing, true);
#ifdef MKRT_TEST_HOOKS
    /* acquire: pairs with the release store in mkrt__runtime_destroy_hold. */
    while (atomic_load_explicit(&rt->destroy_held, memory_order_acquire))
        sched_yield();
#endif
    /* Producer rings refuse new items from here on; a push that overlapped
     * the close is either refused or in the ring, and the drain below
     * takes it. */
    mkrt__mutex_lock(&rt->producers_lock);
    for (uint32_t s = 0; s < rt->cfg.max_producers; s++) {
        mkrt_producer *p = atomic_load_explicit(&rt->slots[s], memory_order_relaxed);
        if (p != NULL)
            mkrt_spsc_ring_close(p->ring);
    }
    mkrt__mutex_unlock(&rt->producers_lock);
    mkrt__waitq_notify(&rt->work_wq);
    /* Wait for publishers and closers still inside (a closed ring wakes any
     * that sleep on it), so the drain target below covers everything they
     * published. Producers are retired only by the dispatcher, under the
     * lock, so a slot's producer stays valid while we look at it. */
    for (uint32_t s = 0; s < rt->cfg.max_producers; s++) {
        mkrt__mutex_lock(&rt->producers_lock);
        mkrt_producer *p = atomic_load_explicit(&rt->slots[s], memory_order_relaxed);
        /* seq_cst: the load half of the handshake with owner_enter. */
        while (p != NULL && (atomic_load(&p->state) & MKRT__PRODUCER_BUSY)) {
            mkrt__mutex_unlock(&rt->producers_lock);
            sched_yield();
            mkrt__mutex_lock(&rt->producers_lock);
            p = atomic_load_explicit(&rt->slots[s], memory_order_relaxed);
        }
        mkrt__mutex_unlock(&rt->producers_lock);
    }
    /* Only now may the dispatcher stop: a publish that entered before
     * closing may still have been about to push when the dispatcher found
     * the rings empty (its push then lands in a ring nobody drains, an
     * acknowledged item lost). release: pairs with the acquire load in the
     * dispatcher's shutdown check, which then sees every push those
     * publishes made (their owner_leave released them to the loads of
     * state above). */
    atomic_store_explicit(&rt->sealed, true, memory_order_release);
    mkrt__waitq_notify(&rt->work_wq);
    mkrt_status st = mkrt_quiesce(rt, timeout_ns); /* what was published and what it emits */
    if (st != MKRT_OK) {
        atomic_store_explicit(&rt->aborting, true, memory_order_release);
        mkrt__waitq_notify(&rt->work_wq);
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
        mkrt_producer *p = atomic_load_explicit(&rt->slots[s], memory_order_relaxed);
        if (p == NULL)
            continue;
        for (;;) {
            uint32_t state = atomic_load(&p->state); /* seq_cst: see owner_enter */
            if (state & (MKRT__PRODUCER_BUSY | MKRT__PRODUCER_WAITING)) {
                mkrt__waitq_notify(&rt->done_wq);
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
    uint64_t failed = atomic_load_explicit(&rt->failed, memory_order_relaxed);
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

mkrt_status mkrt_stats_read(mkrt_runtime *rt, mkrt_stats *out)
{
    if (rt == NULL || out == NULL)
        return MKRT_EINVAL;
    mkrt_stats s;
    memset(&s, 0, sizeof s);
    /* acquire: completed_total first, so the counters below include at
     * least every batch it counts. */
    (void)atomic_load_explicit(&rt->completed_total, memory_order_acquire);
    s.published = atomic_load_explicit(&rt->published_total, memory_order_relaxed);
    s.executed = atomic_load_explicit(&rt->executed, memory_order_relaxed);
    s.pruned = atomic_load_explicit(&rt->pruned, memory_order_relaxed);
    s.failed = atomic_load_explicit(&rt->failed, memory_order_relaxed);
    s.batches = atomic_load_explicit(&rt->batches, memory_order_relaxed);
    s.layers = atomic_load_explicit(&rt->layers, memory_order_relaxed);
    s.global_barriers = atomic_load_explicit(&rt->barriers, memory_order_relaxed);
    s.ring_high_water = atomic_load_explicit(&rt->high_water, memory_order_relaxed);
    s.dead_letters_dropped = atomic_load_explicit(&rt->dead_dropped, memory_order_relaxed);
    mkrt_plan_cache_stats pc;
    mkrt_plan_cache_stats_read(rt->plans, &pc);
    s.plan_cache_hits = pc.hits;
    s.plan_cache_misses = pc.misses;
    s.latency_samples = atomic_load_explicit(&rt->latency.samples, memory_order_relaxed);
    s.latency_p50_ns = mkrt__hist_percentile(&rt->latency, 5000);
    s.latency_p99_ns = mkrt__hist_percentile(&rt->latency, 9900);
    s.latency_p999_ns = mkrt__hist_percentile(&rt->latency, 9990);
    s.producers_open = atomic_load_explicit(&rt->producers_open, memory_order_relaxed);
    s.workers = rt->workers;
    /* acquire: pairs with the release in backend_failed (dispatcher.c). */
    bool failed = atomic_load_explicit(&rt->backend_failed, memory_order_acquire);
    mkrt__backend *device = mkrt__backends_device(rt->backends, rt->nbackends);
    s.backend = (device != NULL && !failed ? device : mkrt__backends_cpu_pool(rt->backends, rt->nbackends))->name;
    s.backend_detail = mkrt_backend_describe(rt);
    s.device_batches = atomic_load_explicit(&rt->device_batches, memory_order_relaxed);
    s.device_failures = atomic_load_explicit(&rt->device_failures, memory_order_relaxed);
    s.emitted = atomic_load_explicit(&rt->emitted_total, memory_order_relaxed);
    s.changed = atomic_load_explicit(&rt->changed, memory_order_relaxed);
    *out = s;
    return MKRT_OK;
}

size_t mkrt_stats_producers(mkrt_runtime *rt, mkrt_producer_stats *out, size_t max)
{
    size_t n = 0;
    if (rt == NULL || (out == NULL && max > 0))
        return 0;
    mkrt__mutex_lock(&rt->producers_lock);
    for (uint32_t s = 0; s < rt->cfg.max_producers && n < max; s++) {
        mkrt_producer *p = atomic_load_explicit(&rt->slots[s], memory_order_relaxed);
        if (p == NULL)
            continue;
        /* relaxed: statistics snapshots. */
        out[n++] = (mkrt_producer_stats){p->id, atomic_load_explicit(&p->published, memory_order_relaxed),
                                         atomic_load_explicit(&p->completed, memory_order_relaxed)};
    }
    mkrt__mutex_unlock(&rt->producers_lock);
    return n;
}

mkrt_status mkrt_cell_read(mkrt_runtime *rt, uint32_t handle, uint64_t *value)
{
    if (rt == NULL || value == NULL || handle >= rt->cfg.cells)
        return MKRT_EINVAL;
    if (rt->device_state)
        return mkrt__state_cells_read(rt, handle, 1, value);
    *value = rt->cells[handle];
    return MKRT_OK;
}

mkrt_status mkrt_cells_read(mkrt_runtime *rt, uint32_t first, size_t count, uint64_t *out)
{
    if (rt == NULL || (out == NULL && count > 0) || first > rt->cfg.cells
        || count > (size_t)(rt->cfg.cells - first))
        return MKRT_EINVAL;
    if (rt->device_state && count > 0)
        return mkrt__state_cells_read(rt, first, count, out);
    if (count > 0)
        memcpy(out, &rt->cells[first], count * sizeof *out);
    return MKRT_OK;
}

mkrt_status mkrt_cell_write(mkrt_runtime *rt, uint32_t handle, uint64_t value)
{
    if (rt == NULL || handle >= rt->cfg.cells)
        return MKRT_EINVAL;
    if (rt->device_state)
        return mkrt__state_cell_write(rt, handle, value);
    rt->cells[handle] = value;
    return MKRT_OK;
}

/* The log's readers. Entries below append_done are complete (the
 * dispatcher's release store after their batch) and stay put until a
 * consumer moves append_consumed past them; only then may admission let a
 * later APPEND reuse their slot. Slots are read with relaxed loads (a slow
 * reader may race a reuse), then an acquire fence, then append_consumed
 * again: a slot reused under the reader was written by a release store
 * that happens after the consumer's CAS moved append_consumed past it, so
 * the fence makes that move visible and the reader retries. */
static size_t log_window(mkrt_runtime *rt, uint64_t *from)
{
    /* acquire: pairs with the release CAS of a consumer (first) and the
     * dispatcher's release store of append_done (second). */
    *from = atomic_load_explicit(&rt->append_consumed, memory_order_acquire);
    uint64_t done = atomic_load_explicit(&rt->append_done, memory_order_acquire);
    return (size_t)(done - *from);
}

static uint64_t log_slot(mkrt__log_reader *r, uint64_t position)
{
    if (r->at != NULL)
        return mkrt__state_log_word(r, position); /* an explicit copy from the device */
    /* relaxed: validated by the callers' fence and re-check (see above). */
    return atomic_load_explicit(&r->rt->append_log[position % r->rt->cfg.append_log_capacity],
                                memory_order_relaxed);
}

size_t mkrt_append_log_read(mkrt_runtime *rt, uint32_t handle, uint32_t *out, size_t max)
{
    if (rt == NULL || (out == NULL && max > 0))
        return 0;
    mkrt__log_reader r;
    mkrt__state_log_begin(rt, &r); /* holds the state where it is (device state only) */
    for (;;) {
        uint64_t from;
        r.n = 0; /* words copied in an earlier try may be stale */
        size_t len = log_window(rt, &from), n = 0;
        for (size_t i = 0; i < len; i++) {
            uint64_t w = log_slot(&r, from + i);
            if ((uint32_t)w != handle)
                continue;
            if (n < max)
                out[n] = (uint32_t)(w >> 32);
            n++;
        }
        atomic_thread_fence(memory_order_acquire); /* see log_window's comment */
        /* relaxed: ordered after the slot loads by the fence above. */
        if (atomic_load_explicit(&rt->append_consumed, memory_order_relaxed) == from) {
            mkrt__state_log_end(&r);
            return r.failed ? 0 : n;
        }
    }
}

size_t mkrt_append_log_consume(mkrt_runtime *rt, mkrt_append_entry *out, size_t max)
{
    if (rt == NULL || (out == NULL && max > 0))
        return 0;
    mkrt__log_reader r;
    mkrt__state_log_begin(rt, &r);
    for (;;) {
        uint64_t from;
        r.n = 0;
        size_t len = log_window(rt, &from);
        size_t k = len < max ? len : max;
        if (k == 0 || r.failed) {
            mkrt__state_log_end(&r);
            return 0;
        }
        for (size_t i = 0; i < k; i++) {
            uint64_t w = log_slot(&r, from + i);
            out[i] = (mkrt_append_entry){(uint32_t)w, (uint32_t)(w >> 32)};
        }
        atomic_thread_fence(memory_order_acquire); /* see log_window's comment */
        /* release: pairs with the acquire load of append_consumed in the
         * dispatcher's admission: the slots are read before they are
         * handed out again. Failure: another consumer took them; retry. */
        uint64_t expect = from;
        if (!r.failed && atomic_compare_exchange_strong_explicit(&rt->append_consumed, &expect, from + k,
                                                                 memory_order_release,
                                                                 memory_order_relaxed)) {
            mkrt__state_log_end(&r);
            return k;
        }
    }
}

size_t mkrt_dead_letters_pop(mkrt_runtime *rt, mkrt_item *out, size_t max)
{
    if (rt == NULL || (out == NULL && max > 0))
        return 0;
    return mkrt_mpmc_ring_pop(rt->dead, out, max);
}

const char *mkrt_backend_describe(mkrt_runtime *rt)
{
    if (rt == NULL)
        return "no runtime: mkrt_backend_describe got NULL (Fix: pass the runtime from mkrt_create)";
    /* acquire: pairs with the release in backend_failed (dispatcher.c),
     * after which backend_failure is complete and never written again. */
    if (atomic_load_explicit(&rt->backend_failed, memory_order_acquire))
        return rt->backend_failure;
    return rt->backend_desc;
}
