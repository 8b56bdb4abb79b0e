/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_plan_cache_path.c - the plan cache on the data path
 * (plan/shape_cache.h, pipeline/prune.c) and SPLIT, the dedupe stage's
 * levelling in parts (pipeline/layer_internal.h).
 *
 * The cache: a repeated workload hits (one miss for its first batch,
 * then hits, and hits + misses is every batch levelled); a batch whose
 * measured inputs change (another op mix, another size) misses, once;
 * EXPLAIN says hit or miss. SPLIT: a large batch of two halves that share
 * no handle is levelled in parts on the pool's executors, with the one
 * pass's layers and results; a batch whose halves share handles is not
 * (the parts conflict, the one pass runs, and the cache keeps that shape
 * on the one pass). Each fails with the cache or the split disabled. */
#include "plan_fixture.h"

#define BIG 40000u

static mkrt_item many[BIG];

static mkrt_stats stats(mkrt_runtime *rt)
{
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    return s;
}

static mkrt_config big_conf(void)
{
    mkrt_config c = conf(MKRT_BACKEND_CPU, 2, 0);
    c.ring_capacity = 65536;
    c.cells = 1u << 18;
    return c;
}

static void hits_and_misses(void)
{
    mkrt_runtime *rt = start(big_conf());
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_stats s = stats(rt);
    ok(s.plan_cache_hits == 0 && s.plan_cache_misses == 0, "a fresh runtime has asked its plan cache nothing");
    for (uint32_t i = 0; i < 1000; i++)
        many[i] = item(MKRT_OP_ADD, 100 + i, 100 + i, 1);
    one_go(rt, p, many, 1000);
    is(last_record(rt).plan_cache & 3u, 2u, "the first batch of a shape misses (EXPLAIN)");
    for (int r = 0; r < 7; r++)
        one_go(rt, p, many, 1000);
    s = stats(rt);
    is(s.plan_cache_misses, 1ull, "the same shape again: no other miss");
    is(s.plan_cache_hits, 7ull, "... seven hits");
    is(last_record(rt).plan_cache & 3u, 1u, "... and EXPLAIN says hit");
    is(s.plan_cache_hits + s.plan_cache_misses, s.batches, "one lookup per batch levelled (%llu batches)",
       (unsigned long long)s.batches);
    /* Another op mix, same size and span: a miss, then hits. */
    for (uint32_t i = 0; i < 1000; i++)
        many[i] = item(MKRT_OP_MIN, 100 + i, 100 + i, 1);
    one_go(rt, p, many, 1000);
    is(last_record(rt).plan_cache & 3u, 2u, "another op mix misses");
    one_go(rt, p, many, 1000);
    is(last_record(rt).plan_cache & 3u, 1u, "... once");
    /* Another size bucket. */
    for (uint32_t i = 0; i < 3000; i++)
        many[i] = item(MKRT_OP_MIN, 100 + i, 100 + i, 1);
    one_go(rt, p, many, 3000);
    is(last_record(rt).plan_cache & 3u, 2u, "another size misses");
    s = stats(rt);
    is(s.plan_cache_misses, 3ull, "three shapes, three misses");
    is(s.plan_cache_hits + s.plan_cache_misses, s.batches, "... and every batch asked once");
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

/* Halves on disjoint handles, each a chain of `depth` writes per handle:
 * the one pass gives `depth` layers. shared: the second half writes the
 * first half's handles. stride: handles are i x stride (16: a handle range
 * wider than 4 per item of a part, whose table is then hashed). */
static void halves(uint32_t depth, bool shared, uint32_t stride)
{
    const uint32_t per = BIG / depth / 2;
    size_t k = 0;
    for (uint32_t half = 0; half < 2; half++)
        for (uint32_t d = 0; d < depth; d++)
            for (uint32_t i = 0; i < per; i++) {
                uint32_t h = ((shared ? 0 : half * per) + i) * stride;
                many[k++] = item(MKRT_OP_ADD, h, h, 1 + d);
            }
}

/* SPLIT's hand-off as if measured at 1 us, so that the rule splits every
 * batch of BIG items once the one pass was measured (the rule's bands:
 * test_plan_decide.c); the dispatcher is idle between batches. */
static void cheap_handoff(mkrt_runtime *rt)
{
    mkrt__plan_costs *c = mkrt__test_plan_costs(rt);
    c->split_handoff_ns = (mkrt__ema){1000.0, 8};
}

static void split_exact(uint32_t stride)
{
    mkrt_runtime *rt = start(big_conf());
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    const uint32_t depth = 4, per = BIG / depth / 2;
    diag("handles %u apart", stride);
    halves(depth, false, stride);
    uint32_t split = 0, rounds = 12;
    for (uint32_t r = 0; r < rounds; r++) {
        cheap_handoff(rt);
        one_go(rt, p, many, BIG);
        mkrt_plan_record rec = last_record(rt);
        split += (rec.plan_cache & 4u) != 0;
        if (rec.layers != depth)
            ok(0, "round %u: %u layers, the one pass gives %u", r, rec.layers, depth);
    }
    ok(split >= rounds - 4, "a large batch of disjoint halves is levelled in parts (%u of %u batches, once the one pass was "
                  "measured)",
       split, rounds);
    uint64_t cells[8];
    mkrt_cells_read(rt, 0, 1, cells);
    mkrt_cells_read(rt, (2 * per - 1) * stride, 1, cells + 1);
    is(cells[0], (uint64_t)rounds * (1 + 2 + 3 + 4), "every item ran once (first handle)");
    is(cells[1], (uint64_t)rounds * (1 + 2 + 3 + 4), "... and the last");
    mkrt_stats s = stats(rt);
    is(s.executed, (uint64_t)rounds * BIG, "nothing pruned or lost");
    /* The halves now share handles: the parts conflict, the one pass
     * levels the batch (8 layers), and the shape stays on it. */
    halves(depth, true, stride);
    uint32_t split_shared = 0, tried = 0;
    for (uint32_t r = 0; r < 6; r++) {
        cheap_handoff(rt);
        one_go(rt, p, many, BIG);
        mkrt_plan_record rec = last_record(rt);
        split_shared += (rec.plan_cache & 4u) != 0;
        tried += (rec.plan_cache & 8u) != 0;
        if (r == 0)
            is(rec.plan_cache & 8u, 8u, "the first batch of the shared shape is split, and the split thrown away");
        if (rec.layers != 2 * depth)
            ok(0, "shared round %u: %u layers, the one pass gives %u", r, rec.layers, 2 * depth);
    }
    is(split_shared, 0u, "halves that share handles are never merged from parts");
    is(tried, 1u, "the plan cache keeps the shape on the one pass after its split conflicted");
    s = stats(rt);
    is(s.executed, (uint64_t)(rounds + 6) * BIG, "every item of them ran");
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

int main(void)
{
    hits_and_misses();
    split_exact(1);
    split_exact(16);
    return done_testing();
}
