/* SPDX-License-Identifier: BSD-2-Clause */
/* src/runtime/test_hooks.c - the runtime's test hooks (runtime/test_hooks.h),
 * compiled into the test build only (MKRT_TEST_HOOKS: libmkrt_test.a, which
 * the tests, stress programs and soak link); libmkrt.a and libmkrt.so
 * have none of them. */
#ifdef MKRT_TEST_HOOKS
#include <time.h>

#include "backend/megakernel_backend.h"
#include "graph/traversal.h"
#include "runtime/runtime_internal.h"

/* The dispatcher says it parked, or has stopped. acquire on parked:
 * pairs with its release store in the dispatcher, after which what the
 * batches before the park wrote (stats, last_plan) is visible here; on
 * stopped: pairs with the release store at the dispatcher's exit. */
static bool parked_or_stopped(mkrt_runtime *rt)
{
    return atomic_load_explicit(&rt->dispatch.hooks.parked, memory_order_acquire) ||
           atomic_load_explicit(&rt->dispatch.stopped, memory_order_acquire);
}

/* A hook's poll interval: 100 us. */
static void nap(void)
{
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
}

/* Waits until the dispatcher says it parked (or has stopped). */
static void wait_parked(mkrt_runtime *rt)
{
    while (!parked_or_stopped(rt))
        nap();
}

void mkrt__runtime_hold(mkrt_runtime *rt, bool hold)
{
    /* release: pairs with the dispatcher's acquire loads (test_held); the
     * notify wakes it if it sleeps (base/waitq.h: any store, then notify). */
    atomic_store_explicit(&rt->dispatch.hooks.held, hold, memory_order_release);
    mkrt__waitq_notify(&rt->dispatch.work_wq);
    if (hold)
        wait_parked(rt);
}

void mkrt__runtime_doze(mkrt_runtime *rt, bool doze)
{
    /* release: pairs with the dispatcher's acquire loads (test_dozing). */
    atomic_store_explicit(&rt->dispatch.hooks.dozing, doze, memory_order_release);
    mkrt__waitq_notify(&rt->dispatch.work_wq);
    if (doze)
        wait_parked(rt);
}

void mkrt__runtime_deaf(mkrt_runtime *rt, bool deaf)
{
    /* release: pairs with the dispatcher's acquire loads (test_deaf). */
    atomic_store_explicit(&rt->dispatch.hooks.deaf, deaf, memory_order_release);
    mkrt__waitq_notify(&rt->dispatch.work_wq);
    /* A dispatcher thread that looked at the flag before it was set may
     * be in its stages with the token: wait until it gave it back. Every
     * later take of its looks at the flag first (give_while_deaf heads
     * its loop, await_token's check refuses), so no item published after
     * this returns is dispatched by it (test_roam: once, in CI under
     * ASan, the dispatcher thread ran 100 items published just after). */
    while (deaf && mkrt__dispatch_token_held(&rt->dispatch) && !parked_or_stopped(rt))
        nap();
}

uint64_t mkrt__test_roams(mkrt_runtime *rt)
{
    /* relaxed: see roam_run; the caller saw the items complete. */
    return atomic_load_explicit(&rt->dispatch.hooks.roams, memory_order_relaxed);
}

void mkrt__runtime_destroy_hold(mkrt_runtime *rt, bool hold)
{
    /* release: pairs with the acquire load in mkrt_destroy's wait. */
    atomic_store_explicit(&rt->dispatch.hooks.destroy_held, hold, memory_order_release);
}

void mkrt__runtime_device_stall(mkrt_runtime *rt, uint64_t batches_from_now, uint32_t layer, uint64_t ns)
{
    mkrt__backend *device = mkrt__backends_device(rt->dispatch.backends, rt->dispatch.nbackends);
    if (device != NULL) /* a megakernel device; the hook ignores a GPU */
        mkrt__megakernel_inject_hang(device, batches_from_now, layer, ns);
}

void mkrt__runtime_device_hang(mkrt_runtime *rt, uint64_t batches_from_now, uint32_t layer)
{
    mkrt__runtime_device_stall(rt, batches_from_now, layer, 0);
}
const mkrt__last_plan *mkrt__test_last_plan(mkrt_runtime *rt)
{
    return &rt->dispatch.hooks.last_plan;
}

mkrt__backend *mkrt__test_device(mkrt_runtime *rt)
{
    return mkrt__backends_device(rt->dispatch.backends, rt->dispatch.nbackends);
}

mkrt__backend *mkrt__test_cpu_pool(mkrt_runtime *rt)
{
    return mkrt__backends_cpu_pool(rt->dispatch.backends, rt->dispatch.nbackends);
}

/* acquire (the three below): pairs with the release stores of their
 * writers (the dispatcher's set_parked, the doze hook, mkrt_destroy). */
bool mkrt__test_parked(mkrt_runtime *rt)
{
    return atomic_load_explicit(&rt->dispatch.hooks.parked, memory_order_acquire);
}

bool mkrt__test_dozing(mkrt_runtime *rt)
{
    return atomic_load_explicit(&rt->dispatch.hooks.dozing, memory_order_acquire);
}

bool mkrt__test_closing(mkrt_runtime *rt)
{
    return atomic_load_explicit(&rt->producers.closing, memory_order_acquire);
}

void mkrt__test_completed_add(mkrt_runtime *rt, int64_t delta)
{
    /* seq_cst, as the test's own atomic_fetch_add was: it stands in for a
     * completion the waiters read with acquire. */
    atomic_fetch_add(&rt->dispatch.completed_total, (uint64_t)delta);
}

uint32_t mkrt__test_graph_vertices(mkrt_runtime *rt)
{
    const mkrt_graph *g = mkrt__graph_engine_graph(rt->graph);
    return g != NULL ? g->vertices : 0;
}

void mkrt__test_set_bucket_min(mkrt_runtime *rt, uint64_t min)
{
    mkrt__graph_bucket_min_set(rt->graph, min);
}

uint64_t mkrt__test_far_moved(const mkrt_traversal *t)
{
    return mkrt__traversal_far_moved(t);
}

uint64_t mkrt__test_hub_levels(const mkrt_traversal *t)
{
    return mkrt__traversal_hub_levels(t);
}

bool mkrt__test_frontier_add(mkrt_runtime *rt, uint32_t slot, uint32_t v)
{
    return mkrt__graph_mark(rt->graph, slot, v);
}

uint64_t *mkrt__test_cells(mkrt_runtime *rt)
{
    return rt->state.cells;
}

bool mkrt__test_producer_busy(mkrt_producer *p)
{
    /* seq_cst: as the owner's fetch_or of BUSY (api_internal.h). */
    return (atomic_load(&p->state) & MKRT__PRODUCER_BUSY) != 0;
}

struct mkrt__plan_costs *mkrt__test_plan_costs(mkrt_runtime *rt)
{
    return &rt->dispatch.planner.costs;
}

uint32_t mkrt__test_plan_off(mkrt_runtime *rt)
{
    return rt->dispatch.planner.off;
}

struct mkrt__dispatch_scratch *mkrt__test_own_scratch(mkrt_runtime *rt)
{
    return rt->dispatch.own_scratch;
}

struct mkrt__dispatch_scratch *mkrt__test_helper_scratch(mkrt_runtime *rt)
{
    int slot = mkrt__thread_slot();
    return slot < 0 ? NULL : rt->dispatch.helper_scratch[slot];
}
#else
/* ISO C wants a translation unit to declare something. */
typedef int mkrt__no_test_hooks;
#endif
