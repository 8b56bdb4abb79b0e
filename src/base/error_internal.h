/* SPDX-License-Identifier: BSD-2-Clause */
/* src/base/error_internal.h - filling mkrt_error records (internal). */
#ifndef MKRT_SRC_ERROR_INTERNAL_H
#define MKRT_SRC_ERROR_INTERNAL_H

#include "mkrt/status.h"

/* Formats the message into err (if not NULL), sets err->status = status and
 * returns status, so a failing path can `return mkrt__error_set(...)`.
 * The message should read: what failed, the numbers, "Fix: ...". */
mkrt_status mkrt__error_set(mkrt_error *err, mkrt_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
