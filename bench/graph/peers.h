/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/graph/peers.h - the peer engines bench/graph_bench.c runs beside
 * mkrt's: GraphBLAS and igraph each built only when its library is
 * installed (the Makefile defines HAVE_GRAPHBLAS / HAVE_IGRAPH after a
 * test compile), and GAPBS run as programs from a folder (gapbs_peer.c). */
#ifndef MKRT_BENCH_GRAPH_PEERS_H
#define MKRT_BENCH_GRAPH_PEERS_H

#include "../../examples/graph500/graph500.h"

#ifdef HAVE_GRAPHBLAS
/* SuiteSparse:GraphBLAS (graphblas_engine.c). */
extern const traverse_ops traverse_graphblas_ops;
#endif
#ifdef HAVE_IGRAPH
/* igraph (igraph_engine.c), sequential. */
extern const traverse_ops traverse_igraph_ops;
#endif

/* ---- GAPBS (gapbs_peer.c) --------------------------------------------- */

/** One GAPBS folder and the graph written for it. */
typedef struct gapbs_peer gapbs_peer;

#define GAPBS_TOP 5 /* PageRank's -a prints the 5 top scores */

/** What one GAPBS run printed. */
typedef struct gapbs_result {
    double seconds;  /* mean "Trial Time" of the trials after the warm-up */
    unsigned passed; /* trials whose verification said PASS (all, or the run failed) */
    uint64_t count;  /* bfs: tree vertices; sssp: reached vertices; cc: components */
    unsigned top_n;  /* pr: the top scores */
    uint32_t top_v[GAPBS_TOP];
    double top_score[GAPBS_TOP];
} gapbs_result;

/** 0 when dir holds executable bfs, sssp, cc and pr; else -1 and why
 *  names the missing ones and how to build them. */
int gapbs_check_dir(const char *dir, char *why, size_t len);
/** Checks dir, writes g as graph.el and graph.wel into a new folder under
 *  /tmp (and graph.sg with dir's converter, when there is one). NULL and
 *  why on failure. */
gapbs_peer *gapbs_open(const char *dir, const g500_csr *g, unsigned threads, char *why, size_t len);
/** Runs kernel ("bfs", "sssp" with delta 2, "cc", "pr") for one warm-up
 *  trial and trials timed ones, from root (UINT32_MAX: GAPBS's choice; cc
 *  and pr take none), with -v and -a, OMP_WAIT_POLICY passive unless set. Returns 0, or -1 with why: the program failed, built another
 *  graph, or a trial failed its verification. */
int gapbs_run(gapbs_peer *p, const char *kernel, uint32_t root, unsigned trials, gapbs_result *r,
              char *why, size_t len);
/** GAPBS's CPU time per trial of kernel (from root, UINT32_MAX: none):
 *  the children's CPU time of a run of 3 trials less that of a run of 1
 *  (the graph's load, the process and the warm-up cancel), halved; no
 *  -v or -a (0 when the load's noise exceeds the difference). Returns 0 with *seconds, or -1 with why. */
int gapbs_cpu(gapbs_peer *p, const char *kernel, uint32_t root, double *seconds, char *why, size_t len);
/** The threads (OMP_NUM_THREADS) of the runs from now on, and whether
 *  they run GAPBS's own verification (-v; gapbs_open: yes). Without it an
 *  answer is still checked by its -a output against the reference. */
void gapbs_set_threads(gapbs_peer *p, unsigned threads, bool verify);
/** Removes the written files and folder; NULL-safe. */
void gapbs_close(gapbs_peer *p);

#endif
