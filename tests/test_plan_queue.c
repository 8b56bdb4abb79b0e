/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_plan_queue.c - QUEUE (plan/decide.h): a frontier level's
 * vertices come from a sparse queue the ops filled, or from a scan of the
 * dense bitset, as the plan cache's frontier planner says per level. On
 * the CPU pool (a device's runtime runs the public traversals on the
 * device, whose levels keep bitmaps: test_device_traversal.c): with QUEUE on, the
 * sparse levels run from the queue and the dense ones from the bitset
 * (both counted), with it off every level scans; BFS depths, BFS trees
 * and SSSP distances equal the sequential reference either way; the
 * EXPLAIN records say which; MKRT_PLAN_OFF=queue is accepted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_fixture.h"
#include "mkrt/mkrt.h"
#include "tap.h"

#define SEC 30000000000ull

static mkrt_runtime *start(mkrt_backend_kind kind, uint32_t plan_off)
{
    mkrt_config c = mkrt_config_default();
    c.backend = kind;
    c.workers = 2;
    c.cells = 4096;
    c.plan_off = plan_off;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK)
        bail_out("mkrt_create: %s", err.message);
    return rt;
}

/* Runs kind (BFS or SSSP) from each root; returns how many results
 * differed from the reference. */
static int run(mkrt_runtime *rt, const test_graph *g, mkrt_traversal_kind kind, bool symmetric,
               const uint32_t *roots, int nroots)
{
    mkrt_traversal *t;
    mkrt_error err;
    mkrt_traversal_desc d = {kind, symmetric};
    if (mkrt_traversal_open(rt, &d, &t, &err) != MKRT_OK)
        bail_out("open: %s", err.message);
    uint64_t *got = malloc(g->v * sizeof *got), *want = malloc(g->v * sizeof *want);
    uint32_t *level = malloc(g->v * sizeof *level), *parent = malloc(g->v * sizeof *parent);
    if (got == NULL || want == NULL || level == NULL || parent == NULL)
        bail_out("no memory");
    int wrong = 0;
    for (int r = 0; r < nroots; r++) {
        if (mkrt_traversal_start(t, roots[r], &err) != MKRT_OK || mkrt_traversal_wait(t, SEC) != MKRT_OK ||
            mkrt_traversal_read(t, 0, g->v, got, &err) != MKRT_OK)
            bail_out("traversal from %u failed", roots[r]);
        if (kind == MKRT_TRAVERSAL_BFS) {
            test_graph_ref_bfs(g, roots[r], level);
            for (uint32_t v = 0; v < g->v; v++)
                want[v] = level[v] == UINT32_MAX ? UINT64_MAX : level[v];
            if (mkrt_traversal_parents(t, 0, g->v, parent, &err) != MKRT_OK)
                bail_out("parents: %s", err.message);
            for (uint32_t v = 0; v < g->v; v++) {
                if (want[v] == UINT64_MAX || v == roots[r])
                    continue;
                uint32_t p = parent[v];
                bool adjacent = false;
                for (uint64_t e = p < g->v ? g->off[p] : 0; p < g->v && e < g->off[p + 1] && !adjacent; e++)
                    adjacent = g->dst[e] == v;
                if (p >= g->v || want[p] + 1 != want[v] || !adjacent) {
                    wrong++;
                    break;
                }
            }
        } else {
            test_graph_ref_sssp(g, roots[r], g->w, want);
        }
        for (uint32_t v = 0; v < g->v; v++)
            if (got[v] != want[v]) {
                diag("%s from %u: vertex %u got %llu, the reference %llu", kind == MKRT_TRAVERSAL_BFS ? "BFS" : "SSSP",
                     roots[r], v, (unsigned long long)got[v], (unsigned long long)want[v]);
                wrong++;
                break;
            }
    }
    if (mkrt_traversal_close(t, &err) != MKRT_OK)
        bail_out("close: %s", err.message);
    free(got);
    free(want);
    free(level);
    free(parent);
    return wrong;
}

static bool explained_queue(mkrt_runtime *rt)
{
    mkrt_plan_record r[64];
    size_t n = mkrt_plan_explain(rt, r, 64);
    for (size_t i = 0; i < n; i++)
        if (r[i].frontier_queue)
            return true;
    return false;
}

static void queue_decides(mkrt_backend_kind kind)
{
    const char *k = kind == MKRT_BACKEND_SIM ? "sim" : "cpu";
    test_graph rnd = test_graph_random(4000, 12000, 11);
    test_graph path = test_graph_path(600);
    const uint32_t roots[3] = {1, 977, 2500};
    mkrt_stats st[2];
    bool explained[2];
    for (int off = 0; off < 2; off++) {
        mkrt_runtime *rt = start(kind, off ? MKRT_PLAN_QUEUE : 0);
        mkrt_graph g = {rnd.v, rnd.off, rnd.dst, rnd.w};
        mkrt_error err;
        if (mkrt_graph_register(rt, &g, &err) != MKRT_OK)
            bail_out("register: %s", err.message);
        const char *on = off ? "off" : "on";
        is(run(rt, &rnd, MKRT_TRAVERSAL_BFS, false, roots, 3), 0, "%s QUEUE %s: BFS depths and trees exact", k, on);
        is(run(rt, &rnd, MKRT_TRAVERSAL_BFS, true, roots, 3), 0, "%s QUEUE %s: BFS with pulled levels exact", k, on);
        is(run(rt, &rnd, MKRT_TRAVERSAL_SSSP, false, roots, 3), 0, "%s QUEUE %s: SSSP distances exact", k, on);
        explained[off] = explained_queue(rt);
        mkrt_stats_read(rt, &st[off]);
        mkrt_destroy(rt, SEC, NULL);
    }
    const uint64_t *on = st[0].plan_counts, *of = st[1].plan_counts;
    ok(on[MKRT_PLAN_N_QUEUE_LEVELS] > 0 && on[MKRT_PLAN_N_BITSET_LEVELS] > 0,
       "%s QUEUE on: sparse levels from the queue (%llu), dense ones from the bitset (%llu)", k,
       (unsigned long long)on[MKRT_PLAN_N_QUEUE_LEVELS], (unsigned long long)on[MKRT_PLAN_N_BITSET_LEVELS]);
    ok(of[MKRT_PLAN_N_QUEUE_LEVELS] == 0 && of[MKRT_PLAN_N_BITSET_LEVELS] > 0,
       "%s QUEUE off: every level scans the bitset (%llu)", k, (unsigned long long)of[MKRT_PLAN_N_BITSET_LEVELS]);
    ok(explained[0] && !explained[1], "%s QUEUE: mkrt_plan_explain says frontier_queue on, never off", k);

    /* A path: every level is one vertex, so all but the root's level run
     * from the queue when QUEUE is on. */
    uint64_t queued[2];
    for (int off = 0; off < 2; off++) {
        mkrt_runtime *rt = start(kind, off ? MKRT_PLAN_QUEUE : 0);
        mkrt_graph g = {path.v, path.off, path.dst, NULL};
        mkrt_error err;
        if (mkrt_graph_register(rt, &g, &err) != MKRT_OK)
            bail_out("register: %s", err.message);
        const uint32_t root = 0;
        is(run(rt, &path, MKRT_TRAVERSAL_BFS, false, &root, 1), 0, "%s QUEUE %s: BFS along a path exact", k,
           off ? "off" : "on");
        mkrt_stats s;
        mkrt_stats_read(rt, &s);
        queued[off] = s.plan_counts[MKRT_PLAN_N_QUEUE_LEVELS];
        mkrt_destroy(rt, SEC, NULL);
    }
    ok(queued[0] + 2 >= path.v - 1 && queued[1] == 0, "%s QUEUE: a path's %u levels, %llu from the queue (off: %llu)",
       k, path.v, (unsigned long long)queued[0], (unsigned long long)queued[1]);
    test_graph_free(&rnd);
    test_graph_free(&path);
}

static void knob(void)
{
    setenv("MKRT_PLAN_OFF", "pull,queue", 1);
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CPU;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    is(mkrt_create(&c, &rt, &err), MKRT_OK, "MKRT_PLAN_OFF=pull,queue is accepted");
    if (rt != NULL)
        mkrt_destroy(rt, SEC, NULL);
    unsetenv("MKRT_PLAN_OFF");
    is(strcmp(mkrt_plan_decision_name(MKRT_PLAN_QUEUE), "queue"), 0, "the decision's name is queue");
}

int main(void)
{
    knob();
    queue_decides(MKRT_BACKEND_CPU);
    return done_testing();
}
