/* SPDX-License-Identifier: BSD-2-Clause */
/* src/runtime/test_hooks.c - the runtime's test hooks (runtime_internal.h),
 * compiled into the test build only (MKRT_TEST_HOOKS: libmkrt_test.a, which
 * the tests, stress programs and soak link); libmkrt.a and libmkrt.so
 * have none of them. */
#ifdef MKRT_TEST_HOOKS
#include <time.h>

#include "backend/megakernel_backend.h"
#include "runtime/runtime_internal.h"

/* Waits until the dispatcher says it parked (or has stopped). acquire on
 * parked: pairs with its release store in the dispatcher, after which what
 * the batches before the park wrote (stats, last_plan) is visible here;
 * on stopped: pairs with the release store at the dispatcher's exit. */
static void wait_parked(mkrt_runtime *rt)
{
    while (!atomic_load_explicit(&rt->dispatch.hooks.parked, memory_order_acquire) &&
           !atomic_load_explicit(&rt->dispatch.stopped, memory_order_acquire)) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
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

void mkrt__runtime_destroy_hold(mkrt_runtime *rt, bool hold)
{
    /* release: pairs with the acquire load in mkrt_destroy's wait. */
    atomic_store_explicit(&rt->dispatch.hooks.destroy_held, hold, memory_order_release);
}

void mkrt__runtime_device_hang(mkrt_runtime *rt, uint64_t batches_from_now, uint32_t layer)
{
    mkrt__backend *device = mkrt__backends_device(rt->dispatch.backends, rt->dispatch.nbackends);
    if (device != NULL) /* a megakernel device; the hook ignores a GPU */
        mkrt__megakernel_inject_hang(device, batches_from_now, layer);
}
#else
/* ISO C wants a translation unit to declare something. */
typedef int mkrt__no_test_hooks;
#endif
