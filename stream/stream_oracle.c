/* SPDX-License-Identifier: BSD-2-Clause */
/* src/stream/stream_oracle.c - the from-scratch answers the incremental
 * results are checked against (tests, stress, soak, bench): a FIFO BFS, a
 * Dijkstra over (distance, vertex) pairs with lazy deletion, and union-find
 * for components. Written apart from stream_incr.c on purpose: it shares
 * no code with what it checks. */
#include <stdlib.h>

#include "base/alloc_internal.h"
#include "base/error_internal.h"
#include "stream/stream_internal.h"

typedef struct pair {
    uint64_t d;
    uint32_t v;
} pair;

static void heap_add(pair *h, size_t *n, pair p)
{
    size_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2].d > p.d) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = p;
}

static pair heap_take(pair *h, size_t *n)
{
    pair top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1].d < h[c].d)
            c++;
        if (h[c].d >= last.d)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = last;
    return top;
}

static uint32_t find(uint32_t *up, uint32_t v)
{
    while (up[v] != v) {
        up[v] = up[up[v]];
        v = up[v];
    }
    return v;
}

mkrt_status mkrt__soracle(const mkrt_stream *s, const mkrt_stream_query *q, uint64_t *out, mkrt_error *err)
{
    uint32_t n = s->n;
    if (q->kind == MKRT_STREAM_CC) {
        uint32_t *up = mkrt__alloc((size_t)n * sizeof *up, MKRT_CACHE_LINE);
        if (up == NULL)
            return mkrt__error_set(err, MKRT_ENOMEM, "mkrt_stream_recompute: no memory for %u vertices. Fix: "
                                                     "free memory", n);
        for (uint32_t v = 0; v < n; v++)
            up[v] = v;
        for (uint32_t v = 0; v < n; v++)
            for (uint32_t i = 0; i < s->adj[v].deg; i++) {
                uint32_t a = find(up, v), b = find(up, s->adj[v].e[i].to);
                if (a != b)
                    up[a < b ? b : a] = a < b ? a : b; /* the smaller stays the root */
            }
        for (uint32_t v = 0; v < n; v++)
            out[v] = find(up, v);
        mkrt__free(up, (size_t)n * sizeof *up);
        return MKRT_OK;
    }
    uint64_t m = 0;
    for (uint32_t v = 0; v < n; v++)
        m += s->adj[v].deg;
    pair *h = mkrt__alloc((m + 1) * sizeof *h, MKRT_CACHE_LINE);
    if (h == NULL)
        return mkrt__error_set(err, MKRT_ENOMEM, "mkrt_stream_recompute: no memory for %llu edges. Fix: free "
                                                 "memory", (unsigned long long)m);
    for (uint32_t v = 0; v < n; v++)
        out[v] = MKRT_STREAM_UNREACHED;
    size_t hn = 0;
    out[q->source] = 0;
    heap_add(h, &hn, (pair){0, q->source});
    while (hn > 0) {
        pair p = heap_take(h, &hn);
        if (p.d != out[p.v])
            continue;
        for (uint32_t i = 0; i < s->adj[p.v].deg; i++) {
            uint32_t y = s->adj[p.v].e[i].to;
            uint64_t d = p.d + (q->kind == MKRT_STREAM_BFS ? 1 : s->adj[p.v].e[i].w);
            if (d < out[y]) {
                out[y] = d;
                heap_add(h, &hn, (pair){d, y});
            }
        }
    }
    mkrt__free(h, (m + 1) * sizeof *h);
    return MKRT_OK;
}
