/* SPDX-License-Identifier: BSD-2-Clause */
/* src/backend/cpu_pool.c - the CPU backend: a persistent pool whose
 * every thread executes, the thread that dispatches among them.
 *
 * A pool of `workers` W runs W threads that execute: W - 1 pool threads
 * started here, and the thread that holds the dispatch token (the
 * dispatcher thread or a helping waiter, pipeline/dispatcher.c), which
 * runs items between its planning steps. A batch whose plan gives it one
 * participant (plan.workers == 1) runs on the token's holder at launch:
 * no hand-off, no barrier; a helping waiter that calls launch stops at its
 * deadline, between items, and whoever calls settle or wait next (the
 * token's next holder) runs the rest from where it stopped (run_from).
 * Otherwise the launch publishes the batch and bumps `launch` (release);
 * the pool threads that see it (acquire) enter it while it is open, one
 * CAS each on `entry`, and only then read it. Executor 0 is the token's
 * holder, the i-th pool thread to enter is executor i: in layer l,
 * executors 1 .. max(1, plan.participants[l] - 1) claim chunks of
 * plan.chunk items with one fetch-add on the layer's cursor, and the
 * holder claims from the same cursor whenever it is free (at launch,
 * until the layer has no chunk left, and while it waits: help), in the
 * layers where the plan gives it a share (participants >= 2). Threads
 * that enter above the batch's count sit it out. The launch closes at the
 * first barrier (the threads in it are then the ones that entered) or
 * when the holder, with nothing left to take, would wait: if no pool
 * thread entered, the holder runs the rest itself (hold_close), so it
 * never waits for a thread that is asleep or has no CPU. A thread that
 * did not get in never reads the batch, so the next launch may replace it
 * once the threads that entered finished.
 *
 * Between layers, a generation barrier over the entered pool threads makes
 * every write of layer L happen-before every read of layer L+1. The
 * holder is not counted in it (it may be planning): the last arriver opens
 * the next layer (`layer_open`) and then waits until the holder has no
 * chunk of layer L in hand (`helper_busy`, a store-load handshake, see
 * help()). Where the plan says one participant runs both layers (the
 * first pool thread in), there is no barrier: program order suffices, and
 * the holder takes no share of either. The last entered thread to finish
 * (or the holder that closes the launch after them, or alone) sets
 * `done` (release) and wakes the waiter. A run of levels is joined the
 * same way, at any level: its team is the threads that entered, each
 * level's barrier counts them, and the last arriver of its last level
 * completes it (see "runs of levels"). Failures of user ops go to the
 * pool's failure list, which wait() returns.
 *
 * How wide a batch runs is the plan's (pipeline/batch_planner.c): the CPUs
 * producers leave free bound the width of a default-sized pool, and a
 * layer of built-in ops gets a second participant only when each gets
 * WAKE's share_min (plan/decide.h), so narrow layers, and runs of them
 * between wide ones, run on one thread with no barrier. The caller of
 * launch, settle and wait is whoever holds the dispatch token, one at a
 * time.
 */
#include <stdalign.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backend/pool_state.h"
#include "base/alloc_internal.h"
#include "base/cpus.h"
#include "base/error_internal.h"
#include "base/spin_wait.h"
#include "base/thread.h"
#include "ops/op_table.h"
#include "plan/source.h"

typedef struct worker_arg {
    mkrt__cpu_pool *pool;
    uint32_t index; /* member index: 1 .. threads_n */
} worker_arg;

/* A member's own record, written only by the thread that is that member
 * (its loop, or its launches while it holds the token). */
typedef struct mkrt__cpu_member {
    alignas(MKRT_CACHE_LINE) uint64_t seen; /* the last launch it looked at, or made */
    uint32_t task_seen; /* the epoch of the last task it looked at */
} member;

#define NO_MEMBER UINT32_MAX

/* Which member of which pool the calling thread is (set by worker_main
 * and serve): what a launch reads to know its launcher. A thread is a
 * member of one pool at most; another runtime's pool sees NO_MEMBER. */
static _Thread_local const mkrt__cpu_pool *tl_pool;
static _Thread_local uint32_t tl_member;
/* Items this thread ran since it last added them to the state group's
 * counts (units_flush; a run of levels counts its parts itself,
 * cpu_levels.c), and whether it runs them as the token's holder (in the
 * backend's launch, settle or wait) rather than as a member running its
 * share. */
static _Thread_local uint64_t tl_units;
static _Thread_local bool tl_planning;

/* Adds this thread's units to the counts (mkrt__cpu_units_add). Before
 * the work is seen done: a member before it finishes its share, the
 * holder before it returns, so a read after a batch completed counts
 * them. */
static void units_flush(mkrt__cpu_pool *pool)
{
    if (tl_units == 0)
        return;
    mkrt__cpu_units_add(pool, tl_units, tl_planning);
    tl_units = 0;
}

#define TASK_OPEN (UINT64_C(1) << 31)
#define TASK_ENTERED_MASK (TASK_OPEN - 1)

static bool launched(const mkrt__cpu_pool *pool, const member *me)
{
    /* acquire: pairs with the release increment in launch (the batch, its
     * plan and launch_n). */
    return atomic_load_explicit(&pool->launch, memory_order_acquire) != me->seen;
}

/* A task this member has not looked at is open. relaxed: a hint only;
 * task_enter's CAS (acquire) is what lets the thread read the task. */
static bool task_waiting(const mkrt__cpu_pool *pool, const member *me)
{
    uint64_t w = atomic_load_explicit(&pool->task_word, memory_order_relaxed);
#ifdef MKRT_TEST_HOOKS
    /* relaxed: the test sets it between tasks; a late look is harmless. */
    if (atomic_load_explicit(&pool->task_deaf, memory_order_relaxed))
        return false;
#endif
    return (w & TASK_OPEN) != 0 && (uint32_t)(w >> 32) != me->task_seen;
}

/* What a member waits for: a launch or a task it has not seen, the
 * pool's stop, or (leave, NULL: never) its wish for the token. */
typedef struct member_check {
    mkrt__cpu_pool *pool;
    member *me;
    int (*leave)(void *ctx);
    void *ctx;
} member_check;

static int member_ready(void *p)
{
    const member_check *c = p;
    /* acquire: pairs with the release store of stop. */
    return launched(c->pool, c->me) || atomic_load_explicit(&c->pool->stop, memory_order_acquire) ||
           task_waiting(c->pool, c->me) || (c->leave != NULL && c->leave(c->ctx));
}

/* The batch's pool threads: one fewer than its most participants (the
 * holder is the other), at least one, at most the members that run it. */
static uint32_t batch_threads(const mkrt__cpu_pool *pool, const mkrt__batch_plan *plan)
{
    uint32_t n = plan->workers > 1 ? plan->workers - 1 : 1;
    return n < pool->launch_n ? n : pool->launch_n;
}

/* Whether the holder takes a share of layer l (the plan gives it two or
 * more participants: a barrier is on both sides of it, batch.h). */
static bool holder_shares(const mkrt__batch_plan *plan, size_t l)
{
    return plan->participants[l] >= 2;
}

static int helper_idle(void *p)
{
    mkrt__cpu_pool *pool = p;
    /* acquire: pairs with the release store in help(): the holder's writes
     * of the layer happen before the next layer's reads. */
    return atomic_load_explicit(&pool->helper_busy, memory_order_acquire) == 0;
}

/* Closes the launch to entries; returns its word once closed, and
 * whether this call closed it (*closed). acq_rel: the acquire half gives
 * the closer every finished thread's writes (their release RMWs head the
 * sequence it reads); the release half orders its own writes before any
 * later finisher's acquire. */
static uint64_t entry_close(mkrt__cpu_pool *pool, bool *closed)
{
    /* relaxed: the CAS re-checks it. */
    uint64_t w = atomic_load_explicit(&pool->entry, memory_order_relaxed);
    *closed = false;
    while ((w & MKRT__CPU_ENTRY_OPEN) != 0)
        if (atomic_compare_exchange_weak_explicit(&pool->entry, &w, w & ~MKRT__CPU_ENTRY_OPEN, memory_order_acq_rel,
                                                  memory_order_relaxed)) {
            *closed = true;
            return w & ~MKRT__CPU_ENTRY_OPEN;
        }
    return w;
}

/* An entered pool thread is done with the batch (it reads it no more).
 * The batch completes once the launch is closed and every thread that
 * entered finished: the last finisher completes it, closing it first if
 * it is still open (every layer ran: the first to enter runs its share of
 * each, and the barriers end each layer). Exactly one thread completes
 * it: the one whose RMW makes both true (a closer that finds all that
 * entered finished, see hold_close). */
static void entry_finish(mkrt__cpu_pool *pool)
{
    /* acq_rel: the release half publishes this thread's writes of the
     * batch; the acquire half gives the last finisher everyone's. */
    uint64_t w = atomic_fetch_add_explicit(&pool->entry, 1, memory_order_acq_rel) + 1;
    if ((w & MKRT__CPU_ENTRY_OPEN) == 0) {
        if (mkrt__cpu_entry_finished(w) == mkrt__cpu_entry_entered(w))
            mkrt__cpu_batch_complete(pool);
        return;
    }
    /* Open: a thread that entered meanwhile finishes later and looks
     * again; a close meanwhile found everyone finished and completed. */
    while ((w & MKRT__CPU_ENTRY_OPEN) != 0 && mkrt__cpu_entry_finished(w) == mkrt__cpu_entry_entered(w))
        if (atomic_compare_exchange_weak_explicit(&pool->entry, &w, w & ~MKRT__CPU_ENTRY_OPEN, memory_order_acq_rel,
                                                  memory_order_relaxed)) {
            mkrt__cpu_batch_complete(pool);
            return;
        }
}

/* Every one of the batch's `n` pool threads arrives after layer l; the
 * last opens layer l + 1 to the holder, waits until the holder has no
 * chunk of l in hand, and releases all. */
static void barrier(mkrt__cpu_pool *pool, uint32_t n, uint32_t l)
{
    /* acquire: see the generation before arriving, so a fast worker that
     * already passed cannot be confused with the next round. */
    mkrt__cpu_gen_check c = {pool, atomic_load_explicit(&pool->generation, memory_order_acquire)};
    /* acq_rel: the release half publishes this worker's layer writes to
     * the last arriver; the acquire half gives the last arriver everyone's. */
    if (atomic_fetch_add_explicit(&pool->arrived, 1, memory_order_acq_rel) + 1 == n) {
        atomic_store_explicit(&pool->arrived, 0, memory_order_relaxed); /* ordered by the release below */
        /* seq_cst, with the load of helper_busy below: the store-load
         * handshake with help() (its store of helper_busy, then its load
         * of layer_open). Either the holder sees l + 1 and takes no more
         * chunks of l, or this thread sees it busy and waits. Also the
         * release that gives the holder every write of layer l. */
        atomic_store(&pool->layer_open, l + 1);
        /* It has one chunk at most in hand; yield where it has no CPU. */
        while (atomic_load(&pool->helper_busy) != 0 && !mkrt__spin_for(helper_idle, pool, 20000))
            mkrt__thread_yield();
#ifdef MKRT_TEST_HOOKS
        /* relaxed: a test's statistic, read after the batch completed
         * (the completion's release/acquire orders it). */
        atomic_fetch_add_explicit(&pool->barriers, 1, memory_order_relaxed);
#endif
        /* release: pairs with the acquire loads in mkrt__cpu_generation_moved. */
        atomic_store_explicit(&pool->generation, c.gen + 1, memory_order_release);
        mkrt__waitq_notify(&pool->barrier_wq);
        mkrt__waitq_notify(&pool->done_wq); /* a waiting holder may help the next layer */
        return;
    }
    mkrt__spin_then_sleep(&pool->barrier_wq, mkrt__cpu_generation_moved, &c, NULL);
}

/* Items [from, to) of b: ops on the pool's state group, or a made
 * source's items, which its source runs (plan/source.h). */
static inline void run_range(mkrt__cpu_pool *pool, const mkrt__batch *b, size_t from, size_t to)
{
    tl_units += to - from;
    if (b->source->made)
        b->source->run(b->source->ctx, b->exec, from, to, &pool->fails);
    else
        mkrt__exec_range(pool->state, b->exec, from, to, &pool->fails);
}

/* Claims and runs chunks of layer l until none is left. */
static void run_chunks(mkrt__cpu_pool *pool, mkrt__batch *b, size_t l)
{
    const uint32_t chunk = b->plan.chunk;
    const uint32_t from = b->layer_offsets[l], len = b->layer_offsets[l + 1] - from;
    /* relaxed: a cheap look, so that a drained cursor is not bumped on. */
    while (atomic_load_explicit(&b->cursors[l], memory_order_relaxed) < len) {
        /* relaxed: the cursor only hands out disjoint ranges; the items and
         * cells are ordered by launch, the barriers and help()'s handshake. */
        uint32_t start = atomic_fetch_add_explicit(&b->cursors[l], chunk, memory_order_relaxed);
        if (start >= len)
            break;
        uint32_t end = len - start < chunk ? len : start + chunk;
        run_range(pool, b, from + start, from + end);
    }
}

/* Pool thread `w` (its rank of entry) runs its share of every layer;
 * n: the plan's pool threads. The first barrier closes the launch (if
 * the holder has not): the barriers count the threads that entered, at
 * most n, and every entered thread computes the same count. */
static void run_share(mkrt__cpu_pool *pool, mkrt__batch *b, uint32_t w, uint32_t n)
{
    const mkrt__batch_plan *plan = &b->plan;
    uint32_t counted = 0;
    for (size_t l = 0; l < b->layers; l++) {
        uint32_t p = plan->participants[l];
        if (w <= (p > 1 ? p - 1 : 1))
            run_chunks(pool, b, l);
        if (mkrt__plan_grid_barrier_after(plan, l, b->layers)) {
            if (counted == 0) {
                bool closed;
                const uint32_t entered = mkrt__cpu_entry_entered(entry_close(pool, &closed));
                counted = entered < n ? entered : n;
            }
            barrier(pool, counted, (uint32_t)l);
        }
    }
}

/* A pool thread's part in the open task, if it gets in: one CAS that
 * counts it in while the task (the epoch it saw) is still open. A thread
 * that fails (the holder closed it, or a later task is open) never reads
 * task_fn or task_ctx, so a task's end waits only for threads inside. */
static void task_enter(mkrt__cpu_pool *pool, member *me, uint32_t index)
{
    /* relaxed: the CAS below re-checks it. */
    uint64_t w = atomic_load_explicit(&pool->task_word, memory_order_relaxed);
    const uint32_t epoch = (uint32_t)(w >> 32);
    me->task_seen = epoch; /* one look per task, in or not */
    for (;;) {
        if ((w & TASK_OPEN) == 0 || (uint32_t)(w >> 32) != epoch)
            return;
        /* acquire on success: pairs with the holder's release store that
         * opened the task (task_fn, task_ctx, the task's own state).
         * relaxed on failure: w is only looked at again. */
        if (atomic_compare_exchange_weak_explicit(&pool->task_word, &w, w + 1, memory_order_acquire,
                                                  memory_order_relaxed))
            break;
    }
#ifdef MKRT_TEST_HOOKS
    /* relaxed: a test's statistic, read after run_task returned (the
     * release increment of task_left below orders it). */
    atomic_fetch_add_explicit(&pool->task_entries, 1, memory_order_relaxed);
#endif
    pool->task_fn(pool->task_ctx, index);
    /* release: pairs with the holder's acquire in task_joined (this
     * thread's writes of the task); this thread's last access to it. */
    atomic_fetch_add_explicit(&pool->task_left, 1, memory_order_release);
    mkrt__waitq_notify(&pool->done_wq);
}

/* Member m's part in the latest launch (launch_n and the batch are the
 * launcher's, published with it). A run of levels takes the pool threads
 * that join it while it runs, a batch the ones that enter it while it is
 * open; a member that does not get in (the launch closed or ended, or a
 * later one replaced it) never reads the batch. */
static void run_launch(mkrt__cpu_pool *pool, uint32_t m)
{
    /* acquire: pairs with the release increment in publish (the batch,
     * its plan, launch_n and the entry word). */
    const uint64_t launch = atomic_load_explicit(&pool->launch, memory_order_acquire);
    pool->members[m].seen = launch;
    /* relaxed: written before the launch's release; the CAS re-checks it. */
    uint64_t w = atomic_load_explicit(&pool->entry, memory_order_relaxed);
    if ((uint32_t)(w >> 32) != (uint32_t)launch)
        return; /* it ended without this member; a later one is launched */
#ifdef MKRT_TEST_HOOKS
    /* relaxed: the test sets it between launches, or at random; a late
     * look is harmless. */
    if (atomic_load_explicit(&pool->launch_deaf, memory_order_relaxed))
        return;
#endif
    if ((w & MKRT__CPU_ENTRY_LEVELS) != 0) {
        /* A run of levels: joined at its open level, if it still runs
         * (its last arriver completes it). */
        if (mkrt__cpu_levels_join(pool, (uint32_t)launch, UINT64_MAX))
            mkrt__cpu_levels_run(pool, pool->batch, UINT64_MAX, tl_planning);
        units_flush(pool);
        return;
    }
    for (;;) {
        if ((w & MKRT__CPU_ENTRY_OPEN) == 0 || (uint32_t)(w >> 32) != (uint32_t)launch)
            return;
        /* acquire on success: pairs with the holder's release store of the
         * entry word in publish (the batch and its cursors). relaxed on
         * failure: w is only looked at again. */
        if (atomic_compare_exchange_weak_explicit(&pool->entry, &w, w + MKRT__CPU_ENTRY_ONE, memory_order_acquire,
                                                  memory_order_relaxed))
            break;
    }
    mkrt__batch *b = pool->batch;
    const uint32_t rank = mkrt__cpu_entry_entered(w) + 1, n = batch_threads(pool, &b->plan);
    if (rank <= n)
        run_share(pool, b, rank, n);
    units_flush(pool);
    entry_finish(pool);
}

/* Member m's loop: runs its share of every launch and enters every task
 * it sees, until the pool stops (false) or leave(ctx) says it wants the
 * dispatch token and the roam's take got it (true). A launch made
 * between its last look and the take (a waiter's, left running at its
 * deadline) counts it among its members: it runs its share of it first,
 * then holds the token. spin_leave: leave is asked while it spins too
 * (the dispatcher thread, the token's first taker); a pool thread asks
 * it only once its spin for a launch ran out and when it wakes, so that
 * it takes the token where the dispatcher thread sleeps or runs a share,
 * and does not spin beside an idle one (three spinners on two CPUs: the
 * single-item round trip's p99 went from 3-7 to 25-33 us). */
/* The dispatcher thread stops looking for work as member 0 (it sleeps,
 * runs a share or a task, holds the token or leaves). */
static inline void spinning_off(_Atomic bool *flag)
{
    if (flag != NULL)
        atomic_store_explicit(flag, false, memory_order_relaxed);
}

static bool member_loop(mkrt__cpu_pool *pool, uint32_t m, int (*leave)(void *ctx), void *ctx, bool spin_leave,
                        mkrt__spin_budget *spin, uint64_t cap_ns)
{
    member *me = &pool->members[m];
    member_check c = {pool, me, leave, ctx}, spinning = {pool, me, spin_leave ? leave : NULL, ctx};
    _Atomic bool *flag = spin_leave && pool->roam != NULL ? pool->roam->spinning : NULL;
    for (;;) {
        /* Spin for the next launch while it comes soon (a traversal's next
         * level, the next batch of a stream): no futex on the way. The
         * dispatcher thread says it spins (roam->spinning). relaxed (both
         * stores): the clear is ordered before its arming by the seq_cst
         * fence of mkrt__waitq_prepare, which pairs with a publisher's
         * (the dispatch group's token_free_worth); the set is a hint. */
        if (flag != NULL)
            atomic_store_explicit(flag, true, memory_order_relaxed);
        if (!mkrt__spin_adaptive(spin, member_ready, &spinning, cap_ns)) {
            spinning_off(flag);
            mkrt__spin_then_sleep(pool->wq, member_ready, &c, NULL);
        }
        /* acquire: pairs with the release store in cpu_stop. */
        if (atomic_load_explicit(&pool->stop, memory_order_acquire)) {
            spinning_off(flag);
            return false;
        }
        if (launched(pool, me)) {
            spinning_off(flag);
            run_launch(pool, m);
            continue;
        }
        if (task_waiting(pool, me)) {
            spinning_off(flag);
            task_enter(pool, me, m + 1 - pool->first_member);
            continue;
        }
        /* The flag stays set while it looks again: a take that lost to a
         * helping waiter goes back to spinning, and a publish meanwhile
         * must not wake the members for what it will take itself. */
        if (leave != NULL && leave(ctx) && pool->roam->take(pool->roam->ctx)) {
            spinning_off(flag);
            while (launched(pool, me))
                run_launch(pool, m);
            return true;
        }
    }
}

static int worker_main(void *p)
{
    worker_arg a = *(worker_arg *)p;
    mkrt__cpu_pool *pool = a.pool;
    tl_pool = pool;
    tl_member = a.index;
    mkrt__spin_budget spin;
    mkrt__spin_budget_init(&spin);
    const mkrt__roam *r = pool->roam;
    /* With a roam, a pool thread with nothing to run takes the free token
     * when work waits and dispatches it (as the dispatcher thread would),
     * its launches run by the other members, the dispatcher thread among
     * them; it gives the token back when nothing is pending. */
    bool asks = r != NULL;
    while (member_loop(pool, a.index, asks ? r->want : NULL, asks ? r->ctx : NULL, false, &spin, pool->spin_cap_ns))
        asks = r->run(r->ctx); /* false: it cannot dispatch; it serves as a member only */
    return 0;
}

/* The dispatcher thread as member 0 (backend.h, serve). */
static void cpu_serve(mkrt__backend *be, int (*leave)(void *ctx), void *ctx, mkrt__spin_budget *spin,
                      uint64_t cap_ns)
{
    mkrt__cpu_pool *pool = (mkrt__cpu_pool *)be;
    tl_pool = pool;
    tl_member = 0;
    (void)member_loop(pool, 0, leave, ctx, true, spin, cap_ns); /* the pool stops only after it exited */
}

static int batch_done(void *p)
{
    mkrt__cpu_pool *pool = p;
    /* acquire: pairs with the release increment in mkrt__cpu_batch_complete. relaxed:
     * only the holder writes launch. */
    return atomic_load_explicit(&pool->done, memory_order_acquire) ==
           atomic_load_explicit(&pool->launch, memory_order_relaxed);
}

/* The holder (executor 0) runs chunks of the layer the pool threads are
 * in, while the plan gives it a share there. The store-load handshake
 * with barrier(): it marks itself busy, then checks that the layer is
 * still open (both seq_cst), so that a barrier's last arriver either sees
 * it busy (and waits for the chunk it runs) or it sees the next layer.
 * Returns when the batch is done or the open layer has no chunk for it. */
static void help(mkrt__cpu_pool *pool, mkrt__batch *b)
{
    if (b->levels)
        return; /* a holder joins a run at launch, settle or wait */
    for (;;) {
        if (batch_done(pool))
            return;
        uint32_t l = atomic_load(&pool->layer_open);
        if (l >= b->layers || !holder_shares(&b->plan, l))
            return;
        atomic_store(&pool->helper_busy, 1);
        if (atomic_load(&pool->layer_open) == l)
            run_chunks(pool, b, l);
        /* release: pairs with the acquire in helper_idle (the last arriver
         * of the barrier after l reads this thread's writes of l). */
        atomic_store_explicit(&pool->helper_busy, 0, memory_order_release);
        if (atomic_load(&pool->layer_open) == l)
            return; /* l has no chunk left; its last ones run elsewhere */
    }
}

typedef struct help_check {
    mkrt__cpu_pool *pool;
    uint32_t layer;
} help_check;

/* Done, or the pool threads opened another layer (one the holder may share). */
static int done_or_layer(void *p)
{
    const help_check *c = p;
    return batch_done(c->pool) || atomic_load(&c->pool->layer_open) != c->layer;
}

/* The holder, with nothing of the batch left for it to take, would wait
 * for its end: it closes the launch. Where no pool thread entered, it
 * runs the rest itself, layer after layer (program order: no barrier),
 * from where the cursors are; where every thread that entered finished,
 * it completes the batch. Returns whether the batch is done. */
static bool hold_close(mkrt__cpu_pool *pool, mkrt__batch *b)
{
    bool closed;
    const uint64_t w = entry_close(pool, &closed);
    if (!closed)
        return false; /* closed before: its last finisher completes it */
    if (mkrt__cpu_entry_entered(w) == 0) {
        for (size_t l = 0; l < b->layers; l++)
            run_chunks(pool, b, l);
        mkrt__cpu_batch_complete(pool);
        return true;
    }
    if (mkrt__cpu_entry_finished(w) != mkrt__cpu_entry_entered(w))
        return false;
    mkrt__cpu_batch_complete(pool);
    return true;
}

/* The holder helps the launched batch until it is done or `until` passes
 * (NULL: none); returns whether it is done. Without a deadline it closes
 * the launch once it has nothing to take (hold_close): it never waits
 * for a pool thread that has not entered. */
static bool help_until_done(mkrt__cpu_pool *pool, const struct timespec *deadline)
{
    mkrt__batch *b = pool->batch;
    for (;;) {
        help(pool, b);
        if (deadline == NULL && !b->levels && !batch_done(pool) && hold_close(pool, b))
            return true;
        help_check c = {pool, atomic_load(&pool->layer_open)};
        /* The last chunks run elsewhere: spin for them while that pays
         * (a level's end), so that the batch's end costs no futex. */
        if (!(deadline == NULL && mkrt__spin_adaptive(&pool->wait_spin, done_or_layer, &c, pool->spin_cap_ns)) &&
            mkrt__spin_then_sleep(&pool->done_wq, done_or_layer, &c, deadline) == 0)
            return batch_done(pool); /* past the deadline */
        if (batch_done(pool))
            return true;
    }
}

static bool cpu_accepts(const mkrt__backend *be, const mkrt_item *items, size_t n)
{
    (void)be, (void)items, (void)n;
    return true; /* the op table runs every admitted item */
}

static mkrt_status cpu_prepare(mkrt__backend *be, mkrt__batch *b, mkrt_error *err)
{
    (void)be, (void)b, (void)err;
    return MKRT_OK; /* the workers read the batch where it is */
}

/* A helper's deadline (b->until) on a one-participant batch. Built-in
 * items are bounded (nanoseconds, or a chunk of edges): the clock is read
 * every INLINE_STRIDE_BUILTIN of them. An item of a user op (or a chunk
 * of a frontier round, whose edges may be user ops) may take any time:
 * the clock is read after each, so the helper overruns by at most the one
 * it runs. A clock read costs about as much as a trivial user op, so a
 * batch of more than INLINE_CHECKED_MAX such items is not run on the
 * helper's thread at all: the first pool thread to enter runs it (one
 * wake-up), or the token's next holder, where none entered by its wait
 * (hold_close) or the pool has one executor (cpu_settle, cpu_wait). */
#define INLINE_STRIDE_BUILTIN 256u
#define INLINE_CHECKED_MAX 256u

/* Runs a one-participant batch on this thread from where its cursors say
 * (item cursors[l] of layer l; launch zeroes them), layer by layer, in
 * program order. Before `until` passes, it looks at the clock between
 * items (see above) and, once it passed, stops with the cursors where
 * the rest begins (the plan gives every layer one participant: no
 * barrier). Returns whether it ran everything. relaxed (cursors): read
 * and written by the holder only, or published to the pool thread that
 * enters by the launch (release). */
static bool run_from(mkrt__cpu_pool *pool, mkrt__batch *b, uint64_t until)
{
    if (b->levels)
        return mkrt__cpu_levels_run_alone(pool, b, until, tl_planning);
    const bool checked = b->user_ops > 0 || b->source->made;
    const uint32_t stride = until == UINT64_MAX ? UINT32_MAX : checked ? 1u : INLINE_STRIDE_BUILTIN;
    for (size_t l = 0; l < b->layers; l++) {
        const uint32_t from = b->layer_offsets[l], to = b->layer_offsets[l + 1];
        for (uint32_t k = from + atomic_load_explicit(&b->cursors[l], memory_order_relaxed); k < to;) {
            if (until != UINT64_MAX && mkrt__now_ns() >= until) {
                atomic_store_explicit(&b->cursors[l], k - from, memory_order_relaxed);
                return false;
            }
            uint32_t end = to - k < stride ? to : k + stride;
            run_range(pool, b, k, end);
            k = end;
        }
        atomic_store_explicit(&b->cursors[l], to - from, memory_order_relaxed);
    }
    return true;
}

/* The launcher of the next launch and the members that run it: every
 * member but the launcher, who counts the launch as seen. */
static void set_launcher(mkrt__cpu_pool *pool)
{
    const uint32_t h = tl_pool == pool ? tl_member : NO_MEMBER;
    pool->launch_holder = h;
    pool->launch_n = pool->members_n - (h != NO_MEMBER ? 1u : 0u);
}

/* join: the holder is in the team of a run of levels from its start. */
static void publish(mkrt__cpu_pool *pool, mkrt__batch *b, bool join)
{
    /* relaxed: only the holder writes launch. */
    const uint64_t launch = atomic_load_explicit(&pool->launch, memory_order_relaxed) + 1;
    if (pool->launch_holder != NO_MEMBER)
        pool->members[pool->launch_holder].seen = launch; /* its own: it runs no member's share */
    pool->batch = b;
    /* release: pairs with an entering member's acquire CAS (task_enter's
     * pattern); a member reads it only after the launch's acquire. */
    const uint64_t levels = b->levels ? MKRT__CPU_ENTRY_LEVELS | (join ? MKRT__CPU_ENTRY_ONE : 0) : 0;
    atomic_store_explicit(&pool->entry, launch << 32 | MKRT__CPU_ENTRY_OPEN | levels, memory_order_release);
    /* seq_cst: read by help() and the barrier (see there); ordered before
     * the pool threads' reads by the release below. */
    atomic_store(&pool->layer_open, 0);
    /* release: pairs with the acquire in launched_or_stopping; publishes
     * the batch, its plan and its cursors. */
    atomic_fetch_add_explicit(&pool->launch, 1, memory_order_release);
    mkrt__waitq_notify(pool->wq);
}

static mkrt_status launch_on(mkrt__backend *be, mkrt__batch *b, uint64_t append_limit, mkrt_error *err)
{
    (void)append_limit; /* admission reserved the room of every APPEND */
    (void)err;
    mkrt__cpu_pool *pool = (mkrt__cpu_pool *)be;
    /* relaxed: the failure list is read by wait after `done` (acquire). */
    atomic_store_explicit(&pool->fails.count, 0, memory_order_relaxed);
    for (size_t l = 0; l < b->layers; l++)
        atomic_store_explicit(&b->cursors[l], 0, memory_order_relaxed); /* published by launch */
    set_launcher(pool);
    if (b->levels) {
        /* A run of levels takes every pool thread that joins, whatever
         * the plan's width (its levels are the source's, not the plan's
         * layers). In a pool of one executor this thread runs it, until a
         * helper's deadline; otherwise it is in the run's team from the
         * launch, to its end (the dispatcher's launches: it plans only
         * once the run yielded) or to a helper's deadline. */
        if (pool->threads_n == 0) {
            if (mkrt__cpu_levels_run_alone(pool, b, b->until, tl_planning))
                pool->ran_inline = true;
            else
                pool->rest = b; /* the next settle or wait runs the rest */
            return MKRT_OK;
        }
        publish(pool, b, true);
        mkrt__cpu_levels_run(pool, b, b->until, tl_planning);
        return MKRT_OK;
    }
    if (b->plan.workers <= 1 || pool->threads_n == 0) {
        /* One participant (or one executor: the layers in order are a
         * valid run of any plan): this thread, until a helper's deadline. */
        const bool checked = b->user_ops > 0 || b->source->made;
        const bool whole = b->until == UINT64_MAX || !checked || b->exec_n <= INLINE_CHECKED_MAX;
        if (whole && run_from(pool, b, b->until)) {
            pool->ran_inline = true;
            return MKRT_OK;
        }
        if (pool->threads_n == 0) {
            pool->rest = b; /* the next settle or wait runs the rest */
            return MKRT_OK;
        }
        /* the first pool thread in runs the rest (the plan's one
         * participant), or the next holder (hold_close) */
    }
    publish(pool, b, false);
    /* The holder takes chunks of the open layer before it plans the next
     * batch (not a helper with a deadline: a chunk may hold user ops). */
    if (b->until == UINT64_MAX && b->plan.workers > 1)
        help(pool, b);
    return MKRT_OK;
}

/* The token's holder joins the launched run of levels, if it still runs
 * (a helper that launched it left at its deadline, its team may be empty),
 * until it ends or `until` passes. relaxed: only the holder writes launch. */
static void levels_join_held(mkrt__cpu_pool *pool, uint64_t until)
{
    mkrt__batch *b = pool->batch;
    if (b != NULL && b->levels && !batch_done(pool) &&
        mkrt__cpu_levels_join(pool, (uint32_t)atomic_load_explicit(&pool->launch, memory_order_relaxed), until)) {
        mkrt__cpu_levels_run(pool, b, until, tl_planning);
        units_flush(pool);
    }
}

/* A helper's look at the launched batch: done, or done by `until`. */
static bool settle_on(mkrt__backend *be, uint64_t until)
{
    mkrt__cpu_pool *pool = (mkrt__cpu_pool *)be;
    if (pool->rest != NULL) {
        if (!run_from(pool, pool->rest, until))
            return false;
        pool->rest = NULL;
        pool->ran_inline = true;
    }
    if (pool->ran_inline)
        return true;
    levels_join_held(pool, until);
    struct timespec ts;
    const struct timespec *deadline = mkrt__cpu_deadline(until, &ts);
    if (until == UINT64_MAX)
        return help_until_done(pool, deadline);
    return mkrt__spin_then_sleep(&pool->done_wq, batch_done, pool, deadline) != 0;
}

/* The timeout is not applied: a worker inside an op cannot be abandoned
 * (it shares the process's memory), so the pool waits for it, helping. */
static mkrt_status wait_on(mkrt__backend *be, uint64_t timeout_ns, const uint32_t **fails, uint32_t *nfails,
                           mkrt_error *err)
{
    (void)timeout_ns, (void)err;
    mkrt__cpu_pool *pool = (mkrt__cpu_pool *)be;
    if (pool->rest != NULL) {
        run_from(pool, pool->rest, UINT64_MAX);
        pool->rest = NULL;
        pool->ran_inline = true;
    }
    if (pool->ran_inline) {
        pool->ran_inline = false;
    } else {
        levels_join_held(pool, UINT64_MAX);
        help_until_done(pool, NULL);
    }
    uint32_t n = atomic_load_explicit(&pool->fails.count, memory_order_relaxed); /* after done */
    *fails = pool->fails.pairs;
    *nfails = n < pool->fails.capacity ? n : pool->fails.capacity;
    return MKRT_OK;
}

/* The holder's calls: what it ran of the batch itself counts as the
 * planner's (units_flush). */
static void holder_done(mkrt__cpu_pool *pool)
{
    units_flush(pool);
    tl_planning = false;
}

static mkrt_status cpu_launch(mkrt__backend *be, mkrt__batch *b, uint64_t append_limit, mkrt_error *err)
{
    tl_planning = true;
    const mkrt_status st = launch_on(be, b, append_limit, err);
    holder_done((mkrt__cpu_pool *)be);
    return st;
}

static bool cpu_settle(mkrt__backend *be, uint64_t until)
{
    tl_planning = true;
    const bool done = settle_on(be, until);
    holder_done((mkrt__cpu_pool *)be);
    return done;
}

static mkrt_status cpu_wait(mkrt__backend *be, uint64_t timeout_ns, const uint32_t **fails, uint32_t *nfails,
                            mkrt_error *err)
{
    tl_planning = true;
    const mkrt_status st = wait_on(be, timeout_ns, fails, nfails, err);
    holder_done((mkrt__cpu_pool *)be);
    return st;
}

typedef struct task_check {
    mkrt__cpu_pool *pool;
    uint32_t entered;
} task_check;

static int task_joined(void *p)
{
    const task_check *c = p;
    /* acquire: pairs with the release increments in task_enter. */
    return atomic_load_explicit(&c->pool->task_left, memory_order_acquire) == c->entered;
}

/* A planning task between batches (backend.h, run_task): fn on this
 * thread (executor 0) and on the pool threads that enter it while it is
 * open (task_enter). Once fn returned here the task closes; it then waits
 * only for the threads that entered (each is inside fn, on a CPU or
 * about to be), never for one that has yet to wake: a sleeping pool
 * thread cost every task its wake-up (150-840 us, bench/results/
 * megakernel.md) even where this thread had run every part. */
static bool cpu_run_task(mkrt__backend *be, void (*fn)(void *ctx, uint32_t executor), void *ctx)
{
    mkrt__cpu_pool *pool = (mkrt__cpu_pool *)be;
    if (pool->threads_n == 0 || pool->rest != NULL || !batch_done(pool))
        return false;
    pool->task_fn = fn;
    pool->task_ctx = ctx;
    /* relaxed: every increment of the last task was seen (task_joined's
     * acquire), and the release below publishes the 0 to the enterers. */
    atomic_store_explicit(&pool->task_left, 0, memory_order_relaxed);
    /* relaxed: only this thread changes the epoch. */
    const uint64_t epoch = (atomic_load_explicit(&pool->task_word, memory_order_relaxed) >> 32) + 1;
    /* release: pairs with the acquire of task_enter's CAS (task_fn,
     * task_ctx, task_left and ctx's state). */
    atomic_store_explicit(&pool->task_word, epoch << 32 | TASK_OPEN, memory_order_release);
    mkrt__waitq_notify(pool->wq);
    fn(ctx, 0);
    /* relaxed: the close and the entries are RMWs of one word, so the
     * count read here is every thread that got in, and none gets in
     * after; their writes come through task_left (acquire). */
    task_check c = {pool, (uint32_t)(atomic_fetch_and_explicit(&pool->task_word, ~TASK_OPEN,
                                                               memory_order_relaxed) &
                                     TASK_ENTERED_MASK)};
    (void)mkrt__spin_then_sleep(&pool->done_wq, task_joined, &c, NULL);
    return true;
}

static uint32_t cpu_executors(const mkrt__backend *be)
{
    return ((const mkrt__cpu_pool *)be)->workers;
}

static size_t threads_bytes(uint32_t n)
{
    return (size_t)(n ? n : 1) * (sizeof(mkrt__thread) + sizeof(worker_arg));
}

static size_t members_bytes(uint32_t threads_n)
{
    return ((size_t)threads_n + 1) * sizeof(member);
}

static void free_pool(mkrt__cpu_pool *pool)
{
    mkrt__free(pool->fails.pairs, 2 * (size_t)pool->fails.capacity * sizeof(uint32_t));
    mkrt__free(pool->threads, threads_bytes(pool->threads_n));
    mkrt__free(pool->members, members_bytes(pool->threads_n));
    mkrt__free(pool, sizeof *pool);
}

static bool cpu_stop(mkrt__backend *be, uint64_t timeout_ns)
{
    (void)timeout_ns;
    mkrt__cpu_pool *pool = (mkrt__cpu_pool *)be;
    /* release: pairs with the acquire loads of stop in the workers. */
    atomic_store_explicit(&pool->stop, true, memory_order_release);
    mkrt__waitq_notify(pool->wq);
    for (uint32_t i = 0; i < pool->threads_n; i++)
        mkrt__thread_join(pool->threads[i]);
    free_pool(pool);
    return true;
}

static void cpu_describe(const mkrt__backend *be, char *buf, size_t len)
{
    snprintf(buf, len, "cpu: %u workers", ((const mkrt__cpu_pool *)be)->workers);
}

static const mkrt__backend_ops cpu_ops = {
    .accepts = cpu_accepts,
    .prepare = cpu_prepare,
    .launch = cpu_launch,
    .wait = cpu_wait,
    .settle = cpu_settle,
    .stop = cpu_stop,
    .describe = cpu_describe,
    .run_task = cpu_run_task,
    .executors = cpu_executors,
    .serve = cpu_serve, /* a pool started with a roam only (the runtime's without a device) */
};

mkrt_status mkrt__cpu_pool_start(mkrt__state *sg, uint32_t workers, uint32_t max_batch, const mkrt__roam *roam,
                                 mkrt__backend **out, mkrt_error *err)
{
    workers = workers ? workers : 1;
    const uint32_t threads_n = workers - 1;
    mkrt__cpu_pool *pool = mkrt__alloc_zeroed(sizeof *pool, alignof(mkrt__cpu_pool));
    void *threads = mkrt__alloc_zeroed(threads_bytes(threads_n), alignof(max_align_t));
    member *members = mkrt__alloc_zeroed(members_bytes(threads_n), alignof(member));
    uint32_t *pairs = mkrt__alloc(2 * (size_t)max_batch * sizeof(uint32_t), alignof(uint32_t));
    if (pool == NULL || threads == NULL || members == NULL || pairs == NULL) {
        mkrt__free(pool, sizeof *pool);
        mkrt__free(threads, threads_bytes(threads_n));
        mkrt__free(members, members_bytes(threads_n));
        mkrt__free(pairs, 2 * (size_t)max_batch * sizeof(uint32_t));
        return mkrt__error_set(err, MKRT_ENOMEM,
                               "CPU backend could not allocate a pool of %u workers. Fix: use fewer "
                               "workers or free memory.",
                               workers);
    }
    pool->base = (mkrt__backend){.ops = &cpu_ops, .name = "cpu", .width = workers,
                                 .key = mkrt_device_key_cpu(), .is_cpu_pool = true};
    pool->state = sg;
    pool->workers = workers;
    pool->threads_n = threads_n;
    pool->roam = roam;
    pool->members = members;
    pool->members_n = threads_n + (roam != NULL ? 1u : 0u);
    pool->first_member = roam != NULL ? 0u : 1u;
    pool->wq = roam != NULL ? roam->wq : &pool->launch_wq;
    /* A pool thread spins for the next launch only where the CPUs hold
     * every executor (spin_wait.h): on fewer it would take a producer's. */
    pool->spin_cap_ns = mkrt__cpus_available() >= workers && workers > 1 ? MKRT__SPIN_BUDGET_NS : 0;
    mkrt__spin_budget_init(&pool->wait_spin);
    pool->threads = threads;
    pool->fails.pairs = pairs;
    pool->fails.capacity = max_batch;
    worker_arg *args = (worker_arg *)(pool->threads + (threads_n ? threads_n : 1));
    mkrt__waitq_init_symmetric(&pool->launch_wq);
    mkrt__waitq_init_symmetric(&pool->barrier_wq);
    mkrt__waitq_init(&pool->done_wq);
    for (uint32_t i = 0; i < threads_n; i++) {
        args[i] = (worker_arg){pool, i + 1};
        if (mkrt__thread_start(&pool->threads[i], worker_main, &args[i]) != 0) {
            atomic_store_explicit(&pool->stop, true, memory_order_release); /* as in cpu_stop */
            mkrt__waitq_notify(pool->wq);
            for (uint32_t j = 0; j < i; j++)
                mkrt__thread_join(pool->threads[j]);
            free_pool(pool);
            return mkrt__error_set(err, MKRT_ENOMEM,
                                   "CPU backend could not start worker %u of %u. Fix: raise the "
                                   "thread limit or use fewer workers.",
                                   i + 2, workers);
        }
    }
    *out = &pool->base;
    return MKRT_OK;
}

#ifdef MKRT_TEST_HOOKS
uint64_t mkrt__cpu_pool_task_entries(const mkrt__backend *be)
{
    /* relaxed: see task_enter; run_task's join orders it. */
    return atomic_load_explicit(&((const mkrt__cpu_pool *)be)->task_entries, memory_order_relaxed);
}

void mkrt__cpu_pool_task_deaf(mkrt__backend *be, bool deaf)
{
    /* relaxed: see task_waiting. */
    atomic_store_explicit(&((mkrt__cpu_pool *)be)->task_deaf, deaf, memory_order_relaxed);
}

uint64_t mkrt__cpu_pool_level_overlaps(const mkrt__backend *be)
{
    return atomic_load(&((const mkrt__cpu_pool *)be)->level_overlaps);
}

void mkrt__cpu_pool_reopen_gap(mkrt__backend *be, uint64_t ns)
{
    /* relaxed: see reopen_gap (cpu_levels.c). */
    atomic_store_explicit(&((mkrt__cpu_pool *)be)->reopen_gap_ns, ns, memory_order_relaxed);
}

void mkrt__cpu_pool_launch_deaf(mkrt__backend *be, bool deaf)
{
    /* relaxed: see run_launch. */
    atomic_store_explicit(&((mkrt__cpu_pool *)be)->launch_deaf, deaf, memory_order_relaxed);
}

uint64_t mkrt__cpu_pool_barriers(const mkrt__backend *be)
{
    /* relaxed: see barrier(); the caller drained first, which orders it. */
    return atomic_load_explicit(&((const mkrt__cpu_pool *)be)->barriers, memory_order_relaxed);
}
#endif
