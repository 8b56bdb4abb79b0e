/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/src/collective.c - collectives the host asks for, started and
 * tested on the host's thread (taking turns with the progress thread's
 * passes, which keep sending and receiving items meanwhile), and the
 * public ones built on them. */
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "mpi_internal.h"

mkrt_status mkrt__mpi_collective(struct mkrt_mpi *m, int kind, uint64_t *buf, int n,
                                 const char *what)
{
    /* One rank: a sum or a bitwise or over one rank is its own values
     * (the fault hook is for jobs of several ranks). */
    if (m->size == 1 && m->fault != MM_FAULT_COLL)
        return MKRT_OK;
    mkrt__mutex_lock(&m->coll_lock); /* one collective at a time */
    const int count = m->fault == MM_FAULT_COLL ? -n : n;
    MPI_Request req;
    mkrt__mutex_lock(&m->mpi_lock);
    if (kind == MM_COLL_SUM)
        mkrt__mpi_check(m, MPI_Iallreduce(MPI_IN_PLACE, buf, count, MPI_UINT64_T, MPI_SUM, m->comm,
                                          &req),
                        "MPI_Iallreduce", -1);
    else
        mkrt__mpi_check(m, MPI_Ireduce(m->rank == 0 ? MPI_IN_PLACE : buf, buf, count, MPI_UINT64_T,
                                       MPI_BOR, 0, m->comm, &req),
                        "MPI_Ireduce", -1);
    mkrt__mutex_unlock(&m->mpi_lock);
    /* Test it on this thread (no hand-off to the progress thread and back):
     * yield between tests at first, then nap 10 us, so a rank that waits
     * for a slow peer leaves the CPU to the others. */
    const double start = mkrt__mpi_now();
    for (unsigned spins = 0;; spins++) {
        int flag = 0;
        mkrt__mutex_lock(&m->mpi_lock);
        mkrt__mpi_check(m, MPI_Test(&req, &flag, MPI_STATUS_IGNORE), "MPI_Test (collective)", -1);
        if (!flag && mkrt__mpi_now() - start > m->cfg.wait_timeout_ms * 1e-3)
            mkrt__mpi_fatal(m,  /* with mpi_lock held: MPI_Abort is an MPI call */
                            "%s waited %u ms for the other ranks to join (a rank died, hangs, or "
                            "skipped the collective call). Fix: every rank must make the same "
                            "collective calls; raise mkrt_mpi_config::wait_timeout_ms if a rank "
                            "legitimately needs longer",
                            what, m->cfg.wait_timeout_ms);
        mkrt__mutex_unlock(&m->mpi_lock);
        if (flag)
            break;
        if (spins < 64) {
            sched_yield();
        } else {
            struct timespec ts = {0, 10000};
            nanosleep(&ts, NULL);
        }
    }
    mkrt__mutex_unlock(&m->coll_lock);
    return MKRT_OK;
}

mkrt_status mkrt_mpi_allreduce_sum(mkrt_mpi *m, uint64_t *values, size_t n)
{
    if (m == NULL || (values == NULL && n > 0) || n > INT32_MAX)
        return mkrt__mpi_fail(NULL, MKRT_EINVAL, "mkrt_mpi_allreduce_sum: %s (n = %zu, at most "
                              "%d). Fix: pass the layer and n values, the same n on every rank.",
                              m == NULL ? "m is NULL" : n > INT32_MAX ? "n is too large"
                                                                      : "values is NULL",
                              n, INT32_MAX);
    if (n == 0)
        return MKRT_OK;
    return mkrt__mpi_collective(m, MM_COLL_SUM, values, (int)n, "mkrt_mpi_allreduce_sum");
}

mkrt_status mkrt_mpi_gather_cells(mkrt_mpi *m, uint32_t first, uint32_t count, uint64_t *out)
{
    if (m == NULL || out == NULL)
        return mkrt__mpi_fail(NULL, MKRT_EINVAL, "mkrt_mpi_gather_cells: %s is NULL. Fix: pass "
                              "the layer and room for count values.", m == NULL ? "m" : "out");
    if (count > INT32_MAX || first > m->cfg.handles || count > m->cfg.handles - first)
        return mkrt__mpi_fail(NULL, MKRT_EINVAL, "mkrt_mpi_gather_cells: first %u + count %u is "
                              "past the layer's %u handles (or count is above %d). Fix: a range "
                              "within 0..%u, the same on every rank.", first, count,
                              m->cfg.handles, INT32_MAX, m->cfg.handles);
    if (count == 0)
        return MKRT_OK;
    mkrt_status st = mkrt_cells_read(m->rt, first, count, out);
    if (st != MKRT_OK)
        return st; /* every rank reads the same range: a failure is everyone's */
    for (uint32_t i = 0; i < count; i++)
        if (mkrt__mpi_owner(m, first + i) != m->rank)
            out[i] = 0; /* the owner's value wins the bitwise or */
    return mkrt__mpi_collective(m, MM_COLL_BOR_ROOT0, out, (int)count, "mkrt_mpi_gather_cells");
}
