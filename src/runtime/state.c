/* SPDX-License-Identifier: BSD-2-Clause */
/* src/runtime/state.c - what the application reads: stats, cells, the
 * APPEND log, dead letters. */
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

mkrt_status mkrt_stats_read(mkrt_runtime *rt, mkrt_stats *out)
{
    if (rt == NULL || out == NULL)
        return MKRT_EINVAL;
    mkrt_stats s;
    memset(&s, 0, sizeof s);
    /* acquire: completed_total first, so the counters below include at
     * least every batch it counts. The outcomes before what they came
     * from (emitted and published, read last): the dispatcher adds a
     * batch's emitted items before its outcomes and a producer counts
     * its items as it pushes them, so a live read that took the supply
     * first would lag the outcomes by every batch completed meanwhile. */
    (void)atomic_load_explicit(&rt->dispatch.completed_total, memory_order_acquire);
    s.executed = atomic_load_explicit(&rt->stats.executed, memory_order_relaxed);
    s.pruned = atomic_load_explicit(&rt->stats.pruned, memory_order_relaxed);
    s.failed = atomic_load_explicit(&rt->stats.failed, memory_order_relaxed);
    s.batches = atomic_load_explicit(&rt->stats.batches, memory_order_relaxed);
    s.layers = atomic_load_explicit(&rt->stats.layers, memory_order_relaxed);
    s.global_barriers = atomic_load_explicit(&rt->stats.barriers, memory_order_relaxed);
    s.ring_high_water = atomic_load_explicit(&rt->stats.high_water, memory_order_relaxed);
    s.dead_letters_dropped = atomic_load_explicit(&rt->stats.dead_dropped, memory_order_relaxed);
    /* The path's plan cache (plan/shape_cache.h): one lookup per
     * levelled batch. */
    s.plan_cache_hits = atomic_load_explicit(&rt->dispatch.shapes.hits, memory_order_relaxed);
    s.plan_cache_misses = atomic_load_explicit(&rt->dispatch.shapes.misses, memory_order_relaxed);
    s.latency_samples = atomic_load_explicit(&rt->stats.latency.samples, memory_order_relaxed);
    s.latency_p50_ns = mkrt__hist_percentile(&rt->stats.latency, 5000);
    s.latency_p99_ns = mkrt__hist_percentile(&rt->stats.latency, 9900);
    s.latency_p999_ns = mkrt__hist_percentile(&rt->stats.latency, 9990);
    s.producers_open = atomic_load_explicit(&rt->producers.producers_open, memory_order_relaxed);
    s.workers = rt->workers;
    /* acquire: pairs with the release in backend_failed (dispatcher.c). */
    bool failed = atomic_load_explicit(&rt->dispatch.backend_failed, memory_order_acquire);
    mkrt__backend *device = mkrt__backends_device(rt->dispatch.backends, rt->dispatch.nbackends);
    s.backend = (device != NULL && !failed ? device : mkrt__backends_cpu_pool(rt->dispatch.backends, rt->dispatch.nbackends))->name;
    s.backend_detail = mkrt_backend_describe(rt);
    s.device_batches = atomic_load_explicit(&rt->stats.device_batches, memory_order_relaxed);
    s.device_failures = atomic_load_explicit(&rt->stats.device_failures, memory_order_relaxed);
    s.changed = atomic_load_explicit(&rt->state.changed, memory_order_relaxed);
    for (size_t i = 0; i < MKRT_PLAN_COUNTERS; i++)
        s.plan_counts[i] = atomic_load_explicit(&rt->dispatch.planner.n[i], memory_order_relaxed);
    mkrt__graph_counters gc;
    mkrt__graph_counters_read(rt->graph, &gc);
    s.levels_pushed = gc.levels_pushed;
    s.levels_pulled = gc.levels_pulled;
    s.edges_examined = gc.edges_examined;
    s.units_run = atomic_load_explicit(&rt->state.units_run, memory_order_relaxed);
    s.units_by_planner = atomic_load_explicit(&rt->state.units_by_planner, memory_order_relaxed);
    s.emitted = atomic_load_explicit(&rt->state.emitted_total, memory_order_relaxed);
    s.published = atomic_load_explicit(&rt->producers.published_total, memory_order_relaxed);
    *out = s;
    return MKRT_OK;
}

size_t mkrt_stats_producers(mkrt_runtime *rt, mkrt_producer_stats *out, size_t max)
{
    size_t n = 0;
    if (rt == NULL || (out == NULL && max > 0))
        return 0;
    mkrt__mutex_lock(&rt->producers.producers_lock);
    for (uint32_t s = 0; s < rt->cfg.max_producers && n < max; s++) {
        mkrt_producer *p = atomic_load_explicit(&rt->producers.slots[s], memory_order_relaxed);
        if (p == NULL)
            continue;
        /* relaxed: statistics snapshots. */
        out[n++] = (mkrt_producer_stats){p->id, atomic_load_explicit(&p->published, memory_order_relaxed),
                                         atomic_load_explicit(&p->completed, memory_order_relaxed)};
    }
    mkrt__mutex_unlock(&rt->producers.producers_lock);
    return n;
}

mkrt_status mkrt_cell_read(mkrt_runtime *rt, uint32_t handle, uint64_t *value)
{
    if (rt == NULL || value == NULL || handle >= rt->cfg.cells)
        return MKRT_EINVAL;
    if (rt->dispatch.device_state)
        return mkrt__state_cells_read(&rt->dispatch, handle, 1, value);
    *value = rt->state.cells[handle];
    return MKRT_OK;
}

mkrt_status mkrt_cells_read(mkrt_runtime *rt, uint32_t first, size_t count, uint64_t *out)
{
    if (rt == NULL || (out == NULL && count > 0) || first > rt->cfg.cells
        || count > (size_t)(rt->cfg.cells - first))
        return MKRT_EINVAL;
    if (rt->dispatch.device_state && count > 0)
        return mkrt__state_cells_read(&rt->dispatch, first, count, out);
    if (count > 0)
        memcpy(out, &rt->state.cells[first], count * sizeof *out);
    return MKRT_OK;
}

mkrt_status mkrt_cell_write(mkrt_runtime *rt, uint32_t handle, uint64_t value)
{
    if (rt == NULL || handle >= rt->cfg.cells)
        return MKRT_EINVAL;
    if (rt->dispatch.device_state)
        return mkrt__state_cell_write(&rt->dispatch, handle, value);
    rt->state.cells[handle] = value;
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
    *from = atomic_load_explicit(&rt->state.append_consumed, memory_order_acquire);
    uint64_t done = atomic_load_explicit(&rt->state.append_done, memory_order_acquire);
    return (size_t)(done - *from);
}

static uint64_t log_slot(mkrt__log_reader *r, uint64_t position)
{
    if (r->at != NULL)
        return mkrt__state_log_word(r, position); /* an explicit copy from the device */
    /* relaxed: validated by the callers' fence and re-check (see above). */
    return atomic_load_explicit(&r->dp->state->append_log[position % r->dp->cfg->append_log_capacity],
                                memory_order_relaxed);
}

size_t mkrt_append_log_read(mkrt_runtime *rt, uint32_t handle, uint32_t *out, size_t max)
{
    if (rt == NULL || (out == NULL && max > 0))
        return 0;
    mkrt__log_reader r;
    mkrt__state_log_begin(&rt->dispatch, &r); /* holds the state where it is (device state only) */
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
        if (atomic_load_explicit(&rt->state.append_consumed, memory_order_relaxed) == from) {
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
    mkrt__state_log_begin(&rt->dispatch, &r);
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
        if (!r.failed && atomic_compare_exchange_strong_explicit(&rt->state.append_consumed, &expect, from + k,
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
    return mkrt_mpmc_ring_pop(rt->state.dead, out, max);
}
