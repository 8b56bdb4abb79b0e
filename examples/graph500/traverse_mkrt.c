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
 * The SIM engine keeps the older path, the one the device runs: BFS is a
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
 * CC: Afforest-style linking (Sutton et al.) over blocks of vertices: one
 * item CC(b -> b) per block b and phase, a publish and mkrt_quiesce per
 * phase. comp[] (a user array of atomics) starts as the identity; a link
 * hooks the larger of two roots under the smaller with a compare-and-swap
 * and retries from the new roots when it loses; a compress phase points
 * every vertex at its root. Phases: link each vertex to its first and
 * second neighbour (one phase: a compress between the two rounds, as
 * Afforest has, cost a publish and a quiescence more per run and the
 * sample found the same component), compress, sample 1024 vertices for the
 * most frequent component, then link the remaining edges of every vertex
 * outside it (the graph is symmetric, so edges into that component are
 * seen from their other end), and compress. A hook only ever lowers a
 * root's entry (comp[x] <= x always), so every vertex then holds the
 * smallest vertex of its component.
 *
 * PageRank: pull iterations. One item RANK(b -> b) per block b of
 * vertices (blocks of about equal edges + vertices); it sums, for each
 * vertex of its block, the contributions (score / degree, as floats) of
 * its neighbours from the previous iteration, writes the new score and
 * the next contribution, and leaves the block's L1 change in cells[b] (a
 * double's bits). The blocks of an iteration are one layer; the host
 * sums the changes after mkrt_quiesce and stops below the tolerance. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mkrt/mkrt.h"
#include "traverse.h"

enum { OP_VISIT = MKRT_OP_USER_FIRST, OP_CC, OP_RANK };
/* CC's phases (an item's param): link neighbours 0 and 1, compress, the rest. */
enum { CC_LINK = 0, CC_COMPRESS = 2, CC_FINAL = 3 };
#define CC_SAMPLES 1024u
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
    _Atomic uint32_t *comp;   /* CC: the forest */
    uint32_t big;             /* CC: the sampled largest component (set before CC_FINAL) */
    _Atomic uint64_t scanned; /* CC: edges examined */
    traverse_counters last;
    /* The CPU engine's BFS and SSSP: traversals with state of their own
     * (mkrt_traversal_open; NULL on SIM, which runs VISIT and RELAX). */
    mkrt_traversal *bfs_t, *sssp_t;
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

/* Hooks the components of u and v together. The comp[] accesses are
 * relaxed: comp[] publishes no other data, a lost compare-and-swap is
 * retried from the roots it read, and the phases are ordered by
 * mkrt_quiesce (publish and quiescence order the items' memory). */
static void link(_Atomic uint32_t *comp, uint32_t u, uint32_t v)
{
    uint32_t p1 = atomic_load_explicit(&comp[u], memory_order_relaxed);
    uint32_t p2 = atomic_load_explicit(&comp[v], memory_order_relaxed);
    while (p1 != p2) {
        uint32_t high = p1 > p2 ? p1 : p2, low = p1 + p2 - high;
        uint32_t ph = atomic_load_explicit(&comp[high], memory_order_relaxed);
        if (ph == low)
            return; /* already hooked there */
        if (ph == high && atomic_compare_exchange_strong_explicit(
                              &comp[high], &ph, low, memory_order_relaxed, memory_order_relaxed))
            return;
        p1 = atomic_load_explicit(&comp[atomic_load_explicit(&comp[high], memory_order_relaxed)],
                                  memory_order_relaxed);
        p2 = atomic_load_explicit(&comp[low], memory_order_relaxed);
    }
}

/* CC's op: one phase over one block (it->in) of vertices. */
static mkrt_status cc_block(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    traverse_engine *e = ctx->user;
    const g500_csr *g = e->g;
    _Atomic uint32_t *comp = e->comp;
    uint64_t scanned = 0;
    for (uint32_t v = e->block_first[it->in]; v < e->block_first[it->in + 1]; v++) {
        const uint64_t lo = g->offsets[v], hi = g->offsets[v + 1];
        if (it->param == CC_COMPRESS) {
            uint32_t c = atomic_load_explicit(&comp[v], memory_order_relaxed), cc;
            while (c != (cc = atomic_load_explicit(&comp[c], memory_order_relaxed)))
                c = cc;
            atomic_store_explicit(&comp[v], c, memory_order_relaxed);
        } else if (it->param == CC_LINK) {
            for (uint64_t k = lo; k < hi && k < lo + 2; k++)
                link(comp, v, g->targets[k]);
            scanned += hi - lo < 2 ? hi - lo : 2;
        } else if (atomic_load_explicit(&comp[v], memory_order_relaxed) != e->big) {
            for (uint64_t k = lo + 2; k < hi; k++)
                link(comp, v, g->targets[k]);
            scanned += hi > lo + 2 ? hi - lo - 2 : 0;
        }
    }
    atomic_fetch_add_explicit(&e->scanned, scanned, memory_order_relaxed); /* read after quiescence */
    return MKRT_OK;
}

#define PR_AHEAD 16u

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
    /* The neighbours' contributions are random reads: a cursor PR_AHEAD
     * edges ahead (targets is read in order) starts their loads early. */
    const uint32_t *const targets = g->targets;
    const uint64_t block_end = g->offsets[e->block_first[it->in + 1]];
    for (uint32_t v = e->block_first[it->in]; v < e->block_first[it->in + 1]; v++) {
        const uint64_t lo = g->offsets[v], hi = g->offsets[v + 1];
        float sum = 0;
        for (uint64_t k = lo; k < hi; k++) {
            if (k + PR_AHEAD < block_end)
                __builtin_prefetch(&in[targets[k + PR_AHEAD]], 0, 3);
            sum += in[targets[k]];
        }
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
    free(e->comp);
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

/* bfs_t, sssp_t: run BFS and SSSP as public traversals (mkrt_traversal_open,
 * on the CPU pool); else as items (VISIT, RELAX) through the runtime. */
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
        (e->block_first = malloc((BLOCKS_MAX + 1) * sizeof *e->block_first)) == NULL ||
        (e->items = malloc(BLOCKS_MAX * sizeof *e->items)) == NULL ||
        (e->score = malloc(n * sizeof *e->score)) == NULL ||
        (e->contrib[0] = malloc(n * sizeof(float))) == NULL ||
        (e->contrib[1] = malloc(n * sizeof(float))) == NULL ||
        (e->comp = malloc(n * sizeof *e->comp)) == NULL) {
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
    mkrt_op_desc dl = {.fn = cc_block, .user = e, .name = "cc-block"};
    if (mkrt_op_register(e->rt, OP_CC, &dl, &err) != MKRT_OK)
        return fail_open(e, why, len, "mkrt_op_register", &err);
    mkrt_op_desc dr = {.fn = rank, .user = e, .name = "pr-rank"};
    if (mkrt_op_register(e->rt, OP_RANK, &dr, &err) != MKRT_OK)
        return fail_open(e, why, len, "mkrt_op_register", &err);
    if ((e->producer = mkrt_producer_open(e->rt, &err)) == NULL)
        return fail_open(e, why, len, "mkrt_producer_open", &err);
    /* The kit's CSR is symmetric (both directions of every edge): the BFS
     * may pull its large levels. */
    mkrt_traversal_desc db = {MKRT_TRAVERSAL_BFS, true}, ds = {MKRT_TRAVERSAL_SSSP, true};
    if ((bfs_t && mkrt_traversal_open(e->rt, &db, &e->bfs_t, &err) != MKRT_OK) ||
        (sssp_t && mkrt_traversal_open(e->rt, &ds, &e->sssp_t, &err) != MKRT_OK))
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

/* On a CUDA GPU: SSSP's RELAX seed runs its whole traversal on the
 * megakernel (the graph is resident in device memory); BFS is the CPU
 * pool's public traversal, and CC and PageRank's C user ops run on the
 * CPU pool. Fails to open (the reason in `why`) without a GPU. */
static traverse_engine *open_cuda(const g500_csr *g, unsigned threads, char *why, size_t len)
{
    return open_on(g, threads, MKRT_BACKEND_CUDA, true, false, why, len);
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
    e->last = (traverse_counters){0, 0, 0, 0, 0, 0};
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
    mkrt_status st = mkrt_traversal_start(t, root, &err);
    if (st == MKRT_OK)
        st = mkrt_traversal_wait(t, MKRT_TIMEOUT_INFINITE);
    if (st != MKRT_OK) {
        snprintf(why, len, "mkrt engine: search from %u: %s (%d)", root, err.message, (int)st);
        return -1;
    }
    mkrt_stats_read(e->rt, &after);
    mkrt_traversal_stats_read(t, &ta);
    e->last = (traverse_counters){0, 0, 0, 0, 0, 0};
    e->last.edges_examined = ta.edges_examined - tb.edges_examined;
    e->last.changed = after.changed - before.changed;
    e->last.rounds = after.batches - before.batches;
    e->last.levels_pushed = ta.levels_pushed - tb.levels_pushed;
    e->last.levels_pulled = ta.levels_pulled - tb.levels_pulled;
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

/* One CC phase: an item per block, then quiescence. */
static int cc_phase(traverse_engine *e, uint32_t phase, char *why, size_t len)
{
    for (uint32_t b = 0; b < e->blocks; b++)
        e->items[b] = (mkrt_item){OP_CC, b, b, phase};
    return publish_quiesce(e, e->items, e->blocks, 0, why, len);
}

/* The most frequent component among CC_SAMPLES vertices (deterministic). */
static uint32_t cc_sample(const traverse_engine *e)
{
    uint32_t seen[CC_SAMPLES], best = 0, best_n = 0;
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (uint32_t i = 0; i < CC_SAMPLES; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        seen[i] = atomic_load_explicit(&e->comp[x % e->vertices], memory_order_relaxed);
    }
    for (uint32_t i = 0; i < CC_SAMPLES; i++) { /* quadratic, on 1024: cheap beside the graph */
        uint32_t n = 0;
        for (uint32_t j = i; j < CC_SAMPLES; j++)
            n += seen[j] == seen[i];
        if (n > best_n) {
            best_n = n;
            best = seen[i];
        }
        if (best_n > CC_SAMPLES / 2)
            break;
    }
    return best;
}

static int cc(traverse_engine *e, uint32_t *comp, char *why, size_t len)
{
    for (uint32_t v = 0; v < e->vertices; v++)
        atomic_init(&e->comp[v], v); /* quiescent: no op runs */
    e->last = (traverse_counters){0, 0, 0, 0, 0, 0};
    atomic_store_explicit(&e->scanned, 0, memory_order_relaxed);
    static const uint32_t first[] = {CC_LINK, CC_COMPRESS};
    for (size_t i = 0; i < sizeof first / sizeof *first; i++)
        if (cc_phase(e, first[i], why, len) != 0)
            return -1;
    e->big = cc_sample(e); /* the items of the next phase read it: set before publishing */
    if (cc_phase(e, CC_FINAL, why, len) != 0 || cc_phase(e, CC_COMPRESS, why, len) != 0)
        return -1;
    for (uint32_t v = 0; v < e->vertices; v++)
        comp[v] = atomic_load_explicit(&e->comp[v], memory_order_relaxed);
    e->last.edges_examined = atomic_load_explicit(&e->scanned, memory_order_relaxed);
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
    e->last = (traverse_counters){0, 0, 0, 0, 0, 0};
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
/* The same on MKRT_BACKEND_CUDA (open_cuda); graph_bench --device runs it. */
extern const traverse_ops traverse_mkrt_cuda_ops;
const traverse_ops traverse_mkrt_cuda_ops = {"mkrt-cuda", open_cuda, bfs, sssp, close_engine,
                                             cc, pr, counters};
