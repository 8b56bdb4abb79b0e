/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_units.c - mkrt_stats.units_run and units_by_planner (the
 * planner's share of the CPU pool's work): every executed item is one
 * unit, counted once, whichever thread ran it; on one executor the
 * thread that plans runs them all; with the dispatcher thread kept out
 * (a test hook), a pool thread plans and its own share is the planner's;
 * a traversal's levels run inside the workers count their parts. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../src/runtime/test_hooks.h"
#include "cpu_runtime.h"
#include "graph_fixture.h"
#include "mkrt/mkrt.h"
#include "tap.h"

#define SEC 10000000000ull
#define CELLS 65536u
#define PATH 2000u

/* ROUNDS bursts of independent ADDs (unique params: nothing is pruned),
 * waited for with mkrt_wait or, deaf, by looking at the counters. */
#define ROUNDS 8u
static void items(uint32_t workers, bool deaf, const test_graph *g, mkrt_item *it)
{
    char what[64];
    snprintf(what, sizeof what, "%u worker%s%s", workers, workers > 1 ? "s" : "",
             deaf ? ", the dispatcher thread deaf" : "");
    mkrt_runtime *rt = test_cpu_runtime(workers, CELLS, g);
    if (deaf)
        mkrt__runtime_deaf(rt, true);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    if (p == NULL)
        bail_out("producer");
    mkrt_stats a, b;
    mkrt_stats_read(rt, &a);
    bool ok_all = true;
    for (uint32_t r = 0; r < ROUNDS && ok_all; r++) {
        for (uint32_t k = 0; k < CELLS; k++)
            it[k].param = r * CELLS + k + 1;
        uint64_t t;
        ok_all = mkrt_publish(p, it, CELLS, SEC, NULL) == MKRT_OK && mkrt_fence(p, &t) == MKRT_OK &&
                 (deaf ? test_completed_all(rt, (uint64_t)(r + 1) * CELLS) : mkrt_wait(p, t, SEC) == MKRT_OK);
    }
    mkrt_stats_read(rt, &b);
    ok(ok_all, "%s: %u items ran", what, ROUNDS * CELLS);
    const uint64_t run = b.units_run - a.units_run, planner = b.units_by_planner - a.units_by_planner,
                   executed = b.executed - a.executed;
    ok(run == executed && executed == (uint64_t)ROUNDS * CELLS,
       "%s: every executed item is one unit (%llu units, %llu executed)", what, (unsigned long long)run,
       (unsigned long long)executed);
    if (workers == 1)
        ok(planner == run, "%s: the planning thread ran every unit (%llu of %llu)", what,
           (unsigned long long)planner, (unsigned long long)run);
    else
        ok(planner <= run, "%s: the planner ran %llu of %llu units (%.0f%%)", what, (unsigned long long)planner,
           (unsigned long long)run, run ? 100.0 * (double)planner / (double)run : 0.0);
    if (deaf) {
        mkrt__runtime_deaf(rt, false);
        ok(mkrt__test_roams(rt) > 0, "%s: pool threads planned (%llu roams)", what,
           (unsigned long long)mkrt__test_roams(rt));
    }
    mkrt_producer_close(p);
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
}

/* A BFS along a path: one vertex per level, each level at least one part
 * (a claim that found words) run inside the workers. */
static void levels(uint32_t workers, const test_graph *g)
{
    mkrt_runtime *rt = test_cpu_runtime(workers, CELLS, g);
    mkrt_traversal *t = NULL;
    mkrt_error err = {0};
    mkrt_traversal_desc d = {MKRT_TRAVERSAL_BFS, false};
    mkrt_stats a, b;
    mkrt_stats_read(rt, &a);
    if (mkrt_traversal_open(rt, &d, &t, &err) != MKRT_OK || mkrt_traversal_start(t, 0, &err) != MKRT_OK ||
        mkrt_traversal_wait(t, 60 * SEC) != MKRT_OK)
        bail_out("bfs: %s", err.message);
    mkrt_stats_read(rt, &b);
    const uint64_t run = b.units_run - a.units_run, planner = b.units_by_planner - a.units_by_planner;
    const uint64_t on = b.plan_counts[MKRT_PLAN_N_LEVELS_ON] - a.plan_counts[MKRT_PLAN_N_LEVELS_ON];
    ok(run >= on && on >= PATH / 2 && planner <= run,
       "BFS on a path, %u worker%s: %llu units (parts) for %llu levels crossed in the workers, %llu by the planner",
       workers, workers > 1 ? "s" : "", (unsigned long long)run, (unsigned long long)on,
       (unsigned long long)planner);
    mkrt_traversal_close(t, NULL);
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
}

int main(void)
{
    test_graph path = test_graph_path(PATH);
    mkrt_item *it = malloc(CELLS * sizeof *it);
    if (it == NULL)
        bail_out("out of memory");
    for (uint32_t k = 0; k < CELLS; k++)
        it[k] = (mkrt_item){MKRT_OP_ADD, k, k, 1};
    items(1, false, &path, it);
    items(2, false, &path, it);
    items(2, true, &path, it);
    levels(1, &path);
    levels(2, &path);
    free(it);
    test_graph_free(&path);
    return done_testing();
}
