/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/deaf_toggler.c - see deaf_toggler.h. */
#include "deaf_toggler.h"

#include "../base/thread.h"
#include "backend/cpu_pool.h"

int deaf_toggler_main(void *p)
{
    deaf_toggler *t = p;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    /* relaxed: a flag; the test's join orders the rest. */
    while (!atomic_load_explicit(&t->stop, memory_order_relaxed)) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        mkrt__cpu_pool_launch_deaf(t->be, x % t->one_in == 0);
        mkrt__thread_sleep_ns(x % t->max_ns);
    }
    mkrt__cpu_pool_launch_deaf(t->be, false);
    return 0;
}
