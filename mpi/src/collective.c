/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/src/collective.c - collectives the host asks for, run by the
 * progress thread (which keeps sending and receiving items meanwhile), and
 * the public ones built on them. */
#include <stdlib.h>

#include "mpi_internal.h"

mkrt_status mkrt__mpi_collective(struct mkrt_mpi *m, int kind, uint64_t *buf, int n,
                                 const char *what)
{
    /* One rank: a sum or a bitwise or over one rank is its own values
     * (the fault hook is for jobs of several ranks). */
    if (m->size == 1 && m->fault != MM_FAULT_COLL)
        return MKRT_OK;
    mkrt__mutex_lock(&m->coll_lock);
    m->coll_kind = kind;
    m->coll_buf = buf;
    m->coll_n = n;
    m->coll_what = what;
    m->coll_state = MM_POSTED;
    mkrt__cond_signal(&m->coll_post); /* an idle progress thread starts it now, not after its nap */
    while (m->coll_state != MM_DONE)
        mkrt__cond_wait(&m->coll_done, &m->coll_lock); /* the progress thread aborts rather than hang */
    m->coll_state = MM_IDLE;
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
