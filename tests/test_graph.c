/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_graph.c - streaming graph workloads (issue 14) on the CPU pool
 * and on the simulated device: ops that emit (order after the emitter,
 * dedupe of emitted duplicates, a full emission queue), the commuting
 * update built-ins (MIN, OR, ACC: a frontier on one handle is one layer,
 * results as sequential), quiescence with emission chains, the registered
 * graph (bad input, RELAX), and mkrt's traversal engine
 * (examples/graph500/traverse_mkrt.c, compiled in here) against a simple
 * BFS and Dijkstra. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/runtime/runtime_internal.h"
#include "count_alloc.h"
#include "mkrt/mkrt.h"
#include "graph_fixture.h"
#include "tap.h"

/* The engine under test, with its SIM twin. */
#include "../examples/graph500/traverse_mkrt.c"

#define SEC 10000000000ull
#define CELLS 4096

static const mkrt_backend_kind kinds[] = {MKRT_BACKEND_CPU, MKRT_BACKEND_SIM};
static const char *kind_name(mkrt_backend_kind k)
{
    return k == MKRT_BACKEND_SIM ? "sim" : "cpu";
}

static mkrt_runtime *start_with(mkrt_backend_kind kind, size_t emit_capacity)
{
    mkrt_config c = mkrt_config_default();
    c.backend = kind;
    c.workers = 2;
    c.cells = CELLS;
    c.emit_capacity = emit_capacity;
    c.append_log_capacity = 16;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK)
        bail_out("mkrt_create: %s", err.message);
    return rt;
}

static uint64_t cell(mkrt_runtime *rt, uint32_t h)
{
    uint64_t v = 0;
    mkrt_cell_read(rt, h, &v);
    return v;
}

static mkrt_stats stats(mkrt_runtime *rt)
{
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    return s;
}

static void publish(mkrt_producer *p, const mkrt_item *items, size_t n)
{
    if (mkrt_publish(p, items, n, MKRT_TIMEOUT_INFINITE, NULL) != MKRT_OK)
        bail_out("publish failed");
}

/* Publishes items as one batch (the dispatcher parked meanwhile). */
static void publish_one_batch(mkrt_runtime *rt, mkrt_producer *p, const mkrt_item *items, size_t n)
{
    mkrt__runtime_hold(rt, true);
    publish(p, items, n);
    mkrt__runtime_hold(rt, false);
}

static bool accounted(mkrt_runtime *rt)
{
    mkrt_stats s = stats(rt);
    return s.published + s.emitted == s.executed + s.pruned + s.failed;
}

/* ---- ops that emit ---- */

enum { OP_EMIT_ADD = 16, OP_EMIT_TWICE, OP_EMIT_N, OP_CHAIN, OP_CMIN, OP_PMIN, OP_BAD_EMIT, OP_EDGES };

/* cells[out] = param, then emits ADD(out -> out + 1, 1): it can only see
 * param if it runs after its emitter. */
static mkrt_status emit_add(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    ctx->cells[it->out] = it->param;
    mkrt_item e = {MKRT_OP_ADD, it->out, it->out + 1, 1};
    return mkrt_op_emit(ctx, &e, 1);
}

/* Emits the same STORE twice in one call. */
static mkrt_status emit_twice(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    mkrt_item e[2] = {{MKRT_OP_STORE, 0, it->out, it->param}, {MKRT_OP_STORE, 0, it->out, it->param}};
    return mkrt_op_emit(ctx, e, 2);
}

/* Emits param ACC items onto out + 1 and records mkrt_op_emit's status in
 * cells[out] (as a negative number). */
static mkrt_status emit_n(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    mkrt_item e[64];
    for (uint32_t i = 0; i < it->param && i < 64; i++)
        e[i] = (mkrt_item){MKRT_OP_ACC, 0, it->out + 1, 1};
    mkrt_status st = mkrt_op_emit(ctx, e, it->param);
    ctx->cells[it->out] = (uint64_t)(int64_t)st;
    return st;
}

/* A chain: counts in cells[out] and emits itself with param - 1 down to 0. */
static mkrt_status chain(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    ctx->cells[it->out] += 1;
    if (it->param == 0)
        return MKRT_OK;
    mkrt_item e = {OP_CHAIN, it->in, it->out, it->param - 1};
    return mkrt_op_emit(ctx, &e, 1);
}

/* cells[out] = min(cells[out], param), atomically (a commuting user op). */
static mkrt_status cmin(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    (void)mkrt_op_cell_min(ctx, it->out, it->param);
    return MKRT_OK;
}

/* Bad calls of the emission API from inside an op; records the statuses. */
static mkrt_status bad_emit(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    mkrt_op_ctx copy = *ctx;
    copy.run = NULL;
    mkrt_item e = {MKRT_OP_NOP, 0, 0, 0};
    int okays = (mkrt_op_emit(NULL, &e, 1) == MKRT_EINVAL) + (mkrt_op_emit(&copy, &e, 1) == MKRT_EINVAL) +
                (mkrt_op_emit(ctx, NULL, 1) == MKRT_EINVAL) + (mkrt_op_emit(ctx, NULL, 0) == MKRT_OK) +
                (mkrt_op_emit_edges(ctx, 0) == MKRT_EINVAL) /* not registered with expands */ +
                (mkrt_op_emit_edges(NULL, 0) == MKRT_EINVAL) + (mkrt_op_cell_min(NULL, 0, 0) == false) +
                (mkrt_op_cell_min(ctx, CELLS, 0) == false);
    mkrt_op_changed(NULL);
    mkrt_op_changed(&copy);
    ctx->cells[it->out] = (uint64_t)okays;
    return MKRT_OK;
}

static void reg(mkrt_runtime *rt, uint32_t op, mkrt_op_fn fn, bool idempotent, bool commutes, bool expands)
{
    mkrt_op_desc d = {.fn = fn, .name = "test", .idempotent = idempotent, .commutes = commutes,
                      .expands = expands};
    mkrt_error err;
    if (mkrt_op_register(rt, op, &d, &err) != MKRT_OK)
        bail_out("mkrt_op_register: %s", err.message);
}

static void emission(mkrt_backend_kind kind)
{
    const char *k = kind_name(kind);
    mkrt_runtime *rt = start_with(kind, 64);
    reg(rt, OP_EMIT_ADD, emit_add, false, false, false);
    reg(rt, OP_EMIT_TWICE, emit_twice, false, false, false);
    reg(rt, OP_EMIT_N, emit_n, false, false, false);
    reg(rt, OP_BAD_EMIT, bad_emit, false, false, false);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);

    /* After the emitter: the emitted ADD sees what its emitter wrote, even
     * with a STORE to the emitter's cell later in the same batch (the
     * emitted item runs in a later batch, after it). */
    mkrt_item a[2] = {{OP_EMIT_ADD, 0, 10, 41}, {MKRT_OP_STORE, 0, 10, 100}};
    publish_one_batch(rt, p, a, 2);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: quiescent after an emission", k);
    is(cell(rt, 11), 101, "%s: the emitted item ran after its emitter and after the emitter's batch", k);
    is(stats(rt).emitted, 1, "%s: one item emitted", k);

    /* Dedupe: the same STORE emitted twice by one op, and twice more by a
     * second emitter of the same batch: 4 emitted, 3 pruned. */
    uint64_t pruned = stats(rt).pruned;
    mkrt_item t[2] = {{OP_EMIT_TWICE, 0, 20, 7}, {OP_EMIT_TWICE, 1, 20, 7}};
    publish_one_batch(rt, p, t, 2);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: quiescent", k);
    is(cell(rt, 20), 7, "%s: the emitted STORE ran", k);
    is(stats(rt).emitted, 5, "%s: 4 more emitted", k);
    is(stats(rt).pruned - pruned, 3, "%s: their exact duplicates were pruned (one runs)", k);

    /* A full queue: capacity 64; two emitters of 40 in one batch: one
     * gets the room, the other MKRT_EOVERFLOW, its item fails, nothing is
     * lost or half emitted. */
    uint64_t failed = stats(rt).failed;
    mkrt_item n[2] = {{OP_EMIT_N, 0, 30, 40}, {OP_EMIT_N, 0, 40, 40}};
    publish_one_batch(rt, p, n, 2);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: quiescent after a full queue", k);
    int64_t s30 = (int64_t)cell(rt, 30), s40 = (int64_t)cell(rt, 40);
    ok((s30 == MKRT_OK && s40 == MKRT_EOVERFLOW) || (s30 == MKRT_EOVERFLOW && s40 == MKRT_OK),
       "%s: one emit of 40 fits a queue of 64, the other is MKRT_EOVERFLOW (%lld, %lld)", k,
       (long long)s30, (long long)s40);
    is(cell(rt, 31) + cell(rt, 41), 40, "%s: all 40 of the one that fit ran, none of the other", k);
    is(stats(rt).failed - failed, 1, "%s: the op that got MKRT_EOVERFLOW failed (error path)", k);
    mkrt_item dead[4];
    size_t nd = mkrt_dead_letters_pop(rt, dead, 4);
    ok(nd == 1 && dead[0].op == OP_EMIT_N, "%s: ... and went to the dead letters", k);
    /* The next batch has the whole queue again. */
    mkrt_item n2 = {OP_EMIT_N, 0, 50, 64};
    publish(p, &n2, 1);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: quiescent", k);
    is((int64_t)cell(rt, 50), MKRT_OK, "%s: a later batch may fill the whole queue", k);
    is(cell(rt, 51), 64, "%s: ... and all of it runs", k);

    mkrt_item b = {OP_BAD_EMIT, 0, 60, 0};
    publish(p, &b, 1);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: quiescent", k);
    is(cell(rt, 60), 8, "%s: bad emission calls are refused with MKRT_EINVAL (or false) inside an op", k);
    ok(accounted(rt), "%s: published + emitted = executed + pruned + failed", k);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);

    /* Capacity 0: every emit fails. */
    rt = start_with(kind, 0);
    reg(rt, OP_EMIT_N, emit_n, false, false, false);
    p = mkrt_producer_open(rt, NULL);
    mkrt_item z = {OP_EMIT_N, 0, 30, 1};
    publish(p, &z, 1);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: quiescent", k);
    is((int64_t)cell(rt, 30), MKRT_EOVERFLOW, "%s: emit_capacity 0 refuses every emit", k);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

/* ---- quiescence ---- */

static void quiescence(mkrt_backend_kind kind)
{
    const char *k = kind_name(kind);
    mkrt_runtime *rt = start_with(kind, 1024);
    reg(rt, OP_CHAIN, chain, false, false, false);
    is(mkrt_quiesce(NULL, 0), MKRT_EINVAL, "%s: mkrt_quiesce(NULL) is MKRT_EINVAL", k);
    is(mkrt_quiesce(rt, 0), MKRT_OK, "%s: a new runtime is quiescent", k);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt__runtime_hold(rt, true);
    mkrt_item c[8];
    for (uint32_t i = 0; i < 8; i++)
        c[i] = (mkrt_item){OP_CHAIN, 0, 100 + i, 300 + i};
    publish(p, c, 8);
    is(mkrt_quiesce(rt, 0), MKRT_ETIMEDOUT, "%s: not quiescent while items wait", k);
    mkrt__runtime_hold(rt, false);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: quiescent after 8 chains of ~300 emissions", k);
    bool all = true;
    for (uint32_t i = 0; i < 8; i++)
        all &= cell(rt, 100 + i) == 301 + i;
    ok(all, "%s: every link of every chain ran before mkrt_quiesce returned", k);
    mkrt_stats s = stats(rt);
    is(s.emitted, 8 * 300 + 28, "%s: every link counted as emitted", k);
    ok(accounted(rt), "%s: published + emitted = executed + pruned + failed", k);
    /* An item published before the call is waited for even when the
     * runtime-wide totals say otherwise: a racing producer's item that the
     * dispatcher completed before its publish counted it (stood in for by
     * one completion added by hand), with the dispatcher held so that the
     * earlier item has not run and quiet is still set from before. */
    mkrt__runtime_hold(rt, true);
    mkrt_item late = {OP_CHAIN, 0, 150, 1};
    publish(p, &late, 1);
    atomic_fetch_add(&rt->completed_total, 1);
    is(mkrt_quiesce(rt, 0), MKRT_ETIMEDOUT, "%s: quiesce waits for an item published before it, "
       "though the totals match and the dispatcher was idle", k);
    is(mkrt_drain(rt, 0), MKRT_ETIMEDOUT, "%s: ... and so does mkrt_drain", k);
    mkrt__runtime_hold(rt, false);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: ... and returns once it ran", k);
    is(cell(rt, 150), 2, "%s: ... with its result (and its emission's) in the cells", k);
    atomic_fetch_sub(&rt->completed_total, 1);
    /* destroy runs what is emitted too */
    mkrt_item one = {OP_CHAIN, 0, 200, 500};
    publish(p, &one, 1);
    mkrt_producer_close(p);
    mkrt_error err;
    is(mkrt_destroy(rt, SEC, &err), MKRT_OK, "%s: destroy waits for an emission chain", k);
}

/* ---- commuting ops ---- */

/* One batch of n items; returns the layers it took. */
static uint64_t layers_of(mkrt_runtime *rt, mkrt_producer *p, const mkrt_item *items, size_t n)
{
    uint64_t before = stats(rt).layers;
    publish_one_batch(rt, p, items, n);
    if (mkrt_quiesce(rt, SEC) != MKRT_OK)
        bail_out("not quiescent");
    return stats(rt).layers - before;
}

static void commuting(mkrt_backend_kind kind)
{
    const char *k = kind_name(kind);
    enum { N = 200, H = 3000, SRC = 1000 };
    mkrt_runtime *rt = start_with(kind, 64);
    reg(rt, OP_CMIN, cmin, true, true, false);
    reg(rt, OP_PMIN, cmin, true, false, false); /* the same op, not declared commuting */
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item items[N + 1];
    unsigned seed = 7;
    uint64_t want_min = UINT64_MAX;
    for (uint32_t i = 0; i < N; i++) {
        uint64_t v = 1000 + (uint64_t)(rand_r(&seed) % 100000);
        mkrt_cell_write(rt, SRC + i, v);
        uint32_t param = (uint32_t)(rand_r(&seed) % 50);
        want_min = v + param < want_min ? v + param : want_min;
    }
    uint64_t device = stats(rt).device_batches;

    mkrt_cell_write(rt, H, UINT64_MAX);
    for (uint32_t i = 0; i < N; i++)
        items[i] = (mkrt_item){MKRT_OP_MIN, SRC + i, H, 0};
    seed = 7;
    for (uint32_t i = 0; i < N; i++) {
        (void)rand_r(&seed);
        items[i].param = (uint32_t)(rand_r(&seed) % 50);
    }
    is(layers_of(rt, p, items, N), 1, "%s: %d MIN items on one handle run as one layer", k, N);
    is(cell(rt, H), want_min, "%s: ... with the sequential result", k);

    mkrt_cell_write(rt, H, 0);
    for (uint32_t i = 0; i < N; i++)
        items[i] = (mkrt_item){MKRT_OP_OR, SRC + i, H, 0};
    for (uint32_t i = 0; i < N; i++)
        items[i].param = (uint32_t)1 << (i % 32);
    uint64_t or_expect = 0;
    for (uint32_t i = 0; i < N; i++)
        or_expect |= cell(rt, SRC + i) | items[i].param;
    is(layers_of(rt, p, items, N), 1, "%s: %d OR items on one handle: one layer", k, N);
    is(cell(rt, H), or_expect, "%s: ... with the sequential result", k);

    mkrt_cell_write(rt, H, 5);
    for (uint32_t i = 0; i < N; i++)
        items[i] = (mkrt_item){MKRT_OP_ACC, H, H, 3}; /* ACC does not read in: in == out commutes */
    uint64_t pruned = stats(rt).pruned;
    is(layers_of(rt, p, items, N), 1, "%s: %d ACC items on one handle: one layer", k, N);
    is(cell(rt, H), 5 + 3 * N, "%s: ... every one accumulated (exact duplicates, none pruned)", k);
    is(stats(rt).pruned, pruned, "%s: ACC duplicates are never pruned", k);
    ok(stats(rt).device_batches > device || kind == MKRT_BACKEND_CPU,
       "%s: the update built-ins run on the device", k);

    /* Still ordered against other items on the handle: MIN x3, STORE, MIN x3. */
    mkrt_item mix[7] = {{MKRT_OP_MIN, SRC, H, 1},     {MKRT_OP_MIN, SRC + 1, H, 2},
                        {MKRT_OP_MIN, SRC + 2, H, 3}, {MKRT_OP_STORE, 0, H, 7},
                        {MKRT_OP_MIN, SRC, H, 0},     {MKRT_OP_MIN, SRC + 1, H, 0},
                        {MKRT_OP_MIN, SRC + 2, H, 0}};
    is(layers_of(rt, p, mix, 7), 3, "%s: MIN, a STORE, MIN on one handle: three layers", k);
    is(cell(rt, H), 7, "%s: ... the STORE's 7 is the minimum after it (sources are >= 1000)", k);
    /* A reader of the handle between two MINs closes the group. */
    mkrt_cell_write(rt, H, 50);
    mkrt_item rd[3] = {{MKRT_OP_MIN, SRC, H, 0}, {MKRT_OP_ADD, H, H + 1, 0}, {MKRT_OP_MIN, H + 2, H, 0}};
    mkrt_cell_write(rt, H + 2, 3);
    is(layers_of(rt, p, rd, 3), 3, "%s: a read of the handle orders the MINs around it", k);
    is(cell(rt, H + 1), 50, "%s: ... the reader saw the first MIN only", k);
    is(cell(rt, H), 3, "%s: ... and the second ran after it", k);

    /* A user op: one layer when declared commuting, one per item when not. */
    mkrt_cell_write(rt, H, UINT64_MAX);
    for (uint32_t i = 0; i < 50; i++)
        items[i] = (mkrt_item){OP_CMIN, SRC + i, H, 900 - i};
    is(layers_of(rt, p, items, 50), 1, "%s: a user op declared commuting: one layer", k);
    is(cell(rt, H), 851, "%s: ... minimum right", k);
    mkrt_cell_write(rt, H, UINT64_MAX);
    for (uint32_t i = 0; i < 50; i++)
        items[i] = (mkrt_item){OP_PMIN, SRC + i, H, 900 - i};
    is(layers_of(rt, p, items, 50), 50, "%s: the same op undeclared: one layer per item", k);
    is(cell(rt, H), 851, "%s: ... same result", k);
    ok(stats(rt).changed > 0, "%s: changed outputs are counted", k);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

/* ---- the graph ---- */

static bool bfs_tree_ok(const test_graph *g, uint32_t root, const uint32_t *parent, const uint32_t *level,
                        char *why, size_t len)
{
    if (parent[root] != root)
        return snprintf(why, len, "parent[root] = %u", parent[root]), false;
    for (uint32_t v = 0; v < g->v; v++) {
        if ((parent[v] == G500_NO_PARENT) != (level[v] == UINT32_MAX))
            return snprintf(why, len, "vertex %u: parent %u, level %u", v, parent[v], level[v]), false;
        if (v == root || parent[v] == G500_NO_PARENT)
            continue;
        uint32_t u = parent[v];
        bool edge = false;
        for (uint64_t e = g->off[v]; e < g->off[v + 1] && !edge; e++)
            edge = g->dst[e] == u;
        if (u >= g->v || !edge || level[u] + 1 != level[v])
            return snprintf(why, len, "vertex %u (level %u): parent %u is not a neighbour one level up", v,
                            level[v], u),
                   false;
    }
    return true;
}

static void traversals(const traverse_ops *ops, const test_graph *g, bool weighted)
{
    char why[256] = "";
    g500_csr csr = {g->v, g->off, g->dst, weighted ? g->w : NULL};
    traverse_engine *e = ops->open(&csr, 2, why, sizeof why);
    ok(e != NULL, "%s: engine opens (%s)", ops->name, why);
    if (e == NULL)
        return;
    uint32_t *parent = malloc(g->v * sizeof *parent), *level = malloc(g->v * sizeof *level);
    uint64_t *dist = malloc(g->v * sizeof *dist), *want = malloc(g->v * sizeof *want);
    const uint32_t roots[] = {0, 1, g->v / 2, g->v - 1 /* isolated */};
    for (size_t r = 0; r < sizeof roots / sizeof *roots; r++) {
        uint32_t root = roots[r];
        test_graph_ref_bfs(g, root, level);
        why[0] = 0;
        int rc = ops->bfs(e, root, parent, why, sizeof why);
        ok(rc == 0 && bfs_tree_ok(g, root, parent, level, why, sizeof why),
           "%s: BFS from %u is a BFS tree of the reference levels (%s)", ops->name, root, why);
        test_graph_ref_sssp(g, root, weighted ? g->w : NULL, want);
        why[0] = 0;
        rc = ops->sssp(e, root, dist, why, sizeof why);
        uint32_t bad = UINT32_MAX;
        for (uint32_t v = 0; v < g->v && bad == UINT32_MAX; v++)
            if (dist[v] != want[v])
                bad = v;
        ok(rc == 0 && bad == UINT32_MAX, "%s: SSSP (%s) from %u equals Dijkstra (%s%s)", ops->name,
           weighted ? "weights" : "unit weights", root, why,
           bad == UINT32_MAX ? "" : "first difference at a vertex");
    }
    is(ops->bfs(e, g->v, parent, why, sizeof why), -1, "%s: a root that is not a vertex is refused", ops->name);
    like(why, "Fix:", "%s: ... with a Fix", ops->name);
    ops->close(e);
    free(parent);
    free(level);
    free(dist);
    free(want);
}

static void relax_needs_graph(mkrt_backend_kind kind)
{
    const char *k = kind_name(kind);
    mkrt_runtime *rt = start_with(kind, 64);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item r = {MKRT_OP_RELAX, 1, 2, 3};
    publish(p, &r, 1);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: quiescent", k);
    mkrt_item dead;
    is(mkrt_dead_letters_pop(rt, &dead, 1), 1, "%s: RELAX without a registered graph fails", k);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

static void graph_bad_input(void)
{
    mkrt_runtime *rt = start_with(MKRT_BACKEND_CPU, 64);
    mkrt_error err;
    uint64_t off[5] = {0, 2, 3, 3, 4};
    uint32_t dst[4] = {1, 2, 0, 3};
    mkrt_graph g = {4, off, dst, NULL};
    is(mkrt_graph_register(NULL, &g, &err), MKRT_EINVAL, "graph: NULL runtime");
    like(err.message, "Fix:", "... with a Fix");
    is(mkrt_graph_register(rt, NULL, &err), MKRT_EINVAL, "graph: NULL graph");
    mkrt_graph b = g;
    b.vertices = 0;
    is(mkrt_graph_register(rt, &b, &err), MKRT_EINVAL, "graph: 0 vertices");
    b.vertices = CELLS + 1;
    is(mkrt_graph_register(rt, &b, &err), MKRT_EINVAL, "graph: more vertices than cells");
    like(err.message, "4097 vertices", "... naming the numbers");
    b = g;
    b.offsets = NULL;
    is(mkrt_graph_register(rt, &b, &err), MKRT_EINVAL, "graph: NULL offsets");
    uint64_t off0[5] = {1, 2, 3, 3, 4};
    b = g;
    b.offsets = off0;
    is(mkrt_graph_register(rt, &b, &err), MKRT_EINVAL, "graph: offsets[0] not 0");
    uint64_t down[5] = {0, 2, 1, 3, 4};
    b.offsets = down;
    is(mkrt_graph_register(rt, &b, &err), MKRT_EINVAL, "graph: offsets not monotone");
    like(err.message, "decrease at vertex 1", "... naming the vertex");
    uint64_t huge[2] = {0, MKRT_GRAPH_EDGES_MAX + 1};
    b = (mkrt_graph){1, huge, dst, NULL};
    is(mkrt_graph_register(rt, &b, &err), MKRT_EOVERFLOW, "graph: more edges than the limit");
    {
        mkrt_config c1 = mkrt_config_default();
        c1.max_batch = 1; /* one edge per chunk: a vertex may have 2^29 edges */
        c1.cells = 16;
        mkrt_runtime *small = NULL;
        if (mkrt_create(&c1, &small, &err) != MKRT_OK)
            bail_out("mkrt_create: %s", err.message);
        uint64_t deg[2] = {0, ((uint64_t)1 << 29) + 1};
        b = (mkrt_graph){1, deg, dst, NULL}; /* targets are not read: the degree is refused first */
        is(mkrt_graph_register(small, &b, &err), MKRT_EOVERFLOW, "graph: a vertex with too many edges");
        like(err.message, "vertex 0 has 536870913 edges", "... naming the vertex and its degree");
        mkrt_destroy(small, SEC, NULL);
    }
    b = g;
    b.targets = NULL;
    is(mkrt_graph_register(rt, &b, &err), MKRT_EINVAL, "graph: NULL targets with edges");
    uint32_t out_of_range[4] = {1, 2, 4, 3};
    b.targets = out_of_range;
    is(mkrt_graph_register(rt, &b, &err), MKRT_EINVAL, "graph: a target out of range");
    like(err.message, "edge 2 targets vertex 4", "... naming the edge and the target");
    count_alloc_reset();
    count_alloc_fail_nth(0);
    is(mkrt_graph_register(rt, &g, &err), MKRT_ENOMEM, "graph: allocation failure is MKRT_ENOMEM");
    count_alloc_fail_nth(UINT64_MAX);
    is(rt->graph.vertices, 0, "... and nothing was registered");
    is(mkrt_graph_register(rt, &g, &err), MKRT_OK, "graph: a good graph registers");
    /* Pulling needs expanding and commuting. */
    mkrt_op_desc pd = {.fn = cmin, .commutes = true, .pulls = true};
    is(mkrt_op_register(rt, 99, &pd, &err), MKRT_EINVAL, "an op that pulls but does not expand is refused");
    like(err.message, "expands is false", "... saying why");
    like(err.message, "Fix:", "... with a Fix");
    pd = (mkrt_op_desc){.fn = cmin, .expands = true, .pulls = true};
    is(mkrt_op_register(rt, 99, &pd, &err), MKRT_EINVAL, "an op that pulls but does not commute is refused");
    like(err.message, "commutes is false", "... saying why");
    /* Expanding ops are bounded. */
    mkrt_op_desc d = {.fn = cmin, .expands = true};
    mkrt_status st = MKRT_OK;
    for (uint32_t i = 0; i <= MKRT_OP_EXPANDING_MAX && st == MKRT_OK; i++)
        st = mkrt_op_register(rt, 100 + i, &d, &err);
    is(st, MKRT_EINVAL, "more than MKRT_OP_EXPANDING_MAX expanding ops are refused");
    is(mkrt_op_register(rt, 100, &d, &err), MKRT_OK, "... re-registering one keeps its slot");
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    is(mkrt_graph_register(rt, &g, &err), MKRT_EINVAL, "graph: refused after a producer opened");
    /* RELAX with unit weights: edges 0 -> 1, 0 -> 2, 1 -> 0, 3 -> 3. */
    for (uint32_t v = 0; v < 4; v++)
        mkrt_cell_write(rt, v, UINT64_MAX);
    mkrt_cell_write(rt, 10, 0);
    mkrt_item r = {MKRT_OP_RELAX, 10, 0, 0};
    publish(p, &r, 1);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "quiescent after RELAX");
    uint64_t d4[4];
    is(mkrt_cells_read(rt, 0, 4, d4), MKRT_OK, "bulk read");
    ok(d4[0] == 0 && d4[1] == 1 && d4[2] == 1 && d4[3] == UINT64_MAX,
       "RELAX without weights uses 1 (%llu %llu %llu)", (unsigned long long)d4[0], (unsigned long long)d4[1],
       (unsigned long long)d4[2]);
    ok(accounted(rt), "published + emitted = executed + pruned + failed");
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

/* An expanding op that fails on the edges into vertex 7. */
static mkrt_status expand_or_fail(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    if (it->param == UINT32_MAX) /* the seed */
        return mkrt_op_emit_edges(ctx, it->out);
    if (it->out == 7)
        return MKRT_EBUDGET; /* any failure status */
    if (mkrt_op_cell_min(ctx, it->out, mkrt_op_cell_load(ctx, it->in) + 1))
        return mkrt_op_emit_edges(ctx, it->out);
    return MKRT_OK;
}

typedef struct failed_edges {
    uint32_t n;
    mkrt_item first, last;
    mkrt_status why;
} failed_edges;

static void note_failure(void *ctx, const mkrt_item *item, mkrt_status why, const char *message)
{
    (void)message;
    failed_edges *f = ctx;
    if (f->n++ == 0)
        f->first = *item;
    f->last = *item;
    f->why = why;
}

/* Frontier rounds: one layer each, failing edges reported as edge items. */
static void rounds(mkrt_backend_kind kind)
{
    const char *k = kind_name(kind);
    enum { LEAVES = 300 }; /* a star: vertex 0 and leaves 1..300, both directions, weight 2 */
    uint64_t off[LEAVES + 2];
    uint32_t dst[2 * LEAVES], w[2 * LEAVES];
    off[0] = 0;
    off[1] = LEAVES;
    for (uint32_t i = 0; i < LEAVES; i++) {
        dst[i] = 1 + i;
        w[i] = 2;
        dst[LEAVES + i] = 0;
        w[LEAVES + i] = 2;
        off[2 + i] = LEAVES + 1 + i;
    }
    mkrt_graph g = {LEAVES + 1, off, dst, w};
    failed_edges f = {0};
    mkrt_config c = mkrt_config_default();
    c.backend = kind;
    c.workers = 2;
    c.cells = CELLS;
    c.on_error = note_failure;
    c.error_ctx = &f;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK || mkrt_graph_register(rt, &g, &err) != MKRT_OK)
        bail_out("setup: %s", err.message);
    reg(rt, OP_EDGES, expand_or_fail, true, true, true);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    for (uint32_t v = 0; v <= LEAVES; v++)
        mkrt_cell_write(rt, v, UINT64_MAX);
    mkrt_cell_write(rt, CELLS - 1, 0);
    mkrt_stats before = stats(rt);
    mkrt_item r = {MKRT_OP_RELAX, CELLS - 1, 0, 0};
    publish(p, &r, 1);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: star SSSP quiescent", k);
    mkrt_stats after = stats(rt);
    uint64_t d[LEAVES + 1];
    mkrt_cells_read(rt, 0, LEAVES + 1, d);
    bool right = d[0] == 0;
    for (uint32_t v = 1; v <= LEAVES; v++)
        right &= d[v] == 2;
    ok(right, "%s: star distances right", k);
    if (kind == MKRT_BACKEND_CPU)
        is(after.layers - before.layers, after.batches - before.batches,
           "%s: every frontier round ran as one layer (%llu batches)", k,
           (unsigned long long)(after.batches - before.batches));
    else /* the device's traversal: one batch, the RELAX's layer and two levels */
        ok(after.batches - before.batches == 1 && after.layers - before.layers == 3,
           "%s: the traversal ran on the device as one batch of 3 layers (%llu batches, %llu layers)", k,
           (unsigned long long)(after.batches - before.batches),
           (unsigned long long)(after.layers - before.layers));
    is(after.emitted - before.emitted, 2 * LEAVES, "%s: each edge emitted once", k);
    is(after.changed - before.changed, LEAVES + 1, "%s: each vertex changed once", k);

    /* The expanding user op: the edge into 7 fails, reported as itself. */
    for (uint32_t v = 0; v <= LEAVES; v++)
        mkrt_cell_write(rt, v, v == 0 ? 0 : UINT64_MAX);
    mkrt_item seed = {OP_EDGES, 0, 0, UINT32_MAX};
    publish(p, &seed, 1);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: quiescent", k);
    is(f.n, 1, "%s: one edge item failed", k);
    ok(f.last.op == OP_EDGES && f.last.in == 0 && f.last.out == 7 && f.last.param == 2 && f.why == MKRT_EBUDGET,
       "%s: ... reported as the edge item (%u, %u, %u, %u) with the op's status", k, f.last.op, f.last.in,
       f.last.out, f.last.param);
    is(cell(rt, 7), UINT64_MAX, "%s: ... and vertex 7 was not reached", k);
    is(cell(rt, 8), 1, "%s: the others were", k);
    ok(accounted(rt), "%s: published + emitted = executed + pruned + failed", k);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

/* Levels end before the next begins: with unit weights every reached
 * vertex is lowered exactly once (a level that mixed with the next would
 * lower some twice). */
static void level_synchronous(mkrt_backend_kind kind, const test_graph *tg)
{
    const char *k = kind_name(kind);
    mkrt_config c = mkrt_config_default();
    c.backend = kind;
    c.workers = 2;
    c.cells = CELLS;
    c.max_batch = 16; /* rounds of 16 edges: every level spans many */
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK)
        bail_out("mkrt_create: %s", err.message);
    mkrt_graph g = {tg->v, tg->off, tg->dst, NULL};
    if (mkrt_graph_register(rt, &g, &err) != MKRT_OK)
        bail_out("mkrt_graph_register: %s", err.message);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    uint32_t *level = malloc(tg->v * sizeof *level);
    test_graph_ref_bfs(tg, 3, level);
    uint64_t reached = 0;
    for (uint32_t v = 0; v < tg->v; v++) {
        reached += level[v] != UINT32_MAX;
        mkrt_cell_write(rt, v, UINT64_MAX);
    }
    mkrt_cell_write(rt, CELLS - 1, 0);
    uint64_t changed = stats(rt).changed;
    mkrt_item r = {MKRT_OP_RELAX, CELLS - 1, 3, 0};
    publish(p, &r, 1);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: quiescent", k);
    is(stats(rt).changed - changed, reached, "%s: unit-weight RELAX lowers each of the %llu reached vertices once",
       k, (unsigned long long)reached);
    bool same = true;
    for (uint32_t v = 0; v < tg->v; v++)
        same &= cell(rt, v) == (level[v] == UINT32_MAX ? UINT64_MAX : level[v]);
    ok(same, "%s: ... to its BFS level", k);
    free(level);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

/* RELAX's distance buckets: a vertex reached first over a heavy edge
 * waits for its light path instead of expanding at both distances. */
static void buckets(mkrt_backend_kind kind)
{
    const char *k = kind_name(kind);
    /* 0-1 (100), 0-2 (1), 2-1 (1), 1-3 (1), both directions, rows sorted */
    uint64_t off[5] = {0, 2, 5, 7, 8};
    uint32_t dst[8] = {1, 2, 0, 2, 3, 0, 1, 1}, w[8] = {100, 1, 100, 1, 1, 1, 1, 1};
    mkrt_graph g = {4, off, dst, w};
    mkrt_runtime *rt = start_with(kind, 64);
    mkrt_error err;
    if (mkrt_graph_register(rt, &g, &err) != MKRT_OK)
        bail_out("mkrt_graph_register: %s", err.message);
    rt->bucket_min = 1; /* buckets for levels of any size (set before the first producer) */
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    for (uint32_t v = 0; v < 4; v++)
        mkrt_cell_write(rt, v, UINT64_MAX);
    mkrt_cell_write(rt, 10, 0);
    mkrt_stats before = stats(rt);
    mkrt_item r = {MKRT_OP_RELAX, 10, 0, 0};
    publish(p, &r, 1);
    is(mkrt_quiesce(rt, SEC), MKRT_OK, "%s: weighted RELAX quiescent", k);
    uint64_t d[4];
    mkrt_cells_read(rt, 0, 4, d);
    ok(d[0] == 0 && d[1] == 2 && d[2] == 1 && d[3] == 3, "%s: distances 0 2 1 3 (%llu %llu %llu %llu)", k,
       (unsigned long long)d[0], (unsigned long long)d[1], (unsigned long long)d[2], (unsigned long long)d[3]);
    /* Buckets are the CPU pool's: on SIM the traversal runs on the device
     * (level after level, no buckets), where vertex 1 expands at 100 and
     * again at 2: the same distances, more edges. */
    if (kind == MKRT_BACKEND_CPU)
        is(stats(rt).emitted - before.emitted, 8,
           "%s: each vertex's edges emitted once (vertex 1 waited for its bucket)", k);
    else
        ok(stats(rt).emitted - before.emitted >= 8, "%s: every edge emitted at least once on the device (%llu)", k,
           (unsigned long long)(stats(rt).emitted - before.emitted));
    ok(accounted(rt), "%s: published + emitted = executed + pruned + failed", k);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

/* Pulled levels (mkrt_op_desc.pulls): a BFS whose levels grow large runs
 * them bottom-up, with the cells of a pushed BFS (rows sorted: the first
 * frontier neighbour is the smallest parent) and fewer edges; a failing
 * pulled edge is reported as itself. */
static uint32_t pull_fail_at = UINT32_MAX; /* the vertex whose pulled edges fail */

static mkrt_status visit_or_fail(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    if (it->out == pull_fail_at && it->param != SEED)
        return MKRT_EBUDGET;
    return visit(it, ctx);
}

static mkrt_runtime *bfs_run(mkrt_backend_kind kind, const test_graph *tg, bool pulls, uint32_t root,
                             failed_edges *f, uint64_t *cells)
{
    mkrt_config c = mkrt_config_default();
    c.backend = kind;
    c.workers = 2;
    c.cells = CELLS;
    c.on_error = note_failure;
    c.error_ctx = f;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    mkrt_graph g = {tg->v, tg->off, tg->dst, tg->w};
    mkrt_op_desc d = {.fn = visit_or_fail, .idempotent = true, .commutes = true, .expands = true, .pulls = pulls};
    if (mkrt_create(&c, &rt, &err) != MKRT_OK || mkrt_graph_register(rt, &g, &err) != MKRT_OK ||
        mkrt_op_register(rt, OP_VISIT, &d, &err) != MKRT_OK)
        bail_out("setup: %s", err.message);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    for (int twice = 0; twice < 2; twice++) { /* the second starts unsettled again */
        for (uint32_t v = 0; v < tg->v; v++)
            mkrt_cell_write(rt, v, v == root ? root : UNREACHED);
        mkrt_item seed = {OP_VISIT, root, root, SEED};
        publish(p, &seed, 1);
        if (mkrt_quiesce(rt, SEC) != MKRT_OK)
            bail_out("BFS did not quiesce");
    }
    mkrt_cells_read(rt, 0, tg->v, cells);
    mkrt_producer_close(p);
    return rt;
}

static void pulled_levels(mkrt_backend_kind kind)
{
    const char *k = kind_name(kind);
    test_graph g = test_graph_random(4000, 60000, 7);
    for (uint32_t v = 0; v < g.v; v++) /* rows sorted by target (insertion sort) */
        for (uint64_t i = g.off[v] + 1; i < g.off[v + 1]; i++)
            for (uint64_t j = i; j > g.off[v] && g.dst[j - 1] > g.dst[j]; j--) {
                uint32_t t = g.dst[j];
                g.dst[j] = g.dst[j - 1];
                g.dst[j - 1] = t;
                t = g.w[j];
                g.w[j] = g.w[j - 1];
                g.w[j - 1] = t;
            }
    uint64_t *pushed = malloc(g.v * sizeof *pushed), *pulled = malloc(g.v * sizeof *pulled);
    failed_edges f = {0};
    pull_fail_at = UINT32_MAX;
    mkrt_runtime *push_rt = bfs_run(kind, &g, false, 5, &f, pushed);
    mkrt_runtime *pull_rt = bfs_run(kind, &g, true, 5, &f, pulled);
    mkrt_stats a = stats(push_rt), b = stats(pull_rt);
    ok(memcmp(pushed, pulled, g.v * sizeof *pushed) == 0, "%s: a pulling BFS gives the pushing BFS's cells", k);
    ok(b.emitted < a.emitted / 2, "%s: ... running fewer edges (%llu, pushed %llu)", k,
       (unsigned long long)b.emitted, (unsigned long long)a.emitted);
    ok(accounted(pull_rt) && b.failed == 0, "%s: published + emitted = executed + pruned + failed", k);
    mkrt_destroy(push_rt, SEC, NULL);
    mkrt_destroy(pull_rt, SEC, NULL);

    /* The vertex of level 3 (the first level pulled here) with the most
     * edges fails; its smallest neighbour of level 2 is the first edge. */
    uint32_t *level = malloc(g.v * sizeof *level), x = UINT32_MAX;
    test_graph_ref_bfs(&g, 5, level);
    for (uint32_t v = 0; v < g.v; v++)
        if (level[v] == 3 && (x == UINT32_MAX || g.off[v + 1] - g.off[v] > g.off[x + 1] - g.off[x]))
            x = v;
    uint64_t first = g.off[x];
    while (level[g.dst[first]] != 2)
        first++;
    pull_fail_at = x;
    failed_edges g2 = {0};
    mkrt_runtime *rt = bfs_run(kind, &g, true, 5, &g2, pulled);
    ok(g2.first.op == OP_VISIT && g2.first.in == g.dst[first] && g2.first.out == x && g2.first.param == g.w[first],
       "%s: the first is x's first edge from level 2, as a pulled level runs it: (%u, %u, %u), want (%u, %u, %u)", k,
       g2.first.in, g2.first.out, g2.first.param, g.dst[first], x, g.w[first]);
    ok(g2.n >= 2 && g2.last.op == OP_VISIT && g2.last.out == x && g2.why == MKRT_EBUDGET,
       "%s: failing pulled edges are reported as edge items into %u (%u failed; last (%u, %u, %u))", k, x, g2.n,
       g2.last.in, g2.last.out, g2.last.param);
    bool neighbour = false;
    for (uint64_t e = g.off[x]; e < g.off[x + 1]; e++)
        neighbour |= g.dst[e] == g2.last.in && g.w[e] == g2.last.param;
    ok(neighbour, "%s: ... naming an edge of the graph, with its weight", k);
    is(pulled[x], UNREACHED, "%s: ... and %u stays unreached", k, x);
    ok(accounted(rt) && stats(rt).failed == g2.n, "%s: accounted, with every failure counted", k);
    mkrt_destroy(rt, SEC, NULL);
    pull_fail_at = UINT32_MAX;
    free(level);
    free(pushed);
    free(pulled);
    test_graph_free(&g);
}

/* mkrt_destroy timing out with a frontier pending: its edges fail as edge
 * items (never as internal chunk items), with MKRT_ETIMEDOUT. */
typedef struct timeout_failures {
    uint32_t relax, nop, other;
    uint32_t weights; /* sum of the failed RELAX params */
} timeout_failures;

static void count_timeouts(void *ctx, const mkrt_item *item, mkrt_status why, const char *message)
{
    (void)message;
    timeout_failures *t = ctx;
    if (why == MKRT_ETIMEDOUT && item->op == MKRT_OP_RELAX && item->in == 0 && item->out == 1) {
        t->relax++;
        t->weights += item->param;
    } else if (why == MKRT_ETIMEDOUT && item->op == MKRT_OP_NOP) {
        t->nop++;
    } else {
        t->other++;
    }
}

static void destroy_with_frontier(void)
{
    uint64_t off[3] = {0, 3, 3};
    uint32_t dst[3] = {1, 1, 1}, w[3] = {4, 5, 6};
    mkrt_graph g = {2, off, dst, w};
    timeout_failures t = {0};
    mkrt_config c = mkrt_config_default();
    c.workers = 2;
    c.cells = 16;
    c.on_error = count_timeouts;
    c.error_ctx = &t;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK || mkrt_graph_register(rt, &g, &err) != MKRT_OK)
        bail_out("setup: %s", err.message);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt__runtime_hold(rt, true);
    (void)mkrt__frontier_add(rt, 0, 0); /* as a RELAX that lowered vertex 0 would */
    mkrt_item nop = {MKRT_OP_NOP, 0, 0, 0};
    publish(p, &nop, 1); /* waits behind the held dispatcher: destroy times out */
    mkrt_producer_close(p);
    is(mkrt_destroy(rt, 1000000, &err), MKRT_ETIMEDOUT, "destroy with a held dispatcher times out");
    is(t.relax, 3, "the pending frontier's 3 edges failed as RELAX edge items with MKRT_ETIMEDOUT");
    is(t.weights, 15, "... with their weights");
    is(t.nop, 1, "the queued item failed too");
    is(t.other, 0, "nothing else (no internal chunk item) reached the error callback");
}

int main(void)
{
    count_alloc_install();
    for (size_t i = 0; i < 2; i++) {
        emission(kinds[i]);
        quiescence(kinds[i]);
        commuting(kinds[i]);
        relax_needs_graph(kinds[i]);
        rounds(kinds[i]);
    }
    graph_bad_input();
    destroy_with_frontier();
    test_graph g = test_graph_random(1500, 4000, 99);
    traversals(&traverse_mkrt_ops, &g, true);
    traversals(&traverse_mkrt_ops, &g, false);
    traversals(&traverse_mkrt_sim_ops, &g, true);
    level_synchronous(MKRT_BACKEND_CPU, &g);
    level_synchronous(MKRT_BACKEND_SIM, &g);
    test_graph_free(&g);
    buckets(MKRT_BACKEND_CPU);
    buckets(MKRT_BACKEND_SIM);
    pulled_levels(MKRT_BACKEND_CPU);
    pulled_levels(MKRT_BACKEND_SIM);
    return done_testing();
}
