/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/stress_util.h - argument parsing, timing and progress lines shared
 * by the stress programs. */
#ifndef MKRT_STRESS_UTIL_H
#define MKRT_STRESS_UTIL_H

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/thread.h"

static inline uint64_t stress_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A decimal number, all of s; false for anything else (signs included). */
static inline bool stress_parse_ull(const char *s, unsigned long long *out)
{
    if (s == NULL || *s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0' || errno != 0)
        return false;
    *out = v;
    return true;
}

/* One unsigned option "--name N" (also "--name=N"). */
typedef struct stress_opt {
    const char *name; /* without the dashes */
    const char *help; /* what it means */
    unsigned *val;    /* in: the default, out: the value */
} stress_opt;

#define STRESS_OPTS_MAX 16

/* Parses argv with getopt_long against opts (terminated by a NULL name)
 * and --help. --help prints the usage and exits 0; an unknown option, a
 * missing or non-numeric value, or a stray argument prints the usage to
 * stderr and exits 2. */
static inline void stress_getopt(int argc, char **argv, const char *what, const stress_opt *opts)
{
    struct option lo[STRESS_OPTS_MAX + 2];
    unsigned defaults[STRESS_OPTS_MAX];
    size_t n = 0;
    for (; opts[n].name != NULL && n < STRESS_OPTS_MAX; n++) {
        lo[n] = (struct option){opts[n].name, required_argument, NULL, 256 + (int)n};
        defaults[n] = *opts[n].val;
    }
    lo[n] = (struct option){"help", no_argument, NULL, 'h'};
    lo[n + 1] = (struct option){NULL, 0, NULL, 0};
    bool help = false, bad = false;
    int c;
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        if (c == 'h') {
            help = true;
        } else if (c >= 256 && c < 256 + (int)n) {
            unsigned long long v;
            if (!stress_parse_ull(optarg, &v) || v > UINT_MAX) {
                fprintf(stderr, "%s: --%s needs a number, got '%s'\n", argv[0], opts[c - 256].name,
                        optarg);
                bad = true;
            } else {
                *opts[c - 256].val = (unsigned)v;
            }
        } else {
            bad = true; /* getopt_long has said why */
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
        bad = true;
    }
    if (help || bad) {
        FILE *f = help && !bad ? stdout : stderr;
        fprintf(f, "usage: %s [options]\n%s\n", argv[0], what);
        for (size_t i = 0; i < n; i++)
            fprintf(f, "  --%-12s N  %s (default %u)\n", opts[i].name, opts[i].help, defaults[i]);
        fprintf(f, "  --%-15s this text\n", "help");
        exit(help && !bad ? 0 : 2);
    }
}

/* Progress lines: fn(ctx, seconds since start) every period_s seconds from
 * a thread of its own, only when stdout is a terminal (logs and `make
 * stress` output keep just the SUMMARY lines). Threads through
 * base/thread.h, as in the programs. */
typedef void (*stress_progress_fn)(void *ctx, double elapsed_s);

typedef struct stress_progress {
    stress_progress_fn fn;
    void *ctx;
    unsigned period_s;
    uint64_t t0;
    _Atomic bool stop;
    bool running;
    mkrt__thread thread; /* stays here until joined (TSan builds keep fn/arg in it) */
} stress_progress;

/* Sleeps until *stop or CLOCK_MONOTONIC reaches until_ns; true when
 * stopped. Relative sleeps of at most 10 ms, the flag read between them:
 * C11's only timed wait on a condition variable takes a TIME_UTC deadline,
 * and a step of the wall clock moves that deadline (a step back by J
 * stretched one wait by J: a soak lost its interval rows, and with them
 * its RSS verdict). A relative sleep is not moved by a step. */
static inline bool stress_sleep_until(_Atomic bool *stop, uint64_t until_ns)
{
    for (;;) {
        /* relaxed: a flag with no data behind it; the stopper's join of
         * this thread orders everything else. */
        if (atomic_load_explicit(stop, memory_order_relaxed))
            return true;
        uint64_t now = stress_now_ns();
        if (now >= until_ns)
            return false;
        uint64_t left = until_ns - now;
        mkrt__thread_sleep_ns(left < 10000000u ? left : 10000000u);
    }
}

/* The first point of the schedule t0 + k * period after now: a caller that
 * overslept (a stopped process, an overloaded machine) skips the points it
 * missed instead of taking them back to back. */
static inline uint64_t stress_next_tick(uint64_t next, uint64_t period_ns, uint64_t now)
{
    next += period_ns;
    if (next <= now)
        next += (now - next) / period_ns * period_ns + period_ns;
    return next;
}

static inline int stress_progress_main(void *arg)
{
    stress_progress *pg = arg;
    uint64_t period = (uint64_t)pg->period_s * 1000000000u;
    uint64_t next = stress_next_tick(pg->t0, period, pg->t0);
    while (!stress_sleep_until(&pg->stop, next)) {
        uint64_t now = stress_now_ns();
        pg->fn(pg->ctx, (double)(now - pg->t0) / 1e9);
        fflush(stdout);
        next = stress_next_tick(next, period, now);
    }
    return 0;
}

static inline void stress_progress_start(stress_progress *pg, unsigned period_s, stress_progress_fn fn,
                                         void *ctx)
{
    memset(pg, 0, sizeof *pg);
    if (period_s == 0 || !isatty(STDOUT_FILENO))
        return;
    pg->fn = fn;
    pg->ctx = ctx;
    pg->period_s = period_s;
    pg->t0 = stress_now_ns();
    atomic_init(&pg->stop, false);
    pg->running = mkrt__thread_start(&pg->thread, stress_progress_main, pg) == 0;
}

static inline void stress_progress_stop(stress_progress *pg)
{
    if (!pg->running)
        return;
    /* relaxed: see stress_sleep_until; the join below orders the rest. */
    atomic_store_explicit(&pg->stop, true, memory_order_relaxed);
    mkrt__thread_join(pg->thread);
    pg->running = false;
}

#endif
