/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/item_table.c - growth, shrinking and clearing of mkrt__item_table. */
#include <string.h>

#include "base/alloc_internal.h"
#include "pipeline/item_table.h"

void mkrt__item_table_free(mkrt__item_table *t)
{
    mkrt__free(t->slots, t->slot_count * sizeof *t->slots);
    t->slots = NULL;
    t->slot_count = 0;
    t->stamp = 0;
}

bool mkrt__item_table_prepare(mkrt__item_table *t, size_t n)
{
    size_t capacity = mkrt__item_table_capacity(t);
    size_t ceiling = n > SIZE_MAX / 4 ? SIZE_MAX : n * 4;
    if (ceiling < 1024)
        ceiling = 1024;
    if (capacity < n || capacity > ceiling) {
        size_t slots = 16;
        while (slots / 2 < n) {
            if (slots > SIZE_MAX / 2 / sizeof(mkrt__item_slot))
                return false;
            slots *= 2;
        }
        size_t bytes = slots * sizeof(mkrt__item_slot);
        /* The table is probed at random (mkrt__alloc_large). */
        mkrt__item_slot *fresh = mkrt__alloc_large_zeroed(bytes, MKRT_CACHE_LINE);
        if (fresh == NULL)
            return false;
        mkrt__item_table_free(t);
        t->slots = fresh;
        t->slot_count = slots;
        t->stamp = 0;
    }
    /* Clearing: bump the stamp; only after 2^32 - 1 batches do we pay one
     * full wipe. Stamp 0 marks never-used slots. */
    if (++t->stamp == 0) {
        memset(t->slots, 0, t->slot_count * sizeof *t->slots);
        t->stamp = 1;
    }
    return true;
}
