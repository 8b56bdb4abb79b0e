/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_topology.c - execution topology selection and memory planning:
 * the reference tests (megakernel_execution, §3.8 of the semantics). */
#include <math.h>
#include <string.h>

#include "mkrt/topology.h"
#include "tap.h"

static const mkrt_graph_shape G = {1000, 4000};
static const mkrt_memory_budget M = {1000, 10000};

static mkrt_topology_decision sel(double cost, double density, uint64_t readback, double launch,
                                  double fusion, bool capable)
{
    mkrt_exec_sample s = {cost, density, readback};
    return mkrt_select_topology(&s, &G, &M, launch, fusion, capable);
}

static mkrt_wave_topology stable(double density, uint64_t readback, double launch, double fusion,
                                 mkrt_wave_topology prev, bool capable)
{
    mkrt_exec_sample s = {1000, density, readback};
    return mkrt_select_topology_stable(&s, &G, &M, launch, fusion, prev, capable).topology;
}

static void selector(void)
{
    mkrt_topology_decision d = sel(1000, 0.01, 256, 100, 0, true);
    ok(d.topology == MKRT_WAVE_WARP_SPARSE && d.memory_pressure_bps == 1000 && d.average_degree_bps == 40000 &&
           d.launch_pressure_bps == 1000,
       "selector bands: ultra sparse -> warp sparse (1000, 40000, 1000 bps; the text: planlib's test_planners)");
    is(sel(1000, 0.90, 512, 100, 0, true).topology, MKRT_WAVE_BLOCK_DENSE, "selector bands: 0.90 -> block dense");
    is(sel(1000, 0.75, 512, 100, 0, true).topology, MKRT_WAVE_DENSE, "selector bands: 0.75 -> dense");
    is(sel(1000, 0.35, 512, 100, 0, true).topology, MKRT_WAVE_HYBRID, "selector bands: 0.35 -> hybrid");
    d = sel(1000, 0.50, 1 << 20, 250, 0.90, true);
    ok(d.topology == MKRT_WAVE_FUSED && d.launch_pressure_bps == 2500, "selector bands: fused wave, launch 2500 bps");
    is(sel(1000, 0.50, 1 << 20, 250, 0.90, false).topology, MKRT_WAVE_HYBRID,
       "selector bands: no device-wide barrier, no fusion");

    mkrt_exec_sample s = {1000, 0.01, 1024};
    mkrt_graph_shape g = {1000, 10000};
    is(mkrt_select_topology(&s, &g, &M, 100, 0, true).topology, MKRT_WAVE_SPARSE,
       "low density on a high-degree graph is sparse, not warp sparse");
    s = (mkrt_exec_sample){1000, 0.95, 1 << 20};
    mkrt_memory_budget red = {95, 100};
    d = mkrt_select_topology(&s, &G, &red, 500, 1.0, true);
    ok(d.topology == MKRT_WAVE_SPARSE && d.memory_pressure_bps == 9500, "memory red zone forces sparse (9500 bps)");
    s = (mkrt_exec_sample){1000, 0.95, UINT64_MAX};
    g = (mkrt_graph_shape){1ull << 60, 1ull << 62};
    mkrt_memory_budget big = {1ull << 62, 1ull << 63};
    d = mkrt_select_topology(&s, &g, &big, 250, 0, true);
    ok(d.memory_pressure_bps == 5000 && d.average_degree_bps == 40000, "u64-scale math is exact (5000, 40000)");
    s = (mkrt_exec_sample){NAN, NAN, 0};
    d = mkrt_select_topology(&s, &G, &M, INFINITY, NAN, true);
    ok(d.launch_pressure_bps == 0 && d.topology == MKRT_WAVE_WARP_SPARSE, "NaN inputs read as zero");
    s = (mkrt_exec_sample){1000, 0.5, 0};
    ok(mkrt_select_topology(&s, &G, &M, INFINITY, 0, true).launch_pressure_bps == UINT32_MAX,
       "infinite launch overhead saturates");
}

static void hysteresis(void)
{
    is(stable(0.14, 512, 100, 0, MKRT_WAVE_SPARSE, true), MKRT_WAVE_SPARSE, "stable: sparse holds to 0.15");
    is(stable(0.16, 512, 100, 0, MKRT_WAVE_SPARSE, true), MKRT_WAVE_HYBRID, "stable: sparse releases above 0.15");
    is(stable(0.68, 512, 100, 0, MKRT_WAVE_DENSE, true), MKRT_WAVE_DENSE, "stable: dense holds to 0.675");
    is(stable(0.50, 1 << 20, 250, 0.65, MKRT_WAVE_FUSED, true), MKRT_WAVE_FUSED, "stable: held fusion (0.65)");
    is(stable(0.50, 1 << 20, 130, 0.65, MKRT_WAVE_FUSED, true), MKRT_WAVE_FUSED, "stable: fused at launch 1300 >= 1250");
    ok(stable(0.50, 1 << 20, 250, 0.65, MKRT_WAVE_FUSED, false) != MKRT_WAVE_FUSED,
       "stable: released fusion without a device-wide barrier");
    is(stable(0.11, 512, 100, 0, MKRT_WAVE_HYBRID, true), MKRT_WAVE_HYBRID, "stable: hybrid holds down to 0.10");
    is(stable(0.72, 512, 100, 0, MKRT_WAVE_HYBRID, true), MKRT_WAVE_HYBRID, "stable: hybrid holds up to 0.725");
    is(stable(0.83, 512, 100, 0, MKRT_WAVE_BLOCK_DENSE, true), MKRT_WAVE_BLOCK_DENSE, "stable: block dense holds to 0.825");
    is(stable(0.05, 512, 100, 0, MKRT_WAVE_WARP_SPARSE, true), MKRT_WAVE_WARP_SPARSE, "stable: warp sparse holds to 0.05625");
    is(stable(0.35, 512, 100, 0, MKRT_WAVE_NONE, true), MKRT_WAVE_HYBRID, "no previous: the plain decision");
}

static void memory(void)
{
    mkrt_byte_layout l = {16, 8, 4096, 2048, 512};
    mkrt_memory_plan p;
    mkrt_error err;
    mkrt_status st = mkrt_plan_memory_budget(MKRT_WAVE_FUSED, &G, &l, 131072, &p, &err);
    ok(st == MKRT_OK && p.graph_bytes == 48000 && p.scratch_bytes == 8192 && p.required_bytes == 60800 &&
           p.memory_pressure_bps > 0,
       "memory planner: fused = 48000 graph + 8192 scratch, 60800 required");
    is(mkrt_plan_memory_budget(MKRT_WAVE_DENSE, &G, &l, 32768, &p, &err), MKRT_EBUDGET,
       "memory planner: dense over budget");
    like(err.message, "Fix: choose a sparse topology", "... says to choose a sparse topology");
    mkrt_graph_shape huge = {UINT64_MAX, 0};
    mkrt_byte_layout two = {2, 0, 0, 0, 0};
    is(mkrt_plan_memory_budget(MKRT_WAVE_SPARSE, &huge, &two, UINT64_MAX, &p, &err), MKRT_EOVERFLOW,
       "memory planner: node byte overflow");
    like(err.message, "node layout bytes", "... names node layout bytes");
    uint64_t v;
    mkrt_topology_scratch_bytes(MKRT_WAVE_WARP_SPARSE, 3, &v, NULL);
    is(v, 32, "warp sparse scratch is at least 32");
    mkrt_topology_scratch_bytes(MKRT_WAVE_BLOCK_DENSE, 10, &v, NULL);
    is(v, 2048, "block dense scratch is 2 x max(s, 1024)");
    mkrt_topology_scratch_bytes(MKRT_WAVE_HYBRID, 10, &v, NULL);
    is(v, 30, "hybrid scratch is 3 x s");
    is(mkrt_topology_scratch_bytes(MKRT_WAVE_FUSED, UINT64_MAX / 2, &v, &err), MKRT_EOVERFLOW,
       "fused scratch overflow");
    like(err.message, "fused topology scratch bytes", "... named");

    mkrt_exec_sample s = {1000, 0.50, 1 << 20};
    mkrt_exec_plan e;
    mkrt_plan_execution(&s, &G, &l, 131072, 250, 0.90, true, &e, NULL);
    ok(e.topology == MKRT_WAVE_FUSED && !e.downgraded_to_sparse && e.memory.scratch_bytes == 8192,
       "execution: fused, not downgraded, scratch 8192");
    l.scratch_bytes = 10000;
    mkrt_plan_execution(&s, &G, &l, 80000, 250, 0.90, true, &e, NULL);
    ok(e.topology == MKRT_WAVE_SPARSE && e.downgraded_to_sparse && e.memory.scratch_bytes == 10000,
       "execution: fused does not fit, downgraded to sparse (scratch 10000)");

    /* generated_execution_plans_never_exceed_budget: LCG-driven cases. */
    uint64_t x = 0x4d595df4d0f33173ull;
    int bad = 0, fits = 0, over = 0;
    for (int i = 0; i < 1024; i++) {
        uint64_t r[8];
        for (int k = 0; k < 8; k++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            r[k] = x >> 16;
        }
        mkrt_graph_shape gg = {1 + r[0] % 100000, r[1] % 400000};
        mkrt_byte_layout ll = {1 + r[2] % 64, 1 + r[3] % 32, r[4] % (1 << 20), r[5] % (1 << 20), r[6] % (1 << 18)};
        mkrt_exec_sample ss = {1 + (double)(r[7] % 5000), (double)(r[7] % 1000) / 1000.0, r[6] % (2 << 20)};
        uint64_t budget = r[5] % (64ull << 20);
        st = mkrt_plan_execution(&ss, &gg, &ll, budget, 250, 0.85, true, &e, NULL);
        if (st == MKRT_OK) {
            fits++;
            bad |= e.memory.required_bytes > budget || e.memory.memory_pressure_bps > 10000;
        } else if (st == MKRT_EBUDGET) {
            over++;
            mkrt_memory_plan sp;
            bad |= mkrt_plan_memory_budget(MKRT_WAVE_SPARSE, &gg, &ll, UINT64_MAX, &sp, NULL) != MKRT_OK ||
                   sp.required_bytes <= budget;
        } else {
            bad = 1;
        }
    }
    ok(!bad && fits > 0 && over > 0, "generated_execution_plans_never_exceed_budget (%d fit, %d over)", fits, over);
}

static void scheduler(void)
{
    mkrt_exec_sample t = mkrt_exec_sample_from_telemetry(3750, 4096, 123);
    ok(t.dispatch_cost_ns == 123.0 && t.frontier_density == 0.375 && t.readback_bytes == 4096,
       "telemetry_snapshot_maps_onto_a_scheduler_sample");
}

int main(void)
{
    selector();
    scheduler();
    hysteresis();
    memory();
    return done_testing();
}
