/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/scratch.h - the dedupe scratch of a thread that
 * dispatches (the design card's "per-thread scratch that keeps its
 * capacity"). Each thread that runs the stages owns one: the dispatcher
 * thread the one mkrt_create made (dp->own_scratch), each waiter that
 * helps (mkrt__dispatch_help) its own, by its thread slot (base/rcu.h):
 * made at the thread's first help, kept with its capacity across helps,
 * freed by mkrt_destroy (a thread keeps nothing of a runtime that is
 * gone; a slot, and its scratch, passes to another thread only after its
 * thread exited). dp->scratch names the token holder's; the stages use
 * only that.
 *
 *   layering  the dedupe stage's pass (prune + levels, pipeline/
 *             layer_internal.h) and the levels the split and place
 *             stages read back
 *   split     the split levelling's parts (pipeline/prune.c): a layering
 *             scratch per part, made at the first split, kept
 *   dedupe    ARMS (pipeline/arms.c): the seed's cross-arm detector
 *             (mkrt_dedupe_cross_arm), with its report, arm and mark
 *             arrays, grown on ARMS's first use and only when a batch
 *             outgrows them (no allocation per batch)
 *
 * The levels a batch's place stage reads are the scratch's that levelled
 * it: the batch notes which (levelled_by, level_seq), and a batch placed
 * on another thread (a helper left it prepared, then its backend failed
 * at launch) is levelled again there (pipeline/layer_split.c). */
#ifndef MKRT_PIPELINE_SCRATCH_H
#define MKRT_PIPELINE_SCRATCH_H

#include <stddef.h>
#include <stdint.h>

#include "mkrt/dedupe.h"
#include "mkrt/layer.h"
#include "mkrt/status.h"

typedef struct mkrt__dispatch_scratch {
    mkrt_layer_scratch *layering;
    mkrt_layer_scratch *split[16]; /* MKRT__SPLIT_MAX parts; NULL until used */
    mkrt_dedupe_scratch *dedupe;
    mkrt_cross_arm_pair *pairs; /* item_cap */
    uint8_t *mark;              /* item_cap: ARMS candidates */
    const mkrt_item **arm;      /* arm_cap */
    size_t *arm_len;            /* arm_cap */
    size_t item_cap, arm_cap;
    size_t marked; /* report pairs whose marks are set (pipeline/arms.c) */
    size_t looked; /* items the detector looked at in this batch (0: none) */
    /* Whose levels the layering holds: the dispatch group and its
     * levelling number (dispatch.h, level_seq) of the last batch levelled. */
    const void *levelled_for;
    uint64_t levelled_seq;
} mkrt__dispatch_scratch;

/* An empty scratch (its parts grow on first use); NULL with MKRT_ENOMEM. */
mkrt__dispatch_scratch *mkrt__dispatch_scratch_create(mkrt_error *err);
void mkrt__dispatch_scratch_destroy(mkrt__dispatch_scratch *s);
/* Makes ARMS's arrays hold items and arms (grows, never shrinks);
 * MKRT_ENOMEM leaves them as they were. */
mkrt_status mkrt__dispatch_scratch_reserve_arms(mkrt__dispatch_scratch *s, size_t items, size_t arms,
                                                mkrt_error *err);

#endif
