/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/src/outbox.c - the bounded send buffers towards one rank (appending
 * side; the progress thread sends them, progress.c). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_internal.h"

/* Frees the arrays (NULL ones too) and zeroes the outbox. */
static void release(mm_outbox *o)
{
    mkrt__free(o->items, (size_t)o->buffers * o->batch * sizeof *o->items);
    mkrt__free(o->count, o->buffers * sizeof *o->count);
    mkrt__free(o->req, o->buffers * sizeof *o->req);
    mkrt__free(o->sealed_at, o->buffers * sizeof *o->sealed_at);
    memset(o, 0, sizeof *o);
}

int mkrt__mpi_outbox_init(mm_outbox *o, uint32_t buffers, uint32_t batch)
{
    memset(o, 0, sizeof *o);
    o->buffers = buffers;
    o->batch = batch;
    o->items = mkrt__alloc((size_t)buffers * batch * sizeof *o->items, MKRT_CACHE_LINE);
    o->count = mkrt__alloc_zeroed(buffers * sizeof *o->count, MKRT_CACHE_LINE);
    o->req = mkrt__alloc(buffers * sizeof *o->req, MKRT_CACHE_LINE);
    o->sealed_at = mkrt__alloc_zeroed(buffers * sizeof *o->sealed_at, MKRT_CACHE_LINE);
    if (o->items == NULL || o->count == NULL || o->req == NULL || o->sealed_at == NULL)
        goto fail;
    if (mkrt__mutex_init(&o->lock) != 0)
        goto fail;
    if (mkrt__cond_init(&o->room) != 0) {
        mkrt__mutex_destroy(&o->lock);
        goto fail;
    }
    for (uint32_t i = 0; i < buffers; i++)
        o->req[i] = MPI_REQUEST_NULL;
    return 0;
fail:
    release(o);
    return -1;
}

void mkrt__mpi_outbox_fini(mm_outbox *o)
{
    if (o->items == NULL)
        return;
    mkrt__mutex_destroy(&o->lock);
    mkrt__cond_destroy(&o->room);
    release(o);
}

/* Items that fit now (lock held). */
static uint64_t room(const struct mkrt_mpi *m, const mm_outbox *o)
{
    uint64_t used = o->sealed - o->done;
    if (used >= m->cfg.buffers)
        return 0;
    return (m->cfg.buffers - used) * (uint64_t)m->cfg.batch_items - o->fill_n;
}

/* Copies up to n items into the filling slots (lock held). */
static size_t put(struct mkrt_mpi *m, mm_outbox *o, const mkrt_item *items, size_t n)
{
    const uint32_t batch = m->cfg.batch_items, bufs = m->cfg.buffers;
    size_t put_n = 0;
    while (put_n < n && o->sealed - o->done < bufs) {
        uint32_t slot = (uint32_t)(o->sealed % bufs);
        size_t k = batch - o->fill_n;
        if (k > n - put_n)
            k = n - put_n;
        memcpy(o->items + (size_t)slot * batch + o->fill_n, items + put_n, k * sizeof *items);
        o->fill_n += k;
        put_n += k;
        if (o->fill_n == batch) { /* sealed: the progress thread sends it */
            o->count[slot] = batch;
            o->sealed_at[slot] = mkrt__mpi_now();
            o->sealed++;
            o->fill_n = 0;
        }
    }
    /* Counted before any of them can be received: the termination
     * detection needs sent >= received at every moment (quiesce.c). */
    atomic_fetch_add(&m->sent, put_n);
    return put_n;
}

size_t mkrt__mpi_outbox_append(struct mkrt_mpi *m, int dest, const mkrt_item *items, size_t n,
                               int all_or_nothing, uint64_t deadline_ns)
{
    mm_outbox *o = &m->out[dest];
    size_t done = 0;
    mkrt__mutex_lock(&o->lock);
    if (all_or_nothing) {
        if (room(m, o) >= n)
            done = put(m, o, items, n);
        mkrt__mutex_unlock(&o->lock);
        return done;
    }
    for (;;) {
        done += put(m, o, items + done, n - done);
        if (done == n || deadline_ns == 0 || atomic_load(&m->stop))
            break;
        /* Full: wait for a send to complete (backpressure). */
        atomic_fetch_add_explicit(&m->publish_waits, 1, memory_order_relaxed); /* statistic only */
        uint64_t now_ns = mkrt__mpi_now_ns();
        if (deadline_ns != UINT64_MAX && now_ns >= deadline_ns)
            break;
        /* Slices of at most 10 ms, to notice stop. The deadline is judged
         * on the monotonic clock above; only the slice is on TIME_UTC (C11
         * condition variables know no other clock), so a step of the wall
         * clock moves one slice, never the deadline. */
        uint64_t left = deadline_ns - now_ns;
        struct timespec ts = mkrt__deadline_after(left < 10000000u ? left : 10000000u);
        mkrt__cond_timedwait(&o->room, &o->lock, &ts);
    }
    mkrt__mutex_unlock(&o->lock);
    return done;
}
