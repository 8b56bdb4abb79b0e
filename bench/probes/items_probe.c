/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/probes/items_probe.c - one producer publishes 1M items in chunks
 * of 1024, 8 passes, into a CPU runtime of W workers, and prints items/s
 * measured inside the run (bench/roam_ab.sh builds it against two trees).
 *   items_probe W indep|random
 * indep: cell i += param (1M cells); random: out = in + param over 64K
 * random cells (peer_bench's "random conflicts"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mkrt/mkrt.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    const unsigned w = (unsigned)atoi(argv[1]);
    const int random = strcmp(argv[2], "random") == 0;
    const size_t n = (size_t)1 << 20, chunk = 1024;
    const int passes = 8;
    mkrt_item *it = malloc(n * sizeof *it);
    uint64_t seed = 42;
    for (size_t k = 0; k < n; k++) {
        uint32_t in = (uint32_t)k, out = (uint32_t)k;
        if (random) {
            in = (uint32_t)(mix(&seed) % 65536);
            out = (uint32_t)(mix(&seed) % 65536);
        }
        it[k] = (mkrt_item){MKRT_OP_ADD, in, out, (uint32_t)k + 1};
    }
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CPU;
    c.workers = w;
    c.cells = random ? 65536 : (uint32_t)n;
    mkrt_runtime *rt;
    mkrt_error e;
    if (it == NULL || mkrt_create(&c, &rt, &e) != MKRT_OK)
        return 1;
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    const double t0 = now();
    uint64_t tk;
    for (int ps = 0; ps < passes; ps++)
        for (size_t k = 0; k < n; k += chunk)
            mkrt_publish(p, it + k, chunk, UINT64_MAX, NULL);
    mkrt_fence(p, &tk);
    mkrt_wait(p, tk, UINT64_MAX);
    const double t1 = now();
    printf("%.2f M/s\n", (double)n * passes / (t1 - t0) / 1e6);
    mkrt_producer_close(p);
    mkrt_destroy(rt, UINT64_MAX, NULL);
    free(it);
    return 0;
}
