/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/graph/peers.h - the peer engines bench/graph_bench.c runs beside
 * mkrt's, each built only when its library is installed (the Makefile
 * defines HAVE_GRAPHBLAS / HAVE_IGRAPH after a test compile). */
#ifndef MKRT_BENCH_GRAPH_PEERS_H
#define MKRT_BENCH_GRAPH_PEERS_H

#include "../../examples/graph500/traverse.h"

#ifdef HAVE_GRAPHBLAS
/* SuiteSparse:GraphBLAS (graphblas_engine.c). */
extern const traverse_ops traverse_graphblas_ops;
#endif
#ifdef HAVE_IGRAPH
/* igraph (igraph_engine.c), sequential. */
extern const traverse_ops traverse_igraph_ops;
#endif

#endif
