/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/layer_internal.h - the runtime's layering (pipeline/
 * layer.c): mkrt_layer_batch with commuting items, and with the ordered
 * dedupe in the same pass.
 *
 * Commuting items: key(item) names the item's commuting group (0: none).
 * Items of one group that write one handle, with no other access to it
 * between them in drain order, may share a layer (their op updates the
 * handle atomically); an item whose in equals its out must not be given a
 * group unless its op does not read in. mkrt_layer_batch is this with no
 * key.
 *
 * Pruning: the dedupe rule of mkrt_dedupe_prune_ordered (pipeline/
 * prune_rule.h) needs, per handle, the last kept item that wrote it; the
 * layering keeps a state per handle anyway, so the two share one table and
 * one pass: a pruned item is dropped before it is layered, exactly as if
 * the batch had been pruned first and the kept items layered after. */
#ifndef MKRT_PIPELINE_LAYER_INTERNAL_H
#define MKRT_PIPELINE_LAYER_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "mkrt/dedupe.h"
#include "mkrt/layer.h"

typedef uint32_t (*mkrt__commute_key_fn)(const mkrt_item *item, void *ctx);

mkrt_status mkrt__layer_batch_commuting(mkrt_layer_scratch *s, const mkrt_item *items, size_t n,
                                        mkrt__commute_key_fn key, void *key_ctx,
                                        mkrt_layer_plan *plan, mkrt_error *err);

/* How mkrt__layer_prune_levels reads the items. */
typedef struct mkrt__layer_rules {
    mkrt__commute_key_fn key;             /* commuting group; NULL: none commutes */
    mkrt_dedupe_idempotent_fn idempotent; /* may a duplicate be pruned; NULL: any may */
    void *ctx;                            /* for both */
    bool prune;   /* drop redundant duplicates (mkrt_dedupe_prune_ordered's rule) */
    /* Every item is a built-in op other than the internal EXPAND: key and
     * idempotent are then ops/builtin_ops.h's rules, inlined (the runtime's
     * callbacks give the same answers for those ops; they are not called). */
    bool builtin;
    /* Every handle (in and out) lies in [lo, hi]: the caller knows, and
     * the pass that would find the range is skipped. */
    bool bounded;
    uint32_t lo, hi;
    /* ARMS (pipeline/arms.c), with prune: item i with mark[i] != 0 is
     * skipped when the last kept writer W of its out has its op and in
     * and another param, no kept item wrote its in after W (so in != out),
     * and covered(W, item); *skipped counts them. NULL: nothing marked. */
    const uint8_t *mark;
    bool (*covered)(const mkrt_item *early, const mkrt_item *late);
    size_t *skipped;
} mkrt__layer_rules;

/* Levels items[0..n) (and prunes them first, with rules->prune) in one
 * pass: the kept items are compacted in place, in order, into
 * items[0..*kept); the level of kept item k is (*level)[k], in the
 * scratch; *layers is the number of levels. Then either
 * mkrt__layer_plan_csr or mkrt__layer_scatter. MKRT_ENOMEM (scratch growth)
 * leaves items as they were. */
mkrt_status mkrt__layer_prune_levels(mkrt_layer_scratch *s, mkrt_item *items, size_t n,
                                     const mkrt__layer_rules *rules, size_t *kept, size_t *layers,
                                     const uint32_t **level, mkrt_error *err);

/* The CSR form (mkrt_layer_plan) of the last levelling of n items in
 * `layers` levels. */
void mkrt__layer_plan_csr(mkrt_layer_scratch *s, size_t n, size_t layers, mkrt_layer_plan *plan);

/* The layer offsets of the last levelling of n items in `layers` levels:
 * offsets[0..layers], layer l holding offsets[l + 1] - offsets[l] items.
 * From the counts the pass left in the scratch: call it after
 * mkrt__layer_prune_levels and before anything else uses the scratch. */
void mkrt__layer_count(mkrt_layer_scratch *s, size_t n, size_t layers, uint32_t *offsets);

/* Copies items[0..n) (the last levelling's items) into out[] layer by
 * layer, in order within a layer, at the offsets mkrt__layer_count wrote
 * (layer l is out[offsets[l] .. offsets[l + 1])). */
void mkrt__layer_scatter(mkrt_layer_scratch *s, const mkrt_item *items, size_t n, size_t layers,
                         mkrt_item *out, const uint32_t *offsets);

/* The split levelling (pipeline/prune.c): the levelling of a large batch
 * in `parts` contiguous parts on as many executors, each part in a
 * scratch of its own, exact or not at all. Each part levels its items
 * against its own handle table and claims every handle it touches in the
 * whole's owner array; when no handle was touched by two parts, every
 * item met exactly the handle states the one pass gives it, and the merge
 * (the kept items and their levels in part order, the counts added) is
 * the one pass's result. Otherwise the items are unchanged and the caller
 * runs the one pass. Batches whose bounded handle range is at most
 * max(4n, 65536) (the owner array is by handle), pruning (the dedupe
 * stage's) only; a part indexes its own table directly where the range is
 * at most 4 entries per item of the part, else by hash, so the parts'
 * tables hold at most 128 bytes per item of the batch together. */
#define MKRT__SPLIT_MAX 16

typedef struct mkrt__layer_split {
    mkrt_layer_scratch *whole;                 /* the result's: levels, counts, owners */
    mkrt_layer_scratch *part[MKRT__SPLIT_MAX]; /* one per part: its table and counts */
    mkrt_item *items;                          /* levelled in place, at the merge */
    mkrt_item *out;                            /* n items: the parts' kept items */
    size_t n, range;
    uint32_t parts;
    /* Trust the parts' handle ranges alone: no claims in the owner array
     * (an exchange per handle, about a tenth of a part's time); the merge
     * takes the split only where no two ranges overlap. Set by begin. */
    bool ranges;
    /* Set by end: the parts' handle ranges did not overlap (with claims
     * or without), so the next split of the shape may trust them. */
    bool disjoint;
    mkrt__layer_rules rules;
    _Atomic uint32_t next; /* part claims */
    /* per part, written by its executor, read after the join */
    size_t kept[MKRT__SPLIT_MAX], skipped[MKRT__SPLIT_MAX];
    uint32_t levels[MKRT__SPLIT_MAX];
    uint64_t ns[MKRT__SPLIT_MAX];
    bool ok[MKRT__SPLIT_MAX], conflict[MKRT__SPLIT_MAX];
    uint32_t min[MKRT__SPLIT_MAX], max[MKRT__SPLIT_MAX]; /* the handles each part touched */
} mkrt__layer_split;

/* false: not split (too few items, not direct, out of memory). ranges:
 * see mkrt__layer_split.ranges. */
bool mkrt__layer_split_begin(mkrt__layer_split *sp, mkrt_layer_scratch *whole, mkrt_layer_scratch *const *part,
                             uint32_t parts, mkrt_item *items, mkrt_item *out, size_t n,
                             const mkrt__layer_rules *rules, bool ranges);
/* An executor's share (backend.h run_task's fn): claims parts until none
 * is left. */
void mkrt__layer_split_run(void *ctx, uint32_t executor);
/* After every executor returned: true and the one pass's *kept, *layers,
 * *skipped (then mkrt__layer_count / _scatter as after
 * mkrt__layer_prune_levels on the whole); false: a handle crossed parts,
 * or (ranges) two parts' handle ranges overlapped, or a part ran out of
 * memory; items unchanged. */
bool mkrt__layer_split_end(mkrt__layer_split *sp, size_t *kept, size_t *layers, size_t *skipped);

#endif
