/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_policy.c - launch policy, sizing, memo and priority accounting:
 * the reference tests (megakernel launch policy, sizing, cache). */
#include <math.h>
#include <string.h>

#include "../src/policy_cache.h"
#include "base/thread.h"
#include "mkrt_planlib/policy.h"
#include "mkrt_planlib/priority.h"
#include "../../tests/tap.h"

static mkrt_launch_policy P;

static mkrt_launch_recommendation rec_of(const mkrt_launch_request *r)
{
    mkrt_launch_recommendation rec;
    memset(&rec, 0, sizeof rec);
    mkrt_error err;
    if (mkrt_launch_recommend(&P, r, &rec, &err) != MKRT_OK)
        diag("unexpected error: %s", err.message);
    return rec;
}

static mkrt_launch_recommendation prev_rec(const mkrt_launch_request *r, mkrt_dispatch_topology prev)
{
    mkrt_launch_recommendation rec;
    memset(&rec, 0, sizeof rec);
    mkrt_launch_recommend_with_previous(&P, r, prev, &rec, NULL);
    return rec;
}

static mkrt_launch_request graph_req(uint32_t q, uint32_t w, uint32_t nodes, uint32_t edges,
                                     uint16_t density)
{
    mkrt_launch_request r = mkrt_launch_request_direct(q, w, 256);
    r.graph_node_count = nodes;
    r.graph_edge_count = edges;
    r.frontier_density_bps = density;
    return r;
}

static void recommendations(void)
{
    mkrt_launch_request r = mkrt_launch_request_direct(300, 64, 256);
    r.expected_hits_per_item = 3;
    mkrt_launch_recommendation c = rec_of(&r);
    ok(c.geometry.workgroup_size_x == 64 && c.geometry.slot_count == 320 &&
           c.geometry.dispatch_grid[0] == 5 && c.geometry.dispatch_grid[1] == 1 &&
           c.hit_capacity == 1800 && c.estimated_peak_device_bytes == 28800 &&
           c.device_memory_budget_bytes == 0 && c.topology == MKRT_TOPOLOGY_SPARSE_FRONTIER,
       "policy_recommends_padded_geometry_and_hit_capacity");

    r = mkrt_launch_request_direct(8192, 64, 256);
    r.hot_opcode_count = 8;
    r.requeue_count = 1;
    r.max_priority_age = 64;
    c = rec_of(&r);
    ok(c.pressure == MKRT_PRESSURE_SATURATED && c.execution_mode == MKRT_EXEC_JIT &&
           c.topology == MKRT_TOPOLOGY_SPARSE_FRONTIER && c.promote_hot_opcodes && c.age_priority_work,
       "telemetry_pressure_selects_jit_and_priority_aging");

    r = graph_req(131072, 256, 32768, 500000, 7500);
    r.hot_window_count = 4;
    c = rec_of(&r);
    ok(c.topology == MKRT_TOPOLOGY_FUSED_DENSE && c.execution_mode == MKRT_EXEC_JIT,
       "dense_large_hot_graph_selects_fused_dense_topology");

    r = graph_req(16384, 128, 16384, 250000, 9000);
    r.memory_pressure_bps = 8500;
    c = rec_of(&r);
    ok(c.topology == MKRT_TOPOLOGY_MEMORY_CONSTRAINED && c.worker_groups == 96 &&
           c.hit_capacity == 16384,
       "high_memory_pressure_overrides_dense_frontier (96 workers, hit 16384)");

    r = mkrt_launch_request_direct(16384, 128, 256);
    r.requested_hit_capacity = 65536;
    r.memory_pressure_bps = 10000;
    c = rec_of(&r);
    ok(c.topology == MKRT_TOPOLOGY_MEMORY_CONSTRAINED && c.hit_capacity == 65536 && c.worker_groups == 64,
       "explicit_hit_capacity_survives_memory_constrained_worker_shedding");

    r = mkrt_launch_request_direct(1024, 64, 256);
    r.expected_hits_per_item = 4;
    r.resident_device_bytes = 1024;
    r.device_memory_budget_bytes = 65536;
    mkrt_error err;
    mkrt_launch_recommendation oom;
    is(mkrt_launch_recommend(&P, &r, &oom, &err), MKRT_EBUDGET,
       "device_memory_budget_rejects_oversized_hit_plan_before_allocation");
    ok(oom.estimated_peak_device_bytes == 132096 && oom.device_memory_budget_bytes == 65536,
       "... requested 132096, available 65536");
    like(err.message, "needs 132096 bytes", "... and the message has the numbers");
    like(err.message, "allows 65536. Fix:", "... and a Fix");

    r = mkrt_launch_request_direct(1024, 128, 256);
    r.resident_device_bytes = 900000;
    r.device_memory_budget_bytes = 1000000;
    c = rec_of(&r);
    ok(c.topology == MKRT_TOPOLOGY_MEMORY_CONSTRAINED && c.worker_groups < 128 &&
           c.estimated_peak_device_bytes == 916384 && c.device_memory_budget_bytes == 1000000,
       "device_memory_budget_infers_pressure_without_manual_bps");

    r = graph_req(16384, 128, 16384, 250000, 4000);
    is(rec_of(&r).topology, MKRT_TOPOLOGY_DENSE_FRONTIER, "dense_frontier_without_hot_fusion_stays_dense");
    r = graph_req(8192, 128, 8192, 32768, 501);
    is(rec_of(&r).topology, MKRT_TOPOLOGY_HYBRID_FRONTIER, "mid_density_frontier_selects_hybrid_topology");

    r = graph_req(90000, 256, 100000, 750000, 0);
    r.hot_opcode_count = 8;
    c = rec_of(&r);
    ok(c.topology == MKRT_TOPOLOGY_FUSED_DENSE && c.execution_mode == MKRT_EXEC_JIT,
       "missing_frontier_telemetry_infers_density (9000 bps -> fused dense)");

    r = graph_req(100000, 256, 1000000, 4000000, 100);
    c = rec_of(&r);
    ok(c.topology == MKRT_TOPOLOGY_SPARSE_FRONTIER && c.worker_groups == 51 &&
           c.geometry.workgroup_size_x == 51 && c.geometry.dispatch_grid[0] == 51,
       "sparse_frontier_density_sheds_worker_pressure (51 workers)");
    r = graph_req(1000, 256, 1000000, 4000000, 1);
    c = rec_of(&r);
    ok(c.topology == MKRT_TOPOLOGY_SPARSE_FRONTIER && c.worker_groups == 32 &&
           c.geometry.workgroup_size_x == 32,
       "sparse_frontier_density_preserves_warp_floor (32 workers)");
}

static void hysteresis(void)
{
    mkrt_launch_request r = graph_req(8192, 128, 100000, 250000, 625);
    ok(rec_of(&r).topology == MKRT_TOPOLOGY_HYBRID_FRONTIER &&
           prev_rec(&r, MKRT_TOPOLOGY_SPARSE_FRONTIER).topology == MKRT_TOPOLOGY_SPARSE_FRONTIER,
       "stable topology holds sparse inside hysteresis (625 bps)");
    r.frontier_density_bps = 800;
    is(prev_rec(&r, MKRT_TOPOLOGY_SPARSE_FRONTIER).topology, MKRT_TOPOLOGY_HYBRID_FRONTIER,
       "stable topology releases sparse outside hysteresis (800 bps)");
    r.frontier_density_bps = 375;
    is(prev_rec(&r, MKRT_TOPOLOGY_HYBRID_FRONTIER).topology, MKRT_TOPOLOGY_HYBRID_FRONTIER,
       "stable topology holds hybrid inside the sparse band (375 bps)");
    r = graph_req(16384, 128, 16384, 250000, 4125);
    is(prev_rec(&r, MKRT_TOPOLOGY_HYBRID_FRONTIER).topology, MKRT_TOPOLOGY_HYBRID_FRONTIER,
       "stable topology holds hybrid inside the dense band (4125 bps)");
    r.frontier_density_bps = 3875;
    ok(rec_of(&r).topology == MKRT_TOPOLOGY_HYBRID_FRONTIER &&
           prev_rec(&r, MKRT_TOPOLOGY_DENSE_FRONTIER).topology == MKRT_TOPOLOGY_DENSE_FRONTIER,
       "stable topology holds dense inside the band (3875 bps)");
    r = graph_req(131072, 256, 32768, 500000, 3875);
    r.hot_window_count = 4;
    mkrt_launch_recommendation c = prev_rec(&r, MKRT_TOPOLOGY_FUSED_DENSE);
    ok(c.topology == MKRT_TOPOLOGY_FUSED_DENSE && c.execution_mode == MKRT_EXEC_JIT,
       "stable topology holds fused dense inside the band");
    r = graph_req(16384, 128, 16384, 250000, 9000);
    r.memory_pressure_bps = 8375;
    mkrt_launch_recommendation stateless = rec_of(&r);
    c = prev_rec(&r, MKRT_TOPOLOGY_MEMORY_CONSTRAINED);
    ok(stateless.topology == MKRT_TOPOLOGY_DENSE_FRONTIER &&
           c.topology == MKRT_TOPOLOGY_MEMORY_CONSTRAINED && c.worker_groups == 96 &&
           stateless.worker_groups == 128,
       "stable topology holds memory constrained inside the band (96 < 128 workers)");
    mkrt_error err;
    is(mkrt_launch_recommend_with_previous(&P, &r, (mkrt_dispatch_topology)17, &c, &err), MKRT_EINVAL,
       "an out-of-range previous topology is MKRT_EINVAL");
}

static void evidence(void)
{
    mkrt_launch_request r = graph_req(131072, 256, 32768, 500000, 7500);
    r.hot_window_count = 4;
    r.resident_device_bytes = 64u << 20;
    mkrt_launch_recommendation c;
    mkrt_topology_evidence ev;
    mkrt_launch_recommend_with_topology_evidence(&P, &r, &c, &ev, NULL);
    ok(ev.schema_version == 1 && ev.frontier_density_bps == 7500 &&
           ev.semiring_frontier_density_bps == 7500 && ev.resident_device_bytes == 64u << 20 &&
           ev.graphblas_switch_class == MKRT_GRAPHBLAS_DENSE && ev.output_parity_required &&
           mkrt_topology_evidence_is_complete(&ev),
       "topology evidence is complete and echoes the request");
    ev.frontier_density_bps = 10001;
    ok(!mkrt_topology_evidence_is_complete(&ev), "topology evidence over 10000 bps is incomplete");
    r = mkrt_launch_request_direct(1024, 64, 256);
    r.hot_window_count = 4;
    mkrt_promotion_evidence pe;
    mkrt_launch_recommend_with_promotion_evidence(&P, &r, &c, &pe, NULL);
    ok(pe.execution_mode == MKRT_EXEC_JIT && pe.promotion_route == MKRT_ROUTE_WINDOW_JIT &&
           pe.fused_descriptor_window_required && mkrt_promotion_evidence_is_complete(&pe),
       "promotion evidence: JIT by window_jit with the fused descriptor window");
    is_str(mkrt_promotion_route_name(pe.promotion_route), "window_jit", "route name");
    pe.fused_descriptor_window_required = false;
    ok(!mkrt_promotion_evidence_is_complete(&pe), "promotion evidence with a mismatched window flag is incomplete");
    r = mkrt_launch_request_direct(16, 64, 256);
    mkrt_launch_recommend_with_promotion_evidence(&P, &r, &c, &pe, NULL);
    is(pe.promotion_route, MKRT_ROUTE_INTERPRETER, "a small cold queue is interpreted");
}

static void memo(void)
{
    mkrt_launch_cache_reset();
    mkrt_launch_cache_stats s = mkrt_launch_cache_stats_read();
    ok(s.entries == 0 && s.hits == 0 && s.misses == 0, "reset memo is empty");
    mkrt_launch_request r = mkrt_launch_request_direct(512, 64, 256);
    mkrt_launch_recommendation a = rec_of(&r);
    s = mkrt_launch_cache_stats_read();
    ok(s.entries == 1 && s.hits == 0 && s.misses == 1, "first recommendation: 1 entry, 1 miss");
    mkrt_launch_recommendation b = rec_of(&r);
    s = mkrt_launch_cache_stats_read();
    ok(s.entries == 1 && s.hits == 1 && s.misses == 1 && memcmp(&a, &b, sizeof a) == 0,
       "launch_policy_exposes_thread_local_cache_stats: second is a hit, equal");

    mkrt_launch_cache_reset();
    mkrt__launch_key k;
    mkrt__launch_key_make(&P, &r, &k);
    mkrt__launch_cache_insert(&k, &a);
    mkrt__launch_cache_insert(&k, &a);
    is(mkrt_launch_cache_stats_read().entries, 1, "launch_cache_update_does_not_duplicate_entries");

    mkrt_launch_cache_reset();
    mkrt_launch_recommendation got;
    ok(!mkrt__launch_cache_get(&k, &got), "get on an empty memo misses");
    s = mkrt_launch_cache_stats_read();
    ok(s.hits == 0 && s.misses == 1 && s.entries == 0, "launch_cache_records_misses_without_mutating_capacity");

    mkrt_launch_cache_reset();
    for (uint32_t q = 1; q <= 128; q++) {
        mkrt_launch_request rq = mkrt_launch_request_direct(q, 64, 256);
        mkrt__launch_key_make(&P, &rq, &k);
        mkrt__launch_cache_insert(&k, &a);
    }
    mkrt_launch_request r1 = mkrt_launch_request_direct(1, 64, 256);
    mkrt__launch_key k1;
    mkrt__launch_key_make(&P, &r1, &k1);
    ok(mkrt__launch_cache_get(&k1, &got), "launch_cache_get_promotes_hot_key_before_eviction: hit");
    s = mkrt_launch_cache_stats_read();
    ok(s.hits == 1 && s.misses == 0, "... hits 1, misses 0");
    mkrt_launch_request r129 = mkrt_launch_request_direct(129, 64, 256);
    mkrt__launch_key_make(&P, &r129, &k);
    mkrt__launch_cache_insert(&k, &a);
    ok(mkrt__launch_cache_get(&k1, &got), "... the hot key survives the 129th insert");
    mkrt_launch_request r2 = mkrt_launch_request_direct(2, 64, 256);
    mkrt__launch_key_make(&P, &r2, &k);
    ok(!mkrt__launch_cache_get(&k, &got), "... the least recently used key (q=2) was evicted");
    s = mkrt_launch_cache_stats_read();
    ok(s.hits == 2 && s.entries == 128, "... hits 2, entries 128");
    /* Eviction must keep every survivor findable (backward-shift deletion). */
    int all = 1;
    for (uint32_t q = 3; q <= 129; q++) {
        mkrt_launch_request rq = mkrt_launch_request_direct(q, 64, 256);
        mkrt__launch_key_make(&P, &rq, &k);
        all &= mkrt__launch_cache_get(&k, &got);
    }
    ok(all, "every surviving key is still found after evictions");
    mkrt_launch_cache_reset();
}

/* Reports the other thread's memo statistics through arg. */
static int other_thread(void *arg)
{
    mkrt_launch_request r = mkrt_launch_request_direct(77, 64, 256);
    mkrt_launch_recommendation c;
    mkrt_launch_recommend(&P, &r, &c, NULL);
    *(mkrt_launch_cache_stats *)arg = mkrt_launch_cache_stats_read();
    return 0;
}

static void memo_is_per_thread(void)
{
    mkrt_launch_cache_reset();
    mkrt_launch_request r = mkrt_launch_request_direct(5, 64, 256);
    rec_of(&r);
    mkrt__thread t;
    mkrt_launch_cache_stats o = {0};
    mkrt__thread_start(&t, other_thread, &o);
    mkrt__thread_join(t);
    mkrt_launch_cache_stats s = mkrt_launch_cache_stats_read();
    ok(o.entries == 1 && o.misses == 1 && s.entries == 1 && s.misses == 1,
       "each thread has its own memo");
}

static void sizing(void)
{
    mkrt_sizing_policy sp = mkrt_sizing_policy_standard();
    mkrt_launch_geometry g = mkrt_geometry_from_slots(&sp, 300, 64, 256);
    ok(g.workgroup_size_x == 64 && g.slot_count == 320 && mkrt_geometry_covering_worker_groups(&g) == 5 &&
           g.dispatch_grid[0] == 5,
       "launch_geometry_pads_slots_and_caps_grid_by_workers");
    g = mkrt_geometry_from_slots(&sp, 1, 1000, 256);
    ok(g.workgroup_size_x == 256 && g.slot_count == 256 && g.dispatch_grid[0] == 1,
       "launch_geometry_preserves_legacy_worker_clamp");
    uint32_t grid[3];
    mkrt_sizing_dispatch_grid(&sp, 2, 4096, 64, grid);
    ok(grid[0] == 2 && grid[1] == 1 && grid[2] == 1, "dispatch_grid_keeps_worker_count_as_ceiling");
    mkrt_sizing_dispatch_grid(&sp, 64, 300, 256, grid);
    is(grid[0], 2, "dispatch_grid_preserves_logical_queue_width_policy");
    ok(mkrt_sizing_workgroup_size(512, 256) == 256 && mkrt_sizing_workgroup_size(0, 256) == 1 &&
           mkrt_sizing_workgroup_size(128, 256) == 128,
       "worker_workgroup_size: 256, 1, 128");
    ok(mkrt_sizing_padded_slot_count(65, 64) == 128 && mkrt_sizing_padded_slot_count(128, 64) == 128 &&
           mkrt_sizing_padded_slot_count(1, 64) == 64,
       "padded_slot_count: 128, 128, 64");
    is(mkrt_sizing_padded_slot_count(UINT32_MAX, 64), 4294967232u,
       "the saturating ceiling falls below n near 2^32 (from_item_count refuses it)");
    mkrt_sizing_dispatch_grid(&sp, 64, 32, 64, grid);
    ok(grid[0] == 1 && grid[1] == 1 && grid[2] == 1, "dispatch_grid(64, 32, 64) = [1,1,1]");
    mkrt_sizing_dispatch_grid(&sp, 9999, 999999, 64, grid);
    ok(grid[0] <= 1024, "dispatch grid is capped at 1024 workgroups");
    ok(mkrt_sizing_fused_allowed(&sp, 100, 100) && mkrt_sizing_fused_allowed(&sp, 400, 100) &&
           !mkrt_sizing_fused_allowed(&sp, 401, 100),
       "fused dispatch allowed up to 4x");
    ok(mkrt_sizing_default_worker_groups(&sp, 65536, 4096) >= 64, "powerful devices get >= 64 groups");
    mkrt_grid_limits lim = {256, 0, 256};
    uint32_t w;
    mkrt_error err;
    is(mkrt_sizing_optimal_grid(&sp, 10, 0, &lim, &g, &w, &err), MKRT_EINVAL, "a zero limit is refused");
    like(err.message, "max_compute_workgroups_per_dimension must be non-zero", "... naming the limit");
    is(mkrt_geometry_from_item_count(&sp, (uint64_t)UINT32_MAX + 1, 64, 256, &g, &err), MKRT_EOVERFLOW,
       "more than 2^32 - 1 items do not fit the slot space");
    is(mkrt_geometry_from_item_count(&sp, UINT32_MAX - 3, 64, 256, &g, &err), MKRT_EOVERFLOW,
       "padding that saturates below the item count is an error");
    ok(mkrt_geometry_from_item_count(&sp, 300, 64, 256, &g, NULL) == MKRT_OK && g.slot_count == 320,
       "from_item_count(300) pads to 320");
}

static void sizing_memos(void)
{
    mkrt_sizing_policy sp = mkrt_sizing_policy_standard();
    mkrt_sizing_cache_reset();
    mkrt_launch_geometry g1 = mkrt_geometry_from_slots_cached(&sp, 1, 64, 256);
    for (uint32_t k = 2; k <= 128; k++)
        mkrt_geometry_from_slots_cached(&sp, k, 64, 256);
    mkrt_sizing_cache_stats st = mkrt_sizing_cache_stats_read();
    ok(st.geometry_entries == 128 && st.misses == 128, "geometry memo: 128 entries after 128 inserts");
    mkrt_launch_geometry again = mkrt_geometry_from_slots_cached(&sp, 1, 64, 256); /* promotes key 1 */
    mkrt_geometry_from_slots_cached(&sp, 129, 64, 256);                         /* evicts key 2 */
    uint64_t misses = mkrt_sizing_cache_stats_read().misses;
    mkrt_geometry_from_slots_cached(&sp, 1, 64, 256);
    ok(mkrt_sizing_cache_stats_read().misses == misses && memcmp(&g1, &again, sizeof g1) == 0,
       "planner grid/geometry cache: key 1 is still present after the 129th insert");
    mkrt_geometry_from_slots_cached(&sp, 2, 64, 256);
    ok(mkrt_sizing_cache_stats_read().misses == misses + 1, "... the least recently used key (2) was evicted");
    mkrt_grid_limits lim = {256, 64, 256};
    mkrt_launch_geometry a, b;
    uint32_t wa, wb;
    mkrt_sizing_optimal_grid(&sp, 300, 64, &lim, &a, &wa, NULL);
    mkrt_sizing_optimal_grid_cached(&sp, 300, 64, &lim, &b, &wb, NULL);
    mkrt_sizing_optimal_grid_cached(&sp, 300, 64, &lim, &b, &wb, NULL);
    ok(memcmp(&a, &b, sizeof a) == 0 && wa == wb && mkrt_sizing_cache_stats_read().grid_entries == 1,
       "the grid memo returns what the uncached call does, from one entry");
    mkrt_grid_limits zero = {0, 64, 256};
    mkrt_error err;
    is(mkrt_sizing_optimal_grid_cached(&sp, 300, 64, &zero, &b, &wb, &err), MKRT_EINVAL, "errors pass through");
    is(mkrt_sizing_cache_stats_read().grid_entries, 1, "... and are not memoised");
}

static void config(void)
{
    mkrt_launch_config c = mkrt_launch_config_default();
    ok(c.worker_count == 64 && c.max_wall_time_ns == 60000000000ull &&
           mkrt_launch_config_validate(&c, NULL) == MKRT_OK,
       "default config: 64 workers, 60 s, valid");
    c.hints = (mkrt_workload_hints){7, 11, 1000, 4000, 7500, 8000, 1u << 20, 1u << 24};
    c.expected_items_per_worker = 2;
    mkrt_launch_request r = mkrt_launch_config_request(&c, 2, 256, 65536, 1024);
    ok(r.hot_opcode_count == 7 && r.hot_window_count == 11 && r.graph_node_count == 1000 &&
           r.graph_edge_count == 4000 && r.frontier_density_bps == 7500 &&
           r.memory_pressure_bps == 8000 && r.resident_device_bytes == 1u << 20 &&
           r.device_memory_budget_bytes == 1u << 24 && r.expected_hits_per_item == 2 &&
           r.requested_worker_groups == 64 && r.max_compute_workgroups_per_dimension == 65536,
       "launch_request_preserves_workload_hints");
    c.worker_count = 0;
    is(mkrt_launch_config_validate(&c, NULL), MKRT_EINVAL, "zero workers are refused");
    c = mkrt_launch_config_default();
    c.max_wall_time_ns = 0;
    is(mkrt_launch_config_validate(&c, NULL), MKRT_EINVAL, "a zero wall time is refused");
}

static void task_queue(void)
{
    mkrt_launch_config c = mkrt_launch_config_default();
    c.expected_items_per_worker = 2;
    mkrt_task_item tasks[3];
    memset(tasks, 0, sizeof tasks);
    tasks[0].state = MKRT_TASK_READY;
    tasks[1].state = MKRT_TASK_PAUSED;
    tasks[2].state = MKRT_TASK_READY;
    tasks[2].priority = 2; /* high */
    mkrt_task_requeue(&tasks[2]);
    ok(tasks[2].state == MKRT_TASK_REQUEUED && tasks[2].requeue_count == 1 && tasks[2].age_ticks == 1 &&
           (tasks[2].flags & MKRT_TASK_FLAG_REQUEUED),
       "a requeued task counts, ages and is flagged");
    mkrt_task_snapshot snap;
    mkrt_task_snapshot_take(tasks, 3, &snap, NULL);
    mkrt_launch_request r = mkrt_launch_config_request(&c, 0, 256, 65536, 1024);
    mkrt_launch_request_apply_tasks(&r, &snap);
    ok(r.queue_len == 2 && r.expected_hits_per_item == 2 && r.requeue_count == 2 && r.max_priority_age == 1,
       "config_builds_launch_policy_from_continuation_task_queue: queue 2, hits 2, requeues 2, age 1");
    mkrt_launch_recommendation rec = rec_of(&r);
    ok(rec.geometry.workgroup_size_x == 64 && rec.age_priority_work,
       "... workgroup 64 and priority aging");
    tasks[1].state = 9;
    mkrt_error err;
    is(mkrt_task_snapshot_take(tasks, 3, &snap, &err), MKRT_EINVAL, "an unknown task state is an error");
    like(err.message, "unknown state word 9", "... naming the word");
}

static void priority(void)
{
    mkrt_priority_accounting a = {UINT64_MAX - 8, 3, 64};
    mkrt_drain_recommendation d = mkrt_priority_drain_recommendation(&a);
    ok(d.should_drain && d.reason == MKRT_DRAIN_REQUEUE_NEAR_LIMIT && d.requeue_counter_headroom == 8 &&
           d.aged_promotion_counter_headroom == UINT64_MAX - 3,
       "priority_accounting_reports_structured_drain_before_overflow");
    is_str(d.fix, "drain scheduler telemetry before counters reach u64::MAX", "... with the fix text");
    mkrt_priority_accounting z = {0, 0, 0};
    d = mkrt_priority_drain_recommendation(&z);
    ok(!d.should_drain && d.reason == MKRT_DRAIN_NONE && d.requeue_counter_headroom == UINT64_MAX &&
           d.aged_promotion_counter_headroom == UINT64_MAX,
       "priority_accounting_reports_no_drain_for_empty_counters");
    mkrt_priority_accounting x = {UINT64_MAX, 0, 0};
    is(mkrt_priority_drain_recommendation(&x).reason, MKRT_DRAIN_REQUEUE_EXHAUSTED, "exhausted requeue counter");
    x = (mkrt_priority_accounting){5, UINT64_MAX, 0};
    is(mkrt_priority_drain_recommendation(&x).reason, MKRT_DRAIN_AGED_EXHAUSTED, "exhausted aged counter");
    x = (mkrt_priority_accounting){5, UINT64_MAX - 1024, 0};
    is(mkrt_priority_drain_recommendation(&x).reason, MKRT_DRAIN_AGED_NEAR_LIMIT, "aged counter near its limit");
    x = (mkrt_priority_accounting){0, 0, 1};
    is_str(mkrt_drain_reason_name(mkrt_priority_drain_recommendation(&x).reason), "pending_telemetry",
           "a non-zero age is pending telemetry");
    mkrt_priority_accounting s = {UINT64_MAX - 1, 0, 0};
    mkrt_priority_record_requeue(&s, 9);
    mkrt_priority_record_requeue(&s, 3);
    ok(s.requeue_count == UINT64_MAX && s.max_priority_age == 9, "record_requeue saturates and keeps the max age");
    mkrt_error err;
    is(mkrt_priority_try_record_requeue(&s, 1, &err), MKRT_EOVERFLOW, "try_record_requeue refuses to overflow");
    like(err.message, "requeue_count overflowed u64. Fix: drain scheduler telemetry", "... with the reference message");
    mkrt_priority_accounting t = {0, UINT64_MAX, 0};
    is(mkrt_priority_try_record_aged_promotion(&t, 1, &err), MKRT_EOVERFLOW, "try_record_aged_promotion refuses to overflow");
    mkrt_priority_record_aged_promotion(&z, 40);
    ok(z.aged_promotions == 1 && z.max_priority_age == 40, "record_aged_promotion counts and ages");
}

static void math_helpers(void)
{
    double in[] = {3, 1, 2}, r2[] = {1, 0.5}, out[3], scratch[3];
    mkrt_priority_diffuse(in, 3, r2, 2, 0.5, 4, out, scratch);
    ok(memcmp(in, out, sizeof in) == 0, "diffuse_priority_mismatched_lengths_returns_input");
    double s[] = {10, 20}, r[] = {0.5, 0.25}, o2[2], sc2[2];
    mkrt_priority_diffuse(s, 2, r, 2, 0.2, 1, o2, sc2);
    ok(fabs(o2[0] - 9) < 1e-12 && fabs(o2[1] - 19) < 1e-12, "priority diffusion: [10,20] -> [9,19]");
    mkrt_priority_diffuse(s, 2, r, 2, 0.2, 2, o2, sc2);
    ok(fabs(o2[0] - 8.1) < 1e-12 && fabs(o2[1] - 18.05) < 1e-12, "two iterations compound");
    double m[] = {1, 0, 0, 1}, g[] = {3, -2}, step[2];
    size_t wrote;
    mkrt_natural_gradient_step(m, 4, g, 2, 2, 0.5, step, 2, &wrote, NULL);
    ok(wrote == 2 && fabs(step[0] + 1.5) < 1e-12 && fabs(step[1] - 1.0) < 1e-12,
       "natural gradient step: [-1.5, 1.0]");
    mkrt_natural_gradient_step(m, 3, g, 2, 2, 0.5, step, 2, &wrote, NULL);
    is(wrote, 0, "a short matrix gives an empty step");
    uint32_t mult[] = {1, 2, 4, 8}, sizes[] = {32, 64, 128};
    double mc[] = {9, 5, 1, 3}, sc[] = {7, 2, 3};
    ok(mkrt_autotune_hit_capacity_multiplier(&P, mult, 4, mc, 4) == 4 &&
           mkrt_autotune_workgroup_size(sizes, 3, sc, 3, 256) == 64,
       "launch_policy_autotune_uses_local_min_cost_selection");
    double nan_first[] = {NAN, 5, 5};
    is(mkrt_autotune_workgroup_size(sizes, 3, nan_first, 3, 256), 64,
       "NaN sorts after every number; ties keep the first index");
    double neg_nan[] = {3, -NAN, 1};
    is(mkrt_autotune_workgroup_size(sizes, 3, neg_nan, 3, 256), 64, "-NaN sorts before every number");
    is(mkrt_autotune_workgroup_size(sizes, 0, sc, 3, 256), 256, "no candidates keep the current size");
}

int main(void)
{
    P = mkrt_launch_policy_standard();
    recommendations();
    hysteresis();
    evidence();
    memo();
    memo_is_per_thread();
    sizing();
    sizing_memos();
    config();
    priority();
    task_queue();
    math_helpers();
    return done_testing();
}
