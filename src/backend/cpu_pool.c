/* SPDX-License-Identifier: BSD-2-Clause */
/* src/backend/cpu_pool.c - the persistent megakernel protocol on a worker pool.
 *
 * Workers are started once. For each batch the dispatcher publishes the
 * batch pointer and bumps `launch` (release); workers, spinning briefly
 * then sleeping on a futex, pick it up (acquire), and run it layer by
 * layer: inside a layer they claim chunks of items with one fetch-add on
 * the layer's cursor, so a slow worker never holds others up; between
 * layers a sense-free generation barrier (spin, then futex) makes every
 * write of layer L happen-before every read of layer L+1. The last worker
 * to finish the last layer sets `done` (release) and wakes the dispatcher.
 */
#include <stdio.h>
#include <string.h>

#include "base/error_internal.h"
#include "runtime/runtime_internal.h"

/* Spin this many times (a few microseconds) before sleeping: long enough
 * to catch the next layer or batch while it is being prepared, short enough
 * not to starve the dispatcher and producers on a small machine. */
#define SPIN_BEFORE_SLEEP 128

struct mkrt__cpu_pool {
    mkrt_runtime *rt;
    uint32_t workers;
    pthread_t *threads;
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t launch; /* batches launched; odd values never */
    mkrt__batch *batch;                               /* published by launch */
    _Atomic bool stop;
    mkrt__waitq launch_wq;
    alignas(MKRT_CACHE_LINE) _Atomic uint32_t arrived; /* barrier count */
    _Atomic uint32_t generation;                      /* barrier generation */
    mkrt__waitq barrier_wq;
    alignas(MKRT_CACHE_LINE) _Atomic uint32_t finished; /* workers done with the batch */
    _Atomic uint64_t done;                              /* batches completed */
};

/* Waits until *word != seen: spin, then sleep on wq. */
static void wait_change64(_Atomic uint64_t *word, uint64_t seen, mkrt__waitq *wq,
                          const _Atomic bool *stop)
{
    for (unsigned i = 0; i < SPIN_BEFORE_SLEEP; i++) {
        /* acquire: pairs with the release store that changes *word. */
        if (atomic_load_explicit(word, memory_order_acquire) != seen ||
            atomic_load_explicit(stop, memory_order_acquire))
            return;
        mkrt__cpu_relax();
    }
    for (;;) {
        uint32_t e = mkrt__waitq_prepare(wq);
        if (atomic_load_explicit(word, memory_order_acquire) != seen ||
            atomic_load_explicit(stop, memory_order_acquire)) {
            mkrt__waitq_finish(wq);
            return;
        }
        mkrt__waitq_sleep(wq, e, NULL);
        mkrt__waitq_finish(wq);
    }
}

static void barrier(mkrt__cpu_pool *pool)
{
    /* acquire: see the generation before arriving, so a fast worker that
     * already passed cannot be confused with the next round. */
    uint32_t gen = atomic_load_explicit(&pool->generation, memory_order_acquire);
    /* acq_rel: the release half publishes this worker's layer writes to
     * the last arriver; the acquire half gives the last arriver everyone's. */
    if (atomic_fetch_add_explicit(&pool->arrived, 1, memory_order_acq_rel) + 1 == pool->workers) {
        atomic_store_explicit(&pool->arrived, 0, memory_order_relaxed); /* ordered by the release below */
        /* release: pairs with the acquire loads of generation by waiters. */
        atomic_store_explicit(&pool->generation, gen + 1, memory_order_release);
        mkrt__waitq_notify(&pool->barrier_wq);
        return;
    }
    for (unsigned i = 0; i < SPIN_BEFORE_SLEEP; i++) {
        if (atomic_load_explicit(&pool->generation, memory_order_acquire) != gen)
            return;
        mkrt__cpu_relax();
    }
    for (;;) {
        uint32_t e = mkrt__waitq_prepare(&pool->barrier_wq);
        if (atomic_load_explicit(&pool->generation, memory_order_acquire) != gen) {
            mkrt__waitq_finish(&pool->barrier_wq);
            return;
        }
        mkrt__waitq_sleep(&pool->barrier_wq, e, NULL);
        mkrt__waitq_finish(&pool->barrier_wq);
    }
}

static void run_batch(mkrt__cpu_pool *pool, mkrt__batch *b)
{
    for (size_t l = 0; l < b->layers; l++) {
        uint32_t from = b->layer_offsets[l], len = b->layer_offsets[l + 1] - from;
        for (;;) {
            /* relaxed: the cursor only hands out disjoint ranges; the items
             * and cells are ordered by launch and the barriers. */
            uint32_t start = atomic_fetch_add_explicit(&b->cursors[l], b->chunk, memory_order_relaxed);
            if (start >= len)
                break;
            uint32_t end = len - start < b->chunk ? len : start + b->chunk;
            mkrt__exec_range(pool->rt, b, from + start, from + end);
        }
        if (l + 1 < b->layers)
            barrier(pool);
    }
    /* acq_rel: the last finisher acquires every worker's writes and
     * releases them to the dispatcher through `done`. */
    if (atomic_fetch_add_explicit(&pool->finished, 1, memory_order_acq_rel) + 1 == pool->workers) {
        atomic_store_explicit(&pool->finished, 0, memory_order_relaxed); /* ordered by `done` */
        /* release: pairs with the acquire load in mkrt__cpu_pool_done. */
        atomic_fetch_add_explicit(&pool->done, 1, memory_order_release);
        mkrt__waitq_notify(&pool->rt->work_wq);
    }
}

typedef struct worker_arg {
    mkrt__cpu_pool *pool;
} worker_arg;

static void *worker_main(void *p)
{
    mkrt__cpu_pool *pool = p;
    uint64_t seen = 0;
    for (;;) {
        wait_change64(&pool->launch, seen, &pool->launch_wq, &pool->stop);
        if (atomic_load_explicit(&pool->stop, memory_order_acquire))
            return NULL;
        seen++;
        run_batch(pool, pool->batch);
    }
}

mkrt_status mkrt__cpu_pool_start(mkrt_runtime *rt, uint32_t workers, mkrt__cpu_pool **out,
                                 mkrt_error *err)
{
    mkrt__cpu_pool *pool = mkrt__alloc_zeroed(sizeof *pool, alignof(mkrt__cpu_pool));
    pthread_t *threads = mkrt__alloc_zeroed(workers * sizeof *threads, alignof(pthread_t));
    if (pool == NULL || threads == NULL) {
        mkrt__free(pool, sizeof *pool);
        mkrt__free(threads, workers * sizeof *threads);
        return mkrt__error_set(err, MKRT_ENOMEM,
                               "CPU backend could not allocate a pool of %u workers. Fix: use fewer "
                               "workers or free memory.",
                               workers);
    }
    pool->rt = rt;
    pool->workers = workers;
    pool->threads = threads;
    mkrt__waitq_init_symmetric(&pool->launch_wq);
    mkrt__waitq_init_symmetric(&pool->barrier_wq);
    for (uint32_t i = 0; i < workers; i++) {
        int rc = pthread_create(&threads[i], NULL, worker_main, pool);
        if (rc != 0) {
            atomic_store_explicit(&pool->stop, true, memory_order_release);
            mkrt__waitq_notify(&pool->launch_wq);
            for (uint32_t j = 0; j < i; j++)
                pthread_join(threads[j], NULL);
            mkrt__free(threads, workers * sizeof *threads);
            mkrt__free(pool, sizeof *pool);
            return mkrt__error_set(err, MKRT_ENOMEM,
                                   "CPU backend could not start worker %u of %u (pthread_create: "
                                   "%d). Fix: raise the thread limit or use fewer workers.",
                                   i + 1, workers, rc);
        }
    }
    *out = pool;
    return MKRT_OK;
}

void mkrt__cpu_pool_launch(mkrt__cpu_pool *pool, mkrt__batch *b)
{
    pool->batch = b;
    /* release: pairs with the acquire in wait_change64; publishes the batch
     * (items, offsets, zeroed cursors) and everything before the launch. */
    atomic_fetch_add_explicit(&pool->launch, 1, memory_order_release);
    mkrt__waitq_notify(&pool->launch_wq);
}

bool mkrt__cpu_pool_done(mkrt__cpu_pool *pool)
{
    /* acquire: pairs with the release increment in run_batch. */
    return atomic_load_explicit(&pool->done, memory_order_acquire) ==
           atomic_load_explicit(&pool->launch, memory_order_relaxed); /* only the dispatcher writes launch */
}

void mkrt__cpu_pool_stop(mkrt__cpu_pool *pool)
{
    if (pool == NULL)
        return;
    /* release: pairs with the acquire loads of stop in the workers. */
    atomic_store_explicit(&pool->stop, true, memory_order_release);
    mkrt__waitq_notify(&pool->launch_wq);
    for (uint32_t i = 0; i < pool->workers; i++)
        pthread_join(pool->threads[i], NULL);
    mkrt__free(pool->threads, pool->workers * sizeof *pool->threads);
    mkrt__free(pool, sizeof *pool);
}
