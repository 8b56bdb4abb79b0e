/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/dispatch.h - the dispatch group of the runtime, owned by
 * the pipeline: the batches and the stage scratch, the dispatch token,
 * the batch running and the one drained, the backends the plan routes to
 * and where the state lives, the quiescence snapshot. Every stage takes this group and the batch (pipeline/stages.h);
 * the groups it points at (producers, state, stats) are the runtime's,
 * which composes them all (runtime/runtime_internal.h). */
#ifndef MKRT_PIPELINE_DISPATCH_H
#define MKRT_PIPELINE_DISPATCH_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend/backend.h"
#include "base/alloc_internal.h"
#include "base/rcu.h"
#include "base/spin_wait.h"
#include "base/thread.h"
#include "base/waitq.h"
#include "mkrt/barrier.h"
#include "mkrt/frontier.h"
#include "mkrt/layer.h"
#include "mkrt/plan_cache.h"
#include "ops/builtin_ops.h"
#include "ops/op_table.h"
#include "plan/batch.h"
#include "pipeline/scratch.h"
#include "plan/source.h"
#include "pipeline/test_hooks.h"
#include "plan/decide.h"
#include "plan/shape_cache.h"
#include "state/producers.h"
#include "state/state.h"
#include "state/stats.h"

typedef struct mkrt__dispatch {
    /* The other groups, the runtime's (set at create, constant). */
    const mkrt_config *cfg;
    mkrt__producers *producers;
    mkrt__state *state;
    mkrt__stats *stats;
    uint32_t workers;
    uint32_t cpus;   /* CPUs available to the process at create (base/cpus.h) */

    /* The sources of work (plan/source.h): the rings (the pipeline's
     * own) and the made sources registered at create (before the
     * dispatcher starts; constant after), drained in turn from
     * source_turn. */
    mkrt__source rings;
    const mkrt__source *sources[MKRT__SOURCES_MAX];
    uint32_t nsources;
    uint32_t source_turn;        /* dispatcher-only: the made source asked first */
    bool batch_running;          /* dispatcher-only: a batch is launched and not finished */
    bool after_made;             /* dispatcher-only: the last batch drained was a made source's */
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

    _Atomic bool aborting; /* destroy timed out: fail what has not started */
    _Atomic bool stopped;  /* dispatcher has exited */
#ifdef MKRT_TEST_HOOKS
    mkrt__test_hooks hooks;
#endif

    alignas(MKRT_CACHE_LINE) mkrt__waitq work_wq; /* the dispatcher sleeps here */
    alignas(MKRT_CACHE_LINE) mkrt__waitq done_wq; /* fence and drain waiters sleep here */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t completed_total;

    /* The dispatch token (pipeline/dispatcher.c): whoever holds it runs the
     * dispatcher's loop, the dispatcher thread or a helping waiter
     * (mkrt_wait, mkrt_drain); everything marked dispatcher-only belongs to
     * the holder. 0: free (the dispatcher is idle); dispatcher.c, TOKEN_*. */
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
    _Atomic bool backend_failed; /* set once, after backend_failure is written */
    /* Where the cells and the APPEND log live: NULL, the host arrays of
     * the state group; else the backend whose device memory holds them
     * (backend.h, state_in). Moved by the dispatcher (mkrt__state_move)
     * under state_lock, which the application's reads and writes of the
     * state also take while device_state is set (constant after create). */
    mkrt__backend *_Atomic state_at;
    bool device_state;
    bool state_lost;   /* dispatcher-only: a device's state could not come home */
    mkrt__mutex state_lock;
    char backend_failure[MKRT_ERROR_MESSAGE_MAX + 96];
    /* The dedupe scratch of the thread that holds the token (pipeline/
     * scratch.h): own_scratch, the dispatcher thread's (made at create),
     * or a helping waiter's own while it helps. level_seq numbers the
     * levellings (a batch's level_seq says which levels it needs). */
    mkrt__dispatch_scratch *own_scratch;
    mkrt__dispatch_scratch *scratch; /* dispatcher-only */
    uint64_t level_seq;              /* dispatcher-only */
    /* dispatcher-only: the helping waiters' own, by thread slot (NULL
     * until that slot's thread first helps); freed by mkrt_destroy. */
    mkrt__dispatch_scratch *helper_scratch[MKRT_THREAD_SLOTS];
    /* Stage scratch, dispatcher-only, sized at create. */
    mkrt_barrier_scratch *split;  /* the frontier planner's scratch */
    mkrt_frontier_wave *waves;    /* max_batch: one layer's items as waves */
    mkrt__batch batch[2];
    uint32_t rr;             /* round-robin start */
    /* The dispatcher thread's spin budgets (base/spin_wait.h): idle, for
     * work; and for the token back from a helping waiter. */
    mkrt__spin_budget idle_spin, token_spin;
    /* The plan's measurements, decisions' counters and EXPLAIN ring
     * (plan/decide.h); dispatcher-only but for what it marks atomic. */
    mkrt__planner planner;
    /* The plan cache on the path (plan/shape_cache.h): read lock-free by
     * whichever thread plans a batch, written by it when a measured
     * outcome changed. Made at create, freed by destroy. */
    mkrt__shape_cache shapes;
    /* The token's hooks for the CPU pool's threads (backend.h; filled by
     * mkrt__dispatch_roam, constant after). */
    mkrt__roam roam;
    _Atomic bool serve_spinning; /* roam.spinning's flag */
} mkrt__dispatch;

/* The dispatcher thread (pipeline/dispatcher.c); arg: the dispatch group. */
int mkrt__dispatcher_main(void *arg);
/* pipeline/device_state.c. Dispatcher thread: makes `to` hold the state
 * before it runs a batch (to == NULL or a backend without state_in, or
 * failed: the host arrays).
 * Returns NULL, or the backend that failed (err says why): `to` when it
 * could not take the state in, or the device that held it when its state
 * could not be copied out (a sticky fault: the host arrays keep what the
 * last copy brought; the state moves home all the same). */
mkrt__backend *mkrt__state_move(mkrt__dispatch *dp, mkrt__backend *to, mkrt_error *err);
/* The application's accesses to the state, where it lives (device_state
 * runtimes only; the others touch the host arrays directly). */
mkrt_status mkrt__state_cells_read(mkrt__dispatch *dp, uint32_t first, size_t count, uint64_t *out);
mkrt_status mkrt__state_cell_write(mkrt__dispatch *dp, uint32_t handle, uint64_t value);
/* A reader of the APPEND log's ring: between begin and end the state
 * stays where it is (state_lock, device_state runtimes only); at is the
 * device that holds it (NULL: read the host ring), words are copied from
 * it a chunk at a time. failed: a copy failed (the read returns nothing). */
typedef struct mkrt__log_reader {
    mkrt__dispatch *dp;
    mkrt__backend *at;
    uint64_t base;   /* position of words[0] */
    size_t n;        /* words held */
    bool failed;
    uint64_t words[128];
} mkrt__log_reader;
void mkrt__state_log_begin(mkrt__dispatch *dp, mkrt__log_reader *r);
uint64_t mkrt__state_log_word(mkrt__log_reader *r, uint64_t position);
void mkrt__state_log_end(mkrt__log_reader *r);

/* Whether emitted items wait: in the emission queue, or in a made
 * source (dispatcher-only). */
bool mkrt__emission_pending(mkrt__dispatch *dp);
/* drain.c. At create: the rings' source (its calls run items on st),
 * then made sources (false: the table is full). */
void mkrt__dispatch_sources_init(mkrt__dispatch *dp, mkrt__state *st);
bool mkrt__dispatch_source_add(mkrt__dispatch *dp, const mkrt__source *s);

/* Runs the dispatcher's loop on the calling thread while the dispatch
 * token is free, until *counter reaches target, nothing is left to run, or
 * `until` (CLOCK_MONOTONIC ns; UINT64_MAX: none) passes: then it returns
 * after the op it runs, leaving the rest to the dispatcher and the
 * workers (pipeline/dispatcher.c). Returns whether it ran anything. */
bool mkrt__dispatch_help(mkrt__dispatch *dp, _Atomic uint64_t *counter, uint64_t target, uint64_t until);

/* A publish wakes the threads asleep for work (the dispatcher thread,
 * the pool's members) where the token is free; its holder drains what
 * was published itself. */
void mkrt__dispatch_notify_work(mkrt__dispatch *dp);

/* The dispatch token's hooks for a CPU pool whose threads take it (a
 * runtime without a device; backend.h, mkrt__roam): a pool thread with
 * nothing to run takes the free token when work waits and runs the
 * dispatcher's loop, as a helping waiter does, until nothing is pending.
 * Fills dp->roam and returns it; at create, before any thread runs. */
const mkrt__roam *mkrt__dispatch_roam(mkrt__dispatch *dp);

#ifdef MKRT_TEST_HOOKS
/* Test hook: the dispatcher thread or a helping waiter holds the token
 * (not a pool thread). */
bool mkrt__dispatch_token_held(mkrt__dispatch *dp);
#endif

#endif
