/* SPDX-License-Identifier: BSD-2-Clause */
/* planlib/src/planlib_base.c - error records and memo memory of
 * libmkrt_planlib (planlib_base.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error_fill.h"
#include "planlib_base.h"

mkrt_status mkrt__pl_error_set(mkrt_error *err, mkrt_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mkrt__error_vfill(err, status, fmt, ap);
    va_end(ap);
    return status;
}

/* The C library's, not the installed mkrt_allocator: a memo lives as
 * long as its thread and is freed by the thread's exit, which may come
 * after the program changed or removed its allocator (include/mkrt/alloc.h
 * names this exception). */
void *mkrt__pl_alloc_zeroed(size_t size)
{
    return calloc(1, size);
}

void mkrt__pl_free(void *p)
{
    free(p);
}
