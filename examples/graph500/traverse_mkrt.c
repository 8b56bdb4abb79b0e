/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/graph500/traverse_mkrt.c - mkrt's traversal engine (traverse.h).
 *
 * The graph is registered with the runtime once (mkrt_graph_register);
 * vertex v is cell v, and one more cell, `zero`, holds 0 for seeding.
 * Both traversals are one published item and a wait for quiescence: the
 * runtime's frontier emits the rest, level after level, with no host
 * round trip in between.
 *
 * BFS: a user op VISIT(u -> v) lowers cells[v] to (depth(u) + 1) << 32 | u
 * with an atomic minimum and, when it lowered it, emits v's edges as VISIT
 * items (mkrt_op_emit_edges). The cell packs (depth, parent): the minimum
 * is the shortest depth, and among the parents at that depth the smallest
 * vertex number. That makes the result independent of the order in which
 * the items run (VISIT commutes with itself; the runtime runs a frontier's
 * edges as rounds, one layer each), and every edge is re-examined after
 * its source's last change, so the fixpoint is a BFS tree whatever order
 * the levels take through the rounds: mostly level by level, since the
 * frontier of a level is expanded after the level ran. VISIT is registered
 * with pulls (mkrt_op_desc): the graph is symmetric, a vertex changes only
 * at the level it is reached (before it joins the frontier), and over
 * rows sorted by target (the kit's CSR) the first frontier neighbour that
 * lowers a vertex is its smallest parent at that depth, so the runtime may
 * run the large middle levels bottom-up and the tree is the same. (Over
 * unsorted rows a pulled vertex takes its first frontier neighbour in row
 * order: still a BFS tree, parent not the smallest.)
 *
 * SSSP: the built-in RELAX (cells[v] = min(cells[v], cells[u] + w), and
 * v's edges emitted when it lowered), from RELAX(zero -> root, 0). */
#include <stdio.h>
#include <stdlib.h>

#include "mkrt/mkrt.h"
#include "traverse.h"

enum { OP_VISIT = MKRT_OP_USER_FIRST };
/* VISIT's param when it seeds the root: emit its edges, change nothing. */
#define SEED UINT32_MAX
#define UNREACHED UINT64_MAX

struct traverse_engine {
    mkrt_runtime *rt;
    mkrt_producer *producer;
    uint32_t vertices;
    uint64_t *cells; /* the traversal's result, read in bulk */
};

static mkrt_status visit(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    if (it->param == SEED)
        return mkrt_op_emit_edges(ctx, it->out);
    uint64_t from = mkrt_op_cell_load(ctx, it->in); /* a round's other edges may lower it meanwhile */
    if (from == UNREACHED)
        return MKRT_OK;
    uint64_t depth = (from >> 32) + 1;
    if (mkrt_op_cell_min(ctx, it->out, depth << 32 | it->in))
        return mkrt_op_emit_edges(ctx, it->out);
    return MKRT_OK;
}

static traverse_engine *fail_open(traverse_engine *e, char *why, size_t len, const char *what,
                                  const mkrt_error *err)
{
    snprintf(why, len, "mkrt engine: %s: %s", what, err->message);
    if (e != NULL) {
        mkrt_producer_close(e->producer);
        mkrt_destroy(e->rt, MKRT_TIMEOUT_INFINITE, NULL);
        free(e->cells);
        free(e);
    }
    return NULL;
}

static traverse_engine *open_on(const g500_csr *g, unsigned threads, mkrt_backend_kind backend,
                                char *why, size_t len)
{
    mkrt_error err = {0};
    if (g == NULL || g->vertices == 0 || g->vertices >= MKRT_CONFIG_CELLS_MAX) {
        snprintf(why, len, "mkrt engine: a graph of %u vertices does not fit (1..%u). Fix: a smaller scale.",
                 g != NULL ? g->vertices : 0, MKRT_CONFIG_CELLS_MAX - 1);
        return NULL;
    }
    traverse_engine *e = calloc(1, sizeof *e);
    if (e == NULL || (e->cells = malloc((size_t)g->vertices * sizeof *e->cells)) == NULL) {
        free(e);
        snprintf(why, len, "mkrt engine: out of memory for %u vertices. Fix: free memory.", g->vertices);
        return NULL;
    }
    e->vertices = g->vertices;
    mkrt_config c = mkrt_config_default();
    c.backend = backend;
    c.workers = threads;
    c.cells = g->vertices + 1; /* the vertices, and `zero` */
    c.append_log_capacity = 0;
    if (mkrt_create(&c, &e->rt, &err) != MKRT_OK)
        return fail_open(e, why, len, "mkrt_create", &err);
    mkrt_graph graph = {g->vertices, g->offsets, g->targets, g->weights};
    if (mkrt_graph_register(e->rt, &graph, &err) != MKRT_OK)
        return fail_open(e, why, len, "mkrt_graph_register", &err);
    mkrt_op_desc d = {.fn = visit, .name = "bfs-visit", .idempotent = true, .commutes = true,
                      .expands = true, .pulls = true};
    if (mkrt_op_register(e->rt, OP_VISIT, &d, &err) != MKRT_OK)
        return fail_open(e, why, len, "mkrt_op_register", &err);
    if ((e->producer = mkrt_producer_open(e->rt, &err)) == NULL)
        return fail_open(e, why, len, "mkrt_producer_open", &err);
    return e;
}

static traverse_engine *open_cpu(const g500_csr *g, unsigned threads, char *why, size_t len)
{
    return open_on(g, threads, MKRT_BACKEND_CPU, why, len);
}

static traverse_engine *open_sim(const g500_csr *g, unsigned threads, char *why, size_t len)
{
    return open_on(g, threads, MKRT_BACKEND_SIM, why, len);
}

/* Every vertex unreached, `zero` 0, then the seed, then quiescence, then
 * the vertices' cells in one read. */
static int run(traverse_engine *e, mkrt_item seed, uint64_t root_value, char *why, size_t len)
{
    for (uint32_t v = 0; v < e->vertices; v++)
        mkrt_cell_write(e->rt, v, UNREACHED); /* quiescent: nothing touches them */
    mkrt_cell_write(e->rt, e->vertices, 0);
    if (root_value != UNREACHED)
        mkrt_cell_write(e->rt, seed.out, root_value);
    mkrt_error err = {0};
    mkrt_stats before, after;
    mkrt_stats_read(e->rt, &before);
    if (mkrt_publish(e->producer, &seed, 1, MKRT_TIMEOUT_INFINITE, &err) != MKRT_OK) {
        snprintf(why, len, "mkrt engine: publish: %s", err.message);
        return -1;
    }
    mkrt_status st = mkrt_quiesce(e->rt, MKRT_TIMEOUT_INFINITE);
    mkrt_stats_read(e->rt, &after);
    if (st != MKRT_OK || after.failed != before.failed) {
        snprintf(why, len, "mkrt engine: %s; %llu item(s) failed (see the dead letters)",
                 st != MKRT_OK ? "the runtime stopped before the traversal ended" : "traversal incomplete",
                 (unsigned long long)(after.failed - before.failed));
        return -1;
    }
    mkrt_cells_read(e->rt, 0, e->vertices, e->cells);
    return 0;
}

static int bfs(traverse_engine *e, uint32_t root, uint32_t *parent, char *why, size_t len)
{
    if (root >= e->vertices) {
        snprintf(why, len, "mkrt engine: root %u is not a vertex (%u). Fix: a root below it.", root,
                 e->vertices);
        return -1;
    }
    if (run(e, (mkrt_item){OP_VISIT, root, root, SEED}, (uint64_t)root, why, len) != 0)
        return -1;
    for (uint32_t v = 0; v < e->vertices; v++)
        parent[v] = e->cells[v] == UNREACHED ? G500_NO_PARENT : (uint32_t)e->cells[v];
    return 0;
}

static int sssp(traverse_engine *e, uint32_t root, uint64_t *dist, char *why, size_t len)
{
    if (root >= e->vertices) {
        snprintf(why, len, "mkrt engine: root %u is not a vertex (%u). Fix: a root below it.", root,
                 e->vertices);
        return -1;
    }
    if (run(e, (mkrt_item){MKRT_OP_RELAX, e->vertices, root, 0}, UNREACHED, why, len) != 0)
        return -1;
    for (uint32_t v = 0; v < e->vertices; v++)
        dist[v] = e->cells[v] == UNREACHED ? G500_INF : e->cells[v];
    return 0;
}

static void close_engine(traverse_engine *e)
{
    if (e == NULL)
        return;
    mkrt_producer_close(e->producer);
    mkrt_destroy(e->rt, MKRT_TIMEOUT_INFINITE, NULL);
    free(e->cells);
    free(e);
}

const traverse_ops traverse_mkrt_ops = {"mkrt-cpu", open_cpu, bfs, sssp, close_engine};
/* The same on MKRT_BACKEND_SIM: BFS's VISIT is a C user op, so its batches
 * run on the CPU pool there, while SSSP's RELAX runs as one traversal on
 * the simulated device (tests/test_graph.c runs both). Not in traverse.h:
 * the benchmark compares engines, not backends of one. */
extern const traverse_ops traverse_mkrt_sim_ops;
const traverse_ops traverse_mkrt_sim_ops = {"mkrt-sim", open_sim, bfs, sssp, close_engine};
