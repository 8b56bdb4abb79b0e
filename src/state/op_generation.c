/* SPDX-License-Identifier: BSD-2-Clause */
/* src/state/op_generation.c - see op_generation.h. */
#include <stdatomic.h>

#include "state/op_generation.h"

_Thread_local uint64_t mkrt__op_live;
/* Count 0xffffffff: the thread's first op takes a tag (mkrt__op_begin). */
_Thread_local uint64_t mkrt__op_last = 0xffffffffu;

/* Tags handed to threads (the high word of their generations); relaxed:
 * only uniqueness matters. */
static _Atomic uint64_t op_tags;

uint64_t mkrt__op_generation_refill(void)
{
    uint64_t tag = atomic_fetch_add_explicit(&op_tags, 1, memory_order_relaxed) + 1;
    return tag << 32 | 1u; /* count 1: generation 0 means "no op" */
}

