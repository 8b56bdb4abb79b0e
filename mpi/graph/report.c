/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/graph/report.c - what every file of the distributed engine reports
 * with: its error messages and its clock. The floor below engine.c,
 * local.c and sssp.c, so that none of them calls up into another. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "mpig_state.h"

mkrt_status mkrt__mpig_fail(mkrt_error *err, mkrt_status st, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        va_start(ap, fmt);
        err->status = st;
        int n = snprintf(err->message, sizeof err->message, "mkrt_mpi_graph: ");
        vsnprintf(err->message + n, sizeof err->message - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return st;
}

double mkrt__mpig_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* POSIX: C11 has no monotonic clock */
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
