/* SPDX-License-Identifier: BSD-2-Clause */
/* mkrt/layer.h - dependency levels of a batch (the ordering contract).
 *
 * Items are taken in batch order. Item B must run after an earlier item A
 * when
 *   B.in  == A.out   (read after write),
 *   B.out == A.out   (write after write), or
 *   B.out == A.in    (write after read).
 * The level of an item is the length of the longest such dependency chain
 * ending in it; items of one level are independent and run between two
 * barriers. The number of levels is the minimum number of barrier groups
 * (it equals Kahn layering of the explicit pairwise graph).
 *
 * Computed in one forward pass with a handle -> (level after its last
 * write, level after its last read) table kept in the scratch: O(n), no
 * pairwise search. Handles within a compact range use a direct array;
 * sparse handles use a hash table. Both keep their capacity between
 * batches and are cleared in O(1).
 *
 * Threading: one thread per scratch at a time.
 */
#ifndef MKRT_LAYER_H
#define MKRT_LAYER_H

#include <stddef.h>
#include <stdint.h>

#include "mkrt/item.h"
#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mkrt_layer_scratch mkrt_layer_scratch;

/* Barrier groups in CSR form. The arrays belong to the scratch and stay
 * valid until its next use or destruction. */
typedef struct mkrt_layer_plan {
    size_t item_count;
    size_t layer_count;            /* 0 for an empty batch */
    const uint32_t *layer_offsets; /* layer_count + 1 entries */
    const uint32_t *layer_items;   /* item indices, by layer, ascending within a layer */
    const uint32_t *item_level;    /* level of each item, item_count entries */
} mkrt_layer_plan;

/* NULL with MKRT_ENOMEM in err when allocation fails. */
mkrt_layer_scratch *mkrt_layer_scratch_create(mkrt_error *err);
/* NULL is ignored. */
void mkrt_layer_scratch_destroy(mkrt_layer_scratch *s);

/* Items the scratch holds without growing; 0 for a NULL scratch. */
size_t mkrt_layer_scratch_capacity(const mkrt_layer_scratch *s);

/* Layers items[0..n). Errors: MKRT_EINVAL (NULL pointers, n above
 * 2^32 - 2), MKRT_ENOMEM (scratch growth failed; plan untouched). */
mkrt_status mkrt_layer_batch(mkrt_layer_scratch *s, const mkrt_item *items, size_t n,
                             mkrt_layer_plan *plan, mkrt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_LAYER_H */
