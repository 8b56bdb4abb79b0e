/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/analysis_demo.c - a worklist dataflow analysis on mkrt.
 *
 * Reaching definitions over a synthetic program of B basic blocks
 * (functions of 128 blocks, each a random control-flow graph of forward
 * edges and some loop back edges) and F facts (definitions; four per
 * variable, so a definition kills the other three). Each block's facts
 * are a bitset of F bits (1024 by default: 16 words) in the program's own
 * memory. The analysis computes for every block the facts that reach its
 * end:
 *     out[s] = gen[s] | OR over predecessors p of (out[p] & ~kill[s])
 *
 * On mkrt the blocks are cut into regions of K consecutive blocks (64
 * by default, half a function), and an item is a region's sweep: the
 * sequential solver's loop on the region's blocks (merging their gen
 * sets first, the first time), a block that grew pushing its facts into
 * its successors, until nothing in the region changes. A successor in
 * another region is not written but dirtied (it pulls from its
 * predecessors there when its own region sweeps), and the sweep emits
 * one sweep item of each such region (mkrt_op_emit): they run in the
 * next batch, where dedupe leaves one per region however many sweeps
 * queued it, and sweeps of different regions run in parallel. Work is
 * made where a fact changed, nowhere else, and an item carries a
 * region's worth of it (an item per edge spent more in the runtime than
 * in the transfer: bench/results/analysis.md). Analysis threads seed the
 * analysis: each scans an overlapping part of the program and publishes
 * one seed item per region that defines something, which queues the
 * region's first sweep, so regions are found twice and dedupe drops the
 * copies that meet in a batch. The seeds cost next to nothing, so the
 * sweeps run in batches of their own, after the seeds: a batch holding
 * producers' items keeps a CPU for each producer (SHED, with the
 * default workers), and the seed batch, when it swept, ran most of the
 * analysis on one thread (bench/results/analysis.md, issue 33).
 * mkrt_quiesce() waits for the fixpoint; every
 * item also adds what its region gained to the region's cell (its fact
 * count), read back in one call (mkrt_cells_read). The result is checked
 * against the sequential worklist solver, which also gives the times.
 *
 *   analysis_demo [--blocks B] [--facts F] [--producers N] [--workers W] [--region K] [--quick]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mkrt/mkrt.h"

#define OP_FLOW 16 /* (FLOW, R + r, R + r, SEED): queue region r's first sweep; (FLOW, r, r, SWEEP): sweep it */
#define SEED UINT32_MAX
#define SWEEP 1u
#define REGION_DEFAULT 64u /* blocks per region (half a function) */
#define FACTS_MAX 65536u
#define FN_BLOCKS 128u /* blocks per function */
#define MAX_SUCC 3
#define BLOCKS_MAX (1u << 22)
#define WORDS_MAX ((size_t)1 << 25) /* blocks x words per bitset array (256 MiB) */

/* The program: a CFG in compressed rows (the successors of b are
 * succ[first[b] .. first[b+1]-1]), and three bitsets of `words` words per
 * block. A block has at most MAX_SUCC successors. For mkrt, the blocks
 * are cut into regions of `region` consecutive blocks, region r holding
 * blocks r x region and on; `regions` (R) of them. Handle r is region
 * r's (its sweeps and its cell, the fact count), handle R + r its seeds'. */
typedef struct program {
    uint32_t blocks, facts, words, edges, region, regions;
    uint32_t *first, *succ;
    uint32_t *pfirst, *pred; /* the predecessors of b: pred[pfirst[b] .. pfirst[b+1]-1] */
    uint32_t *defs;  /* definitions (facts generated) per block */
    atomic_bool *dirty; /* dirty[b]: a predecessor of b in another region grew (mkrt) */
    bool *grown;        /* grown[b]: b grew and has not pushed since (mkrt; its region's) */
    bool *seeded;       /* seeded[r]: a seed queued region r's sweep (mkrt; r's seeds' own) */
    bool *merged;       /* merged[r]: region r's gen sets are merged (mkrt; r's sweeps' own) */
    _Atomic uint64_t transfers, gens; /* edge transfers and gen sets the sweeps merged (mkrt) */
    uint64_t *gen, *kill, *out;
} program;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t *bits(const program *g, uint64_t *set, uint32_t b)
{
    return set + (size_t)b * g->words;
}

/* Bits set in x (portable: no -mpopcnt needed to make it fast). */
static uint32_t popcount(uint64_t x)
{
    x -= (x >> 1) & 0x5555555555555555u;
    x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fu;
    return (uint32_t)((x * 0x0101010101010101u) >> 56);
}

/* to |= from & ~kill: how many facts to gained. */
static uint32_t merge(uint64_t *to, const uint64_t *from, const uint64_t *kill, uint32_t words)
{
    uint32_t gained = 0;
    for (uint32_t w = 0; w < words; w++) {
        uint64_t add = from[w] & ~kill[w] & ~to[w];
        if (add != 0) {
            to[w] |= add;
            gained += popcount(add);
        }
    }
    return gained;
}

/* The transfer along p -> s, and the block's own facts. */
static uint32_t flow(const program *g, uint32_t p, uint32_t s)
{
    return merge(bits(g, g->out, s), bits(g, g->out, p), bits(g, g->kill, s), g->words);
}

static uint32_t add_gen(const program *g, uint32_t b)
{
    return merge(bits(g, g->out, b), bits(g, g->gen, b), bits(g, g->kill, b), g->words);
}

/* ---- the ops: what runs on mkrt ---- */

/* to |= from & ~kill, into a block of the running item's region (only
 * its items write it) from one that another region's item may be writing
 * meanwhile (the sweeps of a batch run at once): the words are read and
 * written atomically. Relaxed: what makes a fact written late reach the
 * reader is dirty[] (release/acquire) and the batch boundary. Returns the
 * facts to gained. */
static uint32_t merge_into(uint64_t *to, const uint64_t *from, const uint64_t *kill, uint32_t words)
{
    _Atomic uint64_t *t = (_Atomic uint64_t *)to;
    const _Atomic uint64_t *f = (const _Atomic uint64_t *)from;
    uint32_t gained = 0;
    for (uint32_t w = 0; w < words; w++) {
        uint64_t old = atomic_load_explicit(&t[w], memory_order_relaxed),
                 add = atomic_load_explicit(&f[w], memory_order_relaxed) & ~kill[w] & ~old;
        if (add != 0) {
            atomic_store_explicit(&t[w], old | add, memory_order_relaxed);
            gained += popcount(add);
        }
    }
    return gained;
}

/* (FLOW, R + r, R + r, SEED), published by the analysts: queues region
 * r's first sweep (mkrt_op_emit), once per region (seeded[]: a later
 * copy, of another batch, does nothing). Its own handle, R + r, keeps a
 * seed out of the way of r's sweeps (no second layer where a batch has
 * both). (FLOW, r, r, SWEEP), emitted: region r's sweep. The first one
 * merges the region's gen sets (merged[]). A sweep is the sequential
 * solver on the region, in block order, again while a block behind the
 * sweep grew: a block that grew (grown[]) pushes its facts into its
 * successors in the region, and dirties those in other regions (a
 * release: the sweep that takes the flag with its acquire reads the
 * facts written before it) and emits a sweep of their regions, once per
 * region per sweep; dedupe drops the copies other sweeps queued for the
 * same batch. A dirtied block pulls from its predecessors in other
 * regions. So a region's sweeps are the only writers of its blocks'
 * bitsets, grown[], merged[] and cell r (its fact count), and the
 * runtime runs them one at a time: items of one handle are ordered in a
 * batch, and batches run one after another. */
static mkrt_status op_flow(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    program *g = ctx->user;
    uint32_t r = it->param == SEED ? it->out - g->regions : it->out;
    uint32_t lo = r * g->region, hi = lo + g->region < g->blocks ? lo + g->region : g->blocks;
    uint64_t gained = 0, transfers = 0;
    if (it->param == SEED) {
        if (g->seeded[r]) /* a copy that dedupe did not meet (another batch's) */
            return MKRT_OK;
        g->seeded[r] = true;
        mkrt_item sweep = {OP_FLOW, r, r, SWEEP};
        return mkrt_op_emit(ctx, &sweep, 1);
    }
    if (!g->merged[r]) { /* the region's first sweep: its blocks' own facts */
        g->merged[r] = true;
        atomic_fetch_add_explicit(&g->gens, hi - lo, memory_order_relaxed); /* relaxed: as transfers */
        for (uint32_t b = lo; b < hi; b++) {
            uint32_t n = merge_into(bits(g, g->out, b), bits(g, g->gen, b), bits(g, g->kill, b), g->words);
            gained += n;
            g->grown[b] |= n != 0;
        }
    }
    /* The other regions' sweeps it queues: a block's successors are in its
     * function, whose blocks are in at most FN_BLOCKS regions. */
    mkrt_item next[FN_BLOCKS];
    uint32_t nnext = 0;
    for (bool again = true; again;) {
        again = false;
        for (uint32_t b = lo; b < hi; b++) {
            uint64_t *out_b = bits(g, g->out, b);
            if (atomic_load_explicit(&g->dirty[b], memory_order_relaxed) &&
                atomic_exchange_explicit(&g->dirty[b], false, memory_order_acquire)) /* pairs: below */
                for (uint32_t e = g->pfirst[b]; e < g->pfirst[b + 1]; e++) {
                    uint32_t p = g->pred[e];
                    if (p >= lo && p < hi)
                        continue; /* this region's: pushed */
                    transfers++;
                    uint32_t n = merge_into(out_b, bits(g, g->out, p), bits(g, g->kill, b), g->words);
                    gained += n;
                    g->grown[b] |= n != 0;
                }
            if (!g->grown[b])
                continue;
            g->grown[b] = false;
            for (uint32_t e = g->first[b]; e < g->first[b + 1]; e++) {
                uint32_t t = g->succ[e];
                if (t >= lo && t < hi) {
                    transfers++;
                    uint32_t n = merge_into(bits(g, g->out, t), out_b, bits(g, g->kill, t), g->words);
                    gained += n;
                    if (n != 0) {
                        g->grown[t] = true;
                        again |= t <= b;
                    }
                    continue;
                }
                /* release: pairs with the acquire exchange above, in t's region's sweep */
                atomic_store_explicit(&g->dirty[t], true, memory_order_release);
                uint32_t tr = t / g->region, k = 0;
                while (k < nnext && next[k].out != tr)
                    k++;
                if (k == nnext) /* not queued by this sweep yet */
                    next[nnext++] = (mkrt_item){OP_FLOW, tr, tr, SWEEP};
            }
        }
    }
    mkrt_status st = nnext > 0 ? mkrt_op_emit(ctx, next, nnext) : MKRT_OK;
    if (gained != 0) {
        mkrt_op_changed(ctx);
        ctx->cells[r] += gained;
    }
    /* relaxed: read after mkrt_quiesce(), which orders every op before it */
    atomic_fetch_add_explicit(&g->transfers, transfers, memory_order_relaxed);
    return st;
}

/* ---- the program and the sequential solver ---- */

static bool make_program(program *g, uint32_t blocks, uint32_t facts)
{
    unsigned seed = 2024;
    *g = (program){.blocks = blocks, .facts = facts, .words = (facts + 63) / 64};
    size_t cells = (size_t)blocks * g->words;
    g->first = calloc((size_t)blocks + 1, sizeof *g->first);
    g->succ = malloc(sizeof *g->succ * blocks * MAX_SUCC);
    g->pfirst = calloc((size_t)blocks + 1, sizeof *g->pfirst);
    g->pred = malloc(sizeof *g->pred * blocks * MAX_SUCC);
    g->dirty = calloc(blocks, sizeof *g->dirty);
    g->seeded = calloc(blocks, sizeof *g->seeded);
    g->merged = calloc(blocks, sizeof *g->merged);
    g->grown = calloc(blocks, sizeof *g->grown);
    g->defs = calloc(blocks, sizeof *g->defs);
    g->gen = calloc(cells, sizeof(uint64_t));
    g->kill = calloc(cells, sizeof(uint64_t));
    g->out = calloc(cells, sizeof(uint64_t));
    if (!g->first || !g->succ || !g->pfirst || !g->pred || !g->dirty || !g->seeded || !g->merged || !g->grown || !g->defs || !g->gen || !g->kill || !g->out)
        return false;
    for (uint32_t b = 0; b < blocks; b++) { /* 1-2 forward edges, a back edge now and then */
        uint32_t fn = b - b % FN_BLOCKS, end = fn + FN_BLOCKS < blocks ? fn + FN_BLOCKS : blocks;
        uint32_t t1 = b + 1 + (uint32_t)rand_r(&seed) % 8, t2 = b + 1 + (uint32_t)rand_r(&seed) % 8;
        bool two = rand_r(&seed) % 2, back = b - fn > 16 && rand_r(&seed) % 16 == 0;
        g->first[b] = g->edges;
        if (b + 1 < end)
            g->succ[g->edges++] = t1 < end ? t1 : end - 1;
        if (two && t2 < end && t2 != g->succ[g->edges - 1])
            g->succ[g->edges++] = t2;
        if (back)
            g->succ[g->edges++] = b - 1 - (uint32_t)rand_r(&seed) % 16;
    }
    g->first[blocks] = g->edges;
    for (uint32_t e = 0; e < g->edges; e++) /* the predecessor rows, by counting */
        g->pfirst[g->succ[e] + 1]++;
    for (uint32_t b = 0; b < blocks; b++)
        g->pfirst[b + 1] += g->pfirst[b];
    for (uint32_t b = 0, *at = g->defs; b < blocks; b++) /* defs is still all zero: a cursor per block */
        for (uint32_t e = g->first[b]; e < g->first[b + 1]; e++)
            g->pred[g->pfirst[g->succ[e]] + at[g->succ[e]]++] = b;
    memset(g->defs, 0, sizeof *g->defs * blocks);
    /* Each function has its own `facts` definitions: fact f defines
     * variable f / 4 at a random block of the function, and kills the
     * variable's other definitions there. */
    for (uint32_t fn = 0; fn < blocks; fn += FN_BLOCKS) {
        uint32_t len = blocks - fn < FN_BLOCKS ? blocks - fn : FN_BLOCKS;
        for (uint32_t f = 0; f < facts; f++) {
            uint32_t site = fn + (uint32_t)rand_r(&seed) % len;
            bits(g, g->gen, site)[f / 64] |= (uint64_t)1 << (f % 64);
            g->defs[site]++;
            for (uint32_t o = f - f % 4; o < f - f % 4 + 4 && o < facts; o++)
                if (o != f)
                    bits(g, g->kill, site)[o / 64] |= (uint64_t)1 << (o % 64);
        }
    }
    for (size_t i = 0; i < cells; i++)
        g->kill[i] &= ~g->gen[i];
    return true;
}

static void free_program(program *g)
{
    free(g->first);
    free(g->succ);
    free(g->pfirst);
    free(g->pred);
    free(g->dirty);
    free(g->seeded);
    free(g->merged);
    free(g->grown);
    free(g->defs);
    free(g->gen);
    free(g->kill);
    free(g->out);
}

/* The sequential worklist solver: the reference answer, its time, and its
 * edge visits. The worklist is a dirty flag per block, taken in block
 * order (reverse postorder but for the loops' back edges) and swept again
 * while a back edge dirtied a block behind the sweep. */
static uint64_t solve_sequential(const program *g)
{
    bool *dirty = calloc(g->blocks, sizeof *dirty), again = true;
    uint64_t visits = 0;
    if (dirty == NULL) {
        fprintf(stderr, "analysis: out of memory\n");
        exit(1);
    }
    memset(g->out, 0, sizeof(uint64_t) * g->blocks * g->words);
    for (uint32_t b = 0; b < g->blocks; b++)
        dirty[b] = add_gen(g, b) != 0;
    while (again) {
        again = false;
        for (uint32_t p = 0; p < g->blocks; p++) {
            if (!dirty[p])
                continue;
            dirty[p] = false;
            for (uint32_t e = g->first[p]; e < g->first[p + 1]; e++) {
                uint32_t s = g->succ[e];
                visits++;
                if (flow(g, p, s) && !dirty[s]) {
                    dirty[s] = true;
                    again |= s <= p;
                }
            }
        }
    }
    free(dirty);
    return visits;
}

/* ---- the analysis threads ---- */

typedef struct analyst {
    mkrt_runtime *rt;
    const program *g;
    uint32_t id, count;
    uint64_t published;
    mkrt_item *seeds; /* room for 2 x part seeds (solve_mkrt's) */
    pthread_barrier_t *start; /* the analysts publish together */
} analyst;

/* Scans two threads' worth of regions, its own part and the next
 * thread's side by side (so the next thread finds the same regions in
 * the same order), with a seed for each region with a block that defines
 * facts; then, with the other analysts, publishes them. With the default
 * workers a batch with a producer's items gets a CPU less for it (SHED,
 * until the producer is closed and its items done): seeds published
 * together are drained together, and the sweeps they queue in the
 * batches after them, without producers' items. */
static void *analyst_run(void *arg)
{
    analyst *a = arg;
    const program *g = a->g;
    uint32_t part = (g->regions + a->count - 1) / a->count;
    size_t n = 0;
    for (uint32_t k = 0; k < 2 * part; k++) {
        uint64_t at = (uint64_t)(a->id + k % 2) * part + k / 2; /* mine, the next one's, mine, ... */
        uint32_t r = (uint32_t)(at % g->regions), defs = 0;
        for (uint32_t b = r * g->region; b < (r + 1) * g->region && b < g->blocks; b++)
            defs += g->defs[b];
        if (defs > 0)
            a->seeds[n++] = (mkrt_item){OP_FLOW, g->regions + r, g->regions + r, SEED};
    }
    pthread_barrier_wait(a->start);
    mkrt_producer *p = mkrt_producer_open(a->rt, NULL);
    for (size_t at = 0, len; at < n && p != NULL; at += len) {
        len = n - at < 4096 ? n - at : 4096; /* within a ring's 16384 slots */
        if (mkrt_publish(p, a->seeds + at, len, MKRT_TIMEOUT_INFINITE, NULL) == MKRT_OK)
            a->published += len;
    }
    mkrt_producer_close(p);
    return NULL;
}

/* The runtime: one handle (cell) per block, the region graph registered
 * as its graph, the FLOW op over g. */
static mkrt_runtime *analysis_runtime(program *g, uint32_t workers, uint32_t region, mkrt_error *err)
{
    g->region = region;
    g->regions = (g->blocks + region - 1) / region;
    mkrt_config cfg = mkrt_config_default();
    cfg.workers = workers; /* 0: the runtime's choice */
    cfg.cells = 2 * g->regions; /* a cell per region (its fact count), and a handle per region's seed */
    mkrt_runtime *rt;
    if (mkrt_create(&cfg, &rt, err) != MKRT_OK)
        return NULL;
    /* A union: idempotent (dedupe drops the analysts' copies and the
     * sweeps of a region queued twice for one batch). */
    mkrt_op_desc fl = {.fn = op_flow, .user = g, .name = "flow", .idempotent = true};
    if (mkrt_op_register(rt, OP_FLOW, &fl, err) != MKRT_OK) {
        mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
        return NULL;
    }
    return rt;
}

/* Before an analysis on mkrt: no facts, nothing dirty or seeded, the
 * counts 0 (before the producers start: their items order it before
 * the ops). */
static void reset_mkrt(mkrt_runtime *rt, program *g)
{
    memset(g->out, 0, sizeof(uint64_t) * g->blocks * g->words);
    for (uint32_t b = 0; b < g->blocks; b++) {
        atomic_store_explicit(&g->dirty[b], false, memory_order_relaxed);
        g->grown[b] = false;
    }
    for (uint32_t r = 0; r < g->regions; r++) {
        g->seeded[r] = false;
        g->merged[r] = false;
        mkrt_cell_write(rt, r, 0);
    }
    atomic_store_explicit(&g->transfers, 0, memory_order_relaxed);
    atomic_store_explicit(&g->gens, 0, memory_order_relaxed);
}

/* One analysis on mkrt: analysts seed it, quiescence ends it. */
static double solve_mkrt(mkrt_runtime *rt, program *g, uint32_t producers, uint64_t *published)
{
    reset_mkrt(rt, g);
    analyst as[64];
    pthread_t th[64];
    pthread_barrier_t start;
    uint32_t part = (g->regions + producers - 1) / producers;
    mkrt_item *seeds = malloc(sizeof *seeds * 2 * part * producers);
    if (seeds == NULL) {
        fprintf(stderr, "analysis: out of memory for %u analysts' seeds\n", producers);
        exit(1);
    }
    pthread_barrier_init(&start, NULL, producers);
    uint64_t t0 = now_ns();
    for (uint32_t i = 0; i < producers; i++) {
        as[i] = (analyst){rt, g, i, producers, 0, seeds + (size_t)2 * part * i, &start};
        pthread_create(&th[i], NULL, analyst_run, &as[i]);
    }
    for (uint32_t i = 0; i < producers; i++) {
        pthread_join(th[i], NULL);
        *published += as[i].published;
    }
    pthread_barrier_destroy(&start);
    mkrt_quiesce(rt, MKRT_TIMEOUT_INFINITE);
    double s = (double)(now_ns() - t0) / 1e9;
    free(seeds);
    return s;
}

#ifndef ANALYSIS_NO_MAIN /* bench/analysis_bench.c brings its own */
static int usage(const char *argv0, const char *why)
{
    if (why != NULL)
        fprintf(stderr, "analysis_demo: %s\n", why);
    fprintf(stderr,
            "usage: %s [--blocks B] [--facts F] [--producers N] [--workers W] [--region K] [--quick]\n"
            "  --blocks B     basic blocks, 1..%u (default 60000; --quick: 4000)\n"
            "  --facts F      facts (definitions) per bitset, 1..%u (default 1024)\n"
            "  --producers N  analysis threads, 1..64 (default 4)\n"
            "  --workers W    mkrt's CPU workers, 0..64 (default 0: the runtime's choice)\n"
            "  --region K     blocks per region (one sweep item), 1..%u (default %u)\n",
            argv0, BLOCKS_MAX, FACTS_MAX, FN_BLOCKS, REGION_DEFAULT);
    return 2;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long blocks = 60000, facts = 1024, producers = 4, workers = 0, region = REGION_DEFAULT;
    for (int i = 1; i < argc; i++) {
        long *v = strcmp(argv[i], "--blocks") == 0      ? &blocks
                  : strcmp(argv[i], "--facts") == 0     ? &facts
                  : strcmp(argv[i], "--producers") == 0 ? &producers
                  : strcmp(argv[i], "--workers") == 0   ? &workers
                  : strcmp(argv[i], "--region") == 0    ? &region
                                                        : NULL;
        char *end = NULL;
        if (strcmp(argv[i], "--quick") == 0) {
            blocks = 4000;
            continue;
        }
        if (v == NULL)
            return usage(argv[0], NULL);
        if (i + 1 == argc)
            return usage(argv[0], "an option is missing its value");
        *v = strtol(argv[++i], &end, 10);
        if (end == argv[i] || *end != '\0')
            return usage(argv[0], "a number was expected");
    }
    if (blocks < 1 || blocks > BLOCKS_MAX || facts < 1 || facts > FACTS_MAX || producers < 1 ||
        producers > 64 || workers < 0 || workers > 64 || region < 1 || region > FN_BLOCKS)
        return usage(argv[0], "a value is out of range");
    if ((size_t)blocks * (size_t)((facts + 63) / 64) > WORDS_MAX)
        return usage(argv[0], "blocks x facts is too large (at most 2^31 bits per bitset array)");

    program g;
    if (!make_program(&g, (uint32_t)blocks, (uint32_t)facts)) {
        fprintf(stderr, "analysis_demo: out of memory for %ld blocks of %ld facts\n", blocks, facts);
        return 1;
    }
    mkrt_error err;
    mkrt_runtime *rt = analysis_runtime(&g, (uint32_t)workers, (uint32_t)region, &err);
    if (rt == NULL) {
        fprintf(stderr, "analysis_demo: %s\n", err.message);
        return 1;
    }
    printf("mkrt analysis demo: reaching definitions, %u blocks, %u CFG edges, %u facts per block, "
           "%ld analysis threads, regions of %u blocks, backend %s\n",
           g.blocks, g.edges, g.facts, producers, g.region, mkrt_backend_describe(rt));

    /* Each side three times, the median time reported. */
    enum { RUNS = 3 };
    double seq_s[RUNS], mkrt_s[RUNS];
    uint64_t visits = 0, published = 0;
    uint64_t *want = malloc(sizeof(uint64_t) * g.blocks * g.words);
    uint64_t *counts = malloc(sizeof(uint64_t) * g.blocks);
    if (want == NULL || counts == NULL) {
        fprintf(stderr, "analysis_demo: out of memory\n");
        return 1;
    }
    for (int r = 0; r < RUNS; r++) {
        uint64_t t0 = now_ns();
        visits = solve_sequential(&g);
        seq_s[r] = (double)(now_ns() - t0) / 1e9;
    }
    memcpy(want, g.out, sizeof(uint64_t) * g.blocks * g.words);
    mkrt_stats s0;
    for (int r = 0; r < RUNS; r++) {
        mkrt_stats_read(rt, &s0); /* the last run's counters are the table's */
        published = 0;
        mkrt_s[r] = solve_mkrt(rt, &g, (uint32_t)producers, &published);
        printf("  run %d: sequential %.4f s, mkrt %.4f s\n", r + 1, seq_s[r], mkrt_s[r]);
    }

    /* The result: the fact counts read back in bulk, and the bitsets. */
    uint32_t wrong = 0;
    mkrt_cells_read(rt, 0, g.regions, counts);
    for (uint32_t r = 0; r < g.regions; r++) {
        uint64_t n = 0;
        for (uint32_t b = r * g.region; b < (r + 1) * g.region && b < g.blocks; b++) {
            uint64_t *w = want + (size_t)b * g.words;
            for (uint32_t k = 0; k < g.words; k++)
                n += popcount(w[k]);
            wrong += memcmp(w, bits(&g, g.out, b), sizeof(uint64_t) * g.words) != 0;
        }
        wrong += n != counts[r];
    }
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
#define D(f) (unsigned long long)(s.f - s0.f)
    qsort(seq_s, RUNS, sizeof(double), cmp_double);
    qsort(mkrt_s, RUNS, sizeof(double), cmp_double);
    double seq = seq_s[RUNS / 2], mk = mkrt_s[RUNS / 2];
    printf("\n  times: median of %d runs; counts: the last mkrt run\n", RUNS);
    printf("  %-28s %14s\n", "what", "value");
    printf("  %-28s %14.4f\n", "sequential solver (s)", seq);
    printf("  %-28s %14.4f\n", "mkrt (s)", mk);
    printf("  %-28s %13.2fx\n", "speedup", seq / mk);
    /* Work: bitset merges, the blocks' gen sets (each once, on both
     * sides) and the edge transfers. */
    uint64_t transfers = atomic_load_explicit(&g.transfers, memory_order_relaxed),
             gens = atomic_load_explicit(&g.gens, memory_order_relaxed);
    printf("  %-28s %14.2f\n", "work vs sequential", (double)(gens + transfers) / (double)(g.blocks + visits));
    printf("  %-28s %14.2f\n", "edge transfers vs sequential", (double)transfers / (double)(visits ? visits : 1));
    printf("  %-28s %14llu\n", "edge visits (sequential)", (unsigned long long)visits);
    printf("  %-28s %14llu\n", "edge transfers (mkrt)", (unsigned long long)transfers);
    printf("  %-28s %14llu\n", "items published", D(published));
    printf("  %-28s %14llu\n", "items emitted (sweeps)", D(emitted));
    printf("  %-28s %14llu\n", "items executed", D(executed));
    printf("  %-28s %14llu\n", "items pruned (duplicates)", D(pruned));
    printf("  %-28s %14llu\n", "items failed", D(failed));
    printf("  %-28s %14llu\n", "items that grew a block", D(changed));
    printf("  %-28s %14llu\n", "batches", D(batches));
    printf("  %-28s %14llu\n", "layers (barrier groups)", D(layers));
    char hm[48];
    snprintf(hm, sizeof hm, "%llu / %llu", D(plan_cache_hits), D(plan_cache_misses));
    printf("  %-28s %14s\n", "plan cache hits / misses", hm);
    printf("  %-28s %11.2f M/s\n", "throughput (executed)", (double)(s.executed - s0.executed) / mk / 1e6);
    printf("  %-28s %11.1f us\n", "latency p50 (all runs)", (double)s.latency_p50_ns / 1e3);
    printf("  %-28s %11.1f us\n", "latency p99 (all runs)", (double)s.latency_p99_ns / 1e3);
    printf("  %-28s %14s\n", "matches sequential solver", wrong == 0 ? "yes" : "NO");
    /* The analysts' own count of what they published, against the runtime's. */
    bool ok = wrong == 0 && published == s.published - s0.published && s.failed == 0 &&
              s.published + s.emitted == s.executed + s.pruned + s.failed;
    mkrt_destroy(rt, 10000000000ull, NULL);
    free(want);
    free(counts);
    free_program(&g);
    return ok ? 0 : 1;
}
#endif /* ANALYSIS_NO_MAIN */
