/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/tap.h - a small TAP producer for mkrt's unit tests.
 *
 *   plan(n) or no plan and done_testing() at the end;
 *   ok(cond, fmt...), is(got, want, fmt...) for integers,
 *   is_str(got, want, fmt...), like(got, substring, fmt...),
 *   matches(got, extended regex, fmt...),
 *   plan_skip_all(why) when nothing can be tested here (exits 0),
 *   skip(n, why), diag(fmt...), todo_start(why)/todo_end(),
 *   bail_out(fmt...) stops the whole run.
 * exit_status() is non-zero when a test failed or the plan was not met.
 * Each check returns its verdict so a test can stop early on failure.
 */
#ifndef MKRT_TESTS_TAP_H
#define MKRT_TESTS_TAP_H

#include <stdint.h>

void plan(int n);
int ok_at(int pass, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int is_at(intmax_t got, intmax_t want, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
int is_str_at(const char *got, const char *want, const char *file, int line, const char *fmt,
              ...) __attribute__((format(printf, 5, 6)));
int like_at(const char *got, const char *needle, const char *file, int line, const char *fmt,
            ...) __attribute__((format(printf, 5, 6)));
int matches_at(const char *got, const char *regex, const char *file, int line, const char *fmt,
               ...) __attribute__((format(printf, 5, 6)));
void skip(int n, const char *why);
_Noreturn void plan_skip_all(const char *why);
void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void todo_start(const char *why);
void todo_end(void);
_Noreturn void bail_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int done_testing(void);
int exit_status(void);

#define ok(cond, ...) ok_at(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is(got, want, ...) is_at((intmax_t)(got), (intmax_t)(want), __FILE__, __LINE__, __VA_ARGS__)
#define is_str(got, want, ...) is_str_at((got), (want), __FILE__, __LINE__, __VA_ARGS__)
#define like(got, needle, ...) like_at((got), (needle), __FILE__, __LINE__, __VA_ARGS__)
#define matches(got, regex, ...) matches_at((got), (regex), __FILE__, __LINE__, __VA_ARGS__)

#endif
