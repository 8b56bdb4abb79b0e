/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/layer.c - O(n) batch layering under the ordering contract.
 *
 * Commuting items (pipeline/layer_internal.h): a run of items of one
 * commuting group that write a handle h, with no other access to h in
 * between (no read of h, no other writer), forms a group whose members
 * all need only what the first one needed (the level after h's earlier
 * writers and readers), so they can share a layer; whoever comes after the
 * group on h comes after every member. A read of h, or a write that is not
 * of the group, closes the group. */
#include <string.h>

#include "base/alloc_internal.h"
#include "base/error_internal.h"
#include "mkrt/layer.h"
#include "pipeline/layer_internal.h"

/* Per-handle state: levels are stored +1 so that 0 means "none yet". */
typedef struct handle_state {
    uint32_t stamp;
    uint32_t after_write; /* 1 + level of the last writer (of any member of the open group) */
    uint32_t after_read;  /* 1 + highest level of a reader */
    uint32_t handle;      /* hash mode only */
    uint32_t group;       /* the open commuting group writing this handle (0: none) */
    uint32_t group_base;  /* the level its members need (levels +1, like the others) */
} handle_state;

struct mkrt_layer_scratch {
    uint32_t *level;   /* item_cap */
    uint32_t *items;   /* item_cap, CSR columns */
    uint32_t *offsets; /* item_cap + 2, CSR rows (+1 spare for counting) */
    size_t item_cap;
    handle_state *table; /* direct array (range mode) or hash slots */
    size_t table_len;
    uint32_t stamp;
};

mkrt_layer_scratch *mkrt_layer_scratch_create(mkrt_error *err)
{
    mkrt_layer_scratch *s = mkrt__alloc_zeroed(sizeof *s, _Alignof(mkrt_layer_scratch));
    if (s == NULL)
        mkrt__error_set(err, MKRT_ENOMEM,
                        "mkrt_layer_scratch allocation failed (%zu bytes). Fix: free memory.",
                        sizeof *s);
    return s;
}

static void free_items(mkrt_layer_scratch *s)
{
    mkrt__free(s->level, s->item_cap * sizeof(uint32_t));
    mkrt__free(s->items, s->item_cap * sizeof(uint32_t));
    mkrt__free(s->offsets, (s->item_cap + 2) * sizeof(uint32_t));
    s->level = s->items = s->offsets = NULL;
    s->item_cap = 0;
}

void mkrt_layer_scratch_destroy(mkrt_layer_scratch *s)
{
    if (s == NULL)
        return;
    free_items(s);
    mkrt__free(s->table, s->table_len * sizeof(handle_state));
    mkrt__free(s, sizeof *s);
}

size_t mkrt_layer_scratch_capacity(const mkrt_layer_scratch *s)
{
    return s == NULL ? 0 : s->item_cap;
}

static mkrt_status grow_items(mkrt_layer_scratch *s, size_t n, mkrt_error *err)
{
    if (n <= s->item_cap)
        return MKRT_OK;
    size_t cap = s->item_cap ? s->item_cap : 64;
    while (cap < n)
        cap *= 2;
    uint32_t *level = mkrt__alloc(cap * sizeof(uint32_t), MKRT_CACHE_LINE);
    uint32_t *items = mkrt__alloc(cap * sizeof(uint32_t), MKRT_CACHE_LINE);
    uint32_t *offsets = mkrt__alloc((cap + 2) * sizeof(uint32_t), MKRT_CACHE_LINE);
    if (level == NULL || items == NULL || offsets == NULL) {
        mkrt__free(level, cap * sizeof(uint32_t));
        mkrt__free(items, cap * sizeof(uint32_t));
        mkrt__free(offsets, (cap + 2) * sizeof(uint32_t));
        return mkrt__error_set(err, MKRT_ENOMEM,
                               "batch layering could not reserve scratch for %zu items (%zu bytes). "
                               "Fix: shard the work batch or free memory.",
                               n, cap * 3 * sizeof(uint32_t));
    }
    free_items(s);
    s->level = level;
    s->items = items;
    s->offsets = offsets;
    s->item_cap = cap;
    return MKRT_OK;
}

/* Makes the handle table at least `len` entries (a power of two in hash
 * mode) and clears it in O(1) by bumping the stamp. */
static mkrt_status prepare_table(mkrt_layer_scratch *s, size_t len, mkrt_error *err)
{
    if (len > s->table_len) {
        handle_state *t = mkrt__alloc_zeroed(len * sizeof *t, MKRT_CACHE_LINE);
        if (t == NULL)
            return mkrt__error_set(err, MKRT_ENOMEM,
                                   "batch layering could not reserve a %zu-entry handle table "
                                   "(%zu bytes). Fix: shard the work batch or free memory.",
                                   len, len * sizeof *t);
        mkrt__free(s->table, s->table_len * sizeof *t);
        s->table = t;
        s->table_len = len;
        s->stamp = 0;
    }
    if (++s->stamp == 0) {
        memset(s->table, 0, s->table_len * sizeof *s->table);
        s->stamp = 1;
    }
    return MKRT_OK;
}

static inline uint32_t hash32(uint32_t h)
{
    return (uint32_t)(((uint64_t)h * 0x9E3779B97F4A7C15ull) >> 32);
}

/* Hash-mode lookup-or-insert (linear probing; the table is at most half full). */
static inline handle_state *hash_slot(mkrt_layer_scratch *s, size_t mask, uint32_t handle)
{
    size_t i = hash32(handle) & mask;
    for (;;) {
        handle_state *h = &s->table[i];
        if (h->stamp != s->stamp) {
            h->stamp = s->stamp;
            h->handle = handle;
            h->after_write = 0;
            h->after_read = 0;
            h->group = 0;
            return h;
        }
        if (h->handle == handle)
            return h;
        i = (i + 1) & mask;
    }
}

static inline handle_state *direct_slot(mkrt_layer_scratch *s, uint32_t base, uint32_t handle)
{
    handle_state *h = &s->table[handle - base];
    if (h->stamp != s->stamp) {
        h->stamp = s->stamp;
        h->after_write = 0;
        h->after_read = 0;
        h->group = 0;
    }
    return h;
}

static inline uint32_t max3(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t m = a > b ? a : b;
    return m > c ? m : c;
}

/* The forward pass; `direct` selects the table mode at compile time so the
 * hot loop has no per-item branch on it. key (may be NULL) gives each
 * item's commuting group. Returns the number of levels. */
static inline uint32_t assign_levels(mkrt_layer_scratch *s, const mkrt_item *items, size_t n,
                                     int direct, uint32_t base, size_t mask,
                                     mkrt__commute_key_fn key, void *key_ctx)
{
    uint32_t levels = 0;
    for (size_t i = 0; i < n; i++) {
        handle_state *in = direct ? direct_slot(s, base, items[i].in)
                                  : hash_slot(s, mask, items[i].in);
        handle_state *out = direct ? direct_slot(s, base, items[i].out)
                                   : hash_slot(s, mask, items[i].out);
        uint32_t g = key != NULL ? key(&items[i], key_ctx) : 0;
        uint32_t lv;
        if (g != 0) {
            /* A commuting item: it reads in (unless in == out, which only
             * an op that does not read in may have) and joins or opens
             * out's group. */
            if (out->group != g) {
                out->group = g;
                out->group_base = out->after_write > out->after_read ? out->after_write : out->after_read;
            }
            lv = out->group_base;
            if (in != out && in->after_write > lv)
                lv = in->after_write;
            if (out->after_write < lv + 1)
                out->after_write = lv + 1;
            if (in != out) {
                in->group = 0; /* a read closes in's group */
                if (in->after_read < lv + 1)
                    in->after_read = lv + 1;
            }
        } else {
            /* RAW: after in's last writer; WAW: after out's last writer;
             * WAR: after every reader of out. */
            lv = max3(in->after_write, out->after_write, out->after_read);
            out->after_write = lv + 1;
            if (in->after_read < lv + 1)
                in->after_read = lv + 1;
            in->group = 0;
            out->group = 0;
        }
        s->level[i] = lv;
        if (lv + 1 > levels)
            levels = lv + 1;
    }
    return levels;
}

mkrt_status mkrt_layer_batch(mkrt_layer_scratch *s, const mkrt_item *items, size_t n,
                             mkrt_layer_plan *plan, mkrt_error *err)
{
    return mkrt__layer_batch_commuting(s, items, n, NULL, NULL, plan, err);
}

mkrt_status mkrt__layer_batch_commuting(mkrt_layer_scratch *s, const mkrt_item *items, size_t n,
                                        mkrt__commute_key_fn key, void *key_ctx,
                                        mkrt_layer_plan *plan, mkrt_error *err)
{
    if (s == NULL || plan == NULL || (n > 0 && items == NULL))
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_layer_batch got a NULL scratch, plan or items pointer for %zu "
                               "item(s). Fix: pass valid pointers.",
                               n);
    if (n > (size_t)UINT32_MAX - 1)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "batch of %zu items exceeds the layering limit of %u items. Fix: "
                               "shard the work batch.",
                               n, UINT32_MAX - 1);
    if (n == 0) {
        static const uint32_t no_layers[1] = {0};
        *plan = (mkrt_layer_plan){0, 0, no_layers, no_layers, no_layers};
        return MKRT_OK;
    }
    mkrt_status st = grow_items(s, n, err);
    if (st != MKRT_OK)
        return st;
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t a = items[i].in, b = items[i].out;
        lo = a < lo ? a : lo;
        lo = b < lo ? b : lo;
        hi = a > hi ? a : hi;
        hi = b > hi ? b : hi;
    }
    /* Direct indexing when the handle range is compact relative to the
     * batch (or small in absolute terms); hashing otherwise. */
    uint64_t range = (uint64_t)hi - lo + 1;
    uint64_t direct_limit = (uint64_t)n * 4 > 65536 ? (uint64_t)n * 4 : 65536;
    int direct = range <= direct_limit;
    size_t table_len = 0, mask = 0;
    if (direct) {
        table_len = (size_t)range;
    } else {
        table_len = 64;
        while (table_len < 4 * n) /* two handles per item, load <= 1/2 */
            table_len *= 2;
        mask = table_len - 1;
    }
    if ((st = prepare_table(s, table_len, err)) != MKRT_OK)
        return st;
    uint32_t levels = direct ? assign_levels(s, items, n, 1, lo, 0, key, key_ctx)
                             : assign_levels(s, items, n, 0, 0, mask, key, key_ctx);

    /* CSR by counting sort: stable, so items ascend within a level. */
    uint32_t *off = s->offsets;
    memset(off, 0, ((size_t)levels + 2) * sizeof *off);
    for (size_t i = 0; i < n; i++)
        off[s->level[i] + 2]++;
    for (uint32_t l = 0; l < levels; l++)
        off[l + 2] += off[l + 1];
    for (size_t i = 0; i < n; i++)
        s->items[off[s->level[i] + 1]++] = (uint32_t)i;
    plan->item_count = n;
    plan->layer_count = levels;
    plan->layer_offsets = off;
    plan->layer_items = s->items;
    plan->item_level = s->level;
    return MKRT_OK;
}
