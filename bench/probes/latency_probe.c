/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/probes/latency_probe.c - 20,000 single-item round trips (publish,
 * fence, wait) on a runtime of W workers (0: the default); prints p50,
 * p99 and the process's CPU per round trip (bench/roam_ab.sh).
 *   latency_probe [W] */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "mkrt/mkrt.h"

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static double cpu_us(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 + (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const int rounds = 20000;
    double *v = malloc(rounds * sizeof *v);
    mkrt_config c = mkrt_config_default();
    c.cells = 1024;
    c.workers = argc > 1 ? (uint32_t)atoi(argv[1]) : 0;
    mkrt_runtime *rt;
    if (v == NULL || mkrt_create(&c, &rt, NULL) != MKRT_OK)
        return 1;
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    const double c0 = cpu_us();
    for (int r = 0; r < rounds; r++) {
        const mkrt_item it = {MKRT_OP_ADD, (uint32_t)r % 1024, (uint32_t)r % 1024, (uint32_t)r};
        const double t0 = now_ns();
        uint64_t t;
        mkrt_publish(p, &it, 1, UINT64_MAX, NULL);
        mkrt_fence(p, &t);
        mkrt_wait(p, t, UINT64_MAX);
        v[r] = now_ns() - t0;
    }
    const double cpu = (cpu_us() - c0) / rounds;
    qsort(v, rounds, sizeof *v, cmp);
    printf("p50 %.2f us p99 %.2f us cpu %.2f us\n", v[rounds / 2] / 1e3, v[rounds * 99 / 100] / 1e3, cpu);
    mkrt_producer_close(p);
    mkrt_destroy(rt, UINT64_MAX, NULL);
    free(v);
    return 0;
}
