/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/cuda_graph.c - on a real GPU (skipped without one): traversals on
 * the device (tests/test_graph_device.c's checks, with the driver the
 * machine has): SSSP and BFS against Dijkstra and the CPU pool, one batch
 * per traversal, a small queue, mixed update batches, and a graph of 2^18
 * vertices, with the cells in mapped host memory and in device memory. */
#define GRAPH_DEVICE_REAL_GPU 1
#include "test_graph_device.c"
