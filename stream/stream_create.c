/* SPDX-License-Identifier: BSD-2-Clause */
/* src/stream/stream_create.c - a stream's life: its configuration, creation
 * (the adjacency, the repair scratch, the queries and their two published
 * copies), the first load of edges, the CSR export and the destruction. */
#include <string.h>

#include "base/alloc_internal.h"
#include "base/error_internal.h"
#include "stream/stream_internal.h"

mkrt_stream_config mkrt_stream_config_default(void)
{
    mkrt_stream_config c;
    memset(&c, 0, sizeof c);
    c.weight_max = 255;
    c.op_base = 4000;
    return c;
}

static mkrt_status check_config(const mkrt_stream_config *c, mkrt_error *err)
{
    if (c->vertices < 2 || c->vertices > (1u << 31))
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_stream_create: vertices is %u, outside 2..2^31. Fix: set "
                                                 "mkrt_stream_config::vertices to the graph's vertex count",
                               c->vertices);
    if (c->weight_max < 1 || c->weight_max > MKRT_STREAM_WEIGHT_LIMIT)
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_stream_create: weight_max is %u, outside 1..%u. Fix: "
                                                 "choose a largest weight in that range",
                               c->weight_max, MKRT_STREAM_WEIGHT_LIMIT);
    if (c->op_base < MKRT_OP_USER_FIRST || c->op_base > MKRT_OP_MAX - MKRT_STREAM_OPS)
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_stream_create: op_base is %u, outside %u..%u. Fix: pick "
                                                 "%u free user op numbers in that range",
                               c->op_base, MKRT_OP_USER_FIRST, MKRT_OP_MAX - MKRT_STREAM_OPS, MKRT_STREAM_OPS);
    if (c->queries < 1 || c->queries > MKRT_STREAM_QUERIES_MAX)
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_stream_create: queries is %u, outside 1..%u. Fix: list "
                                                 "the standing queries in mkrt_stream_config::query",
                               c->queries, MKRT_STREAM_QUERIES_MAX);
    if (c->apply_threads > MKRT_STREAM_APPLY_THREADS_MAX)
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_stream_create: apply_threads is %u, above %u. Fix: use "
                                                 "at most one thread per CPU, up to %u",
                               c->apply_threads, MKRT_STREAM_APPLY_THREADS_MAX, MKRT_STREAM_APPLY_THREADS_MAX);
    for (uint32_t k = 0; k < c->queries; k++) {
        const mkrt_stream_query *q = &c->query[k];
        if (q->kind != MKRT_STREAM_BFS && q->kind != MKRT_STREAM_SSSP && q->kind != MKRT_STREAM_CC)
            return mkrt__error_set(err, MKRT_EINVAL, "mkrt_stream_create: query %u has kind %d. Fix: use "
                                                     "MKRT_STREAM_BFS, MKRT_STREAM_SSSP or MKRT_STREAM_CC",
                                   k, (int)q->kind);
        if (q->kind != MKRT_STREAM_CC && q->source >= c->vertices)
            return mkrt__error_set(err, MKRT_EINVAL, "mkrt_stream_create: query %u's source %u is not below "
                                                     "the %u vertices. Fix: pick a source vertex of the graph",
                                   k, q->source, c->vertices);
    }
    return MKRT_OK;
}

void mkrt_stream_destroy(mkrt_stream *s)
{
    if (s == NULL)
        return;
    mkrt__spar_free(s);
    mkrt__sgraph_free(s);
    mkrt__sincr_free(s);
    for (uint32_t c = 0; c < MKRT__SLOG_CHUNKS; c++)
        /* relaxed: no op runs any more (the caller's promise). */
        mkrt__free(atomic_load_explicit(&s->chunk[c], memory_order_relaxed),
                   MKRT__SLOG_CHUNK * sizeof(mkrt__slog_entry));
    mkrt__free(s, sizeof *s);
}

mkrt_status mkrt_stream_create(const mkrt_stream_config *cfg, mkrt_stream **out, mkrt_error *err)
{
    if (out != NULL)
        *out = NULL;
    if (cfg == NULL || out == NULL)
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_stream_create: the %s is NULL. Fix: pass a configuration "
                                                 "from mkrt_stream_config_default and room for the stream",
                               cfg == NULL ? "configuration" : "output pointer");
    mkrt_status st = check_config(cfg, err);
    if (st != MKRT_OK)
        return st;
    mkrt_stream *s = mkrt__alloc_zeroed(sizeof *s, MKRT_CACHE_LINE);
    if (s == NULL)
        return mkrt__error_set(err, MKRT_ENOMEM, "mkrt_stream_create: no memory for the stream (%zu bytes). "
                                                 "Fix: free memory", sizeof *s);
    s->cfg = *cfg;
    s->n = cfg->vertices;
    if (mkrt__sgraph_init(s) != 0 || mkrt__sincr_init(s) != 0) {
        mkrt_stream_destroy(s);
        return mkrt__error_set(err, MKRT_ENOMEM, "mkrt_stream_create: no memory for %u vertices and %u queries. "
                                                 "Fix: free memory or use fewer vertices or queries",
                               cfg->vertices, cfg->queries);
    }
    if (mkrt__spar_init(s) != 0) {
        mkrt_stream_destroy(s);
        return mkrt__error_set(err, MKRT_ENOMEM, "mkrt_stream_create: could not start %u apply threads (or no "
                                                 "memory for their %u row counts). Fix: lower "
                                                 "mkrt_stream_config::apply_threads (0: the caller alone)",
                               cfg->apply_threads - 1, cfg->vertices);
    }
    mkrt__sview_publish_all(s, 0);
    *out = s;
    return MKRT_OK;
}

mkrt_status mkrt_stream_load(mkrt_stream *s, const uint32_t *src, const uint32_t *dst, const uint32_t *w,
                             size_t n, uint64_t *skipped, mkrt_error *err)
{
    if (s == NULL || (n > 0 && (src == NULL || dst == NULL)))
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_stream_load: the %s is NULL. Fix: pass the stream and "
                                                 "arrays of n edges", s == NULL ? "stream" : "edge array");
    /* relaxed: the caller promises nothing else runs on s. */
    if (atomic_load_explicit(&s->edges, memory_order_relaxed) != 0 ||
        atomic_load_explicit(&s->applies, memory_order_relaxed) != 0 ||
        atomic_load_explicit(&s->log_len, memory_order_relaxed) != 0)
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_stream_load: the stream already has edges or updates. "
                                                 "Fix: load once, before publishing updates");
    mkrt_status st = mkrt__sgraph_load(s, src, dst, w, n, skipped, err);
    if (st != MKRT_OK)
        return st;
    for (uint32_t k = 0; k < s->cfg.queries; k++)
        mkrt__sincr_full(s, k);
    mkrt__sview_publish_all(s, 0);
    return MKRT_OK;
}

mkrt_status mkrt_stream_csr(const mkrt_stream *s, uint64_t *offsets, uint32_t *targets, uint32_t *weights,
                            uint64_t cap, mkrt_error *err)
{
    if (s == NULL || offsets == NULL || targets == NULL)
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_stream_csr: a NULL argument. Fix: pass the stream, "
                                                 "offsets and targets");
    uint64_t need = 0;
    for (uint32_t v = 0; v < s->n; v++)
        need += s->adj[v].deg;
    if (cap < need)
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_stream_csr: room for %llu entries, the graph has %llu. "
                                                 "Fix: pass cap >= 2 x mkrt_stream_stats::edges",
                               (unsigned long long)cap, (unsigned long long)need);
    uint64_t at = 0;
    for (uint32_t v = 0; v < s->n; v++) {
        offsets[v] = at;
        for (uint32_t i = 0; i < s->adj[v].deg; i++, at++) {
            targets[at] = s->adj[v].e[i].to;
            if (weights != NULL)
                weights[at] = s->adj[v].e[i].w;
        }
    }
    offsets[s->n] = at;
    return MKRT_OK;
}

mkrt_status mkrt_stream_recompute(const mkrt_stream *s, uint32_t query, uint64_t *out, mkrt_error *err)
{
    if (s == NULL || out == NULL || query >= s->cfg.queries)
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_stream_recompute: %s. Fix: pass the stream, a query index "
                                                 "below its query count and room for its vertices",
                               s == NULL ? "the stream is NULL" : out == NULL ? "out is NULL" : "no such query");
    return mkrt__soracle(s, &s->cfg.query[query], out, err);
}
