/* SPDX-License-Identifier: BSD-2-Clause */
/* base/error_fill.h - the one rule for filling an mkrt_error record
 * (status, message, and "..." where the message was cut), header-only so
 * that libmkrt_planlib, which links only libmkrt's exported API, uses the
 * same rule as mkrt__error_set. */
#ifndef MKRT_BASE_ERROR_FILL_H
#define MKRT_BASE_ERROR_FILL_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mkrt/status.h"

__attribute__((format(printf, 3, 0))) static inline mkrt_status mkrt__error_vfill(mkrt_error *err, mkrt_status status, const char *fmt, va_list ap)
{
    if (err == NULL)
        return status;
    err->status = status;
    int n = vsnprintf(err->message, sizeof err->message, fmt, ap);
    if (n < 0) {
        err->message[0] = '\0';
    } else if ((size_t)n >= sizeof err->message) {
        /* Cut: mark it so a reader knows the sentence was longer. */
        memcpy(err->message + sizeof err->message - 4, "...", 4);
    }
    return status;
}

#endif
