/* SPDX-License-Identifier: BSD-2-Clause */
/* planlib/src/planlib_base.h - what libmkrt_planlib needs of a base floor:
 * error records and its per-thread memos' memory. Its own, so that the
 * library depends on libmkrt's public API only (none of libmkrt's
 * internals are exported). */
#ifndef MKRT_PLANLIB_BASE_H
#define MKRT_PLANLIB_BASE_H

#include <stddef.h>

#include "mkrt/status.h"

/* Fills err (when not NULL) and returns status; a message longer than
 * the record ends in "...". */
mkrt_status mkrt__pl_error_set(mkrt_error *err, mkrt_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Zeroed memory for a memo (NULL when there is none); freed by pl_free. */
void *mkrt__pl_alloc_zeroed(size_t size);
void mkrt__pl_free(void *p);

#endif
