/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/graph500/traverse_mkrt.c - mkrt's traversal engine (traverse.h).
 *
 * The graph is registered with the runtime once (mkrt_graph_register);
 * vertex v is cell v, and one more cell, `zero`, holds 0 for seeding.
 * Both traversals are one published item and a wait for quiescence: the
 * runtime's frontier emits the rest, level after level, with no host
 * round trip in between.
 *
 * BFS and SSSP (the CPU engine): public traversals (mkrt_traversal_open,
 * mkrt/graph.h), one of each, opened with the runtime: each search is a
 * start and a wait, and the runtime's frontier rounds run its levels with
 * values of the traversal's own (not the cells). The BFS is
 * direction-optimizing (the kit's CSR is symmetric: large levels are
 * pulled bottom-up), the SSSP uses distance buckets.
 *
 * The SIM engine runs the searches as ops instead (the runtime's op path,
 * beside the public traversals): BFS is a
 * user op VISIT(u -> v) that lowers cells[v] to (depth(u) + 1) << 32 | u
 * with an atomic minimum and, when it lowered it, emits v's edges as VISIT
 * items (mkrt_op_emit_edges). The cell packs (depth, parent): the minimum
 * is the shortest depth, and among the parents at that depth the smallest
 * vertex number, whatever order the items run in (VISIT commutes with
 * itself). VISIT is registered with pulls (mkrt_op_desc): the graph is
 * symmetric and a vertex changes only at the level it is reached, so the
 * runtime may run the large middle levels bottom-up. SSSP there is the
 * built-in RELAX (cells[v] = min(cells[v], cells[u] + w), and v's edges
 * emitted when it lowered), from RELAX(zero -> root, 0), which the
 * simulated device runs as one traversal.
 *
 * CC and PageRank: the library's traversal kinds (MKRT_TRAVERSAL_CC and
 * MKRT_TRAVERSAL_PAGERANK, mkrt/graph.h), one of each opened with the
 * runtime: a run is a start and a wait, on every backend (their sweeps run
 * on the CPU pool). CC labels each vertex with the smallest vertex of its
 * component (Afforest); PageRank iterates in place (Gauss-Seidel) with
 * traverse.h's damping, tolerance and iterations, and is checked against
 * the fixed point (TRAVERSE_PR_CHECK_L1), not against the reference's
 * Jacobi iterate. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    const g500_csr *g;
    uint64_t *labels; /* CC: the labels read back */
    traverse_counters last;
    /* BFS and SSSP as traversals with state of their own (mkrt_traversal_open;
     * NULL on SIM, which runs VISIT and RELAX); CC and PageRank on every
     * backend (on a device's runtime, whole on the device). */
    mkrt_traversal *bfs_t, *sssp_t, *cc_t, *pr_t;
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


static void free_arrays(traverse_engine *e)
{
    free(e->cells);
    free(e->labels);
    free(e);
}

static traverse_engine *fail_open(traverse_engine *e, char *why, size_t len, const char *what,
                                  const mkrt_error *err)
{
    snprintf(why, len, "mkrt engine: %s: %s", what, err->message);
    if (e != NULL) {
        mkrt_producer_close(e->producer);
        mkrt_destroy(e->rt, MKRT_TIMEOUT_INFINITE, NULL);
        free_arrays(e);
    }
    return NULL;
}

/* bfs_t, sssp_t: run BFS and SSSP as public traversals (mkrt_traversal_open:
 * on the CPU pool, or whole on a CUDA device); else as items (VISIT, RELAX)
 * through the runtime. */
static traverse_engine *open_on(const g500_csr *g, unsigned threads, mkrt_backend_kind backend,
                                bool bfs_t, bool sssp_t, char *why, size_t len)
{
    mkrt_error err = {0};
    if (g == NULL || g->vertices == 0 || g->vertices >= MKRT_CONFIG_CELLS_MAX) {
        snprintf(why, len, "mkrt engine: a graph of %u vertices does not fit (1..%u). Fix: a smaller scale.",
                 g != NULL ? g->vertices : 0, MKRT_CONFIG_CELLS_MAX - 1);
        return NULL;
    }
    traverse_engine *e = calloc(1, sizeof *e);
    const size_t n = g->vertices;
    if (e == NULL || (e->cells = malloc(n * sizeof *e->cells)) == NULL ||
        (e->labels = malloc(n * sizeof *e->labels)) == NULL) {
        if (e != NULL)
            free_arrays(e);
        snprintf(why, len, "mkrt engine: out of memory for %u vertices. Fix: free memory.", g->vertices);
        return NULL;
    }
    e->vertices = g->vertices;
    e->g = g;
    mkrt_config c = mkrt_config_default();
    c.backend = backend;
    c.workers = threads;
    c.cells = g->vertices + 1; /* the vertices, and `zero` */
    c.append_log_capacity = 0;
    /* On a GPU the traversal's atomic minimums go to the cells: in device
     * memory, not host memory mapped over the bus (measured on an H100:
     * SSSP at scale 18 took 107 ms with mapped cells). */
    c.cuda_device_state = backend == MKRT_BACKEND_CUDA;
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
    /* The kit's CSR is symmetric (both directions of every edge): the BFS
     * may pull its large levels. */
    mkrt_traversal_desc db = {MKRT_TRAVERSAL_BFS, true}, ds = {MKRT_TRAVERSAL_SSSP, true},
                        dc = {MKRT_TRAVERSAL_CC, true}, dp = {MKRT_TRAVERSAL_PAGERANK, true};
    if ((bfs_t && mkrt_traversal_open(e->rt, &db, &e->bfs_t, &err) != MKRT_OK) ||
        (sssp_t && mkrt_traversal_open(e->rt, &ds, &e->sssp_t, &err) != MKRT_OK) ||
        mkrt_traversal_open(e->rt, &dc, &e->cc_t, &err) != MKRT_OK ||
        mkrt_traversal_open(e->rt, &dp, &e->pr_t, &err) != MKRT_OK)
        return fail_open(e, why, len, "mkrt_traversal_open", &err);
    return e;
}

static traverse_engine *open_cpu(const g500_csr *g, unsigned threads, char *why, size_t len)
{
    return open_on(g, threads, MKRT_BACKEND_CPU, true, true, why, len);
}

static traverse_engine *open_sim(const g500_csr *g, unsigned threads, char *why, size_t len)
{
    return open_on(g, threads, MKRT_BACKEND_SIM, false, false, why, len);
}

/* On a CUDA GPU: the four kernels are public traversals, each run whole
 * on the megakernel (traversal jobs, src/graph/device.c; the graph is
 * resident in device memory). Fails to open (the reason in `why`) without
 * a GPU. */
static traverse_engine *open_cuda(const g500_csr *g, unsigned threads, char *why, size_t len)
{
    return open_on(g, threads, MKRT_BACKEND_CUDA, true, true, why, len);
}

/* Publishes n items, waits for quiescence and counts the work; then reads
 * the first `read` cells in one go. */
static int publish_quiesce(traverse_engine *e, const mkrt_item *items, size_t n, uint32_t read,
                           char *why, size_t len)
{
    mkrt_error err = {0};
    mkrt_stats before, after;
    mkrt_stats_read(e->rt, &before);
    if (mkrt_publish(e->producer, items, n, MKRT_TIMEOUT_INFINITE, &err) != MKRT_OK) {
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
    e->last.edges_examined += after.emitted - before.emitted;
    e->last.changed += after.changed - before.changed;
    e->last.rounds += after.batches - before.batches;
    e->last.units += after.units_run - before.units_run;
    e->last.units_planner += after.units_by_planner - before.units_by_planner;
    if (read > 0)
        mkrt_cells_read(e->rt, 0, read, e->cells);
    return 0;
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
    e->last = (traverse_counters){.edges_examined = 0};
    return publish_quiesce(e, &seed, 1, e->vertices, why, len);
}

/* One search of a traversal: start, wait, and the work it did. */
static int search(traverse_engine *e, mkrt_traversal *t, uint32_t root, char *why, size_t len)
{
    mkrt_error err = {0};
    mkrt_stats before, after;
    mkrt_traversal_stats tb, ta;
    mkrt_stats_read(e->rt, &before);
    mkrt_traversal_stats_read(t, &tb);
    static const mkrt_pagerank_params pr = {TRAVERSE_PR_DAMPING, TRAVERSE_PR_TOLERANCE, TRAVERSE_PR_MAX_ITERS};
    mkrt_status st = t == e->pr_t ? mkrt_traversal_start_pagerank(t, &pr, &err) : mkrt_traversal_start(t, root, &err);
    if (st == MKRT_OK)
        st = mkrt_traversal_wait(t, MKRT_TIMEOUT_INFINITE);
    if (st != MKRT_OK) {
        snprintf(why, len, "mkrt engine: search from %u: %s (%d)", root, err.message, (int)st);
        return -1;
    }
    mkrt_stats_read(e->rt, &after);
    mkrt_traversal_stats_read(t, &ta);
    e->last = (traverse_counters){.edges_examined = 0};
    e->last.edges_examined = ta.edges_examined - tb.edges_examined;
    e->last.changed = after.changed - before.changed;
    e->last.rounds = after.batches - before.batches;
    e->last.levels_pushed = ta.levels_pushed - tb.levels_pushed;
    e->last.levels_pulled = ta.levels_pulled - tb.levels_pulled;
    e->last.units = after.units_run - before.units_run;
    e->last.units_planner = after.units_by_planner - before.units_by_planner;
    return 0;
}

static int bfs(traverse_engine *e, uint32_t root, uint32_t *parent, char *why, size_t len)
{
    if (root >= e->vertices) {
        snprintf(why, len, "mkrt engine: root %u is not a vertex (%u). Fix: a root below it.", root,
                 e->vertices);
        return -1;
    }
    if (e->bfs_t != NULL) {
        mkrt_error err = {0};
        if (search(e, e->bfs_t, root, why, len) != 0)
            return -1;
        if (mkrt_traversal_parents(e->bfs_t, 0, e->vertices, parent, &err) != MKRT_OK) {
            snprintf(why, len, "mkrt engine: %s", err.message);
            return -1;
        }
        return 0; /* UINT32_MAX is G500_NO_PARENT */
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
    if (e->sssp_t != NULL) {
        mkrt_error err = {0};
        if (search(e, e->sssp_t, root, why, len) != 0)
            return -1;
        if (mkrt_traversal_read(e->sssp_t, 0, e->vertices, dist, &err) != MKRT_OK) {
            snprintf(why, len, "mkrt engine: %s", err.message);
            return -1;
        }
        return 0; /* UINT64_MAX is G500_INF */
    }
    if (run(e, (mkrt_item){MKRT_OP_RELAX, e->vertices, root, 0}, UNREACHED, why, len) != 0)
        return -1;
    for (uint32_t v = 0; v < e->vertices; v++)
        dist[v] = e->cells[v] == UNREACHED ? G500_INF : e->cells[v];
    return 0;
}

static int cc(traverse_engine *e, uint32_t *comp, char *why, size_t len)
{
    mkrt_error err = {0};
    if (search(e, e->cc_t, 0, why, len) != 0)
        return -1;
    if (mkrt_traversal_read(e->cc_t, 0, e->vertices, e->labels, &err) != MKRT_OK) {
        snprintf(why, len, "mkrt engine: %s", err.message);
        return -1;
    }
    for (uint32_t v = 0; v < e->vertices; v++)
        comp[v] = (uint32_t)e->labels[v];
    return 0;
}

static int pr(traverse_engine *e, double *score, uint32_t *iterations, char *why, size_t len)
{
    mkrt_error err = {0};
    if (search(e, e->pr_t, 0, why, len) != 0)
        return -1;
    if (mkrt_traversal_read_ranks(e->pr_t, 0, e->vertices, score, iterations, &err) != MKRT_OK) {
        snprintf(why, len, "mkrt engine: %s", err.message);
        return -1;
    }
    e->last.iterations = *iterations;
    e->last.rounds = *iterations; /* the iterations are its levels */
    return 0;
}

static void counters(const traverse_engine *e, traverse_counters *out)
{
    *out = e->last;
}

static void close_engine(traverse_engine *e)
{
    if (e == NULL)
        return;
    mkrt_producer_close(e->producer);
    mkrt_destroy(e->rt, MKRT_TIMEOUT_INFINITE, NULL);
    free_arrays(e);
}

const traverse_ops traverse_mkrt_ops = {"mkrt-cpu", open_cpu, bfs, sssp, close_engine,
                                        cc, pr, counters};
/* The same on MKRT_BACKEND_SIM: BFS's VISIT is a C user op, so its batches
 * run on the CPU pool there, while SSSP's RELAX runs as one traversal on
 * the simulated device (tests/test_graph.c runs both). Not in traverse.h:
 * the benchmark compares engines, not backends of one. */
extern const traverse_ops traverse_mkrt_sim_ops;
const traverse_ops traverse_mkrt_sim_ops = {"mkrt-sim", open_sim, bfs, sssp, close_engine,
                                            cc, pr, counters};
/* The same on MKRT_BACKEND_CUDA (open_cuda); graph_bench --device runs it. */
extern const traverse_ops traverse_mkrt_cuda_ops;
const traverse_ops traverse_mkrt_cuda_ops = {"mkrt-cuda", open_cuda, bfs, sssp, close_engine,
                                             cc, pr, counters};
