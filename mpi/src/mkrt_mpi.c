/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/src/mkrt_mpi.c - routing (publish, op_emit) and counters; the life
 * cycle is lifecycle.c. */

#include "mpi_internal.h"

int mkrt_mpi_rank(const mkrt_mpi *m)
{
    return m == NULL ? -1 : m->rank;
}

int mkrt_mpi_size(const mkrt_mpi *m)
{
    return m == NULL ? 0 : m->size;
}

/* Items from i on with the same owner as items[i]. */
static size_t run_length(const struct mkrt_mpi *m, const mkrt_item *items, size_t i, size_t n,
                         int *owner)
{
    *owner = mkrt__mpi_owner(m, items[i].out);
    size_t j = i + 1;
    while (j < n && mkrt__mpi_owner(m, items[j].out) == *owner)
        j++;
    return j - i;
}

/* On the monotonic clock: a step of the wall clock neither ends the wait
 * early nor stretches it (outbox.c). */
static uint64_t publish_deadline(uint64_t timeout_ns)
{
    if (timeout_ns == 0)
        return 0;
    if (timeout_ns == MKRT_TIMEOUT_INFINITE)
        return UINT64_MAX;
    uint64_t now = mkrt__mpi_now_ns();
    return timeout_ns > UINT64_MAX - 1 - now ? UINT64_MAX : now + timeout_ns;
}

mkrt_status mkrt_mpi_publish(mkrt_mpi *m, mkrt_producer *p, const mkrt_item *items, size_t n,
                             uint64_t timeout_ns, size_t *published, mkrt_error *err)
{
    if (published != NULL)
        *published = 0;
    if (m == NULL || p == NULL || (items == NULL && n > 0))
        return mkrt__mpi_fail(err, MKRT_EINVAL, "mkrt_mpi_publish: %s (n = %zu). Fix: pass the "
                              "layer, a producer of its runtime and the items.",
                              m == NULL ? "m is NULL" : p == NULL ? "p is NULL" : "items is NULL",
                              n);
    const uint64_t deadline = publish_deadline(timeout_ns);
    size_t done = 0;
    mkrt_status st = MKRT_OK;
    while (done < n && st == MKRT_OK) {
        int owner;
        size_t len = run_length(m, items, done, n, &owner), k = 0;
        if (owner == m->rank) {
            st = mkrt_publish_some(p, items + done, len, timeout_ns, &k, err);
        } else {
            k = mkrt__mpi_outbox_append(m, owner, items + done, len, 0, deadline);
            if (k < len)
                st = mkrt__mpi_fail(err, atomic_load(&m->stop) ? MKRT_ECLOSED : MKRT_ETIMEDOUT,
                          "mkrt_mpi_publish: the outbox to rank %d stayed full (%u buffers of %u "
                          "items); %zu of %zu items went. Fix: a longer timeout, or more buffers.",
                          owner, m->cfg.buffers, m->cfg.batch_items, done + k, n);
        }
        done += k;
    }
    if (published != NULL)
        *published = done;
    return st;
}

/* Whether ctx is the context of an op running now on m's runtime: the
 * core refuses a context that is not a live op's (mkrt_op_ctx_check(),
 * a generation check), and a runtime with fewer cells than the global
 * handles cannot be m's (mkrt_mpi_create() refuses it). */
static mkrt_status check_ctx(const struct mkrt_mpi *m, const mkrt_op_ctx *ctx)
{
    mkrt_error why = {0};
    if (mkrt_op_ctx_check(ctx, &why) != MKRT_OK)
        return mkrt__mpi_fail(NULL, MKRT_EINVAL, "mkrt_mpi_op_emit: %s", why.message);
    if (ctx->cell_count < m->cfg.handles)
        return mkrt__mpi_fail(NULL, MKRT_EINVAL, "mkrt_mpi_op_emit: ctx has %u cells, fewer than "
                              "the layer's %u handles: it is not an op's context of this layer's "
                              "runtime. Fix: pass the ctx your op was called with, and the layer "
                              "made over its runtime.", ctx->cell_count, m->cfg.handles);
    return MKRT_OK;
}

mkrt_status mkrt_mpi_op_emit(mkrt_mpi *m, const mkrt_op_ctx *ctx, const mkrt_item *items, size_t n,
                             size_t *emitted)
{
    if (emitted != NULL)
        *emitted = 0;
    if (m == NULL || ctx == NULL || (items == NULL && n > 0))
        return mkrt__mpi_fail(NULL, MKRT_EINVAL, "mkrt_mpi_op_emit: %s (n = %zu). Fix: pass the "
                              "layer, the op's ctx and the items.",
                              m == NULL ? "m is NULL" : ctx == NULL ? "ctx is NULL" : "items is NULL",
                              n);
    mkrt_status st = check_ctx(m, ctx);
    if (st != MKRT_OK)
        return st;
    size_t done = 0;
    while (done < n) {
        int owner;
        size_t len = run_length(m, items, done, n, &owner);
        if (owner == m->rank) {
            st = mkrt_op_emit(ctx, items + done, len);
            if (st != MKRT_OK)
                return st; /* EOVERFLOW: flow control, no message (see the header) */
        } else if (mkrt__mpi_outbox_append(m, owner, items + done, len, 1, 0) != len) {
            atomic_fetch_add_explicit(&m->deferred, 1, memory_order_relaxed); /* statistic only */
            return MKRT_EAGAIN;
        }
        done += len;
        if (emitted != NULL)
            *emitted = done;
    }
    return MKRT_OK;
}

mkrt_status mkrt_mpi_stats_read(const mkrt_mpi *m, mkrt_mpi_stats *out)
{
    if (m == NULL || out == NULL)
        return mkrt__mpi_fail(NULL, MKRT_EINVAL, "mkrt_mpi_stats_read: %s is NULL. Fix: pass the "
                              "layer and where to put the counters.", m == NULL ? "m" : "out");
    struct mkrt_mpi *w = (struct mkrt_mpi *)m; /* atomics are read only */
    out->forwarded = atomic_load(&w->sent);
    out->received = atomic_load(&w->received);
    /* Statistics: relaxed, no ordering with anything. */
    out->messages_sent = atomic_load_explicit(&w->msgs_sent, memory_order_relaxed);
    out->messages_received = atomic_load_explicit(&w->msgs_received, memory_order_relaxed);
    out->deferred = atomic_load_explicit(&w->deferred, memory_order_relaxed);
    out->publish_waits = atomic_load_explicit(&w->publish_waits, memory_order_relaxed);
    out->waves = atomic_load_explicit(&w->waves, memory_order_relaxed);
    out->bytes_sent = atomic_load_explicit(&w->bytes_sent, memory_order_relaxed);
    out->bytes_received = atomic_load_explicit(&w->bytes_received, memory_order_relaxed);
    out->bytes_sent_node = atomic_load_explicit(&w->bytes_sent_node, memory_order_relaxed);
    out->messages_sent_node = atomic_load_explicit(&w->msgs_sent_node, memory_order_relaxed);
    out->delivered = atomic_load_explicit(&w->delivered, memory_order_relaxed);
    return MKRT_OK;
}

mkrt_status mkrt_mpi_peer_sent(const mkrt_mpi *m, int dest, uint64_t *bytes, uint64_t *messages)
{
    if (m == NULL || dest < 0 || dest >= m->size)
        return mkrt__mpi_fail(NULL, MKRT_EINVAL, "mkrt_mpi_peer_sent: %s (dest %d of %d ranks). "
                              "Fix: pass the layer and a rank 0..ranks-1.",
                              m == NULL ? "m is NULL" : "dest is not a rank", dest,
                              m == NULL ? 0 : m->size);
    struct mkrt_mpi *w = (struct mkrt_mpi *)m; /* atomics are read only */
    /* Statistics: relaxed; this rank's own outbox is unused (zeros). */
    if (bytes != NULL)
        *bytes = dest == m->rank ? 0
                                 : atomic_load_explicit(&w->out[dest].bytes_sent, memory_order_relaxed);
    if (messages != NULL)
        *messages = dest == m->rank
                        ? 0
                        : atomic_load_explicit(&w->out[dest].msgs_sent, memory_order_relaxed);
    return MKRT_OK;
}
