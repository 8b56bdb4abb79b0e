/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/tap.c - TAP output. Single-threaded: call checks from one thread. */
#include <stdarg.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

static int planned = -1;
static int run;
static int failed;
static const char *todo_reason;

void plan(int n)
{
    planned = n;
    printf("1..%d\n", n);
    fflush(stdout);
}

__attribute__((format(printf, 4, 0)))
static void vreport(int pass, const char *file, int line, const char *fmt, va_list ap)
{
    run++;
    printf("%sok %d - ", pass ? "" : "not ", run);
    vprintf(fmt, ap);
    if (todo_reason != NULL)
        printf(" # TODO %s", todo_reason);
    printf("\n");
    if (!pass) {
        if (todo_reason == NULL)
            failed++;
        printf("#   Failed test at %s line %d.\n", file, line);
    }
    fflush(stdout);
}

int ok_at(int pass, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(pass, file, line, fmt, ap);
    va_end(ap);
    return pass;
}

int is_at(intmax_t got, intmax_t want, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(got == want, file, line, fmt, ap);
    va_end(ap);
    if (got != want)
        printf("#          got: %jd\n#     expected: %jd\n", got, want);
    return got == want;
}

int is_str_at(const char *got, const char *want, const char *file, int line, const char *fmt,
              ...)
{
    int pass = got != NULL && want != NULL ? strcmp(got, want) == 0 : got == want;
    va_list ap;
    va_start(ap, fmt);
    vreport(pass, file, line, fmt, ap);
    va_end(ap);
    if (!pass)
        printf("#          got: '%s'\n#     expected: '%s'\n", got ? got : "(null)",
               want ? want : "(null)");
    return pass;
}

int like_at(const char *got, const char *needle, const char *file, int line, const char *fmt,
            ...)
{
    int pass = got != NULL && needle != NULL && strstr(got, needle) != NULL;
    va_list ap;
    va_start(ap, fmt);
    vreport(pass, file, line, fmt, ap);
    va_end(ap);
    if (!pass)
        printf("#          got: '%s'\n#  to contain: '%s'\n", got ? got : "(null)",
               needle ? needle : "(null)");
    return pass;
}

int matches_at(const char *got, const char *regex, const char *file, int line, const char *fmt,
               ...)
{
    regex_t re;
    int pass = 0;
    if (got != NULL && regcomp(&re, regex, REG_EXTENDED | REG_NOSUB) == 0) {
        pass = regexec(&re, got, 0, NULL, 0) == 0;
        regfree(&re);
    }
    va_list ap;
    va_start(ap, fmt);
    vreport(pass, file, line, fmt, ap);
    va_end(ap);
    if (!pass)
        printf("#          got: '%s'\n#     to match: '%s'\n", got ? got : "(null)", regex);
    return pass;
}

void plan_skip_all(const char *why)
{
    printf("1..0 # SKIP %s\n", why);
    fflush(stdout);
    exit(0);
}

void skip(int n, const char *why)
{
    for (int i = 0; i < n; i++) {
        run++;
        printf("ok %d # skip %s\n", run, why);
    }
    fflush(stdout);
}

void diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("# ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

void todo_start(const char *why)
{
    todo_reason = why;
}

void todo_end(void)
{
    todo_reason = NULL;
}

void bail_out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("Bail out! ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    exit(255);
}

int done_testing(void)
{
    if (planned < 0) {
        planned = run;
        printf("1..%d\n", run);
    }
    fflush(stdout);
    return exit_status();
}

int exit_status(void)
{
    if (planned >= 0 && planned != run) {
        printf("# planned %d tests but ran %d\n", planned, run);
        return 255;
    }
    return failed > 254 ? 254 : failed;
}
