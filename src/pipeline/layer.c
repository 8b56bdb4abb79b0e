/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/layer.c - O(n) batch layering under the ordering contract,
 * and the runtime's ordered dedupe in the same pass
 * (pipeline/layer_internal.h).
 *
 * Commuting items (pipeline/layer_internal.h): a run of items of one
 * commuting group that write a handle h, with no other access to h in
 * between (no read of h, no other writer), forms a group whose members
 * all need only what the first one needed (the level after h's earlier
 * writers and readers), so they can share a layer; whoever comes after the
 * group on h comes after every member. A read of h, or a write that is not
 * of the group, closes the group.
 *
 * Cost: one pass over the items with two handle-state lookups each (one
 * when in == out), specialised at compile time for the table mode (direct
 * array or hash), the rules (none, callbacks, or the built-ins' inline)
 * and pruning, so the hot loop has no per-item branch on any of them. */
#include <string.h>

#include "base/alloc_internal.h"
#include "base/error_internal.h"
#include "base/waitq.h"
#include "mkrt/layer.h"
#include "ops/builtin_ops.h"
#include "pipeline/layer_internal.h"
#include "pipeline/prune_rule.h"

/* Per-handle state: levels are stored +1 so that 0 means "none yet". 32
 * bytes: two to a cache line, indexed by a shift. */
typedef struct handle_state {
    uint32_t stamp;
    uint32_t after_write; /* 1 + level of the last writer (of any member of the open group) */
    uint32_t after_read;  /* 1 + highest level of a reader */
    uint32_t group;       /* the open commuting group writing this handle (0: none) */
    uint32_t group_base;  /* the level its members need (levels +1, like the others) */
    uint32_t writer;      /* 1 + position of the last kept writer (pruning; 0: none) */
    uint32_t handle;      /* hash mode only */
    uint32_t wparam;      /* the param of that writer: most items differ from it there */
} handle_state;

struct mkrt_layer_scratch {
    uint32_t *level;   /* item_cap */
    uint32_t *items;   /* item_cap, CSR columns */
    uint32_t *offsets; /* item_cap + 2, CSR rows (+1 spare for counting) */
    size_t item_cap;
    handle_state *table; /* direct array (range mode) or hash slots */
    size_t table_len;
    uint32_t stamp;
    bool prefetch; /* the table this batch uses outgrows the L1 cache */
    /* The split levelling's owner array (the whole's only): per handle,
     * the tag of the part that touched it, by epoch. */
    _Atomic uint32_t *owner;
    size_t owner_len;
    uint32_t owner_epoch;
    /* all_distinct's bit per handle of the batch's range (one thread's). */
    uint64_t *seen;
    size_t seen_words;
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
    mkrt__free((void *)s->owner, s->owner_len * sizeof *s->owner);
    mkrt__free(s->seen, s->seen_words * sizeof *s->seen);
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

static inline void fresh_state(handle_state *h, uint32_t stamp)
{
    h->stamp = stamp;
    h->after_write = 0;
    h->after_read = 0;
    h->group = 0;
    h->writer = 0;
}

/* Hash-mode lookup-or-insert (linear probing; the table is at most half full). */
static inline handle_state *hash_slot(mkrt_layer_scratch *s, size_t mask, uint32_t handle)
{
    size_t i = hash32(handle) & mask;
    for (;;) {
        handle_state *h = &s->table[i];
        if (h->stamp != s->stamp) {
            fresh_state(h, s->stamp);
            h->handle = handle;
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
    if (h->stamp != s->stamp)
        fresh_state(h, s->stamp);
    return h;
}

static inline uint32_t max3(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t m = a > b ? a : b;
    return m > c ? m : c;
}

/* How many items ahead the pass starts loading handle states. */
#define PREFETCH_AHEAD 16

/* Which rules the pass applies (a compile-time constant in each copy). */
enum { RULES_NONE, RULES_CALLBACKS, RULES_BUILTIN };

static inline __attribute__((always_inline)) uint32_t group_of(const mkrt_item *it, int rules,
                                                               const mkrt__layer_rules *r)
{
    if (rules == RULES_BUILTIN)
        return mkrt__ops_builtin_commute_key(it->op, it->in, it->out);
    if (rules == RULES_CALLBACKS && r->key != NULL)
        return r->key(it, r->ctx);
    return 0;
}

static inline __attribute__((always_inline)) bool idempotent(const mkrt_item *it, int rules,
                                                             const mkrt__layer_rules *r)
{
    if (rules == RULES_BUILTIN)
        return mkrt__ops_builtin_idempotent(it->op, it->in, it->out);
    return r->idempotent == NULL || r->idempotent(it, r->ctx);
}

/* The forward pass over items[0..n): prunes (with `prune`, compacting the
 * kept items in place) and gives each kept item its level in s->level.
 * `direct`, `rules` and `prune` are constants at every call, so each copy
 * of the loop has no per-item branch on them. Returns the items kept;
 * *levels is the number of levels. */
/* A part of a split levelling (mkrt__layer_split_run): the lowest and
 * highest handle it touches, and, unless the split trusts the parts'
 * handle ranges alone (sp->ranges), a claim of every handle it touches in
 * the shared owner array; a handle another part claimed in this split is
 * a conflict (the split is then thrown away). */
typedef struct owner_ctx {
    _Atomic uint32_t *owner; /* by handle - lo */
    uint32_t lo;
    uint32_t tag;            /* split epoch << 8 | part */
    bool conflict;
    bool ranges;             /* no claims: the merge compares the ranges */
    uint32_t min, max;       /* the handles touched: [min, max] */
} owner_ctx;

static inline __attribute__((always_inline)) void claim(owner_ctx *own, uint32_t handle)
{
    own->min = handle < own->min ? handle : own->min;
    own->max = handle > own->max ? handle : own->max;
    if (own->ranges)
        return;
    /* relaxed: the exchange's atomicity alone decides (of two parts that
     * touch a handle, the later exchange sees the earlier's tag); the
     * result is read after the task's join (cpu_pool.c run_task). */
    uint32_t prev = atomic_exchange_explicit(&own->owner[handle - own->lo], own->tag, memory_order_relaxed);
    if (prev >> 8 == own->tag >> 8 && prev != own->tag)
        own->conflict = true;
}

/* A part's slot, direct or hashed (its own table), claiming the handle
 * when the part first touches it. */
static inline __attribute__((always_inline)) handle_state *owned_slot(mkrt_layer_scratch *s, int direct,
                                                                     uint32_t base, size_t mask, uint32_t handle,
                                                                     owner_ctx *own)
{
    if (!direct) {
        const uint32_t stamp = s->stamp;
        size_t i = hash32(handle) & mask;
        for (;;) {
            handle_state *h = &s->table[i];
            if (h->stamp != stamp) {
                fresh_state(h, stamp);
                h->handle = handle;
                claim(own, handle);
                return h;
            }
            if (h->handle == handle)
                return h;
            i = (i + 1) & mask;
        }
    }
    handle_state *h = &s->table[handle - base];
    if (h->stamp != s->stamp) {
        fresh_state(h, s->stamp);
        claim(own, handle);
    }
    return h;
}

/* The pass's arrays: kept items go to dst (items itself in place, or a
 * split part's output), kept item k's level to level[k], items per level
 * to count[]. */
static inline __attribute__((always_inline)) size_t
assign_levels(mkrt_layer_scratch *s, mkrt_item *items, size_t n, int direct, uint32_t base,
              size_t mask, int rules, int prune, const mkrt__layer_rules *r, uint32_t *levels,
              mkrt_item *dst, uint32_t *level, owner_ctx *own)
{
    uint32_t top = 0;
    /* Items per level, into s->offsets, which the pass does not otherwise
     * use (mkrt__layer_count reads it). */
    uint32_t *count = s->offsets;
    const uint8_t *mark = r->mark;
    size_t w = 0;
    const bool prefetch = s->prefetch;
    for (size_t i = 0; i < n; i++) {
        const mkrt_item it = items[i];
        if (prefetch && i + PREFETCH_AHEAD < n) {
            /* The states of a later item start loading now: a batch over
             * many handles misses the cache on most of them. */
            const mkrt_item *ahead = &items[i + PREFETCH_AHEAD];
            __builtin_prefetch(direct ? &s->table[ahead->out - base] : &s->table[hash32(ahead->out) & mask], 1);
            __builtin_prefetch(direct ? &s->table[ahead->in - base] : &s->table[hash32(ahead->in) & mask], 1);
        }
        handle_state *out = own != NULL ? owned_slot(s, direct, base, mask, it.out, own)
                            : direct    ? direct_slot(s, base, it.out)
                                        : hash_slot(s, mask, it.out);
        handle_state *in = it.in == it.out ? out
                           : own != NULL   ? owned_slot(s, direct, base, mask, it.in, own)
                           : direct        ? direct_slot(s, base, it.in)
                                           : hash_slot(s, mask, it.in);
        /* A redundant copy of the last writer of out is dropped. The
         * built-ins' idempotence is a few compares, asked first; a
         * callback last. The writer's param, kept with the state, rules
         * out most items before the writer itself is loaded. */
        if (prune && out->writer != 0 && out->wparam == it.param &&
            (rules != RULES_BUILTIN || idempotent(&it, rules, r)) &&
            mkrt__prune_copy_of_last(&it, &dst[out->writer - 1], out->writer, in->writer) &&
            (rules == RULES_BUILTIN || idempotent(&it, rules, r)))
            continue;
        /* ARMS: a marked item whose effect its out's last writer covers
         * (the same op, in and out; nothing wrote in since). */
        if (prune && mark != NULL && mark[i] && out->writer != 0 && out->wparam != it.param &&
            in->writer < out->writer && dst[out->writer - 1].op == it.op &&
            dst[out->writer - 1].in == it.in && r->covered(&dst[out->writer - 1], &it)) {
            (*r->skipped)++;
            continue;
        }
        uint32_t g = group_of(&it, rules, r);
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
        if (prune) {
            out->writer = (uint32_t)w + 1;
            out->wparam = it.param;
            if (own != NULL || w != i) /* in place: w <= i; equal until the first prune */
                dst[w] = it;
        }
        level[w++] = lv;
        if (lv == top) { /* a new level (lv <= top: every state is <= top) */
            count[lv] = 0;
            top = lv + 1;
        }
        count[lv]++;
    }
    *levels = top;
    return w;
}

/* One copy of the pass per table mode, rules and pruning. */
#define PASS(direct, rules, prune) \
    assign_levels(s, items, n, direct, lo, mask, rules, prune, r, &levels, items, s->level, NULL)

static size_t pass_plain(mkrt_layer_scratch *s, mkrt_item *items, size_t n, int direct, uint32_t lo,
                         size_t mask, const mkrt__layer_rules *r, uint32_t *out_levels)
{
    uint32_t levels;
    size_t kept;
    if (r->key == NULL)
        kept = direct ? PASS(1, RULES_NONE, 0) : PASS(0, RULES_NONE, 0);
    else
        kept = direct ? PASS(1, RULES_CALLBACKS, 0) : PASS(0, RULES_CALLBACKS, 0);
    *out_levels = levels;
    return kept;
}

static size_t pass_runtime(mkrt_layer_scratch *s, mkrt_item *items, size_t n, int direct,
                           uint32_t lo, size_t mask, const mkrt__layer_rules *r, uint32_t *out_levels)
{
    uint32_t levels;
    size_t kept;
    if (r->builtin)
        kept = direct ? PASS(1, RULES_BUILTIN, 1) : PASS(0, RULES_BUILTIN, 1);
    else
        kept = direct ? PASS(1, RULES_CALLBACKS, 1) : PASS(0, RULES_CALLBACKS, 1);
    *out_levels = levels;
    return kept;
}
#undef PASS

/* Checks, scratch and table for a batch of n items; *direct and
 * (lo, mask) say how handles index the table. */
static mkrt_status begin(mkrt_layer_scratch *s, const mkrt_item *items, size_t n,
                         const mkrt__layer_rules *r, int *direct, uint32_t *base, size_t *mask,
                         mkrt_error *err)
{
    mkrt_status st = grow_items(s, n, err);
    if (st != MKRT_OK)
        return st;
    uint32_t lo = UINT32_MAX, hi = 0;
    if (r->bounded) {
        lo = r->lo;
        hi = r->hi;
    } else {
        for (size_t i = 0; i < n; i++) {
            uint32_t a = items[i].in, b = items[i].out;
            uint32_t l = a < b ? a : b, h = a < b ? b : a;
            lo = l < lo ? l : lo;
            hi = h > hi ? h : hi;
        }
    }
    /* Direct indexing when the handle range is compact relative to the
     * batch (or small in absolute terms); hashing otherwise. */
    uint64_t range = (uint64_t)hi - lo + 1;
    uint64_t direct_limit = (uint64_t)n * 4 > 65536 ? (uint64_t)n * 4 : 65536;
    *direct = range <= direct_limit;
    size_t table_len;
    if (*direct) {
        table_len = (size_t)range;
        *base = lo;
        *mask = 0;
    } else {
        table_len = 64;
        while (table_len < 4 * n) /* two handles per item, load <= 1/2 */
            table_len *= 2;
        *base = 0;
        *mask = table_len - 1;
    }
    /* Loads ahead pay only where the states miss the L1 cache (32 KiB
     * and more on current x86 and Arm cores); below that the prefetch is
     * an instruction and an address per handle for nothing. */
    s->prefetch = table_len * sizeof(handle_state) > 32768;
    return prepare_table(s, table_len, err);
}

static mkrt_status check_args(const mkrt_layer_scratch *s, const mkrt_item *items, size_t n,
                              const void *plan, mkrt_error *err)
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
    return MKRT_OK;
}

void mkrt__layer_plan_csr(mkrt_layer_scratch *s, size_t n, size_t layers, mkrt_layer_plan *plan)
{
    if (n == 0) {
        static const uint32_t no_layers[1] = {0};
        *plan = (mkrt_layer_plan){0, 0, no_layers, no_layers, no_layers};
        return;
    }
    /* CSR by counting sort: stable, so items ascend within a level. */
    uint32_t *off = s->offsets;
    memset(off, 0, (layers + 2) * sizeof *off);
    for (size_t i = 0; i < n; i++)
        off[s->level[i] + 2]++;
    for (size_t l = 0; l < layers; l++)
        off[l + 2] += off[l + 1];
    for (size_t i = 0; i < n; i++)
        s->items[off[s->level[i] + 1]++] = (uint32_t)i;
    plan->item_count = n;
    plan->layer_count = layers;
    plan->layer_offsets = off;
    plan->layer_items = s->items;
    plan->item_level = s->level;
}

void mkrt__layer_count(mkrt_layer_scratch *s, size_t n, size_t layers, uint32_t *offsets)
{
    offsets[0] = 0;
    if (layers <= 1) {
        if (layers == 1)
            offsets[1] = (uint32_t)n;
        return;
    }
    /* The pass counted each level's items into s->offsets. */
    const uint32_t *count = s->offsets;
    for (size_t l = 0; l < layers; l++)
        offsets[l + 1] = offsets[l] + count[l];
}

void mkrt__layer_scatter(mkrt_layer_scratch *s, const mkrt_item *items, size_t n, size_t layers,
                         mkrt_item *out, const uint32_t *offsets)
{
    if (layers <= 1) {
        /* One layer (the common wide batch): the items as they are. */
        memcpy(out, items, n * sizeof *items);
        return;
    }
    /* Counting sort, stable: cur (the scratch's CSR rows) is each
     * level's cursor. */
    const uint32_t *level = s->level;
    uint32_t *cur = s->offsets;
    memcpy(cur, offsets, layers * sizeof *cur);
    for (size_t i = 0; i < n; i++)
        out[cur[level[i]]++] = items[i];
}

/* Whether the items touch pairwise distinct handles: no handle is read
 * or written by two of them, so none depends on another and none is a
 * copy of an earlier writer (the pass would give every item level 0 and
 * keep them all). A bit per handle of the batch's range [lo, lo + range)
 * answers it with a few instructions an item, where the pass writes a
 * 32-byte state per handle (on independent items it was half of the
 * planning thread's time, bench/results/megakernel.md); the look stops
 * at the first handle seen twice, which on a batch with conflicts comes
 * within a few hundred items (two random handles of R collide after
 * about sqrt(R) items). false too where the bits cannot be allocated. */
static bool all_distinct(mkrt_layer_scratch *s, const mkrt_item *items, size_t n, uint32_t lo, size_t range)
{
    const size_t words = (range + 63) / 64;
    if (words > s->seen_words) {
        uint64_t *w = mkrt__alloc(words * sizeof *w, MKRT_CACHE_LINE);
        if (w == NULL)
            return false;
        mkrt__free(s->seen, s->seen_words * sizeof *s->seen);
        s->seen = w;
        s->seen_words = words;
    }
    memset(s->seen, 0, words * sizeof *s->seen);
    for (size_t i = 0; i < n; i++) {
        const uint32_t out = items[i].out - lo, in = items[i].in - lo;
        const uint64_t bo = (uint64_t)1 << (out % 64), bi = (uint64_t)1 << (in % 64);
        if (s->seen[out / 64] & bo)
            return false;
        s->seen[out / 64] |= bo;
        if (in != out) {
            if (s->seen[in / 64] & bi)
                return false;
            s->seen[in / 64] |= bi;
        }
    }
    return true;
}

mkrt_status mkrt__layer_prune_levels(mkrt_layer_scratch *s, mkrt_item *items, size_t n,
                                     const mkrt__layer_rules *rules, size_t *kept, size_t *layers,
                                     const uint32_t **level, mkrt_error *err)
{
    mkrt_status st = check_args(s, items, n, rules, err);
    if (st != MKRT_OK)
        return st;
    *kept = 0;
    *layers = 0;
    if (n == 0) {
        *level = s->level;
        return MKRT_OK;
    }
    int direct;
    uint32_t lo;
    size_t mask;
    if ((st = begin(s, items, n, rules, &direct, &lo, &mask, err)) != MKRT_OK)
        return st;
    if (direct && rules->bounded && all_distinct(s, items, n, lo, (size_t)rules->hi - lo + 1)) {
        memset(s->level, 0, n * sizeof *s->level);
        s->offsets[0] = (uint32_t)n; /* items per level (mkrt__layer_count) */
        *kept = n;
        *layers = 1;
        *level = s->level;
        return MKRT_OK;
    }
    uint32_t levels;
    *kept = rules->prune ? pass_runtime(s, items, n, direct, lo, mask, rules, &levels)
                         : pass_plain(s, items, n, direct, lo, mask, rules, &levels);
    *layers = levels;
    *level = s->level;
    return MKRT_OK;
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
    mkrt_status st = check_args(s, items, n, plan, err);
    if (st != MKRT_OK)
        return st;
    if (n == 0) {
        mkrt__layer_plan_csr(s, 0, 0, plan);
        return MKRT_OK;
    }
    /* Without pruning the items are only read (the pass writes items[]
     * only when it prunes). */
    const mkrt__layer_rules r = {key, NULL, key_ctx, false, false, false, 0, 0, NULL, NULL, NULL};
    int direct;
    uint32_t lo;
    size_t mask;
    if ((st = begin(s, items, n, &r, &direct, &lo, &mask, err)) != MKRT_OK)
        return st;
    uint32_t levels;
    pass_plain(s, (mkrt_item *)items, n, direct, lo, mask, &r, &levels);
    mkrt__layer_plan_csr(s, n, levels, plan);
    return MKRT_OK;
}

/* ---- the split levelling (pipeline/layer_internal.h) ------------------ */

bool mkrt__layer_split_begin(mkrt__layer_split *sp, mkrt_layer_scratch *whole, mkrt_layer_scratch *const *part,
                             uint32_t parts, mkrt_item *items, mkrt_item *out, size_t n,
                             const mkrt__layer_rules *rules, bool ranges)
{
    if (parts < 2 || parts > MKRT__SPLIT_MAX || n < parts || !rules->prune || !rules->bounded ||
        n > (size_t)UINT32_MAX - 1 || grow_items(whole, n, NULL) != MKRT_OK)
        return false;
    /* Direct indexing only (begin's rule): the owner array is by handle. */
    const uint64_t range = (uint64_t)rules->hi - rules->lo + 1;
    const uint64_t direct_limit = (uint64_t)n * 4 > 65536 ? (uint64_t)n * 4 : 65536;
    if (rules->lo > rules->hi || range > direct_limit)
        return false;
    if (range > whole->owner_len) {
        _Atomic uint32_t *o = mkrt__alloc_zeroed((size_t)range * sizeof *o, MKRT_CACHE_LINE);
        if (o == NULL)
            return false;
        mkrt__free((void *)whole->owner, whole->owner_len * sizeof *o);
        whole->owner = o;
        whole->owner_len = (size_t)range;
    }
    /* A new epoch: the tags of earlier splits no longer count (a 24-bit
     * epoch that wraps can only make a stale tag look like a conflict,
     * which falls back to the serial pass). */
    whole->owner_epoch = (whole->owner_epoch + 1) & 0xFFFFFFu;
    if (whole->owner_epoch == 0)
        whole->owner_epoch = 1;
    sp->whole = whole;
    for (uint32_t k = 0; k < parts; k++)
        sp->part[k] = part[k];
    sp->items = items;
    sp->out = out;
    sp->n = n;
    sp->parts = parts;
    sp->rules = *rules;
    sp->range = (size_t)range;
    sp->ranges = ranges;
    sp->disjoint = false;
    atomic_init(&sp->next, 0);
    return true;
}

/* Part k: items [n k / parts, n (k + 1) / parts) levelled in part k's
 * scratch, kept items into out[] and levels into the whole's level[] at
 * the part's own start (the merge closes the gaps). */
static void split_part(mkrt__layer_split *sp, uint32_t k)
{
    const uint64_t t0 = mkrt__now_ns();
    const size_t from = sp->n * k / sp->parts, to = sp->n * (k + 1) / sp->parts, len = to - from;
    mkrt_layer_scratch *s = sp->part[k];
    sp->ok[k] = false;
    sp->conflict[k] = false;
    /* The part's table: direct over the batch's handle range where that
     * is at most 4 entries per item of the part, else hashed for the
     * part's items (load <= 1/2). Either way at most 128 bytes per item,
     * so the parts together hold no more than one part would. */
    const int direct = sp->range <= 4 * (uint64_t)len;
    size_t table_len = sp->range, mask = 0;
    if (!direct) {
        for (table_len = 64; table_len < 4 * len;)
            table_len *= 2;
        mask = table_len - 1;
    }
    if (grow_items(s, len, NULL) != MKRT_OK || prepare_table(s, table_len, NULL) != MKRT_OK)
        return;
    s->prefetch = table_len * sizeof(handle_state) > 32768;
    mkrt__layer_rules r = sp->rules;
    sp->skipped[k] = 0;
    r.skipped = &sp->skipped[k];
    r.mark = r.mark != NULL ? r.mark + from : NULL;
    owner_ctx own = {sp->whole->owner, r.lo, sp->whole->owner_epoch << 8 | k, false, sp->ranges, UINT32_MAX, 0};
    uint32_t levels;
    const uint32_t base = direct ? r.lo : 0;
    mkrt_item *in = sp->items + from, *out = sp->out + from;
    uint32_t *lv = sp->whole->level + from;
    size_t kept;
    if (r.builtin)
        kept = direct ? assign_levels(s, in, len, 1, base, 0, RULES_BUILTIN, 1, &r, &levels, out, lv, &own)
                      : assign_levels(s, in, len, 0, 0, mask, RULES_BUILTIN, 1, &r, &levels, out, lv, &own);
    else
        kept = direct ? assign_levels(s, in, len, 1, base, 0, RULES_CALLBACKS, 1, &r, &levels, out, lv, &own)
                      : assign_levels(s, in, len, 0, 0, mask, RULES_CALLBACKS, 1, &r, &levels, out, lv, &own);
    sp->kept[k] = kept;
    sp->levels[k] = levels;
    sp->conflict[k] = own.conflict;
    sp->min[k] = own.min;
    sp->max[k] = own.max;
    sp->ok[k] = true;
    sp->ns[k] = mkrt__now_ns() - t0;
}

void mkrt__layer_split_run(void *ctx, uint32_t executor)
{
    (void)executor;
    mkrt__layer_split *sp = ctx;
    /* relaxed: the claims only hand out distinct parts; what a part
     * writes reaches the merge through the task's join. */
    for (uint32_t k; (k = atomic_fetch_add_explicit(&sp->next, 1, memory_order_relaxed)) < sp->parts;)
        split_part(sp, k);
}

/* Whether no two parts' handle ranges overlap (a part that touched no
 * handle has min > max and overlaps nothing). */
static bool ranges_disjoint(const mkrt__layer_split *sp)
{
    for (uint32_t a = 0; a < sp->parts; a++)
        for (uint32_t b = a + 1; b < sp->parts; b++)
            if (sp->min[a] <= sp->max[a] && sp->min[b] <= sp->max[b] && sp->min[a] <= sp->max[b] &&
                sp->min[b] <= sp->max[a])
                return false;
    return true;
}

bool mkrt__layer_split_end(mkrt__layer_split *sp, size_t *kept, size_t *layers, size_t *skipped)
{
    uint32_t top = 0;
    for (uint32_t k = 0; k < sp->parts; k++) {
        if (!sp->ok[k] || sp->conflict[k])
            return false; /* the items are as they were: level them serially */
        top = sp->levels[k] > top ? sp->levels[k] : top;
    }
    /* Disjoint ranges: no handle was touched by two parts, claims or not.
     * Overlapping ones without claims prove nothing: the serial pass. */
    sp->disjoint = ranges_disjoint(sp);
    if (sp->ranges && !sp->disjoint)
        return false;
    /* Exact: no handle is touched by two parts, so every item met the
     * same handle states as in the one pass, and the kept items in part
     * order are the one pass's order. Their levels close up behind the
     * parts before them; the counts add up. */
    mkrt_layer_scratch *w = sp->whole;
    uint32_t *count = w->offsets;
    memset(count, 0, (size_t)top * sizeof *count);
    size_t at = 0, sk = 0;
    for (uint32_t k = 0; k < sp->parts; k++) {
        const size_t from = sp->n * k / sp->parts, len = sp->n * (k + 1) / sp->parts - from;
        /* A part that kept every item in place wrote back what is there. */
        if (at != from || sp->kept[k] != len)
            memcpy(sp->items + at, sp->out + from, sp->kept[k] * sizeof *sp->items);
        if (at != from)
            memmove(w->level + at, w->level + from, sp->kept[k] * sizeof *w->level);
        for (uint32_t l = 0; l < sp->levels[k]; l++)
            count[l] += sp->part[k]->offsets[l];
        at += sp->kept[k];
        sk += sp->skipped[k];
    }
    *kept = at;
    *layers = top;
    *skipped = sk;
    return true;
}
