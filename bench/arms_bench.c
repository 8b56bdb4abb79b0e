/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/arms_bench.c - the A/B of ARMS, skipping redundant arms (issue
 * 23, plan/decide.h): P producers publish N items each, MIN (or OR)
 * items over H (in, out) pairs, item i on pair i % H with a param drawn
 * per item. --mode overlap: every producer on the same pairs (arms repeat
 * each other: about half the repeats are covered and ARMS skips them);
 * --mode disjoint: each producer on pairs of its own (nothing to skip:
 * what the detector costs). Run with MKRT_PLAN_OFF=arms for ARMS off.
 * Reported: wall time from the first publish to the drain, Mitems/s, the
 * items ARMS skipped and pruned; every out cell is checked.
 *
 *   arms_bench [--sim] [--mode overlap|disjoint] [--op min|or] [--producers P]
 *              [--items N] [--pairs H] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "base/thread.h"
#include "mkrt/mkrt.h"

#define SEC 60000000000ull
#define MAXP 8

typedef struct prod {
    mkrt_runtime *rt;
    uint32_t id, items, pairs, base, op;
    uint64_t *want; /* per pair: this producer's effect on its out */
    int failed;
} prod;

static uint32_t mix(uint32_t a, uint32_t b)
{
    uint64_t h = ((uint64_t)a << 32 | b) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 40);
}

static int run_producer(void *arg)
{
    prod *w = arg;
    mkrt_producer *p = mkrt_producer_open(w->rt, NULL);
    if (p == NULL) {
        w->failed = 1;
        return 0;
    }
    mkrt_item chunk[256];
    for (uint32_t i = 0; i < w->items;) {
        uint32_t k = w->items - i < 256 ? w->items - i : 256;
        for (uint32_t j = 0; j < k; j++) {
            uint32_t pair = (i + j) % w->pairs, r = mix(w->id, i + j);
            uint32_t param = w->op == MKRT_OP_MIN ? 1 + r % 1000 : 0xFFu >> (r % 8);
            chunk[j] = (mkrt_item){w->op, w->base + pair, w->base + w->pairs + pair, param};
            uint64_t *v = &w->want[pair];
            *v = w->op == MKRT_OP_MIN ? (param < *v ? param : *v) : (*v | param);
        }
        if (mkrt_publish(p, chunk, k, SEC, NULL) != MKRT_OK)
            w->failed = 1;
        i += k;
    }
    mkrt_producer_close(p);
    return 0;
}

int main(int argc, char **argv)
{
    uint32_t np = 2, items = 1u << 20, pairs = 4096;
    bool sim = false, overlap = true, is_min = true;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sim") == 0)
            sim = true;
        else if (i + 1 < argc && strcmp(argv[i], "--mode") == 0)
            overlap = strcmp(argv[++i], "disjoint") != 0;
        else if (i + 1 < argc && strcmp(argv[i], "--op") == 0)
            is_min = strcmp(argv[++i], "or") != 0;
        else if (i + 1 < argc && strcmp(argv[i], "--producers") == 0)
            np = (uint32_t)atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--items") == 0)
            items = (uint32_t)atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--pairs") == 0)
            pairs = (uint32_t)atoi(argv[++i]);
        else {
            fprintf(stderr,
                    "usage: %s [--sim] [--mode overlap|disjoint] [--op min|or] [--producers P] [--items N] "
                    "[--pairs H]\n",
                    argv[0]);
            return 2;
        }
    }
    if (np < 1 || np > MAXP || items < 1 || pairs < 1 || pairs > 65536) {
        fprintf(stderr, "arms_bench: producers 1..%d, items at least 1, pairs 1..65536. Fix: change them.\n", MAXP);
        return 2;
    }
    const uint32_t op = is_min ? MKRT_OP_MIN : MKRT_OP_OR;
    mkrt_config c = mkrt_config_default();
    c.backend = sim ? MKRT_BACKEND_SIM : MKRT_BACKEND_CPU;
    c.workers = 2;
    c.cells = MAXP * 2 * 65536u;
    c.append_log_capacity = 0;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK) {
        fprintf(stderr, "arms_bench: %s\n", err.message);
        return 1;
    }
    uint64_t init = is_min ? UINT64_MAX : 0;
    prod w[MAXP];
    for (uint32_t i = 0; i < np; i++) {
        uint32_t base = overlap ? 0 : i * 2 * pairs;
        w[i] = (prod){rt, i, items, pairs, base, op, malloc(pairs * sizeof(uint64_t)), 0};
        if (w[i].want == NULL)
            return 1;
        for (uint32_t j = 0; j < pairs; j++) {
            w[i].want[j] = init;
            mkrt_cell_write(rt, base + pairs + j, init);
        }
    }
    mkrt__thread t[MAXP];
    uint64_t t0 = bench_now_ns();
    for (uint32_t i = 0; i < np; i++)
        mkrt__thread_start(&t[i], run_producer, &w[i]);
    for (uint32_t i = 0; i < np; i++)
        mkrt__thread_join(t[i]);
    mkrt_drain(rt, SEC);
    double ms = (double)(bench_now_ns() - t0) / 1e6;
    int bad = 0;
    for (uint32_t j = 0; j < pairs; j++) {
        uint64_t want = init;
        for (uint32_t i = 0; i < np; i++) {
            if (!overlap || i == np - 1) {
                if (overlap)
                    for (uint32_t k = 0; k < np; k++)
                        want = is_min ? (w[k].want[j] < want ? w[k].want[j] : want) : (want | w[k].want[j]);
                else
                    want = w[i].want[j];
                uint64_t v = 0;
                mkrt_cell_read(rt, w[i].base + pairs + j, &v);
                bad |= v != want;
            }
        }
    }
    for (uint32_t i = 0; i < np; i++) {
        bad |= w[i].failed;
        free(w[i].want);
    }
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    printf("arms%s: %s %s, %u producers x %u items over %u pairs: wall %.2f ms, %.2f Mitems/s, "
           "arms-skipped %llu, pruned %llu, batches %llu, cells %s\n",
           sim ? " (sim)" : "", overlap ? "overlap" : "disjoint", is_min ? "min" : "or", np, items, pairs, ms,
           (double)np * items / (ms * 1e3), (unsigned long long)s.plan_counts[MKRT_PLAN_N_ARMS_SKIPPED],
           (unsigned long long)s.pruned, (unsigned long long)s.batches, bad ? "WRONG" : "right");
    mkrt_destroy(rt, SEC, NULL);
    return bad ? 1 : 0;
}
