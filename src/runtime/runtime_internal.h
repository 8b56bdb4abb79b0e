/* SPDX-License-Identifier: BSD-2-Clause */
/* src/runtime/runtime_internal.h - the runtime's structures, shared by the API,
 * the dispatcher and the backends. */
#ifndef MKRT_SRC_RUNTIME_INTERNAL_H
#define MKRT_SRC_RUNTIME_INTERNAL_H

#include <stdalign.h>
#include <stdatomic.h>

#include "backend/backend.h"
#include "graph/engine.h"
#include "base/alloc_internal.h"
#include "base/thread.h"
#include "base/spin_wait.h"
#include "base/waitq.h"
#include "mkrt/barrier.h"
#include "mkrt/dedupe.h"
#include "mkrt/frontier.h"
#include "mkrt/graph.h"
#include "mkrt/layer.h"
#include "mkrt/plan_cache.h"
#include "mkrt/ring.h"
#include "mkrt/runtime.h"
#include "ops/builtin_ops.h"
#include "ops/op_table.h"
#include "pipeline/batch.h"
#include "runtime/latency_hist.h"

/* The producer's life, one word for both parties (owner and runtime):
 * the low bits say who frees it, MKRT__PRODUCER_BUSY says the owner is
 * inside a call that touches the runtime (publish, wait, close).
 *   OPEN -> CLOSED      mkrt_producer_close (CAS, BUSY held across its last
 *                       touch of the runtime); the runtime frees it (the
 *                       dispatcher once its items completed, or destroy).
 *   OPEN -> ORPHANED    mkrt_destroy, by a CAS that succeeds only while
 *                       BUSY is clear; after it destroy never touches the
 *                       producer again, and the owner frees it in close.
 * mkrt_wait sets WAITING the same way (it leaves when the dispatcher stops).
 * The owner sets BUSY with one fetch_or and backs out if the runtime is
 * closing or the producer orphaned; destroy waits for BUSY to clear before
 * it orphans. So exactly one party frees, and nobody reads freed memory. */
enum {
    MKRT__PRODUCER_OPEN = 0,
    MKRT__PRODUCER_CLOSED = 1,
    MKRT__PRODUCER_ORPHANED = 2,
    MKRT__PRODUCER_LIFE = 3,
    MKRT__PRODUCER_BUSY = 4,   /* publish or close inside: destroy waits before draining */
    MKRT__PRODUCER_WAITING = 8 /* mkrt_wait inside: leaves once the dispatcher stopped */
};

struct mkrt_producer {
    mkrt_runtime *rt;
    uint32_t id, slot;
    mkrt_spsc_ring *ring;   /* items, producer -> dispatcher */
    mkrt_spsc_ring *stamps; /* (sequence end, publish time) samples */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t published; /* written by the producer */
    _Atomic uint32_t state;  /* MKRT__PRODUCER_* life | BUSY */
    mkrt__spin_budget room_spin; /* the owner's spin for ring room (base/spin_wait.h) */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t completed; /* written by the dispatcher */
    uint64_t drained;      /* dispatcher-only */
    uint64_t high_water;   /* dispatcher-only */
};

struct mkrt_runtime {
    mkrt_config cfg;
    uint32_t workers;
    uint32_t cpus;   /* CPUs available to the process at create (base/cpus.h) */
    mkrt__op_entry ops[MKRT_OP_MAX]; /* written under producers_lock until frozen */
    bool ops_frozen;                 /* under producers_lock: a producer opened */
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

    /* The emission queue (mkrt_op_emit), a ring of emit_capacity items
     * with positions that grow for ever (slot = position % capacity):
     *   emit_head <= emit_tail <= emit_claim <= emit_limit.
     * head: the next emitted item to drain; tail: everything below was
     * emitted by a completed batch (both dispatcher-only); claim: positions
     * ops of the running batch took (CAS below limit = head at its launch
     * + capacity, so a claim never overwrites an item not yet drained).
     * The dispatcher drains [head, tail) while the next batch claims at
     * tail and above: they never share a slot. */
    mkrt_item *emit_ring;
    uint64_t emit_head, emit_tail, emit_limit;
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t emit_claim;
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t changed; /* items that changed their output (stats) */
    _Atomic uint64_t emitted_total; /* written by the dispatcher only (stats) */
    _Atomic uint64_t emitted_done;  /* emitted items completed (dispatcher only) */
    /* The graph engine (graph/engine.h): the registered graph and its
     * traversals, frontier rounds included. Created with the runtime. */
    struct mkrt__graph_engine *graph;
    bool batch_running;          /* dispatcher-only: a batch is launched and not finished */
    bool after_round;            /* dispatcher-only: the last batch drained was a frontier round */
    /* Quiescence by snapshot (mkrt_quiesce; docs/design.md): batches are
     * numbered in drain order (batch_seq, dispatcher-only) and each has a
     * root (batch.h): min(its number, emit_root when it was drained).
     * emit_root (dispatcher-only) is the oldest root of a completed batch
     * whose emissions may still wait (reset when none waits). pending_root
     * is the oldest root of all work not completed (the emissions, the
     * drained and the running batch), UINT64_MAX when none: it only grows,
     * and is published with completed_seq (the number of the last batch
     * completed) at every completion. quiesce_target is the highest
     * completed_seq a quiesce waited past, quiescing the calls waiting now:
     * while one waits and work rooted at or below the target is pending,
     * the drain takes no new items from the rings, so that work (finite:
     * emission chains end) cannot grow with new load. Only while one
     * waits: ops whose emission chains end only once other work is taken
     * in (an MPI rank's ops re-emit while its outbox is full, and the
     * outbox drains when other ranks take in what it sends) make progress
     * between the calls. */
    uint64_t batch_seq, emit_root;
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t pending_root;
    _Atomic uint64_t completed_seq;
    _Atomic uint64_t quiesce_target;
    _Atomic uint32_t quiescing;

    mkrt__mutex producers_lock;
    _Atomic(mkrt_producer *) *slots; /* max_producers */
    _Atomic uint32_t producers_open;
    uint32_t next_producer_id;

    _Atomic bool closing;  /* no new publishes */
    _Atomic bool sealed;   /* closing, and no publish is inside any more: the
                            * dispatcher may stop once everything completed */
    _Atomic bool aborting; /* destroy timed out: fail what has not started */
    _Atomic bool stopped;  /* dispatcher has exited */
#ifdef MKRT_TEST_HOOKS
    /* Test hooks (test builds only; test_hooks.c). Each flag is stored
     * with release by its setter and loaded with acquire by the thread
     * that acts on it. */
    _Atomic bool held;     /* the dispatcher parks between batches */
    _Atomic bool parked;   /* ... and says so here */
    _Atomic bool destroy_held; /* mkrt_destroy waits after setting closing,
                                * before it closes the rings */
#endif

    alignas(MKRT_CACHE_LINE) mkrt__waitq work_wq; /* the dispatcher sleeps here */
    alignas(MKRT_CACHE_LINE) mkrt__waitq done_wq; /* fence and drain waiters sleep here */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t published_total;
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t completed_total;

    /* Written by the dispatcher only; read by stats. */
    _Atomic uint64_t executed, pruned, failed, batches, layers, barriers, high_water;
    _Atomic uint64_t dead_dropped;
    mkrt__latency_hist latency;

    mkrt__thread dispatcher;
    /* The dispatch token (pipeline/dispatcher.c): whoever holds it runs the
     * dispatcher's loop, the dispatcher thread or a helping waiter
     * (mkrt_wait, mkrt_drain); everything marked dispatcher-only belongs to
     * the holder. 0: free (the dispatcher is idle). */
    alignas(MKRT_CACHE_LINE) _Atomic uint32_t dispatch_token;
    /* Emitted work (mkrt__emission_pending) left when the token was last
     * given back: what the idle dispatcher reads instead of the holder's
     * dispatcher-only emission state, which it must not touch without the
     * token. Written by the holder in token_give. */
    _Atomic bool emission_left;
    /* A batch left running or drained (running, drained) when the token
     * was last given back: a helper that reached its deadline leaves them
     * to the dispatcher. Written by the holder in token_give. */
    _Atomic bool batch_left;
    /* threads inside mkrt_wait or mkrt_drain; its own line: every wait
     * writes it, and waiters read the token above while they spin */
    alignas(MKRT_CACHE_LINE) _Atomic uint32_t waiting;
#ifdef MKRT_TEST_HOOKS
    _Atomic bool dozing;      /* test hook: the dispatcher parks without the token */
#endif
    mkrt__batch *running;     /* dispatcher-only: the batch in flight, or NULL */
    mkrt__batch *drained;     /* dispatcher-only: drained and prepared, not launched, or NULL */
    unsigned cur;             /* dispatcher-only: the batch the next drain fills */
    /* dispatcher-only: a waiter holds the token. Its drain leaves closed
     * producers to the dispatcher thread, which reads the rings without the
     * token (mkrt__rings_empty, while idle) and so must be the one that
     * frees them. */
    bool helping;
    /* The backends the plan stage routes to, in order of preference: the
     * megakernel device when there is one, then the CPU pool, which
     * accepts every batch and never fails. Which is which: is_cpu_pool
     * (backend.h), never the position. */
    mkrt__backend *backends[2];
    uint32_t nbackends; /* fixed at create */
    /* No device among the backends (set at create from is_cpu_pool, then
     * constant): what mkrt__dispatch_help asks, because a waiter may run
     * it while destroy stops and frees the backends. */
    bool cpu_only;
    _Atomic uint64_t device_batches, device_failures; /* batches run on, failures of the device */
    _Atomic bool backend_failed; /* set once, after backend_failure is written */
    /* Where the cells and the APPEND log live: NULL, the host arrays above;
     * else the backend whose device memory holds them (backend.h,
     * state_in). Moved by the dispatcher (mkrt__state_move) under
     * state_lock, which the application's reads and writes of the state
     * also take while device_state is set (constant after create). */
    mkrt__backend *_Atomic state_at;
    bool device_state;
    bool state_lost;   /* dispatcher-only: a device's state could not come home */
    mkrt__mutex state_lock;
    char backend_failure[MKRT_ERROR_MESSAGE_MAX + 96];
    /* Stage scratch, dispatcher-only, sized at create. */
    mkrt_layer_scratch *layering;
    mkrt_barrier_scratch *split;  /* the frontier planner's scratch */
    mkrt_frontier_wave *waves;    /* max_batch: one layer's items as waves */
    mkrt_plan_cache *plans;
    mkrt__batch batch[2];
    uint32_t rr;             /* round-robin start */
    /* The dispatcher thread's spin budgets (base/spin_wait.h): idle, for
     * work; and for the token back from a helping waiter. */
    mkrt__spin_budget idle_spin, token_spin;
    mkrt_mpmc_ring *dead;
#ifdef MKRT_TEST_HOOKS
    /* Test hook: the plan of the last batch that ran (written by the
     * complete stage before it publishes completion; read after a drain). */
    struct {
        mkrt__batch_plan plan; /* participants points into the batch: use the copy */
        uint32_t participants[8];
        size_t layers, items;
        bool layered; /* exec was moved into layer order (the place stage) */
    } last_plan;
#endif
    char backend_desc[MKRT_ERROR_MESSAGE_MAX + 288];
};

int mkrt__dispatcher_main(void *rt);
/* Writes backend_desc for a runtime with a device (mkrt__backends_device): at
 * create, and again when the device's description changes (the graph). */
void mkrt__runtime_describe_device(struct mkrt_runtime *rt);
/* Dispatcher thread: makes `to` hold the state before it runs a batch
 * (to == NULL or a backend without state_in, or failed: the host arrays).
 * Returns NULL, or the backend that failed (err says why): `to` when it
 * could not take the state in, or the device that held it when its state
 * could not be copied out (a sticky fault: the host arrays keep what the
 * last copy brought; the state moves home all the same). */
mkrt__backend *mkrt__state_move(struct mkrt_runtime *rt, mkrt__backend *to, mkrt_error *err);
/* The application's accesses to the state, where it lives (device_state
 * runtimes only; the others touch the host arrays directly). */
mkrt_status mkrt__state_cells_read(struct mkrt_runtime *rt, uint32_t first, size_t count, uint64_t *out);
mkrt_status mkrt__state_cell_write(struct mkrt_runtime *rt, uint32_t handle, uint64_t value);
/* A reader of the APPEND log's ring: between begin and end the state
 * stays where it is (state_lock, device_state runtimes only); at is the
 * device that holds it (NULL: read the host ring), words are copied from
 * it a chunk at a time. failed: a copy failed (the read returns nothing). */
typedef struct mkrt__log_reader {
    struct mkrt_runtime *rt;
    mkrt__backend *at;
    uint64_t base;   /* position of words[0] */
    size_t n;        /* words held */
    bool failed;
    uint64_t words[128];
} mkrt__log_reader;
void mkrt__state_log_begin(struct mkrt_runtime *rt, mkrt__log_reader *r);
uint64_t mkrt__state_log_word(mkrt__log_reader *r, uint64_t position);
void mkrt__state_log_end(mkrt__log_reader *r);

/* Slots allocated for the emission queue (at least one: capacity 0 is a
 * queue that refuses every emit). */
static inline size_t mkrt__emit_ring_slots(const mkrt_config *c)
{
    return c->emit_capacity ? c->emit_capacity : 1;
}

/* Whether emitted items wait: in the emission queue, or as frontier
 * vertices whose edges are not emitted yet (dispatcher-only). */
bool mkrt__emission_pending(mkrt_runtime *rt);

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

/* Frees a producer's rings and the producer. */
void mkrt__producer_free(mkrt_producer *p);

/* Runs the dispatcher's loop on the calling thread while the dispatch
 * token is free, until *counter reaches target, nothing is left to run, or
 * `until` (CLOCK_MONOTONIC ns; UINT64_MAX: none) passes: then it returns
 * after the op it runs, leaving the rest to the dispatcher and the
 * workers (pipeline/dispatcher.c). Returns whether it ran anything. */
bool mkrt__dispatch_help(mkrt_runtime *rt, _Atomic uint64_t *counter, uint64_t target, uint64_t until);

#ifdef MKRT_TEST_HOOKS
/* Test hook: hold(true) returns once the dispatcher has finished its
 * current batch and parked; items then wait in the rings. Releasing
 * restarts the round robin at slot 0, so items published during the hold
 * form one batch in slot order. Aborts ignore holds. */
void mkrt__runtime_hold(mkrt_runtime *rt, bool hold);

/* Test hook: doze(true) returns once the dispatcher thread has parked
 * between batches and given the dispatch token back; until doze(false)
 * only helping waiters (mkrt_wait, mkrt_drain) run batches. */
void mkrt__runtime_doze(mkrt_runtime *rt, bool doze);

/* Test hook (MKRT_BACKEND_SIM): the simulated device hangs in its n-th
 * batch from now, after `layer` layers. Call while the runtime is held or
 * idle, before publishing that batch. */
void mkrt__runtime_device_hang(mkrt_runtime *rt, uint64_t batches_from_now, uint32_t layer);

/* Test hook: mkrt_destroy waits, after it set closing and before it
 * closes the rings, while the flag is set. */
void mkrt__runtime_destroy_hold(mkrt_runtime *rt, bool hold);
#endif

#endif
