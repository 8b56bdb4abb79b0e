/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/dedupe.h
 * @brief Drop exact duplicate work items from a batch.
 *
 * Behaviour (reference: vyre whole_megakernel_opt):
 * - Two items are duplicates when op, in, out and param are all equal.
 *   The first occurrence is kept, later ones are dropped, and the order of
 *   the kept items is the order of the batch.
 * - Dense-unique fast path: a batch of at most 4096 items whose output
 *   handles lie within a range of 4096 and are pairwise distinct cannot
 *   hold a duplicate (duplicates share their output handle); it is
 *   recognised with a 4096-bit set and no hashing at all.
 * - Otherwise one pass over an open-addressing table in the scratch. The
 *   table keeps its capacity from batch to batch (no allocation in steady
 *   state) and is shrunk only when it is far larger than needed: more than
 *   max(4 n, 1024) entries for a batch of n items.
 *
 * Threading: a scratch belongs to one thread at a time (per-thread
 * scratch); different scratches are independent. Nothing here blocks or
 * locks.
 */
#ifndef MKRT_DEDUPE_H
#define MKRT_DEDUPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/item.h"
#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Largest batch the dense-unique fast path takes, and its handle range. */
#define MKRT_DEDUPE_DENSE_MAX 4096

/** @brief Opaque, reusable working memory of the dedupe calls. */
typedef struct mkrt_dedupe_scratch mkrt_dedupe_scratch;

/** @brief One pruned duplicate: (first index, duplicate index) into the input batch. */
typedef struct mkrt_dedupe_pair {
    size_t first;     /**< Index of the kept copy. */
    size_t duplicate; /**< Index of the dropped duplicate. */
} mkrt_dedupe_pair;

/**
 * @brief Caller-owned report storage for the prune calls.
 *
 * Set `pairs` and `capacity`; the call sets `count` to the number of
 * duplicates found and writes the first min(count, capacity) pairs in
 * batch order (count > capacity means the report was truncated; the
 * pruning itself is always complete).
 */
typedef struct mkrt_dedupe_report {
    mkrt_dedupe_pair *pairs; /**< Room for capacity pairs (may be NULL when capacity is 0). */
    size_t capacity;         /**< Pairs that fit in `pairs`. */
    size_t count;            /**< Set by the call: duplicates found. */
} mkrt_dedupe_report;

/** @brief One cross-arm redundancy: (early arm, late arm, index of the redundant item within the late arm). */
typedef struct mkrt_cross_arm_pair {
    size_t early_arm;         /**< Arm where the (op, in, out) triple was first seen. */
    size_t late_arm;          /**< Later arm that repeats it. */
    size_t index_in_late_arm; /**< Index of the repeat within late_arm. */
} mkrt_cross_arm_pair;

/**
 * @brief Caller-owned report storage for mkrt_dedupe_cross_arm().
 *
 * Same convention as ::mkrt_dedupe_report: the first min(count, capacity)
 * pairs are written.
 */
typedef struct mkrt_cross_arm_report {
    mkrt_cross_arm_pair *pairs; /**< Room for capacity pairs (may be NULL when capacity is 0). */
    size_t capacity;            /**< Pairs that fit in `pairs`. */
    size_t count;               /**< Set by the call: redundant items found. */
} mkrt_cross_arm_report;

/**
 * @brief Creates an empty scratch.
 *
 * It allocates nothing more until the first batch that needs hashing.
 *
 * @param err Filled on failure; may be NULL.
 * @return The scratch, or NULL with ::MKRT_ENOMEM in err. Free it with
 *         mkrt_dedupe_scratch_destroy().
 * @par Thread safety
 * Any thread.
 */
mkrt_dedupe_scratch *mkrt_dedupe_scratch_create(mkrt_error *err);
/**
 * @brief Frees a scratch.
 * @param s The scratch; NULL is ignored.
 * @par Thread safety
 * The thread that owns the scratch.
 */
void mkrt_dedupe_scratch_destroy(mkrt_dedupe_scratch *s);

/**
 * @brief Items the hash table can hold without growing.
 * @param s The scratch; NULL gives 0.
 * @return The capacity; 0 before first use (or after batches that all took
 *         the dense-unique fast path).
 * @par Thread safety
 * The thread that owns the scratch.
 */
size_t mkrt_dedupe_scratch_capacity(const mkrt_dedupe_scratch *s);

/**
 * @brief Prunes exact duplicates from items[0..n).
 *
 * `*pruned` = number of dropped items, `*kept` = n - `*pruned`. When
 * nothing is pruned `out` is not written (keep using `items`: no copy on
 * the common path). Otherwise out[0..*kept) holds the kept items in order.
 *
 * @param s The scratch.
 * @param items The batch; may be NULL when n is 0.
 * @param n Items in the batch, at most 2^32 - 2.
 * @param[out] out Room for n items. Written only when something was
 *        pruned. It may be `items` itself (the kept items are then
 *        compacted in place) but must not overlap it otherwise.
 * @param[out] kept Items kept.
 * @param[out] pruned Items dropped.
 * @param report Pairs (first, duplicate) of what was dropped; may be NULL.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Done; see `*kept` and `*pruned`.
 * @retval MKRT_EINVAL s, kept or pruned is NULL, items or out is NULL with
 *         n > 0, or n is above 2^32 - 2.
 * @retval MKRT_ENOMEM The table could not grow: nothing is written,
 *         `*kept` = n, `*pruned` = 0, and the batch can still be used
 *         unpruned.
 * @return The status, as listed.
 * @par Thread safety
 * The thread that owns the scratch.
 */
mkrt_status mkrt_dedupe_prune(mkrt_dedupe_scratch *s, const mkrt_item *items, size_t n,
                              mkrt_item *out, size_t *kept, size_t *pruned,
                              mkrt_dedupe_report *report, mkrt_error *err);

/**
 * @brief Whether an exact duplicate of an item is redundant.
 *
 * Returns true when running the item twice in a row has the effect of
 * running it once. Must be a pure function of the item and ctx: it may be
 * called more than once per item.
 *
 * @param item The item.
 * @param ctx The ctx given to mkrt_dedupe_prune_ordered().
 */
typedef bool (*mkrt_dedupe_idempotent_fn)(const mkrt_item *item, void *ctx);

/**
 * @brief Prunes only the duplicates whose removal cannot change results.
 *
 * The result considered is that of running items[0..n) one after another,
 * each reading cell `in` and writing cell `out` (the runtime's contract). A
 * later exact duplicate D of a kept item K is pruned when idempotent(D, ctx)
 * is true and no kept item between K and D writes (has as out) D's in or
 * out handle; otherwise D is kept and becomes the copy later duplicates are
 * compared with. The report pairs are (kept copy, pruned duplicate). The
 * table holds up to 3 n keys (items and handles).
 *
 * @param s The scratch.
 * @param items The batch; may be NULL when n is 0.
 * @param n Items in the batch, at most 2^32 - 2.
 * @param idempotent Decides per item; NULL treats every item as idempotent.
 * @param ctx Passed to idempotent.
 * @param[out] out As for mkrt_dedupe_prune().
 * @param[out] kept Items kept.
 * @param[out] pruned Items dropped.
 * @param report Pairs (kept copy, pruned duplicate); may be NULL.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Done; see `*kept` and `*pruned`.
 * @retval MKRT_EINVAL As for mkrt_dedupe_prune().
 * @retval MKRT_ENOMEM A table could not grow: nothing is written,
 *         `*kept` = n, `*pruned` = 0.
 * @return The status, as listed.
 * @par Thread safety
 * The thread that owns the scratch.
 */
mkrt_status mkrt_dedupe_prune_ordered(mkrt_dedupe_scratch *s, const mkrt_item *items, size_t n,
                                      mkrt_dedupe_idempotent_fn idempotent, void *ctx,
                                      mkrt_item *out, size_t *kept, size_t *pruned,
                                      mkrt_dedupe_report *report, mkrt_error *err);

/**
 * @brief Reports cross-arm redundancy between per-producer sub-batches.
 *
 * arms[a][0..arm_len[a]) are the arms. An item whose (op, in, out) triple -
 * param ignored - was first seen in an earlier arm is reported as (first
 * arm, this arm, index in this arm). Repeats within one arm are not
 * reported. Nothing is removed. The runtime's ARMS decision
 * (::MKRT_PLAN_ARMS in mkrt/explain.h) takes the report as candidates and
 * skips only those the ordering contract allows (docs/design.md).
 *
 * @param s The scratch.
 * @param arms arm_count arm pointers; arms[a] must hold arm_len[a] items.
 * @param arm_len Length of each arm.
 * @param arm_count Number of arms, at most UINT32_MAX.
 * @param report Where the pairs go; `count` is reset first.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Done; see report->count.
 * @retval MKRT_EINVAL s or report is NULL, arms or arm_len is NULL with
 *         arm_count > 0, or arm_count is above UINT32_MAX.
 * @retval MKRT_EOVERFLOW The total length of the arms overflows size_t.
 * @retval MKRT_ENOMEM The table could not grow.
 * @return The status, as listed.
 * @par Thread safety
 * The thread that owns the scratch.
 */
mkrt_status mkrt_dedupe_cross_arm(mkrt_dedupe_scratch *s, const mkrt_item *const *arms,
                                  const size_t *arm_len, size_t arm_count,
                                  mkrt_cross_arm_report *report, mkrt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_DEDUPE_H */
