/* SPDX-License-Identifier: BSD-2-Clause */
/* base/cpus.h - how many CPUs this process may run on (see cpus.c). */
#ifndef MKRT_BASE_CPUS_H
#define MKRT_BASE_CPUS_H

#include <stddef.h>
#include <stdint.h>

/* CPUs in the process's affinity mask (at least 1), or the test
 * override when one is set. */
uint32_t mkrt__cpus_available(void);

/* One core's L2 cache in bytes, or 0 where the system does not say. */
size_t mkrt__l2_bytes(void);

#ifdef MKRT_TEST_HOOKS
/* Test hook: mkrt__cpus_available() returns n from now on (0: the machine
 * again). Lets a test check the worker count for a CPU count the test
 * machine does not have, without changing its affinity. */
void mkrt__cpus_override(uint32_t n);
#endif

#endif
