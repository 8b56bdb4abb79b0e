/* SPDX-License-Identifier: BSD-2-Clause */
/* src/backend/cpu_pool.h - the CPU worker pool backend (see cpu_pool.c). */
#ifndef MKRT_BACKEND_CPU_POOL_H
#define MKRT_BACKEND_CPU_POOL_H

#include "backend/backend.h"
#include "state/state.h"


/* Starts a pool of `workers` executors (workers - 1 threads and the
 * thread that holds the dispatch token) for batches of up to max_batch
 * items. roam (NULL: none; else kept, constant, until stop): the dispatch
 * token's hooks, for a runtime whose only backend the pool is: its
 * threads then take the token when it is free, and the dispatcher thread
 * serves as a member while it does not hold it (backend.h). */
mkrt_status mkrt__cpu_pool_start(mkrt__state *sg, uint32_t workers, uint32_t max_batch, const mkrt__roam *roam,
                                 mkrt__backend **out, mkrt_error *err);

#ifdef MKRT_TEST_HOOKS
/* Test hook: cross-thread layer barriers the pool's workers have crossed
 * (one per barrier, however many workers took part). */
uint64_t mkrt__cpu_pool_barriers(const mkrt__backend *be);
/* Test hook: pool threads that entered a planning task (run_task). */
uint64_t mkrt__cpu_pool_task_entries(const mkrt__backend *be);
/* Test hook: while deaf, the pool threads enter no task (as if asleep). */
void mkrt__cpu_pool_task_deaf(mkrt__backend *be, bool deaf);
/* Test hook: while deaf, the pool threads enter no batch's launch and
 * join no run of levels (as if asleep or without a CPU). */
void mkrt__cpu_pool_launch_deaf(mkrt__backend *be, bool deaf);
/* Test hook: level ends of runs of levels that found a thread still in
 * the level's parts (the level barrier promises none). */
uint64_t mkrt__cpu_pool_level_overlaps(const mkrt__backend *be);
/* Test hook: a level's last arriver pauses ns (0: not) after it moved
 * the generation, before it reopens the word. */
void mkrt__cpu_pool_reopen_gap(mkrt__backend *be, uint64_t ns);
#endif

#endif
