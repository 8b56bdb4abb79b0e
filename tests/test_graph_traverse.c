/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_graph_traverse.c - streaming graph workloads (issue 14), the
 * second half (the first is test_graph.c): the registered graph (bad
 * input, RELAX), frontier rounds, and mkrt's traversal engine
 * (examples/graph500/traverse_mkrt.c, compiled in here) against a simple
 * BFS and Dijkstra, on the CPU pool and on the simulated device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "count_alloc.h"
#include "graph_runtime.h"
#include "graph_fixture.h"

/* The engine under test, with its SIM twin. */
#include "../examples/graph500/traverse_mkrt.c"

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
    is(mkrt__test_graph_vertices(rt), 0, "... and nothing was registered");
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
    mkrt__test_set_bucket_min(rt, 1); /* buckets for levels of any size (set before the first producer) */
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
    (void)mkrt__test_frontier_add(rt, 0, 0); /* as a RELAX that lowered vertex 0 would */
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
