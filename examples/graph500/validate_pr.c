/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/graph500/validate_pr.c - PageRank scores against the
 * reference's: within an L1 distance. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph500.h"
#include "traverse.h"

int g500_pagerank_fixed_point(const g500_csr *g, double max_l1, double *score, char *why, size_t why_len)
{
    const uint32_t n = g->vertices;
    double *contrib = malloc((n ? n : 1) * sizeof *contrib);
    if (contrib == NULL) {
        snprintf(why, why_len, "PageRank fixed point: out of memory for %u vertices", n);
        return -1;
    }
    const double d = TRAVERSE_PR_DAMPING, base = (1.0 - d) / n;
    for (uint32_t v = 0; v < n; v++)
        score[v] = 1.0 / n;
    for (int it = 0; it < 5000; it++) {
        for (uint32_t v = 0; v < n; v++) {
            const uint64_t deg = g->offsets[v + 1] - g->offsets[v];
            contrib[v] = deg ? score[v] / (double)deg : 0.0;
        }
        double change = 0;
        for (uint32_t v = 0; v < n; v++) {
            double sum = 0;
            for (uint64_t k = g->offsets[v]; k < g->offsets[v + 1]; k++)
                sum += contrib[g->targets[k]];
            const double next = base + d * sum;
            change += fabs(next - score[v]);
            score[v] = next;
        }
        if (d / (1 - d) * change < max_l1)
            break;
    }
    free(contrib);
    return 0;
}

int g500_pagerank_in_place(const g500_csr *g, double tolerance, uint32_t max_iters, double *score,
                           uint32_t *iterations, char *why, size_t why_len)
{
    const uint32_t n = g->vertices;
    float *contrib = malloc((n ? n : 1) * sizeof *contrib);
    if (contrib == NULL) {
        snprintf(why, why_len, "PageRank in place: out of memory for %u vertices", n);
        return -1;
    }
    const float d = (float)TRAVERSE_PR_DAMPING, base = (1.0f - d) / (float)n, init = 1.0f / (float)n;
    for (uint32_t v = 0; v < n; v++) {
        const uint64_t deg = g->offsets[v + 1] - g->offsets[v];
        score[v] = init;
        contrib[v] = deg ? init / (float)deg : 0.0f;
    }
    uint32_t it = 0;
    while (it < max_iters) {
        it++;
        double change = 0;
        for (uint32_t v = 0; v < n; v++) {
            float sum = 0;
            for (uint64_t k = g->offsets[v]; k < g->offsets[v + 1]; k++)
                sum += contrib[g->targets[k]];
            const float next = base + d * sum;
            const uint64_t deg = g->offsets[v + 1] - g->offsets[v];
            change += fabs(next - score[v]);
            score[v] = next;
            contrib[v] = deg ? next / (float)deg : 0.0f;
        }
        if (change < tolerance)
            break;
    }
    *iterations = it;
    free(contrib);
    return 0;
}

int g500_validate_pr(uint32_t vertices, const double *score, const double *ref, double tolerance,
                     double *l1, char *why, size_t why_len)
{
    double sum = 0, worst = -1;
    uint32_t at = 0;
    for (uint32_t v = 0; v < vertices; v++) {
        double d = fabs(score[v] - ref[v]);
        if (isnan(score[v])) {
            snprintf(why, why_len, "PageRank: score of vertex %u is NaN", v);
            return 1;
        }
        sum += d;
        if (d > worst) {
            worst = d;
            at = v;
        }
    }
    if (l1 != NULL)
        *l1 = sum;
    if (sum <= tolerance)
        return 0;
    snprintf(why, why_len,
             "PageRank: L1 distance to the reference %.3g is over %.3g (worst: vertex %u, %.6g "
             "vs the reference's %.6g)",
             sum, tolerance, at, score[at], ref[at]);
    return 1;
}
