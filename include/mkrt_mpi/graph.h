/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt_mpi/graph.h
 * @brief Distributed BFS and SSSP over the MPI layer (part of libmkrt_mpi).
 *
 * Every rank holds the whole graph (a public ::mkrt_graph, mkrt/graph.h)
 * and owns the vertices the partition gives it; one runtime per rank runs
 * the row scans, and a value for another rank's vertex travels to its
 * owner through the MPI layer (mkrt_mpi.h). BFS is level-synchronous and
 * direction-optimizing (Beamer's rule, mkrt_graph_pull_next() in
 * mkrt/graph.h, on counts summed over the ranks); SSSP is delta-stepping
 * between the ranks with a bucket queue inside each rank. At one rank the
 * engine runs the runtime's own traversals (mkrt_traversal_open()) unless
 * mkrt_mpi_graph_config::own_rounds is set. docs/mpi-scaling.md describes
 * the design and what it costs per level.
 *
 * Every call except mkrt_mpi_graph_rank(), mkrt_mpi_graph_size(),
 * mkrt_mpi_graph_layer(), mkrt_mpi_graph_hub_degree() and
 * mkrt_mpi_graph_levels() is collective: every rank makes it, in the same
 * order, with the same arguments (the same graph on every rank).
 */
#ifndef MKRT_MPI_GRAPH_H
#define MKRT_MPI_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/graph.h"
#include "mkrt/status.h"
#include "mkrt_mpi/mkrt_mpi.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief The parent mkrt_mpi_graph_bfs() gives a vertex it did not reach. */
#define MKRT_MPI_GRAPH_NO_PARENT UINT32_MAX
/** @brief The distance mkrt_mpi_graph_sssp() gives a vertex it did not reach. */
#define MKRT_MPI_GRAPH_UNREACHED UINT64_MAX
/** @brief The largest edge weight SSSP takes (weights 1 to this: each
 *         rank's bucket queue spans it). */
#define MKRT_MPI_GRAPH_WEIGHT_MAX 255u
/** @brief Most BFS levels mkrt_mpi_graph_levels() reports (deeper levels
 *         are summed into the last). */
#define MKRT_MPI_GRAPH_LEVELS 64

/** @brief The distributed engine of one rank. */
typedef struct mkrt_mpi_graph mkrt_mpi_graph;

/** @brief How to open the engine (mkrt_mpi_graph_config_default()). */
typedef struct mkrt_mpi_graph_config {
    unsigned workers;             /**< CPU workers of each rank's runtime; 0: 1. */
    mkrt_mpi_partition partition; /**< How the vertices are split between the ranks. */
    /** The graph holds v -> u for every edge u -> v: BFS may run large
     *  levels bottom-up (unvisited vertices look for a parent in the
     *  frontier through their own rows). false: every level top-down. */
    bool symmetric;
    /** At one rank, run the engine's own levels and rounds instead of the
     *  runtime's traversals (to test or measure them at one rank). */
    bool own_rounds;
    /** SSSP between ranks: the window of distances one round scans; 0: 32. */
    uint32_t delta;
    /** SSSP: a window spans further windows of delta while the global
     *  count of their due vertices stays at most this (default 16384; 0:
     *  every window is one delta wide). */
    uint32_t widen;
} mkrt_mpi_graph_config;

/** @brief Counters of one search, summed over the ranks. */
typedef struct mkrt_mpi_graph_counts {
    /** The search's time on this rank: from the common start to global
     *  quiescence (at one rank with the runtime's traversals: start,
     *  wait and the result's read). */
    double seconds;
    uint64_t edge_items;  /**< Edges the row scans read, all ranks. */
    uint64_t forwarded;   /**< Values sent to another rank (deduplicated per target and sender). */
    uint64_t messages;    /**< MPI messages sent. */
    uint64_t deferred;    /**< Edge items run again because an outbox was full. */
    uint64_t failed;      /**< Runtime items that failed (0 after MKRT_OK). */
    uint64_t bytes;       /**< Bytes of the MPI messages sent. */
    uint64_t bytes_node;  /**< Of them, to ranks on the sender's node. */
    uint64_t collectives; /**< Rank 0's collective calls during the search (waves and sums). */
} mkrt_mpi_graph_counts;

/** @brief One BFS level of the last mkrt_mpi_graph_bfs(), summed over the ranks. */
typedef struct mkrt_mpi_graph_level {
    uint64_t frontier; /**< Vertices expanded. */
    uint64_t scanned;  /**< Edges their rows hold (read by the scans). */
    uint64_t arrivals; /**< Values sent to other ranks (after dedupe). */
    uint64_t bytes;    /**< Bytes of the MPI messages sent. */
    uint64_t messages; /**< MPI messages sent. */
    int bottom_up;     /**< The level ran bottom-up. */
    double seconds;    /**< The level's wall time on this rank. */
} mkrt_mpi_graph_level;

/**
 * @brief The defaults: 1 worker, block partition, not symmetric, the
 *        runtime's traversals at one rank, delta 32, widen 16384.
 * @return The default configuration.
 */
mkrt_mpi_graph_config mkrt_mpi_graph_config_default(void);

/**
 * @brief Opens the engine on this rank (collective): a runtime of its own
 *        with the graph registered, and the MPI layer over it.
 *
 * Initialises MPI when it is not (mkrt_mpi_create()). The graph's arrays
 * are borrowed until mkrt_mpi_graph_close(). The graph is checked as
 * mkrt_graph_register() checks it; weights above
 * ::MKRT_MPI_GRAPH_WEIGHT_MAX or 0 fail mkrt_mpi_graph_sssp() only.
 *
 * g and out are checked on the calling rank alone (see mkrt_mpi_create()).
 * Past them the ranks agree: a rank whose open fails (its runtime, its
 * graph, memory; before its layer exists through
 * mkrt_mpi_create_failed(), after it through the layer) makes every
 * rank's open fail, the others with the same status and a message that
 * names the failing rank.
 *
 * @param g The graph, the same on every rank.
 * @param c The configuration; NULL: mkrt_mpi_graph_config_default().
 * @param out Receives the engine.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Opened.
 * @retval MKRT_EINVAL g or out is NULL, the graph is empty, larger than
 *         ::MKRT_CONFIG_CELLS_MAX - 1 vertices, or not a valid CSR graph
 *         (the message names the vertex or edge).
 * @retval MKRT_ENOMEM Out of memory (the message names the size).
 * @return Another status of mkrt_create() or mkrt_mpi_create().
 */
mkrt_status mkrt_mpi_graph_open(const mkrt_graph *g, const mkrt_mpi_graph_config *c,
                                mkrt_mpi_graph **out, mkrt_error *err);

/**
 * @brief This rank.
 * @param e The engine.
 * @return Its rank, or -1 when e is NULL.
 */
int mkrt_mpi_graph_rank(const mkrt_mpi_graph *e);

/**
 * @brief The ranks.
 * @param e The engine.
 * @return The number of ranks, or 0 when e is NULL.
 */
int mkrt_mpi_graph_size(const mkrt_mpi_graph *e);

/**
 * @brief The MPI layer under the engine, for the caller's reductions
 *        between searches.
 * @param e The engine.
 * @return The layer; NULL when e is NULL or at one rank without
 *         own_rounds (the engine stopped the layer at open: it runs the
 *         runtime's traversals).
 */
mkrt_mpi *mkrt_mpi_graph_layer(mkrt_mpi_graph *e);

/**
 * @brief BFS from root (collective); the tree is gathered to rank 0.
 *
 * The tree is the one the single-process engine builds on a graph with
 * sorted rows: the smallest parent at the shortest depth.
 *
 * @param e The engine.
 * @param root The root, below the graph's vertices.
 * @param parent Rank 0: room for one parent per vertex (the root's is
 *        itself, ::MKRT_MPI_GRAPH_NO_PARENT where unreached); other ranks:
 *        ignored, may be NULL.
 * @param c Receives the search's counters; may be NULL.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Done (on every rank).
 * @retval MKRT_EINVAL e is NULL, root is not a vertex, or parent is NULL
 *         on rank 0 (every rank fails).
 * @retval MKRT_ECLOSED A rank's publish, quiescence or items failed.
 * @return The status, as listed.
 */
mkrt_status mkrt_mpi_graph_bfs(mkrt_mpi_graph *e, uint32_t root, uint32_t *parent,
                               mkrt_mpi_graph_counts *c, mkrt_error *err);

/**
 * @brief SSSP from root over the graph's weights (1 where it has none)
 *        (collective); the distances are gathered to rank 0.
 * @param e The engine.
 * @param root The root, below the graph's vertices.
 * @param dist Rank 0: room for one distance per vertex
 *        (::MKRT_MPI_GRAPH_UNREACHED where unreached); other ranks:
 *        ignored, may be NULL.
 * @param c Receives the search's counters; may be NULL.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Done.
 * @retval MKRT_EINVAL e is NULL, root is not a vertex, dist is NULL on
 *         rank 0, or an edge weight is 0 or above
 *         ::MKRT_MPI_GRAPH_WEIGHT_MAX (the message names the edge).
 * @retval MKRT_ECLOSED A rank's publish, quiescence or items failed (for
 *         example a distance of 2^31 - 4 or more, which an arrival cannot
 *         carry).
 * @return The status, as listed.
 */
mkrt_status mkrt_mpi_graph_sssp(mkrt_mpi_graph *e, uint32_t root, uint64_t *dist,
                                mkrt_mpi_graph_counts *c, mkrt_error *err);

/**
 * @brief The degree from which a vertex is a hub (its top-down row scan
 *        is split over the ranks, a 1/P slice each).
 * @param e The engine.
 * @return The degree, or 0 when there are no hubs (one rank) or e is NULL.
 */
uint32_t mkrt_mpi_graph_hub_degree(const mkrt_mpi_graph *e);

/**
 * @brief The levels of the last mkrt_mpi_graph_bfs().
 * @param e The engine.
 * @param out Room for max levels.
 * @param max At most this many are written.
 * @return How many were written (0 when e or out is NULL).
 */
size_t mkrt_mpi_graph_levels(const mkrt_mpi_graph *e, mkrt_mpi_graph_level *out, size_t max);

/**
 * @brief Stops the layer (collective) and the runtime, frees the engine.
 * @param e The engine; NULL does nothing.
 */
void mkrt_mpi_graph_close(mkrt_mpi_graph *e);

#ifdef __cplusplus
}
#endif

#endif
