/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/mpi/traverse_mpi.c - distributed BFS and SSSP over libmkrt_mpi.
 *
 * Every rank holds the whole CSR graph (registered with its runtime) and
 * owns the vertices the partition gives it; cell v is meaningful on v's
 * owner only. A value for a vertex another rank owns travels as an
 * "arrival" item (op, u, w, ARRIVE | value) to w's owner (BFS: the depth,
 * u being the parent; SSSP: the distance). Both ops are monotone minima,
 * so the result is the same fixpoint as the single-process engine's
 * whatever the order: BFS cells pack depth << 32 | parent (the smallest
 * parent at the shortest depth), SSSP cells hold distances.
 *
 * Each rank keeps `sent_min`, the smallest value it has sent for each
 * remote vertex in this traversal: an arrival that would not lower it is
 * not sent (an earlier one carried as good a value), so a target goes at
 * most once per sender and level in BFS (sorted rows: the smallest parent
 * first) instead of once per cut edge.
 *
 * BFS is level-synchronous, one mkrt_mpi_quiesce() per level. After each
 * level every rank publishes one EXPAND item per vertex it owns at the
 * level's depth; EXPAND scans the vertex's row itself (no edge items):
 * local targets get an atomic minimum (mkrt_op_cell_min), remote ones are
 * gathered and sent in runs per owner (mkrt_mpi_op_emit: the rows are
 * sorted, so with the block partition a run is a whole owner's share of
 * the row). Received arrivals never enter the owner's runtime: the layer's
 * receive hook (mkrt_mpi_config::deliver) applies a whole message as
 * atomic minima into `arrived`, which the host merges into the cells when
 * it scans for the next level's frontier. When an outbox is full, EXPAND
 * queues the arrivals it could not send as RESEND items (the arrival
 * itself, run on the sender, which sends it again) and the rest of the row
 * as a continuation EXPAND (edge offset in the item's `in`).
 *
 * SSSP is asynchronous: a seed on the root's owner and one
 * mkrt_mpi_quiesce(); local edges run as the runtime's frontier rounds
 * (mkrt_op_emit_edges), arrivals are published into the owner's runtime
 * (the hook declines them) where they lower cells and expand at once, in
 * whatever order they come (label correcting). */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "mkrt/mkrt.h"
#include "../graph500/graph500.h"
#include "traverse_mpi.h"

enum { OP_VISIT = MKRT_OP_USER_FIRST, OP_SETTLE };
/* VISIT's param on an EXPAND item: emit the vertex's edges. */
#define EXPAND UINT32_MAX
/* Arrival items carry a value below 2^31 in param with this bit set; the
 * frontier's edge items carry the edge weight (1..255). */
#define ARRIVE 0x80000000u
#define UNREACHED UINT64_MAX

/* Remote arrivals an EXPAND gathers before sending them. */
#define STAGE 256

struct tmpi_engine {
    mkrt_runtime *rt;
    mkrt_mpi *mpi;
    mkrt_producer *producer;
    const g500_csr *g; /* borrowed until tmpi_close */
    uint32_t vertices;
    int rank, size;
    uint64_t *cells; /* gathered results (rank 0), scratch elsewhere */
    uint64_t *local; /* this rank's cells, read once per BFS level */
    mkrt_item *seeds; /* EXPAND items of one level (at most the vertices) */
    /* Smallest value sent per remote vertex (ops, relaxed: each entry is
     * its own minimum, no other data hangs on it). */
    _Atomic uint64_t *sent_min;
    /* BFS arrivals applied by the receive hook (progress thread, relaxed:
     * the host reads them after a global quiescence, which orders them
     * through the layer's seq_cst counters). */
    _Atomic uint64_t *arrived;
    atomic_uint_fast64_t scanned; /* edges EXPAND scanned (statistic, relaxed) */
    tmpi_level lv[TMPI_LEVELS]; /* the last BFS's levels (summed over the ranks) */
    size_t nlv;
};

/* Atomic minimum; true when it lowered *a (relaxed: see the fields). */
static bool min_u64(_Atomic uint64_t *a, uint64_t v)
{
    uint64_t cur = atomic_load_explicit(a, memory_order_relaxed);
    while (v < cur)
        if (atomic_compare_exchange_weak_explicit(a, &cur, v, memory_order_relaxed,
                                                  memory_order_relaxed))
            return true;
    return false;
}

/* The receive hook: BFS arrivals (VISIT | ARRIVE) lower `arrived`; any
 * other batch (SSSP) is declined, so the layer publishes it. */
static bool deliver(void *user, int src, const mkrt_item *items, size_t n)
{
    tmpi_engine *e = user;
    (void)src;
    for (size_t i = 0; i < n; i++)
        if (items[i].op != OP_VISIT || items[i].param == EXPAND || !(items[i].param & ARRIVE) ||
            items[i].out >= e->vertices)
            return false;
    for (size_t i = 0; i < n; i++)
        min_u64(&e->arrived[items[i].out], (uint64_t)(items[i].param & ~ARRIVE) << 32 | items[i].in);
    return true;
}

/* Sends an arrival to its owner; when the outbox is full, queues it as a
 * RESEND item (the arrival itself, run again here in a later batch: an op
 * must not block). */
static mkrt_status forward(const tmpi_engine *e, const mkrt_op_ctx *ctx, mkrt_item arrival)
{
    mkrt_status st = mkrt_mpi_op_emit(e->mpi, ctx, &arrival, 1, NULL);
    if (st == MKRT_EAGAIN)
        st = mkrt_op_emit(ctx, &arrival, 1);
    return st;
}

/* Sends staged arrivals; what an outbox refuses is queued as RESEND
 * items. Returns the status and whether an outbox was full. */
static mkrt_status flush(const tmpi_engine *e, const mkrt_op_ctx *ctx, const mkrt_item *stage,
                         size_t n, bool *full)
{
    size_t done = 0;
    mkrt_status st = mkrt_mpi_op_emit(e->mpi, ctx, stage, n, &done);
    if (st != MKRT_EAGAIN)
        return st;
    *full = true;
    return mkrt_op_emit(ctx, stage + done, n - done);
}

/* BFS EXPAND of v from edge offset `from` of its row: local targets are
 * lowered here, remote ones sent in runs (see the file overview). */
static mkrt_status expand(tmpi_engine *e, const mkrt_op_ctx *ctx, uint32_t v, uint32_t from)
{
    const uint64_t cell = mkrt_op_cell_load(ctx, v);
    if (cell == UNREACHED)
        return MKRT_OK;
    const uint32_t depth = (uint32_t)(cell >> 32) + 1;
    const uint64_t val = (uint64_t)depth << 32 | v;
    const uint64_t lo = e->g->offsets[v], hi = e->g->offsets[v + 1];
    const uint32_t *t = e->g->targets;
    mkrt_item stage[STAGE];
    size_t n = 0;
    bool full = false;
    mkrt_status st = MKRT_OK;
    uint64_t i = lo + from;
    for (; i < hi && st == MKRT_OK && !full; i++) {
        const uint32_t w = t[i];
        if (mkrt_mpi_owner(e->mpi, w) == e->rank) {
            mkrt_op_cell_min(ctx, w, val);
            continue;
        }
        if (!min_u64(&e->sent_min[w], val))
            continue; /* as good a value went to w's owner already */
        stage[n++] = (mkrt_item){OP_VISIT, v, w, ARRIVE | depth};
        if (n == STAGE) {
            st = flush(e, ctx, stage, n, &full);
            n = 0;
        }
    }
    if (st == MKRT_OK && n > 0)
        st = flush(e, ctx, stage, n, &full);
    atomic_fetch_add_explicit(&e->scanned, i - lo - from, memory_order_relaxed); /* statistic */
    if (st == MKRT_OK && i < hi) { /* an outbox is full: the rest of the row later */
        mkrt_item rest = {OP_VISIT, (uint32_t)(i - lo), v, EXPAND};
        st = mkrt_op_emit(ctx, &rest, 1);
    }
    return st;
}

/* Lowers cells[w] to cand; when lowered, w's edges follow. */
static mkrt_status lower(const mkrt_op_ctx *ctx, uint32_t w, uint64_t cand)
{
    if (mkrt_op_cell_min(ctx, w, cand))
        return mkrt_op_emit_edges(ctx, w);
    return MKRT_OK;
}

/* BFS: EXPAND scans a row; an arrival lowers its vertex on the owner (a
 * declined hook) or is a RESEND on the sender. */
static mkrt_status visit(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    tmpi_engine *e = ctx->user;
    if (it->param == EXPAND)
        return expand(e, ctx, it->out, it->in);
    if (mkrt_mpi_owner(e->mpi, it->out) != e->rank)
        return forward(e, ctx, *it);
    mkrt_op_cell_min(ctx, it->out, (uint64_t)(it->param & ~ARRIVE) << 32 | it->in);
    return MKRT_OK;
}

/* SSSP: an edge item lowers its target or sends it an arrival; an
 * arrival lowers its vertex on the owner, or is a RESEND on the sender. */
static mkrt_status settle(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    tmpi_engine *e = ctx->user;
    const bool mine = mkrt_mpi_owner(e->mpi, it->out) == e->rank;
    if (it->param & ARRIVE)
        return mine ? lower(ctx, it->out, it->param & ~ARRIVE) : forward(e, ctx, *it);
    uint64_t from = mkrt_op_cell_load(ctx, it->in);
    if (from == UNREACHED)
        return MKRT_OK;
    uint64_t d = from + it->param;
    if (mine)
        return lower(ctx, it->out, d);
    if (d >= ARRIVE)
        return MKRT_EOVERFLOW; /* a distance of 2^31 or more does not fit an arrival */
    if (!min_u64(&e->sent_min[it->out], d))
        return MKRT_OK; /* as short a distance went to the owner already */
    return forward(e, ctx, (mkrt_item){OP_SETTLE, it->in, it->out, ARRIVE | (uint32_t)d});
}

static tmpi_engine *fail_open(tmpi_engine *e, char *why, size_t len, const char *what,
                              const mkrt_error *err)
{
    snprintf(why, len, "mkrt-mpi engine: %s: %s", what, err->message);
    if (e != NULL) {
        mkrt_producer_close(e->producer);
        mkrt_destroy(e->rt, MKRT_TIMEOUT_INFINITE, NULL);
        free(e->cells);
        free(e->local);
        free(e->seeds);
        free(e->sent_min);
        free(e->arrived);
        free(e);
    }
    return NULL;
}

tmpi_engine *tmpi_open(const g500_csr *g, unsigned threads, mkrt_mpi_partition partition,
                       char *why, size_t len)
{
    mkrt_error err = {0};
    if (g == NULL || g->vertices == 0 || g->vertices >= MKRT_CONFIG_CELLS_MAX) {
        snprintf(why, len, "mkrt-mpi engine: a graph of %u vertices does not fit (1..%u). Fix: a "
                 "smaller scale.", g != NULL ? g->vertices : 0, MKRT_CONFIG_CELLS_MAX - 1);
        return NULL;
    }
    tmpi_engine *e = calloc(1, sizeof *e);
    if (e == NULL || (e->cells = malloc((size_t)g->vertices * sizeof *e->cells)) == NULL ||
        (e->local = malloc((size_t)g->vertices * sizeof *e->local)) == NULL ||
        (e->seeds = malloc((size_t)g->vertices * sizeof *e->seeds)) == NULL ||
        (e->sent_min = malloc((size_t)g->vertices * sizeof *e->sent_min)) == NULL ||
        (e->arrived = malloc((size_t)g->vertices * sizeof *e->arrived)) == NULL) {
        if (e != NULL) {
            free(e->cells);
            free(e->local);
            free(e->seeds);
            free(e->sent_min);
        }
        free(e);
        snprintf(why, len, "mkrt-mpi engine: out of memory for %u vertices.", g->vertices);
        return NULL;
    }
    e->vertices = g->vertices;
    e->g = g;
    for (uint32_t v = 0; v < g->vertices; v++)
        atomic_init(&e->arrived[v], UNREACHED); /* before the hook can run */
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CPU;
    c.workers = threads > 0 ? threads : 1;
    c.cells = g->vertices;
    c.append_log_capacity = 0;
    c.ring_capacity = 1u << 14;
    c.emit_capacity = 1u << 20; /* arrivals (RESEND) that wait for outbox room */
    if (mkrt_create(&c, &e->rt, &err) != MKRT_OK)
        return fail_open(e, why, len, "mkrt_create", &err);
    mkrt_graph graph = {g->vertices, g->offsets, g->targets, g->weights};
    if (mkrt_graph_register(e->rt, &graph, &err) != MKRT_OK)
        return fail_open(e, why, len, "mkrt_graph_register", &err);
    mkrt_op_desc d = {.fn = visit, .user = e, .name = "mpi-bfs-visit", .idempotent = true,
                      .commutes = true, .expands = true};
    if (mkrt_op_register(e->rt, OP_VISIT, &d, &err) != MKRT_OK)
        return fail_open(e, why, len, "mkrt_op_register", &err);
    d.fn = settle;
    d.name = "mpi-sssp-settle";
    if (mkrt_op_register(e->rt, OP_SETTLE, &d, &err) != MKRT_OK)
        return fail_open(e, why, len, "mkrt_op_register", &err);
    mkrt_mpi_config mc = mkrt_mpi_config_default();
    mc.handles = g->vertices;
    mc.partition = partition;
    mc.deliver = deliver; /* BFS arrivals applied in bulk (see the file overview) */
    mc.deliver_user = e;
    if (mkrt_mpi_create(&mc, e->rt, &e->mpi, &err) != MKRT_OK)
        return fail_open(e, why, len, "mkrt_mpi_create", &err);
    e->rank = mkrt_mpi_rank(e->mpi);
    e->size = mkrt_mpi_size(e->mpi);
    if ((e->producer = mkrt_producer_open(e->rt, &err)) == NULL) {
        mkrt_mpi_destroy(e->mpi, NULL);
        return fail_open(e, why, len, "mkrt_producer_open", &err);
    }
    return e;
}

int tmpi_rank(const tmpi_engine *e)
{
    return e->rank;
}

int tmpi_size(const tmpi_engine *e)
{
    return e->size;
}

mkrt_mpi *tmpi_layer(tmpi_engine *e)
{
    return e->mpi;
}

/* BFS levels: each rank merges the arrivals the hook applied into its
 * cells, expands the vertices it owns at depth `level`, then all wait for
 * the level to end. Returns the status of the first failure (the same on
 * every rank: the counts are summed). */
static mkrt_status levels(tmpi_engine *e)
{
    mkrt_mpi_stats m0, m1;
    uint64_t scanned0 = atomic_load_explicit(&e->scanned, memory_order_relaxed);
    mkrt_mpi_stats_read(e->mpi, &m0);
    double t0 = g500_seconds();
    e->nlv = 0;
    for (uint64_t level = 0;; level++) {
        mkrt_status st = mkrt_cells_read(e->rt, 0, e->vertices, e->local);
        size_t n = 0;
        for (uint32_t v = 0; st == MKRT_OK && v < e->vertices; v++) {
            if (mkrt_mpi_owner(e->mpi, v) != e->rank)
                continue;
            /* Relaxed: written before the last global quiescence (see the field). */
            uint64_t a = atomic_load_explicit(&e->arrived[v], memory_order_relaxed);
            if (a < e->local[v]) {
                e->local[v] = a;
                st = mkrt_cell_write(e->rt, v, a); /* quiescent: no op touches it */
            }
            if (e->local[v] != UNREACHED && e->local[v] >> 32 == level)
                e->seeds[n++] = (mkrt_item){OP_VISIT, 0, v, EXPAND};
        }
        if (st == MKRT_OK && n > 0)
            st = mkrt_publish(e->producer, e->seeds, n, MKRT_TIMEOUT_INFINITE, NULL);
        /* The previous level's traffic travels with this level's count. */
        mkrt_mpi_stats_read(e->mpi, &m1);
        const uint64_t scanned1 = atomic_load_explicit(&e->scanned, memory_order_relaxed);
        uint64_t sums[6] = {n, st != MKRT_OK, scanned1 - scanned0, m1.forwarded - m0.forwarded,
                            m1.bytes_sent - m0.bytes_sent, m1.messages_sent - m0.messages_sent};
        mkrt_mpi_allreduce_sum(e->mpi, sums, 6);
        m0 = m1;
        scanned0 = scanned1;
        if (level > 0) {
            tmpi_level *l = &e->lv[e->nlv - 1];
            l->scanned += sums[2];
            l->arrivals += sums[3];
            l->bytes += sums[4];
            l->messages += sums[5];
            const double t1 = g500_seconds();
            l->seconds += t1 - t0;
            t0 = t1;
        }
        if (sums[0] > 0) {
            if (e->nlv < TMPI_LEVELS)
                e->lv[e->nlv++] = (tmpi_level){0};
            e->lv[e->nlv - 1].frontier += sums[0];
        }
        if (sums[1] != 0)
            return MKRT_ECLOSED;
        if (sums[0] == 0)
            return MKRT_OK; /* no rank has a vertex at this depth */
        st = mkrt_mpi_quiesce(e->mpi, MKRT_TIMEOUT_INFINITE);
        if (st != MKRT_OK)
            return st;
    }
}

/* Resets the cells and tables, starts together, seeds on the root's
 * owner, runs to global quiescence (BFS: level by level), gathers the
 * cells to rank 0. */
static int run(tmpi_engine *e, mkrt_item seed, int by_level, double *seconds, tmpi_counts *c,
               char *why, size_t len)
{
    for (uint32_t v = 0; v < e->vertices; v++) {
        mkrt_cell_write(e->rt, v, UNREACHED); /* quiescent: nothing touches them */
        atomic_store_explicit(&e->sent_min[v], UNREACHED, memory_order_relaxed); /* ordered by the quiescence below */
        atomic_store_explicit(&e->arrived[v], UNREACHED, memory_order_relaxed);
    }
    mkrt_stats s0, s1;
    mkrt_mpi_stats m0, m1;
    mkrt_stats_read(e->rt, &s0);
    mkrt_mpi_stats_read(e->mpi, &m0);
    const uint64_t scanned0 = atomic_load_explicit(&e->scanned, memory_order_relaxed);
    mkrt_status st = mkrt_mpi_quiesce(e->mpi, MKRT_TIMEOUT_INFINITE); /* everyone is ready */
    double t0 = g500_seconds();
    mkrt_error err = {0};
    mkrt_status q = MKRT_OK;
    const int mine = mkrt_mpi_owner(e->mpi, seed.out) == e->rank;
    if (by_level) {
        if (st == MKRT_OK && mine) /* the root: depth 0, its own parent */
            st = mkrt_cell_write(e->rt, seed.out, (uint64_t)seed.out);
        if (st == MKRT_OK)
            q = levels(e);
    } else {
        if (st == MKRT_OK && mine)
            st = mkrt_publish(e->producer, &seed, 1, MKRT_TIMEOUT_INFINITE, &err);
        q = mkrt_mpi_quiesce(e->mpi, MKRT_TIMEOUT_INFINITE);
    }
    *seconds = g500_seconds() - t0;
    mkrt_stats_read(e->rt, &s1);
    mkrt_mpi_stats_read(e->mpi, &m1);
    /* Edges: BFS counts what EXPAND scanned; SSSP the edge items the
     * frontiers emitted, less the arrivals queued again (RESEND). */
    const uint64_t edges = by_level ? atomic_load_explicit(&e->scanned, memory_order_relaxed) - scanned0
                                    : s1.emitted - s0.emitted - (m1.deferred - m0.deferred);
    uint64_t sums[8] = {edges, m1.forwarded - m0.forwarded, m1.messages_sent - m0.messages_sent,
                        s1.failed - s0.failed, st != MKRT_OK || q != MKRT_OK,
                        m1.deferred - m0.deferred, m1.bytes_sent - m0.bytes_sent,
                        m1.bytes_sent_node - m0.bytes_sent_node};
    mkrt_mpi_allreduce_sum(e->mpi, sums, 8);
    *c = (tmpi_counts){sums[0], sums[1], sums[2], sums[5], sums[3], sums[6], sums[7]};
    mkrt_mpi_gather_cells(e->mpi, 0, e->vertices, e->cells);
    if (sums[4] != 0 || sums[3] != 0) {
        snprintf(why, len, "mkrt-mpi engine: %s; %llu item(s) failed over the ranks",
                 sums[4] ? "a rank's publish or quiescence failed" : "traversal incomplete",
                 (unsigned long long)sums[3]);
        return -1;
    }
    return 0;
}

static int bad_root(const tmpi_engine *e, uint32_t root, char *why, size_t len)
{
    if (root < e->vertices)
        return 0;
    snprintf(why, len, "mkrt-mpi engine: root %u is not a vertex (%u). Fix: a root below it.",
             root, e->vertices);
    return -1;
}

int tmpi_bfs(tmpi_engine *e, uint32_t root, uint32_t *parent, double *seconds, tmpi_counts *c,
             char *why, size_t len)
{
    if (bad_root(e, root, why, len) != 0 ||
        run(e, (mkrt_item){OP_VISIT, root, root, ARRIVE | 0}, 1, seconds, c, why, len) != 0)
        return -1;
    for (uint32_t v = 0; e->rank == 0 && v < e->vertices; v++)
        parent[v] = e->cells[v] == UNREACHED ? G500_NO_PARENT : (uint32_t)e->cells[v];
    return 0;
}

int tmpi_sssp(tmpi_engine *e, uint32_t root, uint64_t *dist, double *seconds, tmpi_counts *c,
              char *why, size_t len)
{
    if (bad_root(e, root, why, len) != 0 ||
        run(e, (mkrt_item){OP_SETTLE, root, root, ARRIVE | 0}, 0, seconds, c, why, len) != 0)
        return -1;
    for (uint32_t v = 0; e->rank == 0 && v < e->vertices; v++)
        dist[v] = e->cells[v] == UNREACHED ? G500_INF : e->cells[v];
    return 0;
}

size_t tmpi_levels(const tmpi_engine *e, tmpi_level *out, size_t max)
{
    size_t n = e->nlv < max ? e->nlv : max;
    for (size_t i = 0; i < n; i++)
        out[i] = e->lv[i];
    return n;
}

void tmpi_close(tmpi_engine *e)
{
    if (e == NULL)
        return;
    mkrt_mpi_destroy(e->mpi, NULL);
    mkrt_producer_close(e->producer);
    mkrt_destroy(e->rt, MKRT_TIMEOUT_INFINITE, NULL);
    free(e->cells);
    free(e->local);
    free(e->seeds);
    free(e->sent_min);
    free(e->arrived);
    free(e);
}
