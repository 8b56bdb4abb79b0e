/* SPDX-License-Identifier: BSD-2-Clause */
/* planlib/tests/test_planlib_bad_input.c - libmkrt_planlib's public calls
 * (mkrt_planlib/sizing.h, policy.h, priority.h) with bad input: each NULL
 * pointer in turn, zero and huge counts, out-of-range enums. Status calls
 * return the documented status with a "Fix:" message in err (and accept a
 * NULL err); the others return 0 / NULL / the documented value. None may
 * crash, hang or abort. (Moved from tests/test_bad_input.c with the
 * library.) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mkrt/status.h"
#include "mkrt_planlib/policy.h"
#include "mkrt_planlib/priority.h"
#include "mkrt_planlib/sizing.h"
#include "../../tests/tap.h"
#include "../../tests/bad_input.h"

/* ---- sizing.h ----------------------------------------------------------- */

static void sizing_bad_input(void)
{
    mkrt_sizing_policy sp = mkrt_sizing_policy_standard();
    mkrt_grid_limits lim = {256, 1024, 1024}, zero_lim = {256, 0, 1024};
    mkrt_launch_geometry g;
    uint32_t workers;

    is(mkrt_sizing_workgroup_size(0, 0), 1, "sizing_workgroup_size(0, 0) is 1");
    is(mkrt_sizing_workgroup_size(UINT32_MAX, 0), 1, "sizing_workgroup_size(max, 0) is 1");
    is(mkrt_sizing_padded_slot_count(UINT32_MAX, 0), UINT32_MAX,
       "sizing_padded_slot_count(max, 0) saturates");
    is(mkrt_sizing_padded_slot_count(UINT32_MAX, 1000) % 1000, 0,
       "sizing_padded_slot_count(max, 1000) stays a multiple of the workgroup");
    uint32_t grid[3] = {7, 7, 7};
    mkrt_sizing_dispatch_grid(NULL, 4, 100, 32, grid);
    ok(grid[0] == 7 && grid[1] == 7 && grid[2] == 7, "sizing_dispatch_grid(NULL policy) writes nothing");
    mkrt_sizing_dispatch_grid(&sp, 4, 100, 32, NULL);
    mkrt_sizing_dispatch_grid(&sp, UINT32_MAX, UINT32_MAX, 0, grid);
    ok(grid[0] == sp.max_dispatch_workgroups, "sizing_dispatch_grid(huge, workgroup 0) is capped");
    is(mkrt_sizing_default_worker_groups(NULL, 1024, 1024), 0,
       "sizing_default_worker_groups(NULL policy) is 0");
    ok(!mkrt_sizing_fused_allowed(NULL, 1, 1), "sizing_fused_allowed(NULL policy) is false");
    ok(mkrt_sizing_fused_allowed(&sp, UINT64_MAX, UINT64_MAX),
       "sizing_fused_allowed(huge) does not overflow");
    g = mkrt_geometry_from_slots(NULL, 100, 4, 32);
    ok(g.workgroup_size_x == 0 && g.slot_count == 0 && g.dispatch_grid[0] == 0,
       "geometry_from_slots(NULL policy) is a zeroed geometry");
    g = mkrt_geometry_from_slots_cached(NULL, 100, 4, 32);
    ok(g.workgroup_size_x == 0 && g.slot_count == 0, "geometry_from_slots_cached(NULL policy) too");
    is(mkrt_geometry_covering_worker_groups(NULL), 0, "geometry_covering_worker_groups(NULL) is 0");

    CHECK(MKRT_EINVAL, mkrt_geometry_from_item_count(NULL, 10, 4, 32, &g, E),
          "geometry_from_item_count(NULL policy)");
    CHECK(MKRT_EINVAL, mkrt_geometry_from_item_count(&sp, 10, 4, 32, NULL, E),
          "geometry_from_item_count(NULL result)");
    CHECK(MKRT_EOVERFLOW, mkrt_geometry_from_item_count(&sp, UINT64_MAX, 4, 32, &g, E),
          "geometry_from_item_count(UINT64_MAX items)");
    CHECK(MKRT_EOVERFLOW, mkrt_geometry_from_item_count(&sp, UINT32_MAX, 1000, 1000, &g, E),
          "geometry_from_item_count(2^32 - 1 items, padding saturates)");

#define GRIDS(fn, label)                                                                       \
    CHECK(MKRT_EINVAL, fn(NULL, 10, 0, &lim, &g, &workers, E), label "(NULL policy)");         \
    CHECK(MKRT_EINVAL, fn(&sp, 10, 0, NULL, &g, &workers, E), label "(NULL limits)");          \
    CHECK(MKRT_EINVAL, fn(&sp, 10, 0, &lim, NULL, &workers, E), label "(NULL geometry)");      \
    CHECK(MKRT_EINVAL, fn(&sp, 10, 0, &lim, &g, NULL, E), label "(NULL worker groups)");       \
    CHECK(MKRT_EINVAL, fn(&sp, 10, 0, &zero_lim, &g, &workers, E), label "(a zero limit)");    \
    is(fn(&sp, UINT32_MAX, UINT32_MAX, &lim, &g, &workers, NULL), MKRT_OK,                     \
       label "(huge queue and workers) is OK");                                               \
    ok(workers <= lim.max_workgroups_per_dimension, label ": ... capped by the limit")
    GRIDS(mkrt_sizing_optimal_grid, "sizing_optimal_grid");
    GRIDS(mkrt_sizing_optimal_grid_cached, "sizing_optimal_grid_cached");
#undef GRIDS
    mkrt_sizing_cache_reset();
    mkrt_sizing_cache_stats st = mkrt_sizing_cache_stats_read();
    ok(st.grid_entries == 0 && st.geometry_entries == 0, "sizing cache reset and stats read");
}

/* ---- policy.h ----------------------------------------------------------- */

static void policy_bad_input(void)
{
    mkrt_launch_policy p = mkrt_launch_policy_standard();
    mkrt_launch_request req = mkrt_launch_request_direct(100, 8, 64);
    mkrt_launch_request no_limits = mkrt_launch_request_direct(100, 0, 0);
    mkrt_launch_recommendation rec;
    mkrt_topology_evidence tev;
    mkrt_promotion_evidence pev;

    CHECK(MKRT_EINVAL, mkrt_launch_recommend(NULL, &req, &rec, E), "launch_recommend(NULL policy)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend(&p, NULL, &rec, E), "launch_recommend(NULL request)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend(&p, &req, NULL, E), "launch_recommend(NULL result)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend(&p, &no_limits, &rec, E),
          "launch_recommend(zero device limits)");

    mkrt_dispatch_topology prev = MKRT_TOPOLOGY_HYBRID_FRONTIER;
    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_previous(NULL, &req, prev, &rec, E),
          "launch_recommend_with_previous(NULL policy)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_previous(&p, NULL, prev, &rec, E),
          "launch_recommend_with_previous(NULL request)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_previous(&p, &req, prev, NULL, E),
          "launch_recommend_with_previous(NULL result)");
    CHECK(MKRT_EINVAL,
          mkrt_launch_recommend_with_previous(&p, &req, (mkrt_dispatch_topology)99, &rec, E),
          "launch_recommend_with_previous(topology 99)");
    CHECK(MKRT_EINVAL,
          mkrt_launch_recommend_with_previous(&p, &req, (mkrt_dispatch_topology)-1, &rec, E),
          "launch_recommend_with_previous(topology -1)");

    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_topology_evidence(NULL, &req, &rec, &tev, E),
          "launch_recommend_with_topology_evidence(NULL policy)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_topology_evidence(&p, NULL, &rec, &tev, E),
          "launch_recommend_with_topology_evidence(NULL request)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_topology_evidence(&p, &req, NULL, &tev, E),
          "launch_recommend_with_topology_evidence(NULL result)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_topology_evidence(&p, &req, &rec, NULL, E),
          "launch_recommend_with_topology_evidence(NULL evidence)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_promotion_evidence(NULL, &req, &rec, &pev, E),
          "launch_recommend_with_promotion_evidence(NULL policy)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_promotion_evidence(&p, NULL, &rec, &pev, E),
          "launch_recommend_with_promotion_evidence(NULL request)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_promotion_evidence(&p, &req, NULL, &pev, E),
          "launch_recommend_with_promotion_evidence(NULL result)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_promotion_evidence(&p, &req, &rec, NULL, E),
          "launch_recommend_with_promotion_evidence(NULL evidence)");
    ok(!mkrt_topology_evidence_is_complete(NULL), "topology_evidence_is_complete(NULL) is false");
    ok(!mkrt_promotion_evidence_is_complete(NULL), "promotion_evidence_is_complete(NULL) is false");
    mkrt_launch_cache_reset();
    mkrt_launch_cache_stats cs = mkrt_launch_cache_stats_read();
    is(cs.entries, 0, "launch cache reset and stats read");

    uint32_t cand[3] = {1, 2, 4};
    double cost[3] = {3.0, 1.0, 2.0};
    is(mkrt_autotune_hit_capacity_multiplier(NULL, NULL, 0, NULL, 0), 0,
       "autotune_hit_capacity_multiplier(NULL policy, nothing) is 0");
    is(mkrt_autotune_hit_capacity_multiplier(NULL, cand, 3, cost, 3), 2,
       "autotune_hit_capacity_multiplier(NULL policy) still picks the cheapest");
    is(mkrt_autotune_hit_capacity_multiplier(&p, NULL, 3, cost, 3), p.hit_capacity_multiplier,
       "autotune_hit_capacity_multiplier(NULL candidates, 3) keeps the current value");
    is(mkrt_autotune_hit_capacity_multiplier(&p, cand, 3, NULL, 3), p.hit_capacity_multiplier,
       "autotune_hit_capacity_multiplier(NULL costs, 3) keeps the current value");
    is(mkrt_autotune_workgroup_size(NULL, SIZE_MAX, cost, 3, 64), 64,
       "autotune_workgroup_size(NULL candidates, SIZE_MAX) keeps the current value");
    is(mkrt_autotune_workgroup_size(cand, 3, NULL, SIZE_MAX, 64), 64,
       "autotune_workgroup_size(NULL costs, SIZE_MAX) keeps the current value");
    is(mkrt_autotune_workgroup_size(cand, 3, cost, SIZE_MAX, 64), 2,
       "autotune_workgroup_size(SIZE_MAX costs) reads only min(n) entries");

    double m[4] = {1, 0, 0, 1}, grad[2] = {1, 2}, out[2];
    size_t written = 99;
#define NG(M, ML, G, GL, N, O, OC, W) mkrt_natural_gradient_step(M, ML, G, GL, N, 0.5, O, OC, W, E)
    CHECK(MKRT_EINVAL, NG(m, 4, grad, 2, 2, out, 2, NULL), "natural_gradient_step(NULL written)");
    CHECK(MKRT_EINVAL, NG(NULL, 4, grad, 2, 2, out, 2, &written),
          "natural_gradient_step(NULL m, 4 entries)");
    CHECK(MKRT_EINVAL, NG(m, 4, NULL, 2, 2, out, 2, &written),
          "natural_gradient_step(NULL grad, 2 entries)");
    CHECK(MKRT_EINVAL, NG(m, 4, grad, 2, 2, NULL, 2, &written), "natural_gradient_step(NULL out)");
    CHECK(MKRT_EINVAL, NG(m, 4, grad, 2, 2, out, 1, &written), "natural_gradient_step(out_cap 1 < 2)");
    CHECK(MKRT_EINVAL, NG(m, SIZE_MAX, grad, SIZE_MAX, UINT32_MAX, out, 2, &written),
          "natural_gradient_step(n = 2^32 - 1, out_cap 2)");
    written = 99;
    is(NG(NULL, 0, NULL, 0, 2, NULL, 0, &written), MKRT_OK,
       "natural_gradient_step(no entries) is OK ...");
    is(written, 0, "... and writes nothing");
    is(NG(m, 4, grad, 2, UINT32_MAX, out, 2, &written), MKRT_OK,
       "natural_gradient_step(n = 2^32 - 1, too few entries) is OK ...");
    is(written, 0, "... and writes nothing");
#undef NG

    mkrt_launch_config c = mkrt_launch_config_default();
    CHECK(MKRT_EINVAL, mkrt_launch_config_validate(NULL, E), "launch_config_validate(NULL)");
    c.worker_count = 0;
    CHECK(MKRT_EINVAL, mkrt_launch_config_validate(&c, E), "launch_config_validate(0 workers)");
    c = mkrt_launch_config_default();
    c.max_wall_time_ns = 0;
    CHECK(MKRT_EINVAL, mkrt_launch_config_validate(&c, E), "launch_config_validate(0 wall time)");
    mkrt_launch_request r0 = mkrt_launch_config_request(NULL, 10, 64, 128, 256);
    ok(r0.queue_len == 10 && r0.requested_worker_groups == 0 && r0.expected_hits_per_item == 1 &&
           r0.max_compute_workgroups_per_dimension == 128 && r0.hot_opcode_count == 0,
       "launch_config_request(NULL config) reads an all-zero config");

    mkrt_task_snapshot snap = {1, 2, 3, 4, 5, 6};
    mkrt_launch_request before = req, after = req;
    mkrt_launch_request_apply_tasks(&after, NULL);
    ok(after.queue_len == before.queue_len && after.requeue_count == before.requeue_count &&
           after.max_priority_age == before.max_priority_age,
       "launch_request_apply_tasks(NULL snapshot) changes nothing");
    mkrt_launch_request_apply_tasks(NULL, &snap);
    after.requeue_count = UINT64_MAX - 1;
    snap.task_requeues = UINT64_MAX;
    mkrt_launch_request_apply_tasks(&after, &snap);
    ok(after.requeue_count == UINT64_MAX, "launch_request_apply_tasks saturates requeue_count");

    is_str(mkrt_topology_name((mkrt_dispatch_topology)99), "unknown", "topology_name(99)");
    is_str(mkrt_topology_name((mkrt_dispatch_topology)-1), "unknown", "topology_name(-1)");
    is_str(mkrt_pressure_name((mkrt_queue_pressure)99), "unknown", "pressure_name(99)");
    is_str(mkrt_graphblas_class_name((mkrt_graphblas_class)99), "unknown", "graphblas_class_name(99)");
    is_str(mkrt_promotion_route_name((mkrt_promotion_route)99), "unknown", "promotion_route_name(99)");
}

/* ---- priority.h --------------------------------------------------------- */

static void priority_bad_input(void)
{
    mkrt_priority_accounting a = {UINT64_MAX, UINT64_MAX, 0};
    mkrt_priority_record_requeue(NULL, 5);
    mkrt_priority_record_aged_promotion(NULL, 5);
    mkrt_priority_record_requeue(&a, 5);
    ok(a.requeue_count == UINT64_MAX && a.max_priority_age == 5,
       "priority_record_requeue(NULL) is a no-op; saturates at the top");
    CHECK(MKRT_EINVAL, mkrt_priority_try_record_requeue(NULL, 1, E), "priority_try_record_requeue(NULL)");
    CHECK(MKRT_EINVAL, mkrt_priority_try_record_aged_promotion(NULL, 1, E),
          "priority_try_record_aged_promotion(NULL)");
    CHECK(MKRT_EOVERFLOW, mkrt_priority_try_record_requeue(&a, 1, E),
          "priority_try_record_requeue(at UINT64_MAX)");
    CHECK(MKRT_EOVERFLOW, mkrt_priority_try_record_aged_promotion(&a, 1, E),
          "priority_try_record_aged_promotion(at UINT64_MAX)");
    mkrt_drain_recommendation d = mkrt_priority_drain_recommendation(NULL);
    ok(!d.should_drain && d.reason == MKRT_DRAIN_NONE && d.requeue_counter_headroom == UINT64_MAX &&
           d.fix != NULL,
       "priority_drain_recommendation(NULL) reads a zeroed accounting");
    is_str(mkrt_drain_reason_name((mkrt_drain_reason)99), "unknown", "drain_reason_name(99)");
    is_str(mkrt_drain_reason_name((mkrt_drain_reason)-1), "unknown", "drain_reason_name(-1)");

    double st[3] = {1, 2, 3}, rs[3] = {0.5, 0.5, 0.5}, out[3] = {9, 9, 9}, scr[3];
    mkrt_priority_diffuse(NULL, 3, rs, 3, 0.5, 2, out, scr);
    ok(out[0] == 9 && out[2] == 9, "priority_diffuse(NULL stalks) writes nothing");
    mkrt_priority_diffuse(st, 3, rs, 3, 0.5, 2, NULL, scr);
    mkrt_priority_diffuse(st, 3, rs, 3, 0.5, 2, out, NULL);
    ok(out[0] == 9 && out[2] == 9, "priority_diffuse(NULL scratch, iterating) writes nothing");
    mkrt_priority_diffuse(st, 3, NULL, 3, 0.5, 2, out, scr);
    ok(out[0] == 1 && out[1] == 2 && out[2] == 3, "priority_diffuse(NULL restriction) copies stalks");
    mkrt_priority_diffuse(NULL, SIZE_MAX, NULL, SIZE_MAX, 0.5, UINT32_MAX, NULL, NULL);
    mkrt_priority_diffuse(st, SIZE_MAX, rs, 3, 0.5, 2, out, scr);
    ok(out[0] == 1 && out[1] == 2 && out[2] == 3,
       "priority_diffuse(n = SIZE_MAX) writes nothing (the byte count would overflow)");
    mkrt_priority_diffuse(st, 3, rs, 3, 0.5, 2, out, scr);
    ok(fabs(out[0] - 0.5625) < 1e-12, "priority_diffuse with good input still diffuses");

    mkrt_task_requeue(NULL);
    mkrt_task_item t[2];
    memset(t, 0, sizeof t);
    t[0].state = MKRT_TASK_READY;
    t[1].state = 42;
    mkrt_task_snapshot snap;
    CHECK(MKRT_EINVAL, mkrt_task_snapshot_take(NULL, 2, &snap, E), "task_snapshot_take(NULL tasks, 2)");
    CHECK(MKRT_EINVAL, mkrt_task_snapshot_take(t, 1, NULL, E), "task_snapshot_take(NULL out)");
    CHECK(MKRT_EINVAL, mkrt_task_snapshot_take(t, 2, &snap, E), "task_snapshot_take(state 42)");
    is(mkrt_task_snapshot_take(NULL, 0, &snap, NULL), MKRT_OK, "task_snapshot_take(NULL, 0) is OK");
}

int main(void)
{
    sizing_bad_input();
    policy_bad_input();
    priority_bad_input();
    return done_testing();
}
