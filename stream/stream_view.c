/* SPDX-License-Identifier: BSD-2-Clause */
/* src/stream/stream_view.c - the results readers see: two copies of every
 * query's values (left-right). The apply op writes the copy nobody reads
 * (the vertices it changed now and the ones it changed last time, which
 * that copy missed), then flips `front`; before it writes a copy it waits
 * until the readers that entered it have left. A reader counts itself in
 * on the front copy and checks that it is still the front (else it counts
 * itself out and tries again): it never waits for the writer, and it sees
 * one apply's results whole. The flip and the counts are seq_cst: the
 * reader's count-in then re-check and the writer's flip then count check
 * are a store-then-load pair on each side (Dekker), which needs it. */
#include <sched.h>

#include "base/error_internal.h"
#include "stream/stream_internal.h"

void mkrt__sview_publish(mkrt_stream *s, uint64_t position)
{
    /* relaxed: only this writer stores front. */
    uint32_t b = 1u - atomic_load_explicit(&s->front, memory_order_relaxed);
    for (unsigned spins = 0; atomic_load(&s->readers[b]) != 0; spins++)
        if (spins > 64)
            sched_yield();
    for (uint32_t k = 0; k < s->cfg.queries; k++) {
        mkrt__squery *q = &s->qs[k];
        uint64_t *c = q->copy[b];
        for (uint32_t i = 0; i < q->prev_n; i++)
            c[q->prev[i]] = q->val[q->prev[i]];
        for (uint32_t i = 0; i < q->cur_n; i++)
            c[q->cur[i]] = q->val[q->cur[i]];
        uint32_t *t = q->prev;
        q->prev = q->cur;
        q->prev_n = q->cur_n;
        q->cur = t;
        q->cur_n = 0;
    }
    s->copy_pos[b] = position;
    atomic_store(&s->front, b);
}

void mkrt__sview_publish_all(mkrt_stream *s, uint64_t position)
{
    for (uint32_t k = 0; k < s->cfg.queries; k++) {
        mkrt__squery *q = &s->qs[k];
        for (uint32_t v = 0; v < s->n; v++)
            q->copy[0][v] = q->copy[1][v] = q->val[v];
        q->cur_n = q->prev_n = 0;
    }
    s->copy_pos[0] = s->copy_pos[1] = position;
    atomic_store(&s->front, 0);
}

mkrt_status mkrt_stream_view_open(mkrt_stream *s, mkrt_stream_view *view)
{
    if (s == NULL || view == NULL)
        return MKRT_EINVAL;
    for (;;) {
        uint32_t i = atomic_load(&s->front);
        atomic_fetch_add(&s->readers[i], 1);
        if (atomic_load(&s->front) == i) {
            *view = (mkrt_stream_view){s, i, s->copy_pos[i]};
            return MKRT_OK;
        }
        atomic_fetch_sub(&s->readers[i], 1);
    }
}

void mkrt_stream_view_close(mkrt_stream_view *view)
{
    if (view == NULL || view->stream == NULL)
        return;
    atomic_fetch_sub(&view->stream->readers[view->copy], 1);
    view->stream = NULL;
}

mkrt_status mkrt_stream_view_read(const mkrt_stream_view *view, uint32_t query, uint32_t first, size_t count,
                                  uint64_t *out, mkrt_error *err)
{
    if (view == NULL || view->stream == NULL || (out == NULL && count > 0))
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_stream_view_read: %s. Fix: open the view with "
                                                 "mkrt_stream_view_open and pass room for count values",
                               view == NULL ? "the view is NULL" : view->stream == NULL ? "the view is closed"
                                                                                        : "out is NULL");
    mkrt_stream *s = view->stream;
    if (query >= s->cfg.queries || first > s->n || count > s->n - first) {
        atomic_fetch_add_explicit(&s->failed_queries, 1, memory_order_relaxed); /* relaxed: a counter */
        if (query >= s->cfg.queries)
            return mkrt__error_set(err, MKRT_EINVAL, "mkrt_stream_view_read: query %u does not exist (the "
                                                     "stream has %u). Fix: pass an index into "
                                                     "mkrt_stream_config::query", query, s->cfg.queries);
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_stream_view_read: vertices %u..%u+%zu are not all below "
                                                 "the stream's %u vertices. Fix: read vertices 0..%u",
                               first, first, count, s->n, s->n - 1);
    }
    const uint64_t *c = s->qs[query].copy[view->copy];
    for (size_t i = 0; i < count; i++)
        out[i] = c[first + i];
    return MKRT_OK;
}
