/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/graph500/traverse.h - the traversal interface that examples/graph_bfs.c
 * and bench/graph_bench.c call, one implementation per engine (mkrt's lives in
 * examples/graph500/traverse_mkrt.c; the peers' in bench/graph/).
 *
 * The graph is an undirected CSR (both directions of every edge stored), as
 * examples/graph500/graph500.h builds it. Every call is given caller-owned
 * output arrays of g->vertices entries. */
#ifndef MKRT_EXAMPLES_TRAVERSE_H
#define MKRT_EXAMPLES_TRAVERSE_H

#include <stddef.h>
#include <stdint.h>

/** Read-only CSR graph: vertices, offsets[vertices + 1], targets[offsets[vertices]],
 *  weights parallel to targets (each in 1..255; NULL means every weight is 1). */
typedef struct g500_csr {
    uint32_t vertices;
    const uint64_t *offsets;
    const uint32_t *targets;
    const uint32_t *weights;
} g500_csr;

/** Marks an unreached vertex in parent[] (BFS) and dist[] (SSSP). */
#define G500_NO_PARENT UINT32_MAX
#define G500_INF UINT64_MAX

/** PageRank as GAPBS computes it: scores start at 1/n; each iteration
 *  every vertex takes (1 - d)/n + d * sum over its neighbours u of
 *  score(u)/degree(u), all from the previous iteration's scores (Jacobi),
 *  until the L1 change of an iteration is below the tolerance or after
 *  the most iterations. */
#define TRAVERSE_PR_DAMPING 0.85
#define TRAVERSE_PR_TOLERANCE 1e-4
#define TRAVERSE_PR_MAX_ITERS 20u
/** How an engine's PageRank is checked: against the fixed point
 *  (g500_pagerank_fixed_point), not against another engine's iterate (an
 *  engine may iterate in place, Gauss-Seidel, and stop elsewhere on the
 *  way). An iteration whose L1 change is below the tolerance is within
 *  d / (1 - d) * tolerance of the fixed point (a contraction by d); twice
 *  that for in-place iterations, whose change understates the distance
 *  less tightly: 1.13e-3 at the defaults. */
#define TRAVERSE_PR_CHECK_L1(tolerance) (2.0 * TRAVERSE_PR_DAMPING / (1.0 - TRAVERSE_PR_DAMPING) * (tolerance))
/** The fixed point the answers are checked against is converged: Jacobi
 *  iterations until d / (1 - d) times an iteration's L1 change (a bound
 *  on its distance to the fixed point) is below this, not a Jacobi iterate
 *  at the tolerance (issue 33 asks for at least 1e-6). */
#define TRAVERSE_PR_FIXED_L1 1e-9

/** What an engine counted for its last call (traverse_ops::counters). */
typedef struct traverse_counters {
    uint64_t edges_examined; /* edge items run (pushed or pulled), or edge visits */
    uint64_t changed;        /* items that changed their output */
    uint64_t rounds;         /* batches (mkrt) or iterations (PageRank) */
    uint32_t iterations;     /* PageRank iterations run (0 for the others) */
    uint64_t levels_pushed;  /* BFS and SSSP levels run top-down, and bottom-up (mkrt) */
    uint64_t levels_pulled;
    /* mkrt: the CPU pool's units of work (mkrt_stats.units_run) and those
     * the planning thread ran itself (units_by_planner); 0 elsewhere. */
    uint64_t units, units_planner;
} traverse_counters;

/** One engine's state (opaque, defined by each implementation). */
typedef struct traverse_engine traverse_engine;

/** One engine: a table of functions, so one program can run several side by
 *  side (bench/graph_bench.c). Each implementation defines one table, e.g.
 *  `const traverse_ops traverse_mkrt_ops` in traverse_mkrt.c. */
typedef struct traverse_ops {
    /** Name for reports, e.g. "mkrt-cpu", "graphblas", "igraph". */
    const char *name;
    /** Sets up the engine for graph g (registration, allocation: not timed).
     *  threads: worker threads to use (0: the engine's default). Returns NULL
     *  and writes a message into why (size why_len) on failure. */
    traverse_engine *(*open)(const g500_csr *g, unsigned threads, char *why, size_t why_len);
    /** BFS from root: parent[v] is v's parent in a BFS tree (parent[root] ==
     *  root), G500_NO_PARENT where unreached. Returns 0, or -1 with a message
     *  in why. */
    int (*bfs)(traverse_engine *e, uint32_t root, uint32_t *parent, char *why, size_t why_len);
    /** SSSP from root over the weights: dist[v] the shortest distance,
     *  G500_INF where unreached. Returns 0, or -1 with a message in why. */
    int (*sssp)(traverse_engine *e, uint32_t root, uint64_t *dist, char *why, size_t why_len);
    void (*close)(traverse_engine *e);
    /* The two below may be NULL: the engine does not run that kernel. */
    /** Connected components: comp[v] the label of v's component (any
     *  labels below g->vertices: two vertices share one exactly when a path
     *  joins them). Returns 0, or -1 with a message in why. */
    int (*cc)(traverse_engine *e, uint32_t *comp, char *why, size_t why_len);
    /** PageRank (TRAVERSE_PR_*, above): score[v] for every vertex, and the
     *  iterations run in *iterations. Returns 0, or -1 with a message. */
    int (*pr)(traverse_engine *e, double *score, uint32_t *iterations, char *why, size_t why_len);
    /** The work counters of the last call (may be NULL: none counted). */
    void (*counters)(const traverse_engine *e, traverse_counters *out);
} traverse_ops;

/* The engines. */
extern const traverse_ops traverse_mkrt_ops;      /* examples/graph500/traverse_mkrt.c */
extern const traverse_ops traverse_reference_ops; /* examples/graph500/reference.c (sequential) */

#endif
