/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/layer.h
 * @brief Dependency levels of a batch (the ordering contract).
 *
 * Items are taken in batch order. Item B must run after an earlier item A
 * when
 * - B.in  == A.out (read after write),
 * - B.out == A.out (write after write), or
 * - B.out == A.in  (write after read).
 *
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
 * Threading: one thread per scratch at a time; different scratches are
 * independent.
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

/** @brief Opaque, reusable working memory of mkrt_layer_batch(). */
typedef struct mkrt_layer_scratch mkrt_layer_scratch;

/**
 * @brief Barrier groups (layers) of a batch in CSR form.
 *
 * The arrays belong to the scratch and stay valid until its next use or
 * destruction.
 */
typedef struct mkrt_layer_plan {
    size_t item_count;             /**< Items in the batch (n). */
    size_t layer_count;            /**< Levels; 0 for an empty batch. */
    /** Start of each layer in layer_items: layer_count + 1 entries, the
     *  last one equal to item_count. */
    const uint32_t *layer_offsets;
    /** Item indices, layer by layer, ascending within a layer. */
    const uint32_t *layer_items;
    /** Level of each item (0-based), item_count entries. */
    const uint32_t *item_level;
} mkrt_layer_plan;

/**
 * @brief Creates an empty layering scratch (it grows on use).
 * @param err Filled on failure; may be NULL.
 * @return The scratch, or NULL with ::MKRT_ENOMEM in err when allocation
 *         fails. Free it with mkrt_layer_scratch_destroy().
 * @par Thread safety
 * Any thread.
 */
mkrt_layer_scratch *mkrt_layer_scratch_create(mkrt_error *err);
/**
 * @brief Frees a scratch; plans that point into it become invalid.
 * @param s The scratch; NULL is ignored.
 * @par Thread safety
 * The thread that owns the scratch.
 */
void mkrt_layer_scratch_destroy(mkrt_layer_scratch *s);

/**
 * @brief Items the scratch holds without growing.
 * @param s The scratch.
 * @return The item capacity; 0 for a NULL scratch or before first use.
 * @par Thread safety
 * The thread that owns the scratch.
 */
size_t mkrt_layer_scratch_capacity(const mkrt_layer_scratch *s);

/**
 * @brief Layers items[0..n) under the ordering contract.
 *
 * On success `*plan` describes the layers; its arrays point into the
 * scratch. An empty batch (n = 0) gives layer_count 0.
 *
 * @param s The scratch (grown as needed; capacities only grow).
 * @param items The batch, in batch order; may be NULL when n is 0.
 * @param n Items in the batch, at most 2^32 - 2.
 * @param[out] plan The layers.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK The plan is filled.
 * @retval MKRT_EINVAL s or plan is NULL, items is NULL with n > 0, or n is
 *         above 2^32 - 2.
 * @retval MKRT_ENOMEM Scratch growth failed; plan untouched.
 * @return The status, as listed.
 * @par Thread safety
 * The thread that owns the scratch.
 */
mkrt_status mkrt_layer_batch(mkrt_layer_scratch *s, const mkrt_item *items, size_t n,
                             mkrt_layer_plan *plan, mkrt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_LAYER_H */
