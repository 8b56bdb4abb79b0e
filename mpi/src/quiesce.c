/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/src/quiesce.c - global quiescence: termination detection by counting
 * in waves.
 *
 * Every rank counts `sent` (items put into its outboxes, counted before
 * they can leave) and `received` (items from other ranks, counted after
 * they are published into its runtime), so at every moment the global sum
 * of received is at most the sum of sent, and they are equal exactly when
 * no item is in an outbox, in MPI, or in a receive buffer.
 *
 * A wave: each rank waits for its runtime to be quiescent (up to a slice),
 * then contributes (sent, received, busy, expired) to an allreduce, where
 * busy says the runtime was not quiescent or an item arrived during the
 * wait (received read before and after mkrt_quiesce()). The job is done
 * after two consecutive waves with no rank busy, sum(sent) == sum(received),
 * and the same sums in both (the four-counter rule): the counts are
 * monotone, so equal sums mean no rank's counts changed between its two
 * contributions; all ranks were idle at their first ones, nothing arrived
 * after, and at the moment the last first contribution was made every
 * item sent had been received and run. Every rank sees the same sums, so
 * all stop at the same wave. Busy ranks still join a wave after every
 * slice: a live rank never keeps the others waiting longer than a slice
 * plus one op, which is what lets wait_timeout_ms catch dead ranks. */
#include <time.h>

#include "mpi_internal.h"

/* How long a rank waits for its runtime before joining the next wave. */
#define SLICE_NS 20000000u

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

mkrt_status mkrt_mpi_quiesce(mkrt_mpi *m, uint64_t timeout_ns)
{
    if (m == NULL)
        return mkrt__mpi_fail(NULL, MKRT_EINVAL, "mkrt_mpi_quiesce: m is NULL. Fix: pass the "
                              "layer (on every rank).");
    const uint64_t start = mono_ns();
    uint64_t prev_sent = 0, prev_recv = 0;
    int prev_ok = 0;
    for (;;) {
        uint64_t r0 = atomic_load(&m->received);
        uint64_t slice = SLICE_NS;
        mkrt_status st = mkrt_quiesce(m->rt, slice);
        uint64_t w[5];
        w[0] = atomic_load(&m->sent);
        w[1] = atomic_load(&m->received);
        w[2] = (st != MKRT_OK || w[1] != r0) ? 1 : 0; /* busy */
        w[3] = (timeout_ns != MKRT_TIMEOUT_INFINITE && mono_ns() - start >= timeout_ns) ? 1 : 0;
        w[4] = (st != MKRT_OK && st != MKRT_ETIMEDOUT) ? 1 : 0; /* a runtime stopped */
        atomic_fetch_add_explicit(&m->waves, 1, memory_order_relaxed); /* statistic only */
        mkrt__mpi_collective(m, MM_COLL_SUM, w, 5, "a quiescence wave (mkrt_mpi_quiesce)");
        if (w[4] > 0)
            return MKRT_ECLOSED;
        int ok = w[2] == 0 && w[0] == w[1];
        if (ok && prev_ok && w[0] == prev_sent && w[1] == prev_recv)
            return MKRT_OK;
        if (w[3] > 0)
            return MKRT_ETIMEDOUT;
        prev_ok = ok;
        prev_sent = w[0];
        prev_recv = w[1];
    }
}
