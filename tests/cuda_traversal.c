/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/cuda_traversal.c - on a real GPU (skipped without one): the public
 * traversals on the megakernel (tests/test_device_traversal.c's checks,
 * with the driver the machine has): BFS, SSSP, CC and PageRank equal to
 * the serial references and the CPU engine, ten at once, on a graph of
 * 2000 and of 2^18 vertices. */
#define DEVICE_TRAVERSAL_REAL_GPU 1
#include "test_device_traversal.c"
