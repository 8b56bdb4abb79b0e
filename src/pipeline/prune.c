/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/prune.c - stage dedupe: prunes only the duplicates that
 * cannot change the result (the ordering contract, with the op table's
 * idempotence rule) and skips the redundant arms ARMS marked where that
 * is legal (pipeline/arms.c), compacting items[0..kept) in place, and
 * levels the kept items in the same pass (pipeline/layer_internal.h: both
 * need the last writer of each handle; one table, one pass). Out of
 * memory (the layering scratch could not grow) runs the batch unpruned
 * and unskipped, b->layers 0: the split stage then runs every item as a
 * layer of its own. The scratch is the token holder's own (pipeline/
 * scratch.h). */
#include "pipeline/layer_internal.h"
#include "pipeline/stages.h"
#include "pipeline/dispatch.h"

/* Levels items[0..n) of b in the holder's scratch (and prunes them with
 * prune, skipping what ARMS marked where legal: *skipped); false: out of
 * memory, nothing changed. */
static bool level(mkrt__dispatch *dp, mkrt__batch *b, size_t n, bool prune, const uint8_t *mark, size_t *skipped,
                  size_t *kept, size_t *layers)
{
    /* A batch of built-in ops (no user op, not a frontier round) takes the
     * built-ins' rules inline; the callbacks give the same answers. */
    const mkrt__layer_rules rules = {mkrt__item_commute_key, mkrt__item_idempotent, dp->state, prune,
                                     b->user_ops == 0 && !b->source->made, true, b->handle_lo, b->handle_hi,
                                     mark, mkrt__arm_covered, skipped};
    mkrt_error err;
    const uint32_t *lv;
    if (mkrt__layer_prune_levels(dp->scratch->layering, b->items, n, &rules, kept, layers, &lv, &err) != MKRT_OK)
        return false;
    b->level_seq = ++dp->level_seq;
    dp->scratch->levelled_for = dp;
    dp->scratch->levelled_seq = b->level_seq;
    return true;
}

void mkrt__stage_dedupe(mkrt__dispatch *dp, mkrt__batch *b)
{
    const uint8_t *mark = mkrt__stage_arms(dp, b);
    size_t kept, layers, skipped = 0;
    b->level_seq = 0;
    if (!level(dp, b, b->admitted, true, mark, &skipped, &kept, &layers)) {
        kept = b->admitted;
        layers = 0;
        skipped = 0;
    }
    mkrt__stage_arms_end(dp, b, skipped);
    b->kept = kept;
    b->layers = layers;
}

void mkrt__stage_own_levels(mkrt__dispatch *dp, mkrt__batch *b)
{
    const mkrt__dispatch_scratch *s = dp->scratch;
    if (b->layered || b->level_seq == 0 || (s->levelled_for == dp && s->levelled_seq == b->level_seq))
        return;
    /* Levelled by another thread's scratch (a helper left the batch
     * prepared): the same items, the same rules, the same levels. */
    size_t kept, layers;
    if (level(dp, b, b->kept, false, NULL, NULL, &kept, &layers) && kept == b->kept && layers == b->layers)
        return;
    /* Out of memory: every item a layer of its own (stage layer_split's
     * rule for a batch it could not level). */
    b->exec = b->exec_buf;
    for (size_t k = 0; k < b->kept; k++) {
        b->exec[k] = b->items[k];
        b->layer_offsets[k + 1] = (uint32_t)(k + 1);
    }
    b->layer_offsets[0] = 0;
    b->exec_n = b->kept;
    b->layers = b->kept;
    b->layered = true;
}
