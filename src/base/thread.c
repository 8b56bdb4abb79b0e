/* SPDX-License-Identifier: BSD-2-Clause */
/* src/base/thread.c - see thread.h. */
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/alloc_internal.h"
#include "base/thread.h"

#ifdef MKRT__THREADS_PTHREAD
/* TSan builds only (see thread.h): pthreads, which TSan intercepts. */
static void *start_trampoline(void *p)
{
    mkrt__thread_start_arg a = *(mkrt__thread_start_arg *)p;
    mkrt__free(p, sizeof a);
    return (void *)(intptr_t)a.fn(a.arg);
}

int mkrt__thread_start(mkrt__thread *t, mkrt__thread_fn fn, void *arg)
{
    mkrt__thread_start_arg *a = mkrt__alloc(sizeof *a, alignof(mkrt__thread_start_arg));
    if (a == NULL)
        return -1;
    *a = (mkrt__thread_start_arg){fn, arg};
    int rc = pthread_create(t, NULL, start_trampoline, a);
    if (rc != 0)
        mkrt__free(a, sizeof *a);
    return rc;
}

void mkrt__thread_join(mkrt__thread t)
{
    pthread_join(t, NULL);
}

int mkrt__mutex_init(mkrt__mutex *m)
{
    return pthread_mutex_init(m, NULL);
}

void mkrt__mutex_destroy(mkrt__mutex *m)
{
    pthread_mutex_destroy(m);
}

void mkrt__mutex_lock(mkrt__mutex *m)
{
    pthread_mutex_lock(m);
}

void mkrt__mutex_unlock(mkrt__mutex *m)
{
    pthread_mutex_unlock(m);
}
#else
int mkrt__thread_start(mkrt__thread *t, mkrt__thread_fn fn, void *arg)
{
    return thrd_create(t, fn, arg) == thrd_success ? 0 : -1;
}

void mkrt__thread_join(mkrt__thread t)
{
    thrd_join(t, NULL);
}

int mkrt__mutex_init(mkrt__mutex *m)
{
    return mtx_init(m, mtx_plain) == thrd_success ? 0 : -1;
}

void mkrt__mutex_destroy(mkrt__mutex *m)
{
    mtx_destroy(m);
}

void mkrt__mutex_lock(mkrt__mutex *m)
{
    mtx_lock(m);
}

void mkrt__mutex_unlock(mkrt__mutex *m)
{
    mtx_unlock(m);
}
#endif
