/* SPDX-License-Identifier: BSD-2-Clause */
/* src/stream/stream_ops.c - the stream's three ops and the update log.
 *
 * Insert and delete check their item, enter the gate (shared), arm the
 * apply item if none is armed, change the adjacency under the endpoint
 * locks, write their log entry, and leave. The apply op enters the gate
 * alone (it waits for the updates inside; updates arriving meanwhile wait
 * for it), disarms, repairs the results from the log (stream_incr.c, or
 * stream_par.c on several threads), publishes them (stream_view.c),
 * empties the log and leaves. An update
 * arms while inside the gate, so every logged entry is either taken by an
 * apply that enters after it left, or armed an apply of its own: after
 * mkrt_quiesce() (which waits for emitted items) the log is empty. */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc_internal.h"
#include "base/error_internal.h"
#include "stream/stream_internal.h"

static void describe(const mkrt_stream *s, const mkrt_item *it, mkrt_status why, char *buf, size_t len);

static void gate_enter(mkrt_stream *s)
{
    for (unsigned spins = 0;; spins++) {
        uint32_t g = atomic_load_explicit(&s->gate, memory_order_relaxed);
        /* acquire on success: pairs with the release in gate_close, so an
         * update sees the adjacency and log as the apply op left them. */
        if ((g & MKRT__SGATE_WRITER) == 0 &&
            atomic_compare_exchange_weak_explicit(&s->gate, &g, g + 1, memory_order_acquire, memory_order_relaxed))
            return;
        if (spins > 64)
            sched_yield();
    }
}

static void gate_leave(mkrt_stream *s)
{
    /* release: pairs with the acquire in gate_open, so the apply op sees
     * this update's adjacency change and log entry. */
    atomic_fetch_sub_explicit(&s->gate, 1, memory_order_release);
}

static void gate_open(mkrt_stream *s)
{
    /* Two writers may compete (the apply op and mkrt_stream_apply): the
     * writer bit is taken by CAS. acquire on success: pairs with the
     * release in the last writer's gate_close (its repaired state). */
    for (unsigned spins = 0;; spins++) {
        uint32_t g = atomic_load_explicit(&s->gate, memory_order_relaxed);
        if ((g & MKRT__SGATE_WRITER) == 0 &&
            atomic_compare_exchange_weak_explicit(&s->gate, &g, g | MKRT__SGATE_WRITER, memory_order_acquire,
                                                  memory_order_relaxed))
            break;
        if (spins > 64)
            sched_yield();
    }
    for (unsigned spins = 0;
         (atomic_load_explicit(&s->gate, memory_order_acquire) & ~MKRT__SGATE_WRITER) != 0; spins++)
        if (spins > 64) /* acquire above: pairs with gate_leave's release */
            sched_yield();
}

static void gate_close(mkrt_stream *s)
{
    /* release: pairs with gate_enter's acquire (the repaired state). */
    atomic_fetch_and_explicit(&s->gate, ~MKRT__SGATE_WRITER, memory_order_release);
}

/* Inside the gate: makes sure an apply item is armed. */
static mkrt_status arm(mkrt_stream *s, const mkrt_op_ctx *ctx)
{
    for (;;) {
        /* relaxed: the arming state is read and written inside the gate,
         * whose acquire/release orders it against the apply op. */
        uint32_t a = atomic_load_explicit(&s->arm, memory_order_relaxed);
        if (a == MKRT__SARM_ARMED)
            return MKRT_OK;
        if (a == MKRT__SARM_IDLE && atomic_compare_exchange_weak_explicit(&s->arm, &a, MKRT__SARM_EMITTING,
                                                                          memory_order_relaxed, memory_order_relaxed)) {
            mkrt_item it = {s->cfg.op_base + MKRT__SOP_APPLY, 0, 0, 0};
            mkrt_status st = mkrt_op_emit(ctx, &it, 1);
            atomic_store_explicit(&s->arm, st == MKRT_OK ? MKRT__SARM_ARMED : MKRT__SARM_IDLE, memory_order_relaxed);
            return st;
        }
        sched_yield(); /* another update is emitting: it decides in a moment */
    }
}

/* A slot of the log for one entry; NULL when the log is full (*why
 * MKRT_EOVERFLOW) or its chunk cannot be had (MKRT_ENOMEM). */
static mkrt__slog_entry *log_slot(mkrt_stream *s, mkrt_status *why)
{
    uint64_t i = atomic_fetch_add_explicit(&s->log_len, 1, memory_order_relaxed); /* relaxed: inside the gate */
    uint64_t c = i / MKRT__SLOG_CHUNK;
    if (c >= MKRT__SLOG_CHUNKS) {
        atomic_fetch_sub_explicit(&s->log_len, 1, memory_order_relaxed); /* relaxed: inside the gate */
        *why = MKRT_EOVERFLOW;
        return NULL;
    }
    /* acquire: pairs with the release CAS below (the chunk's memory). */
    mkrt__slog_entry *ch = atomic_load_explicit(&s->chunk[c], memory_order_acquire);
    if (ch == NULL) {
        mkrt__slog_entry *mine = mkrt__alloc(MKRT__SLOG_CHUNK * sizeof *mine, MKRT_CACHE_LINE);
        if (mine != NULL) /* every slot failed until written: a slot whose update found no chunk stays so */
            memset(mine, 0xff, MKRT__SLOG_CHUNK * sizeof *mine);
        if (mine == NULL) {
            /* The slot stays, marked failed (the apply op skips it). */
            *why = MKRT_ENOMEM;
            return NULL;
        }
        mkrt__slog_entry *none = NULL;
        if (atomic_compare_exchange_strong_explicit(&s->chunk[c], &none, mine, memory_order_release,
                                                    memory_order_acquire))
            ch = mine;
        else {
            mkrt__free(mine, MKRT__SLOG_CHUNK * sizeof *mine);
            ch = none;
        }
    }
    return &ch[i % MKRT__SLOG_CHUNK];
}

static void count(_Atomic uint64_t *c)
{
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed); /* relaxed: a counter for stats */
}

static mkrt_status check(mkrt_stream *s, const mkrt_item *it, bool insert)
{
    if (it->in >= s->n || it->out >= s->n || it->in == it->out || (insert && (it->param == 0 ||
                                                                             it->param > s->cfg.weight_max))) {
        count(&s->failed_invalid);
        return MKRT_EINVAL;
    }
    return MKRT_OK;
}

/* Counts the outcome of one graph change (mkrt__sgraph_insert/_delete's
 * result) and gives the update's status. */
static mkrt_status settle(mkrt_stream *s, int r, bool insert)
{
    if (r == 0) {
        count(insert ? &s->inserted : &s->deleted);
        return MKRT_OK;
    }
    if (r == 1) {
        count(&s->duplicates);
        return MKRT_OK;
    }
    count(r == MKRT_ESTATE ? &s->failed_absent : r == MKRT_EINVAL ? &s->failed_invalid : &s->failed_resource);
    return (mkrt_status)r;
}

static mkrt_status update(const mkrt_item *it, const mkrt_op_ctx *ctx, bool insert)
{
    mkrt_stream *s = ctx->user;
    /* relaxed: a size for mkrt_stream_failed; the same value every time. */
    if (atomic_load_explicit(&s->cells, memory_order_relaxed) == 0)
        atomic_store_explicit(&s->cells, ctx->cell_count, memory_order_relaxed);
    mkrt_status st = check(s, it, insert);
    if (st != MKRT_OK)
        return st;
    uint32_t u = it->out, v = it->in;
    gate_enter(s);
    st = arm(s, ctx);
    mkrt__slog_entry *slot = NULL;
    if (st == MKRT_OK)
        slot = log_slot(s, &st);
    if (st != MKRT_OK) {
        gate_leave(s);
        count(&s->failed_resource);
        return st;
    }
    mkrt__sgraph_lock2(s, u, v);
    int r = insert ? mkrt__sgraph_insert(s, u, v, it->param) : (int)mkrt__sgraph_delete(s, u, v);
    mkrt__sgraph_unlock2(s, u, v);
    *slot = (mkrt__slog_entry){u, v, it->param, r == 0 ? (insert ? MKRT__SOP_INSERT : MKRT__SOP_DELETE) : MKRT__SNONE};
    gate_leave(s);
    return settle(s, r, insert);
}

static mkrt_status op_insert(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    return update(it, ctx, true);
}

static mkrt_status op_delete(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    return update(it, ctx, false);
}

/* Inside the gate, alone: repairs the results for the whole log, if it
 * holds anything (on the helpers where it is large, stream_par.c; else
 * every query here, stream_incr.c), publishes them, and empties it. */
static void repair(mkrt_stream *s)
{
    uint64_t n = atomic_load_explicit(&s->log_len, memory_order_relaxed); /* relaxed: gate_open acquired */
    if (n == 0)
        return; /* a caller of mkrt_stream_apply repaired it first */
    const uint64_t applied = mkrt__sincr_begin(s, n);
    if (!mkrt__spar_repair(s, n))
        for (uint32_t k = 0; k < s->cfg.queries; k++)
            mkrt__sincr_query(s, &s->scr[0], &s->qs[k], n);
    mkrt__sview_publish(s, mkrt__sview_position(s) + applied);
    atomic_store_explicit(&s->log_len, 0, memory_order_relaxed); /* relaxed: gate_close releases */
    count(&s->applies);
}

static mkrt_status op_apply(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    (void)it;
    mkrt_stream *s = ctx->user;
    gate_open(s);
    atomic_store_explicit(&s->arm, MKRT__SARM_IDLE, memory_order_relaxed); /* relaxed: inside the gate */
    repair(s);
    gate_close(s);
    return MKRT_OK;
}

mkrt_status mkrt_stream_apply(mkrt_stream *s, const mkrt_item *items, size_t n, mkrt_status *status,
                              mkrt_error *err)
{
    if (s == NULL || (items == NULL && n > 0))
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_stream_apply: the %s is NULL. Fix: pass the stream and "
                                                 "n items from mkrt_stream_insert_item / mkrt_stream_delete_item",
                               s == NULL ? "stream" : "item array");
    for (size_t i = 0; i < n; i++)
        if (items[i].op != s->cfg.op_base + MKRT__SOP_INSERT && items[i].op != s->cfg.op_base + MKRT__SOP_DELETE)
            return mkrt__error_set(err, MKRT_EINVAL, "mkrt_stream_apply: item %zu has op %u, not the stream's "
                                                     "insert (%u) or delete (%u); nothing was applied. Fix: build "
                                                     "the items with mkrt_stream_insert_item and "
                                                     "mkrt_stream_delete_item of this stream",
                                   i, items[i].op, s->cfg.op_base + MKRT__SOP_INSERT,
                                   s->cfg.op_base + MKRT__SOP_DELETE);
    size_t failed = 0, first = 0;
    mkrt_status first_st = MKRT_OK;
    /* Alone in the gate: no update runs, so the endpoint locks are not
     * needed; the log also carries what the runtime's ops logged before,
     * which this repair applies too (an armed apply item then finds the
     * log empty). */
    gate_open(s);
    /* A large batch: checks and log slots here, the graph changes on the
     * stream's helpers (stream_par.c), then the outcomes here, in order. */
    mkrt__spitem *par = mkrt__spar_items(s, items, n);
    if (par != NULL) {
        for (size_t i = 0; i < n; i++) {
            par[i].insert = items[i].op == s->cfg.op_base + MKRT__SOP_INSERT;
            mkrt_status st = check(s, &items[i], par[i].insert);
            if (st == MKRT_OK && (par[i].slot = log_slot(s, &st)) == NULL)
                count(&s->failed_resource);
            par[i].st = st;
        }
        mkrt__spar_changes(s);
    }
    for (size_t i = 0; i < n; i++) {
        const mkrt_item *it = &items[i];
        bool insert = it->op == s->cfg.op_base + MKRT__SOP_INSERT;
        mkrt_status st = MKRT_OK;
        mkrt__slog_entry *slot = NULL;
        if (par != NULL) {
            slot = par[i].slot;
            st = (mkrt_status)par[i].st;
        } else {
            st = check(s, it, insert);
            if (st == MKRT_OK && (slot = log_slot(s, &st)) == NULL)
                count(&s->failed_resource);
        }
        if (st == MKRT_OK) {
            int r = par != NULL ? mkrt__spar_outcome(s, i)
                    : insert    ? mkrt__sgraph_insert(s, it->out, it->in, it->param)
                                : (int)mkrt__sgraph_delete(s, it->out, it->in);
            *slot = (mkrt__slog_entry){it->out, it->in, it->param,
                                       r == 0 ? (insert ? MKRT__SOP_INSERT : MKRT__SOP_DELETE) : MKRT__SNONE};
            st = settle(s, r, insert);
        }
        if (status != NULL)
            status[i] = st;
        if (st != MKRT_OK && failed++ == 0) {
            first = i;
            first_st = st;
        }
    }
    repair(s);
    gate_close(s);
    if (failed == 0)
        return MKRT_OK;
    char why[320];
    describe(s, &items[first], first_st, why, sizeof why);
    return mkrt__error_set(err, first_st, "mkrt_stream_apply: %zu of %zu updates failed (the others are applied); "
                                          "item %zu: %s", failed, n, first, why);
}

size_t mkrt_stream_ops(const mkrt_stream *s, uint32_t *ops, mkrt_op_desc *descs, size_t max)
{
    if (s == NULL || ops == NULL || descs == NULL || max < MKRT_STREAM_OPS)
        return 0;
    static const char *const names[MKRT_STREAM_OPS] = {"stream insert", "stream delete", "stream apply"};
    static const mkrt_op_fn fns[MKRT_STREAM_OPS] = {op_insert, op_delete, op_apply};
    for (uint32_t i = 0; i < MKRT_STREAM_OPS; i++) {
        ops[i] = s->cfg.op_base + i;
        descs[i] = (mkrt_op_desc){.fn = fns[i], .user = (void *)s, .name = names[i]};
        /* An exact duplicate insertion leaves the graph as one does. The
         * updates do not commute: two insertions of one edge with other
         * weights give another graph in the other order, so updates on
         * one vertex (out, the smaller endpoint) keep their drain order. */
        descs[i].idempotent = i == MKRT__SOP_INSERT;
    }
    return MKRT_STREAM_OPS;
}

mkrt_status mkrt_stream_register(mkrt_stream *s, mkrt_runtime *rt, mkrt_error *err)
{
    if (s == NULL || rt == NULL)
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_stream_register: the %s is NULL. Fix: pass the stream "
                                                 "from mkrt_stream_create and a runtime from mkrt_create",
                               s == NULL ? "stream" : "runtime");
    uint64_t cell;
    if (mkrt_cell_read(rt, s->n - 1, &cell) != MKRT_OK)
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_stream_register: the runtime has fewer cells than the "
                                                 "stream's %u vertices. Fix: create the runtime with "
                                                 "mkrt_config::cells >= %u", s->n, s->n);
    /* The runtime's cell count, found through mkrt_cell_read (it refuses a
     * handle at or above it): updates naming a handle there never reach
     * the ops, and mkrt_stream_failed counts them. */
    uint64_t lo = s->n, hi = (uint64_t)UINT32_MAX + 1; /* lo valid count, hi invalid */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (mkrt_cell_read(rt, (uint32_t)(mid - 1), &cell) == MKRT_OK)
            lo = mid;
        else
            hi = mid;
    }
    atomic_store_explicit(&s->cells, (uint32_t)(lo > UINT32_MAX ? UINT32_MAX : lo), memory_order_relaxed);
    uint32_t ops[MKRT_STREAM_OPS];
    mkrt_op_desc descs[MKRT_STREAM_OPS];
    mkrt_stream_ops(s, ops, descs, MKRT_STREAM_OPS);
    for (uint32_t i = 0; i < MKRT_STREAM_OPS; i++) {
        mkrt_status st = mkrt_op_register(rt, ops[i], &descs[i], err);
        if (st != MKRT_OK)
            return st;
    }
    return MKRT_OK;
}

mkrt_status mkrt_stream_insert_item(const mkrt_stream *s, uint32_t u, uint32_t v, uint32_t w, mkrt_item *item)
{
    if (s == NULL || item == NULL)
        return MKRT_EINVAL;
    *item = (mkrt_item){s->cfg.op_base + MKRT__SOP_INSERT, u > v ? u : v, u > v ? v : u, w};
    return MKRT_OK;
}

mkrt_status mkrt_stream_delete_item(const mkrt_stream *s, uint32_t u, uint32_t v, mkrt_item *item)
{
    if (s == NULL || item == NULL)
        return MKRT_EINVAL;
    *item = (mkrt_item){s->cfg.op_base + MKRT__SOP_DELETE, u > v ? u : v, u > v ? v : u, 0};
    return MKRT_OK;
}

/* The Fix for an update that failed for a resource, by status: each names
 * the resource that ran out (or the step that dropped the update). */
static const char *resource_fix(mkrt_status why)
{
    switch (why) {
    case MKRT_ENOMEM:
        return "free memory, then publish the update again";
    case MKRT_EOVERFLOW:
        return "give the runtime room for the stream's apply item (mkrt_config::emit_capacity at least 1, more "
               "when other ops emit too), and quiesce more often so that the update log (at most 16,777,216 "
               "updates between applies) is applied";
    case MKRT_ETIMEDOUT:
        return "give mkrt_destroy more time, or mkrt_quiesce the runtime before destroying it";
    case MKRT_ENOTSUP:
        return "register the stream's ops (mkrt_stream_register, or mkrt_stream_ops and mkrt_op_register) "
               "before publishing";
    default:
        return "see mkrt_stream_failed in mkrt_stream/stream.h";
    }
}

mkrt_status mkrt_stream_failed(mkrt_stream *s, const mkrt_item *it, mkrt_status why, char *buf, size_t len)
{
    if (s == NULL || it == NULL || buf == NULL || len == 0 || it->op < s->cfg.op_base ||
        it->op >= s->cfg.op_base + MKRT_STREAM_OPS)
        return MKRT_EINVAL;
    if (it->op == s->cfg.op_base + MKRT__SOP_APPLY) {
        /* The stream's own repair item was dropped (a mkrt_destroy
         * timeout): the updates it would have applied stay in the log,
         * and the next update arms a new one. */
        atomic_store_explicit(&s->arm, MKRT__SARM_IDLE, memory_order_relaxed); /* relaxed: the item is gone */
        snprintf(buf, len, "stream apply (the stream's repair of its logged updates): %s; the updates are in "
                 "the graph but not yet in the results. Fix: %s", mkrt_status_describe(why), resource_fix(why));
        return MKRT_OK;
    }
    /* relaxed: set at registration or by the first op, which stores it
     * before it runs its item; the failure reaches this call after that
     * item's batch completed (release by the worker, acquire by the
     * dispatcher that reports it). So 0 here means no op of the stream has
     * run: the runtime refused the item before any op saw it. */
    uint32_t cells = atomic_load_explicit(&s->cells, memory_order_relaxed);
    if (why == MKRT_EINVAL && (cells == 0 || it->in >= cells || it->out >= cells))
        count(&s->failed_invalid); /* refused at admission: the op never ran */
    describe(s, it, why, buf, len);
    return MKRT_OK;
}

/* Explains a failed update (not the apply item) with a Fix. */
static void describe(const mkrt_stream *s, const mkrt_item *it, mkrt_status why, char *buf, size_t len)
{
    bool insert = it->op == s->cfg.op_base + MKRT__SOP_INSERT;
    const char *what = insert ? "insert" : "delete";
    uint32_t u = it->out, v = it->in;
    if (why != MKRT_EINVAL && why != MKRT_ESTATE)
        snprintf(buf, len, "stream %s {%u, %u}: %s; the graph is unchanged. Fix: %s", what, u, v,
                 mkrt_status_describe(why), resource_fix(why));
    else if (u >= s->n || v >= s->n)
        snprintf(buf, len, "stream %s {%u, %u}: vertex %u is not below the stream's %u vertices. Fix: publish "
                 "updates between vertices 0..%u (or create the stream with more vertices)",
                 what, u, v, u >= s->n ? u : v, s->n, s->n - 1);
    else if (u == v)
        snprintf(buf, len, "stream %s {%u, %u}: a self-loop. Fix: drop self-loops (they change no BFS, SSSP or "
                 "CC result)", what, u, v);
    else if (insert && (it->param == 0 || it->param > s->cfg.weight_max))
        snprintf(buf, len, "stream insert {%u, %u}: weight %u is outside 1..%u. Fix: use weights in 1..%u "
                 "(or raise mkrt_stream_config::weight_max)", u, v, it->param, s->cfg.weight_max,
                 s->cfg.weight_max);
    else if (insert)
        snprintf(buf, len, "stream insert {%u, %u} weight %u: the edge exists with another weight. Fix: delete "
                 "the edge first to change its weight", u, v, it->param);
    else if (why == MKRT_ESTATE)
        snprintf(buf, len, "stream delete {%u, %u}: no such edge in the graph when the deletion ran. Fix: delete "
                 "only edges that exist (the graph is unchanged)", u, v);
    else
        snprintf(buf, len, "stream delete {%u, %u}: %s. Fix: see mkrt_stream_failed in mkrt_stream/stream.h", u, v,
                 mkrt_status_describe(why));
}

mkrt_status mkrt_stream_stats_read(const mkrt_stream *s, mkrt_stream_stats *out)
{
    if (s == NULL || out == NULL)
        return MKRT_EINVAL;
    mkrt_stream *m = (mkrt_stream *)s;
#define LOAD(f) atomic_load_explicit(&m->f, memory_order_relaxed) /* relaxed: counters */
    *out = (mkrt_stream_stats){
        .inserted = LOAD(inserted), .deleted = LOAD(deleted), .duplicates = LOAD(duplicates),
        .failed_invalid = LOAD(failed_invalid), .failed_absent = LOAD(failed_absent),
        .failed_resource = LOAD(failed_resource), .failed_queries = LOAD(failed_queries),
        .applies = LOAD(applies), .position = mkrt__sview_position(s), .reset = LOAD(reset), .relaxed = LOAD(relaxed),
        .edges = LOAD(edges), .graph_bytes = LOAD(graph_bytes)};
#undef LOAD
    out->csr_bytes = 8 * ((uint64_t)s->n + 1) + 16 * out->edges;
    return MKRT_OK;
}
