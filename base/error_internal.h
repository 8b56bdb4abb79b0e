/* SPDX-License-Identifier: BSD-2-Clause */
/* base/error_internal.h - filling mkrt_error records (internal). */
#ifndef MKRT_SRC_ERROR_INTERNAL_H
#define MKRT_SRC_ERROR_INTERNAL_H

#include "mkrt/status.h"

/* Formats the message into err (if not NULL), sets err->status = status and
 * returns status, so a failing path can `return mkrt__error_set(...)`.
 * The message should read: what failed, the numbers, "Fix: ...". */
mkrt_status mkrt__error_set(mkrt_error *err, mkrt_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The length of message's first part, what failed and the numbers: the text
 * before its " Fix:" sentence, without the full stop and spaces that end
 * it (all of message when it has no Fix). For "%.*s". */
int mkrt__error_reason_len(const char *message);

#endif
