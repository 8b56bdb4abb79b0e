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

#ifdef __cplusplus
}
#endif
#endif /* MKRT_GRAPH_H */
