/* SPDX-License-Identifier: BSD-2-Clause */
/* planlib/tests/test_planners.c - mkrt_planlib/planners.h: a topology
 * decision's text, the fusion-pressure homotopy, the uncached frontier
 * execution planner (each agreeing with the reference numbers, and with
 * libmkrt's cached planner on a fresh cache), and their bad input: the
 * documented status with a "Fix:", the same with a NULL err. (Moved from
 * tests/test_topology.c, test_bad_input.c and test_bad_input_plan.c with
 * the functions, issue 23.) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mkrt/plan_cache.h"
#include "mkrt_planlib/cached.h"
#include "mkrt_planlib/planners.h"
#include "../../tests/tap.h"
#include "../../tests/bad_input.h"

static const mkrt_graph_shape G = {1000, 4000};
static const mkrt_memory_budget M = {1000, 10000};

static mkrt_topology_decision sel(double cost, double density, uint64_t readback, double launch, double fusion)
{
    mkrt_exec_sample s = {cost, density, readback};
    return mkrt_select_topology(&s, &G, &M, launch, fusion, true);
}

static void explain(void)
{
    mkrt_topology_decision d = sel(1000, 0.01, 256, 100, 0);
    char buf[256];
    mkrt_topology_explain(&d, buf, sizeof buf);
    is_str(buf,
           "megakernel-topology-v1|topology=WarpSparseFrontier|memory_pressure_bps=1000|"
           "average_degree_bps=40000|launch_pressure_bps=1000|reason=ultra_sparse_warp_specialized",
           "explain: ultra sparse -> warp sparse, with the stable text");
    mkrt_exec_sample s = {1000, 0.95, 1 << 20};
    mkrt_memory_budget red = {95, 100};
    d = mkrt_select_topology(&s, &G, &red, 500, 1.0, true);
    mkrt_topology_explain(&d, buf, sizeof buf);
    ok(strstr(buf, "reason=memory_pressure_sparse_safety") != NULL, "explain: the red zone's sparse is for safety");
    d = sel(1000, 0.50, 1 << 20, 250, 0.90);
    mkrt_topology_explain(&d, buf, sizeof buf);
    ok(strstr(buf, "topology=FusedWave") != NULL && strstr(buf, "reason=launch_and_readback_pressure_fused"),
       "explain: fused wave, for launch and readback pressure");

    is(mkrt_topology_explain(NULL, buf, sizeof buf), 0, "topology_explain(NULL decision) is 0 ...");
    is_str(buf, "", "... with an empty buffer");
    size_t full = mkrt_topology_explain(&d, NULL, 100);
    ok(full > 0, "topology_explain(NULL buf, len 100) returns the length without writing");
    is(mkrt_topology_explain(&d, buf, 0), full, "topology_explain(len 0) too");
    mkrt_topology_decision bad = d;
    bad.topology = (mkrt_wave_topology)99;
    mkrt_topology_explain(&bad, buf, sizeof buf);
    like(buf, "topology=Unknown", "topology_explain(topology 99) names it Unknown");
}

static void fusion(void)
{
    mkrt_exec_sample s[2] = {{10, 0.0, 0}, {20, 1.0, 4096}};
    double out[2];
    is(mkrt_schedule_fusion_pressure(s, 2, 5, 8, 0.25, out, NULL), MKRT_OK, "scheduling runs");
    ok(out[1] > out[0] && fabs(out[0] - 0.151556561) < 1e-6 && fabs(out[1] - 0.583037262) < 1e-6,
       "scheduling_reuses_caller_owned_output_capacity: [%.9f, %.9f]", out[0], out[1]);
    mkrt_exec_sample bad[1] = {{10, 1.5, 0}};
    mkrt_error e2;
    is(mkrt_schedule_fusion_pressure(bad, 1, 5, 8, 0.25, out, &e2), MKRT_EINVAL,
       "scheduling_preserves_sample_validation_errors");
    like(e2.message, "sample 0 has an invalid frontier density", "... naming the sample");
    mkrt_exec_sample zero[1] = {{0, 0.5, 0}};
    mkrt_schedule_fusion_pressure(zero, 1, 0, 8, 0.5, out, NULL);
    is(out[0], 0, "no cost, readback or launch overhead: zero pressure");

    double fp[2];
    mkrt_exec_sample sample = {1000.0, 0.5, 4096};
    mkrt_exec_sample two[2] = {sample, sample}, nan_cost[1] = {{NAN, 0.5, 0}};
    CHECK(MKRT_EINVAL, mkrt_schedule_fusion_pressure(NULL, 2, 10.0, 4, 0.5, fp, E),
          "schedule_fusion_pressure(NULL samples, 2)");
    CHECK(MKRT_EINVAL, mkrt_schedule_fusion_pressure(two, 2, 10.0, 4, 0.5, NULL, E),
          "schedule_fusion_pressure(NULL out, 2)");
    CHECK(MKRT_EINVAL, mkrt_schedule_fusion_pressure(NULL, SIZE_MAX, 10.0, 4, 0.5, NULL, E),
          "schedule_fusion_pressure(NULL arrays, SIZE_MAX)");
    CHECK(MKRT_EINVAL, mkrt_schedule_fusion_pressure(two, 2, 10.0, 4, NAN, fp, E),
          "schedule_fusion_pressure(dt NaN)");
    CHECK(MKRT_EINVAL, mkrt_schedule_fusion_pressure(two, 2, -1.0, 4, 0.5, fp, E),
          "schedule_fusion_pressure(overhead -1)");
    CHECK(MKRT_EINVAL, mkrt_schedule_fusion_pressure(nan_cost, 1, 10.0, 4, 0.5, fp, E),
          "schedule_fusion_pressure(cost NaN)");
    is(mkrt_schedule_fusion_pressure(NULL, 0, 10.0, UINT32_MAX, 0.5, NULL, NULL), MKRT_OK,
       "schedule_fusion_pressure(no candidates, NULL arrays) is OK");
}

/* The uncached planner and libmkrt's cached one (fresh cache, so no
 * previous topology) plan the same, over densities, budgets and fusion. */
static void frontier_parity(void)
{
    mkrt_barrier_scratch *bs = mkrt_barrier_scratch_create(0, 0, NULL);
    const mkrt_frontier_wave w[3] = {{1000, 100, 200}, {4000, 50, 100}, {500, 10, 4096}};
    const mkrt_wave_dep d[1] = {{0, 2}};
    const double densities[4] = {0.01, 0.10, 0.40, 0.90};
    const uint64_t budgets[3] = {1u << 20, 1u << 16, 40000};
    int same = 0, runs = 0, fitted = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            for (int f = 0; f < 2; f++) {
                mkrt_exec_sample s = {1000, densities[i], 8192};
                mkrt_graph_shape g = {1000, 8000};
                mkrt_byte_layout l = {8, 4, 0, 0, 0};
                double fp = f ? 0.95 : 0.0;
                mkrt_exec_plan e;
                mkrt_frontier_plan fr;
                mkrt_status st = mkrt_plan_frontier_execution(bs, &s, &g, &l, w, 3, d, 1, budgets[j], 250, fp, true,
                                                              &e, &fr, NULL);
                size_t groups = fr.barriers.group_count;
                mkrt_plan_cache_config cc = mkrt_plan_cache_config_default();
                mkrt_plan_cache *c;
                if (mkrt_plan_cache_create(&cc, &c, NULL) != MKRT_OK)
                    bail_out("plan cache");
                mkrt_plan_identity id = {0xF00D, MKRT_ANALYSIS_DATAFLOW, 0, {12, 0, 32, true, true, 1024}, 0};
                mkrt_frontier_exec_plan fe;
                mkrt_status st2 = mkrt_plan_cache_plan_frontier(c, &id, bs, &s, &g, &l, w, 3, d, 1, budgets[j], 250,
                                                                fp, &fe, NULL);
                runs++;
                fitted += st == MKRT_OK;
                same += st == st2 &&
                        (st != MKRT_OK ||
                         (e.topology == fe.execution.topology && e.memory.required_bytes == fe.execution.memory.required_bytes &&
                          e.downgraded_to_sparse == fe.execution.downgraded_to_sparse && groups == fe.frontier.barriers.group_count &&
                          fr.peak_frontier_bytes == fe.frontier.peak_frontier_bytes &&
                          fr.amortized_readback_bytes == fe.frontier.amortized_readback_bytes));
                mkrt_plan_cache_destroy(c);
            }
    ok(same == runs && fitted > 0 && fitted < runs, "frontier execution: uncached and cached planners agree (%d of %d, %d fit)",
       same, runs, fitted);
    mkrt_barrier_scratch_destroy(bs);
}

static void frontier_bad_input(void)
{
    mkrt_barrier_scratch *s = mkrt_barrier_scratch_create(0, 0, NULL);
    mkrt_frontier_wave w[3] = {{10, 1, 1}, {10, 1, 1}, {10, 1, 1}};
    mkrt_wave_dep deps[1] = {{0, 1}};
    mkrt_frontier_plan fp;
    mkrt_exec_plan xp;
    mkrt_exec_sample sample = {1000.0, 0.5, 4096};
    mkrt_graph_shape graph = {100, 400};
    mkrt_byte_layout layout = {8, 8, 0, 0, 0};
#define FX(S, SA, G, L, W, WN, D, DN, X, P)                                                   \
    mkrt_plan_frontier_execution(S, SA, G, L, W, WN, D, DN, 1u << 30, 100.0, 0.5, true, X, P, E)
    CHECK(MKRT_EINVAL, FX(NULL, &sample, &graph, &layout, w, 3, deps, 1, &xp, &fp),
          "plan_frontier_execution(NULL scratch)");
    CHECK(MKRT_EINVAL, FX(s, NULL, &graph, &layout, w, 3, deps, 1, &xp, &fp),
          "plan_frontier_execution(NULL sample)");
    CHECK(MKRT_EINVAL, FX(s, &sample, NULL, &layout, w, 3, deps, 1, &xp, &fp),
          "plan_frontier_execution(NULL graph)");
    CHECK(MKRT_EINVAL, FX(s, &sample, &graph, NULL, w, 3, deps, 1, &xp, &fp),
          "plan_frontier_execution(NULL layout)");
    CHECK(MKRT_EINVAL, FX(s, &sample, &graph, &layout, NULL, 3, deps, 1, &xp, &fp),
          "plan_frontier_execution(NULL waves, 3)");
    CHECK(MKRT_EINVAL, FX(s, &sample, &graph, &layout, w, 3, NULL, 1, &xp, &fp),
          "plan_frontier_execution(NULL deps, 1)");
    CHECK(MKRT_EINVAL, FX(s, &sample, &graph, &layout, w, 3, deps, 1, NULL, &fp),
          "plan_frontier_execution(NULL execution)");
    CHECK(MKRT_EINVAL, FX(s, &sample, &graph, &layout, w, 3, deps, 1, &xp, NULL),
          "plan_frontier_execution(NULL plan)");
#undef FX
    is(mkrt_plan_frontier_execution(s, &sample, &graph, &layout, w, 3, deps, 1, 1u << 30, 100.0, 0.5, true, &xp,
                                    &fp, NULL),
       MKRT_OK, "plan_frontier_execution with good input still plans");
    mkrt_barrier_scratch_destroy(s);
}

int main(void)
{
    explain();
    fusion();
    frontier_parity();
    frontier_bad_input();
    return done_testing();
}
