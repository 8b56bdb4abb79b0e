/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/prune.c - stage dedupe: prunes only the duplicates that
 * cannot change the result (the ordering contract, with the op table's
 * idempotence rule), compacting items[0..kept) in place. Out of memory
 * runs the batch unpruned. */
#include "pipeline/stages.h"
#include "runtime/runtime_internal.h"

void mkrt__stage_dedupe(mkrt_runtime *rt, mkrt__batch *b)
{
    mkrt_error err;
    size_t kept = b->admitted, pruned = 0;
    if (mkrt_dedupe_prune_ordered(rt->dedupe, b->items, b->admitted, mkrt__item_idempotent, rt,
                                  b->items, &kept, &pruned, NULL, &err) != MKRT_OK)
        kept = b->admitted;
    b->kept = kept;
}
