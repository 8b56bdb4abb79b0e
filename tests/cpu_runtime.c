/* SPDX-License-Identifier: BSD-2-Clause */
#include <time.h>

#include "cpu_runtime.h"
#include "tap.h"

mkrt_runtime *test_cpu_runtime(uint32_t workers, uint32_t cells, const test_graph *g)
{
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CPU; /* the roam is the CPU-only runtime's */
    c.workers = workers;
    c.cells = cells;
    mkrt_runtime *rt = NULL;
    mkrt_error err = {0};
    if (mkrt_create(&c, &rt, &err) != MKRT_OK)
        bail_out("mkrt_create: %s", err.message);
    if (g) {
        mkrt_graph mg = {g->v, g->off, g->dst, NULL};
        if (mkrt_graph_register(rt, &mg, &err) != MKRT_OK)
            bail_out("mkrt_graph_register: %s", err.message);
    }
    return rt;
}

bool test_completed_all(mkrt_runtime *rt, uint64_t published)
{
    for (int i = 0; i < 600000; i++) {
        mkrt_stats s;
        mkrt_stats_read(rt, &s);
        const uint64_t done = s.executed + s.pruned + s.failed;
        if (done >= published)
            return done == published;
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    return false;
}
