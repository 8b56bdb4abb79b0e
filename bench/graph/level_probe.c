/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/graph/level_probe.c - the cost of one level transition of mkrt's
 * traversal engine, measured directly: a BFS along a path of PATH
 * vertices has PATH - 1 levels of one vertex and two edges each, so its
 * wall time over its levels is what a level costs beyond its work (the
 * round trip from one level's last batch to the next level's first).
 * One runtime at the benchmark's threads, the median of REPS searches,
 * each checked (the last vertex at depth PATH - 1). */
#include "bench_graph.h"
#include "mkrt/mkrt.h"

#define PATH 4096u
#define REPS 5

double mkrt_level_transition_us(unsigned threads)
{
    uint64_t *off = malloc((PATH + 1) * sizeof *off);
    uint32_t *dst = malloc(2 * PATH * sizeof *dst);
    if (off == NULL || dst == NULL) {
        free(off);
        free(dst);
        fprintf(stderr, "graph_bench: level probe: out of memory\n");
        return -1;
    }
    uint64_t e = 0;
    for (uint32_t v = 0; v < PATH; v++) {
        off[v] = e;
        if (v > 0)
            dst[e++] = v - 1;
        if (v + 1 < PATH)
            dst[e++] = v + 1;
    }
    off[PATH] = e;
    mkrt_config c = mkrt_config_default();
    c.workers = threads;
    c.cells = PATH;
    c.append_log_capacity = 0;
    mkrt_runtime *rt = NULL;
    mkrt_traversal *t = NULL;
    mkrt_error err = {0};
    mkrt_graph g = {PATH, off, dst, NULL};
    mkrt_traversal_desc d = {MKRT_TRAVERSAL_BFS, false};
    double us[REPS], result = -1;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK || mkrt_graph_register(rt, &g, &err) != MKRT_OK ||
        mkrt_traversal_open(rt, &d, &t, &err) != MKRT_OK) {
        fprintf(stderr, "graph_bench: level probe: %s\n", err.message);
        goto out;
    }
    for (int r = 0; r < REPS; r++) {
        mkrt_traversal_stats before, after;
        uint64_t depth = 0;
        mkrt_traversal_stats_read(t, &before);
        const uint64_t t0 = bench_now_ns();
        if (mkrt_traversal_start(t, 0, &err) != MKRT_OK || mkrt_traversal_wait(t, MKRT_TIMEOUT_INFINITE) != MKRT_OK ||
            mkrt_traversal_read(t, PATH - 1, 1, &depth, &err) != MKRT_OK || depth != PATH - 1) {
            fprintf(stderr, "graph_bench: level probe: the search failed or went wrong (depth %llu): %s\n",
                    (unsigned long long)depth, err.message);
            goto out;
        }
        const double ns = (double)(bench_now_ns() - t0);
        mkrt_traversal_stats_read(t, &after);
        const uint64_t levels = after.levels_pushed + after.levels_pulled - before.levels_pushed - before.levels_pulled;
        us[r] = ns / 1e3 / (double)(levels ? levels : 1);
    }
    result = bench_median(us, REPS);
out:
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
    free(off);
    free(dst);
    return result;
}
