/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_plan_arms.c - the ARMS decision (plan/decide.h, the dedupe
 * stage's cross-arm detector): its rules as pure functions, then skipping
 * redundant arms on the CPU pool and the simulated device against the same
 * run with ARMS forced off, the first-batch probe, and the scratch each
 * dispatching thread owns (split from test_plan_decide.c). */
#include "base/thread.h"
#include "pipeline/scratch.h"
#include "plan_fixture.h"

static void arm_rules(void)
{
    ok(mkrt__decide_arm_covered(MKRT_OP_NOP, 1, 2), "ARMS: a NOP is always covered");
    ok(mkrt__decide_arm_covered(MKRT_OP_MIN, 5, 9) && mkrt__decide_arm_covered(MKRT_OP_RELAX, 5, 5),
       "ARMS: MIN and RELAX with a param at least as large are covered");
    ok(!mkrt__decide_arm_covered(MKRT_OP_MIN, 9, 5), "ARMS: ... a smaller one is not");
    ok(mkrt__decide_arm_covered(MKRT_OP_OR, 0xF0, 0x30) && !mkrt__decide_arm_covered(MKRT_OP_OR, 0xF0, 0x100),
       "ARMS: OR with a subset of the bits is covered, with another bit not");
    ok(!mkrt__decide_arm_covered(MKRT_OP_STORE, 7, 8) && !mkrt__decide_arm_covered(MKRT_OP_ADD, 7, 8) &&
           !mkrt__decide_arm_covered(MKRT_OP_APPEND, 7, 8) && !mkrt__decide_arm_covered(MKRT_OP_ACC, 7, 7) &&
           !mkrt__decide_arm_covered(OP_STAMP, 7, 8),
       "ARMS: never STORE, ADD, APPEND, ACC or a user op");

    mkrt__plan_costs c;
    memset(&c, 0, sizeof c);
    const uint64_t n = 100000, probe = MKRT__ARMS_PROBE_ITEMS;
    ok(mkrt__decide_arms_look(&c, n, 1) == probe && mkrt__decide_arms_look(&c, n, 1 + MKRT__ARMS_PROBE) == probe &&
           mkrt__decide_arms_look(&c, 18, 1) == 18,
       "ARMS looks: a probe of %llu items at batch 1 and every %u-th", (unsigned long long)probe, MKRT__ARMS_PROBE);
    is(mkrt__decide_arms_look(&c, n, 2), 0, "ARMS looks: not before the slack is measured");
    for (int i = 0; i < 8; i++)
        mkrt__ema_add(&c.slack_ns, 1e7);
    is(mkrt__decide_arms_look(&c, n, 2), probe, "ARMS looks: a probe to measure its cost and yield");
    for (int i = 0; i < 8; i++) {
        mkrt__ema_add(&c.arms_ns_item, 10);
        mkrt__ema_add(&c.arms_yield, 0.5);
    }
    is(mkrt__decide_arms_look(&c, n, 2), n, "ARMS looks: 1 ms of detector fit in 10 ms of slack");
    memset(&c.slack_ns, 0, sizeof c.slack_ns);
    for (int i = 0; i < 8; i++)
        mkrt__ema_add(&c.slack_ns, 100);
    is(mkrt__decide_arms_look(&c, n, 2), 0, "ARMS looks: not in 100 ns of slack");
    for (int i = 0; i < 8; i++)
        mkrt__ema_add(&c.cpu_ns_item, 100);
    is(mkrt__decide_arms_look(&c, n, 2), n, "ARMS looks: ... unless half the items at 100 ns each pay for it");
    for (int i = 0; i < 64; i++)
        mkrt__ema_add(&c.arms_yield, 0);
    is(mkrt__decide_arms_look(&c, n, 2), 0, "ARMS looks: not when it skips nothing");
}


/* ---- ARMS: redundant arms --------------------------------------------- */

/* Two producers (two arms) publish while the dispatcher is held: one
 * batch, arm a first. What arm b repeats: */
static const mkrt_item arm_a[] = {
    {MKRT_OP_MIN, 1, 2, 5},     {MKRT_OP_OR, 3, 4, 0xF0},    {MKRT_OP_NOP, 7, 8, 1},
    {MKRT_OP_STORE, 0, 5, 7},   {MKRT_OP_ACC, 0, 6, 1},      {MKRT_OP_MIN, 10, 11, 9},
    {MKRT_OP_MIN, 12, 13, 5},   {MKRT_OP_STORE, 0, 12, 100}, {MKRT_OP_MIN, 14, 15, 5},
    {MKRT_OP_MIN, 14, 15, 8},   /* a repeat inside one arm: not the seed's rule */
};
static const mkrt_item arm_b[] = {
    {MKRT_OP_MIN, 1, 2, 9},     /* covered by a's MIN 5: skipped */
    {MKRT_OP_OR, 3, 4, 0x30},   /* bits among a's 0xF0: skipped */
    {MKRT_OP_NOP, 7, 8, 2},     /* NOP: skipped */
    {MKRT_OP_STORE, 0, 5, 8},   /* STORE: never (the later value stays) */
    {MKRT_OP_ACC, 0, 6, 1},     /* ACC: never (every one counts) */
    {MKRT_OP_MIN, 10, 11, 3},   /* smaller than a's 9: runs */
    {MKRT_OP_MIN, 12, 13, 7},   /* its in was written since a's: runs */
    {MKRT_OP_OR, 3, 4, 0x100},  /* a bit a's OR lacks: runs */
};
#define ARM_CELLS 16

static void arms_run(mkrt_backend_kind kind, uint32_t off, uint64_t *cells, mkrt_stats *st, mkrt_plan_record *r)
{
    mkrt_runtime *rt = start(conf(kind, 2, off | MKRT_PLAN_ROUTE)); /* the device runs SIM's batch */
    for (uint32_t h = 0; h < ARM_CELLS; h++)
        mkrt_cell_write(rt, h, h == 2 || h == 11 || h == 13 || h == 15 ? 1000 : 0); /* MIN's outs */
    mkrt_producer *a = mkrt_producer_open(rt, NULL), *b = mkrt_producer_open(rt, NULL);
    mkrt__runtime_hold(rt, true);
    publish_all(a, arm_a, sizeof arm_a / sizeof *arm_a);
    publish_all(b, arm_b, sizeof arm_b / sizeof *arm_b);
    mkrt__runtime_hold(rt, false);
    mkrt_drain(rt, SEC);
    for (uint32_t h = 0; h < ARM_CELLS; h++)
        mkrt_cell_read(rt, h, &cells[h]);
    mkrt_stats_read(rt, st);
    *r = last_record(rt);
    mkrt_producer_close(a);
    mkrt_producer_close(b);
    mkrt_destroy(rt, SEC, NULL);
}

static void arms_decides(mkrt_backend_kind kind)
{
    const char *k = kind == MKRT_BACKEND_SIM ? "sim" : "cpu";
    const uint64_t n = sizeof arm_a / sizeof *arm_a + sizeof arm_b / sizeof *arm_b;
    uint64_t on[ARM_CELLS], off[ARM_CELLS];
    mkrt_stats son, soff;
    mkrt_plan_record ron, roff;
    arms_run(kind, 0, on, &son, &ron);
    arms_run(kind, MKRT_PLAN_ARMS, off, &soff, &roff);
    ok(son.plan_counts[MKRT_PLAN_N_ARMS_SKIPPED] == 3 && son.pruned == 3 && son.executed == n - 3 &&
           ron.arms == 2 && ron.arm_skipped == 3 && ron.items == n - 3,
       "ARMS on (%s): 3 of %llu items skipped (counted %llu, pruned %llu, ran %llu; EXPLAIN: %u arms, %u skipped)", k,
       (unsigned long long)n, (unsigned long long)son.plan_counts[MKRT_PLAN_N_ARMS_SKIPPED],
       (unsigned long long)son.pruned, (unsigned long long)son.executed, ron.arms, ron.arm_skipped);
    ok(soff.plan_counts[MKRT_PLAN_N_ARMS_SKIPPED] == 0 && soff.pruned == 0 && soff.executed == n &&
           roff.arm_skipped == 0 && roff.items == n,
       "ARMS off (%s): nothing skipped, all %llu ran (%llu)", k, (unsigned long long)n,
       (unsigned long long)soff.executed);
    ok(son.published == son.executed + son.pruned + son.failed && soff.published == soff.executed + soff.pruned + soff.failed,
       "ARMS (%s): published = executed + pruned + failed, on and off", k);
    ok(memcmp(on, off, sizeof on) == 0, "ARMS (%s): the cells are the same on and off", k);
    ok(on[2] == 5 && on[4] == 0x1F0 && on[5] == 8 && on[6] == 2 && on[11] == 3 && on[13] == 5 && on[15] == 5,
       "ARMS (%s): ... and what running every item in drain order gives (c2 %llu, c4 0x%llx, c5 %llu, c6 %llu)", k,
       (unsigned long long)on[2], (unsigned long long)on[4], (unsigned long long)on[5], (unsigned long long)on[6]);
    if (kind == MKRT_BACKEND_SIM)
        ok(ron.on_device && roff.on_device, "ARMS (sim): the device ran both batches");
}

/* A first batch larger than a probe: two arms of 5000 MIN items, b's on
 * a's pairs with larger params. The probe looks at the first 2048 of
 * each arm (4096 in all), so b's first 2048 are skipped, the rest run. */
static void arms_probe(void)
{
    const uint32_t per = 5000, sample = MKRT__ARMS_PROBE_ITEMS / 2;
    static mkrt_item a_items[5000], b_items[5000];
    for (uint32_t j = 0; j < per; j++) {
        a_items[j] = item(MKRT_OP_MIN, 20000 + j, 30000 + j, 5);
        b_items[j] = item(MKRT_OP_MIN, 20000 + j, 30000 + j, 9);
    }
    uint64_t skipped[2], sum[2], executed[2];
    for (int off = 0; off < 2; off++) {
        mkrt_config c = conf(MKRT_BACKEND_CPU, 2, off ? MKRT_PLAN_ARMS : 0);
        c.cells = 65536;
        c.burst_per_ring = 8192; /* each producer one arm */
        mkrt_runtime *rt = start(c);
        for (uint32_t j = 0; j < per; j++)
            mkrt_cell_write(rt, 30000 + j, 1000);
        mkrt_producer *a = mkrt_producer_open(rt, NULL), *b = mkrt_producer_open(rt, NULL);
        mkrt__runtime_hold(rt, true);
        publish_all(a, a_items, per);
        publish_all(b, b_items, per);
        mkrt__runtime_hold(rt, false);
        mkrt_drain(rt, SEC);
        mkrt_stats st;
        mkrt_stats_read(rt, &st);
        skipped[off] = st.plan_counts[MKRT_PLAN_N_ARMS_SKIPPED];
        executed[off] = st.executed;
        sum[off] = 0;
        for (uint32_t j = 0; j < per; j++) {
            uint64_t v = 0;
            mkrt_cell_read(rt, 30000 + j, &v);
            sum[off] += v;
        }
        mkrt_producer_close(a);
        mkrt_producer_close(b);
        mkrt_destroy(rt, SEC, NULL);
    }
    ok(skipped[0] == sample && executed[0] == 2 * per - sample,
       "ARMS probe: batch 1 of 2 x %u items samples %u of each arm: %llu skipped, %llu ran", per, sample,
       (unsigned long long)skipped[0], (unsigned long long)executed[0]);
    ok(skipped[1] == 0 && executed[1] == 2 * per, "ARMS probe off: all %llu ran", (unsigned long long)executed[1]);
    ok(sum[0] == sum[1] && sum[0] == 5ull * per, "ARMS probe: the cells are the same on and off (every out 5)");
}

/* ---- the dedupe scratch of each thread that dispatches ----------------- */

typedef struct helper_arg {
    mkrt_runtime *rt;
    mkrt_producer *a, *b;
    mkrt_status drained;
    size_t layering_cap, arms_cap; /* the helper's own scratch, after */
    bool own_scratch;              /* it was not the dispatcher's */
} helper_arg;

/* A thread of its own: publishes both arms and helps (the dispatcher
 * dozes); its scratch stays the runtime's until mkrt_destroy frees it
 * (the asan build's leak check sees that). */
static int helper(void *p)
{
    helper_arg *h = p;
    publish_all(h->a, arm_a, sizeof arm_a / sizeof *arm_a);
    publish_all(h->b, arm_b, sizeof arm_b / sizeof *arm_b);
    h->drained = mkrt_drain(h->rt, SEC);
    mkrt__dispatch_scratch *mine = mkrt__test_helper_scratch(h->rt);
    h->own_scratch = mine != NULL && mine != mkrt__test_own_scratch(h->rt);
    h->layering_cap = mine != NULL ? mkrt_layer_scratch_capacity(mine->layering) : 0;
    h->arms_cap = mine != NULL ? mine->item_cap : 0;
    return 0;
}

static void helper_scratch(void)
{
    mkrt_runtime *rt = start(conf(MKRT_BACKEND_CPU, 2, 0));
    mkrt__runtime_doze(rt, true); /* before any batch: the dispatcher's scratch stays unused */
    helper_arg h = {rt, mkrt_producer_open(rt, NULL), mkrt_producer_open(rt, NULL), MKRT_EINVAL, 0, 0, false};
    mkrt__thread t;
    if (mkrt__thread_start(&t, helper, &h) != 0)
        bail_out("thread");
    int res;
    mkrt__thread_join_result(t, &res);
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    const mkrt__dispatch_scratch *own = mkrt__test_own_scratch(rt);
    is(h.drained, MKRT_OK, "scratch: a waiter drained while the dispatcher dozed");
    ok(h.own_scratch && h.layering_cap > 0 && h.arms_cap > 0,
       "scratch: it dispatched with a scratch of its own (levels for %zu items, arms for %zu)", h.layering_cap,
       h.arms_cap);
    ok(mkrt_layer_scratch_capacity(own->layering) == 0 && own->item_cap == 0,
       "scratch: the dispatcher's own scratch was not touched");
    ok(s.plan_counts[MKRT_PLAN_N_ARMS_SKIPPED] == 3 && s.published == s.executed + s.pruned + s.failed,
       "scratch: ARMS decided the same on the helper (%llu skipped)",
       (unsigned long long)s.plan_counts[MKRT_PLAN_N_ARMS_SKIPPED]);
    mkrt__runtime_doze(rt, false);
    mkrt_producer_close(h.a);
    mkrt_producer_close(h.b);
    mkrt_destroy(rt, SEC, NULL);
}


int main(void)
{
    unsetenv("MKRT_PLAN_OFF");
    arm_rules();
    arms_decides(MKRT_BACKEND_CPU);
    arms_decides(MKRT_BACKEND_SIM);
    arms_probe();
    helper_scratch();
    return done_testing();
}
