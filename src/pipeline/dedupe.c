/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/dedupe.c - exact-duplicate pruning and cross-arm redundancy. */
#include <string.h>

#include "base/alloc_internal.h"
#include "base/bitmap.h"
#include "base/error_internal.h"
#include "pipeline/item_table.h"
#include "pipeline/prune_rule.h"
#include "mkrt/dedupe.h"

struct mkrt_dedupe_scratch {
    mkrt__item_table table;
    mkrt__item_table writes; /* handle -> last kept writer (ordered pruning) */
};

mkrt_dedupe_scratch *mkrt_dedupe_scratch_create(mkrt_error *err)
{
    mkrt_dedupe_scratch *s = mkrt__alloc_zeroed(sizeof *s, _Alignof(mkrt_dedupe_scratch));
    if (s == NULL)
        mkrt__error_set(err, MKRT_ENOMEM,
                        "mkrt_dedupe_scratch allocation failed (%zu bytes). Fix: free memory.",
                        sizeof *s);
    return s;
}

void mkrt_dedupe_scratch_destroy(mkrt_dedupe_scratch *s)
{
    if (s == NULL)
        return;
    mkrt__item_table_free(&s->table);
    mkrt__item_table_free(&s->writes);
    mkrt__free(s, sizeof *s);
}

size_t mkrt_dedupe_scratch_capacity(const mkrt_dedupe_scratch *s)
{
    if (s == NULL)
        return 0;
    return mkrt__item_table_capacity(&s->table);
}

/* True when no two items share an output handle and the handles span at
 * most MKRT_DEDUPE_DENSE_MAX values; false means "not proven", not "has
 * duplicates".
 *
 * One pass. Any span of at most 4096 handles that contains items[0].out
 * lies inside the 8192-handle window centred on it, so the bits can be set
 * before the minimum is known. Items go round-robin to four bitsets, so
 * that consecutive handles (the common case) do not chain read-modify-
 * writes on one word; the handles are distinct exactly when the union of
 * the sets has n bits. */
#define DENSE_WINDOW (2 * MKRT_DEDUPE_DENSE_MAX)
#define DENSE_WORDS (DENSE_WINDOW / 64)
static bool output_handles_dense_unique(const mkrt_item *items, size_t n)
{
    if (n <= 1)
        return true;
    if (n > MKRT_DEDUPE_DENSE_MAX)
        return false;
    uint64_t seen[4][DENSE_WORDS];
    memset(seen, 0, sizeof seen);
    const uint32_t base = items[0].out - (uint32_t)MKRT_DEDUPE_DENSE_MAX; /* wraps mod 2^32 */
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t out = items[i].out;
        uint32_t off = out - base;
        if (off >= DENSE_WINDOW)
            return false;
        seen[i & 3][off / 64] |= (uint64_t)1 << (off % 64);
        lo = out < lo ? out : lo;
        hi = out > hi ? out : hi;
    }
    if ((uint64_t)hi - lo + 1 > MKRT_DEDUPE_DENSE_MAX)
        return false;
    size_t bits = 0;
    for (size_t w = 0; w < DENSE_WORDS; w++)
        bits += (size_t)mkrt__popcount64(seen[0][w] | seen[1][w] | seen[2][w] | seen[3][w]);
    return bits == n;
}

/* An item as the table's two key words: (op | in << 32), (out | param << 32). */
static inline void item_key(const mkrt_item *it, uint64_t *k0, uint64_t *k1)
{
    *k0 = (uint64_t)it->op | (uint64_t)it->in << 32;
    *k1 = (uint64_t)it->out | (uint64_t)it->param << 32;
}

static inline uint64_t item_hash(const mkrt_item *it)
{
    uint64_t k0, k1;
    item_key(it, &k0, &k1);
    return mkrt__mix64(k0, k1);
}

/* Looks an item up in t, inserting it with value when absent. */
static inline mkrt__item_slot *item_upsert(mkrt__item_table *t, const mkrt_item *it, uint32_t value,
                                           bool *inserted)
{
    uint64_t k0, k1;
    item_key(it, &k0, &k1);
    return mkrt__item_table_upsert(t, mkrt__mix64(k0, k1), k0, k1, value, inserted);
}

static void report_pair(mkrt_dedupe_report *r, size_t first, size_t dup)
{
    if (r == NULL)
        return;
    if (r->count < r->capacity)
        r->pairs[r->count] = (mkrt_dedupe_pair){first, dup};
    r->count++;
}

/* Both prunes write the kept items to out in order, copying nothing until
 * the first item is dropped (in place, out == items, the front is already
 * there). */
typedef struct compactor {
    mkrt_item *out;
    const mkrt_item *items;
    size_t w;     /* items written to out once copying */
    bool copying; /* an item was dropped: kept ones go to out[w] */
} compactor;

/* items[i] is dropped (a redundant copy of items[first]). */
static void compact_drop(compactor *c, size_t i, size_t first, mkrt_dedupe_report *report)
{
    if (!c->copying) {
        if (c->out != c->items)
            memcpy(c->out, c->items, i * sizeof *c->items);
        c->w = i;
        c->copying = true;
    }
    report_pair(report, first, i);
}

static void compact_keep(compactor *c, const mkrt_item *it)
{
    if (c->copying)
        c->out[c->w++] = *it;
}

/* Counts what was kept and pruned of n (left as prune_begin set them when
 * nothing was dropped). */
static void compact_end(const compactor *c, size_t n, size_t *kept, size_t *pruned)
{
    if (c->copying) {
        *kept = c->w;
        *pruned = n - c->w;
    }
}

/* The checks and the no-duplicate fast path both prunes share. Returns
 * MKRT_OK with *done set when the caller has nothing more to do. */
static mkrt_status prune_begin(const char *fn, mkrt_dedupe_scratch *s, const mkrt_item *items,
                               size_t n, const mkrt_item *out, size_t *kept, size_t *pruned,
                               mkrt_dedupe_report *report, bool *done, mkrt_error *err)
{
    *done = true;
    if (kept == NULL || pruned == NULL || s == NULL || (n > 0 && (items == NULL || out == NULL)))
        return mkrt__error_set(err, MKRT_EINVAL,
                               "%s got a NULL scratch, items, out, kept or pruned pointer for %zu "
                               "item(s). Fix: pass valid pointers.",
                               fn, n);
    *kept = n;
    *pruned = 0;
    if (report != NULL)
        report->count = 0;
    if (n > (size_t)UINT32_MAX - 1)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "%s: a batch of %zu items exceeds the %u-item limit of the 32-bit "
                               "index table. Fix: shard the work batch before pruning.",
                               fn, n, UINT32_MAX - 1);
    if (output_handles_dense_unique(items, n))
        return MKRT_OK;
    if (!mkrt__item_table_prepare(&s->table, n))
        return mkrt__error_set(err, MKRT_ENOMEM,
                               "%s: the redundant-work hash reservation failed for %zu item(s). "
                               "Fix: shard the work batch before pruning.",
                               fn, n);
    *done = false;
    return MKRT_OK;
}

mkrt_status mkrt_dedupe_prune(mkrt_dedupe_scratch *s, const mkrt_item *items, size_t n,
                              mkrt_item *out, size_t *kept, size_t *pruned,
                              mkrt_dedupe_report *report, mkrt_error *err)
{
    bool done;
    mkrt_status st = prune_begin("mkrt_dedupe_prune", s, items, n, out, kept, pruned, report, &done, err);
    if (done)
        return st;
    compactor c = {out, items, 0, false};
    /* Hashes run PREFETCH_AHEAD items ahead so the probed slot is being
     * loaded while earlier items are processed (the table of a large batch
     * does not fit in cache). */
    enum { PREFETCH_AHEAD = 16 };
    uint64_t ahead[PREFETCH_AHEAD];
    for (size_t i = 0; i < n && i < PREFETCH_AHEAD; i++) {
        ahead[i] = item_hash(&items[i]);
        mkrt__item_table_prefetch(&s->table, ahead[i]);
    }
    for (size_t i = 0; i < n; i++) {
        const mkrt_item *it = &items[i];
        uint64_t k0, k1;
        item_key(it, &k0, &k1);
        uint64_t h = ahead[i % PREFETCH_AHEAD];
        if (i + PREFETCH_AHEAD < n) {
            uint64_t hn = item_hash(&items[i + PREFETCH_AHEAD]);
            ahead[i % PREFETCH_AHEAD] = hn;
            mkrt__item_table_prefetch(&s->table, hn);
        }
        bool inserted;
        mkrt__item_slot *slot = mkrt__item_table_upsert(&s->table, h, k0, k1, (uint32_t)i, &inserted);
        if (!inserted) {
            compact_drop(&c, i, slot->value, report);
            continue;
        }
        compact_keep(&c, it);
    }
    compact_end(&c, n, kept, pruned);
    return MKRT_OK;
}

/* The last kept writer of a handle (UINT32_MAX: none yet). */
#define NO_WRITER UINT32_MAX
static mkrt__item_slot *writer_slot(mkrt__item_table *t, uint32_t handle)
{
    bool inserted;
    return mkrt__item_table_upsert(t, mkrt__mix64(handle, 0), handle, 0, NO_WRITER, &inserted);
}

mkrt_status mkrt_dedupe_prune_ordered(mkrt_dedupe_scratch *s, const mkrt_item *items, size_t n,
                                      mkrt_dedupe_idempotent_fn idempotent, void *ctx,
                                      mkrt_item *out, size_t *kept, size_t *pruned,
                                      mkrt_dedupe_report *report, mkrt_error *err)
{
    bool done;
    mkrt_status st = prune_begin("mkrt_dedupe_prune_ordered", s, items, n, out, kept, pruned, report,
                                 &done, err);
    if (done)
        return st;
    /* Most batches hold no exact duplicate at all: find out with the item
     * table alone (as mkrt_dedupe_prune does) before tracking writers. */
    bool any = false;
    for (size_t i = 0; i < n && !any; i++) {
        const mkrt_item *it = &items[i];
        if (idempotent != NULL && !idempotent(it, ctx))
            continue;
        bool inserted;
        item_upsert(&s->table, it, (uint32_t)i, &inserted);
        any = !inserted;
    }
    if (!any)
        return MKRT_OK;
    if (!mkrt__item_table_prepare(&s->writes, 2 * n))
        return mkrt__error_set(err, MKRT_ENOMEM,
                               "mkrt_dedupe_prune_ordered: the handle table reservation failed for "
                               "%zu handle(s). Fix: shard the work batch before pruning.",
                               2 * n);
    compactor c = {out, items, 0, false};
    for (size_t i = 0; i < n; i++) {
        const mkrt_item *it = &items[i];
        mkrt__item_slot *wout = writer_slot(&s->writes, it->out);
        mkrt__item_slot *win = writer_slot(&s->writes, it->in);
        /* The rule (pipeline/prune_rule.h), with writers named 1 + their
         * position in items. */
        uint32_t out_writer = wout->value == NO_WRITER ? 0 : wout->value + 1;
        uint32_t in_writer = win->value == NO_WRITER ? 0 : win->value + 1;
        if (mkrt__prune_copy_of_last(it, out_writer ? &items[wout->value] : NULL, out_writer, in_writer) &&
            (idempotent == NULL || idempotent(it, ctx))) {
            compact_drop(&c, i, wout->value, report);
            continue;
        }
        wout->value = (uint32_t)i;
        compact_keep(&c, it);
    }
    compact_end(&c, n, kept, pruned);
    return MKRT_OK;
}

/* The cross-arm key: (op | in << 32), out; param ignored by contract. */
static inline void cross_arm_key(const mkrt_item *it, uint64_t *k0, uint64_t *k1)
{
    *k0 = (uint64_t)it->op | (uint64_t)it->in << 32;
    *k1 = (uint64_t)it->out;
}

/* Prefetches the slot of the item at (*a, *i), then moves the cursor to
 * the next item (past empty arms); nothing once past the last arm. */
static inline void cross_arm_prefetch(const mkrt__item_table *t, const mkrt_item *const *arms,
                                      const size_t *arm_len, size_t arm_count, size_t *a, size_t *i)
{
    while (*a < arm_count && *i >= arm_len[*a]) {
        (*a)++;
        *i = 0;
    }
    if (*a >= arm_count)
        return;
    uint64_t k0, k1;
    cross_arm_key(&arms[*a][*i], &k0, &k1);
    mkrt__item_table_prefetch(t, mkrt__mix64(k0, k1));
    (*i)++;
}

mkrt_status mkrt_dedupe_cross_arm(mkrt_dedupe_scratch *s, const mkrt_item *const *arms,
                                  const size_t *arm_len, size_t arm_count,
                                  mkrt_cross_arm_report *report, mkrt_error *err)
{
    if (s == NULL || report == NULL || (arm_count > 0 && (arms == NULL || arm_len == NULL)))
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_dedupe_cross_arm got a NULL scratch, report, arms or arm_len "
                               "for %zu arm(s). Fix: pass valid pointers.",
                               arm_count);
    report->count = 0;
    size_t total = 0;
    for (size_t a = 0; a < arm_count; a++) {
        if (!mkrt__add_size(total, arm_len[a], &total))
            return mkrt__error_set(err, MKRT_EOVERFLOW,
                                   "megakernel cross-arm first-seen reservation overflowed at arm "
                                   "%zu. Fix: shard the work batch before whole-megakernel "
                                   "optimization.",
                                   a);
    }
    if (arm_count > (size_t)UINT32_MAX)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "megakernel cross-arm detection got %zu arms, more than %u. Fix: "
                               "split the fused arm sequence before planning.",
                               arm_count, UINT32_MAX);
    if (total == 0)
        return MKRT_OK;
    if (!mkrt__item_table_prepare(&s->table, total))
        return mkrt__error_set(err, MKRT_ENOMEM,
                               "megakernel cross-arm first-seen reservation failed for %zu "
                               "additional entry slot(s). Fix: shard the work batch before "
                               "whole-megakernel optimization.",
                               total);
    /* As in mkrt_dedupe_prune, the slot of the item PREFETCH_AHEAD ahead
     * (across arms) starts loading while this one is looked up: the table
     * of a large batch does not fit in the cache. */
    enum { PREFETCH_AHEAD = 16 };
    size_t pa = 0, pi = 0; /* the item ahead: arm, index */
    for (size_t k = 0; k < PREFETCH_AHEAD; k++)
        cross_arm_prefetch(&s->table, arms, arm_len, arm_count, &pa, &pi);
    for (size_t a = 0; a < arm_count; a++) {
        for (size_t i = 0; i < arm_len[a]; i++) {
            cross_arm_prefetch(&s->table, arms, arm_len, arm_count, &pa, &pi);
            const mkrt_item *it = &arms[a][i];
            uint64_t k0, k1;
            cross_arm_key(it, &k0, &k1);
            bool inserted;
            mkrt__item_slot *slot = mkrt__item_table_upsert(&s->table, mkrt__mix64(k0, k1), k0, k1,
                                                            (uint32_t)a, &inserted);
            if (!inserted && slot->value < a) {
                if (report->count < report->capacity)
                    report->pairs[report->count] = (mkrt_cross_arm_pair){slot->value, a, i};
                report->count++;
            }
        }
    }
    return MKRT_OK;
}
