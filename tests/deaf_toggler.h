/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/deaf_toggler.h - a thread that switches the CPU pool threads'
 * deafness to launches (mkrt__cpu_pool_launch_deaf) at random, every few
 * microseconds, until told to stop: launches and runs of levels that
 * none, some or all of them enter. */
#ifndef MKRT_TESTS_DEAF_TOGGLER_H
#define MKRT_TESTS_DEAF_TOGGLER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend/backend.h"

typedef struct deaf_toggler {
    mkrt__backend *be; /* the pool (mkrt__test_cpu_pool) */
    uint32_t one_in;   /* deaf for 1 in one_in of the switches */
    uint64_t max_ns;   /* the longest time between two switches */
    _Atomic bool stop; /* set by the test; the thread then hears again and returns */
} deaf_toggler;

/* The thread's function (mkrt__thread_start), on a deaf_toggler. */
int deaf_toggler_main(void *p);

#endif
