/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/prune.c - stage dedupe: prunes only the duplicates that
 * cannot change the result (the ordering contract, with the op table's
 * idempotence rule), compacting items[0..kept) in place, and levels the
 * kept items in the same pass (pipeline/layer_internal.h: both need the
 * last writer of each handle; one table, one pass). Out of memory (the
 * layering scratch could not grow) runs the batch unpruned, b->layers 0:
 * the split stage then runs every item as a layer of its own. */
#include "pipeline/layer_internal.h"
#include "pipeline/stages.h"
#include "pipeline/dispatch.h"

void mkrt__stage_dedupe(mkrt__dispatch *dp, mkrt__batch *b)
{
    /* A batch of built-in ops (no user op, not a frontier round) takes the
     * built-ins' rules inline; the callbacks give the same answers. */
    const mkrt__layer_rules rules = {mkrt__item_commute_key, mkrt__item_idempotent, dp->state, true,
                                     b->user_ops == 0 && !b->round, true, b->handle_lo, b->handle_hi};
    mkrt_error err;
    size_t kept, layers;
    const uint32_t *level;
    if (mkrt__layer_prune_levels(dp->layering, b->items, b->admitted, &rules, &kept, &layers, &level,
                                 &err) != MKRT_OK) {
        kept = b->admitted;
        layers = 0;
    }
    b->kept = kept;
    b->layers = layers;
}
