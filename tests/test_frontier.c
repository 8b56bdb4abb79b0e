/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_frontier.c - the frontier memory planner: the reference tests
 * (megakernel_frontier), including the 1024-shape generated test. */
#include <stdint.h>
#include <string.h>

#include "mkrt/frontier.h"
#include "tap.h"

static const mkrt_frontier_wave DIAMOND_WAVES[] = {
    {1024, 512, 256}, {2048, 1024, 512}, {4096, 2048, 1024}, {8192, 4096, 2048}};
static const mkrt_wave_dep DIAMOND[] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};

int main(void)
{
    mkrt_barrier_scratch *s = mkrt_barrier_scratch_create(0, 0, NULL);
    mkrt_frontier_plan p;
    mkrt_error err;

    mkrt_plan_frontier_memory(s, DIAMOND_WAVES, 4, DIAMOND, 4, 16000, 128 * 1024, 1 << 20, &p, NULL);
    size_t mid[] = {1, 2};
    ok(p.barriers.global_barriers == 2 &&
           memcmp(p.barriers.waves + p.barriers.group_offsets[1], mid, sizeof mid) == 0 &&
           p.barriers.group_offsets[2] - p.barriers.group_offsets[1] == 2,
       "frontier_memory_plan_uses_peak_barrier_group_memory: groups");
    ok(p.peak_frontier_bytes == 8192 && p.peak_scratch_bytes == 4096 && p.peak_output_bytes == 2048 &&
           p.amortized_readback_bytes == 1 << 20 && p.max_group_width == 2,
       "frontier_memory_plan_uses_peak_barrier_group_memory: peaks");

    mkrt_frontier_wave heavy[] = {{1024, 512, 3072}, {1024, 512, 3072}};
    mkrt_plan_frontier_memory(s, heavy, 2, NULL, 0, 16000, 128 * 1024, 0, &p, NULL);
    ok(p.peak_output_bytes == 6144 && p.amortized_readback_bytes == 6144,
       "frontier_memory_uses_static_group_output_to_amortize_readback");

    mkrt_frontier_wave small[] = {{10, 10, 10}, {10, 10, 10}, {10, 10, 10}};
    mkrt_plan_frontier_memory(s, small, 3, NULL, 0, 0, 100, 4096, &p, NULL);
    ok(p.barriers.group_count == 3 && p.barriers.global_barriers == 2 && p.max_group_width == 1 &&
           p.peak_frontier_bytes == 10 && p.peak_scratch_bytes == 10 && p.peak_output_bytes == 10,
       "frontier_memory_splits_independent_layers_to_fit_fused_budget");
    mkrt_plan_frontier_memory(s, small, 3, NULL, 0, 0, 120, 0, &p, NULL);
    ok(p.barriers.group_count == 2 && p.max_group_width == 2,
       "a chunk whose fused bytes equal the budget stays fused (60 + 60 = 120)");

    mkrt_frontier_wave one[] = {{1, 1, 1}};
    is(mkrt_plan_frontier_memory(s, one, 1, NULL, 0, 1600, 1000, 0, &p, &err), MKRT_EBUDGET,
       "frontier_memory_rejects_graph_and_single_wave_over_budget: graph");
    is_str(err.message,
           "megakernel frontier memory planner requires 1600 bytes for resident graph bytes but "
           "budget allows 1000. Fix: shard the graph or the frontier waves or raise the "
           "explicit megakernel budget.",
           "... with the reference message");
    mkrt_frontier_wave big[] = {{100, 100, 100}};
    is(mkrt_plan_frontier_memory(s, big, 1, NULL, 0, 0, 500, 0, &p, &err), MKRT_EBUDGET,
       "frontier_memory_rejects_graph_and_single_wave_over_budget: single wave");
    like(err.message, "requires 600 bytes for single fused frontier wave bytes but budget allows 500",
         "... 600 > 500");
    /* Three independent waves form one barrier group; the third alone is
     * over the budget. It must be refused although it is not the group's
     * first wave (a split would otherwise give it a chunk of its own and
     * report peaks above the budget). */
    mkrt_frontier_wave late_big[] = {{10, 10, 10}, {10, 10, 10}, {100, 100, 100}};
    is(mkrt_plan_frontier_memory(s, late_big, 3, NULL, 0, 0, 500, 0, &p, &err), MKRT_EBUDGET,
       "a wave over the budget later in its group is refused too");
    like(err.message, "requires 600 bytes for single fused frontier wave bytes but budget allows 500",
         "... naming its 600 bytes");

    mkrt_frontier_wave sixteen = {16, 16, 16};
    uint64_t fused = 0;
    mkrt_frontier_fused_wave_bytes(&sixteen, &fused, NULL);
    is(fused, 96, "frontier_fused_wave_budget_uses_topology_scratch_multiplier");

    mkrt_frontier_wave ovf[] = {{UINT64_MAX, 1, 1}, {1, 1, 1}};
    is(mkrt_plan_frontier_memory(s, ovf, 2, NULL, 0, 2, UINT64_MAX, 0, &p, &err), MKRT_EOVERFLOW,
       "frontier_memory_fails_loudly_on_wave_byte_overflow");
    is_str(err.message,
           "megakernel frontier memory planner overflowed while accumulating fused wave bytes. "
           "Fix: shard the frontier wave group or split the fused phase.",
           "... naming the field \"fused wave bytes\"");
    mkrt_frontier_wave ovs[] = {{1, UINT64_MAX / 2, 1}};
    mkrt_plan_frontier_memory(s, ovs, 1, NULL, 0, 0, UINT64_MAX, 0, &p, &err);
    like(err.message, "accumulating fused wave scratch bytes", "the x4 product has its own field");

    mkrt_wave_dep cyc[] = {{0, 1}, {1, 0}};
    is(mkrt_plan_frontier_memory(s, small, 3, cyc, 2, 1u << 30, 1u << 20, 0, &p, &err), MKRT_ECYCLE,
       "barrier errors win over budget errors");
    mkrt_plan_frontier_memory(s, NULL, 0, NULL, 0, 0, 32, 4096, &p, NULL);
    ok(p.barriers.group_count == 0 && p.peak_frontier_bytes == 0 && p.amortized_readback_bytes == 4096,
       "no waves: no groups, zero peaks, readback passed through");

    int bad = 0;
    static mkrt_frontier_wave waves[32 * 32];
    static mkrt_wave_dep deps[32 * 32];
    for (uint64_t w = 1; w <= 32 && !bad; w++)
        for (uint64_t d = 1; d <= 32 && !bad; d++) {
            size_t nw = 0, nd = 0;
            for (uint64_t layer = 0; layer < d; layer++)
                for (uint64_t slot = 0; slot < w; slot++) {
                    waves[nw++] = (mkrt_frontier_wave){w, slot + 1, layer + 1};
                    if (layer + 1 < d)
                        deps[nd++] = (mkrt_wave_dep){(size_t)(layer * w + slot),
                                                     (size_t)((layer + 1) * w + slot)};
                }
            if (mkrt_plan_frontier_memory(s, waves, nw, deps, nd, 256, UINT64_MAX / 2, 7, &p, NULL) !=
                    MKRT_OK ||
                p.barriers.group_count != d || p.max_group_width != w ||
                p.peak_frontier_bytes != w * w || p.peak_scratch_bytes != w * (w + 1) / 2 ||
                p.peak_output_bytes != w * d || p.amortized_readback_bytes != (7 > w * d ? 7 : w * d))
                bad = 1;
        }
    ok(!bad, "generated_frontier_memory_profiles_preserve_peak_and_budget_for_1024_shapes");
    mkrt_barrier_scratch_destroy(s);
    return done_testing();
}
