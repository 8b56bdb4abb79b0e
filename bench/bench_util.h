/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/bench_util.h - timing, medians and machine description for benchmarks. */
#ifndef MKRT_BENCH_UTIL_H
#define MKRT_BENCH_UTIL_H

#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void bench_pin(int cpu)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpu < 0 || n <= 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu % (int)n, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

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

/* Parses [--quick] [--out FILE]; exits 2 with a usage line otherwise. */
static inline void bench_args(int argc, char **argv, bool *quick, const char **out)
{
    static const struct option opts[] = {
        {"quick", no_argument, NULL, 'q'}, {"out", required_argument, NULL, 'o'}, {0, 0, 0, 0}};
    int o;
    *quick = false;
    *out = NULL;
    while ((o = getopt_long(argc, argv, "qo:", opts, NULL)) != -1) {
        if (o == 'q') {
            *quick = true;
        } else if (o == 'o') {
            *out = optarg;
        } else {
            fprintf(stderr, "usage: %s [--quick] [--out FILE]\n", argv[0]);
            exit(2);
        }
    }
}

/* Writes "# title", the machine, the command and `body` to path (when not
 * NULL). Returns 0, or 1 after printing why the file could not be written. */
static inline int bench_write_report(const char *prog, const char *path, const char *title,
                                     const char *machine, const char *setup, const char *body)
{
    if (path == NULL)
        return 0;
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    fprintf(f, "# %s\n\nMachine: %s\n\nCommand: `make bench` (runs `%s --out %s`); %s\n\n%s",
            title, machine, prog, path, setup, body);
    fclose(f);
    return 0;
}

#endif
