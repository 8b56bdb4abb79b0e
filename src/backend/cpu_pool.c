/* SPDX-License-Identifier: BSD-2-Clause */
/* src/backend/cpu_pool.c - the CPU backend: a persistent worker pool that
 * runs a batch the way the plan says.
 *
 * Workers are started once. A batch whose plan gives it one participant
 * (plan.workers == 1) runs on the calling (dispatcher) thread at launch:
 * no hand-off, no barrier; a helping waiter that calls launch stops at its
 * deadline, between items, and worker 0 runs the rest (run_inline). Otherwise the launch publishes the batch and
 * bumps `launch` (release); workers pick it up (acquire). Workers at or
 * above plan.workers sit the batch out, but still count themselves
 * finished, so that no worker is left reading a batch the next launch
 * replaces. In layer l, workers below
 * plan.participants[l] claim chunks of plan.chunk items with one
 * fetch-add on the layer's cursor, so a slow worker never holds others
 * up. Between layers, a generation barrier over the batch's workers makes
 * every write of layer L happen-before every read of layer L+1; where
 * the plan says one participant runs both layers (worker 0), there is no
 * barrier: program order suffices. The last worker to finish sets `done`
 * (release) and wakes the waiter. Failures of user ops go to the pool's
 * failure list, which wait() returns.
 *
 * How wide a batch runs is the plan's (pipeline/batch_planner.c): the CPUs
 * producers leave free bound the workers of a default-sized pool, and a
 * layer of built-in ops gets a second participant only when each gets
 * WAKE's share_min (plan/decide.h), so narrow layers, and runs of them between
 * wide ones, run on one thread with no barrier. The caller of launch and
 * wait is whoever holds the dispatch token (pipeline/dispatcher.c): the
 * dispatcher thread or a helping waiter, one at a time.
 */
#include <stdalign.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backend/cpu_pool.h"
#include "base/alloc_internal.h"
#include "base/error_internal.h"
#include "base/spin_wait.h"
#include "base/thread.h"
#include "ops/op_table.h"
#include "plan/source.h"

typedef struct cpu_pool {
    mkrt__backend base; /* first: the pool is its backend */
    mkrt__state *state; /* what the ops run against (state/state.h) */
    uint32_t workers;
    mkrt__thread *threads;
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t launch; /* batches launched */
    mkrt__batch *batch;                               /* published by launch */
    _Atomic bool stop;
    mkrt__waitq launch_wq;
    alignas(MKRT_CACHE_LINE) _Atomic uint32_t arrived; /* barrier count */
    _Atomic uint32_t generation;                      /* barrier generation */
    mkrt__waitq barrier_wq;
    alignas(MKRT_CACHE_LINE) _Atomic uint32_t finished; /* workers done with the batch */
    _Atomic uint64_t done;                              /* batches completed */
    mkrt__waitq done_wq;
    mkrt__fail_list fails;
    bool ran_inline;    /* the last launch ran on the caller's thread */
#ifdef MKRT_TEST_HOOKS
    _Atomic uint64_t barriers; /* test hook: cross-thread barriers completed */
#endif
} cpu_pool;

typedef struct worker_arg {
    cpu_pool *pool;
    uint32_t index;
} worker_arg;

typedef struct seen_check {
    cpu_pool *pool;
    uint64_t seen;
} seen_check;

static int launched_or_stopping(void *p)
{
    const seen_check *c = p;
    /* acquire: pairs with the release increment in launch (the batch and
     * its plan), and with the release store of stop. */
    return atomic_load_explicit(&c->pool->launch, memory_order_acquire) != c->seen ||
           atomic_load_explicit(&c->pool->stop, memory_order_acquire);
}

typedef struct gen_check {
    cpu_pool *pool;
    uint32_t gen;
} gen_check;

static int generation_moved(void *p)
{
    const gen_check *c = p;
    /* acquire: pairs with the last arriver's release of generation. */
    return atomic_load_explicit(&c->pool->generation, memory_order_acquire) != c->gen;
}

/* Every one of the batch's `n` workers arrives; the last releases all. */
static void barrier(cpu_pool *pool, uint32_t n)
{
    /* acquire: see the generation before arriving, so a fast worker that
     * already passed cannot be confused with the next round. */
    gen_check c = {pool, atomic_load_explicit(&pool->generation, memory_order_acquire)};
    /* acq_rel: the release half publishes this worker's layer writes to
     * the last arriver; the acquire half gives the last arriver everyone's. */
    if (atomic_fetch_add_explicit(&pool->arrived, 1, memory_order_acq_rel) + 1 == n) {
        atomic_store_explicit(&pool->arrived, 0, memory_order_relaxed); /* ordered by the release below */
#ifdef MKRT_TEST_HOOKS
        /* relaxed: a test's statistic, read after the batch completed
         * (the completion's release/acquire orders it). */
        atomic_fetch_add_explicit(&pool->barriers, 1, memory_order_relaxed);
#endif
        /* release: pairs with the acquire loads in generation_moved. */
        atomic_store_explicit(&pool->generation, c.gen + 1, memory_order_release);
        mkrt__waitq_notify(&pool->barrier_wq);
        return;
    }
    mkrt__spin_then_sleep(&pool->barrier_wq, generation_moved, &c, NULL);
}

/* Worker `w` of the batch's plan.workers runs its share of every layer. */
/* Items [from, to) of b: ops on the pool's state group, or a made
 * source's items, which its source runs (plan/source.h). */
static inline void run_range(cpu_pool *pool, const mkrt__batch *b, size_t from, size_t to)
{
    if (b->source->made)
        b->source->run(b->source->ctx, b->exec, from, to, &pool->fails);
    else
        mkrt__exec_range(pool->state, b->exec, from, to, &pool->fails);
}

static void run_share(cpu_pool *pool, mkrt__batch *b, uint32_t w)
{
    const mkrt__batch_plan *plan = &b->plan;
    for (size_t l = 0; l < b->layers; l++) {
        uint32_t from = b->layer_offsets[l], len = b->layer_offsets[l + 1] - from;
        if (w < plan->participants[l]) {
            for (;;) {
                /* relaxed: the cursor only hands out disjoint ranges; the
                 * items and cells are ordered by launch and the barriers. */
                uint32_t start = atomic_fetch_add_explicit(&b->cursors[l], plan->chunk, memory_order_relaxed);
                if (start >= len)
                    break;
                uint32_t end = len - start < plan->chunk ? len : start + plan->chunk;
                run_range(pool, b, from + start, from + end);
            }
        }
        if (mkrt__plan_grid_barrier_after(plan, l, b->layers))
            barrier(pool, plan->workers);
    }
}

static void finish_share(cpu_pool *pool, uint32_t n)
{
    /* acq_rel: the last finisher acquires every worker's writes and
     * releases them to the waiter through `done`. */
    if (atomic_fetch_add_explicit(&pool->finished, 1, memory_order_acq_rel) + 1 == n) {
        atomic_store_explicit(&pool->finished, 0, memory_order_relaxed); /* ordered by `done` */
        /* release: pairs with the acquire load in batch_done. */
        atomic_fetch_add_explicit(&pool->done, 1, memory_order_release);
        mkrt__waitq_notify(&pool->done_wq);
    }
}

static int worker_main(void *p)
{
    worker_arg a = *(worker_arg *)p;
    cpu_pool *pool = a.pool;
    seen_check c = {pool, 0};
    for (;;) {
        mkrt__spin_then_sleep(&pool->launch_wq, launched_or_stopping, &c, NULL);
        /* acquire: pairs with the release store in cpu_stop. */
        if (atomic_load_explicit(&pool->stop, memory_order_acquire))
            return 0;
        c.seen++;
        mkrt__batch *b = pool->batch;
        if (a.index < b->plan.workers)
            run_share(pool, b, a.index);
        /* Every worker, in the batch or not, finishes it: `done` then
         * means no worker still reads this launch's batch pointer, which
         * the next launch overwrites. */
        finish_share(pool, pool->workers);
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
 * helper's thread at all: worker 0 runs it (one wake-up), and the helper
 * waits for it until its deadline (cpu_settle). */
#define INLINE_STRIDE_BUILTIN 256u
#define INLINE_CHECKED_MAX 256u

/* Worker 0 is to run b from item k of layer l on (the cursors say where;
 * relaxed: published to it by the launch, release). */
static void hand_off(mkrt__batch *b, size_t l, uint32_t k)
{
    for (size_t j = 0; j < b->layers; j++)
        atomic_store_explicit(&b->cursors[j],
                              j < l ? b->layer_offsets[j + 1] - b->layer_offsets[j]
                                    : j == l ? k - b->layer_offsets[l] : 0,
                              memory_order_relaxed);
}

/* Runs a one-participant batch on this thread, layer by layer, in program
 * order. With a deadline it looks at the clock between items (see above)
 * and, once the deadline passed, stops and sets the cursors so that
 * worker 0 runs exactly the rest, in the same order (the plan gives every
 * layer one participant: no barrier). Returns whether it ran everything. */
static bool run_inline(cpu_pool *pool, mkrt__batch *b)
{
    const uint64_t until = b->until;
    if (until == UINT64_MAX) {
        for (size_t l = 0; l < b->layers; l++)
            run_range(pool, b, b->layer_offsets[l], b->layer_offsets[l + 1]);
        return true;
    }
    const bool checked = b->user_ops > 0 || b->source->made;
    if (checked && b->exec_n > INLINE_CHECKED_MAX) {
        hand_off(b, 0, 0);
        return false;
    }
    const uint32_t stride = checked ? 1u : INLINE_STRIDE_BUILTIN;
    for (size_t l = 0; l < b->layers; l++) {
        const uint32_t to = b->layer_offsets[l + 1];
        for (uint32_t k = b->layer_offsets[l]; k < to;) {
            if (mkrt__now_ns() >= until) {
                hand_off(b, l, k);
                return false;
            }
            uint32_t end = to - k < stride ? to : k + stride;
            run_range(pool, b, k, end);
            k = end;
        }
    }
    return true;
}

static mkrt_status cpu_launch(mkrt__backend *be, mkrt__batch *b, uint64_t append_limit, mkrt_error *err)
{
    (void)append_limit; /* admission reserved the room of every APPEND */
    (void)err;
    cpu_pool *pool = (cpu_pool *)be;
    /* relaxed: the failure list is read by wait after `done` (acquire). */
    atomic_store_explicit(&pool->fails.count, 0, memory_order_relaxed);
    if (b->plan.workers <= 1) {
        /* One participant: this thread (dispatcher-only flag: the workers
         * never see it), or past a helper's deadline worker 0 for the rest
         * (its cursors are set). */
        if (run_inline(pool, b)) {
            pool->ran_inline = true;
            return MKRT_OK;
        }
    } else {
        for (size_t l = 0; l < b->layers; l++)
            atomic_store_explicit(&b->cursors[l], 0, memory_order_relaxed); /* published by launch */
    }
    pool->batch = b;
    /* release: pairs with the acquire in launched_or_stopping; publishes
     * the batch, its plan and zeroed cursors. */
    atomic_fetch_add_explicit(&pool->launch, 1, memory_order_release);
    mkrt__waitq_notify(&pool->launch_wq);
    return MKRT_OK;
}

static int batch_done(void *p)
{
    cpu_pool *pool = p;
    /* acquire: pairs with the release increment in finish_share. relaxed:
     * only the waiting thread writes launch. */
    return atomic_load_explicit(&pool->done, memory_order_acquire) ==
           atomic_load_explicit(&pool->launch, memory_order_relaxed);
}

/* A helper's look at the launched batch: done, or done by `until`. */
static bool cpu_settle(mkrt__backend *be, uint64_t until)
{
    cpu_pool *pool = (cpu_pool *)be;
    if (pool->ran_inline)
        return true;
    struct timespec ts;
    const struct timespec *deadline = NULL;
    if (until != UINT64_MAX) {
        ts.tv_sec = (time_t)(until / 1000000000u);
        ts.tv_nsec = (long)(until % 1000000000u);
        deadline = &ts;
    }
    return mkrt__spin_then_sleep(&pool->done_wq, batch_done, pool, deadline) != 0;
}

/* The timeout is not applied: a worker inside an op cannot be abandoned
 * (it shares the process's memory), so the pool waits for it. */
static mkrt_status cpu_wait(mkrt__backend *be, uint64_t timeout_ns, const uint32_t **fails,
                            uint32_t *nfails, mkrt_error *err)
{
    (void)timeout_ns, (void)err;
    cpu_pool *pool = (cpu_pool *)be;
    if (pool->ran_inline)
        pool->ran_inline = false;
    else
        mkrt__spin_then_sleep(&pool->done_wq, batch_done, pool, NULL);
    uint32_t n = atomic_load_explicit(&pool->fails.count, memory_order_relaxed); /* after done */
    *fails = pool->fails.pairs;
    *nfails = n < pool->fails.capacity ? n : pool->fails.capacity;
    return MKRT_OK;
}

static void free_pool(cpu_pool *pool)
{
    mkrt__free(pool->fails.pairs, 2 * (size_t)pool->fails.capacity * sizeof(uint32_t));
    mkrt__free(pool->threads, pool->workers * (sizeof(mkrt__thread) + sizeof(worker_arg)));
    mkrt__free(pool, sizeof *pool);
}

static bool cpu_stop(mkrt__backend *be, uint64_t timeout_ns)
{
    (void)timeout_ns;
    cpu_pool *pool = (cpu_pool *)be;
    /* release: pairs with the acquire loads of stop in the workers. */
    atomic_store_explicit(&pool->stop, true, memory_order_release);
    mkrt__waitq_notify(&pool->launch_wq);
    for (uint32_t i = 0; i < pool->workers; i++)
        mkrt__thread_join(pool->threads[i]);
    free_pool(pool);
    return true;
}

static void cpu_describe(const mkrt__backend *be, char *buf, size_t len)
{
    snprintf(buf, len, "cpu: %u workers", ((const cpu_pool *)be)->workers);
}

static const mkrt__backend_ops cpu_ops = {
    .accepts = cpu_accepts,
    .prepare = cpu_prepare,
    .launch = cpu_launch,
    .wait = cpu_wait,
    .settle = cpu_settle,
    .stop = cpu_stop,
    .describe = cpu_describe,
};

mkrt_status mkrt__cpu_pool_start(mkrt__state *sg, uint32_t workers, uint32_t max_batch,
                                 mkrt__backend **out, mkrt_error *err)
{
    cpu_pool *pool = mkrt__alloc_zeroed(sizeof *pool, alignof(cpu_pool));
    void *threads = mkrt__alloc_zeroed(workers * (sizeof(mkrt__thread) + sizeof(worker_arg)),
                                       alignof(max_align_t));
    uint32_t *pairs = mkrt__alloc(2 * (size_t)max_batch * sizeof(uint32_t), alignof(uint32_t));
    if (pool == NULL || threads == NULL || pairs == NULL) {
        mkrt__free(pool, sizeof *pool);
        mkrt__free(threads, workers * (sizeof(mkrt__thread) + sizeof(worker_arg)));
        mkrt__free(pairs, 2 * (size_t)max_batch * sizeof(uint32_t));
        return mkrt__error_set(err, MKRT_ENOMEM,
                               "CPU backend could not allocate a pool of %u workers. Fix: use fewer "
                               "workers or free memory.",
                               workers);
    }
    pool->base = (mkrt__backend){.ops = &cpu_ops, .name = "cpu", .width = workers, .key = mkrt_device_key_cpu(),
                                 .is_cpu_pool = true};
    pool->state = sg;
    pool->workers = workers;
    pool->threads = threads;
    pool->fails.pairs = pairs;
    pool->fails.capacity = max_batch;
    worker_arg *args = (worker_arg *)(pool->threads + workers);
    mkrt__waitq_init_symmetric(&pool->launch_wq);
    mkrt__waitq_init_symmetric(&pool->barrier_wq);
    mkrt__waitq_init(&pool->done_wq);
    for (uint32_t i = 0; i < workers; i++) {
        args[i] = (worker_arg){pool, i};
        if (mkrt__thread_start(&pool->threads[i], worker_main, &args[i]) != 0) {
            atomic_store_explicit(&pool->stop, true, memory_order_release); /* as in cpu_stop */
            mkrt__waitq_notify(&pool->launch_wq);
            for (uint32_t j = 0; j < i; j++)
                mkrt__thread_join(pool->threads[j]);
            free_pool(pool);
            return mkrt__error_set(err, MKRT_ENOMEM,
                                   "CPU backend could not start worker %u of %u. Fix: raise the "
                                   "thread limit or use fewer workers.",
                                   i + 1, workers);
        }
    }
    *out = &pool->base;
    return MKRT_OK;
}

#ifdef MKRT_TEST_HOOKS
uint64_t mkrt__cpu_pool_barriers(const mkrt__backend *be)
{
    /* relaxed: see barrier(); the caller drained first, which orders it. */
    return atomic_load_explicit(&((const cpu_pool *)be)->barriers, memory_order_relaxed);
}
#endif
