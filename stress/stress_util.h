/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/stress_util.h - argument parsing, timing and progress lines shared
 * by the stress programs. */
#ifndef MKRT_STRESS_UTIL_H
#define MKRT_STRESS_UTIL_H

#include <errno.h>
#include <getopt.h>
#include <limits.h>
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
    mkrt__mutex lock;
    mkrt__cond wake;
    bool stop, running;
    mkrt__thread thread; /* stays here until joined (TSan builds keep fn/arg in it) */
} stress_progress;

/* Waits on c under m until *stop or CLOCK_MONOTONIC reaches until_ns; true
 * when stopped. The condition variable's deadline is TIME_UTC (C11), so it
 * is derived afresh from the monotonic time left after every wake-up: a
 * step of the wall clock shortens or stretches one wait, not the schedule. */
static inline bool stress_wait_until(mkrt__cond *c, mkrt__mutex *m, const bool *stop, uint64_t until_ns)
{
    while (!*stop) {
        uint64_t now = stress_now_ns();
        if (now >= until_ns)
            return false;
        struct timespec deadline = mkrt__deadline_after(until_ns - now);
        mkrt__cond_timedwait(c, m, &deadline);
    }
    return true;
}

static inline int stress_progress_main(void *arg)
{
    stress_progress *pg = arg;
    uint64_t next = stress_now_ns();
    mkrt__mutex_lock(&pg->lock);
    while (!pg->stop) {
        next += (uint64_t)pg->period_s * 1000000000u;
        if (stress_wait_until(&pg->wake, &pg->lock, &pg->stop, next))
            break;
        mkrt__mutex_unlock(&pg->lock);
        pg->fn(pg->ctx, (double)(stress_now_ns() - pg->t0) / 1e9);
        fflush(stdout);
        mkrt__mutex_lock(&pg->lock);
    }
    mkrt__mutex_unlock(&pg->lock);
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
    if (mkrt__mutex_init(&pg->lock) != 0)
        return;
    if (mkrt__cond_init(&pg->wake) != 0) {
        mkrt__mutex_destroy(&pg->lock);
        return;
    }
    if (mkrt__thread_start(&pg->thread, stress_progress_main, pg) != 0) {
        mkrt__cond_destroy(&pg->wake);
        mkrt__mutex_destroy(&pg->lock);
        return;
    }
    pg->running = true;
}

static inline void stress_progress_stop(stress_progress *pg)
{
    if (!pg->running)
        return;
    mkrt__mutex_lock(&pg->lock);
    pg->stop = true;
    mkrt__cond_signal(&pg->wake);
    mkrt__mutex_unlock(&pg->lock);
    mkrt__thread_join(pg->thread);
    mkrt__cond_destroy(&pg->wake);
    mkrt__mutex_destroy(&pg->lock);
    pg->running = false;
}

#endif
