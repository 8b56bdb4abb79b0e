/* SPDX-License-Identifier: BSD-2-Clause */
/* base/cpus.c - the CPUs available to the process.
 *
 * Not the CPUs online: a container, a cgroup cpuset or `taskset` often
 * gives the process fewer, and sizing a pool by the online count then
 * oversubscribes the ones it has. */
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

#include "base/cpus.h"

#ifdef MKRT_TEST_HOOKS
static _Atomic uint32_t override_n;
#endif

uint32_t mkrt__cpus_available(void)
{
#ifdef MKRT_TEST_HOOKS
    /* relaxed: a test sets it before it creates the runtime that reads it. */
    uint32_t o = atomic_load_explicit(&override_n, memory_order_relaxed);
    if (o != 0)
        return o;
#endif
    /* Linux call (C11 has none): the calling thread's affinity mask, which
     * threads it starts inherit. */
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0)
            return (uint32_t)n;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN); /* POSIX: the fallback */
    return online > 0 ? (uint32_t)online : 1;
}

#ifdef MKRT_TEST_HOOKS
void mkrt__cpus_override(uint32_t n)
{
    /* relaxed: see mkrt__cpus_available. */
    atomic_store_explicit(&override_n, n, memory_order_relaxed);
}
#endif

size_t mkrt__l2_bytes(void)
{
    /* sysconf's cache sizes are glibc's (C11 and POSIX have none); where
     * it does not know (0, -1), the caller keeps its default. */
#ifdef _SC_LEVEL2_CACHE_SIZE
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? (size_t)l2 : 0;
#else
    return 0;
#endif
}
