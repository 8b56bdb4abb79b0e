/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/cpu_runtime.h - what the tests that check who planned (test_roam,
 * test_units) share: a runtime on the CPU pool, and a wait for its items
 * without mkrt_wait or mkrt_drain (a thread inside those takes the
 * planning token itself). */
#ifndef MKRT_TESTS_CPU_RUNTIME_H
#define MKRT_TESTS_CPU_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "graph_fixture.h"
#include "mkrt/mkrt.h"

/* A CPU-backend runtime of workers threads and cells cells, with g
 * registered as its graph when g is not NULL; bails out on failure. */
mkrt_runtime *test_cpu_runtime(uint32_t workers, uint32_t cells, const test_graph *g);

/* Polls mkrt_stats every 100 us until executed + pruned + failed reaches
 * published; true when it equals published, false past it or after 60 s. */
bool test_completed_all(mkrt_runtime *rt, uint64_t published);

#endif
