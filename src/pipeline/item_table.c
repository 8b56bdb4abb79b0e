/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/item_table.c - growth, shrinking and clearing of mkrt__item_table. */
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

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
        /* Tables of 2 MiB and more are probed at random: ask for huge pages
         * so that each probe does not also miss the TLB. */
        size_t align = bytes >= HUGE_PAGE ? HUGE_PAGE : MKRT_CACHE_LINE;
        mkrt__item_slot *fresh = mkrt__alloc(bytes, align);
        if (fresh == NULL)
            return false;
        if (align == HUGE_PAGE)
            madvise(fresh, bytes & ~(HUGE_PAGE - 1), MADV_HUGEPAGE);
        memset(fresh, 0, bytes);
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
