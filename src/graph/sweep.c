/* SPDX-License-Identifier: BSD-2-Clause */
/* src/graph/sweep.c - connected components and PageRank as public
 * traversals (graph/sweep.h says how a sweep runs).
 *
 * CC (Afforest, Sutton et al.): label[v] starts as v; a link hooks the
 * larger of two roots under the smaller with a compare-and-swap (a root's
 * label only ever goes down, so every label ends as the smallest vertex
 * of its component). Three phases: LINK0 and LINK1 link the first edge
 * of every row, then the second (two passes of one link per row ran 7%
 * faster than one pass of two, bench/results/kernels_profile.md); the
 * dispatcher's sample of the roots of SAMPLES vertices for the most
 * frequent component; FINAL, where each vertex first takes its
 * root as its label (the compress, fused: a phase transition costs more
 * than the pass) and links its remaining edges unless that root is the
 * sampled one (on a graph not opened symmetric, every vertex links: an
 * edge into the large component may be seen from one end only). No
 * final compress phase: a label read (mkrt__sweep_read) follows its
 * chain to the root, mostly one step.
 *
 * PageRank: it starts from the degrees, not from 1/n (see
 * mkrt__sweep_reset), then one phase per iteration; a block's vertices each gather the
 * contributions (score / degree, a float) of their row and write their
 * new score and contribution at once (Gauss-Seidel over blocks), and the
 * block's L1 change into its slot, which the dispatcher sums after the
 * phase. Accesses to labels and contributions are relaxed atomics: the
 * other blocks of a phase read and write them at once by design (a link
 * retries from the roots it read; a gather takes the old or the new
 * contribution, either converges); the phases are ordered by the batches'
 * launches and completions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpus.h"
#include "base/error_internal.h"
#include "graph/sweep.h"

enum { OP_LINK0, OP_LINK1, OP_FINAL, OP_RANK };
/* CC's phases in order (the sample runs before FINAL). */
static const uint8_t cc_ops[] = {OP_LINK0, OP_LINK1, OP_FINAL};
#define OP_SHIFT 24
#define SAMPLES 1024u
/* Blocks: about this much work (edges + vertices) each, at most BLOCKS_MAX.
 * A phase is one batch of one item per block, and the batch planner gives
 * a layer a second participant only past its minimum share of items
 * (MKRT__SHARE_MIN_DEFAULT, 2048, while its costs are not measured; a
 * source's batches do not feed them): blocks of 8192 made 1024 items per
 * phase at scale 18, which ran on one thread at --threads 2. At 1024 a
 * block still holds about 2000 edges at scale 18 (whole words of 64
 * vertices), so a chunk's own cost stays under 1%. */
#define BLOCK_WORK 1024u
#define BLOCKS_MAX 8192u
/* A gather's loads of neighbours' contributions start this many edges
 * ahead, and a link's labels this many vertices ahead. Twice the earlier
 * 16 and 8 on an EPYC with 1 MiB of L2 per core: PageRank urand 0.92-0.96x
 * the time, CC urand 0.91-0.96x, kron and 2 workers 0.96-0.99x; twice
 * again was slower (bench/results/kernels_profile.md, tenth session). */
#define RANK_AHEAD 32u
#define LINK_AHEAD 16u

/* Whether PageRank's gather prefetches its contributions (`bytes` of
 * them): only where they do not stay in one core's L2. At scale 18 (1
 * MiB of them) the prefetch paid on an EPYC with 1 MiB of L2 a core (the
 * note above); on a Xeon with 2 MiB, where the array stays in L2, the
 * gather without it took 0.87-0.90x the time on urand, 1.03x on kron at
 * 1 worker (bench/results/graph.md, 2026-12-08). An L2 the system does
 * not report: prefetch. */
static bool gather_prefetches(size_t bytes)
{
    const size_t l2 = mkrt__l2_bytes();
    return l2 == 0 || bytes > l2 / 2;
}

/* CC's blocks a worker claims at once: its LINK and FINAL blocks are a
 * few hundred links each, and a claim is an atomic add on the one
 * cursor every worker hits (4096 claims a phase at scale 18 took a tenth
 * of the phase at 2 threads). */
#define CLAIM_CC 16u

#define PR_DAMPING 0.85
#define PR_TOLERANCE 1e-4
#define PR_MAX_ITERATIONS 20u

struct mkrt__sweep {
    uint32_t blocks;
    uint32_t *first;        /* blocks + 1 entries: block b is vertices [first[b], first[b + 1]) */
    double *change;         /* PageRank: each block's L1 change in the phase (its worker writes it) */
    _Atomic uint32_t *label; /* CC (vertices) */
    double *score;          /* PageRank (vertices): each block writes its own */
    _Atomic uint32_t *contrib; /* PageRank (vertices): a float's bits */
    uint32_t vertices;
    uint32_t linked;        /* vertices with at least one edge */
    bool symmetric;
    bool gather_ahead; /* PageRank: the gather prefetches (gather_prefetches) */
    double damping, tolerance, base;
    uint32_t max_iterations;
    /* The run (dispatcher-only, but big: the workers read it after the
     * launch of the FINAL phase, which publishes it). */
    uint32_t op, next;      /* the phase's op; its next block to take */
    uint32_t step;          /* CC: the phase's index in cc_ops */
    uint32_t big;           /* CC: the sampled largest component */
    uint32_t iterations;    /* PageRank: iterations run */
    uint32_t last_iterations; /* of the finished run (read after its wait) */
};

static size_t bytes_label(uint32_t n)
{
    return (size_t)n * sizeof(_Atomic uint32_t);
}

static void free_arrays(struct mkrt__sweep *s)
{
    mkrt__free(s->first, ((size_t)BLOCKS_MAX + 1) * sizeof *s->first);
    mkrt__free(s->change, (size_t)BLOCKS_MAX * sizeof *s->change);
    mkrt__free((void *)s->label, bytes_label(s->vertices));
    mkrt__free(s->score, (size_t)s->vertices * sizeof *s->score);
    mkrt__free((void *)s->contrib, bytes_label(s->vertices));
}

void mkrt__sweep_free(mkrt__traversal *t)
{
    if (t->sweep == NULL)
        return;
    free_arrays(t->sweep);
    mkrt__free(t->sweep, sizeof *t->sweep);
    t->sweep = NULL;
}

/* Blocks of about BLOCK_WORK edges + vertices, each whole words of 64
 * vertices (at least 64 blocks while there are that many words). */
static void make_blocks(struct mkrt__sweep *s, const mkrt_graph *g)
{
    const uint64_t n = g->vertices, work = g->offsets[n] + n;
    const uint64_t words = (n + 63) / 64;
    uint64_t want = work / BLOCK_WORK;
    want = want < 64 ? 64 : want;
    want = want > BLOCKS_MAX ? BLOCKS_MAX : want;
    want = want > words ? words : want;
    const uint64_t per = work / want + 1;
    uint32_t b = 0;
    s->first[0] = 0;
    for (uint64_t w = 1; w < words; w++) {
        const uint64_t v = w * 64;
        if (g->offsets[v] + v >= per * (b + 1) && b + 1 < want)
            s->first[++b] = (uint32_t)v;
    }
    s->first[++b] = (uint32_t)n;
    s->blocks = b;
    s->linked = 0;
    for (uint64_t v = 0; v < n; v++)
        s->linked += g->offsets[v + 1] > g->offsets[v];
}

mkrt_status mkrt__sweep_open(mkrt__traversal *t, const mkrt_traversal_desc *d, mkrt_error *err)
{
    const mkrt_graph *g = &t->engine->graph;
    const uint32_t n = g->vertices;
    const bool pr = d->kind == MKRT_TRAVERSAL_PAGERANK;
    if (pr && !d->symmetric)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_traversal_open: PageRank gathers over each vertex's row as its "
                               "in-edges, so it needs a symmetric graph, and the description says "
                               "symmetric = false. Fix: register both directions of every edge and "
                               "open with symmetric = true.");
    struct mkrt__sweep *s = t->sweep;
    if (s == NULL) {
        s = mkrt__alloc_zeroed(sizeof *s, MKRT_CACHE_LINE);
        if (s == NULL)
            goto nomem;
        s->vertices = n;
        t->sweep = s;
        s->first = mkrt__alloc(((size_t)BLOCKS_MAX + 1) * sizeof *s->first, MKRT_CACHE_LINE);
        s->change = mkrt__alloc((size_t)BLOCKS_MAX * sizeof *s->change, MKRT_CACHE_LINE);
        if (s->first == NULL || s->change == NULL)
            goto nomem;
        make_blocks(s, g);
    }
    /* The labels and the contributions are read at random: huge pages. */
    if (!pr && s->label == NULL && (s->label = mkrt__alloc_large(bytes_label(n), MKRT_CACHE_LINE)) == NULL)
        goto nomem;
    if (pr && s->score == NULL && (s->score = mkrt__alloc((size_t)n * sizeof *s->score, MKRT_CACHE_LINE)) == NULL)
        goto nomem;
    if (pr && s->contrib == NULL && (s->contrib = mkrt__alloc_large(bytes_label(n), MKRT_CACHE_LINE)) == NULL)
        goto nomem;
    s->symmetric = d->symmetric;
    s->gather_ahead = pr && gather_prefetches(bytes_label(n));
    s->last_iterations = 0;
    return MKRT_OK;
nomem:
    /* What was made stays with the traversal (freed with it). */
    return mkrt__error_set(err, MKRT_ENOMEM,
                           "mkrt_traversal_open: no memory for the %s arrays of %u vertices (%zu bytes). "
                           "Fix: free memory.",
                           pr ? "PageRank" : "CC", n, (size_t)n * (pr ? 12 : 4) + (size_t)BLOCKS_MAX * 12);
}

static float float_of(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

mkrt_status mkrt__sweep_check(const mkrt_pagerank_params *p, mkrt_error *err)
{
    if (p != NULL && !(p->damping == 0 || (p->damping > 0 && p->damping < 1)))
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_traversal_start_pagerank: damping %g is not in (0, 1). Fix: 0.85 "
                               "(or 0 for the default).",
                               p->damping);
    if (p != NULL && !(p->tolerance >= 0))
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_traversal_start_pagerank: tolerance %g is negative or not a "
                               "number. Fix: a positive L1 change such as 1e-4 (or 0 for the "
                               "default).",
                               p->tolerance);
    return MKRT_OK;
}

void mkrt__sweep_reset(mkrt__traversal *t, const mkrt_pagerank_params *p)
{
    struct mkrt__sweep *s = t->sweep;
    const mkrt_graph *g = &t->engine->graph;
    const uint32_t n = g->vertices;
    s->damping = p != NULL && p->damping != 0 ? p->damping : PR_DAMPING;
    s->tolerance = p != NULL && p->tolerance != 0 ? p->tolerance : PR_TOLERANCE;
    s->max_iterations = p != NULL && p->max_iterations != 0 ? p->max_iterations : PR_MAX_ITERATIONS;
    s->base = (1.0 - s->damping) / n;
    /* relaxed: published to the dispatcher by the start's release. */
    if (t->kind == MKRT__LANE_CC) {
        for (uint32_t v = 0; v < n; v++)
            atomic_store_explicit(&s->label[v], v, memory_order_relaxed);
        return;
    }
    /* The start: (1 - d)/n + d * (linked/n) * degree(v) / edges, not
     * GAPBS's 1/n. On a symmetric graph degree / edges is the fixed point
     * of the gather alone (the random walk's stationary vector), and at
     * the fixed point every component holds its share of vertices of the
     * scores (size/n): the start gives the vertices without edges their
     * final (1 - d)/n and the others that mass in proportion to their
     * degrees. From 1/n the vertices with edges start with the mass of
     * the isolated ones, an error that an iteration shrinks only by d; at
     * scale 18 this start takes 4 iterations on kron where 1/n takes 11
     * (3 and 4 on urand) and stops closer to the fixed point
     * (bench/results/kernels_profile.md). Any start converges to the same
     * fixed point; only the iterations change. */
    const double edges = (double)g->offsets[n];
    const double spread = edges > 0 ? s->damping * ((double)s->linked / n) / edges : 0;
    for (uint32_t v = 0; v < n; v++) {
        const uint64_t deg = g->offsets[v + 1] - g->offsets[v];
        const double init = s->base + spread * (double)deg;
        s->score[v] = init;
        atomic_store_explicit(&s->contrib[v], bits_of(deg ? (float)(init / (double)deg) : 0.0f),
                              memory_order_relaxed);
    }
}

void mkrt__sweep_begin(mkrt__traversal *t)
{
    struct mkrt__sweep *s = t->sweep;
    t->x.sweep = true;
    s->op = t->kind == MKRT__LANE_CC ? cc_ops[0] : OP_RANK;
    s->step = 0;
    s->next = 0;
    s->iterations = 0;
    mkrt__graph_count(&t->levels_pushed, 1);
    mkrt__graph_count(&t->engine->levels_pushed, 1);
}

/* The most frequent label among SAMPLES vertices (deterministic). */
static int cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The root above v: labels only go down, every chain ends at a root. */
static inline uint32_t root_of(_Atomic uint32_t *label, uint32_t v)
{
    uint32_t c = atomic_load_explicit(&label[v], memory_order_relaxed), cc;
    while (c != (cc = atomic_load_explicit(&label[c], memory_order_relaxed)))
        c = cc;
    return c;
}

static uint32_t sample_big(const struct mkrt__sweep *s)
{
    uint32_t seen[SAMPLES], best = 0, best_n = 0;
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (uint32_t i = 0; i < SAMPLES; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        seen[i] = root_of(s->label, (uint32_t)(x % s->vertices));
    }
    qsort(seen, SAMPLES, sizeof *seen, cmp_u32);
    for (uint32_t i = 0, j; i < SAMPLES; i = j) {
        for (j = i + 1; j < SAMPLES && seen[j] == seen[i]; j++)
            ;
        if (j - i > best_n) {
            best_n = j - i;
            best = seen[i];
        }
    }
    return best;
}

/* The phase that ended (no batch runs): sets the next one's op, or
 * returns false when the run is done. */
static bool next_phase(mkrt__traversal *t)
{
    struct mkrt__sweep *s = t->sweep;
    if (t->kind == MKRT__LANE_CC) {
        if (++s->step >= sizeof cc_ops / sizeof *cc_ops)
            return false;
        s->op = cc_ops[s->step];
        if (s->op == OP_FINAL)
            s->big = sample_big(s); /* read by FINAL's workers: its launch publishes it */
        return true;
    }
    double change = 0;
    for (uint32_t b = 0; b < s->blocks; b++)
        change += s->change[b];
    s->iterations++;
    return change >= s->tolerance && s->iterations < s->max_iterations;
}

/* The run ends: its last phase is done, or it was aborted. */
static void sweep_end(mkrt__traversal *t, bool aborting)
{
    t->sweep->last_iterations = t->sweep->iterations;
    t->x.sweep = false;
    mkrt__traversal_finish(t, aborting ? MKRT_ETIMEDOUT : MKRT_OK);
}

/* The next phase begins (its blocks from 0). */
static void phase_count(mkrt__traversal *t)
{
    mkrt__graph_count(&t->levels_pushed, 1);
    mkrt__graph_count(&t->engine->levels_pushed, 1);
}

int mkrt__sweep_take(mkrt__traversal *t, mkrt_item *items, size_t *k, uint64_t cap, bool batch_running,
                     bool aborting, bool levels)
{
    struct mkrt__sweep *s = t->sweep;
    mkrt__graph_engine *e = t->engine;
    const uint64_t *off = e->graph.offsets;
    for (;;) {
        if (s->next < s->blocks && !aborting) {
            if (*k > 0)
                return MKRT__SWEEP_WAITS;
            if (levels && s->next == 0) {
                /* The whole phase goes to a run, a round of its own once
                 * no batch runs (as a BFS level's, round.c); the rounds'
                 * cursor is used up, the workers claim from part_next
                 * (relaxed: published by the launch). */
                if (batch_running)
                    return MKRT__SWEEP_NONE;
                s->next = s->blocks;
                atomic_store_explicit(&t->part_next, 0, memory_order_relaxed);
                return MKRT__SWEEP_LEVELS;
            }
            uint64_t work = 0;
            while (s->next < s->blocks && *k < e->host.max_batch) {
                const uint32_t b = s->next, lo = s->first[b], hi = s->first[b + 1];
                const uint64_t w = off[hi] - off[lo] + (hi - lo);
                if (*k > 0 && work + w > cap)
                    break;
                work += w;
                mkrt__chunk_put(&items[(*k)++], &(mkrt__chunk){t->lane, b | s->op << OP_SHIFT, MKRT__CHUNK_SWEEP});
                s->next++;
            }
            return MKRT__SWEEP_ROUND;
        }
        if (batch_running)
            return MKRT__SWEEP_NONE; /* the phase's chunks may still run */
        if (aborting || !next_phase(t)) {
            sweep_end(t, aborting);
            return MKRT__SWEEP_NONE;
        }
        s->next = 0;
        phase_count(t);
    }
}

bool mkrt__sweep_part(mkrt__traversal *t, uint64_t *edges)
{
    struct mkrt__sweep *s = t->sweep;
    /* relaxed: the cursor only hands out disjoint blocks; the phase's
     * state (op, big) was published by the launch or the barrier. */
    const uint32_t claim = s->op == OP_RANK ? 1u : CLAIM_CC;
    const uint64_t b = atomic_fetch_add_explicit(&t->part_next, claim, memory_order_relaxed);
    if (b >= s->blocks)
        return false;
    const uint64_t z = b + claim < s->blocks ? b + claim : s->blocks;
    for (uint64_t k = b; k < z; k++)
        *edges += mkrt__sweep_apply(t, &(mkrt__chunk){t->lane, (uint32_t)k | s->op << OP_SHIFT, MKRT__CHUNK_SWEEP});
    return true;
}

bool mkrt__sweep_next(mkrt__traversal *t)
{
    if (!next_phase(t)) {
        sweep_end(t, false);
        return false;
    }
    phase_count(t);
    /* relaxed: the barrier's release opens the phase to the workers. */
    atomic_store_explicit(&t->part_next, 0, memory_order_relaxed);
    return true;
}

/* Hooks the components of u and v together (see the top). solo (a
 * constant where it is inlined; the engine's host.solo): one thread runs
 * the sweep's blocks, so the hook is a store, no compare-and-swap. */
static inline __attribute__((always_inline)) void link(_Atomic uint32_t *label, uint32_t u, uint32_t v, bool solo)
{
    uint32_t p1 = atomic_load_explicit(&label[u], memory_order_relaxed);
    uint32_t p2 = atomic_load_explicit(&label[v], memory_order_relaxed);
    while (p1 != p2) {
        const uint32_t high = p1 > p2 ? p1 : p2, low = p1 + p2 - high;
        uint32_t ph = atomic_load_explicit(&label[high], memory_order_relaxed);
        if (ph == low)
            return;
        if (ph == high && solo) {
            atomic_store_explicit(&label[high], low, memory_order_relaxed);
            return;
        }
        if (ph == high && atomic_compare_exchange_strong_explicit(&label[high], &ph, low, memory_order_relaxed,
                                                                  memory_order_relaxed))
            return;
        p1 = atomic_load_explicit(&label[atomic_load_explicit(&label[high], memory_order_relaxed)],
                                  memory_order_relaxed);
        p2 = atomic_load_explicit(&label[low], memory_order_relaxed);
    }
}

static inline __attribute__((always_inline)) uint64_t cc_block_as(struct mkrt__sweep *s, const mkrt_graph *g,
                                                                  uint32_t op, uint32_t lo, uint32_t hi, bool solo)
{
    _Atomic uint32_t *label = s->label;
    const uint64_t *off = g->offsets;
    const uint32_t *targets = g->targets;
    uint64_t examined = 0;
    if (op != OP_FINAL) {
        const uint32_t r = op - OP_LINK0, n = g->vertices; /* r: the edge of each row this round links */
        for (uint32_t v = lo; v < hi; v++) {
            /* The label a later vertex's link reads and swaps starts
             * loading now, for writing: a random line of the label array,
             * which outgrows the L2 cache; past the block's end too, as
             * this worker's next claim is mostly the next block. */
            if (v + LINK_AHEAD < n) {
                const uint64_t ahead = off[v + LINK_AHEAD] + r;
                if (ahead < off[v + LINK_AHEAD + 1])
                    __builtin_prefetch((const void *)&label[targets[ahead]], 1, 3);
            }
            const uint64_t i = off[v] + r;
            if (i < off[v + 1]) {
                link(label, v, targets[i], solo);
                examined++;
            }
        }
        return examined;
    }
    const uint32_t big = s->symmetric ? s->big : UINT32_MAX;
    for (uint32_t v = lo; v < hi; v++) {
        /* The compress: a vertex that is no root any more is never a
         * link's compare-and-swap target again (link swaps roots only), so
         * this block is the one writer of its label; a root keeps its
         * label (a link may be swapping it). */
        const uint32_t was = atomic_load_explicit(&label[v], memory_order_relaxed);
        uint32_t r = was;
        if (was != v) {
            r = root_of(label, was);
            if (r != was)
                atomic_store_explicit(&label[v], r, memory_order_relaxed);
        }
        /* The edges after the ones the LINK phases linked, one each. */
        const uint64_t a = off[v] + (OP_FINAL - OP_LINK0), b = off[v + 1];
        if (a >= b || r == big)
            continue;
        for (uint64_t i = a; i < b; i++)
            link(label, v, targets[i], solo);
        examined += b - a;
    }
    return examined;
}

static uint64_t cc_block(struct mkrt__sweep *s, const mkrt_graph *g, bool solo, uint32_t op, uint32_t lo, uint32_t hi)
{
    return solo ? cc_block_as(s, g, op, lo, hi, true) : cc_block_as(s, g, op, lo, hi, false);
}

/* ahead: a constant in each of rank_block's two calls, so that each
 * loop is compiled with or without its prefetch. */
static inline __attribute__((always_inline)) uint64_t rank_block_as(struct mkrt__sweep *s, const mkrt_graph *g,
                                                                   uint32_t b, uint32_t lo, uint32_t hi, bool ahead)
{
    const uint64_t *off = g->offsets;
    const uint32_t *targets = g->targets;
    _Atomic uint32_t *contrib = s->contrib;
    const double base = s->base, d = s->damping;
    const uint64_t end = off[hi], last = off[g->vertices];
    double change = 0;
    for (uint32_t v = lo; v < hi; v++) {
        const uint64_t a = off[v], z = off[v + 1];
        double sum = 0;
        for (uint64_t i = a; i < z; i++) {
            if (ahead && i + RANK_AHEAD < last) /* past the block: a worker's next claim is mostly the next block */
                __builtin_prefetch((const void *)&contrib[targets[i + RANK_AHEAD]], 0, 3);
            sum += float_of(atomic_load_explicit(&contrib[targets[i]], memory_order_relaxed));
        }
        const double now = base + d * sum, was = s->score[v];
        change += fabs(now - was);
        s->score[v] = now;
        atomic_store_explicit(&contrib[v], bits_of(z > a ? (float)(now / (double)(z - a)) : 0.0f),
                              memory_order_relaxed);
    }
    s->change[b] = change; /* read by the dispatcher after the batch completed */
    return end - off[lo];
}

static uint64_t rank_block(struct mkrt__sweep *s, const mkrt_graph *g, uint32_t b, uint32_t lo, uint32_t hi)
{
    return s->gather_ahead ? rank_block_as(s, g, b, lo, hi, true) : rank_block_as(s, g, b, lo, hi, false);
}

uint64_t mkrt__sweep_apply(mkrt__traversal *t, const mkrt__chunk *c)
{
    struct mkrt__sweep *s = t->sweep;
    const mkrt_graph *g = &t->engine->graph;
    const uint32_t b = c->v & ((1u << OP_SHIFT) - 1), op = c->v >> OP_SHIFT;
    const uint32_t lo = s->first[b], hi = s->first[b + 1];
    return op == OP_RANK ? rank_block(s, g, b, lo, hi) : cc_block(s, g, t->engine->host.solo, op, lo, hi);
}

void mkrt__sweep_read(const mkrt__traversal *t, uint32_t first, size_t count, uint64_t *labels, double *ranks,
                      uint32_t *iterations)
{
    const struct mkrt__sweep *s = t->sweep;
    if (labels != NULL)
        for (size_t i = 0; i < count; i++)
            labels[i] = root_of(s->label, first + (uint32_t)i);
    if (ranks != NULL)
        memcpy(ranks, s->score + first, count * sizeof *ranks);
    if (iterations != NULL)
        *iterations = s->last_iterations;
}

void mkrt__sweep_job(mkrt__traversal *t, mkrt__device_job *j)
{
    struct mkrt__sweep *s = t->sweep;
    const size_t n = s->vertices;
    if (t->kind == MKRT__LANE_CC) {
        j->kind = MKRT__JOB_CC;
        j->values = (void *)s->label;
        j->value_bytes = n * sizeof *s->label;
        return;
    }
    j->kind = MKRT__JOB_PR;
    j->values = s->score;
    j->value_bytes = n * sizeof *s->score;
    j->aux = (void *)s->contrib;
    j->aux_bytes = n * sizeof *s->contrib;
    j->damping = s->damping;
    j->tolerance = s->tolerance;
    j->max_iterations = s->max_iterations;
}

void mkrt__sweep_job_done(mkrt__traversal *t, uint32_t iterations)
{
    t->sweep->last_iterations = iterations;
}
