/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_plan_inputs.c - no invented inputs (docs/design.md,
 * "Planner exports"): every rule on the path decides from what the path
 * measured or counted, and these tests fail when a measurement stops
 * being taken. After a workload: the CPU pool's ns per item and hand-off
 * were sampled and EXPLAIN shows them; the memory pressure is the graph
 * engine's resident bytes (its source row) against the budget, to the
 * bps; a frontier level's density in EXPLAIN is the level's counted
 * vertices over the graph's; PULL and QUEUE counted the levels they
 * decided; FUSE and ROUTE do not decide before their costs exist. */
#include "plan_fixture.h"

static mkrt_item many[12000];

static void costs_measured(void)
{
    mkrt_runtime *rt = start(conf(MKRT_BACKEND_CPU, 2, 0));
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    const mkrt__plan_costs *c = mkrt__test_plan_costs(rt);
    ok(c->cpu_ns_item.n == 0 && c->handoff_ns.n == 0 && last_record(rt).cpu_ps_per_item == 0,
       "a fresh runtime has measured nothing, and EXPLAIN says 0");
    /* Narrow batches run on one thread (WAKE's default share): the ns per
     * item is sampled from them. */
    for (uint32_t i = 0; i < 1000; i++)
        many[i] = item(MKRT_OP_ADD, 100 + i, 100 + i, 1);
    for (int r = 0; r < 8; r++)
        one_go(rt, p, many, 1000);
    mkrt_plan_record rec = last_record(rt);
    ok(c->cpu_ns_item.n > 0 && rec.cpu_ps_per_item > 0,
       "after one-thread batches the CPU pool's cost per item is measured (%llu samples, EXPLAIN %llu ps)",
       (unsigned long long)c->cpu_ns_item.n, (unsigned long long)rec.cpu_ps_per_item);
    ok(rec.run_ns > 0, "... and the batch's run time (%llu ns)", (unsigned long long)rec.run_ns);
    /* Wide layers on two participants: the hand-off is sampled. */
    for (uint32_t i = 0; i < 12000; i++)
        many[i] = item(MKRT_OP_ADD, 100 + i % 12000, 100 + i % 12000, 1);
    for (int r = 0; r < 8 && c->handoff_ns.n == 0; r++)
        one_go(rt, p, many, 12000);
    ok(c->handoff_ns.n > 0, "after batches on two participants the hand-off is measured (%llu samples)",
       (unsigned long long)c->handoff_ns.n);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

static void memory_from_resident_bytes(void)
{
    test_graph g = test_graph_random(3000, 9000, 5);
    const uint64_t resident = (uint64_t)(g.v + 1) * 8u + g.off[g.v] * 4u * (g.w ? 2u : 1u); /* offsets, targets, weights */
    mkrt_config cf = conf(MKRT_BACKEND_CPU, 2, 0);
    cf.device_memory_budget = 4 * resident;
    mkrt_runtime *rt = start(cf);
    mkrt_producer *p = NULL;
    mkrt_graph mg = {g.v, g.off, g.dst, g.w};
    mkrt_error err;
    if (mkrt_graph_register(rt, &mg, &err) != MKRT_OK)
        bail_out("register: %s", err.message);
    p = mkrt_producer_open(rt, NULL);
    for (uint32_t i = 0; i < 100; i++)
        many[i] = item(MKRT_OP_ADD, i, i, 1);
    one_go(rt, p, many, 100);
    mkrt_plan_record rec = last_record(rt);
    is(rec.memory_bps, 2500u, "memory pressure: the graph engine's resident %llu bytes of a %llu budget (built-ins "
                              "need no bytes)",
       (unsigned long long)resident, (unsigned long long)cf.device_memory_budget);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
    test_graph_free(&g);
}

static void frontier_levels_measured(void)
{
    /* A path from vertex 0: every level holds one vertex of 600. */
    test_graph g = test_graph_path(600);
    mkrt_runtime *rt = start(conf(MKRT_BACKEND_CPU, 2, 0));
    mkrt_graph mg = {g.v, g.off, g.dst, g.w};
    mkrt_error err;
    if (mkrt_graph_register(rt, &mg, &err) != MKRT_OK)
        bail_out("register: %s", err.message);
    mkrt_traversal *t;
    mkrt_traversal_desc d = {MKRT_TRAVERSAL_BFS, true};
    if (mkrt_traversal_open(rt, &d, &t, &err) != MKRT_OK || mkrt_traversal_start(t, 0, &err) != MKRT_OK ||
        mkrt_traversal_wait(t, SEC) != MKRT_OK)
        bail_out("BFS: %s", err.message);
    /* The search's values are final when the wait returns; its batch's
     * EXPLAIN record is written when that batch completes, a moment later
     * (a run of levels is one batch): look again for a second at most. */
    mkrt_plan_record r[64];
    size_t rounds = 0, right = 0, queued = 0;
    for (int look = 0; look < 1000 && rounds == 0; look++) {
        if (look > 0)
            mkrt__thread_sleep_ns(1000000);
        size_t n = mkrt_plan_explain(rt, r, 64);
        right = queued = 0;
        for (size_t i = 0; i < n; i++)
            if (r[i].frontier_bps != 0 || r[i].frontier_class != 0) {
                rounds++;
                right += r[i].frontier_bps == 10000u / 600u && r[i].frontier_class == MKRT_PLAN_FRONTIER_SPARSE;
                queued += r[i].frontier_queue;
            }
    }
    ok(rounds > 0 && right == rounds,
       "EXPLAIN: each frontier round's level density is its counted vertex over 600 (%zu of %zu rounds at %u bps)",
       right, rounds, 10000u / 600u);
    ok(queued > 0, "... and QUEUE kept those one-vertex levels as a queue (%zu rounds)", queued);
    ok(count(rt, MKRT_PLAN_N_PUSH_LEVELS) + count(rt, MKRT_PLAN_N_PULL_LEVELS) > 0 &&
           count(rt, MKRT_PLAN_N_QUEUE_LEVELS) > 0,
       "PULL and QUEUE counted the levels they decided (%llu push, %llu pull, %llu queued)",
       (unsigned long long)count(rt, MKRT_PLAN_N_PUSH_LEVELS), (unsigned long long)count(rt, MKRT_PLAN_N_PULL_LEVELS),
       (unsigned long long)count(rt, MKRT_PLAN_N_QUEUE_LEVELS));
    mkrt_traversal_close(t, NULL);
    mkrt_destroy(rt, SEC, NULL);
    test_graph_free(&g);
}

static void no_decision_without_inputs(void)
{
    mkrt__plan_costs none;
    memset(&none, 0, sizeof none);
    is(mkrt__decide_fuse(10000, 10, 9, &none, 0, MKRT_WAVE_NONE), MKRT_WAVE_HYBRID,
       "FUSE without a measured ns per item and hand-off: no fusion");
    mkrt__plan_costs trip = costs(0, 0, 50000);
    is(mkrt__decide_route(10, true, &trip, true), MKRT_PLAN_ROUTE_DEVICE,
       "ROUTE without the CPU pool's measured ns per item: the device");
    mkrt__plan_costs both = costs(8, 20000, 0);
    is(mkrt__decide_fuse(10000, 10, 9, &both, 0, MKRT_WAVE_NONE), MKRT_WAVE_FUSED,
       "... FUSE with them: 9 of 10 narrow layers of 8 us each under a 20 us hand-off fuse");
}

int main(void)
{
    costs_measured();
    memory_from_resident_bytes();
    frontier_levels_measured();
    no_decision_without_inputs();
    return done_testing();
}
