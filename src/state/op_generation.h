/* SPDX-License-Identifier: BSD-2-Clause */
/* src/state/op_generation.h - the generation of the op call running on a
 * thread. Every floor that calls op functions (ops/op_exec.c, and the
 * graph engine's apply.c) starts and ends calls with it, so it lives
 * below them all. */
#ifndef MKRT_STATE_OP_GENERATION_H
#define MKRT_STATE_OP_GENERATION_H

#include <stdint.h>

/* Which op run is live on a thread (mkrt_op_ctx.generation): each call
 * of an op function gets a generation unique in the process (a tag the
 * thread takes once, in the high word, and a count in the low word), set
 * here for the call's duration; the mkrt_op_* calls accept a context only
 * when its generation equals the thread's live one (ops/op_emit.c). Plain
 * thread-locals: only the owning thread reads or writes them. */
extern _Thread_local uint64_t mkrt__op_live; /* 0: no op runs on this thread */
extern _Thread_local uint64_t mkrt__op_last; /* the last generation given out here */
uint64_t mkrt__op_generation_refill(void);   /* a fresh tag (first op, or the count wrapped) */

/* Starts a call of an op function: its generation, now the thread's live
 * one. The caller stores it in the ctx and restores the value it returned
 * in *outer with mkrt__op_end when the call returned. */
static inline uint64_t mkrt__op_begin(uint64_t *outer)
{
    uint64_t g = mkrt__op_last + 1;
    if (__builtin_expect((uint32_t)g == 0, 0))
        g = mkrt__op_generation_refill();
    mkrt__op_last = g;
    *outer = mkrt__op_live;
    mkrt__op_live = g;
    return g;
}

static inline void mkrt__op_end(uint64_t outer)
{
    mkrt__op_live = outer;
}

#endif
