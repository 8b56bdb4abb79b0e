/* SPDX-License-Identifier: BSD-2-Clause */
/* src/base/thread.h - threads and mutexes as the library uses them: C11
 * <threads.h>.
 *
 * One exception, for ThreadSanitizer builds only: glibc implements
 * thrd_create and mtx_lock by calling its internal pthread functions
 * directly, past the symbols TSan intercepts, so TSan neither registers
 * the thread (it crashes on the first access) nor sees the lock (it
 * reports the data the lock protects as racy). Under TSan these wrappers
 * therefore call the pthread functions, which C11 threads are built on. */
#ifndef MKRT_BASE_THREAD_H
#define MKRT_BASE_THREAD_H

#if defined(__SANITIZE_THREAD__)
#define MKRT__THREADS_PTHREAD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MKRT__THREADS_PTHREAD 1
#endif
#endif

#ifdef MKRT__THREADS_PTHREAD
#include <pthread.h> /* TSan builds only: see above */
typedef pthread_t mkrt__thread;
typedef pthread_mutex_t mkrt__mutex;
#else
#include <threads.h>
typedef thrd_t mkrt__thread;
typedef mtx_t mkrt__mutex;
#endif

typedef int (*mkrt__thread_fn)(void *arg);

#ifdef MKRT__THREADS_PTHREAD
typedef struct mkrt__thread_start_arg {
    mkrt__thread_fn fn;
    void *arg;
} mkrt__thread_start_arg;
#endif

/* Starts fn(arg) on a new thread: 0, or non-zero when no thread could be
 * created (the caller reports it). */
int mkrt__thread_start(mkrt__thread *t, mkrt__thread_fn fn, void *arg);
void mkrt__thread_join(mkrt__thread t);

/* A plain (non-recursive) mutex: 0 or non-zero from init. */
int mkrt__mutex_init(mkrt__mutex *m);
void mkrt__mutex_destroy(mkrt__mutex *m);
void mkrt__mutex_lock(mkrt__mutex *m);
void mkrt__mutex_unlock(mkrt__mutex *m);

#endif
