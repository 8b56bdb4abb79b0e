/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/graph500/teps.c - traversed edges per second as Graph500
 * counts and reports them, and the clock the searches are timed by. */
#include <time.h>

#include "graph500.h"

uint64_t g500_component_edges(const g500_edge_list *el, const uint32_t *parent)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < el->edges; i++)
        n += parent[el->edge[i].u] != G500_NO_PARENT;
    return n;
}

g500_teps_stats g500_teps_summary(const double *teps, size_t n)
{
    g500_teps_stats s = {0, 0, 0};
    if (n == 0)
        return s;
    double inv = 0;
    s.min = s.max = teps[0];
    for (size_t i = 0; i < n; i++) {
        inv += 1.0 / teps[i];
        s.min = teps[i] < s.min ? teps[i] : s.min;
        s.max = teps[i] > s.max ? teps[i] : s.max;
    }
    s.harmonic_mean = (double)n / inv;
    return s;
}

double g500_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* POSIX: C11 has no monotonic clock */
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
