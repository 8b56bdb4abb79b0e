/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/relax_bench.c - the cost of a RELAX item run from the rings (issue
 * 32: RELAX marks its target through its op row, an indirect call per
 * relaxed edge, where it called the graph engine by name before). A
 * graph of V vertices without edges is registered (a mark finds no edges
 * to expand, so what is timed is the item and its mark); every round
 * publishes V RELAX items (0 -> v, weight R - r), each of which lowers
 * its target, so every item relaxes and marks. One producer, 1 worker
 * (one thread runs each batch: no hand-off in the figure). Prints the
 * median ns per relaxed item over the runs.
 * --backend sim runs the batches on the simulated megakernel (issue 36:
 * a batch with RELAX items is a RELAX job of the device's traversal job
 * engine), 2 workers' 4 simulated blocks. --shape picks the graph:
 * none (the above), random (4 edges a vertex: each round's RELAX items
 * start a traversal of a few wide levels over the whole graph) or path
 * (0 -> 1 -> ... -> V-1, one RELAX item a round: V - 2 one-vertex
 * levels, the high-diameter case); those two print the median ns per
 * executed item (the RELAX items and the edges they emitted).
 *   build: cc -O2 -std=gnu11 -Iinclude -I. bench/relax_bench.c build/libmkrt.a \
 *          -lurcu-cds -lurcu-common -lurcu-memb -lm -pthread -o relax_bench
 *   run:   ./relax_bench [--vertices N] [--rounds N] [--runs N] [--backend cpu|sim]
 *                        [--shape none|random|path] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "mkrt/mkrt.h"

#define SEC 60000000000ull

int main(int argc, char **argv)
{
    uint32_t v = 65536, rounds = 32, runs = 7;
    const char *backend = "cpu", *shape = "none";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--vertices") == 0)
            v = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--rounds") == 0)
            rounds = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--runs") == 0)
            runs = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--backend") == 0)
            backend = argv[i + 1];
        else if (strcmp(argv[i], "--shape") == 0)
            shape = argv[i + 1];
    }
    const bool sim = strcmp(backend, "sim") == 0, path = strcmp(shape, "path") == 0;
    const uint32_t degree = strcmp(shape, "random") == 0 ? 4 : path ? 1 : 0;
    if (v < 3 || rounds == 0 || runs == 0 || runs > 64 || (!sim && strcmp(backend, "cpu") != 0) ||
        (degree == 0 && strcmp(shape, "none") != 0)) {
        fprintf(stderr, "relax_bench: --vertices >= 3, --rounds >= 1, 1 <= --runs <= 64, --backend cpu|sim, "
                        "--shape none|random|path\n");
        return 2;
    }
    uint64_t *off = calloc((size_t)v + 1, sizeof *off);
    uint32_t *dst = malloc(((size_t)v * degree + 1) * sizeof *dst);
    mkrt_item *items = malloc((size_t)v * sizeof *items);
    if (off == NULL || dst == NULL || items == NULL)
        return 1;
    uint64_t seed = 88172645463325252ull;
    for (uint32_t u = 0; u < v; u++) { /* the path's edge u -> u + 1 (none from the last), or random targets */
        off[u + 1] = off[u] + (path ? u + 1 < v : degree);
        for (uint64_t e = off[u]; e < off[u + 1]; e++) {
            seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
            dst[e] = path ? u + 1 : (uint32_t)(seed % v);
        }
    }
    double ns[64];
    for (uint32_t run = 0; run < runs; run++) {
        mkrt_config c = mkrt_config_default();
        c.backend = sim ? MKRT_BACKEND_SIM : MKRT_BACKEND_CPU;
        c.workers = sim ? 2 : 1;
        c.cells = v;
        mkrt_runtime *rt;
        mkrt_error err;
        mkrt_graph g = {v, off, dst, NULL};
        if (mkrt_create(&c, &rt, &err) != MKRT_OK || mkrt_graph_register(rt, &g, &err) != MKRT_OK) {
            fprintf(stderr, "relax_bench: %s\n", err.message);
            return 1;
        }
        for (uint32_t u = 1; u < v; u++)
            mkrt_cell_write(rt, u, UINT64_MAX);
        mkrt_producer *p = mkrt_producer_open(rt, NULL);
        const uint64_t t0 = bench_now_ns();
        const size_t per_round = path ? 1 : v - 1; /* path: one RELAX to vertex 1, its traversal the rest */
        for (uint32_t r = 0; r < rounds; r++) {
            for (uint32_t u = 1; u < v; u++)
                items[u - 1] = (mkrt_item){MKRT_OP_RELAX, 0, u, rounds - r};
            for (size_t done = 0; done < per_round;) {
                size_t k = per_round - done < 4096 ? per_round - done : 4096;
                if (mkrt_publish(p, items + done, k, SEC, &err) != MKRT_OK) {
                    fprintf(stderr, "relax_bench: publish: %s\n", err.message);
                    return 1;
                }
                done += k;
            }
        }
        if (mkrt_drain(rt, SEC) != MKRT_OK)
            return 1;
        const uint64_t t1 = bench_now_ns();
        uint64_t last = 0;
        mkrt_cell_read(rt, v - 1, &last);
        mkrt_stats st;
        mkrt_stats_read(rt, &st);
        if (last != (path ? v - 1 : 1) || st.failed != 0) {
            fprintf(stderr, "relax_bench: wrong result (cell %llu, %llu failed)\n", (unsigned long long)last,
                    (unsigned long long)st.failed);
            return 1;
        }
        ns[run] = (double)(t1 - t0) / (degree == 0 ? (double)rounds * (v - 1) : (double)st.executed);
        mkrt_producer_close(p);
        mkrt_destroy(rt, SEC, NULL);
    }
    printf("relax_bench: %s, %s graph, %u vertices, %u rounds, %u runs: median %.2f ns per %s\n", backend, shape, v,
           rounds, runs, bench_median(ns, (int)runs), degree == 0 ? "relaxed RELAX item" : "executed item");
    return 0;
}
