/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/analysis_demo.c - a dataflow analysis on mkrt.
 *
 * A synthetic program of B basic blocks (a random control-flow graph with
 * forward edges and a few back edges). Each block generates some facts
 * (bits of a 64-bit set). The analysis computes, for every block, the
 * facts that reach it: the least fixpoint of
 *     in[b] = gen[b] | OR over predecessors p of in[p]
 * N analysis threads (producers) each own a slice of the blocks and, round
 * after round, publish transfer functions as work items:
 *     GEN  (op 16)  cell[b] |= param           (the block's own facts)
 *     FLOW (op 17)  cell[succ] |= cell[pred]   (one CFG edge)
 * The runtime orders them by the handles they read and write, drops the
 * items repeated within a batch, and runs them layer by layer on the CPU
 * worker pool. Rounds continue until a whole round changes nothing; the
 * result is then checked against a sequential worklist solver.
 *
 *   analysis_demo [--producers N] [--blocks B] [--quick]
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mkrt/mkrt.h"

#define OP_GEN 16
#define OP_FLOW 17

typedef struct cfg_graph {
    uint32_t blocks, edges;
    uint32_t *from, *to;
    uint64_t *gen;
} cfg_graph;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static mkrt_status op_gen(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    ctx->cells[it->out] |= (uint64_t)1 << (it->param % 64);
    return MKRT_OK;
}

static mkrt_status op_flow(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    ctx->cells[it->out] |= ctx->cells[it->in];
    return MKRT_OK;
}

static void make_graph(cfg_graph *g, uint32_t blocks)
{
    unsigned seed = 2024;
    g->blocks = blocks;
    g->edges = 0;
    g->from = malloc(sizeof(uint32_t) * blocks * 3);
    g->to = malloc(sizeof(uint32_t) * blocks * 3);
    g->gen = calloc(blocks, sizeof(uint64_t));
    for (uint32_t b = 0; b < blocks; b++) {
        if (rand_r(&seed) % 4 == 0)
            g->gen[b] = (uint64_t)1 << (rand_r(&seed) % 64);
        uint32_t succs = 1 + (uint32_t)rand_r(&seed) % 2;
        for (uint32_t s = 0; s < succs && b + 1 < blocks; s++) {
            uint32_t t = b + 1 + (uint32_t)rand_r(&seed) % 8;
            g->from[g->edges] = b;
            g->to[g->edges++] = t < blocks ? t : blocks - 1;
        }
        if (b > 16 && rand_r(&seed) % 16 == 0) { /* a loop back edge */
            g->from[g->edges] = b;
            g->to[g->edges++] = b - 1 - (uint32_t)rand_r(&seed) % 16;
        }
    }
}

/* Sequential worklist solver: the reference answer. */
static void solve(const cfg_graph *g, uint64_t *in)
{
    for (uint32_t b = 0; b < g->blocks; b++)
        in[b] = g->gen[b];
    bool changed = true;
    while (changed) {
        changed = false;
        for (uint32_t e = 0; e < g->edges; e++) {
            uint64_t v = in[g->to[e]] | in[g->from[e]];
            if (v != in[g->to[e]]) {
                in[g->to[e]] = v;
                changed = true;
            }
        }
    }
}

typedef struct analyst {
    mkrt_runtime *rt;
    const cfg_graph *g;
    uint32_t id, count;
    uint64_t published;
} analyst;

/* One round: this analyst's gens and the edges leaving its blocks. */
static void *analyst_round(void *arg)
{
    analyst *a = arg;
    const cfg_graph *g = a->g;
    mkrt_producer *p = mkrt_producer_open(a->rt, NULL);
    mkrt_item buf[256];
    size_t n = 0;
    for (uint32_t e = 0; e < g->edges; e++) {
        uint32_t b = g->from[e];
        if (b % a->count != a->id)
            continue;
        if (g->gen[b])
            buf[n++] = (mkrt_item){OP_GEN, b, b, (uint32_t)__builtin_ctzll(g->gen[b])};
        buf[n++] = (mkrt_item){OP_FLOW, b, g->to[e], 0};
        if (n >= 254) {
            mkrt_publish(p, buf, n, 10000000000ull, NULL);
            a->published += n;
            n = 0;
        }
    }
    mkrt_publish(p, buf, n, 10000000000ull, NULL);
    a->published += n;
    mkrt_producer_close(p);
    return NULL;
}

int main(int argc, char **argv)
{
    uint32_t producers = 4, blocks = 20000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--producers") == 0 && i + 1 < argc)
            producers = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--blocks") == 0 && i + 1 < argc)
            blocks = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--quick") == 0)
            blocks = 4000;
        else {
            fprintf(stderr, "usage: %s [--producers N] [--blocks B] [--quick]\n", argv[0]);
            return 2;
        }
    }
    if (producers < 1 || producers > 64 || blocks < 32) {
        fprintf(stderr, "analysis_demo: producers must be 1..64 and blocks at least 32\n");
        return 2;
    }
    cfg_graph g;
    make_graph(&g, blocks);
    mkrt_config cfg = mkrt_config_default();
    cfg.cells = blocks;
    mkrt_runtime *rt;
    mkrt_error err;
    if (mkrt_create(&cfg, &rt, &err) != MKRT_OK) {
        fprintf(stderr, "analysis_demo: %s\n", err.message);
        return 1;
    }
    mkrt_op_desc gen = {.fn = op_gen, .name = "gen"}, flow = {.fn = op_flow, .name = "flow"};
    mkrt_op_register(rt, OP_GEN, &gen, NULL);
    mkrt_op_register(rt, OP_FLOW, &flow, NULL);
    printf("mkrt analysis demo: %u blocks, %u CFG edges, %u analysis threads, backend %s\n", g.blocks,
           g.edges, producers, mkrt_backend_describe(rt));

    const bool tty = isatty(STDOUT_FILENO); /* a live progress line on terminals */
    uint64_t t0 = now_ns(), published = 0, last_sum = 0;
    uint32_t rounds = 0, quiet = 0;
    analyst *as = calloc(producers, sizeof *as);
    pthread_t *th = calloc(producers, sizeof *th);
    while (quiet < 1 && rounds < 10000) {
        for (uint32_t i = 0; i < producers; i++) {
            as[i] = (analyst){rt, &g, i, producers, 0};
            pthread_create(&th[i], NULL, analyst_round, &as[i]);
        }
        for (uint32_t i = 0; i < producers; i++) {
            pthread_join(th[i], NULL);
            published += as[i].published;
        }
        mkrt_drain(rt, 60000000000ull);
        rounds++;
        uint64_t sum = 0;
        for (uint32_t b = 0; b < g.blocks; b++) {
            uint64_t v;
            mkrt_cell_read(rt, b, &v);
            sum += (uint64_t)__builtin_popcountll(v);
        }
        quiet = sum == last_sum ? quiet + 1 : 0;
        last_sum = sum;
        mkrt_stats s;
        mkrt_stats_read(rt, &s);
        if (tty || rounds % 20 == 0 || quiet) {
            printf("%s  round %4u: %10llu items, %8llu batches, %6llu facts known%s", tty ? "\r" : "",
                   rounds, (unsigned long long)s.published, (unsigned long long)s.batches,
                   (unsigned long long)sum, tty ? "" : "\n");
            fflush(stdout);
        }
    }
    double secs = (double)(now_ns() - t0) / 1e9;
    if (tty)
        printf("\n");

    uint64_t *want = malloc(sizeof(uint64_t) * g.blocks);
    solve(&g, want);
    uint32_t wrong = 0;
    for (uint32_t b = 0; b < g.blocks; b++) {
        uint64_t v;
        mkrt_cell_read(rt, b, &v);
        wrong += v != want[b];
    }
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    printf("\n  %-28s %14s\n", "what", "value");
    printf("  %-28s %14llu\n", "items published", (unsigned long long)s.published);
    printf("  %-28s %14llu\n", "items executed", (unsigned long long)s.executed);
    printf("  %-28s %14llu\n", "items pruned (duplicates)", (unsigned long long)s.pruned);
    printf("  %-28s %14llu\n", "items failed", (unsigned long long)s.failed);
    printf("  %-28s %14llu\n", "batches", (unsigned long long)s.batches);
    printf("  %-28s %14llu\n", "layers (barrier groups)", (unsigned long long)s.layers);
    char hm[48];
    snprintf(hm, sizeof hm, "%llu / %llu", (unsigned long long)s.plan_cache_hits,
             (unsigned long long)s.plan_cache_misses);
    printf("  %-28s %14s\n", "plan cache hits / misses", hm);
    printf("  %-28s %14u\n", "analysis rounds", rounds);
    printf("  %-28s %11.2f M/s\n", "throughput (published)", (double)s.published / secs / 1e6);
    printf("  %-28s %11.1f us\n", "latency p50", (double)s.latency_p50_ns / 1e3);
    printf("  %-28s %11.1f us\n", "latency p99", (double)s.latency_p99_ns / 1e3);
    printf("  %-28s %11.1f us\n", "latency p99.9", (double)s.latency_p999_ns / 1e3);
    printf("  %-28s %14s\n", "matches sequential solver", wrong == 0 ? "yes" : "NO");
    /* The analysts' own count of what they published, against the runtime's. */
    bool ok = wrong == 0 && published == s.published &&
              s.published == s.executed + s.pruned + s.failed && s.failed == 0;
    mkrt_destroy(rt, 10000000000ull, NULL);
    free(want);
    free(as);
    free(th);
    free(g.from);
    free(g.to);
    free(g.gen);
    return ok ? 0 : 1;
}
