/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_barrier.c - the barrier planner: the reference tests
 * (megakernel_barrier), error cases and scratch reuse. */
#include <stdlib.h>
#include <string.h>

#include "count_alloc.h"
#include "mkrt/barrier.h"
#include "tap.h"

static int group_is(const mkrt_barrier_plan *p, size_t g, const size_t *want, size_t n)
{
    if (g >= p->group_count || p->group_offsets[g + 1] - p->group_offsets[g] != n)
        return 0;
    return memcmp(p->waves + p->group_offsets[g], want, n * sizeof *want) == 0;
}

static const mkrt_wave_dep LONG_CHAIN[] = {{0, 1}, {1, 2}, {2, 3}};
static const mkrt_wave_dep DIAMOND[] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};

static void reference_tests(mkrt_barrier_scratch *s)
{
    mkrt_barrier_plan p;
    mkrt_error err;
    {
        size_t g0[] = {0, 1, 2, 3};
        mkrt_plan_barriers(s, 4, NULL, 0, &p, NULL);
        ok(p.global_barriers == 0 && p.group_count == 1 && group_is(&p, 0, g0, 4),
           "independent_waves_share_one_barrier_free_group");
    }
    {
        mkrt_plan_barriers(s, 4, LONG_CHAIN, 3, &p, NULL);
        size_t a[] = {0}, b[] = {1}, c[] = {2}, d[] = {3};
        ok(p.global_barriers == 3 && group_is(&p, 0, a, 1) && group_is(&p, 1, b, 1) &&
               group_is(&p, 2, c, 1) && group_is(&p, 3, d, 1),
           "dependency_chain_requires_one_barrier_between_each_wave");
    }
    {
        mkrt_plan_barriers(s, 4, DIAMOND, 4, &p, NULL);
        size_t a[] = {0}, b[] = {1, 2}, c[] = {3};
        ok(p.global_barriers == 2 && group_is(&p, 0, a, 1) && group_is(&p, 1, b, 2) &&
               group_is(&p, 2, c, 1),
           "diamond_dependencies_fuse_middle_waves");
    }
    {
        mkrt_wave_dep deps[] = {{0, 2}, {0, 1}};
        size_t b[] = {2, 1};
        mkrt_plan_barriers(s, 3, deps, 2, &p, NULL);
        ok(group_is(&p, 1, b, 2), "waves in a group keep the order they became ready ([2,1])");
    }
    {
        mkrt_wave_dep wide[1024];
        for (size_t k = 0; k < 1024; k++)
            wide[k] = (mkrt_wave_dep){0, k + 1};
        mkrt_plan_barriers(s, 1025, wide, 1024, &p, NULL);
        size_t a[] = {0};
        ok(p.global_barriers == 1 && group_is(&p, 0, a, 1) &&
               p.group_offsets[2] - p.group_offsets[1] == 1024,
           "barrier_planner_uses_csr_adjacency_for_wide_wave_graphs");
    }
    {
        mkrt_wave_dep bad[] = {{0, 2}};
        is(mkrt_plan_barriers(s, 2, bad, 1, &p, &err), MKRT_EINVAL,
           "invalid_self_and_cyclic_dependencies_fail_loudly: invalid wave");
        like(err.message, "0 -> 2 names a wave outside the 2 planned wave(s)",
             "... the message names the edge and the wave count");
        mkrt_wave_dep self[] = {{1, 1}};
        is(mkrt_plan_barriers(s, 2, self, 1, &p, &err), MKRT_EINVAL,
           "invalid_self_and_cyclic_dependencies_fail_loudly: self dependency");
        like(err.message, "wave 1 depends on itself", "... naming wave 1");
        mkrt_wave_dep cyc[] = {{0, 1}, {1, 0}};
        is(mkrt_plan_barriers(s, 2, cyc, 2, &p, &err), MKRT_ECYCLE,
           "invalid_self_and_cyclic_dependencies_fail_loudly: cycle");
        is_str(err.message,
               "megakernel wave dependency graph contains a cycle with 2 unscheduled waves. Fix: "
               "break the cyclic dataflow edge or insert an explicit iterative fixed-point kernel.",
               "... with the reference's cycle message");
        mkrt_wave_dep cyc3[] = {{0, 1}, {1, 0}};
        mkrt_plan_barriers(s, 3, cyc3, 2, &p, &err);
        like(err.message, "cycle with 2 unscheduled waves",
             "a schedulable wave beside a cycle is not counted as unscheduled");
        mkrt_wave_dep range_first[] = {{0, 1}, {5, 5}};
        mkrt_plan_barriers(s, 2, range_first, 2, &p, &err);
        like(err.message, "5 -> 5 names a wave outside",
             "the range check of an edge comes before its self check");
        mkrt_wave_dep any[] = {{0, 1}};
        is(mkrt_plan_barriers(s, 0, any, 1, &p, &err), MKRT_EINVAL,
           "wave_count 0 with dependencies is an invalid wave");
        is(mkrt_plan_barriers(s, 0, NULL, 0, &p, &err), MKRT_OK, "wave_count 0 alone is empty");
        ok(p.group_count == 0 && p.global_barriers == 0, "... with no groups and no barriers");
    }
    {
        mkrt_wave_dep dup[] = {{0, 1}, {0, 1}};
        mkrt_plan_barriers(s, 2, dup, 2, &p, NULL);
        ok(p.group_count == 2, "duplicate edges are legal");
    }
}

static void scratch_reuse(void)
{
    mkrt_barrier_scratch *s = mkrt_barrier_scratch_create(1025, 1024, NULL);
    mkrt_wave_dep wide[1024];
    for (size_t k = 0; k < 1024; k++)
        wide[k] = (mkrt_wave_dep){0, k + 1};
    mkrt_barrier_plan p;
    mkrt_plan_barriers(s, 1025, wide, 1024, &p, NULL);
    size_t wc = mkrt_barrier_scratch_wave_capacity(s), dc = mkrt_barrier_scratch_dependency_capacity(s);
    ok(p.group_offsets[2] - p.group_offsets[1] == 1024, "reuses_caller_owned_csr_scratch: wide");
    mkrt_plan_barriers(s, 4, LONG_CHAIN, 3, &p, NULL);
    ok(p.global_barriers == 3, "reuses_caller_owned_csr_scratch: narrow chain");
    ok(mkrt_barrier_scratch_wave_capacity(s) >= wc && mkrt_barrier_scratch_dependency_capacity(s) >= dc,
       "reuses_caller_owned_csr_scratch: capacities do not shrink");
    mkrt_barrier_scratch_destroy(s);
}

static void generated_layered_dags(void)
{
    mkrt_barrier_scratch *s = mkrt_barrier_scratch_create(0, 0, NULL);
    static mkrt_wave_dep deps[64 * 32];
    int bad = 0;
    for (size_t w = 1; w <= 64 && !bad; w++)
        for (size_t d = 1; d <= 32 && !bad; d++) {
            size_t m = 0;
            for (size_t layer = 0; layer + 1 < d; layer++)
                for (size_t slot = 0; slot < w; slot++)
                    deps[m++] = (mkrt_wave_dep){layer * w + slot, (layer + 1) * w + slot};
            mkrt_barrier_plan p;
            if (mkrt_plan_barriers(s, w * d, deps, m, &p, NULL) != MKRT_OK || p.group_count != d ||
                p.global_barriers != d - 1)
                bad = 1;
            for (size_t g = 0; g < p.group_count && !bad; g++)
                if (p.group_offsets[g + 1] - p.group_offsets[g] != w)
                    bad = 1;
        }
    ok(!bad, "generated_layered_dags_preserve_exact_barrier_depth_for_2048_shapes");
    mkrt_barrier_scratch_destroy(s);
}

/* Random DAGs (edges from lower to higher index): every wave's group is
 * its longest-path depth, and every edge crosses groups forward. */
static void random_dags(void)
{
    mkrt_barrier_scratch *s = mkrt_barrier_scratch_create(0, 0, NULL);
    static mkrt_wave_dep deps[4000];
    static size_t depth[600], group_of[600];
    unsigned seed = 5;
    int bad = 0;
    for (int r = 0; r < 500 && !bad; r++) {
        size_t n = 2 + (size_t)(rand_r(&seed) % 599), m = (size_t)(rand_r(&seed) % 4000);
        for (size_t e = 0; e < m; e++) {
            size_t a = (size_t)rand_r(&seed) % (n - 1);
            size_t b = a + 1 + (size_t)rand_r(&seed) % (n - 1 - a);
            deps[e] = (mkrt_wave_dep){a, b};
        }
        for (size_t i = 0; i < n; i++)
            depth[i] = 0;
        for (size_t i = 0; i < n; i++) /* edges go forward: one pass in index order */
            for (size_t e = 0; e < m; e++)
                if (deps[e].after == i && depth[deps[e].before] + 1 > depth[i])
                    depth[i] = depth[deps[e].before] + 1;
        mkrt_barrier_plan p;
        if (mkrt_plan_barriers(s, n, deps, m, &p, NULL) != MKRT_OK) {
            bad = 1;
            break;
        }
        for (size_t g = 0; g < p.group_count; g++)
            for (size_t k = p.group_offsets[g]; k < p.group_offsets[g + 1]; k++)
                group_of[p.waves[k]] = g;
        for (size_t i = 0; i < n; i++)
            if (group_of[i] != depth[i])
                bad = 1;
    }
    ok(!bad, "500 random DAGs: every wave lands in the group of its longest-path depth");
    mkrt_barrier_scratch_destroy(s);
}

static void allocation_discipline(void)
{
    count_alloc_install();
    mkrt_barrier_scratch *s = mkrt_barrier_scratch_create(0, 0, NULL);
    mkrt_barrier_plan p;
    mkrt_plan_barriers(s, 4, DIAMOND, 4, &p, NULL);
    uint64_t warm = count_alloc_calls();
    for (int i = 0; i < 100; i++)
        mkrt_plan_barriers(s, 4, i % 2 ? DIAMOND : LONG_CHAIN, i % 2 ? 4 : 3, &p, NULL);
    is(count_alloc_calls() - warm, 0, "planning with warm scratch allocates nothing");
    mkrt_barrier_scratch *t = mkrt_barrier_scratch_create(0, 0, NULL);
    count_alloc_fail_after(0);
    mkrt_error err;
    is(mkrt_plan_barriers(t, 100, DIAMOND, 4, &p, &err), MKRT_ENOMEM,
       "scratch growth failure is MKRT_ENOMEM");
    like(err.message, "could not reserve 100 outgoing counts entries", "... naming the array");
    count_alloc_fail_after(UINT64_MAX);
    mkrt_barrier_scratch_destroy(t);
    mkrt_barrier_scratch_destroy(s);
    count_alloc_uninstall();
}

int main(void)
{
    mkrt_barrier_scratch *s = mkrt_barrier_scratch_create(0, 0, NULL);
    reference_tests(s);
    mkrt_barrier_scratch_destroy(s);
    scratch_reuse();
    generated_layered_dags();
    random_dags();
    allocation_discipline();
    return done_testing();
}
