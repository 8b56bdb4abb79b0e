/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/bad_input.h - what the bad-input tests share: the sanitizer
 * options that let huge requests come back as NULL, and CHECK, which runs a
 * status call with an err and with a NULL err. Included once per program,
 * by its main file (test_bad_input.c, test_bad_input_plan.c): it defines
 * the sanitizer option functions and per-program statics.
 */
#ifndef MKRT_TESTS_BAD_INPUT_H
#define MKRT_TESTS_BAD_INPUT_H

#include <string.h>

#include "mkrt/status.h"
#include "tap.h"

/* Huge requests must come back as NULL (MKRT_ENOMEM), as they do from
 * glibc; ASan and TSan would otherwise report them instead of returning
 * NULL. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
    return "allocator_may_return_null=1";
}

/* ---- checking helpers --------------------------------------------------- */

/* The err argument of the call under test: CHECK evaluates the call once
 * with E = &err (status, err->status and a Fix are checked) and once with
 * E = NULL (same status, no crash). */
static mkrt_error err;
static mkrt_error *E;

static void check_status(mkrt_status got, mkrt_status got_null_err, mkrt_status want,
                         const char *what)
{
    if (!is(got, want, "%s -> %s", what, mkrt_status_name(want)))
        diag("got %s: %s", mkrt_status_name(got), err.message);
    ok(err.status == want && strstr(err.message, "Fix:") != NULL,
       "%s: err holds the status and says what to fix", what);
    if (strstr(err.message, "Fix:") == NULL)
        diag("message: \"%s\"", err.message);
    is(got_null_err, want, "%s: the same with a NULL err", what);
}

#define CHECK(want, expr, what)                                                                \
    do {                                                                                       \
        mkrt_error_clear(&err);                                                                \
        E = &err;                                                                              \
        mkrt_status got_ = (expr);                                                             \
        mkrt_error keep_ = err;                                                                \
        E = NULL;                                                                              \
        mkrt_status got_null_ = (expr);                                                        \
        err = keep_;                                                                           \
        check_status(got_, got_null_, (want), (what));                                         \
    } while (0)

#endif
