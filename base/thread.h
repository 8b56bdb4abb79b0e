/* SPDX-License-Identifier: BSD-2-Clause */
/* base/thread.h - threads, mutexes, condition variables, thread-specific
 * storage and one-time initialisation, as mkrt uses them everywhere (the
 * library, libmkrt_mpi, the tests, the stress programs, the benchmarks):
 * C11 <threads.h>.
 *
 * Header-only (static inline), so code that links only the exported API
 * (libmkrt_mpi, programs against libmkrt.so) can use it too.
 *
 * The one switch, for ThreadSanitizer builds only: glibc (2.36, Debian 12)
 * implements thrd_create, mtx_lock, cnd_wait and call_once by calling its
 * internal pthread functions directly, past the symbols TSan intercepts. TSan
 * then neither registers the thread nor sees the lock: the minimal program
 *
 *     mtx_t m; long n;  two thrd_create'd threads, each 100000 x
 *     { mtx_lock(&m); n++; mtx_unlock(&m); }
 *
 * built with `gcc -fsanitize=thread` (12.2) or `clang -fsanitize=thread`
 * (14) dies with "ThreadSanitizer: SEGV on unknown address" in the first
 * thread, while the same program on pthread_create/pthread_mutex_lock runs
 * clean. Under TSan these wrappers therefore call the pthread functions C11
 * threads are built on; every other build uses <threads.h>. */
#ifndef MKRT_BASE_THREAD_H
#define MKRT_BASE_THREAD_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#if defined(__SANITIZE_THREAD__)
#define MKRT__THREADS_PTHREAD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MKRT__THREADS_PTHREAD 1
#endif
#endif

typedef int (*mkrt__thread_fn)(void *arg);
typedef void (*mkrt__tss_dtor)(void *value);

#ifdef MKRT__THREADS_PTHREAD
#include <errno.h>
#include <pthread.h> /* TSan builds only: see above */
#include <sched.h>
/* The start function and its argument live in the thread object, which
 * therefore stays in place until joined (every user keeps it in the
 * structure or array it joins from): starting a thread allocates nothing. */
typedef struct mkrt__thread {
    pthread_t id;
    mkrt__thread_fn fn;
    void *arg;
} mkrt__thread;
typedef pthread_mutex_t mkrt__mutex;
typedef pthread_cond_t mkrt__cond;
typedef pthread_key_t mkrt__tss;
typedef pthread_once_t mkrt__once_flag;
#define MKRT__ONCE_INIT PTHREAD_ONCE_INIT

static inline void *mkrt__thread_trampoline(void *p)
{
    const mkrt__thread *t = p;
    return (void *)(intptr_t)t->fn(t->arg);
}

/* Starts fn(arg) on a new thread: 0, or non-zero when no thread could be
 * created (the caller reports it). */
static inline int mkrt__thread_start(mkrt__thread *t, mkrt__thread_fn fn, void *arg)
{
    t->fn = fn;
    t->arg = arg;
    return pthread_create(&t->id, NULL, mkrt__thread_trampoline, t);
}
/* Waits for t to end; its start function's return value, when res is not
 * NULL. */
static inline void mkrt__thread_join_result(mkrt__thread t, int *res)
{
    void *r = NULL;
    pthread_join(t.id, &r);
    if (res != NULL)
        *res = (int)(intptr_t)r;
}
static inline int mkrt__mutex_init(mkrt__mutex *m) { return pthread_mutex_init(m, NULL); }
static inline void mkrt__mutex_destroy(mkrt__mutex *m) { pthread_mutex_destroy(m); }
static inline void mkrt__mutex_lock(mkrt__mutex *m) { pthread_mutex_lock(m); }
static inline void mkrt__mutex_unlock(mkrt__mutex *m) { pthread_mutex_unlock(m); }
static inline int mkrt__cond_init(mkrt__cond *c) { return pthread_cond_init(c, NULL); }
static inline void mkrt__cond_destroy(mkrt__cond *c) { pthread_cond_destroy(c); }
static inline void mkrt__cond_wait(mkrt__cond *c, mkrt__mutex *m) { pthread_cond_wait(c, m); }
/* 0 when signalled (or spuriously woken), 1 when the TIME_UTC deadline
 * passed. */
static inline int mkrt__cond_timedwait(mkrt__cond *c, mkrt__mutex *m, const struct timespec *deadline_utc)
{
    return pthread_cond_timedwait(c, m, deadline_utc) == ETIMEDOUT ? 1 : 0;
}
static inline void mkrt__cond_signal(mkrt__cond *c) { pthread_cond_signal(c); }
static inline void mkrt__cond_broadcast(mkrt__cond *c) { pthread_cond_broadcast(c); }
static inline int mkrt__tss_create(mkrt__tss *k, mkrt__tss_dtor dtor) { return pthread_key_create(k, dtor); }
static inline void mkrt__tss_delete(mkrt__tss k) { pthread_key_delete(k); }
static inline void *mkrt__tss_get(mkrt__tss k) { return pthread_getspecific(k); }
static inline int mkrt__tss_set(mkrt__tss k, void *v) { return pthread_setspecific(k, v); }
static inline void mkrt__call_once(mkrt__once_flag *f, void (*fn)(void)) { pthread_once(f, fn); }
static inline void mkrt__thread_yield(void) { sched_yield(); }
#else
#include <threads.h>
typedef thrd_t mkrt__thread;
typedef mtx_t mkrt__mutex;
typedef cnd_t mkrt__cond;
typedef tss_t mkrt__tss;
typedef once_flag mkrt__once_flag;
#define MKRT__ONCE_INIT ONCE_FLAG_INIT

static inline int mkrt__thread_start(mkrt__thread *t, mkrt__thread_fn fn, void *arg)
{
    return thrd_create(t, fn, arg) == thrd_success ? 0 : -1;
}
static inline void mkrt__thread_join_result(mkrt__thread t, int *res) { thrd_join(t, res); }
static inline int mkrt__mutex_init(mkrt__mutex *m) { return mtx_init(m, mtx_plain) == thrd_success ? 0 : -1; }
static inline void mkrt__mutex_destroy(mkrt__mutex *m) { mtx_destroy(m); }
static inline void mkrt__mutex_lock(mkrt__mutex *m) { mtx_lock(m); }
static inline void mkrt__mutex_unlock(mkrt__mutex *m) { mtx_unlock(m); }
static inline int mkrt__cond_init(mkrt__cond *c) { return cnd_init(c) == thrd_success ? 0 : -1; }
static inline void mkrt__cond_destroy(mkrt__cond *c) { cnd_destroy(c); }
static inline void mkrt__cond_wait(mkrt__cond *c, mkrt__mutex *m) { cnd_wait(c, m); }
static inline int mkrt__cond_timedwait(mkrt__cond *c, mkrt__mutex *m, const struct timespec *deadline_utc)
{
    return cnd_timedwait(c, m, deadline_utc) == thrd_timedout ? 1 : 0;
}
static inline void mkrt__cond_signal(mkrt__cond *c) { cnd_signal(c); }
static inline void mkrt__cond_broadcast(mkrt__cond *c) { cnd_broadcast(c); }
static inline int mkrt__tss_create(mkrt__tss *k, mkrt__tss_dtor dtor)
{
    return tss_create(k, dtor) == thrd_success ? 0 : -1;
}
static inline void mkrt__tss_delete(mkrt__tss k) { tss_delete(k); }
static inline void *mkrt__tss_get(mkrt__tss k) { return tss_get(k); }
static inline int mkrt__tss_set(mkrt__tss k, void *v) { return tss_set(k, v) == thrd_success ? 0 : -1; }
static inline void mkrt__call_once(mkrt__once_flag *f, void (*fn)(void)) { call_once(f, fn); }
static inline void mkrt__thread_yield(void) { thrd_yield(); }
#endif

static inline void mkrt__thread_join(mkrt__thread t) { mkrt__thread_join_result(t, NULL); }

/* Sleeps for about ns nanoseconds (C11 thrd_sleep; nanosleep under TSan,
 * which needs no interception for it). */
static inline void mkrt__thread_sleep_ns(uint64_t ns)
{
    struct timespec d = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
#ifdef MKRT__THREADS_PTHREAD
    nanosleep(&d, NULL);
#else
    thrd_sleep(&d, NULL);
#endif
}

/* A deadline `ns` nanoseconds from now on TIME_UTC, for
 * mkrt__cond_timedwait. */
static inline struct timespec mkrt__deadline_after(uint64_t ns)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    uint64_t nsec = (uint64_t)ts.tv_nsec + ns % 1000000000u;
    ts.tv_sec += (time_t)(ns / 1000000000u + nsec / 1000000000u);
    ts.tv_nsec = (long)(nsec % 1000000000u);
    return ts;
}

/* A reusable barrier for `count` threads (C11 has none): mutex, condition
 * variable and a generation, so a thread that leaves one round cannot be
 * caught by the next. */
typedef struct mkrt__barrier {
    mkrt__mutex lock;
    mkrt__cond turn;
    unsigned count, waiting;
    unsigned long generation;
} mkrt__barrier;

static inline int mkrt__barrier_init(mkrt__barrier *b, unsigned count)
{
    b->count = count;
    b->waiting = 0;
    b->generation = 0;
    if (mkrt__mutex_init(&b->lock) != 0)
        return -1;
    if (mkrt__cond_init(&b->turn) != 0) {
        mkrt__mutex_destroy(&b->lock);
        return -1;
    }
    return 0;
}
static inline void mkrt__barrier_destroy(mkrt__barrier *b)
{
    mkrt__cond_destroy(&b->turn);
    mkrt__mutex_destroy(&b->lock);
}
/* Returns 1 in exactly one thread of each round (the last to arrive). */
static inline int mkrt__barrier_wait(mkrt__barrier *b)
{
    mkrt__mutex_lock(&b->lock);
    unsigned long gen = b->generation;
    if (++b->waiting == b->count) {
        b->waiting = 0;
        b->generation++;
        mkrt__cond_broadcast(&b->turn);
        mkrt__mutex_unlock(&b->lock);
        return 1;
    }
    while (gen == b->generation)
        mkrt__cond_wait(&b->turn, &b->lock);
    mkrt__mutex_unlock(&b->lock);
    return 0;
}

#endif
