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
 * v's edges emitted when it lowered), from RELAX(zero -> root, 0).
 *
 * CC: label propagation. Every cell starts as its own vertex number; a
 * user op LABEL(u -> v) lowers cells[v] to cells[u] with an atomic minimum
 * and, when it lowered it, emits v's edges. One seed item per block of
 * vertices emits the edges of every vertex of the block; at the fixpoint
 * every vertex holds the smallest vertex number of its component. LABEL
 * commutes and is idempotent, so the rounds run it concurrently and the
 * result does not depend on their order. (No pulls: a label may drop
 * several times, so a vertex does not settle when it joins the frontier.)
 *
 * PageRank: pull iterations. One item RANK(b -> b) per block b of
 * vertices (blocks of about equal edges + vertices); it sums, for each
 * vertex of its block, the contributions (score / degree, as floats) of
 * its neighbours from the previous iteration, writes the new score and
 * the next contribution, and leaves the block's L1 change in cells[b] (a
 * double's bits). The blocks of an iteration are one layer; the host
 * sums the changes after mkrt_quiesce and stops below the tolerance. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mkrt/mkrt.h"
#include "traverse.h"

enum { OP_VISIT = MKRT_OP_USER_FIRST, OP_LABEL, OP_RANK };
/* Blocks of vertices for CC's seeds and PageRank's items: at most this many. */
#define BLOCKS_MAX 256u
/* VISIT's param when it seeds the root: emit its edges, change nothing. */
#define SEED UINT32_MAX
#define UNREACHED UINT64_MAX

struct traverse_engine {
    mkrt_runtime *rt;
    mkrt_producer *producer;
    uint32_t vertices;
    uint64_t *cells; /* the traversal's result, read in bulk */
    const g500_csr *g;
    uint32_t blocks;
    uint32_t *block_first; /* blocks + 1 entries: block b is [first[b], first[b + 1]) */
    mkrt_item *items;      /* blocks items, published per CC or PageRank iteration */
    double *score;         /* PageRank: the current scores */
    float *contrib[2];     /* PageRank: score / degree, previous and next iteration */
    unsigned parity;       /* PageRank: contrib[parity] is read (set before publishing) */
    traverse_counters last;
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

/* CC's op: a seed (param SEED, in = block) emits the edges of its block's
 * vertices; an edge item lowers its target's label to its source's. */
static mkrt_status label(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    if (it->param == SEED) {
        const traverse_engine *e = ctx->user;
        for (uint32_t v = e->block_first[it->in]; v < e->block_first[it->in + 1]; v++) {
            mkrt_status st = mkrt_op_emit_edges(ctx, v);
            if (st != MKRT_OK)
                return st;
        }
        return MKRT_OK;
    }
    uint64_t from = mkrt_op_cell_load(ctx, it->in); /* a round's other edges may lower it meanwhile */
    if (mkrt_op_cell_min(ctx, it->out, from))
        return mkrt_op_emit_edges(ctx, it->out);
    return MKRT_OK;
}

/* PageRank's op: one block of one pull iteration. It reads the engine's
 * arrays (read-only contrib[parity], its own block's entries of the rest),
 * and writes its change into its own out cell. */
static mkrt_status rank(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    traverse_engine *e = ctx->user;
    const g500_csr *g = e->g;
    const float *in = e->contrib[e->parity];
    float *next = e->contrib[e->parity ^ 1];
    const double base = (1.0 - TRAVERSE_PR_DAMPING) / e->vertices;
    double change = 0;
    for (uint32_t v = e->block_first[it->in]; v < e->block_first[it->in + 1]; v++) {
        const uint64_t lo = g->offsets[v], hi = g->offsets[v + 1];
        float sum = 0;
        for (uint64_t k = lo; k < hi; k++)
            sum += in[g->targets[k]];
        const double s = base + TRAVERSE_PR_DAMPING * (double)sum;
        change += s > e->score[v] ? s - e->score[v] : e->score[v] - s;
        e->score[v] = s;
        next[v] = hi > lo ? (float)(s / (double)(hi - lo)) : 0.0f;
    }
    memcpy(&ctx->cells[it->out], &change, sizeof change); /* RANK items own their out cell */
    return MKRT_OK;
}

/* Blocks of about equal work (edges + vertices), at most BLOCKS_MAX. */
static void make_blocks(traverse_engine *e)
{
    const g500_csr *g = e->g;
    const uint32_t n = g->vertices;
    const uint32_t want = n < BLOCKS_MAX ? n : BLOCKS_MAX;
    const uint64_t work = g->offsets[n] + n, per = work / want + 1;
    uint32_t b = 0;
    e->block_first[0] = 0;
    for (uint32_t v = 0; v < n; v++)
        if (g->offsets[v + 1] + v + 1 >= per * (b + 1) && b + 1 < want)
            e->block_first[++b] = v + 1;
    e->block_first[++b] = n;
    e->blocks = b;
}

static void free_arrays(traverse_engine *e)
{
    free(e->cells);
    free(e->block_first);
    free(e->items);
    free(e->score);
    free(e->contrib[0]);
    free(e->contrib[1]);
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
    const size_t n = g->vertices;
    if (e == NULL || (e->cells = malloc(n * sizeof *e->cells)) == NULL ||
        (e->block_first = malloc((BLOCKS_MAX + 1) * sizeof *e->block_first)) == NULL ||
        (e->items = malloc(BLOCKS_MAX * sizeof *e->items)) == NULL ||
        (e->score = malloc(n * sizeof *e->score)) == NULL ||
        (e->contrib[0] = malloc(n * sizeof(float))) == NULL ||
        (e->contrib[1] = malloc(n * sizeof(float))) == NULL) {
        if (e != NULL)
            free_arrays(e);
        snprintf(why, len, "mkrt engine: out of memory for %u vertices. Fix: free memory.", g->vertices);
        return NULL;
    }
    e->vertices = g->vertices;
    e->g = g;
    make_blocks(e);
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
    mkrt_op_desc dl = {.fn = label, .user = e, .name = "cc-label", .idempotent = true,
                       .commutes = true, .expands = true};
    if (mkrt_op_register(e->rt, OP_LABEL, &dl, &err) != MKRT_OK)
        return fail_open(e, why, len, "mkrt_op_register", &err);
    mkrt_op_desc dr = {.fn = rank, .user = e, .name = "pr-rank"};
    if (mkrt_op_register(e->rt, OP_RANK, &dr, &err) != MKRT_OK)
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
    e->last = (traverse_counters){0, 0, 0, 0};
    return publish_quiesce(e, &seed, 1, e->vertices, why, len);
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

static int cc(traverse_engine *e, uint32_t *comp, char *why, size_t len)
{
    for (uint32_t v = 0; v < e->vertices; v++)
        mkrt_cell_write(e->rt, v, v); /* quiescent: nothing touches them */
    for (uint32_t b = 0; b < e->blocks; b++)
        e->items[b] = (mkrt_item){OP_LABEL, b, b, SEED};
    e->last = (traverse_counters){0, 0, 0, 0};
    if (publish_quiesce(e, e->items, e->blocks, e->vertices, why, len) != 0)
        return -1;
    for (uint32_t v = 0; v < e->vertices; v++)
        comp[v] = (uint32_t)e->cells[v];
    return 0;
}

static int pr(traverse_engine *e, double *score, uint32_t *iterations, char *why, size_t len)
{
    const g500_csr *g = e->g;
    const uint32_t n = e->vertices;
    for (uint32_t v = 0; v < n; v++) {
        uint64_t deg = g->offsets[v + 1] - g->offsets[v];
        e->score[v] = 1.0 / n;
        e->contrib[0][v] = deg > 0 ? (float)(1.0 / n / (double)deg) : 0.0f;
    }
    for (uint32_t b = 0; b < e->blocks; b++)
        e->items[b] = (mkrt_item){OP_RANK, b, b, 0};
    e->last = (traverse_counters){0, 0, 0, 0};
    e->parity = 0;
    uint32_t it = 0;
    while (it < TRAVERSE_PR_MAX_ITERS) {
        it++;
        /* The items read parity when they run: after the publish below. */
        if (publish_quiesce(e, e->items, e->blocks, e->blocks, why, len) != 0)
            return -1;
        double change = 0;
        for (uint32_t b = 0; b < e->blocks; b++) {
            double c;
            memcpy(&c, &e->cells[b], sizeof c);
            change += c;
        }
        e->parity ^= 1;
        if (change < TRAVERSE_PR_TOLERANCE)
            break;
    }
    e->last.edges_examined = g->offsets[n] * it; /* pulled: every edge once per iteration */
    e->last.iterations = it;
    *iterations = it;
    memcpy(score, e->score, (size_t)n * sizeof *score);
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
