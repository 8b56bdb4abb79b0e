/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/graph500/validate_pr.c - PageRank scores against the
 * reference's: within an L1 distance. */
#include <math.h>
#include <stdio.h>

#include "graph500.h"

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
