/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_plan_decide.c - the plan's decisions (plan/decide.h): each
 * rule as a pure function, then each one changing what runs, on the CPU
 * pool and on the simulated device, against the same run with the
 * decision forced off (mkrt_config.plan_off); the EXPLAIN ring and the
 * counters say what was decided; bad values of the knobs are refused. */
#include "base/thread.h"
#include "plan_fixture.h"

static void rules(void)
{
    is(mkrt__decide_pressure(0, 64, 0), MKRT_PLAN_PRESSURE_EMPTY, "pressure: nothing queued is EMPTY");
    is(mkrt__decide_pressure(10, 64, 0), MKRT_PLAN_PRESSURE_LIGHT, "pressure: fewer items than lanes is LIGHT");
    is(mkrt__decide_pressure(64, 64, 0), MKRT_PLAN_PRESSURE_BALANCED, "pressure: one per lane is BALANCED");
    is(mkrt__decide_pressure(256, 64, 0), MKRT_PLAN_PRESSURE_SATURATED, "pressure: four per lane is SATURATED");
    is(mkrt__decide_pressure(1, 64, 1), MKRT_PLAN_PRESSURE_SATURATED, "pressure: a requeue saturates");

    mkrt__plan_costs none = costs(0, 0, 0), c = costs(10, 40000, 0);
    is(mkrt__decide_share_min(&none, true), 2048, "WAKE: 2048 items a participant before anything is measured");
    is(mkrt__decide_share_min(&c, true), 4000, "WAKE: hand-off 40 us over 10 ns an item: 4000");
    is(mkrt__decide_share_min(&c, false), 2048, "WAKE off: 2048");
    c = costs(1000, 1000, 0);
    is(mkrt__decide_share_min(&c, true), MKRT__SHARE_MIN_LO, "WAKE: at least %u", MKRT__SHARE_MIN_LO);
    c = costs(0.001, 1e9, 0);
    is(mkrt__decide_share_min(&c, true), MKRT__SHARE_MIN_HI, "WAKE: at most %u", MKRT__SHARE_MIN_HI);

    is(mkrt__decide_shed_memory(8, 8499), 8, "SHED: below 8500 bps every worker stays");
    is(mkrt__decide_shed_memory(8, 8500), 6, "SHED: at 8500 bps 75%% stay");
    is(mkrt__decide_shed_memory(8, 10000), 4, "SHED: at 10000 bps 50%% stay");
    is(mkrt__decide_shed_memory(1, 10000), 1, "SHED: never below one");
    is(mkrt__decide_cpu_width(4, 1, 8), 3, "SHED: 4 CPUs, one busy producer: 3 executors (the dispatcher among them)");
    is(mkrt__decide_cpu_width(2, 0, 2), 2, "SHED: 2 CPUs, no busy producer: both");
    is(mkrt__decide_cpu_width(2, 1, 2), 1, "SHED: 2 CPUs, one busy producer: one");
    is(mkrt__decide_cpu_width(2, 5, 8), 1, "SHED: never below one CPU");

    c = costs(8, 0, 50000);
    is(mkrt__decide_route(100, true, &c, true), MKRT_PLAN_ROUTE_CPU_SMALL,
       "ROUTE: 100 items at 8 ns under a 50 us round trip stay on the CPU");
    is(mkrt__decide_route(100000, true, &c, true), MKRT_PLAN_ROUTE_DEVICE, "ROUTE: 100000 items go to the device");
    is(mkrt__decide_route(100, false, &c, true), MKRT_PLAN_ROUTE_DEVICE, "ROUTE: user ops go to the device");
    is(mkrt__decide_route(100, true, &c, false), MKRT_PLAN_ROUTE_DEVICE, "ROUTE off: the device");
    is(mkrt__decide_route(100, true, &none, true), MKRT_PLAN_ROUTE_DEVICE,
       "ROUTE: the device until its round trip is measured");
    c = costs(0, 0, 50000);
    is(mkrt__decide_route(100, true, &c, true), MKRT_PLAN_ROUTE_DEVICE,
       "ROUTE: the device until the CPU pool's ns per item is measured too");

    /* SPREAD and QUEUE: the selector's bands on measured densities. */
    is(mkrt__decide_spread(30, 1000, 0, MKRT_WAVE_NONE), MKRT_WAVE_WARP_SPARSE, "SPREAD: 3%% of the batch: warp-sparse");
    is(mkrt__decide_spread(100, 1000, 0, MKRT_WAVE_NONE), MKRT_WAVE_SPARSE, "SPREAD: 10%%: sparse");
    is(mkrt__decide_spread(500, 1000, 0, MKRT_WAVE_NONE), MKRT_WAVE_HYBRID, "SPREAD: 50%%: hybrid");
    is(mkrt__decide_spread(500, 1000, 9000, MKRT_WAVE_NONE), MKRT_WAVE_SPARSE, "SPREAD: memory at 9000 bps: sparse");
    is(mkrt__decide_spread(140, 1000, 0, MKRT_WAVE_SPARSE), MKRT_WAVE_SPARSE, "SPREAD: sparse holds to 15%%");
    is(mkrt__decide_spread(110, 1000, 0, MKRT_WAVE_HYBRID), MKRT_WAVE_HYBRID, "SPREAD: hybrid holds down to 10%%");
    ok(mkrt__decide_frontier_queue(100, 1000, false, true), "QUEUE: 10%% of the vertices: the queue");
    ok(!mkrt__decide_frontier_queue(140, 1000, false, true), "QUEUE: 14%%: the bitset");
    ok(mkrt__decide_frontier_queue(140, 1000, true, true), "QUEUE: the queue holds to 15%%");
    ok(!mkrt__decide_frontier_queue(10, 1000, false, false), "QUEUE off (or a lane that may not): the bitset");

    uint64_t waiting[4] = {5, 0, 900, 0};
    uint32_t age[4] = {0, 0, 0, 0};
    mkrt_plan_first why;
    is(mkrt__decide_drain_first(waiting, age, 4, 0, true, &why), 2, "DRAIN: the fullest ring first");
    is(why, MKRT_PLAN_FIRST_FULLEST, "... and says why");
    age[0] = MKRT__AGE_PROMOTE;
    is(mkrt__decide_drain_first(waiting, age, 4, 3, true, &why), 0, "DRAIN: an aged ring before the fullest");
    is(why, MKRT_PLAN_FIRST_AGED, "... an aged promotion");
    is(mkrt__decide_drain_first(waiting, age, 4, 3, false, &why), 3, "DRAIN off: round robin");
    is(why, MKRT_PLAN_FIRST_ROUND_ROBIN, "... and says so");

    mkrt_plan_class_why cw;
    is(mkrt__decide_class(false, true, 0, 0, 1000, &cw), MKRT_CLASS_BULK, "DRAIN, classes: no interactive work: bulk");
    is(cw, MKRT_PLAN_CLASS_BULK_ONLY, "... and says why");
    is(mkrt__decide_class(true, false, 40, 0, 1000, &cw), MKRT_CLASS_INTERACTIVE, "interactive work alone: interactive");
    is(cw, MKRT_PLAN_CLASS_INTERACTIVE, "... and says why");
    is(mkrt__decide_class(true, true, MKRT__AGE_PROMOTE - 1, 999, 1000, &cw), MKRT_CLASS_INTERACTIVE,
       "both wait: interactive first (31 requeues, 999 of 1000 ns waited)");
    is(cw, MKRT_PLAN_CLASS_FIRST, "... a requeue of bulk");
    is(mkrt__decide_class(true, true, MKRT__AGE_PROMOTE, 0, 1000, &cw), MKRT_CLASS_BULK, "32 requeues: bulk goes first");
    is(cw, MKRT_PLAN_CLASS_AGED, "... an aged promotion");
    is(mkrt__decide_class(true, true, 1, 1000, 1000, &cw), MKRT_CLASS_BULK, "waited max-age: bulk goes first");
    is(cw, MKRT_PLAN_CLASS_MAX_AGE, "... a max-age promotion");
    is(mkrt__decide_class(true, true, 1, UINT64_MAX, 0, &cw), MKRT_CLASS_INTERACTIVE, "max-age 0: no time bound");
    mkrt__ema bulk = {0};
    is(mkrt__decide_bulk_cap(&bulk, 250000, 1024), 1024, "bulk cut: none before the cost is measured");
    bulk = (mkrt__ema){.v = 1000.0, .n = MKRT__EMA_TRUST};
    is(mkrt__decide_bulk_cap(&bulk, 250000, 1024), 250, "bulk cut: 250 us at 1 us an item: 250 items");
    is(mkrt__decide_bulk_cap(&bulk, 1000, 1024), MKRT__BULK_CAP_MIN, "... at least 16");
    is(mkrt__decide_bulk_cap(&bulk, 0, 1024), 1024, "... slice 0: max_batch");

    ok(mkrt__decide_pull(100, 1000, 13000, 10000, false, true), "PULL: edges over 1/14 of the unsettled: pull");
    ok(!mkrt__decide_pull(100, 900, 13000, 10000, false, true), "PULL: below: push");
    ok(mkrt__decide_pull(420, 1, 13000, 10000, true, true), "PULL: stays pulled with 1/24 of the vertices");
    ok(!mkrt__decide_pull(410, 1, 13000, 10000, true, true), "PULL: back to push below");
    ok(!mkrt__decide_pull(100, 1000, 13000, 10000, false, false), "PULL off: push");
    /* The public rule the MPI engine calls (mkrt/graph.h): the same bands. */
    ok(mkrt_graph_pull_next(100, 1000, 13000, 10000, false), "mkrt_graph_pull_next: edges over 1/ALPHA: pull");
    ok(!mkrt_graph_pull_next(100, 928, 13000, 10000, false), "mkrt_graph_pull_next: at 1/ALPHA or below: push");
    ok(mkrt_graph_pull_next(417, 1, 13000, 10000, true), "mkrt_graph_pull_next: stays pulled at 1/BETA");
    ok(!mkrt_graph_pull_next(416, 1, 13000, 10000, true), "mkrt_graph_pull_next: back to push below 1/BETA");
    ok(!mkrt_graph_pull_next(0, 0, 0, 10000, true), "mkrt_graph_pull_next: an empty frontier pushes");
    is(mkrt__decide_frontier_class(600, MKRT_PLAN_FRONTIER_NONE), MKRT_PLAN_FRONTIER_HYBRID, "class: 600 bps hybrid");
    is(mkrt__decide_frontier_class(700, MKRT_PLAN_FRONTIER_SPARSE), MKRT_PLAN_FRONTIER_SPARSE,
       "class: sparse holds within 250 bps");
    is(mkrt__decide_frontier_class(800, MKRT_PLAN_FRONTIER_SPARSE), MKRT_PLAN_FRONTIER_HYBRID,
       "class: ... and not beyond");
    is(mkrt__decide_frontier_class(3800, MKRT_PLAN_FRONTIER_DENSE), MKRT_PLAN_FRONTIER_DENSE,
       "class: dense holds within 250 bps");
}

/* ---- bad values --------------------------------------------------------- */

/* SPLIT (plan/decide.h): parts only from measured costs, when the moved
 * work beats the hand-off by a quarter; the split's own hand-off first,
 * then the pool's, then the 50 us floor. */
static void split_decides(void)
{
    mkrt__plan_costs c;
    memset(&c, 0, sizeof c);
    is(mkrt__decide_split(&c, 1u << 20, 2, false), 1u, "SPLIT: no part before the one pass was measured");
    for (int i = 0; i < 8; i++)
        mkrt__ema_add(&c.level_ns_item, 8.0);
    is(mkrt__decide_split(&c, 1u << 20, 1, false), 1u, "SPLIT: one executor, the one pass");
    /* 8 ns x n / 2 moved against 50 us x 1.25: 15625 items is the edge. */
    is(mkrt__decide_split(&c, 15000, 2, false), 1u, "SPLIT: 15000 items move 60 us, below 62.5 us: one pass");
    is(mkrt__decide_split(&c, 20000, 2, false), 2u, "SPLIT: 20000 items move 80 us: two parts");
    is(mkrt__decide_split(&c, 1u << 20, 64, false), MKRT__SPLIT_PARTS_MAX, "SPLIT: at most 16 parts");
    for (int i = 0; i < 8; i++)
        mkrt__ema_add(&c.handoff_ns, 4000.0);
    is(mkrt__decide_split(&c, 2000, 2, false), 2u, "SPLIT: the pool's measured 4 us hand-off lowers the edge (2000 items)");
    for (int i = 0; i < 8; i++)
        mkrt__ema_add(&c.split_handoff_ns, 200000.0);
    is(mkrt__decide_split(&c, 40000, 2, false), 1u, "SPLIT: its own measured 200 us hand-off wins over the pool's");
    is(mkrt__decide_split(&c, 80000, 2, false), 2u, "... and 80000 items (320 us moved) still split");
    is(mkrt__decide_split(&c, 40000, 2, true), 2u,
       "SPLIT: a probe leaves its own hand-off out: the pool's 4 us, two parts");
    is(mkrt__decide_split(&c, 1000, 2, true), 1u, "... but 1000 items (4 us moved) stay on the one pass");
    mkrt__ema_restart(&c.split_handoff_ns, 3000.0);
    is(mkrt__decide_split(&c, 40000, 2, false), 2u, "SPLIT: the probe's 3 us hand-off is the estimate now");
}

static void knobs(void)
{
    mkrt_config c = conf(MKRT_BACKEND_CPU, 1, MKRT_PLAN_ALL + 1);
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    is(mkrt_create(&c, &rt, &err), MKRT_EINVAL, "plan_off with an unknown bit is refused");
    like(err.message, "Fix:", "... with a Fix (%s)", err.message);
    setenv("MKRT_PLAN_OFF", "wake,bogus", 1);
    c.plan_off = 0;
    is(mkrt_create(&c, &rt, &err), MKRT_EINVAL, "MKRT_PLAN_OFF naming no decision is refused");
    like(err.message, "Fix:", "... with a Fix (%s)", err.message);
    setenv("MKRT_PLAN_OFF", "256", 1);
    is(mkrt_create(&c, &rt, &err), MKRT_EINVAL, "MKRT_PLAN_OFF=256 is refused");
    setenv("MKRT_PLAN_OFF", "arms", 1);
    is(mkrt_create(&c, &rt, &err), MKRT_OK, "MKRT_PLAN_OFF=arms is taken");
    is(mkrt__test_plan_off(rt), MKRT_PLAN_ARMS, "... and names ARMS");
    mkrt_destroy(rt, SEC, NULL);
    setenv("MKRT_PLAN_OFF", "wake,pull", 1);
    is(mkrt_create(&c, &rt, &err), MKRT_OK, "MKRT_PLAN_OFF=wake,pull is taken");
    is(mkrt__test_plan_off(rt), MKRT_PLAN_WAKE | MKRT_PLAN_PULL, "... and replaces plan_off");
    mkrt_destroy(rt, SEC, NULL);
    setenv("MKRT_PLAN_OFF", "all", 1);
    is(mkrt_create(&c, &rt, &err), MKRT_OK, "MKRT_PLAN_OFF=all is taken");
    is(mkrt__test_plan_off(rt), MKRT_PLAN_ALL, "... every decision off");
    mkrt_destroy(rt, SEC, NULL);
    unsetenv("MKRT_PLAN_OFF");
    is_str(mkrt_plan_decision_name(MKRT_PLAN_FUSE), "fuse", "decision names");
    is_str(mkrt_plan_decision_name(MKRT_PLAN_ARMS), "arms", "... arms");
    is(mkrt_plan_explain(NULL, NULL, 0), 0, "mkrt_plan_explain(NULL): nothing");
}

/* ---- DRAIN: which ring first, and aging -------------------------------- */

/* A small ring (slot 0) and a full one (slot 1) wait when the dispatcher
 * starts; batches of 64. Returns the stamps of the first item of each. */
static void drain_order(uint32_t off, uint32_t small_n, uint32_t big_n, uint64_t *small_at, uint64_t *big_at,
                        uint64_t *promoted, uint64_t *requeues)
{
    mkrt_config c = conf(MKRT_BACKEND_CPU, 1, off);
    c.max_batch = 64;
    c.burst_per_ring = 64;
    mkrt_runtime *rt = start(c);
    mkrt_producer *a = mkrt_producer_open(rt, NULL), *b = mkrt_producer_open(rt, NULL);
    static mkrt_item items[4096];
    for (uint32_t i = 0; i < big_n; i++)
        items[i] = item(OP_STAMP, 0, 1000 + i, 0);
    atomic_store(&stamp_seq, 0);
    mkrt__runtime_hold(rt, true);
    for (uint32_t i = 0; i < small_n; i++) {
        mkrt_item it = item(OP_STAMP, 0, 10 + i, 0);
        publish_all(a, &it, 1);
    }
    publish_all(b, items, big_n);
    mkrt__runtime_hold(rt, false);
    mkrt_drain(rt, SEC);
    mkrt_cell_read(rt, 10, small_at);
    mkrt_cell_read(rt, 1000, big_at);
    *promoted = count(rt, MKRT_PLAN_N_PROMOTED);
    *requeues = count(rt, MKRT_PLAN_N_REQUEUES);
    mkrt_producer_close(a);
    mkrt_producer_close(b);
    mkrt_destroy(rt, SEC, NULL);
}

static void drain_decides(void)
{
    uint64_t s_on, b_on, s_off, b_off, pr, rq;
    drain_order(0, 8, 512, &s_on, &b_on, &pr, &rq);
    ok(b_on < s_on, "DRAIN on: the full ring drains first (its first item ran %llu, the small one's %llu)",
       (unsigned long long)b_on, (unsigned long long)s_on);
    drain_order(MKRT_PLAN_DRAIN, 8, 512, &s_off, &b_off, &pr, &rq);
    ok(s_off < b_off, "DRAIN off: round robin from slot 0 (%llu before %llu)", (unsigned long long)s_off,
       (unsigned long long)b_off);
    /* Nothing starves: one item behind a ring that fills 48 batches. */
    drain_order(0, 1, 48 * 64, &s_on, &b_on, &pr, &rq);
    ok(s_on <= (MKRT__AGE_PROMOTE + 1) * 64 + 1,
       "DRAIN: a ring cut batch after batch is promoted at age %u (its item ran %llu of %u)", MKRT__AGE_PROMOTE,
       (unsigned long long)s_on, 48 * 64 + 1);
    ok(pr >= 1 && rq >= MKRT__AGE_PROMOTE, "... counted: %llu aged promotions, %llu requeues",
       (unsigned long long)pr, (unsigned long long)rq);
}

/* ---- WAKE, FUSE, SHED on the CPU pool ----------------------------------- */

/* One batch of items, planned with costs (NULL: as measured), held while
 * published. Returns its EXPLAIN record; participants of layer 0..7. */
static mkrt_plan_record one_batch(mkrt_runtime *rt, const mkrt_item *items, size_t n, const mkrt__plan_costs *with,
                                  uint32_t *parts)
{
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt__runtime_hold(rt, true);
    if (with != NULL)
        *mkrt__test_plan_costs(rt) = *with; /* the dispatcher is parked */
    publish_all(p, items, n);
    mkrt__runtime_hold(rt, false);
    mkrt_drain(rt, SEC);
    for (size_t l = 0; l < 8; l++)
        parts[l] = mkrt__test_last_plan(rt)->participants[l];
    mkrt_producer_close(p);
    return last_record(rt);
}

static mkrt_item big[12000];

static void wake_decides(void)
{
    for (uint32_t i = 0; i < 1000; i++)
        big[i] = item(MKRT_OP_ADD, 100 + i, 100 + i, 1);
    mkrt__plan_costs c = costs(80, 20480, 0); /* share 256 */
    uint32_t on[8], off[8];
    mkrt_runtime *rt = start(conf(MKRT_BACKEND_CPU, 2, 0));
    mkrt_plan_record r = one_batch(rt, big, 1000, &c, on);
    ok(on[0] == 2 && r.share_min == 256, "WAKE on: measured costs give 256 items a participant: 2 wake for 1000 (%u, %u)",
       on[0], r.share_min);
    ok(count(rt, MKRT_PLAN_N_WAKE_NARROWED) == 0, "... no layer narrowed");
    mkrt_destroy(rt, SEC, NULL);
    rt = start(conf(MKRT_BACKEND_CPU, 2, MKRT_PLAN_WAKE));
    r = one_batch(rt, big, 1000, &c, off);
    ok(off[0] == 1 && r.share_min == 2048, "WAKE off: 2048 items a participant: 1 for 1000 (%u, %u)", off[0],
       r.share_min);
    ok(count(rt, MKRT_PLAN_N_WAKE_NARROWED) == 1, "... one layer narrowed");
    mkrt_destroy(rt, SEC, NULL);
}

/* Two wide layers (5000 ADDs twice on the same handles) and a chain of 12
 * on one handle: ten narrow layers of twelve. */
static size_t fuse_shape(uint32_t wide, uint32_t chain)
{
    size_t n = 0;
    for (uint32_t r = 0; r < 2; r++)
        for (uint32_t i = 0; i < wide; i++)
            big[n++] = item(MKRT_OP_ADD, 100 + i, 100 + i, 1);
    for (uint32_t i = 0; i < chain; i++)
        big[n++] = item(MKRT_OP_ADD, 50, 50, 1);
    return n;
}

static void fuse_decides(mkrt_backend_kind kind, uint32_t wide, uint32_t chain)
{
    const char *k = kind == MKRT_BACKEND_SIM ? "sim" : "cpu";
    size_t n = fuse_shape(wide, chain);
    uint32_t on[8], off[8], fresh[8];
    /* FUSE decides on measured costs only: 8 ns an item, a 20 us hand-off. */
    const mkrt__plan_costs c = costs(8, 20000, 0);
    mkrt_runtime *rt = start(conf(kind, 2, MKRT_PLAN_FUSE));
    mkrt_plan_record roff = one_batch(rt, big, n, &c, off);
    uint64_t v_off = 0, v_on = 0;
    mkrt_cell_read(rt, 100, &v_off);
    mkrt_destroy(rt, SEC, NULL);
    rt = start(conf(kind, 2, 0));
    mkrt_plan_record rfresh = one_batch(rt, big, n, NULL, fresh);
    ok(fresh[0] > 1 && rfresh.fused_layers == 0 && rfresh.topology != MKRT_WAVE_FUSED,
       "%s FUSE before any cost was measured: no decision, the wide layer on %u participants", k, fresh[0]);
    mkrt_destroy(rt, SEC, NULL);
    rt = start(conf(kind, 2, 0));
    mkrt_plan_record ron = one_batch(rt, big, n, &c, on);
    mkrt_cell_read(rt, 100, &v_on);
    ok(off[0] > 1 && roff.grid_barriers > 0 && roff.fused_layers == 0,
       "%s FUSE off: a %u-wide layer on %u participants, %u barriers", k, wide, off[0], roff.grid_barriers);
    ok(on[0] == 1 && on[1] == 1 && ron.grid_barriers == 0 && ron.fused_layers == 2 &&
           ron.topology == MKRT_WAVE_FUSED,
       "%s FUSE on: FusedWave, the run of %u layers on one participant, no barrier (%u, %u fused, topology %s)", k,
       ron.layers, on[0], ron.fused_layers, mkrt_wave_topology_name((mkrt_wave_topology)ron.topology));
    ok(count(rt, MKRT_PLAN_N_FUSED) == 2 && v_on == 2 && v_off == 2, "%s: counted; the cells as without (%llu)", k,
       (unsigned long long)v_on);
    mkrt_destroy(rt, SEC, NULL);
}

static size_t threads_seen(mkrt_runtime *rt, uint32_t from, uint32_t to)
{
    uint64_t seen[16];
    size_t n = 0;
    for (uint32_t h = from; h < to; h++) {
        uint64_t v = 0;
        mkrt_cell_read(rt, h, &v);
        bool dup = false;
        for (size_t i = 0; i < n; i++)
            dup |= seen[i] == v;
        if (!dup && n < 16)
            seen[n++] = v;
    }
    return n;
}

/* Memory pressure: a registered graph fills 88% of the budget. */
static void shed_decides(void)
{
    static uint64_t offs[1101];
    static uint32_t tgt[1] = {0};
    mkrt_graph g = {1100, offs, tgt, NULL};
    for (uint32_t i = 0; i < 4000; i++)
        big[i] = item(OP_WHO, 0, 2000 + i, 0);
    uint32_t width[2], parts[2][8];
    size_t seen[2];
    for (int off = 0; off < 2; off++) {
        mkrt_config c = conf(MKRT_BACKEND_CPU, 4, off ? MKRT_PLAN_SHED : 0);
        c.device_memory_budget = 10000;
        mkrt_runtime *rt = start(c);
        mkrt_error err;
        if (mkrt_graph_register(rt, &g, &err) != MKRT_OK)
            bail_out("graph: %s", err.message);
        mkrt_plan_record r = one_batch(rt, big, 4000, NULL, parts[off]);
        width[off] = r.width;
        seen[off] = threads_seen(rt, 2000, 6000);
        if (!off)
            ok(r.memory_bps >= 8500 && count(rt, MKRT_PLAN_N_SHED) >= 1,
               "SHED: the graph's bytes are %u bps of the budget; counted", r.memory_bps);
        mkrt_destroy(rt, SEC, NULL);
    }
    ok(width[0] == 2 && width[1] == 4, "SHED on: 2 of 4 workers under memory pressure; off: 4 (%u, %u)", width[0],
       width[1]);
    ok(parts[0][0] <= 2 && seen[0] <= 2, "... and no more than 2 threads ran the layer (%zu; off: %u participants)",
       seen[0], parts[1][0]);
}

/* ---- ROUTE on the simulated device ---------------------------------------- */

static void route_decides(void)
{
    for (uint32_t i = 0; i < 100; i++)
        big[i] = item(MKRT_OP_ADD, 100 + i, 100 + i, 1);
    mkrt__plan_costs c = costs(8, 0, 50000);
    for (int off = 0; off < 2; off++) {
        mkrt_runtime *rt = start(conf(MKRT_BACKEND_SIM, 2, off ? MKRT_PLAN_ROUTE : 0));
        mkrt_stats a, b;
        mkrt_stats_read(rt, &a);
        uint32_t parts[8];
        mkrt_plan_record r = one_batch(rt, big, 100, &c, parts);
        mkrt_stats_read(rt, &b);
        uint64_t v = 0;
        mkrt_cell_read(rt, 150, &v);
        if (!off)
            ok(b.device_batches == a.device_batches && r.route == MKRT_PLAN_ROUTE_CPU_SMALL && !r.on_device &&
                   b.plan_counts[MKRT_PLAN_N_CPU_ROUTED] == 1 && v == 1,
               "ROUTE on: 100 items under a 50 us round trip ran on the CPU pool (device batches +%llu)",
               (unsigned long long)(b.device_batches - a.device_batches));
        else
            ok(b.device_batches == a.device_batches + 1 && r.route == MKRT_PLAN_ROUTE_DEVICE && r.on_device && v == 1,
               "ROUTE off: the device ran them (device batches +%llu)",
               (unsigned long long)(b.device_batches - a.device_batches));
        mkrt_destroy(rt, SEC, NULL);
    }
}

/* ---- PULL: a BFS whose levels grow large -------------------------------- */

static void pull_decides(mkrt_backend_kind kind)
{
    const char *k = kind == MKRT_BACKEND_SIM ? "sim" : "cpu";
    test_graph tg = test_graph_random(4000, 60000, 7);
    mkrt_graph g = {tg.v, tg.off, tg.dst, NULL};
    uint64_t *cells[2];
    mkrt_stats st[2];
    for (int off = 0; off < 2; off++) {
        mkrt_runtime *rt = start(conf(kind, 2, off ? MKRT_PLAN_PULL : 0));
        mkrt_op_desc d = {.fn = visit, .idempotent = true, .commutes = true, .expands = true, .pulls = true};
        mkrt_error err;
        if (mkrt_graph_register(rt, &g, &err) != MKRT_OK || mkrt_op_register(rt, OP_VISIT, &d, &err) != MKRT_OK)
            bail_out("bfs: %s", err.message);
        for (uint32_t v = 0; v < tg.v; v++)
            mkrt_cell_write(rt, v, v == 5 ? 5 : UNREACHED);
        mkrt_producer *p = mkrt_producer_open(rt, NULL);
        mkrt_item seed = item(OP_VISIT, 5, 5, SEED);
        publish_all(p, &seed, 1);
        if (mkrt_quiesce(rt, SEC) != MKRT_OK)
            bail_out("bfs did not quiesce");
        cells[off] = malloc(tg.v * sizeof **cells);
        mkrt_cells_read(rt, 0, tg.v, cells[off]);
        mkrt_stats_read(rt, &st[off]);
        mkrt_producer_close(p);
        mkrt_destroy(rt, SEC, NULL);
    }
    ok(st[0].plan_counts[MKRT_PLAN_N_PULL_LEVELS] > 0 && st[1].plan_counts[MKRT_PLAN_N_PULL_LEVELS] == 0 &&
           st[1].plan_counts[MKRT_PLAN_N_PUSH_LEVELS] > 0,
       "%s PULL: on, %llu levels pulled; off, none (%llu pushed)", k,
       (unsigned long long)st[0].plan_counts[MKRT_PLAN_N_PULL_LEVELS],
       (unsigned long long)st[1].plan_counts[MKRT_PLAN_N_PUSH_LEVELS]);
    ok(st[0].emitted < st[1].emitted / 2, "%s PULL: on runs fewer edges (%llu, off %llu)", k,
       (unsigned long long)st[0].emitted, (unsigned long long)st[1].emitted);
    bool same = true; /* depths: a pulled level may pick another parent of the same level */
    for (uint32_t v = 0; v < tg.v; v++)
        same &= cells[0][v] >> 32 == cells[1][v] >> 32;
    ok(same, "%s PULL: the same BFS levels either way", k);
    free(cells[0]);
    free(cells[1]);
    test_graph_free(&tg);
}

/* ---- EXPLAIN ------------------------------------------------------------ */

typedef struct reader {
    mkrt_runtime *rt;
    _Atomic int stop;
    size_t reads, torn;
} reader;

/* Reads the ring while batches complete: every record it gets is whole
 * (its items and layers as the writer wrote them: 1 and 1). */
static int read_explain(void *arg)
{
    reader *x = arg;
    mkrt_plan_record r[64];
    while (!atomic_load(&x->stop)) {
        size_t n = mkrt_plan_explain(x->rt, r, 64);
        for (size_t i = 0; i < n; i++)
            x->torn += r[i].items != 1 || r[i].layers != 1 || r[i].batch == 0;
        x->reads++;
    }
    return 0;
}

static void explain_ring(void)
{
    mkrt_runtime *rt = start(conf(MKRT_BACKEND_CPU, 1, 0));
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    reader x = {rt, 0, 0, 0};
    mkrt__thread t;
    mkrt__thread_start(&t, read_explain, &x);
    for (uint32_t b = 0; b < 100; b++) {
        mkrt_item it = item(MKRT_OP_ADD, 7, 7, 1);
        publish_all(p, &it, 1);
        mkrt_drain(rt, SEC);
    }
    atomic_store(&x.stop, 1);
    mkrt__thread_join(t);
    ok(x.torn == 0, "EXPLAIN: a reader beside the dispatcher got only whole records (%zu reads)", x.reads);
    mkrt_plan_record r[64];
    size_t n = mkrt_plan_explain(rt, r, 64);
    bool ordered = n > 0;
    for (size_t i = 1; i < n; i++)
        ordered &= r[i].batch > r[i - 1].batch;
    ok(n >= 60 && n <= 64 && ordered, "EXPLAIN: the last %zu of 100 batches, oldest first", n);
    ok(n > 0 && r[n - 1].items == 1 && r[n - 1].layers == 1 && r[n - 1].workers == 1 && r[n - 1].run_ns > 0 &&
           r[n - 1].route == MKRT_PLAN_ROUTE_CPU_ONLY,
       "EXPLAIN: inputs, decisions and the measured time (%llu ns)", n ? (unsigned long long)r[n - 1].run_ns : 0ull);
    is(mkrt_plan_explain(rt, r, 3), 3, "EXPLAIN: at most max records");
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

int main(void)
{
    unsetenv("MKRT_PLAN_OFF");
    rules();
    knobs();
    split_decides();
    drain_decides();
    wake_decides();
    fuse_decides(MKRT_BACKEND_CPU, 5000, 12);
    fuse_decides(MKRT_BACKEND_SIM, 100, 120);
    shed_decides();
    route_decides();
    pull_decides(MKRT_BACKEND_CPU);
    pull_decides(MKRT_BACKEND_SIM);
    explain_ring();
    return done_testing();
}
