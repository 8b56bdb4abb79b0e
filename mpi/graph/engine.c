/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/graph/engine.c - distributed BFS and SSSP over libmkrt_mpi.
 *
 * Every rank holds the whole CSR graph (the ops read it directly) and
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
 * not sent (an earlier one carried as good a value), so in BFS a target
 * goes at most once per sender and traversal (sorted rows: the smallest
 * parent first) instead of once per cut edge.
 *
 * Values live in `best` (one atomic minimum per owned vertex), not in the
 * runtime's cells: the ops and the receive hook lower `best`, and the host
 * writes the results into the cells (BFS: each level's frontier as the
 * level starts; SSSP: every owned vertex at the end), so
 * mkrt_mpi_gather_cells() collects them. The runtime schedules the work
 * in bulk (one item per chunk of the frontier, per block of vertices or
 * per worker), never one item per vertex or edge; the edge loops are
 * plain array code inside the ops. The frontier of a BFS level is a list
 * (`next`: each vertex appended once, by whoever lowered it from
 * UNREACHED: an op or the receive hook), so the host never scans all
 * vertices between levels.
 *
 * BFS is level-synchronous, one mkrt_mpi_quiesce() per level, and
 * direction-optimising (Beamer's rule, mkrt_graph_pull_next() of
 * mkrt/graph.h, decided from counts summed over the ranks so every rank
 * takes the same direction; on a symmetric graph only):
 * - top-down: every rank publishes CHUNK items over its frontier list
 *   (about CHUNK_EDGES edges each); a CHUNK scans its vertices' rows: local targets are
 *   lowered in `best`, remote ones are sent as arrivals in runs per owner
 *   (mkrt_mpi_op_emit: rows are sorted, so with the block partition a run
 *   is a whole owner's share of the row). Received arrivals never enter
 *   the owner's runtime: the layer's receive hook (mkrt_mpi_config::deliver)
 *   applies a whole message as atomic minima into `best`.
 * - bottom-up: the frontier becomes a bitmap of all vertices (each rank's
 *   bits, summed over the ranks: the bits are disjoint, so the sum is the
 *   or), and PULL items over each rank's own vertices let every unvisited
 *   vertex take its first frontier neighbour as parent (sorted rows: the
 *   smallest, as top-down's minimum would). No arrival is sent.
 * When an outbox is full, a scan queues the arrivals it could not send as
 * RESEND items (the arrival itself, run on the sender, which sends it
 * again) and the rest of the row as a continuation EXPAND (edge offset in
 * the item's `in`).
 *
 * SSSP (sssp.c): delta-stepping between the ranks and Dial's
 * bucket queue inside each op; at one rank, one round of Dijkstra.
 *
 * One rank (local.c): no arrival can come, so BFS and SSSP run as
 * the runtime's own traversals (mkrt_traversal_*), the one-process
 * engine; mkrt_mpi_graph_config::own_rounds keeps the rounds above. The
 * API: include/mkrt_mpi/graph.h. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mkrt/mkrt.h"
#include "mpig_state.h"

/* Vertices per PULL item. */
#define PULL_SPAN 2048u
/* Top-down chunks: a CHUNK item covers frontier vertices until their rows
 * hold this many edges (or CHUNK_VERTICES vertices). */
#define CHUNK_EDGES 8192u
#define CHUNK_VERTICES 1024u

#define mine mpig_mine

/* The receive hook: arrivals (BFS depth and parent, SSSP distance) lower
 * `best`; a batch with anything else is declined (the layer publishes
 * it). The next level or round picks the lowered vertices up. */
static bool deliver(void *user, int src, const mkrt_item *items, size_t n)
{
    mkrt_mpi_graph *e = user;
    (void)src;
    for (size_t i = 0; i < n; i++)
        if ((items[i].op != OP_VISIT && items[i].op != OP_SETTLE) || !(items[i].param & ARRIVE) ||
            (items[i].param & ~ARRIVE) > ARRIVE_MAX || items[i].out >= e->vertices ||
            !mine(e, items[i].out))
            return false;
    for (size_t i = 0; i < n; i++) {
        const uint64_t x = items[i].param & ~ARRIVE;
        if (items[i].op == OP_SETTLE) {
            mpig_min(&e->best[items[i].out], x); /* the next round scans it */
        } else if (mpig_min(&e->best[items[i].out], x << 32 | items[i].in) == UNREACHED) {
            mpig_reached(e, items[i].out);
        }
    }
    return true;
}

/* Sends an arrival to its owner; when the outbox is full, queues it as a
 * RESEND item (the arrival itself, run again here in a later batch: an op
 * must not block). */
static mkrt_status forward(const mkrt_mpi_graph *e, const mkrt_op_ctx *ctx, mkrt_item arrival)
{
    size_t done = 0;
    mkrt_status st = mkrt_mpi_op_emit(e->mpi, ctx, &arrival, 1, &done);
    mkrt__mpig_count_sent(e, &arrival, done);
    if (st == MKRT_EAGAIN)
        st = mkrt_op_emit(ctx, &arrival, 1);
    return st;
}

/* BFS: scans v's row from edge offset `from` (see the file overview),
 * offering every target (depth(v) + 1) << 32 | v. A local target is
 * lowered in `best` (and joins the next frontier when it was unreached);
 * a remote one is staged as an arrival unless as good a value went to it
 * already. When an outbox is full, the rest of the row follows as an
 * EXPAND item. */
static mkrt_status scan(mkrt_mpi_graph *e, const mkrt_op_ctx *ctx, uint32_t v, uint32_t from)
{
    const uint64_t bv = atomic_load_explicit(&e->best[v], memory_order_relaxed);
    if (bv == UNREACHED)
        return MKRT_OK;
    const uint32_t depth = (uint32_t)(bv >> 32) + 1;
    const uint64_t val = (uint64_t)depth << 32 | v;
    const uint64_t lo = e->g->offsets[v], hi = e->g->offsets[v + 1];
    const uint32_t *t = e->g->targets;
    mpig_stage stage = {.n = 0};
    mkrt_status st = MKRT_OK;
    uint64_t i = lo + from;
    for (; i < hi && st == MKRT_OK && !stage.full; i++) {
        const uint32_t w = t[i];
        if (mine(e, w)) {
            if (mpig_min(&e->best[w], val) == UNREACHED)
                mpig_reached(e, w);
            continue;
        }
        if (mpig_min(&e->sent_min[w], val) <= val)
            continue; /* as good a value went to w's owner already */
        st = mpig_stage_add(e, ctx, &stage, (mkrt_item){OP_VISIT, v, w, ARRIVE | depth});
    }
    st = mpig_stage_end(e, ctx, &stage, st);
    atomic_fetch_add_explicit(&e->scanned, i - lo - from, memory_order_relaxed); /* statistic */
    if (st == MKRT_OK && i < hi) { /* an outbox is full: the rest of the row later */
        mkrt_item rest = {OP_VISIT, (uint32_t)(i - lo), v, EXPAND};
        st = mkrt_op_emit(ctx, &rest, 1);
    }
    return st;
}

/* BFS top-down: this rank's slice of frontier hub h's row (a delegate:
 * every rank scans 1/P of it, whoever owns the hub), offering
 * (hub_depth + 1) << 32 | hub like scan(). */
static mkrt_status hub_slice(mkrt_mpi_graph *e, const mkrt_op_ctx *ctx, uint32_t h)
{
    const uint32_t v = e->hubs[h], depth = e->hub_depth + 1;
    const uint64_t val = (uint64_t)depth << 32 | v, o = e->g->offsets[v];
    const uint64_t len = e->g->offsets[v + 1] - o, p = (uint64_t)e->size, r = (uint64_t)e->rank;
    const uint64_t lo = o + r * len / p, hi = o + (r + 1) * len / p;
    mpig_stage stage = {.n = 0};
    mkrt_status st = MKRT_OK;
    for (uint64_t i = lo; i < hi && st == MKRT_OK; i++) {
        const uint32_t w = e->g->targets[i];
        if (mine(e, w)) {
            if (mpig_min(&e->best[w], val) == UNREACHED)
                mpig_reached(e, w);
        } else if (mpig_min(&e->sent_min[w], val) > val) {
            st = mpig_stage_add(e, ctx, &stage, (mkrt_item){OP_VISIT, v, w, ARRIVE | depth});
        }
    }
    st = mpig_stage_end(e, ctx, &stage, st);
    atomic_fetch_add_explicit(&e->scanned, hi - lo, memory_order_relaxed); /* statistic */
    return st;
}

/* Bottom-up BFS over the n vertices from first: each unvisited one takes
 * its first neighbour in the frontier as parent (rows are sorted: the
 * smallest, as top-down's minimum would pick). */
static mkrt_status pull(mkrt_mpi_graph *e, uint32_t first, uint32_t n)
{
    const uint64_t *o = e->g->offsets;
    const uint32_t *t = e->g->targets;
    const uint64_t *bits = e->fbits;
    const uint64_t depth = (uint64_t)e->pull_depth + 1;
    uint64_t scanned = 0;
    for (uint32_t v = first; v < first + n && v < e->vertices; v++) {
        if (atomic_load_explicit(&e->best[v], memory_order_relaxed) != UNREACHED || !mine(e, v))
            continue;
        for (uint64_t i = o[v]; i < o[v + 1]; i++) {
            const uint32_t u = t[i];
            if (bits[u >> 6] >> (u & 63) & 1) {
                /* Only this item looks at v in a bottom-up level (no arrival travels). */
                atomic_store_explicit(&e->best[v], depth << 32 | u, memory_order_relaxed);
                mpig_reached(e, v);
                scanned += i - o[v] + 1;
                goto next;
            }
        }
        scanned += o[v + 1] - o[v];
    next:;
    }
    atomic_fetch_add_explicit(&e->scanned, scanned, memory_order_relaxed); /* statistic */
    return MKRT_OK;
}

/* The ops: CHUNK scans a slice of the frontier (BFS) or runs a bucket
 * queue (SSSP, sssp.c); EXPAND the rest of a row; PULL a block
 * bottom-up; an arrival on its owner (when the hook declined its batch)
 * lowers its vertex; elsewhere it is a RESEND. */
static mkrt_status visit(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    mkrt_mpi_graph *e = ctx->user;
    if (it->param == CHUNK && it->op == OP_SETTLE)
        return mkrt__mpig_sssp_chunk(e, ctx, it);
    if (it->param == CHUNK) {
        mkrt_status st = MKRT_OK;
        for (uint32_t k = e->chunk_lo[it->in]; k < e->chunk_lo[it->in + 1] && st == MKRT_OK; k++)
            st = scan(e, ctx, e->front[k], 0);
        return st;
    }
    if (it->param == HUB)
        return hub_slice(e, ctx, it->in);
    if (it->param == EXPAND)
        return scan(e, ctx, it->out, it->in);
    if (it->param == PULL)
        return pull(e, it->out, it->in + 1);
    if (it->out >= e->vertices || !mine(e, it->out))
        return forward(e, ctx, *it);
    const uint64_t x = it->param & ~ARRIVE;
    if (it->op == OP_SETTLE)
        mpig_min(&e->best[it->out], x); /* the next round scans it */
    else if (mpig_min(&e->best[it->out], x << 32 | it->in) == UNREACHED)
        mpig_reached(e, it->out);
    return MKRT_OK;
}

/* The hubs (delegates): degree hub_degree or more, hub_degree doubled
 * from MPIG_HUB_DEGREE until at most MPIG_HUBS qualify. The same on every
 * rank (every rank holds the graph). One rank: none (nothing to split). */
static void pick_hubs(mkrt_mpi_graph *e)
{
    const uint64_t *o = e->g->offsets;
    e->hub_degree = MPIG_HUB_DEGREE;
    for (;;) {
        uint32_t n = 0;
        for (uint32_t v = 0; v < e->vertices; v++)
            n += o[v + 1] - o[v] >= e->hub_degree;
        if (n <= MPIG_HUBS)
            break;
        e->hub_degree *= 2;
    }
    e->nhubs = 0;
    for (uint32_t v = 0; v < e->vertices; v++) {
        e->hub_idx[v] = MPIG_NO_HUB;
        if (e->size > 1 && o[v + 1] - o[v] >= e->hub_degree) {
            e->hub_idx[v] = (uint16_t)e->nhubs;
            e->hubs[e->nhubs++] = v;
        }
    }
}

static void free_engine(mkrt_mpi_graph *e)
{
    const size_t nv = e->vertices;
    mkrt__free(e->hub_idx, nv * sizeof *e->hub_idx);
    mkrt__free(e->hubs, MPIG_HUBS * sizeof *e->hubs);
    mkrt__mpig_sssp_close(e);
    mkrt__free(e->cells, nv * sizeof *e->cells);
    mkrt__free(e->seeds, (nv + 1 + MPIG_HUBS) * sizeof *e->seeds);
    mkrt__free(e->sent_min, nv * sizeof *e->sent_min);
    mkrt__free(e->best, nv * sizeof *e->best);
    mkrt__free(e->done, nv * sizeof *e->done);
    mkrt__free(e->fbits, (nv + 63) / 64 * sizeof *e->fbits);
    mkrt__free(e->front, nv * sizeof *e->front);
    mkrt__free(e->next, nv * sizeof *e->next);
    mkrt__free(e->chunk_lo, (nv + 2) * sizeof *e->chunk_lo);
    mkrt__free(e, sizeof *e);
}

/* The status an open fails with: the failed call's (ENOMEM if it gave none). */
static mkrt_status open_status(const mkrt_error *err)
{
    return err->status != MKRT_OK ? err->status : MKRT_ENOMEM;
}

static mkrt_status fail_open(mkrt_mpi_graph *e, mkrt_error *out, const char *what,
                             const mkrt_error *err)
{
    mkrt_status st = mkrt__mpig_fail(out, open_status(err), "open: %s: %s", what, err->message);
    if (e != NULL) {
        mkrt_producer_close(e->producer);
        mkrt_destroy(e->rt, MKRT_TIMEOUT_INFINITE, NULL);
        free_engine(e);
    }
    return st;
}

/* A failure before the layer exists: this rank joins its layer's create
 * as failed (mkrt_mpi_create_failed), so that every rank's open fails
 * alike instead of the others waiting wait_timeout_ms in the create and
 * ending the job; then it frees what it made. */
static mkrt_status fail_early(mkrt_mpi_graph *e, const mkrt_mpi_config *mc, mkrt_error *out, const char *what,
                              const mkrt_error *err)
{
    mkrt_error join = {MKRT_OK, ""};
    const mkrt_status why = open_status(err);
    if (mkrt_mpi_create_failed(mc, why, &join) != why) /* MPI unusable: say so, not the first cause */
        return fail_open(e, out, "mkrt_mpi_create_failed", &join);
    return fail_open(e, out, what, err);
}

mkrt_mpi_graph_config mkrt_mpi_graph_config_default(void)
{
    return (mkrt_mpi_graph_config){.workers = 1, .partition = MKRT_MPI_BLOCK, .symmetric = false,
                                   .own_rounds = false, .delta = MPIG_DELTA, .widen = MPIG_WIDEN};
}

/* The first edge whose weight SSSP cannot take (0 or above the bucket
 * queue's span), into e->bad_weight_*; weights NULL: every weight is 1. */
static void check_weights(mkrt_mpi_graph *e)
{
    const mkrt_graph *g = e->g;
    e->bad_weight_edge = UINT64_MAX;
    if (g->weights == NULL)
        return;
    for (uint64_t i = 0; i < g->offsets[g->vertices]; i++)
        if (g->weights[i] == 0 || g->weights[i] > MKRT_MPI_GRAPH_WEIGHT_MAX) {
            e->bad_weight_edge = i;
            return;
        }
}

mkrt_status mkrt_mpi_graph_open(const mkrt_graph *g, const mkrt_mpi_graph_config *conf,
                                mkrt_mpi_graph **out, mkrt_error *errp)
{
    mkrt_error err = {0};
    if (out != NULL)
        *out = NULL;
    if (g == NULL || out == NULL)
        return mkrt__mpig_fail(errp, MKRT_EINVAL, "open: %s is NULL. Fix: pass the graph and where the engine "
                    "goes.", g == NULL ? "the graph" : "out");
    if (g->vertices == 0 || g->vertices >= MKRT_CONFIG_CELLS_MAX || g->offsets == NULL ||
        (g->targets == NULL && g->offsets[g->vertices] > 0))
        return mkrt__mpig_fail(errp, MKRT_EINVAL, "open: a graph of %u vertices (offsets %s, targets %s) is not "
                    "one the engine takes: 1..%u vertices, offsets and targets set. Fix: a smaller "
                    "graph, or its arrays.", g->vertices, g->offsets ? "set" : "NULL",
                    g->targets ? "set" : "NULL", MKRT_CONFIG_CELLS_MAX - 1);
    const mkrt_mpi_graph_config c = conf != NULL ? *conf : mkrt_mpi_graph_config_default();
    /* mkrt_graph_register checks the rest (offsets, targets) at create;
     * the sizes below only need offsets[vertices], and no array is read
     * beyond it before then. */
    const size_t nv = g->vertices;
    /* The layer's configuration first: a failure before the layer exists
     * joins its create with it (fail_early). */
    mkrt_mpi_config mc = mkrt_mpi_config_default();
    mc.handles = g->vertices;
    mc.partition = c.partition;
    mc.buffers = 32; /* SSSP rounds send bursts: fewer arrivals wait for room (2 MiB per peer) */
    mc.deliver = deliver; /* BFS arrivals applied in bulk (see the file overview) */
    mkrt_mpi_graph *e = mkrt__alloc_zeroed(sizeof *e, MKRT_CACHE_LINE);
    if (e == NULL) {
        err = (mkrt_error){MKRT_ENOMEM, ""};
        snprintf(err.message, sizeof err.message, "out of memory for the engine (%zu bytes). Fix: more memory.",
                 sizeof *e);
        return fail_early(NULL, &mc, errp, "allocation", &err);
    }
    e->workers = c.workers > 0 ? c.workers : 1;
    e->vertices = g->vertices; /* mkrt__mpig_sssp_open sizes by them */
    e->graph = *g; /* the arrays stay borrowed */
    e->g = &e->graph;
    e->symmetric = c.symmetric;
    e->own_rounds = c.own_rounds;
    e->delta = c.delta > 0 ? c.delta : MPIG_DELTA;
    e->widen = c.widen; /* 0: every window one delta wide */
    mc.deliver_user = e;
    mkrt_config rc = mkrt_config_default();
    rc.backend = MKRT_BACKEND_CPU;
    rc.workers = e->workers;
    rc.cells = g->vertices;
    rc.append_log_capacity = 0;
    rc.ring_capacity = 1u << 14;
    rc.emit_capacity = 1u << 20; /* arrivals (RESEND) that wait for outbox room */
    if (mkrt_create(&rc, &e->rt, &err) != MKRT_OK)
        return fail_early(e, &mc, errp, "mkrt_create", &err);
    mkrt_op_desc d = {.fn = visit, .user = e, .name = "mpi-bfs-visit", .idempotent = true,
                      .commutes = true};
    if (mkrt_op_register(e->rt, OP_VISIT, &d, &err) != MKRT_OK)
        return fail_early(e, &mc, errp, "mkrt_op_register", &err);
    d.name = "mpi-sssp-settle";
    if (mkrt_op_register(e->rt, OP_SETTLE, &d, &err) != MKRT_OK)
        return fail_early(e, &mc, errp, "mkrt_op_register", &err);
    /* The graph checked (offsets, targets) before any row is read. */
    if (mkrt__mpig_local_register(e, &err) != MKRT_OK)
        return fail_early(e, &mc, errp, "mkrt_graph_register", &err);
    if ((e->cells = mkrt__alloc(nv * sizeof *e->cells, MKRT_CACHE_LINE)) == NULL ||
        (e->seeds = mkrt__alloc((nv + 1 + MPIG_HUBS) * sizeof *e->seeds, MKRT_CACHE_LINE)) == NULL ||
        (e->sent_min = mkrt__alloc(nv * sizeof *e->sent_min, MKRT_CACHE_LINE)) == NULL ||
        (e->best = mkrt__alloc(nv * sizeof *e->best, MKRT_CACHE_LINE)) == NULL ||
        (e->done = mkrt__alloc(nv * sizeof *e->done, MKRT_CACHE_LINE)) == NULL ||
        (e->fbits = mkrt__alloc((nv + 63) / 64 * sizeof *e->fbits, MKRT_CACHE_LINE)) == NULL ||
        (e->front = mkrt__alloc(nv * sizeof *e->front, MKRT_CACHE_LINE)) == NULL ||
        (e->next = mkrt__alloc(nv * sizeof *e->next, MKRT_CACHE_LINE)) == NULL ||
        (e->chunk_lo = mkrt__alloc((nv + 2) * sizeof *e->chunk_lo, MKRT_CACHE_LINE)) == NULL ||
        (e->hub_idx = mkrt__alloc(nv * sizeof *e->hub_idx, MKRT_CACHE_LINE)) == NULL ||
        (e->hubs = mkrt__alloc(MPIG_HUBS * sizeof *e->hubs, MKRT_CACHE_LINE)) == NULL || mkrt__mpig_sssp_open(e) != 0) {
        err = (mkrt_error){MKRT_ENOMEM, ""};
        snprintf(err.message, sizeof err.message, "out of memory for %u vertices and %llu edges. "
                 "Fix: a smaller graph or more memory.", g->vertices,
                 (unsigned long long)g->offsets[g->vertices]);
        return fail_early(e, &mc, errp, "allocation", &err);
    }
    check_weights(e);
    for (uint32_t v = 0; v < g->vertices; v++)
        atomic_init(&e->best[v], UNREACHED); /* before the hook can run */
    if (mkrt_mpi_create(&mc, e->rt, &e->mpi, &err) != MKRT_OK)
        return fail_open(e, errp, "mkrt_mpi_create", &err);
    e->rank = mkrt_mpi_rank(e->mpi);
    e->size = mkrt_mpi_size(e->mpi);
    e->fwords = (g->vertices + 63) / 64;
    atomic_init(&e->next_n, 0);
    if (c.partition == MKRT_MPI_BLOCK || e->size == 1) { /* mkrt_mpi.h: rank r owns r*k .. r*k+k-1 */
        const uint64_t k = ((uint64_t)g->vertices + (uint64_t)e->size - 1) / (uint64_t)e->size;
        const uint64_t lo = k * (uint64_t)e->rank;
        e->own_lo = lo < g->vertices ? (uint32_t)lo : g->vertices;
        e->own_n = (uint32_t)((lo + k < g->vertices ? lo + k : g->vertices) - e->own_lo);
        e->block_k = k;
    }
    /* What this rank needs once the layer exists: its counters and its
     * producer. The ranks agree on them: a rank that failed alone would
     * leave the others' first search in collectives it never joins. The
     * others fail with ENOMEM where every failing rank ran out of memory,
     * else with EAGAIN (a producer refused: max_producers). */
    const char *what = "allocation";
    mkrt_status mine_st = MKRT_OK;
    if (mkrt__mpig_sssp_ranks(e) != 0) {
        mine_st = MKRT_ENOMEM;
        err = (mkrt_error){MKRT_ENOMEM, ""};
        snprintf(err.message, sizeof err.message, "out of memory for %d ranks' counters. Fix: "
                 "fewer ranks or more memory.", e->size);
    } else if ((e->producer = mkrt_producer_open(e->rt, &err)) == NULL) {
        mine_st = err.status;
        what = "mkrt_producer_open";
    }
    uint64_t failed[2] = {mine_st != MKRT_OK, mine_st == MKRT_ENOMEM};
    if (e->size > 1)
        mkrt_mpi_allreduce_sum(e->mpi, failed, 2);
    if (failed[0] != 0) {
        mkrt_mpi_destroy(e->mpi, NULL);
        if (mine_st == MKRT_OK) {
            what = "another rank";
            err = (mkrt_error){failed[1] == failed[0] ? MKRT_ENOMEM : MKRT_EAGAIN, ""};
            snprintf(err.message, sizeof err.message, "%llu of %d ranks could not open their part "
                     "(see their messages). Fix: %s on those ranks.", (unsigned long long)failed[0], e->size,
                     err.status == MKRT_ENOMEM ? "free memory" : "raise mkrt_config.max_producers");
        }
        return fail_open(e, errp, what, &err);
    }
    for (uint32_t v = 0; v < g->vertices; v++)
        if (mine(e, v))
            e->owned_edges += g->offsets[v + 1] - g->offsets[v];
    pick_hubs(e);
    mkrt__mpig_sssp_rows(e);
    if (mkrt__mpig_local_open(e, &err) != MKRT_OK) { /* one rank: nobody to agree with */
        if (e->mpi != NULL)
            mkrt_mpi_destroy(e->mpi, NULL);
        return fail_open(e, errp, "one-rank traversals", &err);
    }
    *out = e;
    return MKRT_OK;
}

int mkrt_mpi_graph_rank(const mkrt_mpi_graph *e)
{
    return e != NULL ? e->rank : -1;
}

int mkrt_mpi_graph_size(const mkrt_mpi_graph *e)
{
    return e != NULL ? e->size : 0;
}

mkrt_mpi *mkrt_mpi_graph_layer(mkrt_mpi_graph *e)
{
    return e != NULL ? e->mpi : NULL;
}

/* Publishes a bottom-up level: the global frontier (each rank's bits;
 * a sum of disjoint bits is their or) and PULL items over this rank's
 * vertices. */
static mkrt_status pull_level(mkrt_mpi_graph *e, uint32_t depth)
{
    memset(e->fbits, 0, (size_t)e->fwords * sizeof *e->fbits);
    const uint32_t lo = e->own_n > 0 ? e->own_lo : 0, hi = e->own_n > 0 ? lo + e->own_n : e->vertices;
    for (uint32_t k = 0; k < e->front_n; k++)
        e->fbits[e->front[k] >> 6] |= 1ull << (e->front[k] & 63);
    mkrt_status st = mkrt_mpi_allreduce_sum(e->mpi, e->fbits, e->fwords);
    e->coll++;
    e->pull_depth = depth;
    size_t n = 0;
    for (uint32_t v = lo; v < hi; v += PULL_SPAN)
        e->seeds[n++] = (mkrt_item){OP_VISIT, (hi - v < PULL_SPAN ? hi - v : PULL_SPAN) - 1, v, PULL};
    if (st == MKRT_OK && n > 0)
        st = mkrt_publish(e->producer, e->seeds, n, MKRT_TIMEOUT_INFINITE, NULL);
    return st;
}

/* Top-down: CHUNK items over the frontier, cut by edges so that a
 * chunk's rows hold about CHUNK_EDGES edges. */
static mkrt_status chunk_level(mkrt_mpi_graph *e)
{
    size_t n = 0;
    uint64_t edges = 0;
    uint32_t m = 0;
    for (uint32_t k = 0; k < e->front_n; k++) /* the hubs go as HUB items (below) */
        if (e->hub_idx[e->front[k]] == MPIG_NO_HUB)
            e->front[m++] = e->front[k];
    e->front_n = m;
    e->chunk_lo[0] = 0;
    for (uint32_t k = 0; k < e->front_n; k++) {
        const uint32_t v = e->front[k];
        edges += e->g->offsets[v + 1] - e->g->offsets[v];
        if (edges >= CHUNK_EDGES || k + 1 - e->chunk_lo[n] >= CHUNK_VERTICES || k + 1 == e->front_n) {
            e->seeds[n] = (mkrt_item){OP_VISIT, (uint32_t)n, (uint32_t)n, CHUNK};
            e->chunk_lo[++n] = k + 1;
            edges = 0;
        }
    }
    for (uint32_t h = 0; h < e->nhubs; h++) /* every rank: its slice of each frontier hub */
        if (e->hbits[h / 64] >> (h % 64) & 1)
            e->seeds[n++] = (mkrt_item){OP_VISIT, h, e->hubs[h], HUB};
    return n > 0 ? mkrt_publish(e->producer, e->seeds, n, MKRT_TIMEOUT_INFINITE, NULL) : MKRT_OK;
}

/* BFS levels: the vertices reached in the last level (`next`, filled by
 * the ops and the hook) become the frontier; each rank writes their best
 * values (depth and parent) into its cells, then the level runs top-down
 * (CHUNK items: rows of the frontier) or
 * bottom-up (PULL items: the unvisited vertices look for a parent in the
 * frontier), chosen from global counts; all wait for the level to end.
 * Returns the status of the first failure (the same on every rank: the
 * counts are summed). */
static mkrt_status levels(mkrt_mpi_graph *e)
{
    mkrt_mpi_stats m0, m1;
    uint64_t scanned0 = atomic_load_explicit(&e->scanned, memory_order_relaxed);
    mkrt_mpi_stats_read(e->mpi, &m0);
    double t0 = mkrt__mpig_seconds();
    e->nlv = 0;
    int bottom_up = 0;
    uint64_t edges_u = e->owned_edges; /* edges of the unvisited owned vertices */
    for (uint64_t level = 0;; level++) {
        mkrt_status st = MKRT_OK;
        /* Relaxed: written before the last global quiescence (see the fields). */
        const uint32_t n = (uint32_t)atomic_load_explicit(&e->next_n, memory_order_relaxed);
        uint32_t *f = e->front;
        e->front = e->next;
        e->next = f;
        e->front_n = n;
        atomic_store_explicit(&e->next_n, 0, memory_order_relaxed); /* no op runs */
        uint64_t edges_f = 0;
        memset(e->hbits, 0, sizeof e->hbits);
        for (uint32_t k = 0; st == MKRT_OK && k < n; k++) {
            const uint32_t v = e->front[k];
            if (e->hub_idx[v] != MPIG_NO_HUB)
                e->hbits[e->hub_idx[v] / 64] |= 1ull << (e->hub_idx[v] % 64);
            edges_f += e->g->offsets[v + 1] - e->g->offsets[v];
            st = mkrt_cell_write(e->rt, v, atomic_load_explicit(&e->best[v], memory_order_relaxed));
        }
        edges_u -= edges_f;
        /* The previous level's traffic travels with this level's count. */
        mkrt_mpi_stats_read(e->mpi, &m1);
        const uint64_t scanned1 = atomic_load_explicit(&e->scanned, memory_order_relaxed);
        /* With the frontier hubs' bits (disjoint: a sum is their or). */
        uint64_t sums[8 + MPIG_HUB_WORDS] = {n, st != MKRT_OK, scanned1 - scanned0,
                                             m1.forwarded - m0.forwarded, m1.bytes_sent - m0.bytes_sent,
                                             m1.messages_sent - m0.messages_sent, edges_f, edges_u};
        memcpy(sums + 8, e->hbits, sizeof e->hbits);
        mkrt_mpi_allreduce_sum(e->mpi, sums, 8 + MPIG_HUB_WORDS);
        e->coll++;
        memcpy(e->hbits, sums + 8, sizeof e->hbits);
        e->hub_depth = (uint32_t)level;
        m0 = m1;
        scanned0 = scanned1;
        if (level > 0) {
            mkrt_mpi_graph_level *l = &e->lv[e->nlv - 1];
            l->scanned += sums[2];
            l->arrivals += sums[3];
            l->bytes += sums[4];
            l->messages += sums[5];
            const double t1 = mkrt__mpig_seconds();
            l->seconds += t1 - t0;
            t0 = t1;
        }
        if (sums[1] != 0)
            return MKRT_ECLOSED;
        if (sums[0] == 0)
            return MKRT_OK; /* no rank has a vertex at this depth */
        /* Every rank sees the same sums, so all take the same direction. */
        if (e->symmetric && (bottom_up || level > 0)) /* Beamer's rule (mkrt/graph.h) */
            bottom_up = mkrt_graph_pull_next(sums[0], sums[6], sums[7], e->vertices, bottom_up);
        if (e->nlv < MKRT_MPI_GRAPH_LEVELS)
            e->lv[e->nlv++] = (mkrt_mpi_graph_level){0};
        e->lv[e->nlv - 1].frontier += sums[0];
        e->lv[e->nlv - 1].bottom_up = bottom_up;
        if (bottom_up)
            st = pull_level(e, (uint32_t)level);
        else
            st = chunk_level(e);
        if (st == MKRT_OK)
            st = mkrt_mpi_quiesce(e->mpi, MKRT_TIMEOUT_INFINITE);
        if (st != MKRT_OK)
            return st; /* the others fail at their next collective's timeout */
    }
}

/* Resets the cells and tables, starts together, seeds on the root's
 * owner, runs to global quiescence (BFS: level by level), gathers the
 * cells to rank 0. */
static mkrt_status run(mkrt_mpi_graph *e, mkrt_item seed, int by_level, mkrt_mpi_graph_counts *c,
                       mkrt_error *errp)
{
    for (uint32_t v = 0; v < e->vertices; v++) {
        mkrt_cell_write(e->rt, v, UNREACHED); /* quiescent: nothing touches them */
        atomic_store_explicit(&e->sent_min[v], UNREACHED, memory_order_relaxed); /* ordered by the quiescence below */
        atomic_store_explicit(&e->best[v], UNREACHED, memory_order_relaxed);
        atomic_store_explicit(&e->done[v], UNREACHED, memory_order_relaxed);
        atomic_store_explicit(&e->hdone[v], UNREACHED, memory_order_relaxed);
    }
    mkrt_stats s0, s1;
    mkrt_mpi_stats m0, m1;
    mkrt_stats_read(e->rt, &s0);
    mkrt_mpi_stats_read(e->mpi, &m0);
    const uint64_t scanned0 = atomic_load_explicit(&e->scanned, memory_order_relaxed);
    mkrt_status st = mkrt_mpi_quiesce(e->mpi, MKRT_TIMEOUT_INFINITE); /* everyone is ready */
    double t0 = mkrt__mpig_seconds();
    const uint64_t coll0 = e->coll;
    mkrt_mpi_stats_read(e->mpi, &m0); /* the waves from here */
    mkrt_error err = {0};
    mkrt_status q = MKRT_OK;
    const int has_root = mkrt_mpi_owner(e->mpi, seed.out) == e->rank;
    atomic_store_explicit(&e->next_n, 0, memory_order_relaxed); /* quiescent */
    if (has_root) { /* the root: BFS depth 0, its own parent (the first frontier); SSSP distance 0 */
        atomic_store_explicit(&e->best[seed.out], by_level ? seed.out : 0, memory_order_relaxed);
        if (by_level)
            mpig_reached(e, seed.out);
    }
    if (by_level) {
        if (st == MKRT_OK)
            q = levels(e);
    } else {
        (void)err;
        if (st == MKRT_OK)
            q = mkrt__mpig_sssp_rounds(e, s0.failed);
        /* The distances into the cells (the runtime is quiescent). */
        for (uint32_t v = 0; st == MKRT_OK && v < e->vertices; v++)
            if (mkrt_mpi_owner(e->mpi, v) == e->rank)
                st = mkrt_cell_write(e->rt, v, atomic_load_explicit(&e->best[v], memory_order_relaxed));
    }
    const double seconds = mkrt__mpig_seconds() - t0;
    mkrt_stats_read(e->rt, &s1);
    mkrt_mpi_stats_read(e->mpi, &m1);
    /* Edges: what the row scans read (SSSP: a row again per lowering). */
    const uint64_t edges = atomic_load_explicit(&e->scanned, memory_order_relaxed) - scanned0;
    uint64_t sums[8] = {edges, m1.forwarded - m0.forwarded, m1.messages_sent - m0.messages_sent,
                        s1.failed - s0.failed, st != MKRT_OK || q != MKRT_OK,
                        m1.deferred - m0.deferred, m1.bytes_sent - m0.bytes_sent,
                        m1.bytes_sent_node - m0.bytes_sent_node};
    mkrt_mpi_allreduce_sum(e->mpi, sums, 8);
    *c = (mkrt_mpi_graph_counts){seconds, sums[0], sums[1], sums[2], sums[5], sums[3], sums[6],
                                 sums[7], e->coll - coll0 + m1.waves - m0.waves};
    mkrt_mpi_gather_cells(e->mpi, 0, e->vertices, e->cells);
    if (sums[4] != 0 || sums[3] != 0) {
        return mkrt__mpig_fail(errp, MKRT_ECLOSED, "%s from %u: %s; %llu item(s) failed over "
                               "the ranks. Fix: see the failing rank's message (stderr).",
                               by_level ? "BFS" : "SSSP", seed.out,
                               sums[4] ? "a rank's publish or quiescence failed"
                                       : "the search is incomplete",
                               (unsigned long long)sums[3]);
    }
    return MKRT_OK;
}

/* The checks every rank passes or fails alike (the same graph and
 * arguments everywhere; out is needed on rank 0 only, so whether it is
 * missing there is summed over the ranks). */
static mkrt_status bad_call(mkrt_mpi_graph *e, uint32_t root, const void *out, int sssp,
                            mkrt_error *err)
{
    if (e == NULL)
        return mkrt__mpig_fail(err, MKRT_EINVAL, "%s: the engine is NULL. Fix: pass the engine "
                               "mkrt_mpi_graph_open() gave.", sssp ? "sssp" : "bfs");
    if (root >= e->vertices)
        return mkrt__mpig_fail(err, MKRT_EINVAL, "%s: root %u is not a vertex (the graph has %u). "
                               "Fix: a root below %u.", sssp ? "sssp" : "bfs", root, e->vertices,
                               e->vertices);
    if (sssp && e->bad_weight_edge != UINT64_MAX) {
        const uint64_t k = e->bad_weight_edge;
        uint32_t v = 0; /* the edge's source: the last row starting at or before k */
        for (uint32_t lo = 0, hi = e->vertices; lo < hi;) {
            const uint32_t mid = lo + (hi - lo) / 2;
            if (e->g->offsets[mid] <= k) {
                v = mid;
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return mkrt__mpig_fail(err, MKRT_EINVAL, "sssp: edge %llu (%u -> %u) has weight %u; the "
                               "distributed SSSP takes weights 1..%u (its bucket queues span them). "
                               "Fix: weights in that range, or the runtime's SSSP "
                               "(mkrt_traversal_open) in one process.", (unsigned long long)k, v,
                               e->g->targets[k], e->g->weights[k], MKRT_MPI_GRAPH_WEIGHT_MAX);
    }
    uint64_t missing = e->rank == 0 && out == NULL;
    if (e->mpi != NULL)
        mkrt_mpi_allreduce_sum(e->mpi, &missing, 1);
    if (missing != 0)
        return mkrt__mpig_fail(err, MKRT_EINVAL, "%s: rank 0's %s is NULL. Fix: room for one "
                               "value per vertex (%u) on rank 0.", sssp ? "sssp" : "bfs",
                               sssp ? "dist" : "parent", e->vertices);
    return MKRT_OK;
}

/* One search (BFS into parent, or SSSP into dist), checked, run and
 * written out on rank 0. */
static mkrt_status search(mkrt_mpi_graph *e, int sssp, uint32_t root, uint32_t *parent,
                          uint64_t *dist, mkrt_mpi_graph_counts *c, mkrt_error *err)
{
    mkrt_mpi_graph_counts scratch;
    if (c == NULL)
        c = &scratch;
    *c = (mkrt_mpi_graph_counts){0};
    mkrt_status st = bad_call(e, root, sssp ? (const void *)dist : (const void *)parent, sssp, err);
    if (st != MKRT_OK)
        return st;
    if ((sssp ? e->sssp_t : e->bfs_t) != NULL) /* one rank: the runtime's traversal (local.c) */
        return mkrt__mpig_local_search(e, root, parent, dist, c, err);
    const mkrt_item seed = {sssp ? OP_SETTLE : OP_VISIT, 0, root, EXPAND};
    if ((st = run(e, seed, !sssp, c, err)) != MKRT_OK)
        return st;
    for (uint32_t v = 0; e->rank == 0 && v < e->vertices; v++) {
        const bool unreached = e->cells[v] == UNREACHED;
        if (sssp)
            dist[v] = unreached ? MKRT_MPI_GRAPH_UNREACHED : e->cells[v];
        else
            parent[v] = unreached ? MKRT_MPI_GRAPH_NO_PARENT : (uint32_t)e->cells[v];
    }
    return MKRT_OK;
}

mkrt_status mkrt_mpi_graph_bfs(mkrt_mpi_graph *e, uint32_t root, uint32_t *parent,
                               mkrt_mpi_graph_counts *c, mkrt_error *err)
{
    return search(e, 0, root, parent, NULL, c, err);
}

mkrt_status mkrt_mpi_graph_sssp(mkrt_mpi_graph *e, uint32_t root, uint64_t *dist,
                                mkrt_mpi_graph_counts *c, mkrt_error *err)
{
    return search(e, 1, root, NULL, dist, c, err);
}

uint32_t mkrt_mpi_graph_hub_degree(const mkrt_mpi_graph *e)
{
    return e != NULL && e->nhubs > 0 ? e->hub_degree : 0;
}

size_t mkrt_mpi_graph_levels(const mkrt_mpi_graph *e, mkrt_mpi_graph_level *out, size_t max)
{
    if (e == NULL || out == NULL)
        return 0;
    size_t n = e->nlv < max ? e->nlv : max;
    for (size_t i = 0; i < n; i++)
        out[i] = e->lv[i];
    return n;
}

void mkrt_mpi_graph_close(mkrt_mpi_graph *e)
{
    if (e == NULL)
        return;
    if (e->mpi != NULL) /* one rank: stopped after the open (local.c) */
        mkrt_mpi_destroy(e->mpi, NULL);
    mkrt_producer_close(e->producer);
    mkrt_destroy(e->rt, MKRT_TIMEOUT_INFINITE, NULL);
    free_engine(e);
}
