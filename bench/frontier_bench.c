/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/frontier_bench.c - QUEUE's A/B (issue 23): BFS and SSSP traversals
 * (mkrt_traversal_*) with the sparse-queue frontier on and forced off
 * (mkrt_config.plan_off = MKRT_PLAN_QUEUE), interleaved in one process,
 * on a high-diameter graph: a side x side grid (4 neighbours, weights
 * 1..255), whose levels are thin (about side vertices of side^2) and many
 * (about 2 x side), so a level's scan of the bitset (side^2 / 64 words) is
 * what the queue saves. Prints the median and the least ms per search of
 * each side (the least is the one the machine's other load hurt least)
 * and the levels each took from the queue or the bitset.
 *   build/bench/frontier_bench [--side N] [--rounds N] [--threads N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "mkrt/mkrt.h"

typedef struct grid {
    uint32_t v;
    uint64_t *off;
    uint32_t *dst, *w;
} grid;

static grid make_grid(uint32_t side)
{
    grid g;
    g.v = side * side;
    g.off = malloc((g.v + 1) * sizeof *g.off);
    g.dst = malloc((size_t)g.v * 4 * sizeof *g.dst);
    g.w = malloc((size_t)g.v * 4 * sizeof *g.w);
    if (g.off == NULL || g.dst == NULL || g.w == NULL) {
        fprintf(stderr, "frontier_bench: no memory for a %u x %u grid\n", side, side);
        exit(1);
    }
    uint64_t e = 0, seed = 42;
    for (uint32_t y = 0; y < side; y++)
        for (uint32_t x = 0; x < side; x++) {
            g.off[y * side + x] = e;
            const int dx[4] = {1, -1, 0, 0}, dy[4] = {0, 0, 1, -1};
            for (int k = 0; k < 4; k++) {
                int64_t nx = (int64_t)x + dx[k], ny = (int64_t)y + dy[k];
                if (nx < 0 || ny < 0 || nx >= side || ny >= side)
                    continue;
                /* symmetric weights: the smaller endpoint's hash */
                uint32_t a = y * side + x, b = (uint32_t)(ny * side + nx), lo = a < b ? a : b, hi = a ^ b ^ lo;
                seed = ((uint64_t)lo * 2654435761u) ^ ((uint64_t)hi * 40503u);
                g.dst[e] = b;
                g.w[e++] = 1 + (uint32_t)(seed % 255);
            }
        }
    g.off[g.v] = e;
    return g;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    uint32_t side = 700, rounds = 7, threads = 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--side") == 0)
            side = (uint32_t)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--rounds") == 0)
            rounds = (uint32_t)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--threads") == 0)
            threads = (uint32_t)atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: %s [--side N] [--rounds N] [--threads N]\n", argv[0]);
            return 2;
        }
    }
    if (side < 2 || side > 4096 || rounds < 1 || rounds > 1000 || threads < 1) {
        fprintf(stderr, "frontier_bench: side 2..4096, rounds 1..1000, threads >= 1\n");
        return 2;
    }
    grid g = make_grid(side);
    mkrt_graph mg = {g.v, g.off, g.dst, g.w};
    mkrt_runtime *rt[2];
    mkrt_traversal *t[2][2];
    for (int off = 0; off < 2; off++) {
        mkrt_config c = mkrt_config_default();
        c.backend = MKRT_BACKEND_CPU;
        c.workers = threads;
        c.cells = g.v;
        c.plan_off = off ? MKRT_PLAN_QUEUE : 0;
        mkrt_error err;
        if (mkrt_create(&c, &rt[off], &err) != MKRT_OK || mkrt_graph_register(rt[off], &mg, &err) != MKRT_OK) {
            fprintf(stderr, "frontier_bench: %s\n", err.message);
            return 1;
        }
        for (int k = 0; k < 2; k++) {
            mkrt_traversal_desc d = {k ? MKRT_TRAVERSAL_SSSP : MKRT_TRAVERSAL_BFS, true};
            if (mkrt_traversal_open(rt[off], &d, &t[off][k], &err) != MKRT_OK) {
                fprintf(stderr, "frontier_bench: %s\n", err.message);
                return 1;
            }
        }
    }
    double *ms = malloc(sizeof *ms * rounds * 4);
    uint64_t *check = malloc(sizeof *check * g.v * 2);
    bool same = true;
    for (uint32_t r = 0; r < rounds; r++)
        for (int k = 0; k < 2; k++)
            for (int off = 0; off < 2; off++) {
                const uint32_t root = (r * 7919u) % g.v;
                uint64_t t0 = bench_now_ns();
                if (mkrt_traversal_start(t[off][k], root, NULL) != MKRT_OK ||
                    mkrt_traversal_wait(t[off][k], MKRT_TIMEOUT_INFINITE) != MKRT_OK) {
                    fprintf(stderr, "frontier_bench: a search failed\n");
                    return 1;
                }
                ms[(k * 2 + off) * rounds + r] = (double)(bench_now_ns() - t0) / 1e6;
                mkrt_traversal_read(t[off][k], 0, g.v, check + (size_t)off * g.v, NULL);
                if (off == 1)
                    same &= memcmp(check, check + g.v, g.v * sizeof *check) == 0;
            }
    char machine[256];
    bench_machine(machine, sizeof machine);
    printf("frontier_bench: %u x %u grid (%u vertices, %llu edges), %u threads, %u rounds, %s\n", side, side, g.v,
           (unsigned long long)g.off[g.v], threads, rounds, machine);
    printf("| kernel | QUEUE on, ms (median, min) | QUEUE off, ms (median, min) | on vs off (median, min) | "
           "levels from the queue / bitset (on; off) |\n");
    printf("|---|---|---|---|---|\n");
    mkrt_stats st[2];
    mkrt_stats_read(rt[0], &st[0]);
    mkrt_stats_read(rt[1], &st[1]);
    for (int k = 0; k < 2; k++) {
        double med[2], lo[2];
        for (int off = 0; off < 2; off++) {
            qsort(ms + (k * 2 + off) * rounds, rounds, sizeof *ms, cmp_d);
            med[off] = ms[(k * 2 + off) * rounds + rounds / 2];
            lo[off] = ms[(k * 2 + off) * rounds];
        }
        printf("| %s | %.3f, %.3f | %.3f, %.3f | %+.1f%%, %+.1f%% | %llu / %llu; %llu / %llu |\n", k ? "sssp" : "bfs",
               med[0], lo[0], med[1], lo[1], (med[1] / med[0] - 1) * 100, (lo[1] / lo[0] - 1) * 100,
               (unsigned long long)st[0].plan_counts[MKRT_PLAN_N_QUEUE_LEVELS],
               (unsigned long long)st[0].plan_counts[MKRT_PLAN_N_BITSET_LEVELS],
               (unsigned long long)st[1].plan_counts[MKRT_PLAN_N_QUEUE_LEVELS],
               (unsigned long long)st[1].plan_counts[MKRT_PLAN_N_BITSET_LEVELS]);
    }
    for (int k = 0; k < 2; k++) {
        mkrt_traversal_stats ts[2];
        mkrt_traversal_stats_read(t[0][k], &ts[0]);
        mkrt_traversal_stats_read(t[1][k], &ts[1]);
        printf("%s edges examined per search: on %.0f, off %.0f\n", k ? "sssp" : "bfs",
               (double)ts[0].edges_examined / rounds, (double)ts[1].edges_examined / rounds);
    }
    printf("results equal with QUEUE on and off: %s (levels counted over both kernels)\n", same ? "yes" : "NO");
    for (int off = 0; off < 2; off++)
        mkrt_destroy(rt[off], MKRT_TIMEOUT_INFINITE, NULL);
    free(ms);
    free(check);
    free(g.off);
    free(g.dst);
    free(g.w);
    return same ? 0 : 1;
}
