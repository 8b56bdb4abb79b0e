/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_layer.c - batch layering: the three ordering rules, and
 * equality with "every pairwise edge, then Kahn layers" on random batches. */
#include <stdlib.h>
#include <string.h>

#include "count_alloc.h"
#include "mkrt/dedupe.h"
#include "mkrt/layer.h"
#include "ops/builtin_ops.h"
#include "pipeline/layer_internal.h"
#include "tap.h"

static mkrt_item it(uint32_t in, uint32_t out)
{
    return (mkrt_item){1, in, out, 0};
}

static int levels_are(const mkrt_layer_plan *p, const uint32_t *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p->item_level[i] != want[i])
            return 0;
    return 1;
}

static void rules(mkrt_layer_scratch *s)
{
    mkrt_layer_plan p;
    {
        mkrt_item b[] = {it(1, 2), it(2, 3)}; /* B reads what A writes */
        uint32_t want[] = {0, 1};
        mkrt_layer_batch(s, b, 2, &p, NULL);
        ok(p.layer_count == 2 && levels_are(&p, want, 2), "read after write orders B after A");
    }
    {
        mkrt_item b[] = {it(1, 5), it(2, 5)};
        uint32_t want[] = {0, 1};
        mkrt_layer_batch(s, b, 2, &p, NULL);
        ok(p.layer_count == 2 && levels_are(&p, want, 2), "write after write orders B after A");
    }
    {
        mkrt_item b[] = {it(7, 1), it(3, 7)}; /* B writes what A reads */
        uint32_t want[] = {0, 1};
        mkrt_layer_batch(s, b, 2, &p, NULL);
        ok(p.layer_count == 2 && levels_are(&p, want, 2), "write after read orders B after A");
    }
    {
        mkrt_item b[] = {it(7, 1), it(7, 2), it(7, 3)}; /* readers share */
        mkrt_layer_batch(s, b, 3, &p, NULL);
        ok(p.layer_count == 1, "items that only share an input run in one layer");
    }
    {
        /* chain 0->1->2 plus an independent item, then a reader of all. */
        mkrt_item b[] = {it(10, 11), it(11, 12), it(50, 51), it(12, 13), it(51, 60)};
        uint32_t want[] = {0, 1, 0, 2, 1};
        mkrt_layer_batch(s, b, 5, &p, NULL);
        ok(levels_are(&p, want, 5) && p.layer_count == 3, "levels follow the longest chain");
        uint32_t off[] = {0, 2, 4, 5}, cols[] = {0, 2, 1, 4, 3};
        ok(memcmp(p.layer_offsets, off, sizeof off) == 0 && memcmp(p.layer_items, cols, sizeof cols) == 0,
           "CSR groups list items by level, ascending within a level");
    }
    {
        mkrt_item b[] = {it(0xFFFFFFF0u, 3), it(3, 0x10), it(0x10, 0xFFFFFFF0u)};
        uint32_t want[] = {0, 1, 2};
        mkrt_layer_batch(s, b, 3, &p, NULL);
        ok(levels_are(&p, want, 3), "sparse handles (hash table path) layer the same way");
    }
    mkrt_layer_batch(s, NULL, 0, &p, NULL);
    ok(p.layer_count == 0 && p.item_count == 0 && p.layer_offsets[0] == 0, "an empty batch has no layers");
    mkrt_error err;
    is(mkrt_layer_batch(s, NULL, 3, &p, &err), MKRT_EINVAL, "NULL items with n > 0 is MKRT_EINVAL");
}

/* Oracle: explicit edges for every conflicting pair j < i, then Kahn. */
static void oracle(const mkrt_item *b, size_t n, uint32_t *level)
{
    static uint32_t indeg[2048], queue[2048];
    static uint8_t adj[2048][2048];
    for (size_t i = 0; i < n; i++) {
        indeg[i] = 0;
        memset(adj[i], 0, n);
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (b[i].in == b[j].out || b[i].out == b[j].out || b[i].out == b[j].in) {
                adj[j][i] = 1;
                indeg[i]++;
            }
    size_t head = 0, tail = 0, layer_end;
    for (size_t i = 0; i < n; i++)
        if (indeg[i] == 0) {
            queue[tail++] = (uint32_t)i;
            level[i] = 0;
        }
    uint32_t lv = 0;
    while (head < tail) {
        layer_end = tail;
        for (; head < layer_end; head++) {
            uint32_t u = queue[head];
            level[u] = lv;
            for (size_t v = 0; v < n; v++)
                if (adj[u][v] && --indeg[v] == 0)
                    queue[tail++] = (uint32_t)v;
        }
        lv++;
    }
}

static void random_equivalence(mkrt_layer_scratch *s)
{
    static mkrt_item b[2048];
    static uint32_t want[2048];
    unsigned seed = 99;
    int bad = 0, rounds = 0;
    for (; rounds < 3000 && !bad; rounds++) {
        size_t n = 1 + (size_t)(rand_r(&seed) % (rounds < 2900 ? 64 : 2048));
        uint32_t space = 1 + (uint32_t)(rand_r(&seed) % (rounds % 4 == 0 ? 4 : 3 * n));
        uint32_t base = rounds % 5 == 0 ? 0xFFFF0000u - (uint32_t)rand_r(&seed) : 0;
        int sparse = rounds % 7 == 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t a = (uint32_t)rand_r(&seed) % space, c = (uint32_t)rand_r(&seed) % space;
            if (sparse) {
                a *= 2654435761u;
                c *= 2654435761u;
            }
            b[i] = (mkrt_item){1, base + a, base + c, 0};
        }
        oracle(b, n, want);
        mkrt_layer_plan p;
        if (mkrt_layer_batch(s, b, n, &p, NULL) != MKRT_OK || !levels_are(&p, want, n)) {
            bad = 1;
            break;
        }
        /* The CSR must list every item once, by level, ascending. */
        uint32_t maxl = 0;
        for (size_t i = 0; i < n; i++)
            maxl = want[i] > maxl ? want[i] : maxl;
        if (p.layer_count != maxl + 1 || p.layer_offsets[p.layer_count] != n)
            bad = 1;
        for (size_t l = 0; l < p.layer_count && !bad; l++)
            for (uint32_t k = p.layer_offsets[l]; k < p.layer_offsets[l + 1]; k++)
                if (want[p.layer_items[k]] != l ||
                    (k > p.layer_offsets[l] && p.layer_items[k - 1] >= p.layer_items[k]))
                    bad = 1;
    }
    ok(!bad, "%d random batches (dense, sparse and near-2^32 handles) equal pairwise edges + Kahn",
       rounds);
}

static void allocation_discipline(void)
{
    enum { N = 100000 };
    static mkrt_item b[N];
    for (size_t i = 0; i < N; i++)
        b[i] = (mkrt_item){1, (uint32_t)(i * 7 % 65536), (uint32_t)(i * 13 % 65536), 0};
    count_alloc_install();
    mkrt_layer_scratch *s = mkrt_layer_scratch_create(NULL);
    mkrt_layer_plan p;
    mkrt_layer_batch(s, b, N, &p, NULL);
    uint64_t warm = count_alloc_calls();
    for (int r = 0; r < 20; r++)
        mkrt_layer_batch(s, b, N - (size_t)r * 1000, &p, NULL);
    is(count_alloc_calls() - warm, 0, "20 batches after warm-up allocate nothing");
    mkrt_layer_scratch *t = mkrt_layer_scratch_create(NULL);
    count_alloc_fail_after(0);
    mkrt_error err;
    ok(mkrt_layer_batch(t, b, N, &p, &err) == MKRT_ENOMEM, "allocation failure is MKRT_ENOMEM");
    like(err.message, "Fix:", "... with a Fix message");
    count_alloc_fail_after(UINT64_MAX);
    mkrt_layer_scratch_destroy(t);
    mkrt_layer_scratch_destroy(s);
    count_alloc_uninstall();
}

/* The runtime's one pass (pipeline/layer_internal.h: prune and level
 * together) equals the two public calls one after the other: prune with
 * mkrt_dedupe_prune_ordered, then layer the kept items with the same
 * commuting key. Random batches of built-in ops over few handles (many
 * exact duplicates), both table modes, the built-ins' inline rules and
 * the callbacks. */
static bool model_idempotent(const mkrt_item *x, void *ctx)
{
    (void)ctx;
    return mkrt__ops_builtin_idempotent(x->op, x->in, x->out);
}

static uint32_t model_key(const mkrt_item *x, void *ctx)
{
    (void)ctx;
    return mkrt__ops_builtin_commute_key(x->op, x->in, x->out);
}

/* What the fused pass is checked against: mkrt_dedupe_prune_ordered,
 * then the kept items layered. Runs both (the fused pass under rl on a
 * copy of the batch in fused) and fills o; true when they keep the same
 * items in the same order and give them the same levels. */
typedef struct {
    size_t kept, pruned, want_layers, fused_kept, layers;
} fused_vs_two_step;

static bool fused_matches(mkrt_layer_scratch *s, mkrt_dedupe_scratch *d, mkrt_layer_scratch *ref,
                          const mkrt_item *batch, size_t n, mkrt_item *fused, mkrt_item *kept_items,
                          const mkrt__layer_rules *rl, fused_vs_two_step *o)
{
    mkrt_dedupe_prune_ordered(d, batch, n, model_idempotent, NULL, kept_items, &o->kept, &o->pruned, NULL,
                              NULL);
    const mkrt_item *k_items = o->pruned ? kept_items : batch;
    mkrt_layer_plan want;
    mkrt__layer_batch_commuting(ref, k_items, o->kept, model_key, NULL, &want, NULL);
    o->want_layers = want.layer_count;
    memcpy(fused, batch, n * sizeof *batch);
    const uint32_t *level;
    const mkrt_status st = mkrt__layer_prune_levels(s, fused, n, rl, &o->fused_kept, &o->layers, &level, NULL);
    return st == MKRT_OK && o->fused_kept == o->kept && o->layers == want.layer_count &&
           memcmp(fused, k_items, o->kept * sizeof *fused) == 0 &&
           memcmp(level, want.item_level, o->kept * sizeof *level) == 0;
}

static void fused_equivalence(mkrt_layer_scratch *s)
{
    enum { N = 400 };
    static mkrt_item batch[N], fused[N], kept_items[N];
    mkrt_dedupe_scratch *d = mkrt_dedupe_scratch_create(NULL);
    mkrt_layer_scratch *ref = mkrt_layer_scratch_create(NULL);
    uint64_t seed = 7;
    int same = 0, pruned_some = 0, rounds = 400;
    for (int r = 0; r < rounds; r++) {
        size_t n = 1 + (size_t)(r * 37 % N);
        uint32_t handles = 2 + (uint32_t)(r % 9);
        uint32_t spread = r % 3 == 0 ? 1000003u : 1; /* sparse handles: the hash table */
        for (size_t i = 0; i < n; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t v = (uint32_t)(seed >> 33);
            static const uint32_t ops[] = {MKRT_OPS_NOP, MKRT_OPS_STORE, MKRT_OPS_ADD, MKRT_OPS_MIN,
                                           MKRT_OPS_OR, MKRT_OPS_ACC, MKRT_OPS_APPEND};
            batch[i] = (mkrt_item){ops[v % 7], (v >> 3) % handles * spread, (v >> 8) % handles * spread,
                                   (v >> 13) % 2};
        }
        const mkrt__layer_rules rl = {model_key, model_idempotent, NULL, true, r % 2 == 0, r % 4 == 1, 0,
                                      UINT32_MAX, NULL, NULL, NULL};
        fused_vs_two_step o;
        const bool eq = fused_matches(s, d, ref, batch, n, fused, kept_items, &rl, &o);
        same += eq;
        pruned_some += o.pruned > 0;
        if (!eq)
            diag("round %d: %zu items, kept %zu / %zu, layers %zu / %zu", r, n, o.fused_kept, o.kept, o.layers,
                 o.want_layers);
    }
    is(same, rounds, "prune + levels in one pass equals mkrt_dedupe_prune_ordered then layering");
    ok(pruned_some > rounds / 4, "... with duplicates pruned in %d of %d batches", pruned_some, rounds);
    mkrt_layer_scratch_destroy(ref);
    mkrt_dedupe_scratch_destroy(d);
}

/* Batches over a compact handle range (the direct table, bounded as the
 * runtime bounds them) whose handles are all distinct, or distinct but
 * for one conflict put at a random place (the handle of an earlier item
 * read or written again, or an exact copy of an earlier item): the fused
 * pass (with its look for distinct handles first) equals pruning then
 * layering on every batch, all-distinct batches are one level with every
 * item kept, and a conflict anywhere, even the last item, is seen. */
static void distinct_equivalence(mkrt_layer_scratch *s)
{
    enum { N = 3000 };
    static mkrt_item batch[N], fused[N], kept_items[N];
    static uint32_t perm[2 * N];
    mkrt_dedupe_scratch *d = mkrt_dedupe_scratch_create(NULL);
    mkrt_layer_scratch *ref = mkrt_layer_scratch_create(NULL);
    uint64_t seed = 11;
    int same = 0, flat = 0, deep = 0, rounds = 300;
    for (int r = 0; r < rounds; r++) {
        const size_t n = 2 + (size_t)(r * 101 % (N - 2));
        const uint32_t base = 5000u + (uint32_t)r * 7u;
        /* 2n distinct handles in [base, base + 2n): a shuffled range. */
        for (uint32_t i = 0; i < 2 * n; i++)
            perm[i] = base + i;
        for (uint32_t i = (uint32_t)(2 * n) - 1; i > 0; i--) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            const uint32_t j = (uint32_t)((seed >> 33) % (i + 1)), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        for (size_t i = 0; i < n; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            const uint32_t v = (uint32_t)(seed >> 33);
            static const uint32_t ops[] = {MKRT_OPS_STORE, MKRT_OPS_ADD, MKRT_OPS_MIN, MKRT_OPS_ACC};
            const uint32_t out = perm[2 * i], in = v % 2 ? out : perm[2 * i + 1];
            batch[i] = (mkrt_item){ops[v % 4], in, out, v >> 8};
        }
        const int kind = r % 4; /* 0: all distinct; 1: a read, 2: a write, 3: a copy of an earlier item */
        if (kind != 0) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            const size_t at = r % 8 == 1 ? n - 1 : 1 + (size_t)((seed >> 33) % (n - 1));
            const size_t was = (size_t)((seed >> 13) % at);
            if (kind == 1)
                batch[at].in = batch[was].out;
            else if (kind == 2)
                batch[at].out = batch[was].in;
            else
                batch[at] = batch[was];
        }
        const mkrt__layer_rules rl = {model_key, model_idempotent, NULL, true, false, true, base,
                                      base + (uint32_t)(2 * n) - 1, NULL, NULL, NULL};
        fused_vs_two_step o;
        const bool eq = fused_matches(s, d, ref, batch, n, fused, kept_items, &rl, &o);
        same += eq;
        flat += kind == 0 && eq && o.layers == 1 && o.fused_kept == n;
        deep += kind != 0 && eq && (o.layers > 1 || o.fused_kept < n);
        if (!eq)
            diag("distinct round %d (conflict kind %d): %zu items, kept %zu / %zu, layers %zu / %zu", r, kind, n,
                 o.fused_kept, o.kept, o.layers, o.want_layers);
    }
    is(same, rounds, "distinct handles: the fused pass equals pruning then layering");
    is(flat, rounds / 4, "... every all-distinct batch is one level, every item kept");
    ok(deep >= rounds / 2, "... a conflict anywhere (the last item too) is seen: %d of %d batches", deep,
       rounds * 3 / 4);
    mkrt_layer_scratch_destroy(ref);
    mkrt_dedupe_scratch_destroy(d);
}

int main(void)
{
    mkrt_layer_scratch *s = mkrt_layer_scratch_create(NULL);
    rules(s);
    random_equivalence(s);
    fused_equivalence(s);
    distinct_equivalence(s);
    mkrt_layer_scratch_destroy(s);
    allocation_discipline();
    return done_testing();
}
