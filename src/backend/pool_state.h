/* SPDX-License-Identifier: BSD-2-Clause */
/* src/backend/pool_state.h - the CPU pool's state, shared by its
 * two files: cpu_pool.c (the members, launches, batches and tasks) and
 * cpu_levels.c (runs of levels). Not for any other file. */
#ifndef MKRT_BACKEND_POOL_STATE_H
#define MKRT_BACKEND_POOL_STATE_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "backend/cpu_pool.h"
#include "base/spin_wait.h"
#include "base/thread.h"
#include "base/waitq.h"
#include "plan/source.h"

struct mkrt__cpu_member; /* cpu_pool.c */

typedef struct mkrt__cpu_pool {
    mkrt__backend base; /* first: the pool is its backend */
    mkrt__state *state; /* what the ops run against (state/state.h) */
    uint32_t workers;   /* executors: the pool threads and the token's holder */
    uint32_t threads_n; /* pool threads: workers - 1 */
    uint64_t spin_cap_ns; /* how long a thread spins for the next launch or layer */
    mkrt__spin_budget wait_spin; /* holder-only: its spin for the batch's end */
    mkrt__thread *threads;
    /* The dispatch token's hooks (backend.h, mkrt__roam; NULL: the token
     * stays with the dispatcher thread and waiters), set at start. With
     * them the dispatcher thread is member 0 of the pool while it does
     * not hold the token, and the pool threads take the token when it is
     * free and work waits. members_n: the threads that may be members
     * (the pool threads, and the dispatcher thread with a roam); member
     * index 0 is the dispatcher thread, i the pool thread i. */
    const mkrt__roam *roam;
    uint32_t members_n;
    uint32_t first_member; /* 0 with a roam, else 1 */
    struct mkrt__cpu_member *members; /* by member index, threads_n + 1 of them */
    mkrt__waitq *wq; /* the members sleep here: the roam's, or launch_wq */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t launch; /* batches launched */
    mkrt__batch *batch;                               /* published by launch */
    /* The member that launched the batch (NO_MEMBER: a thread that is not
     * one, a waiter or the dispatcher thread of a runtime with a device),
     * the holder's own (publish marks the launch seen for it); and,
     * published by launch with the batch, the members that may run it,
     * every member but the launcher. */
    uint32_t launch_holder;
    uint32_t launch_n;
    _Atomic bool stop;
    mkrt__waitq launch_wq;
    alignas(MKRT_CACHE_LINE) _Atomic uint32_t arrived; /* barrier count */
    _Atomic uint32_t generation;                      /* barrier generation */
    mkrt__waitq barrier_wq;
    /* The layer of the running batch the pool threads are in, as far as
     * the holder may help: set at launch (0) and by the barrier's last
     * arriver (L + 1), seq_cst with helper_busy (help()). */
    alignas(MKRT_CACHE_LINE) _Atomic uint32_t layer_open;
    /* 1 while the token's holder has a chunk of layer_open in hand. */
    alignas(MKRT_CACHE_LINE) _Atomic uint32_t helper_busy;
    /* The launch's entries (a batch's launch; a run of levels is LEVELS):
     * its sequence (high 32 bits, the low bits of `launch`), MKRT__CPU_ENTRY_OPEN
     * while pool threads may still enter, and the pool threads that
     * entered and that finished (see entry_* below). Every change is one
     * atomic RMW, so entries, the close and the finishes are totally
     * ordered. */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t entry;
    _Atomic uint64_t done;                              /* batches completed */
    mkrt__waitq done_wq;
    mkrt__fail_list fails;
    /* Holder-only: the last launch ran on the holder's thread; or a
     * one-participant batch whose rest (from its cursors) the next settle
     * or wait runs (a helper stopped at its deadline). */
    bool ran_inline;
    mkrt__batch *rest;
    /* A planning task (cpu_run_task), apart from the batches' launch and
     * `done`: a pool thread takes part only by entering it while it is
     * open (task_enter), so the holder never waits for one that sleeps.
     * task_fn and task_ctx: written by the holder before it opens the
     * task (task_word, release), read by a pool thread only after its
     * entering CAS (acquire), rewritten only after every thread that
     * entered left (task_left, acquire). */
    void (*task_fn)(void *ctx, uint32_t executor);
    void *task_ctx;
    /* The task's epoch (high 32 bits), TASK_OPEN, and the pool threads
     * that entered it (low bits): every change is one atomic RMW or the
     * holder's store, so an entry and the close are totally ordered. */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t task_word;
    _Atomic uint32_t task_left; /* entered pool threads whose fn returned */
#ifdef MKRT_TEST_HOOKS
    _Atomic uint64_t barriers; /* test hook: cross-thread barriers completed */
    _Atomic uint64_t task_entries; /* test hook: pool threads that entered a task */
    _Atomic bool task_deaf; /* test hook: pool threads do not enter tasks */
    _Atomic bool launch_deaf; /* test hook: pool threads enter no batch, join no run of levels */
    _Atomic uint32_t in_parts; /* test hook: threads inside run_parts of a run of levels */
    _Atomic uint64_t level_overlaps; /* test hook: level ends that found a thread in run_parts */
    _Atomic uint64_t reopen_gap_ns; /* test hook: a last arriver's pause before it reopens the word */
#endif
} mkrt__cpu_pool;

typedef struct mkrt__cpu_gen_check {
    mkrt__cpu_pool *pool;
    uint32_t gen;
} mkrt__cpu_gen_check;

static inline int mkrt__cpu_generation_moved(void *p)
{
    const mkrt__cpu_gen_check *c = p;
    /* acquire: pairs with the last arriver's release of generation. */
    return atomic_load_explicit(&c->pool->generation, memory_order_acquire) != c->gen;
}

/* The entry word (`entry`). A batch's entries:
 * A pool thread takes part in a launched batch only by entering it while
 * it is open (one CAS on `entry`, as task_enter does for a task), and only
 * then reads the batch. The launch closes at the first barrier of its
 * layers (the entered threads are then the ones the barriers count) or
 * when the holder would wait for its end: a holder that finds no pool
 * thread entered runs the rest itself, so it never waits for a thread
 * that is asleep or waiting for a CPU (on 2 CPUs beside an application's
 * threads that wait was 1 ms of a 5 ms analysis: bench/results/
 * megakernel.md). The batch is done when every thread that entered has
 * finished and the launch is closed. */
#define MKRT__CPU_ENTRY_OPEN (UINT64_C(1) << 31)
#define MKRT__CPU_ENTRY_LEVELS (UINT64_C(1) << 30)
#define MKRT__CPU_ENTRY_ENDED (UINT64_C(1) << 29) /* a run of levels ended */
#define MKRT__CPU_ENTRY_ONE (UINT64_C(1) << 15) /* entered: bits 15..28 */
#define MKRT__CPU_ENTRY_FINISHED_MASK (MKRT__CPU_ENTRY_ONE - 1) /* finished (a level: arrived): bits 0..14 */

static inline uint32_t mkrt__cpu_entry_entered(uint64_t w)
{
    return (uint32_t)((w & (MKRT__CPU_ENTRY_ENDED - 1)) >> 15);
}

static inline uint32_t mkrt__cpu_entry_finished(uint64_t w)
{
    return (uint32_t)(w & MKRT__CPU_ENTRY_FINISHED_MASK);
}

/* The batch completes (its last finisher, or the holder that closed it
 * after all had finished or ran it alone). */
static inline void mkrt__cpu_batch_complete(mkrt__cpu_pool *pool)
{
    /* release: pairs with the acquire load in batch_done. */
    atomic_fetch_add_explicit(&pool->done, 1, memory_order_release);
    mkrt__waitq_notify(&pool->done_wq);
}

/* The deadline `until` (ns, mkrt__now_ns's clock) as a timespec in *ts
 * for the waits of spin_wait.h; NULL for UINT64_MAX (none). */
static inline struct timespec *mkrt__cpu_deadline(uint64_t until, struct timespec *ts)
{
    if (until == UINT64_MAX)
        return NULL;
    ts->tv_sec = (time_t)(until / 1000000000u);
    ts->tv_nsec = (long)(until % 1000000000u);
    return ts;
}

/* Adds n units of work (items, parts of a run of levels) a thread ran
 * to the state group's counts (mkrt_stats.units_run), and to
 * units_by_planner where it ran them as the token's holder (planning).
 * relaxed: statistics (the completion's release orders them). */
static inline void mkrt__cpu_units_add(mkrt__cpu_pool *pool, uint64_t n, bool planning)
{
    atomic_fetch_add_explicit(&pool->state->units_run, n, memory_order_relaxed);
    if (planning)
        atomic_fetch_add_explicit(&pool->state->units_by_planner, n, memory_order_relaxed);
}

/* Runs of levels (cpu_levels.c). A thread joins the run launched as
 * `launch` (true) or finds it over; a member runs its parts and barriers
 * until the run ends or, past `until` (UINT64_MAX: none), it leaves at a
 * level's end; a pool of one executor runs it alone until `until`
 * (true: the run ended). planning: the thread holds the dispatch token
 * (its units count as the planner's). */
bool mkrt__cpu_levels_join(mkrt__cpu_pool *pool, uint32_t launch, uint64_t until);
void mkrt__cpu_levels_run(mkrt__cpu_pool *pool, mkrt__batch *b, uint64_t until, bool planning);
bool mkrt__cpu_levels_run_alone(mkrt__cpu_pool *pool, mkrt__batch *b, uint64_t until, bool planning);

#endif
