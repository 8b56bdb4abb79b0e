/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/prune_rule.h - the ordered dedupe rule, written once for
 * mkrt_dedupe_prune_ordered (pipeline/dedupe.c) and the runtime's layering
 * pass (pipeline/layer.c).
 *
 * mkrt/dedupe.h: a later exact duplicate D of a kept item K is pruned when
 * D is idempotent and no kept item between K and D writes D's in or out.
 * K writes D's out (they are equal), so "no kept writer of out between
 * them" says K is the LAST kept writer of out when D comes: D needs no
 * search for copies, only a look at that last writer. Writers are named
 * 1 + their position among the kept items (0: none yet), so "nothing wrote
 * in after K" is in_writer <= out_writer. */
#ifndef MKRT_PIPELINE_PRUNE_RULE_H
#define MKRT_PIPELINE_PRUNE_RULE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "mkrt/item.h"

static inline bool mkrt__item_equal(const mkrt_item *a, const mkrt_item *b)
{
    uint64_t a0, a1, b0, b1;
    memcpy(&a0, a, 8);
    memcpy(&a1, (const char *)a + 8, 8);
    memcpy(&b0, b, 8);
    memcpy(&b1, (const char *)b + 8, 8);
    return ((a0 ^ b0) | (a1 ^ b1)) == 0;
}

/* Whether `it` is a redundant copy, before its idempotence is asked (the
 * caller asks it last: it may be a call). last_out: the last kept writer
 * of it->out (the item; NULL when out_writer is 0). */
static inline bool mkrt__prune_copy_of_last(const mkrt_item *it, const mkrt_item *last_out,
                                            uint32_t out_writer, uint32_t in_writer)
{
    return out_writer != 0 && in_writer <= out_writer && mkrt__item_equal(it, last_out);
}

#endif
