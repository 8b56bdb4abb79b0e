/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/mpi/traverse_mpi.c - distributed BFS and SSSP over libmkrt_mpi.
 *
 * Every rank holds the whole CSR graph (registered with its runtime) and
 * owns the vertices the partition gives it; cell v is meaningful on v's
 * owner only. As in examples/graph500/traverse_mkrt.c, a vertex whose cell
 * is lowered emits its edges through the runtime's frontier
 * (mkrt_op_emit_edges), so edge items (op, u, w, weight) run on u's owner
 * and read cells[u] there. An edge item whose target w is owned by another
 * rank is not applied locally: it is forwarded to w's owner as an
 * "arrival" item (op, u, w, ARRIVE | value) carrying the value computed
 * from cells[u] (BFS: the depth, u being the parent; SSSP: the distance),
 * and the arrival lowers cells[w] there and emits w's edges on that rank.
 * Both ops are monotone minima, so the result is the same fixpoint as the
 * single-process engine's whatever the order: BFS cells pack
 * depth << 32 | parent (the smallest parent at the shortest depth), SSSP
 * cells hold distances.
 *
 * SSSP is asynchronous: a seed on the root's owner and one
 * mkrt_mpi_quiesce(); arrivals lower cells and expand at once, in whatever
 * order they come (label correcting: a vertex may be lowered, and its edges
 * sent, more than once).
 *
 * BFS is level-synchronous, one mkrt_mpi_quiesce() per level: the edge
 * items and arrivals only lower cells (they do not expand), and after each
 * level every rank publishes one EXPAND item per vertex it owns at the
 * level's depth; those emit the vertex's edges (the runtime's frontier), so
 * every edge is scanned once per BFS. The traversal ends when a level finds
 * no vertex on any rank (an allreduce of the counts). */
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

struct tmpi_engine {
    mkrt_runtime *rt;
    mkrt_mpi *mpi;
    mkrt_producer *producer;
    uint32_t vertices;
    int rank, size;
    uint64_t *cells; /* gathered results (rank 0), scratch elsewhere */
    uint64_t *local; /* this rank's cells, read once per BFS level */
    mkrt_item *seeds; /* EXPAND items of one level (at most the vertices) */
};

/* Sends an arrival to its owner; when the outbox is full, runs the edge
 * item again in a later batch (an op must not block). */
static mkrt_status forward(const tmpi_engine *e, const mkrt_op_ctx *ctx, const mkrt_item *edge,
                           mkrt_item arrival)
{
    mkrt_status st = mkrt_mpi_op_emit(e->mpi, ctx, &arrival, 1, NULL);
    if (st == MKRT_EAGAIN)
        st = mkrt_op_emit(ctx, edge, 1);
    return st;
}

/* Lowers cells[w] to cand; when lowered, w's edges follow. */
static mkrt_status lower(const mkrt_op_ctx *ctx, uint32_t w, uint64_t cand)
{
    if (mkrt_op_cell_min(ctx, w, cand))
        return mkrt_op_emit_edges(ctx, w);
    return MKRT_OK;
}

/* BFS: EXPAND items emit the edges; edge items and arrivals only lower
 * (the host expands the next level). */
static mkrt_status visit(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    const tmpi_engine *e = ctx->user;
    if (it->param == EXPAND)
        return mkrt_op_emit_edges(ctx, it->out);
    if (it->param & ARRIVE) {
        mkrt_op_cell_min(ctx, it->out, (uint64_t)(it->param & ~ARRIVE) << 32 | it->in);
        return MKRT_OK;
    }
    uint64_t from = mkrt_op_cell_load(ctx, it->in);
    if (from == UNREACHED)
        return MKRT_OK;
    uint64_t depth = (from >> 32) + 1;
    if (mkrt_mpi_owner(e->mpi, it->out) != e->rank)
        return forward(e, ctx, it, (mkrt_item){OP_VISIT, it->in, it->out, ARRIVE | (uint32_t)depth});
    mkrt_op_cell_min(ctx, it->out, depth << 32 | it->in);
    return MKRT_OK;
}

static mkrt_status settle(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    const tmpi_engine *e = ctx->user;
    if (it->param & ARRIVE)
        return lower(ctx, it->out, it->param & ~ARRIVE);
    uint64_t from = mkrt_op_cell_load(ctx, it->in);
    if (from == UNREACHED)
        return MKRT_OK;
    uint64_t d = from + it->param;
    if (mkrt_mpi_owner(e->mpi, it->out) != e->rank) {
        if (d >= ARRIVE)
            return MKRT_EOVERFLOW; /* a distance of 2^31 or more does not fit an arrival */
        return forward(e, ctx, it, (mkrt_item){OP_SETTLE, it->in, it->out, ARRIVE | (uint32_t)d});
    }
    return lower(ctx, it->out, d);
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
        (e->seeds = malloc((size_t)g->vertices * sizeof *e->seeds)) == NULL) {
        if (e != NULL) {
            free(e->cells);
            free(e->local);
        }
        free(e);
        snprintf(why, len, "mkrt-mpi engine: out of memory for %u vertices.", g->vertices);
        return NULL;
    }
    e->vertices = g->vertices;
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CPU;
    c.workers = threads > 0 ? threads : 1;
    c.cells = g->vertices;
    c.append_log_capacity = 0;
    c.ring_capacity = 1u << 14;
    c.emit_capacity = 1u << 20; /* edge items whose arrival waits for outbox room */
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

/* Resets the cells, starts together, seeds on the root's owner, waits for
 * global quiescence, gathers the cells to rank 0. */
/* BFS levels after the root's: each rank expands the vertices it owns at
 * depth `level`, then all wait for the level to end. Returns the status of
 * the first failure (the same on every rank: the counts are summed). */
static mkrt_status levels(tmpi_engine *e)
{
    for (uint64_t level = 0;; level++) {
        mkrt_status st = mkrt_cells_read(e->rt, 0, e->vertices, e->local);
        size_t n = 0;
        for (uint32_t v = 0; st == MKRT_OK && v < e->vertices; v++)
            if (e->local[v] != UNREACHED && e->local[v] >> 32 == level &&
                mkrt_mpi_owner(e->mpi, v) == e->rank)
                e->seeds[n++] = (mkrt_item){OP_VISIT, v, v, EXPAND};
        if (st == MKRT_OK && n > 0)
            st = mkrt_publish(e->producer, e->seeds, n, MKRT_TIMEOUT_INFINITE, NULL);
        uint64_t sums[2] = {n, st != MKRT_OK};
        mkrt_mpi_allreduce_sum(e->mpi, sums, 2);
        if (sums[1] != 0)
            return MKRT_ECLOSED;
        if (sums[0] == 0)
            return MKRT_OK; /* no rank has a vertex at this depth */
        st = mkrt_mpi_quiesce(e->mpi, MKRT_TIMEOUT_INFINITE);
        if (st != MKRT_OK)
            return st;
    }
}

static int run(tmpi_engine *e, mkrt_item seed, int by_level, double *seconds, tmpi_counts *c,
               char *why, size_t len)
{
    for (uint32_t v = 0; v < e->vertices; v++)
        mkrt_cell_write(e->rt, v, UNREACHED); /* quiescent: nothing touches them */
    mkrt_stats s0, s1;
    mkrt_mpi_stats m0, m1;
    mkrt_stats_read(e->rt, &s0);
    mkrt_mpi_stats_read(e->mpi, &m0);
    mkrt_status st = mkrt_mpi_quiesce(e->mpi, MKRT_TIMEOUT_INFINITE); /* everyone is ready */
    double t0 = g500_seconds();
    mkrt_error err = {0};
    if (st == MKRT_OK && mkrt_mpi_owner(e->mpi, seed.out) == e->rank)
        st = mkrt_publish(e->producer, &seed, 1, MKRT_TIMEOUT_INFINITE, &err);
    mkrt_status q = mkrt_mpi_quiesce(e->mpi, MKRT_TIMEOUT_INFINITE);
    if (q == MKRT_OK && by_level)
        q = levels(e);
    *seconds = g500_seconds() - t0;
    mkrt_stats_read(e->rt, &s1);
    mkrt_mpi_stats_read(e->mpi, &m1);
    /* A deferred edge item is emitted again (mkrt_op_emit): not an edge. */
    uint64_t sums[6] = {s1.emitted - s0.emitted - (m1.deferred - m0.deferred),
                        m1.forwarded - m0.forwarded, m1.messages_sent - m0.messages_sent,
                        s1.failed - s0.failed, st != MKRT_OK || q != MKRT_OK,
                        m1.deferred - m0.deferred};
    mkrt_mpi_allreduce_sum(e->mpi, sums, 6);
    *c = (tmpi_counts){sums[0], sums[1], sums[2], sums[3], sums[5]};
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
    free(e);
}
