/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/bursty_bench.c - producers alternating bursts and silence, the
 * workload of issue 23's A/B runs (bench/plan_ab.sh): P producers, each
 * publishing R bursts of ADDs on cells of its own, producer 0's bursts 8x
 * the others', with a silence between bursts; batches of max_batch 4096
 * items, so a burst is cut over several batches. Reported: the wall time
 * of all bursts, the publish-to-completion latency (p50, p99) from
 * mkrt_stats, and the plan's counters. Run with MKRT_PLAN_OFF=all for the
 * decisions forced off.
 *
 *   bursty_bench [--sim] [--producers P] [--rounds R] [--burst B] [--silence-us S]
 *
 * --sim runs on the simulated megakernel device (ROUTE decides between
 * the device and the CPU pool per batch). Every cell is checked. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "base/thread.h"
#include "mkrt/mkrt.h"

#define SEC 30000000000ull
#define MAXP 8

typedef struct prod {
    mkrt_runtime *rt;
    uint32_t id, rounds, burst, silence_us;
    int failed;
} prod;

static int run_producer(void *arg)
{
    prod *w = arg;
    mkrt_producer *p = mkrt_producer_open(w->rt, NULL);
    if (p == NULL) {
        w->failed = 1;
        return 0;
    }
    uint32_t burst = w->id == 0 ? w->burst * 8 : w->burst;
    mkrt_item chunk[256];
    for (uint32_t r = 0; r < w->rounds; r++) {
        for (uint32_t i = 0; i < burst;) {
            uint32_t k = burst - i < 256 ? burst - i : 256;
            for (uint32_t j = 0; j < k; j++) {
                uint32_t cell = w->id * 65536u + (i + j) % 4096u;
                chunk[j] = (mkrt_item){MKRT_OP_ADD, cell, cell, 1};
            }
            if (mkrt_publish(p, chunk, k, SEC, NULL) != MKRT_OK)
                w->failed = 1;
            i += k;
        }
        struct timespec ts = {0, (long)w->silence_us * 1000};
        nanosleep(&ts, NULL);
    }
    mkrt_producer_close(p);
    return 0;
}

int main(int argc, char **argv)
{
    uint32_t np = 3, rounds = 40, burst = 2048, silence_us = 2000;
    bool sim = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sim") == 0)
            sim = true;
        else if (i + 1 < argc && strcmp(argv[i], "--producers") == 0)
            np = (uint32_t)atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--rounds") == 0)
            rounds = (uint32_t)atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--burst") == 0)
            burst = (uint32_t)atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--silence-us") == 0)
            silence_us = (uint32_t)atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--sim] [--producers P] [--rounds R] [--burst B] [--silence-us S]\n",
                    argv[0]);
            return 2;
        }
    }
    if (np < 1 || np > MAXP || rounds < 1 || burst < 1) {
        fprintf(stderr, "bursty_bench: producers 1..%d, rounds and burst at least 1. Fix: change them.\n", MAXP);
        return 2;
    }
    mkrt_config c = mkrt_config_default();
    c.backend = sim ? MKRT_BACKEND_SIM : MKRT_BACKEND_CPU;
    c.workers = 2;
    c.max_batch = 4096;
    c.burst_per_ring = 1024;
    c.cells = MAXP * 65536u;
    c.append_log_capacity = 0;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK) {
        fprintf(stderr, "bursty_bench: %s\n", err.message);
        return 1;
    }
    prod w[MAXP];
    mkrt__thread t[MAXP];
    uint64_t t0 = bench_now_ns();
    for (uint32_t i = 0; i < np; i++) {
        w[i] = (prod){rt, i, rounds, burst, silence_us, 0};
        mkrt__thread_start(&t[i], run_producer, &w[i]);
    }
    for (uint32_t i = 0; i < np; i++)
        mkrt__thread_join(t[i]);
    mkrt_drain(rt, SEC);
    double ms = (double)(bench_now_ns() - t0) / 1e6;
    int bad = 0;
    for (uint32_t i = 0; i < np; i++) {
        bad |= w[i].failed;
        uint32_t b = i == 0 ? burst * 8 : burst;
        for (uint32_t cell = 0; cell < 4096u && cell < b; cell++) {
            uint64_t v = 0, want = (uint64_t)rounds * (b / 4096u + (cell < b % 4096u));
            mkrt_cell_read(rt, i * 65536u + cell, &v);
            bad |= v != want;
        }
    }
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    printf("bursty%s: %u producers x %u bursts (%u, others %u items), silence %u us: wall %.2f ms, "
           "latency p50 %.1f us p99 %.1f us, batches %llu, device batches %llu, requeues %llu, "
           "fullest-first %llu, promoted %llu, cpu-routed %llu, cells %s\n",
           sim ? " (sim)" : "", np, rounds, burst * 8, burst, silence_us, ms, (double)s.latency_p50_ns / 1e3,
           (double)s.latency_p99_ns / 1e3, (unsigned long long)s.batches, (unsigned long long)s.device_batches,
           (unsigned long long)s.plan_counts[MKRT_PLAN_N_REQUEUES],
           (unsigned long long)s.plan_counts[MKRT_PLAN_N_FULLEST_FIRST],
           (unsigned long long)s.plan_counts[MKRT_PLAN_N_PROMOTED],
           (unsigned long long)s.plan_counts[MKRT_PLAN_N_CPU_ROUTED], bad ? "WRONG" : "right");
    mkrt_destroy(rt, SEC, NULL);
    return bad ? 1 : 0;
}
