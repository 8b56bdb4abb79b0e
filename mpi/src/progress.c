/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/src/progress.c - the progress thread: it makes the layer's MPI calls
 * while the layer runs, except the collectives (collective.c: the host
 * thread makes those, taking turns with the passes under mpi_lock). Each
 * pass sends sealed outbox slots, completes sends, and receives and
 * publishes items; a pass that did nothing sleeps a little (up to 200 us),
 * so an idle rank costs little on an oversubscribed machine. Waiting
 * longer than wait_timeout_ms for a peer ends the job (MPI_Abort). */
#include <stdarg.h>
#include <stdio.h>
#include <sched.h>
#include <time.h>

#include "mpi_internal.h"

int mkrt__mpi_test_fault;

uint64_t mkrt__mpi_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double mkrt__mpi_now(void)
{
    return (double)mkrt__mpi_now_ns() * 1e-9;
}

void mkrt__mpi_fatal(struct mkrt_mpi *m, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "mkrt_mpi: rank %d of %d: %s; ending the job (MPI_Abort)\n", m->rank, m->size,
            msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 70);
    /* MPI_Abort does not return; if an implementation did, do not go on. */
    for (;;)
        sched_yield();
}

void mkrt__mpi_check(struct mkrt_mpi *m, int rc, const char *call, int peer)
{
    if (rc == MPI_SUCCESS)
        return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error %d", rc);
    mkrt__mpi_fatal(m, "%s (peer rank %d) failed: %s", call, peer, text);
}

/* Sends and completions towards dest; returns whether anything moved. */
static int progress_out(struct mkrt_mpi *m, int dest, double now)
{
    mm_outbox *o = &m->out[dest];
    const uint32_t bufs = m->cfg.buffers, batch = m->cfg.batch_items;
    const double hold = m->cfg.hold_ms * 1e-3;
    int moved = 0;
    mkrt__mutex_lock(&o->lock);
    /* Nothing in flight: send the partial slot now rather than wait. */
    if (o->fill_n > 0 && o->posted == o->sealed && o->done == o->posted) {
        uint32_t slot = (uint32_t)(o->sealed % bufs);
        o->count[slot] = (uint32_t)o->fill_n;
        o->sealed_at[slot] = now;
        o->sealed++;
        o->fill_n = 0;
    }
    uint64_t sealed = o->sealed;
    mkrt__mutex_unlock(&o->lock);
    /* Slots done..sealed-1 are no appender's business: no lock needed. */
    while (o->posted < sealed) {
        uint32_t slot = (uint32_t)(o->posted % bufs);
        if (hold > 0 && now - o->sealed_at[slot] < hold)
            break;
        mkrt__mpi_check(m, MPI_Isend(o->items + (size_t)slot * batch, (int)(o->count[slot] * sizeof(mkrt_item)),
                           MPI_BYTE, dest, m->fault == MM_FAULT_SEND ? -MM_TAG_ITEMS : MM_TAG_ITEMS,
                           m->comm, &o->req[slot]),
              "MPI_Isend", dest);
        if (o->posted == o->done)
            o->oldest_post = now;
        o->posted++;
        moved = 1;
    }
    uint64_t done = o->done; /* only this thread writes done */
    while (done < o->posted) {
        int flag = 0;
        uint32_t slot = (uint32_t)(done % bufs);
        mkrt__mpi_check(m, MPI_Test(&o->req[slot], &flag, MPI_STATUS_IGNORE), "MPI_Test (send)", dest);
        if (!flag)
            break;
        done++;
        /* Statistics only (relaxed): count[slot] is stable until done moves past it. */
        const uint64_t bytes = (uint64_t)o->count[slot] * sizeof(mkrt_item);
        atomic_fetch_add_explicit(&m->msgs_sent, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&m->bytes_sent, bytes, memory_order_relaxed);
        atomic_fetch_add_explicit(&o->msgs_sent, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&o->bytes_sent, bytes, memory_order_relaxed);
        if (m->same_node[dest]) {
            atomic_fetch_add_explicit(&m->msgs_sent_node, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&m->bytes_sent_node, bytes, memory_order_relaxed);
        }
        o->oldest_post = now;
    }
    if (done != o->done) {
        mkrt__mutex_lock(&o->lock);
        o->done = done;
        mkrt__cond_broadcast(&o->room);
        mkrt__mutex_unlock(&o->lock);
        moved = 1;
    } else if (done < o->posted && now - o->oldest_post > m->cfg.wait_timeout_ms * 1e-3) {
        mkrt__mpi_fatal(m,
                        "a message to rank %d made no progress for %u ms (the rank died, hangs, or "
                        "its runtime stalled that long). Fix: restart the job; raise "
                        "mkrt_mpi_config::wait_timeout_ms if its ops legitimately run longer",
                        dest, m->cfg.wait_timeout_ms);
    }
    return moved;
}

/* Receives from src and publishes into the runtime; returns whether
 * anything moved. */
static int progress_in(struct mkrt_mpi *m, int src)
{
    mm_inbox *b = &m->in[src];
    int moved = 0;
    if (b->posted) {
        int flag = 0;
        MPI_Status st;
        mkrt__mpi_check(m, MPI_Test(&b->req, &flag, &st), "MPI_Test (receive)", src);
        if (!flag)
            return 0;
        int bytes = 0;
        mkrt__mpi_check(m, MPI_Get_count(&st, MPI_BYTE, &bytes), "MPI_Get_count", src);
        if (bytes < 0 || bytes % (int)sizeof(mkrt_item) != 0)
            mkrt__mpi_fatal(m, "a message from rank %d has %d bytes, not whole 16-byte items "
                               "(another program on the communicator?). Fix: give mkrt_mpi its own "
                               "MPI_COMM_WORLD", src, bytes);
        b->posted = 0;
        b->n = (size_t)bytes / sizeof(mkrt_item);
        b->off = 0;
        /* Statistics only (relaxed). */
        atomic_fetch_add_explicit(&m->msgs_received, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&m->bytes_received, (uint64_t)bytes, memory_order_relaxed);
        moved = 1;
        /* The receive hook applies the whole batch itself, or declines it. */
        if (b->n > 0 && m->cfg.deliver != NULL &&
            m->cfg.deliver(m->cfg.deliver_user, src, b->items, b->n)) {
            b->off = b->n;
            /* After the hook applied them: received <= sent holds at every moment. */
            atomic_fetch_add(&m->received, b->n);
            atomic_fetch_add_explicit(&m->delivered, b->n, memory_order_relaxed); /* statistic */
        }
    }
    if (b->off < b->n) {
        size_t k = mkrt_try_publish(b->prod, b->items + b->off, b->n - b->off);
        b->off += k;
        if (k > 0) {
            /* After the publish: received <= sent holds at every moment. */
            atomic_fetch_add(&m->received, k);
            moved = 1;
        }
    }
    if (b->off == b->n && !atomic_load(&m->stop)) {
        mkrt__mpi_check(m, MPI_Irecv(b->items, (int)(m->cfg.batch_items * sizeof(mkrt_item)), MPI_BYTE, src,
                           MM_TAG_ITEMS, m->comm, &b->req),
              "MPI_Irecv", src);
        b->posted = 1;
    }
    return moved;
}

int mkrt__mpi_progress_main(void *arg)
{
    struct mkrt_mpi *m = arg;
    unsigned idle = 0;
    for (;;) {
        double now = mkrt__mpi_now();
        int moved = 0;
        mkrt__mutex_lock(&m->mpi_lock); /* the host's collectives take turns with us */
        for (int r = 0; r < m->size; r++)
            if (r != m->rank)
                moved |= progress_out(m, r, now) | progress_in(m, r);
        mkrt__mutex_unlock(&m->mpi_lock);
        if (atomic_load(&m->stop))
            break; /* the host stops us only after a global quiescence */
        if (moved) {
            idle = 0;
            continue;
        }
        if (++idle < 16) {
            sched_yield();
            continue;
        }
        /* Idle: sleep 20..200 us, longer the longer nothing happens. */
        long ns = idle < 64 ? 20000 : 200000;
        struct timespec ts = {0, ns};
        nanosleep(&ts, NULL);
    }
    /* Global quiescence was reached: no item in flight, so every posted
     * receive is unmatched; cancel them. */
    for (int r = 0; r < m->size; r++) {
        if (r == m->rank || !m->in[r].posted)
            continue;
        mkrt__mpi_check(m, MPI_Cancel(&m->in[r].req), "MPI_Cancel", r);
        mkrt__mpi_check(m, MPI_Wait(&m->in[r].req, MPI_STATUS_IGNORE), "MPI_Wait (cancelled receive)", r);
        m->in[r].posted = 0;
    }
    /* After a global quiescence every item was received, so the last
     * sends complete; after a stopped runtime they may not: bounded. */
    const double t0 = mkrt__mpi_now();
    for (int r = 0; r < m->size; r++) {
        mm_outbox *o = &m->out[r];
        while (r != m->rank && o->done < o->posted) {
            int flag = 0;
            mkrt__mpi_check(m, MPI_Test(&o->req[o->done % m->cfg.buffers], &flag, MPI_STATUS_IGNORE),
                  "MPI_Test (send at shutdown)", r);
            if (flag) {
                o->done++;
                continue;
            }
            if (mkrt__mpi_now() - t0 > m->cfg.wait_timeout_ms * 1e-3)
                mkrt__mpi_fatal(m, "at shutdown, rank %d did not take a message for %u ms (its "
                                   "runtime stopped before mkrt_mpi_destroy(), or it died). Fix: "
                                   "destroy the runtimes after mkrt_mpi_destroy() on every rank",
                                r, m->cfg.wait_timeout_ms);
            sched_yield();
        }
    }
    return 0;
}
