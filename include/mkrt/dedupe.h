/* SPDX-License-Identifier: BSD-2-Clause */
/* mkrt/dedupe.h - drop exact duplicate work items from a batch.
 *
 * Behaviour (reference: vyre whole_megakernel_opt):
 *   - Two items are duplicates when op, in, out and param are all equal.
 *     The first occurrence is kept, later ones are dropped, and the order of
 *     the kept items is the order of the batch.
 *   - Dense-unique fast path: a batch of at most 4096 items whose output
 *     handles lie within a range of 4096 and are pairwise distinct cannot
 *     hold a duplicate (duplicates share their output handle); it is
 *     recognised with a 4096-bit set and no hashing at all.
 *   - Otherwise one pass over an open-addressing table in the scratch. The
 *     table keeps its capacity from batch to batch (no allocation in steady
 *     state) and is shrunk only when it is far larger than needed: more than
 *     max(4 n, 1024) entries for a batch of n items.
 *
 * Threading: a scratch belongs to one thread at a time (per-thread scratch);
 * different scratches are independent. Nothing here blocks or locks.
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

/* Largest batch the dense-unique fast path takes, and its handle range. */
#define MKRT_DEDUPE_DENSE_MAX 4096

typedef struct mkrt_dedupe_scratch mkrt_dedupe_scratch;

/* (first index, duplicate index) into the input batch. */
typedef struct mkrt_dedupe_pair {
    size_t first;
    size_t duplicate;
} mkrt_dedupe_pair;

/* Caller-owned report storage. Set `pairs` and `capacity`; the call sets
 * `count` to the number of duplicates found and writes the first
 * min(count, capacity) pairs in batch order (count > capacity means the
 * report was truncated; the pruning itself is always complete). */
typedef struct mkrt_dedupe_report {
    mkrt_dedupe_pair *pairs;
    size_t capacity;
    size_t count;
} mkrt_dedupe_report;

/* (early arm, late arm, index of the redundant item within the late arm). */
typedef struct mkrt_cross_arm_pair {
    size_t early_arm;
    size_t late_arm;
    size_t index_in_late_arm;
} mkrt_cross_arm_pair;

typedef struct mkrt_cross_arm_report {
    mkrt_cross_arm_pair *pairs;
    size_t capacity;
    size_t count;
} mkrt_cross_arm_report;

/* Creates an empty scratch (allocates nothing until the first batch that
 * needs hashing). NULL + err (MKRT_ENOMEM) on failure. */
mkrt_dedupe_scratch *mkrt_dedupe_scratch_create(mkrt_error *err);
void mkrt_dedupe_scratch_destroy(mkrt_dedupe_scratch *s);

/* Items the hash table can hold without growing (0 before first use). */
size_t mkrt_dedupe_scratch_capacity(const mkrt_dedupe_scratch *s);

/* Prunes exact duplicates from items[0..n).
 *   *pruned = number of dropped items, *kept = n - *pruned.
 *   When nothing is pruned `out` is not written (keep using `items`: no copy
 *   on the common path). Otherwise out[0..*kept) holds the kept items in
 *   order; `out` must have room for n items. It may be `items` itself (the
 *   kept items are then compacted in place) but must not overlap it
 *   otherwise.
 *   report may be NULL.
 * Errors: MKRT_EINVAL (NULL arguments with n > 0, n above 2^32 - 2),
 * MKRT_ENOMEM when the table cannot grow: nothing is written, *kept = n,
 * *pruned = 0, and the batch can still be used unpruned. */
mkrt_status mkrt_dedupe_prune(mkrt_dedupe_scratch *s, const mkrt_item *items, size_t n,
                              mkrt_item *out, size_t *kept, size_t *pruned,
                              mkrt_dedupe_report *report, mkrt_error *err);

/* Whether an exact duplicate of item is redundant: running the item twice
 * in a row has the effect of running it once. */
typedef bool (*mkrt_dedupe_idempotent_fn)(const mkrt_item *item, void *ctx);

/* Prunes only the duplicates whose removal cannot change the result of
 * running items[0..n) one after another, each reading cell `in` and
 * writing cell `out` (the runtime's contract). A later exact duplicate D
 * of a kept item K is pruned when idempotent(D, ctx) is true and no kept
 * item between K and D writes (has as out) D's in or out handle; otherwise
 * D is kept and becomes the copy later duplicates are compared with.
 * idempotent NULL: every item is idempotent. The report pairs are (kept
 * copy, pruned duplicate). Arguments, outputs and errors as
 * mkrt_dedupe_prune; the table holds up to 3 n keys (items and handles). */
mkrt_status mkrt_dedupe_prune_ordered(mkrt_dedupe_scratch *s, const mkrt_item *items, size_t n,
                                      mkrt_dedupe_idempotent_fn idempotent, void *ctx,
                                      mkrt_item *out, size_t *kept, size_t *pruned,
                                      mkrt_dedupe_report *report, mkrt_error *err);

/* Cross-arm redundancy: arms[a][0..arm_len[a]) are per-producer sub-batches.
 * An item whose (op, in, out) triple - param ignored - was first seen in an
 * earlier arm is reported as (first arm, this arm, index in this arm).
 * Repeats within one arm are not reported. */
mkrt_status mkrt_dedupe_cross_arm(mkrt_dedupe_scratch *s, const mkrt_item *const *arms,
                                  const size_t *arm_len, size_t arm_count,
                                  mkrt_cross_arm_report *report, mkrt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_DEDUPE_H */
