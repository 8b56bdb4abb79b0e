/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/mpi_bench.c - libmkrt_mpi on one machine: run it under mpirun at
 * 1, 2 and 4 ranks (bench/results/mpi.md has the commands and figures).
 *
 * 1. The per-item cost of forwarding: every rank publishes --items ACC
 *    items through mkrt_mpi_publish, once all to handles it owns (local)
 *    and once all to the next rank's handles (forwarded), each timed from a
 *    global quiescence to the next on rank 0; the difference per item is
 *    what forwarding adds (outbox, MPI, the owner's producer).
 * 2. BFS and SSSP of the Kronecker graph through examples/mpi/traverse_mpi.c
 *    (what `graph_bfs` runs under mpirun, without its validation):
 *    harmonic-mean TEPS, the share of edge items forwarded, items per
 *    message.
 * Rank 0 prints one Markdown table row per part.
 *
 *   mpirun -np N build/bench/mpi_bench [--scale S] [--roots R] [--items N]
 */
#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../examples/graph500/graph500.h"
#include "../examples/mpi/traverse_mpi.h"
#include "mkrt/mkrt.h"
#include "mkrt_mpi/mkrt_mpi.h"

/* This process's CPU seconds (all its threads). */
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double timed_once(mkrt_mpi *m, mkrt_producer *p, mkrt_item *items, uint32_t n, double *cpu)
{
    mkrt_mpi_quiesce(m, MKRT_TIMEOUT_INFINITE);
    double t0 = g500_seconds(), c0 = cpu_seconds();
    for (uint32_t at = 0; at < n; at += 1024) {
        uint32_t len = n - at < 1024 ? n - at : 1024;
        if (mkrt_mpi_publish(m, p, items + at, len, MKRT_TIMEOUT_INFINITE, NULL, NULL) != MKRT_OK) {
            fprintf(stderr, "mpi_bench: publish failed\n");
            exit(1);
        }
    }
    mkrt_mpi_quiesce(m, MKRT_TIMEOUT_INFINITE);
    *cpu = cpu_seconds() - c0;
    return g500_seconds() - t0;
}

/* The best of three runs (the first also warms the threads up). */
static double timed_publish(mkrt_mpi *m, mkrt_producer *p, mkrt_item *items, uint32_t n,
                            double *cpu)
{
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        double c = 0, t = timed_once(m, p, items, n, &c);
        if (t < best) {
            best = t;
            *cpu = c;
        }
    }
    return best;
}

/* Part 1: local against forwarded items. */
static void forwarding_cost(uint32_t n)
{
    const uint32_t per = 4096;
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CPU;
    c.workers = 1;
    c.cells = per * 64; /* enough for 64 ranks' blocks */
    mkrt_runtime *rt = NULL;
    if (mkrt_create(&c, &rt, NULL) != MKRT_OK)
        exit(1);
    mkrt_mpi_config mc = mkrt_mpi_config_default();
    mkrt_mpi *m = NULL;
    mkrt_error err = {0};
    mc.handles = c.cells; /* block partition: rank r owns cells/ranks from r*cells/ranks */
    if (mkrt_mpi_create(&mc, rt, &m, &err) != MKRT_OK) {
        fprintf(stderr, "mpi_bench: %s\n", err.message);
        exit(1);
    }
    const int rank = mkrt_mpi_rank(m), ranks = mkrt_mpi_size(m);
    const uint32_t block = c.cells / (uint32_t)ranks;
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item *items = malloc((size_t)n * sizeof *items);
    for (uint32_t i = 0; i < n; i++)
        items[i] = (mkrt_item){MKRT_OP_ACC, 0, (uint32_t)rank * block + i % per, 1};
    double cl = 0, cr = 0, tl = timed_publish(m, p, items, n, &cl);
    int next = (rank + 1) % ranks;
    for (uint32_t i = 0; i < n; i++)
        items[i].out = (uint32_t)next * block + i % per;
    mkrt_mpi_stats s0, s1;
    mkrt_mpi_stats_read(m, &s0);
    double tr = timed_publish(m, p, items, n, &cr);
    mkrt_mpi_stats_read(m, &s1);
    /* CPU nanoseconds over all ranks (summed as integers). */
    uint64_t msgs[3] = {s1.messages_sent - s0.messages_sent, (uint64_t)(cl * 1e9),
                        (uint64_t)(cr * 1e9)};
    mkrt_mpi_allreduce_sum(m, msgs, 3);
    if (rank == 0) {
        printf("| ranks | items per rank | local: ns/item (wall, per rank) | forwarded: ns/item "
               "(wall, per rank) | forwarding adds ns/item (wall) | local: CPU ns/item | forwarded: "
               "CPU ns/item | forwarding adds CPU ns/item | messages |\n"
               "|---|---|---|---|---|---|---|---|---|\n");
        char adds[32] = "(no other rank)", cadds[32] = "(no other rank)";
        const double all = (double)n * ranks; /* items executed, all ranks */
        if (ranks > 1) {
            snprintf(adds, sizeof adds, "%.0f", (tr - tl) * 1e9 / n);
            snprintf(cadds, sizeof cadds, "%.0f", ((double)msgs[2] - (double)msgs[1]) / all);
        }
        printf("| %d | %u | %.0f | %.0f | %s | %.0f | %.0f | %s | %" PRIu64 " |\n\n", ranks, n,
               tl * 1e9 / n, tr * 1e9 / n, adds, (double)msgs[1] / all, (double)msgs[2] / all,
               cadds, msgs[0]);
        fflush(stdout);
    }
    free(items);
    mkrt_producer_close(p);
    mkrt_mpi_destroy(m, NULL);
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
}

static uint64_t u64_arg(int argc, char **argv, const char *name, uint64_t dflt)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return strtoull(argv[i + 1], NULL, 10);
    return dflt;
}

int main(int argc, char **argv)
{
    uint32_t scale = (uint32_t)u64_arg(argc, argv, "--scale", 16);
    uint32_t roots = (uint32_t)u64_arg(argc, argv, "--roots", 8);
    uint32_t n = (uint32_t)u64_arg(argc, argv, "--items", 1000000);
    if (scale < 1 || scale > 26 || roots < 1 || roots > 64 || n < 1) {
        fprintf(stderr, "usage: mpirun -np N mpi_bench [--scale 1..26] [--roots 1..64] [--items N]\n");
        return 2;
    }
    /* MPI is ours (SERIALIZED), so the two layers below can come and go. */
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    forwarding_cost(n);
    char why[512];
    g500_edge_list el;
    g500_graph g;
    if (g500_generate(scale, 16, 1, &el, why, sizeof why) != 0 ||
        g500_csr_build(&el, &g, why, sizeof why) != 0) {
        fprintf(stderr, "mpi_bench: %s\n", why);
        return 1;
    }
    uint32_t *rootv = malloc(roots * sizeof *rootv);
    uint32_t *parent = malloc(g.csr.vertices * sizeof *parent);
    uint64_t *dist = malloc(g.csr.vertices * sizeof *dist);
    double *bt = malloc(roots * sizeof *bt), *st = malloc(roots * sizeof *st);
    if (g500_sample_roots(&g.csr, 1, roots, rootv, why, sizeof why) != 0) {
        fprintf(stderr, "mpi_bench: %s\n", why);
        return 1;
    }
    tmpi_engine *e = tmpi_open(&g.csr, 1, MKRT_MPI_BLOCK, why, sizeof why);
    if (e == NULL) {
        fprintf(stderr, "mpi_bench: %s\n", why);
        return 1;
    }
    const int rank = tmpi_rank(e), ranks = tmpi_size(e);
    tmpi_counts tot = {0};
    int bad = 0;
    for (uint32_t i = 0; i < roots; i++) {
        double tb = 0, ts = 0;
        tmpi_counts cb, cs;
        bad |= tmpi_bfs(e, rootv[i], parent, &tb, &cb, why, sizeof why);
        uint64_t edges = rank == 0 ? g500_component_edges(&el, parent) : 0;
        bad |= tmpi_sssp(e, rootv[i], dist, &ts, &cs, why, sizeof why);
        bt[i] = (double)edges / (tb > 0 ? tb : 1e-9);
        st[i] = (double)edges / (ts > 0 ? ts : 1e-9);
        tot.edge_items += cb.edge_items + cs.edge_items;
        tot.forwarded += cb.forwarded + cs.forwarded;
        tot.messages += cb.messages + cs.messages;
        tot.deferred += cb.deferred + cs.deferred;
    }
    if (rank == 0 && !bad) {
        g500_teps_stats b = g500_teps_summary(bt, roots), s = g500_teps_summary(st, roots);
        printf("| ranks | scale | roots | BFS MTEPS (harmonic) | SSSP MTEPS (harmonic) | edge items "
               "forwarded | items per message | deferred (outbox full) |\n"
               "|---|---|---|---|---|---|---|---|\n");
        printf("| %d | %u | %u | %.2f | %.2f | %.1f%% | %.0f | %" PRIu64 " |\n\n", ranks, scale,
               roots, b.harmonic_mean / 1e6, s.harmonic_mean / 1e6,
               tot.edge_items ? 100.0 * (double)tot.forwarded / (double)tot.edge_items : 0.0,
               tot.messages ? (double)tot.forwarded / (double)tot.messages : 0.0, tot.deferred);
        fflush(stdout);
    } else if (rank == 0) {
        fprintf(stderr, "mpi_bench: %s\n", why);
    }
    tmpi_close(e);
    free(rootv);
    free(parent);
    free(dist);
    free(bt);
    free(st);
    g500_graph_free(&g);
    g500_edge_list_free(&el);
    MPI_Finalize();
    return bad ? 1 : 0;
}
