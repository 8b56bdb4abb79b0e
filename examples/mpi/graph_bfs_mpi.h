/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/mpi/graph_bfs_mpi.h - graph_bfs's distributed mode (built when
 * MPI is found; examples/graph_bfs.c calls it when started by mpirun). */
#ifndef MKRT_EXAMPLES_GRAPH_BFS_MPI_H
#define MKRT_EXAMPLES_GRAPH_BFS_MPI_H

#include <stdint.h>

#include "../graph500/traverse.h"
#include "mkrt_mpi/graph.h"

/** The distributed engine's configuration for the kit's graphs (their
 *  CSR is symmetric): `threads` workers per rank, and from the environment
 *  MKRT_MPI_PARTITION=hash (default block), TMPI_LOCAL=0 (the engine's own
 *  rounds at one rank), TMPI_DELTA and TMPI_WIDEN (SSSP's window). Also
 *  used by bench/mpi_bench.c. */
mkrt_mpi_graph_config graph_bfs_mpi_config(unsigned threads);
/** The kit's CSR as the public graph type (the same arrays). */
mkrt_graph graph_bfs_mpi_graph(const g500_csr *g);

/** Generates the Kronecker graph on every rank, partitions the vertices
 *  between the ranks (block), runs BFS and SSSP from `roots` roots through
 *  libmkrt_mpi, gathers each result to rank 0 and checks it there by the
 *  Graph500 rules and against the sequential reference; rank 0 prints the
 *  TEPS and the share of edge items forwarded. threads: workers per rank
 *  (0: 1). Returns the exit status: 0 when every result passed, 1 when
 *  one failed or the setup did (on rank 0; other ranks return 0 unless
 *  their own setup failed). */
int graph_bfs_mpi(uint32_t scale, uint32_t edgefactor, uint32_t roots, unsigned threads,
                  uint64_t seed);

#endif
