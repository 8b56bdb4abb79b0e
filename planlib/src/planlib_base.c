/* SPDX-License-Identifier: BSD-2-Clause */
/* planlib/src/planlib_base.c - error records and memo memory of
 * libmkrt_planlib (planlib_base.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planlib_base.h"

mkrt_status mkrt__pl_error_set(mkrt_error *err, mkrt_status status, const char *fmt, ...)
{
    if (err == NULL)
        return status;
    err->status = status;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    if (n < 0)
        err->message[0] = '\0';
    else if ((size_t)n >= sizeof err->message)
        memcpy(err->message + sizeof err->message - 4, "...", 4);
    return status;
}

void *mkrt__pl_alloc_zeroed(size_t size)
{
    return calloc(1, size);
}

void mkrt__pl_free(void *p)
{
    free(p);
}
