/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/bench_util.h - timing, medians, machine description, options and
 * report/CSV output shared by the benchmarks. */
#ifndef MKRT_BENCH_UTIL_H
#define MKRT_BENCH_UTIL_H

#include <pthread.h> /* affinity and the rwlock baseline only: see below */
#include <stdbool.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* CPU seconds (user + system) of every thread of this process (who =
 * RUSAGE_SELF: the runtime's workers and dispatcher, spinning included)
 * or of its children waited for (RUSAGE_CHILDREN: a peer run as a
 * program); take the difference around what is measured. */
static inline double bench_cpu_seconds(int who)
{
    struct rusage u;
    if (getrusage(who, &u) != 0)
        return 0;
    return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec +
           ((double)u.ru_utime.tv_usec + (double)u.ru_stime.tv_usec) / 1e6;
}

static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- what C11 <threads.h> lacks: the benchmarks' only pthread calls ----
 * The benchmarks' threads are C11 threads (base/thread.h); glibc builds
 * them on pthreads, so pthread_self() names the calling one. */

/* Affinity (C11 has no way to place a thread on a CPU): cpu >= 0 pins the
 * calling thread to that CPU (modulo the online count); cpu < 0 lets it
 * run on every online CPU again. */
static inline void bench_pin(int cpu)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n <= 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (cpu >= 0)
        CPU_SET(cpu % (int)n, &set);
    else
        for (long i = 0; i < n; i++)
            CPU_SET((int)i, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* A reader-writer lock (C11 has none): cache_bench's baseline is a table
 * behind the system's rwlock, next to one behind a plain mutex, so it
 * stays a pthread_rwlock_t rather than becoming a second mutex. */
typedef pthread_rwlock_t bench_rwlock;
static inline int bench_rwlock_init(bench_rwlock *l) { return pthread_rwlock_init(l, NULL); }
static inline void bench_rwlock_destroy(bench_rwlock *l) { pthread_rwlock_destroy(l); }
static inline void bench_rwlock_read(bench_rwlock *l) { pthread_rwlock_rdlock(l); }
static inline void bench_rwlock_write(bench_rwlock *l) { pthread_rwlock_wrlock(l); }
static inline void bench_rwlock_unlock(bench_rwlock *l) { pthread_rwlock_unlock(l); }

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* "AMD EPYC ... , 2 CPUs, Linux 6.1" into buf. */
static inline void bench_machine(char *buf, size_t len)
{
    char model[128] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f != NULL) {
        char line[256];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10) == 0) {
                char *c = strchr(line, ':');
                if (c != NULL) {
                    snprintf(model, sizeof model, "%s", c + 2);
                    model[strcspn(model, "\n")] = '\0';
                }
                break;
            }
        }
        fclose(f);
    }
    struct utsname u;
    uname(&u);
    snprintf(buf, len, "%s, %ld CPUs, %s %s", model, sysconf(_SC_NPROCESSORS_ONLN), u.sysname,
             u.release);
}

/* What every benchmark takes: [--quick] [--out FILE] [--csv FILE].
 * --out writes the markdown report, --csv the figures as CSV rows (below);
 * without them a benchmark only prints to stdout. */
typedef struct bench_opts {
    bool quick;
    const char *out; /* markdown report, or NULL */
    const char *csv; /* CSV rows, or NULL */
    int argc;        /* the command line, quoted in the report */
    char **argv;
} bench_opts;

#define BENCH_USAGE "[--quick] [--out FILE.md] [--csv FILE.csv]"

/* When argv[*i] is one of the common options, consumes it (and its value,
 * as the next argument or after '=') and returns true. */
static inline bool bench_common_arg(int argc, char **argv, int *i, bench_opts *o)
{
    static const char *const names[] = {"--out", "--csv"};
    const char *a = argv[*i];
    if (strcmp(a, "--quick") == 0) {
        o->quick = true;
        return true;
    }
    for (int k = 0; k < 2; k++) {
        size_t n = strlen(names[k]);
        const char *v = NULL;
        if (strcmp(a, names[k]) == 0 && *i + 1 < argc)
            v = argv[++*i];
        else if (strncmp(a, names[k], n) == 0 && a[n] == '=')
            v = a + n + 1;
        if (v != NULL) {
            *(k == 0 ? &o->out : &o->csv) = v;
            return true;
        }
    }
    return false;
}

/* --threads N (1..64) for the benchmarks that take it: consumes it and
 * returns true; exits 2 on a bad value. */
static inline bool bench_threads_arg(int argc, char **argv, int *i, unsigned *threads)
{
    if (strcmp(argv[*i], "--threads") != 0)
        return false;
    const char *s = *i + 1 < argc ? argv[++*i] : "";
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*s == '\0' || *end != '\0' || s[0] == '-' || v < 1 || v > 64) {
        fprintf(stderr, "%s: --threads '%s': not a number in 1..64\n", argv[0], s);
        exit(2);
    }
    *threads = (unsigned)v;
    return true;
}

static inline void bench_opts_init(bench_opts *o, int argc, char **argv)
{
    *o = (bench_opts){false, NULL, NULL, argc, argv};
}

/* Parses the common options; exits 2 with a usage line on anything else. */
static inline void bench_args(int argc, char **argv, bench_opts *o)
{
    bench_opts_init(o, argc, argv);
    for (int i = 1; i < argc; i++) {
        if (!bench_common_arg(argc, argv, &i, o)) {
            fprintf(stderr, "usage: %s " BENCH_USAGE "\n", argv[0]);
            exit(2);
        }
    }
}

/* ---- CSV ---------------------------------------------------------------
 * One header line, then one row per measured figure:
 *
 *   benchmark,case,param,impl,value,unit
 *   ring,1P1C,8,rte_ring SP/SC,141.02,M items/s
 *
 * benchmark  the program (ring, plan, cache, runtime, cuda)
 * case       the group of figures one table or chart shows (e.g. 1P1C)
 * param      that group's x variable (burst size, producers, p50, ...)
 * impl       mkrt's contestant or the peer it is compared with
 * value      the figure (medians as in the report; ratios are left to the
 *            reader: both sides of each are rows of the same run)
 * unit       value's unit
 *
 * Fields are quoted (RFC 4180) only when they hold a comma, quote or line
 * break; the benchmarks avoid that so gnuplot can read the file as is.
 * The rows go to FILE.tmp, renamed to FILE by bench_csv_close: a failed
 * run leaves the previous file alone. */
typedef struct bench_csv {
    FILE *f;
    const char *path;
    const char *benchmark;
    char tmp[4096];
} bench_csv;

static inline void bench_csv_field(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s != '\0'; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* Integral figures without a fraction, others with 6 significant digits. */
static inline void bench_csv_number(char *buf, size_t len, double v)
{
    if (v == (double)(long long)v && v > -1e15 && v < 1e15)
        snprintf(buf, len, "%lld", (long long)v);
    else
        snprintf(buf, len, "%.6g", v);
}

/* path NULL: the rows are dropped. Returns 0, or 1 after printing why. */
static inline int bench_csv_open(bench_csv *c, const char *path, const char *benchmark)
{
    *c = (bench_csv){NULL, path, benchmark, ""};
    if (path == NULL)
        return 0;
    snprintf(c->tmp, sizeof c->tmp, "%s.tmp", path);
    c->f = fopen(c->tmp, "w");
    if (c->f == NULL) {
        perror(c->tmp);
        return 1;
    }
    fputs("benchmark,case,param,impl,value,unit\n", c->f);
    return 0;
}

static inline void bench_csv_row(bench_csv *c, const char *case_, const char *param, const char *impl,
                                 double value, const char *unit)
{
    if (c->f == NULL)
        return;
    char num[64];
    bench_csv_number(num, sizeof num, value);
    const char *fields[] = {c->benchmark, case_, param, impl, num, unit};
    for (int i = 0; i < 6; i++) {
        if (i > 0)
            fputc(',', c->f);
        bench_csv_field(c->f, fields[i]);
    }
    fputc('\n', c->f);
}

/* The same with a numeric param (burst size, thread count, ...). */
static inline void bench_csv_rowp(bench_csv *c, const char *case_, double param, const char *impl,
                                  double value, const char *unit)
{
    char p[64];
    bench_csv_number(p, sizeof p, param);
    bench_csv_row(c, case_, p, impl, value, unit);
}

/* Moves the rows into place. Returns 0, or 1 after printing why not. */
static inline int bench_csv_close(bench_csv *c)
{
    if (c->f == NULL)
        return 0;
    bool ok = !ferror(c->f);
    ok = (fclose(c->f) == 0) && ok;
    c->f = NULL;
    if (!ok || rename(c->tmp, c->path) != 0) {
        perror(c->path);
        remove(c->tmp);
        return 1;
    }
    return 0;
}

/* "build/bench/x --out a.md --csv a.csv" into buf. */
static inline void bench_command(const bench_opts *o, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < o->argc && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? " " : "", o->argv[i]);
}

/* Writes "# title", the machine, the command (and `make_cmd`, the make
 * command that runs it), `setup` and `body` to o->out (when not NULL).
 * Returns 0, or 1 after printing why the file could not be written. */
static inline int bench_write_report(const bench_opts *o, const char *make_cmd, const char *title,
                                     const char *machine, const char *setup, const char *body)
{
    if (o->out == NULL)
        return 0;
    FILE *f = fopen(o->out, "w");
    if (f == NULL) {
        perror(o->out);
        return 1;
    }
    char cmd[1024];
    bench_command(o, cmd, sizeof cmd);
    fprintf(f, "# %s\n\nMachine: %s\n\nCommand: `%s`", title, machine, cmd);
    if (!o->quick)
        fprintf(f, " (what `%s` runs%s)", make_cmd, o->csv ? "; the CSV holds the same figures" : "");
    fprintf(f, "; %s\n\n%s", setup, body);
    bool ok = !ferror(f);
    if (fclose(f) != 0 || !ok) {
        perror(o->out);
        return 1;
    }
    return 0;
}

#endif
