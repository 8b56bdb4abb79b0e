/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/graph/send.c - arrivals leaving a rank: sent to their owners
 * through the layer's outboxes, and counted per destination rank and,
 * for SSSP's, per window of their distance (the next round's plan,
 * sssp.c). Below engine.c's BFS scan and sssp.c's CHUNK op, which both
 * send. */
#include "mpig_state.h"

/* Sends staged arrivals; what an outbox refuses is queued as RESEND
 * items. Returns the status and whether an outbox was full. */
mkrt_status mkrt__mpig_flush(const mkrt_mpi_graph *e, const mkrt_op_ctx *ctx, const mkrt_item *stage,
                       size_t n, bool *full)
{
    size_t done = 0;
    mkrt_status st = mkrt_mpi_op_emit(e->mpi, ctx, stage, n, &done);
    mkrt__mpig_count_sent(e, stage, done);
    if (st != MKRT_EAGAIN)
        return st;
    *full = true;
    return mkrt_op_emit(ctx, stage + done, n - done);
}

/* The window of distance x from arr_base (the last counts every farther one). */
static unsigned bin_of(const mkrt_mpi_graph *e, uint64_t x)
{
    const uint64_t b = x > e->arr_base ? (x - e->arr_base) / e->delta : 0;
    return b < MPIG_BINS - 1 ? (unsigned)b : MPIG_BINS - 1;
}

void mkrt__mpig_count_sent(const mkrt_mpi_graph *e, const mkrt_item *it, size_t n)
{
    /* Runs of one owner (rows are sorted): one add per run. */
    for (size_t i = 0; i < n;) {
        const int r = e->own_n > 0 ? (int)(it[i].out / e->block_k) : mkrt_mpi_owner(e->mpi, it[i].out);
        size_t k = i + 1;
        while (k < n && (e->own_n > 0 ? (int)(it[k].out / e->block_k)
                                      : mkrt_mpi_owner(e->mpi, it[k].out)) == r)
            k++;
        /* Relaxed: read by the host after the runtime's quiescence. */
        atomic_fetch_add_explicit(&e->sent_to[r], k - i, memory_order_relaxed);
        i = k;
    }
    for (size_t i = 0; i < n; i++)
        if (it[i].op == OP_SETTLE) /* relaxed, as above */
            atomic_fetch_add_explicit(&e->arr_bins[bin_of(e, it[i].param & ~ARRIVE)], 1,
                                      memory_order_relaxed);
}
