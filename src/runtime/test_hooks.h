/* SPDX-License-Identifier: BSD-2-Clause */
/* src/runtime/test_hooks.h - the test build's hooks and accessors
 * (MKRT_TEST_HOOKS, compiled into libmkrt_test.a by runtime/test_hooks.c,
 * never into the installed library). Tests reach the runtime's internals
 * through these calls, not through the runtime struct's fields. */
#ifndef MKRT_RUNTIME_TEST_HOOKS_H
#define MKRT_RUNTIME_TEST_HOOKS_H

#ifdef MKRT_TEST_HOOKS
#include <stdbool.h>
#include <stdint.h>

#include "backend/backend.h"
#include "mkrt/graph.h"
#include "mkrt/runtime.h"
#include "pipeline/test_hooks.h"

/* Test hook: hold(true) returns once the dispatcher has finished its
 * current batch and parked; items then wait in the rings. Releasing
 * restarts the round robin at slot 0, so items published during the hold
 * form one batch in slot order. Aborts ignore holds. */
void mkrt__runtime_hold(mkrt_runtime *rt, bool hold);

/* Test hook: doze(true) returns once the dispatcher thread has parked
 * between batches and given the dispatch token back; until doze(false)
 * only helping waiters (mkrt_wait, mkrt_drain) run batches. */
void mkrt__runtime_doze(mkrt_runtime *rt, bool doze);

/* Test hook: while deaf, the dispatcher thread takes the dispatch token
 * only to shut down; it still runs its share of batches as a member of
 * the CPU pool, and the pool's threads take the token and dispatch (a
 * runtime without a device). deaf(true) returns once the token is not
 * held by the dispatcher thread or a waiter (or the dispatcher parked
 * for a hold, or stopped): no item published after it is dispatched by
 * the dispatcher thread. */
void mkrt__runtime_deaf(mkrt_runtime *rt, bool deaf);
/* Times a CPU pool thread took the dispatch token. */
uint64_t mkrt__test_roams(mkrt_runtime *rt);

/* Test hook (MKRT_BACKEND_SIM): the simulated device hangs in its n-th
 * batch from now, after `layer` layers. Call while the runtime is held or
 * idle, before publishing that batch. */
void mkrt__runtime_device_hang(mkrt_runtime *rt, uint64_t batches_from_now, uint32_t layer);
/* ... and the same, but slow instead of hung: the op at that point takes
 * ns without looking at shutdown, then the batch carries on. */
void mkrt__runtime_device_stall(mkrt_runtime *rt, uint64_t batches_from_now, uint32_t layer, uint64_t ns);

/* Test hook: mkrt_destroy waits, after it set closing and before it
 * closes the rings, while the flag is set. */
void mkrt__runtime_destroy_hold(mkrt_runtime *rt, bool hold);

/* Accessors for tests (test_hooks.c): what a test may look at or poke. */
/* The plan of the last batch that ran; read it while the dispatcher is
 * held or after a drain (the complete stage writes it). */
const mkrt__last_plan *mkrt__test_last_plan(mkrt_runtime *rt);
/* The device backend (NULL: none) and the CPU pool. */
mkrt__backend *mkrt__test_device(mkrt_runtime *rt);
mkrt__backend *mkrt__test_cpu_pool(mkrt_runtime *rt);
/* The dispatcher parked for a hold or a doze; a doze is asked. */
bool mkrt__test_parked(mkrt_runtime *rt);
bool mkrt__test_dozing(mkrt_runtime *rt);
/* mkrt_destroy has begun (closing is set). */
bool mkrt__test_closing(mkrt_runtime *rt);
/* Adds delta to the runtime-wide completion count (a racing producer's
 * completion, stood in for by hand). */
void mkrt__test_completed_add(mkrt_runtime *rt, int64_t delta);
/* The registered graph's vertex count (0: none). */
uint32_t mkrt__test_graph_vertices(mkrt_runtime *rt);
/* RELAX's distance buckets are used by levels of this many vertices or
 * more (set before the first producer opens). */
void mkrt__test_set_bucket_min(mkrt_runtime *rt, uint64_t min);
/* Far's vertices the traversal's bucket restores moved (graph/round.c). */
uint64_t mkrt__test_far_moved(const mkrt_traversal *t);
/* Levels of hubs' whole rows the traversal ran (graph/round.c). */
uint64_t mkrt__test_hub_levels(const mkrt_traversal *t);
/* As an op that set v's frontier bit in the lane would (graph/engine.h,
 * mkrt__graph_mark). */
bool mkrt__test_frontier_add(mkrt_runtime *rt, uint32_t slot, uint32_t v);
/* The host's cells array. */
uint64_t *mkrt__test_cells(mkrt_runtime *rt);
/* The producer's owner is inside a call (MKRT__PRODUCER_BUSY). */
bool mkrt__test_producer_busy(mkrt_producer *p);
/* The plan's measured costs (plan/decide.h), to set while the
 * dispatcher is held, and the decisions turned off. */
struct mkrt__plan_costs *mkrt__test_plan_costs(mkrt_runtime *rt);
uint32_t mkrt__test_plan_off(mkrt_runtime *rt);
/* The dispatcher thread's own dedupe scratch (pipeline/scratch.h), and
 * the calling thread's as a helping waiter (NULL: it never helped). */
struct mkrt__dispatch_scratch *mkrt__test_own_scratch(mkrt_runtime *rt);
struct mkrt__dispatch_scratch *mkrt__test_helper_scratch(mkrt_runtime *rt);
#endif

#endif
