/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/src/error.c - the error records of libmkrt_mpi: every refusal is
 * written to the caller's mkrt_error (where the call takes one) and to
 * this thread's last-error record (mkrt_mpi_error_last()), which is where
 * the calls without an mkrt_error parameter leave their message. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mpi_internal.h"

/* This thread's last refusal by an mkrt_mpi_* call. */
static _Thread_local mkrt_error last_error;

mkrt_status mkrt__mpi_fail(mkrt_error *err, mkrt_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error.message, sizeof last_error.message, fmt, ap);
    va_end(ap);
    last_error.status = st;
    if (err != NULL)
        *err = last_error;
    return st;
}

mkrt_status mkrt_mpi_error_last(mkrt_error *out)
{
    if (out == NULL)
        return mkrt__mpi_fail(NULL, MKRT_EINVAL, "mkrt_mpi_error_last: out is NULL. Fix: pass "
                              "an mkrt_error to copy the record into.");
    *out = last_error;
    return MKRT_OK;
}
