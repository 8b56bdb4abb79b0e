/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/item_table.h - open-addressing table keyed by a 16-byte item, with
 * O(1) clearing (generation stamps), reused across batches. Internal. */
#ifndef MKRT_SRC_ITEM_TABLE_H
#define MKRT_SRC_ITEM_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/item.h"

typedef struct mkrt__item_slot {
    uint64_t k0, k1;   /* (op | in << 32), (out | param << 32) */
    uint32_t value;    /* caller's payload (an index) */
    uint32_t stamp;    /* slot is live when stamp == table stamp */
} mkrt__item_slot;

typedef struct mkrt__item_table {
    mkrt__item_slot *slots;
    size_t slot_count; /* power of two, or 0 */
    uint32_t stamp;
} mkrt__item_table;

/* Prepares for up to n keys: grows (allocation) when too small, shrinks
 * when holding more than max(4 n, 1024) keys' worth, then clears in O(1).
 * Returns false when allocation fails (the table is left empty but valid). */
bool mkrt__item_table_prepare(mkrt__item_table *t, size_t n);
void mkrt__item_table_free(mkrt__item_table *t);
/* Keys the table holds at load factor 1/2. */
static inline size_t mkrt__item_table_capacity(const mkrt__item_table *t)
{
    return t->slot_count / 2;
}

static inline uint64_t mkrt__mix64(uint64_t a, uint64_t b)
{
    uint64_t h = a * 0x9E3779B97F4A7C15ull ^ ((b * 0xC2B2AE3D27D4EB4Full) >> 17 |
                                              (b * 0xC2B2AE3D27D4EB4Full) << 47);
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    return h;
}

/* Starts loading the slot a key with hash h will probe first. */
static inline void mkrt__item_table_prefetch(const mkrt__item_table *t, uint64_t h)
{
    __builtin_prefetch(&t->slots[(size_t)h & (t->slot_count - 1)], 1);
}

/* Looks `key` (hash h = mkrt__mix64(k0, k1)) up; inserts it with `value`
 * when absent. Returns the slot: *inserted tells which. The table must
 * have been prepared for enough keys. */
static inline mkrt__item_slot *mkrt__item_table_upsert(mkrt__item_table *t, uint64_t h,
                                                       uint64_t k0, uint64_t k1,
                                                       uint32_t value, bool *inserted)
{
    size_t mask = t->slot_count - 1;
    size_t i = (size_t)h & mask;
    for (;;) {
        mkrt__item_slot *s = &t->slots[i];
        if (s->stamp != t->stamp) {
            s->k0 = k0;
            s->k1 = k1;
            s->value = value;
            s->stamp = t->stamp;
            *inserted = true;
            return s;
        }
        if (s->k0 == k0 && s->k1 == k1) {
            *inserted = false;
            return s;
        }
        i = (i + 1) & mask;
    }
}

#endif
