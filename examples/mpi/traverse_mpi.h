/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/mpi/traverse_mpi.h - the distributed BFS/SSSP engine over
 * libmkrt_mpi (examples/mpi/traverse_mpi.c), used by graph_bfs's
 * distributed mode and bench/mpi_bench.c. Every call is collective: every
 * rank makes it with the same arguments. */
#ifndef MKRT_EXAMPLES_TRAVERSE_MPI_H
#define MKRT_EXAMPLES_TRAVERSE_MPI_H

#include <stddef.h>
#include <stdint.h>

#include "../graph500/traverse.h"
#include "mkrt_mpi/mkrt_mpi.h"

typedef struct tmpi_engine tmpi_engine;

/** Counters of one traversal, summed over the ranks. */
typedef struct tmpi_counts {
    uint64_t edge_items; /* edges scanned (BFS) or edge items emitted (SSSP), all ranks, retries excluded */
    uint64_t forwarded;  /* arrivals sent to another rank (deduplicated per target and sender) */
    uint64_t messages;   /* MPI messages sent */
    uint64_t deferred;   /* edge items run again because an outbox was full */
    uint64_t failed;     /* items that failed (must be 0) */
    uint64_t bytes;      /* bytes of the MPI messages sent (all ranks) */
    uint64_t bytes_node; /* of them, to ranks on the sender's node */
    uint64_t collectives; /* rank 0's collective calls between the start and the end (waves and sums) */
} tmpi_counts;

/** One BFS level of the last tmpi_bfs(), summed over the ranks. */
typedef struct tmpi_level {
    uint64_t frontier; /* vertices expanded */
    uint64_t scanned;  /* edges their rows hold */
    uint64_t arrivals; /* arrivals sent to other ranks (after dedupe) */
    uint64_t bytes;    /* bytes of the MPI messages sent */
    uint64_t messages; /* MPI messages sent */
    int bottom_up;     /* the level ran bottom-up (PULL items) */
    double seconds;    /* the level's wall time on this rank (rank 0: from its frontier scan to the level's end) */
} tmpi_level;

/** Most levels tmpi_levels() reports (deeper levels are summed into the last). */
#define TMPI_LEVELS 64

/** Opens the engine on every rank for graph g (the same graph everywhere):
 *  one runtime of `threads` workers (0: 1) and the MPI layer, vertices
 *  split by `partition`. NULL with a message in why on failure. */
tmpi_engine *tmpi_open(const g500_csr *g, unsigned threads, mkrt_mpi_partition partition,
                       char *why, size_t why_len);
/** This rank and the ranks. */
int tmpi_rank(const tmpi_engine *e);
int tmpi_size(const tmpi_engine *e);
/** The layer, for reductions; NULL at one rank, where the engine runs the
 *  runtime's traversals and stops the layer after tmpi_open(). */
mkrt_mpi *tmpi_layer(tmpi_engine *e);
/** BFS from root: on rank 0, parent[] of every vertex (scratch elsewhere);
 *  *seconds the traversal's time (seed to global quiescence). 0, or -1
 *  with why. */
int tmpi_bfs(tmpi_engine *e, uint32_t root, uint32_t *parent, double *seconds, tmpi_counts *c,
             char *why, size_t why_len);
/** SSSP from root: on rank 0, dist[] (G500_INF unreached). */
int tmpi_sssp(tmpi_engine *e, uint32_t root, uint64_t *dist, double *seconds, tmpi_counts *c,
              char *why, size_t why_len);
/** The degree from which a vertex is a hub (its top-down row scan is split
 *  over the ranks, a 1/P slice each), or 0 when there are none (1 rank). */
uint32_t tmpi_hub_degree(const tmpi_engine *e);
/** The levels of the last tmpi_bfs() (at most max, into out); returns how many. */
size_t tmpi_levels(const tmpi_engine *e, tmpi_level *out, size_t max);
/** Stops the layer (collective) and the runtime. */
void tmpi_close(tmpi_engine *e);

#endif
