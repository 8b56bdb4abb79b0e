/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_dedupe.c - dedupe: the reference tests (whole_megakernel_opt),
 * random equivalence against a quadratic oracle, scratch reuse and the
 * zero-allocation steady state. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "count_alloc.h"
#include "mkrt/dedupe.h"
#include "tap.h"

static mkrt_item item(uint32_t op, uint32_t in, uint32_t out)
{
    return (mkrt_item){op, in, out, 0};
}

static int same_items(const mkrt_item *a, const mkrt_item *b, size_t n)
{
    return memcmp(a, b, n * sizeof *a) == 0;
}

typedef struct pruned {
    mkrt_status st;
    size_t kept, pruned;
    mkrt_item out[64];
    mkrt_dedupe_pair pairs[64];
    mkrt_dedupe_report report;
} prune_result;

static void prune(mkrt_dedupe_scratch *s, const mkrt_item *items, size_t n, prune_result *p)
{
    for (size_t i = 0; i < 64; i++)
        p->out[i] = item(99, 99, 99);
    p->report = (mkrt_dedupe_report){p->pairs, 64, 0};
    p->st = mkrt_dedupe_prune(s, items, n, p->out, &p->kept, &p->pruned, &p->report, NULL);
}

static int pair_is(const prune_result *p, size_t k, size_t first, size_t dup)
{
    return p->report.count > k && p->pairs[k].first == first && p->pairs[k].duplicate == dup;
}

static void reference_prune_tests(mkrt_dedupe_scratch *s)
{
    prune_result p;
    {
        mkrt_item in[] = {item(1, 0, 5), item(2, 5, 6), item(1, 0, 5), item(3, 6, 7), item(2, 5, 6)};
        mkrt_item want[] = {item(1, 0, 5), item(2, 5, 6), item(3, 6, 7)};
        prune(s, in, 5, &p);
        ok(p.st == MKRT_OK && p.kept == 3 && same_items(p.out, want, 3),
           "prune_redundant_work_items_drops_later_duplicates: output");
        ok(p.pruned == 2 && p.report.count == 2 && pair_is(&p, 0, 0, 2) && pair_is(&p, 1, 1, 4),
           "prune_redundant_work_items_drops_later_duplicates: pairs (0,2),(1,4)");
    }
    {
        mkrt_item in[] = {item(1, 0, 5), item(2, 5, 6), item(1, 0, 5), item(3, 6, 7)};
        mkrt_item want[] = {item(1, 0, 5), item(2, 5, 6), item(3, 6, 7)};
        prune(s, in, 4, &p);
        size_t cap = mkrt_dedupe_scratch_capacity(s);
        prune_result q;
        prune(s, in, 4, &q);
        ok(p.report.count == q.report.count && memcmp(p.pairs, q.pairs, sizeof p.pairs[0]) == 0,
           "prune_redundant_work_items_reuses_hash_scratch: equal reports");
        ok(mkrt_dedupe_scratch_capacity(s) >= cap && cap > 0,
           "prune_redundant_work_items_reuses_hash_scratch: capacity kept (%zu)", cap);
        ok(q.kept == 3 && same_items(q.out, want, 3),
           "prune_redundant_work_items_reuses_hash_scratch: output");
    }
    {
        prune(s, NULL, 0, &p);
        ok(p.st == MKRT_OK && p.kept == 0 && p.pruned == 0 && p.report.count == 0 &&
               p.out[0].op == 99,
           "prune_redundant_work_items_handles_empty_input");
    }
    {
        mkrt_item in[] = {item(1, 0, 5), item(1, 0, 5), item(1, 0, 5)};
        prune(s, in, 3, &p);
        ok(p.kept == 1 && same_items(p.out, in, 1) && p.pruned == 2 && pair_is(&p, 0, 0, 1) &&
               pair_is(&p, 1, 0, 2),
           "prune_redundant_work_items_all_duplicates_keep_one");
    }
    {
        mkrt_item in[] = {item(1, 0, 5), item(2, 5, 6), item(1, 0, 5), item(3, 6, 7), item(4, 7, 8)};
        mkrt_item want[] = {item(1, 0, 5), item(2, 5, 6), item(3, 6, 7), item(4, 7, 8)};
        prune(s, in, 5, &p);
        ok(p.kept == 4 && same_items(p.out, want, 4) && p.report.count == 1 && pair_is(&p, 0, 0, 2),
           "prune_redundant_work_items_preserves_order_after_first_duplicate");
    }
    {
        mkrt_item in[] = {item(1, 0, 5)};
        prune(s, in, 1, &p);
        ok(p.kept == 1 && p.pruned == 0 && p.report.count == 0 && p.out[0].op == 99,
           "prune_redundant_work_items_leaves_output_empty_when_no_copy_needed");
    }
    {
        mkrt_item in[] = {{1, 0, 5, 7}, {1, 0, 5, 99}};
        prune(s, in, 2, &p);
        ok(p.kept == 2 && p.pruned == 0 && p.report.count == 0 && p.out[0].op == 99,
           "prune_redundant_work_items_keeps_distinct_params");
    }
    {
        mkrt_item in[] = {item(1, 0, 5), item(2, 0, 6), item(1, 0, 5)};
        prune(s, in, 3, &p);
        ok(p.pruned == 1 && p.kept == 2 && same_items(p.out, in, 2),
           "prune_redundant_work_items_still_catches_duplicate_with_repeated_output");
    }
    {
        /* output_handles_dense_unique_{accepts,rejects}: observable as "no
         * hashing" - the table is never allocated by a dense-unique batch. */
        mkrt_dedupe_scratch *fresh = mkrt_dedupe_scratch_create(NULL);
        mkrt_item uniq[] = {item(1, 0, 5), item(1, 0, 6), item(1, 0, 7)};
        prune(fresh, uniq, 3, &p);
        ok(p.pruned == 0 && mkrt_dedupe_scratch_capacity(fresh) == 0,
           "output_handles_dense_unique_accepts_single_owner_outputs (no hash table built)");
        mkrt_item rep[] = {item(1, 0, 5), item(2, 0, 5)};
        prune(fresh, rep, 2, &p);
        ok(p.pruned == 0 && mkrt_dedupe_scratch_capacity(fresh) > 0,
           "output_handles_dense_unique_rejects_repeated_output (hash path taken, nothing pruned)");
        mkrt_dedupe_scratch_destroy(fresh);
    }
}

typedef struct xarm {
    mkrt_cross_arm_pair pairs[16];
    mkrt_cross_arm_report r;
} xarm;

static void cross(mkrt_dedupe_scratch *s, const mkrt_item *const *arms, const size_t *lens,
                  size_t count, xarm *x)
{
    x->r = (mkrt_cross_arm_report){x->pairs, 16, 0};
    mkrt_dedupe_cross_arm(s, arms, lens, count, &x->r, NULL);
}

static int xpair(const xarm *x, size_t k, size_t a, size_t b, size_t i)
{
    return x->r.count > k && x->pairs[k].early_arm == a && x->pairs[k].late_arm == b &&
           x->pairs[k].index_in_late_arm == i;
}

static void reference_cross_arm_tests(mkrt_dedupe_scratch *s)
{
    xarm x;
    cross(s, NULL, NULL, 0, &x);
    is(x.r.count, 0, "empty_arms_have_no_redundancy");
    {
        mkrt_item a[] = {item(1, 0, 5), item(1, 0, 5), item(2, 5, 6)};
        const mkrt_item *arms[] = {a};
        size_t lens[] = {3};
        cross(s, arms, lens, 1, &x);
        is(x.r.count, 0, "single_arm_with_repeats_has_no_cross_arm_redundancy");
    }
    {
        mkrt_item a[] = {item(1, 0, 5), item(2, 5, 6)}, b[] = {item(1, 0, 5), item(2, 5, 6)};
        const mkrt_item *arms[] = {a, b};
        size_t lens[] = {2, 2};
        cross(s, arms, lens, 2, &x);
        ok(x.r.count == 2 && xpair(&x, 0, 0, 1, 0) && xpair(&x, 1, 0, 1, 1),
           "identical_arms_report_full_overlap");
    }
    {
        mkrt_item a[] = {item(1, 0, 5)}, b[] = {item(2, 7, 8)};
        const mkrt_item *arms[] = {a, b};
        size_t lens[] = {1, 1};
        cross(s, arms, lens, 2, &x);
        is(x.r.count, 0, "fully_disjoint_arms_have_no_redundancy");
    }
    {
        mkrt_item a[] = {item(1, 0, 5)}, b[] = {item(99, 0, 0)};
        const mkrt_item *arms[] = {a, b, a, a};
        size_t lens[] = {1, 1, 1, 1};
        cross(s, arms, lens, 4, &x);
        ok(x.r.count == 2 && xpair(&x, 0, 0, 2, 0) && xpair(&x, 1, 0, 3, 0),
           "redundancy_uses_first_seen_arm_index");
    }
    {
        mkrt_item a[] = {{1, 0, 5, 7}}, b[] = {{1, 0, 5, 99}};
        const mkrt_item *arms[] = {a, b};
        size_t lens[] = {1, 1};
        cross(s, arms, lens, 2, &x);
        is(x.r.count, 1, "param_field_does_not_affect_redundancy");
    }
    {
        mkrt_item a[] = {item(1, 0, 5)}, b[] = {item(1, 1, 5)}, c[] = {item(1, 0, 6)};
        const mkrt_item *ab[] = {a, b}, *ac[] = {a, c};
        size_t lens[] = {1, 1};
        cross(s, ab, lens, 2, &x);
        is(x.r.count, 0, "different_inputs_are_not_redundant");
        cross(s, ac, lens, 2, &x);
        is(x.r.count, 0, "different_outputs_are_not_redundant");
    }
    {
        mkrt_item a[] = {item(1, 0, 5)}, b[] = {item(99, 0, 0), item(1, 0, 5), item(42, 0, 0)};
        const mkrt_item *arms[] = {a, b};
        size_t lens[] = {1, 3};
        cross(s, arms, lens, 2, &x);
        ok(x.r.count == 1 && xpair(&x, 0, 0, 1, 1), "op_index_refers_to_late_arm_position");
    }
}

/* Quadratic oracle: keep items[i] iff no earlier item equals it. */
static void random_equivalence(mkrt_dedupe_scratch *s)
{
    enum { N = 6000 };
    static mkrt_item items[N], out[N], want[N];
    static mkrt_dedupe_pair pairs[N];
    unsigned seed = 12345;
    int bad = 0;
    for (int round = 0; round < 300 && !bad; round++) {
        size_t n = (size_t)(rand_r(&seed) % (round < 200 ? 300 : N));
        uint32_t space = 1 + (uint32_t)(rand_r(&seed) % (round % 3 == 0 ? 8 : 5000));
        for (size_t i = 0; i < n; i++)
            items[i] = (mkrt_item){(uint32_t)rand_r(&seed) % 3, (uint32_t)rand_r(&seed) % space,
                                   (uint32_t)rand_r(&seed) % space, (uint32_t)rand_r(&seed) % 2};
        size_t w = 0, dups = 0;
        for (size_t i = 0; i < n; i++) {
            size_t j = 0;
            while (j < i && memcmp(&items[j], &items[i], sizeof items[i]) != 0)
                j++;
            if (j == i)
                want[w++] = items[i];
            else
                dups++;
        }
        size_t kept, pruned;
        mkrt_dedupe_report rep = {pairs, N, 0};
        mkrt_dedupe_prune(s, items, n, out, &kept, &pruned, &rep, NULL);
        const mkrt_item *got = pruned ? out : items;
        if (kept != w || pruned != dups || !same_items(got, want, w) || rep.count != dups)
            bad = 1;
        for (size_t k = 0; k < rep.count && !bad; k++)
            if (memcmp(&items[pairs[k].first], &items[pairs[k].duplicate], sizeof(mkrt_item)) != 0 ||
                pairs[k].first >= pairs[k].duplicate)
                bad = 1;
    }
    ok(!bad, "300 random batches (up to 6000 items) match the quadratic oracle");
}

static void truncated_report(mkrt_dedupe_scratch *s)
{
    mkrt_item in[] = {item(1, 0, 5), item(1, 0, 5), item(1, 0, 5), item(1, 0, 5)};
    mkrt_item out[4];
    mkrt_dedupe_pair pairs[2];
    mkrt_dedupe_report rep = {pairs, 2, 0};
    size_t kept, pruned;
    mkrt_dedupe_prune(s, in, 4, out, &kept, &pruned, &rep, NULL);
    ok(kept == 1 && pruned == 3 && rep.count == 3 && pairs[1].duplicate == 2,
       "a short report counts every pair and keeps the first ones; pruning is complete");
    mkrt_error err;
    is(mkrt_dedupe_prune(s, in, 4, NULL, &kept, &pruned, NULL, &err), MKRT_EINVAL,
       "NULL out is MKRT_EINVAL");
    like(err.message, "Fix:", "... with a Fix message");
}

static void allocation_discipline(void)
{
    enum { N = 20000 };
    static mkrt_item items[N], out[N];
    for (size_t i = 0; i < N; i++)
        items[i] = (mkrt_item){1, (uint32_t)i, (uint32_t)(i % 7000), (uint32_t)(i % 3)};
    count_alloc_install();
    mkrt_dedupe_scratch *s = mkrt_dedupe_scratch_create(NULL);
    size_t kept, pruned;
    mkrt_dedupe_prune(s, items, N, out, &kept, &pruned, NULL, NULL);
    uint64_t warm = count_alloc_calls();
    for (int round = 0; round < 50; round++)
        mkrt_dedupe_prune(s, items, N - (size_t)round * 100, out, &kept, &pruned, NULL, NULL);
    is(count_alloc_calls() - warm, 0, "hash path: 50 batches after warm-up allocate nothing");
    /* Shrink rule: a table sized for 20000 serving a batch of 10 shrinks
     * (capacity > max(4 n, 1024)), and then stays put. */
    size_t big = mkrt_dedupe_scratch_capacity(s);
    mkrt_dedupe_prune(s, items, 10, out, &kept, &pruned, NULL, NULL);
    mkrt_item dup[] = {items[0], items[0], items[1]};
    mkrt_dedupe_prune(s, dup, 3, out, &kept, &pruned, NULL, NULL);
    size_t small = mkrt_dedupe_scratch_capacity(s);
    ok(big >= N && small < 1024 && small >= 3, "table shrinks when far oversized (%zu -> %zu)", big,
       small);
    /* 1000 items keep a table of 1024..4000 entries: no shrink, no growth. */
    mkrt_dedupe_prune(s, items, 1000, out, &kept, &pruned, NULL, NULL);
    size_t mid = mkrt_dedupe_scratch_capacity(s);
    warm = count_alloc_calls();
    mkrt_dedupe_prune(s, items, 300, out, &kept, &pruned, NULL, NULL);
    mkrt_dedupe_prune(s, items, 1000, out, &kept, &pruned, NULL, NULL);
    ok(count_alloc_calls() == warm && mkrt_dedupe_scratch_capacity(s) == mid,
       "within max(4n, 1024) the table is kept as it is");
    /* Allocation failure: clean error, batch usable unpruned. */
    mkrt_dedupe_scratch *t = mkrt_dedupe_scratch_create(NULL);
    count_alloc_fail_after(0);
    mkrt_error err;
    mkrt_status st = mkrt_dedupe_prune(t, items, N, out, &kept, &pruned, NULL, &err);
    count_alloc_fail_after(UINT64_MAX);
    ok(st == MKRT_ENOMEM && kept == N && pruned == 0,
       "allocation failure is MKRT_ENOMEM with the batch left whole");
    like(err.message, "hash reservation failed for 20000 item(s). Fix: shard the work batch",
         "... and the reference message");
    count_alloc_fail_after(0);
    ok(mkrt_dedupe_scratch_create(&err) == NULL && err.status == MKRT_ENOMEM,
       "scratch creation failure is MKRT_ENOMEM");
    count_alloc_fail_after(UINT64_MAX);
    mkrt_dedupe_scratch_destroy(t);
    mkrt_dedupe_scratch_destroy(s);
    count_alloc_uninstall();
}

/* mkrt_dedupe_prune_ordered: pruning never changes the result of running
 * the items in order (cells: out = f(in, param)), checked against running
 * both the input and the output on a model; hand cases first. */
/* Model ops: 0 is out = param (idempotent), 1 is out = in + param
 * (idempotent when in != out). */
static bool model_idempotent(const mkrt_item *it, void *ctx)
{
    (void)ctx;
    return it->op == 0 || it->in != it->out;
}

static void model_run(const mkrt_item *items, size_t n, uint64_t *cells)
{
    for (size_t i = 0; i < n; i++)
        cells[items[i].out] = items[i].op == 0 ? items[i].param : cells[items[i].in] + items[i].param;
}

static void ordered_prune_tests(mkrt_dedupe_scratch *s)
{
    mkrt_item out[64];
    size_t kept, pruned;
    mkrt_dedupe_pair pairs[8];
    mkrt_dedupe_report rep = {pairs, 8, 0};
    mkrt_item a[] = {{0, 0, 5, 1}, {0, 0, 5, 2}, {0, 0, 5, 1}};
    is(mkrt_dedupe_prune_ordered(s, a, 3, model_idempotent, NULL, out, &kept, &pruned, &rep, NULL), MKRT_OK,
       "ordered: ok");
    is(pruned, 0, "ordered: store 1, store 2, store 1 keeps all three (a write in between)");
    mkrt_item b[] = {{1, 3, 4, 1}, {0, 0, 9, 7}, {1, 3, 4, 1}, {1, 4, 4, 1}, {1, 4, 4, 1}};
    mkrt_dedupe_prune_ordered(s, b, 5, model_idempotent, NULL, out, &kept, &pruned, &rep, NULL);
    ok(pruned == 1 && kept == 4 && rep.count == 1 && pairs[0].first == 0 && pairs[0].duplicate == 2,
       "ordered: an unrelated write in between still prunes; in == out never does (%zu pruned)", pruned);
    mkrt_item c[] = {{1, 3, 4, 1}, {0, 0, 3, 7}, {1, 3, 4, 1}, {1, 3, 4, 1}};
    mkrt_dedupe_prune_ordered(s, c, 4, model_idempotent, NULL, out, &kept, &pruned, &rep, NULL);
    ok(pruned == 1 && rep.count == 1 && pairs[0].first == 2 && pairs[0].duplicate == 3,
       "ordered: a write to in re-arms the copy; the next duplicate pairs with it");
    mkrt_dedupe_prune_ordered(s, c, 4, NULL, NULL, out, &kept, &pruned, &rep, NULL);
    is(pruned, 1, "ordered: NULL predicate treats every op as idempotent");
    is(mkrt_dedupe_prune_ordered(NULL, c, 4, NULL, NULL, out, &kept, &pruned, NULL, NULL), MKRT_EINVAL,
       "ordered: NULL scratch is EINVAL");
    is(mkrt_dedupe_prune_ordered(s, NULL, 4, NULL, NULL, out, &kept, &pruned, NULL, NULL), MKRT_EINVAL,
       "ordered: NULL items is EINVAL");
    is(mkrt_dedupe_prune_ordered(s, c, 4, NULL, NULL, out, NULL, &pruned, NULL, NULL), MKRT_EINVAL,
       "ordered: NULL kept is EINVAL");

    unsigned seed = 17;
    int same = 0, some = 0;
    for (int round = 0; round < 400; round++) {
        mkrt_item items[64];
        size_t n = 1 + (size_t)rand_r(&seed) % 64;
        uint32_t span = 2 + (uint32_t)rand_r(&seed) % 8;
        for (size_t i = 0; i < n; i++) {
            if (i > 0 && rand_r(&seed) % 2)
                items[i] = items[(size_t)rand_r(&seed) % i];
            else
                items[i] = (mkrt_item){(uint32_t)rand_r(&seed) % 2, (uint32_t)rand_r(&seed) % span,
                                       (uint32_t)rand_r(&seed) % span, (uint32_t)rand_r(&seed) % 3};
        }
        if (mkrt_dedupe_prune_ordered(s, items, n, model_idempotent, NULL, out, &kept, &pruned, NULL,
                                      NULL) != MKRT_OK)
            continue;
        uint64_t want[16] = {0}, got[16] = {0};
        model_run(items, n, want);
        model_run(pruned ? out : items, kept, got);
        same += memcmp(want, got, sizeof want) == 0;
        some += pruned > 0;
    }
    is(same, 400, "ordered: 400 random batches, pruning never changes the result");
    ok(some > 100, "ordered: and pruning happened in %d of them", some);
}

int main(void)
{
    mkrt_dedupe_scratch *s = mkrt_dedupe_scratch_create(NULL);
    reference_prune_tests(s);
    reference_cross_arm_tests(s);
    random_equivalence(s);
    truncated_report(s);
    ordered_prune_tests(s);
    mkrt_dedupe_scratch_destroy(s);
    allocation_discipline();
    return done_testing();
}
