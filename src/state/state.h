/* SPDX-License-Identifier: BSD-2-Clause */
/* src/state/state.h - the state group of the runtime: what the ops run
 * against (ops/op_exec.c, op_emit.c, the megakernel) and what the
 * application reads back: the cells, the APPEND log, the emission queue,
 * the dead letters. The runtime owns the op table; the group points at
 * it, so that the floors below the runtime reach it without the runtime
 * struct. */
#ifndef MKRT_STATE_STATE_H
#define MKRT_STATE_STATE_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/alloc_internal.h"
#include "mkrt/item.h"
#include "mkrt/ring.h"
#include "mkrt/runtime.h"

struct mkrt__op_entry; /* ops/op_table.h */
struct mkrt_graph;     /* mkrt/graph.h */

/* Latency classes (mkrt_class, mkrt/publish.h). */
#define MKRT__CLASSES 2u

/* An emission queue, a ring of emit_capacity items with positions that
 * grow for ever (slot = position % capacity):
 *   head <= tail <= claim <= limit.
 * head: the next emitted item to drain; tail: everything below was
 * emitted by a completed batch (both dispatcher-only); claim: positions
 * ops of the running batch took (CAS below limit = head at its launch +
 * capacity, so a claim never overwrites an item not yet drained). The
 * dispatcher drains [head, tail) while the next batch claims at tail and
 * above: they never share a slot. The interactive queue's ring is
 * allocated by the first mkrt_producer_set_class(INTERACTIVE) (NULL
 * until then: no interactive batch runs before). */
typedef struct mkrt__emitq {
    mkrt_item *ring;
    uint64_t head, tail, limit;
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t claim;
} mkrt__emitq;

typedef struct mkrt__state {
    const mkrt_config *cfg;                 /* the runtime's (constant after create) */
    const struct mkrt__op_entry *ops;       /* MKRT_OP_MAX entries, the runtime's table */
    /* The registered graph as the ops read it (mkrt_op_ctx.graph), NULL
     * until mkrt_graph_register, which sets it before the first producer
     * (whose open publishes it to the dispatcher and the workers). */
    const struct mkrt_graph *graph;
    uint64_t *cells;
    size_t cells_bytes, log_bytes;   /* allocation sizes (checked at create) */
    /* The APPEND log, a ring of append_log_capacity words (positions grow
     * for ever, slot = position % capacity):
     *   consumed <= done <= len, len - consumed <= capacity.
     * len: positions claimed by running APPENDs (workers, or the device);
     * done: everything below is complete (the dispatcher, after a batch);
     * consumed: everything below was taken by mkrt_append_log_consume.
     * Admission reserves room for a batch's APPENDs against consumed, so a
     * claimed position never overwrites an entry that is still in the log. */
    _Atomic uint64_t *append_log;
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t append_len;
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t append_done;
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t append_consumed;

    /* The emission queues (mkrt_op_emit), one per latency class
     * (mkrt_class: items inherit the class of the batch that emitted
     * them); the running batch's class is emit_class (written by the
     * dispatching thread before a launch, which publishes it). */
    mkrt__emitq emitq[MKRT__CLASSES];
    uint32_t emit_class;
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t changed; /* items that changed their output (stats) */
    /* The CPU pool's work (mkrt_stats.units_run, units_by_planner): items
     * of batches and parts of runs of levels, and of those the ones the
     * thread that planned them ran itself. Each thread adds its count
     * once per launch it took part in (backend/cpu_pool.c, units_flush). */
    _Atomic uint64_t units_run;
    _Atomic uint64_t units_by_planner;
    _Atomic uint64_t emitted_total; /* written by the dispatcher only (stats) */
    _Atomic uint64_t emitted_done;  /* emitted items completed (dispatcher only) */
    mkrt_mpmc_ring *dead;           /* dead letters: the dispatcher's, for the application */
    /* Device memory (backend/megakernel_backend.c): the bytes of the
     * runtime's data on the device (the graph and its frontier, the cells
     * and the log where they live in device memory; not the device's own
     * working buffers, taken at start), counted against
     * cfg->device_memory_budget by the split and admission; written by
     * the device backend at start and graph registration (relaxed: a
     * size, read as a number). budget_from_device: the budget is the
     * device's default (runtime/lifecycle.c), not the user's. */
    _Atomic uint64_t device_resident;
    bool budget_from_device;
} mkrt__state;

/* Dispatching thread, before a launch: the batch's ops (of class klass)
 * may emit into the free part of that class's queue, positions tail ..
 * head + capacity (the drain only takes from below tail meanwhile).
 * relaxed: published to the workers by the launch (release), or run on
 * this thread. */
static inline void mkrt__emit_open(mkrt__state *st, uint32_t klass)
{
    mkrt__emitq *q = &st->emitq[klass];
    st->emit_class = klass;
    q->limit = q->head + st->cfg->emit_capacity;
    atomic_store_explicit(&q->claim, q->tail, memory_order_relaxed);
}

/* Dispatching thread, after the batch completed: what it emitted can be
 * drained; returns how many. relaxed: the backend's completion, acquired
 * by its wait, orders the ops' claims and writes. */
static inline uint64_t mkrt__emit_close(mkrt__state *st)
{
    mkrt__emitq *q = &st->emitq[st->emit_class];
    uint64_t claimed = atomic_load_explicit(&q->claim, memory_order_relaxed), n = claimed - q->tail;
    q->tail = claimed;
    return n;
}

/* Slots allocated for the emission queue (at least one: capacity 0 is a
 * queue that refuses every emit). */
static inline size_t mkrt__emit_ring_slots(const mkrt_config *c)
{
    return c->emit_capacity ? c->emit_capacity : 1;
}

/* A relaxed load; each caller says why relaxed is enough there. */
static inline uint64_t mkrt__load_relaxed(_Atomic uint64_t *v)
{
    return atomic_load_explicit(v, memory_order_relaxed);
}

/* Adds to a counter only the dispatcher writes (a store, not an RMW);
 * relaxed: stats readers snapshot it and need no ordering with other data. */
static inline void mkrt__stat_add(_Atomic uint64_t *v, uint64_t d)
{
    atomic_store_explicit(v, mkrt__load_relaxed(v) + d, memory_order_relaxed);
}

#endif
