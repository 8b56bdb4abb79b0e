/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/barrier_internal.h - scratch layout shared by the barrier and
 * frontier planners. */
#ifndef MKRT_SRC_BARRIER_INTERNAL_H
#define MKRT_SRC_BARRIER_INTERNAL_H

#include "mkrt/barrier.h"

struct mkrt_barrier_scratch {
    size_t *outgoing_counts; /* wave_cap: per-wave out-degree, then CSR write cursor */
    size_t *indegree;        /* wave_cap */
    size_t *offsets;         /* wave_cap + 1: CSR row pointers */
    size_t *order;           /* wave_cap: scheduled waves = ready layers back to back */
    size_t *group_offsets;   /* wave_cap + 1: Kahn group boundaries */
    size_t *split_offsets;   /* wave_cap + 1: boundaries after the frontier budget split */
    size_t wave_cap;
    size_t *targets;         /* dep_cap: CSR column indices */
    size_t dep_cap;
};

#endif
