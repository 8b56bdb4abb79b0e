/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/test_hooks.h - the test hooks group (test builds only,
 * MKRT_TEST_HOOKS; set through runtime/test_hooks.c). Each flag is stored
 * with release by its setter and loaded with acquire by the thread that
 * acts on it. */
#ifndef MKRT_PIPELINE_TEST_HOOKS_H
#define MKRT_PIPELINE_TEST_HOOKS_H

#ifdef MKRT_TEST_HOOKS
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/batch.h"

/* The plan of the last batch that ran (written by the complete stage
 * before it publishes completion; read after a drain). */
typedef struct mkrt__last_plan {
    mkrt__batch_plan plan; /* participants points into the batch: use the copy */
    uint32_t participants[8];
    size_t layers, items;
    bool layered; /* exec was moved into layer order (the place stage) */
} mkrt__last_plan;

typedef struct mkrt__test_hooks {
    _Atomic bool held;     /* the dispatcher parks between batches */
    _Atomic bool parked;   /* ... and says so here */
    _Atomic bool destroy_held; /* mkrt_destroy waits after setting closing,
                                * before it closes the rings */
    _Atomic bool dozing;   /* the dispatcher parks without the token */
    /* The dispatcher thread takes the token only to shut down (it still
     * serves as a pool member): the pool's threads dispatch. */
    _Atomic bool deaf;
    _Atomic uint64_t roams; /* times a pool thread took the token */
    mkrt__last_plan last_plan;
} mkrt__test_hooks;
#endif

#endif
