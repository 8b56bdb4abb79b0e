/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/graph.h
 * @brief Read-only user data: a CSR graph registered with the runtime once.
 *
 * Vertex v of the graph is cell handle v: the built-in ::MKRT_OP_RELAX
 * relaxes cells[out] and, when it lowers it, emits one item per edge of
 * out; user ops read the graph through mkrt_op_ctx::graph (on every
 * backend: user ops with a C implementation run on the CPU pool).
 *
 * The runtime borrows the arrays: they must stay valid and unchanged
 * until mkrt_destroy(). With a megakernel device (SIM or CUDA) the device
 * also gets the graph (on a GPU, a copy in device memory) and runs a batch
 * with ::MKRT_OP_RELAX items together with its whole traversal, level
 * after level, as one batch (README, "Work that makes work").
 */
#ifndef MKRT_GRAPH_H
#define MKRT_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/runtime.h"
#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Most edges a registered graph may have. */
#define MKRT_GRAPH_EDGES_MAX ((uint64_t)1 << 40)

/**
 * @brief A directed graph in compressed sparse rows (store both directions
 *        of an undirected edge).
 *
 * The edges of vertex v are targets[offsets[v] .. offsets[v + 1] - 1],
 * with weights at the same indices.
 */
typedef struct mkrt_graph {
    uint32_t vertices;       /**< Vertices 0..vertices-1 (1..mkrt_config::cells). */
    const uint64_t *offsets; /**< vertices + 1 entries: offsets[0] = 0, never decreasing. */
    const uint32_t *targets; /**< offsets[vertices] entries, each below vertices. */
    /** Parallel to targets, the edge weights (the param of the items
     *  RELAX emits); NULL: every weight is 1. */
    const uint32_t *weights;
} mkrt_graph;

/**
 * @brief Registers the graph the runtime's ops read (once).
 *
 * Checks the whole graph (O(vertices + edges)). Only before the first
 * producer is opened, like mkrt_op_register(); registering again replaces
 * the graph. With a CUDA device it copies the graph and a frontier (two
 * bits and two queue entries per vertex) into device memory, after asking
 * the persistent kernel to leave the GPU (allocations would wait for it);
 * a device that cannot take the graph leaves RELAX to the CPU pool and
 * mkrt_backend_describe() says why (registration still succeeds).
 *
 * @param rt The runtime.
 * @param g The graph (copied; its arrays are borrowed until mkrt_destroy()).
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Registered.
 * @retval MKRT_EINVAL rt, g, offsets or targets (with edges) is NULL; vertices
 *         is 0 or above mkrt_config::cells; offsets[0] is not 0; offsets
 *         decrease; a target is not below vertices; or a producer was
 *         already opened. The message names the vertex or edge.
 * @retval MKRT_EOVERFLOW More than ::MKRT_GRAPH_EDGES_MAX edges.
 * @retval MKRT_ENOMEM The frontier (one bit per vertex) could not be
 *         allocated; nothing changed.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread; serialised with mkrt_producer_open(). It updates the text
 * mkrt_backend_describe() returns: not concurrently with that call.
 */
mkrt_status mkrt_graph_register(mkrt_runtime *rt, const mkrt_graph *g, mkrt_error *err);


/** @brief Most traversals (mkrt_traversal_open()) one runtime holds open. */
#define MKRT_TRAVERSALS_MAX 64u

/**
 * @brief A traversal of the registered graph with state of its own.
 *
 * Its values and frontier are its own (not the cells), so several run at
 * once in one runtime, beside the producers' items: the dispatcher's
 * frontier rounds take the edges of every running traversal in turn, and
 * each moves from level to level on its own. Open one per concurrent
 * search; a traversal runs one search at a time and is reused with
 * mkrt_traversal_start().
 */
typedef struct mkrt_traversal mkrt_traversal;

/**
 * @brief Beamer's direction-optimizing rule, alpha: a level whose
 *        frontier's edges exceed 1/ALPHA of the edges of the unvisited
 *        vertices runs bottom-up. The one place the rule's constants live
 *        (mkrt_graph_pull_next() applies them).
 */
#define MKRT_GRAPH_PULL_ALPHA 14u
/**
 * @brief Beamer's beta: a bottom-up level is followed by another while
 *        the frontier holds at least 1/BETA of the vertices.
 */
#define MKRT_GRAPH_PULL_BETA 24u

/**
 * @brief Beamer's direction-optimizing rule on a level's counts: whether
 *        the level runs bottom-up (pull). The one copy of the rule: the
 *        runtime's BFS (its PULL decision) and the MPI engine's levels
 *        (mkrt_mpi/graph.h, on counts summed over the ranks) call it.
 *
 * Not pulled before: pull when frontier_edges * ::MKRT_GRAPH_PULL_ALPHA
 * exceeds unvisited_edges. Pulled before: stay pulled while frontier *
 * ::MKRT_GRAPH_PULL_BETA is at least vertices. An empty frontier pushes.
 *
 * @param frontier The level's frontier vertices.
 * @param frontier_edges The edges of the frontier's rows.
 * @param unvisited_edges The edges of the rows of the vertices not yet reached.
 * @param vertices The graph's vertices.
 * @param pulled The level before ran bottom-up.
 * @return true: this level runs bottom-up.
 * @par Thread safety
 * Any thread (a pure function).
 */
bool mkrt_graph_pull_next(uint64_t frontier, uint64_t frontier_edges, uint64_t unvisited_edges,
                          uint64_t vertices, bool pulled);

/** @brief What a traversal computes. */
typedef enum mkrt_traversal_kind {
    /** Breadth-first search: depth (edges from the root) and a BFS tree. */
    MKRT_TRAVERSAL_BFS = 1,
    /** Single-source shortest paths over the graph's weights (1 without). */
    MKRT_TRAVERSAL_SSSP = 2,
    /** Connected components (weakly connected on a directed graph): each
     *  vertex's label is the smallest vertex of its component. Afforest's
     *  sampling (Sutton et al.): link two neighbours of every vertex,
     *  find the largest component from a sample, then compress each label
     *  and link the remaining edges of the vertices outside it (on a graph
     *  opened with symmetric; every vertex otherwise): three phases. A read
     *  of the labels follows each to its root. Searches take no root
     *  (start with 0). */
    MKRT_TRAVERSAL_CC = 3,
    /** PageRank as GAPBS defines it: score(v) = (1 - d)/n + d * sum over
     *  the vertices u of v's row of score(u) / degree(u) (vertices without
     *  edges give nothing). Needs a symmetric graph (the rows are the
     *  in-edges). Starts from the degrees ((1 - d)/n + d * (vertices with
     *  edges / n) * degree / edges, not 1/n: fewer iterations to the same
     *  fixed point). Iterated in place over blocks of vertices (Gauss-Seidel:
     *  a block reads the scores other blocks already updated in the same
     *  iteration; it converges to the same fixed point as the Jacobi
     *  iteration, in fewer iterations, and the last digits differ from run
     *  to run), until the L1 change of an iteration is below the tolerance
     *  or after max_iterations. Checked against the converged fixed point
     *  (tests/test_graph_kinds.c: within 1e-6 L1 at tolerance 1e-9), not
     *  against a Jacobi iterate. Start with mkrt_traversal_start_pagerank()
     *  (parameters) or mkrt_traversal_start() with root 0 (the defaults);
     *  read with mkrt_traversal_read_ranks(). */
    MKRT_TRAVERSAL_PAGERANK = 4
} mkrt_traversal_kind;

/** @brief PageRank's parameters (mkrt_traversal_start_pagerank()); a
 *         field left 0 takes its default. */
typedef struct mkrt_pagerank_params {
    double damping;          /**< d, in (0, 1); 0: 0.85. */
    double tolerance;        /**< Stop below this L1 change, > 0; 0: 1e-4 (GAPBS's). */
    uint32_t max_iterations; /**< At most this many iterations; 0: 20 (GAPBS's). */
} mkrt_pagerank_params;

/** @brief How to open a traversal. */
typedef struct mkrt_traversal_desc {
    mkrt_traversal_kind kind; /**< BFS, SSSP, CC or PAGERANK. */
    /** The registered graph holds v -> u for every edge u -> v: a BFS may
     *  then run large levels bottom-up (direction-optimizing), CC skips the
     *  largest component's edges; PageRank needs it. */
    bool symmetric;
} mkrt_traversal_desc;

/** @brief Work counters of a traversal's searches since it was opened. */
typedef struct mkrt_traversal_stats {
    /** Levels run top-down (edges of the frontier); CC: its phases;
     *  PageRank: its iterations. */
    uint64_t levels_pushed;
    uint64_t levels_pulled;  /**< Levels run bottom-up (unvisited vertices pull). */
    uint64_t edges_examined; /**< Edges looked at (pushed and pulled). */
} mkrt_traversal_stats;

/**
 * @brief Opens a traversal of the registered graph.
 *
 * Any time after mkrt_graph_register(), also while producers publish.
 * Allocates its values (8 bytes per vertex) and frontier (four bits per
 * vertex), CC its labels (4 more), PageRank its scores (12 more); a closed
 * traversal's memory is reused.
 *
 * @param rt The runtime.
 * @param d What to compute.
 * @param out Receives the traversal (NULL on failure).
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK *out is the traversal.
 * @retval MKRT_EINVAL rt, d or out is NULL; the kind is unknown; no graph
 *         is registered; PageRank without symmetric.
 * @retval MKRT_EAGAIN ::MKRT_TRAVERSALS_MAX traversals are open.
 * @retval MKRT_ECLOSED The runtime is being destroyed.
 * @retval MKRT_ENOMEM Nothing was allocated.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread.
 */
mkrt_status mkrt_traversal_open(mkrt_runtime *rt, const mkrt_traversal_desc *d, mkrt_traversal **out,
                                mkrt_error *err);

/**
 * @brief Starts a search from root; returns at once.
 *
 * Every vertex is unreached but the root; the dispatcher takes the search
 * up with the rest of the runtime's work. Wait for it with
 * mkrt_traversal_wait().
 *
 * @param t The traversal.
 * @param root The vertex to start from (CC and PageRank: 0, they have none).
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Started.
 * @retval MKRT_EINVAL t is NULL, or root is not a vertex (CC, PageRank: not 0).
 * @retval MKRT_ESTATE The previous search has not finished.
 * @retval MKRT_ECLOSED The runtime is being destroyed.
 * @return The status, as listed.
 * @par Thread safety
 * One thread at a time per traversal; different traversals from any
 * threads at once.
 */
mkrt_status mkrt_traversal_start(mkrt_traversal *t, uint32_t root, mkrt_error *err);

/**
 * @brief Starts a PageRank run with these parameters; returns at once.
 *
 * mkrt_traversal_start(t, 0, err) is this call with every parameter 0
 * (the defaults). Wait for it with mkrt_traversal_wait().
 *
 * @param t The traversal (a PageRank).
 * @param p The parameters; NULL: the defaults.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Started.
 * @retval MKRT_EINVAL t is NULL; the damping is not 0 and not in (0, 1);
 *         the tolerance is negative or NaN.
 * @retval MKRT_ENOTSUP t is not a PageRank traversal.
 * @retval MKRT_ESTATE The previous run has not finished.
 * @retval MKRT_ECLOSED The runtime is being destroyed.
 * @return The status, as listed.
 * @par Thread safety
 * As mkrt_traversal_start().
 */
mkrt_status mkrt_traversal_start_pagerank(mkrt_traversal *t, const mkrt_pagerank_params *p, mkrt_error *err);

/**
 * @brief Waits until the search started last has finished.
 *
 * Helps the dispatcher while it is idle (as mkrt_wait()).
 *
 * @param t The traversal.
 * @param timeout_ns Nanoseconds; ::MKRT_TIMEOUT_INFINITE waits for ever, 0 polls.
 * @retval MKRT_OK Finished: mkrt_traversal_read() sees the result.
 * @retval MKRT_ETIMEDOUT Not finished by the deadline (it goes on), or
 *         mkrt_destroy() timed out and cut the search short.
 * @retval MKRT_ECLOSED The runtime stopped before it finished.
 * @retval MKRT_EINVAL t is NULL.
 * @return The status, as listed.
 */
mkrt_status mkrt_traversal_wait(mkrt_traversal *t, uint64_t timeout_ns);

/**
 * @brief Copies the result of the finished search for count vertices
 *        from first on.
 *
 * BFS: depths; SSSP: distances; UINT64_MAX for a vertex not reached.
 * CC: each vertex's label (the smallest vertex of its component).
 *
 * @param t The traversal.
 * @param first The first vertex.
 * @param count How many.
 * @param out Room for count values.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Copied.
 * @retval MKRT_EINVAL A NULL argument, or the range is not within the graph.
 * @retval MKRT_ENOTSUP A PageRank traversal (mkrt_traversal_read_ranks()).
 * @retval MKRT_ESTATE Never started, or still running.
 * @return The status, as listed.
 */
mkrt_status mkrt_traversal_read(const mkrt_traversal *t, uint32_t first, size_t count, uint64_t *out,
                                mkrt_error *err);

/**
 * @brief Copies the BFS tree of the finished search.
 *
 * Each vertex's parent (the root's is itself), UINT32_MAX where not reached.
 *
 * @param t The traversal (a BFS).
 * @param first The first vertex.
 * @param count How many.
 * @param out Room for count parents.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Copied.
 * @retval MKRT_ENOTSUP Not a BFS traversal.
 * @retval MKRT_EINVAL A NULL argument, or the range is not within the graph.
 * @retval MKRT_ESTATE Never started, or still running.
 * @return The status, as listed.
 */
mkrt_status mkrt_traversal_parents(const mkrt_traversal *t, uint32_t first, size_t count, uint32_t *out,
                                   mkrt_error *err);

/**
 * @brief Copies the PageRank scores of the finished run for count
 *        vertices from first on.
 *
 * @param t The traversal (a PageRank).
 * @param first The first vertex.
 * @param count How many.
 * @param out Room for count scores.
 * @param iterations Receives the iterations the run took; may be NULL.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Copied.
 * @retval MKRT_ENOTSUP Not a PageRank traversal (mkrt_traversal_read()).
 * @retval MKRT_EINVAL A NULL argument, or the range is not within the graph.
 * @retval MKRT_ESTATE Never started, or still running.
 * @return The status, as listed.
 */
mkrt_status mkrt_traversal_read_ranks(const mkrt_traversal *t, uint32_t first, size_t count, double *out,
                                      uint32_t *iterations, mkrt_error *err);

/**
 * @brief The traversal's work counters since it was opened.
 *
 * @param t The traversal.
 * @param out Filled with relaxed snapshots (any time).
 * @retval MKRT_OK Filled.
 * @retval MKRT_EINVAL t or out is NULL.
 * @return The status, as listed.
 */
mkrt_status mkrt_traversal_stats_read(const mkrt_traversal *t, mkrt_traversal_stats *out);

/**
 * @brief Closes a finished traversal.
 *
 * Its memory is kept for the next mkrt_traversal_open() and freed by
 * mkrt_destroy() (as are traversals left open); the handle is not used
 * again.
 *
 * @param t The traversal.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Closed.
 * @retval MKRT_ESTATE Its search is still running (wait for it first).
 * @retval MKRT_EINVAL t is NULL.
 * @return The status, as listed.
 */
mkrt_status mkrt_traversal_close(mkrt_traversal *t, mkrt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_GRAPH_H */
