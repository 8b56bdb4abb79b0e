/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/graph/bench_graph.h - the parts of bench/graph_bench.c: options
 * (graph_bench.c), one graph family's runs (run_family.c) and the report
 * and CSV (report.c). */
#ifndef MKRT_BENCH_GRAPH_BENCH_H
#define MKRT_BENCH_GRAPH_BENCH_H

#include <stdbool.h>

#include "../bench_util.h"
#include "peers.h"

enum { K_BFS, K_SSSP, K_CC, K_PR, KERNELS };
extern const char *const kernel_name[KERNELS];
/* The mkrt engine on a CUDA GPU (examples/graph500/traverse_mkrt.c; --device). */
extern const traverse_ops traverse_mkrt_cuda_ops;

typedef struct gopts {
    bench_opts b;
    uint32_t scale, edgefactor, roots, trials;
    unsigned threads;  /* the first of --threads's list (the one the other options use) */
    unsigned thread_list[8], nthreads; /* --threads 1,2,4: mkrt and GAPBS at each, on one graph */
    unsigned families; /* bit 1 << g500_family */
    unsigned kernels;  /* bit 1 << K_* */
    const char *gapbs; /* GAPBS folder, or NULL */
    uint32_t concurrent; /* --concurrent N: N searches at once vs one after another (0: not run) */
    bool device;         /* --device: also the mkrt-cuda engine (skipped, with a note, without a GPU) */
    char load_start[64]; /* the 1-minute load average when the run began */
} gopts;

/* The 1-minute load average (/proc/loadavg) into buf, or "unknown". */
static inline void bench_loadavg(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/loadavg", "r");
    if (f == NULL)
        return;
    char word[32];
    if (fscanf(f, "%31s", word) == 1)
        snprintf(buf, len, "%s", word);
    fclose(f);
}

/* One engine's figure for one kernel on one family. */
typedef struct row {
    char engine[16];
    int kernel;
    g500_family family;
    unsigned threads;
    double seconds; /* mean per search or run */
    double mteps;
    /* mkrt's work counters (has_counters) */
    bool has_counters;
    double examined_per_edge; /* edges examined / directed edges in the component */
    double rounds;            /* batches (or iterations) per search or run */
    double levels_pushed, levels_pulled; /* per search (BFS, SSSP) */
    double bytes_per_edge;    /* estimate, per directed edge in the component */
    /* CPU time per search or run (all of the engine's threads; GAPBS:
     * per trial, gapbs_cpu) and levels per search (mkrt: pushed + pulled,
     * CC's phases, PageRank's iterations); cpu_seconds < 0: not measured. */
    double cpu_seconds;
    double levels;
    double level_us; /* mkrt: mkrt_level_transition_us at these threads (0: not measured) */
    double pr_l1;    /* PageRank: the worst run's L1 distance to the fixed point (< 0: not known) */
    double planner_share; /* mkrt: units run by the planning thread / units run (< 0: not measured) */
} row;

/* A level transition of mkrt's engine, measured directly: BFS on a path
 * (one vertex per level), wall time / levels, at the benchmark's threads
 * (level_probe.c). Returns microseconds, or -1 after printing why. */
double mkrt_level_transition_us(unsigned threads);

#define ROWS_MAX 512

/* --concurrent: N searches in one runtime, one after another and at once. */
typedef struct conc_row {
    g500_family family;
    int kernel;
    uint32_t searches;
    double seq_seconds, conc_seconds; /* per batch of `searches` */
    uint64_t levels_pushed, levels_pulled, edges; /* over all of them (mkrt_stats) */
} conc_row;

#define CONC_ROWS_MAX 4

typedef struct results {
    double level_us[8]; /* mkrt_level_transition_us at thread_list[i] (0: not yet; < 0: failed) */
    row rows[ROWS_MAX];
    int n;
    conc_row conc[CONC_ROWS_MAX];
    int nconc;
    /* PageRank: GAPBS's rule (g500_pagerank_in_place) per family: its L1
     * distance to the fixed point (< 0: not run) and its iterations. */
    double pr_in_place_l1[2];
    uint32_t pr_in_place_iters[2];
} results;

/* Runs every engine on family f's graph, appending rows. Returns 0, or -1
 * after printing why (a wrong result, an engine that did not run). */
int bench_family(const gopts *o, g500_family f, results *res);

/* --concurrent (concurrent.c): appends conc rows. Returns 0, or -1. */
int bench_concurrent(const gopts *o, g500_family f, const g500_csr *g, const uint32_t *roots,
                     const uint32_t *const *levels, const uint64_t *const *dists, results *res);

/* Prints the tables and writes --out and --csv. Returns 0, or -1. */
int write_results(const gopts *o, const results *res, const char *machine);

#endif
