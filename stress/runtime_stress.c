/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/runtime_stress.c - producers, dispatcher and workers under load,
 * checked against a shadow model.
 *
 * P producers publish, for --seconds, random mixes of:
 *   ADD h += param on 64 shared handles (in == out: commutative, so the
 *     final cell must equal the sum of every param published for it, in
 *     any legal order; params are unique, so nothing is pruned);
 *   APPEND seq to the producer's own handle (the log must list the
 *     producer's sequence numbers in publish order);
 *   STORE of a fixed value, often twice in a row (exact duplicates: pruned
 *     or not, the effect is the same);
 *   an unregistered op now and then (must be counted failed, never lost).
 * At the end: cells match the shadow sums, logs are in order, failures
 * equal the unknown ops published, and published = executed + pruned +
 * failed. Prints one SUMMARY line.
 *
 *   runtime_stress [--seconds N] [--producers P] [--want-cuda 0|1] [--device-state 0|1] [--progress S] [--help]
 *
 * On a terminal, a progress line every --progress seconds (default 5).
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "base/cpus.h"
#include "base/thread.h"
#include "mkrt/runtime.h"
#include "stress_util.h"

#define SHARED 64
#define MAX_PRODUCERS 16
#define APPEND_CAP 100000
#define BAD_OP 999

static mkrt_runtime *rt;
static uint64_t deadline;
static _Atomic uint64_t callback_failures;

typedef struct producer_state {
    unsigned id;
    uint64_t sums[SHARED];
    uint64_t published, appends, bad;
} producer_state;

static void on_error(void *ctx, const mkrt_item *item, mkrt_status why, const char *msg)
{
    (void)ctx;
    (void)msg;
    if (item->op != BAD_OP || why != MKRT_ENOTSUP)
        fprintf(stderr, "runtime_stress: unexpected failure op %u: %s\n", item->op, msg);
    atomic_fetch_add(&callback_failures, 1);
}

static int producer_main(void *arg)
{
    producer_state *st = arg;
    mkrt_error err;
    mkrt_producer *p = mkrt_producer_open(rt, &err);
    if (p == NULL) {
        fprintf(stderr, "runtime_stress: %s\n", err.message);
        return 0;
    }
    unsigned seed = 77u + st->id;
    uint32_t uniq = 0;
    mkrt_item buf[128];
    while (stress_now_ns() < deadline) {
        size_t n = 1 + (size_t)(rand_r(&seed) % 128);
        for (size_t i = 0; i < n; i++) {
            unsigned r = (unsigned)rand_r(&seed) % 100;
            if (r < 70) {
                uint32_t h = (uint32_t)rand_r(&seed) % SHARED;
                uint32_t param = (st->id << 24) | (uniq++ & 0xFFFFFF);
                buf[i] = (mkrt_item){MKRT_OP_ADD, h, h, param};
                st->sums[h] += param;
            } else if (r < 80 && st->appends < APPEND_CAP) {
                buf[i] = (mkrt_item){MKRT_OP_APPEND, 0, 1000 + st->id, (uint32_t)st->appends++};
            } else if (r < 99 || i == 0) {
                buf[i] = (mkrt_item){MKRT_OP_STORE, 0, 2000, 7};
            } else {
                buf[i] = (mkrt_item){BAD_OP, 0, 1, (st->id << 24) | (uniq++ & 0xFFFFFF)}; /* unique: never pruned */
                st->bad++;
            }
        }
        size_t done = 0;
        mkrt_status s = mkrt_publish_some(p, buf, n, 5000000000ull, &done, &err);
        st->published += done;
        if (s != MKRT_OK || done != n) {
            fprintf(stderr, "runtime_stress: publish: %s\n", err.message);
            break;
        }
        if (rand_r(&seed) % 32 == 0)
            sched_yield();
    }
    uint64_t ticket;
    mkrt_fence(p, &ticket);
    if (mkrt_wait(p, ticket, 30000000000ull) != MKRT_OK)
        fprintf(stderr, "runtime_stress: producer %u fence did not complete\n", st->id);
    mkrt_producer_close(p);
    return 0;
}

static void progress(void *ctx, double elapsed)
{
    (void)ctx;
    mkrt_stats s;
    if (mkrt_stats_read(rt, &s) != MKRT_OK)
        return;
    printf("runtime_stress: %5.1fs published %llu executed %llu pruned %llu failed %llu batches %llu "
           "rate %.2fM/s backend %s\n",
           elapsed, (unsigned long long)s.published, (unsigned long long)s.executed,
           (unsigned long long)s.pruned, (unsigned long long)s.failed, (unsigned long long)s.batches,
           elapsed > 0 ? (double)s.published / elapsed / 1e6 : 0.0, s.backend);
}

int main(int argc, char **argv)
{
    unsigned vals[] = {3, 4, 0, 5, 0, 0};
    /* --want-cuda 1: fail unless the batches ran on the CUDA backend (the
     * Makefile runs it so against the stand-in driver, MKRT_LIBCUDA). */
    const stress_opt opts[] = {
        {"seconds", "run for N seconds", &vals[0]},
        {"producers", "producer threads, 1..16", &vals[1]},
        {"want-cuda", "1: fail unless batches ran on the CUDA backend", &vals[2]},
        {"progress", "progress line every N seconds on a terminal, 0: none", &vals[3]},
        {"device-state", "1: the CUDA backend keeps cells and log in device memory", &vals[4]},
        {"cpus", "size the runtime as if the process had N CPUs (default workers, plan widths), 0: its own",
         &vals[5]},
        {NULL, NULL, NULL}};
    stress_getopt(argc, argv, "Producers, dispatcher and workers under load, checked against a shadow model.",
                  opts);
    if (vals[1] < 1 || vals[1] > MAX_PRODUCERS) {
        fprintf(stderr, "runtime_stress: producers must be 1..%d\n", MAX_PRODUCERS);
        return 2;
    }
    if (vals[5] != 0)
        mkrt__cpus_override(vals[5]); /* the library's test hook (base/cpus.h) */
    mkrt_config cfg = mkrt_config_default();
    cfg.on_error = on_error;
    cfg.ring_capacity = 1024;
    cfg.cells = 4096;
    cfg.append_log_capacity = (size_t)APPEND_CAP * MAX_PRODUCERS;
    cfg.cuda_device_state = vals[4] != 0;
    mkrt_error err;
    if (mkrt_create(&cfg, &rt, &err) != MKRT_OK) {
        fprintf(stderr, "runtime_stress: %s\n", err.message);
        return 1;
    }
    uint64_t t0 = stress_now_ns();
    deadline = t0 + (uint64_t)vals[0] * 1000000000u;
    mkrt__thread th[MAX_PRODUCERS];
    producer_state st[MAX_PRODUCERS];
    memset(st, 0, sizeof st);
    stress_progress pg;
    stress_progress_start(&pg, vals[3], progress, NULL);
    for (unsigned i = 0; i < vals[1]; i++) {
        st[i].id = i;
        mkrt__thread_start(&th[i], producer_main, &st[i]);
    }
    for (unsigned i = 0; i < vals[1]; i++)
        mkrt__thread_join(th[i]);
    stress_progress_stop(&pg);
    mkrt_status ds = mkrt_drain(rt, 30000000000ull);
    double secs = (double)(stress_now_ns() - t0) / 1e9;

    uint64_t bad_cells = 0, bad_logs = 0, published = 0, bad_ops = 0;
    for (uint32_t h = 0; h < SHARED; h++) {
        uint64_t want = 0, got = 0;
        for (unsigned i = 0; i < vals[1]; i++)
            want += st[i].sums[h];
        mkrt_cell_read(rt, h, &got);
        if (got != want)
            bad_cells++;
    }
    uint32_t *log = malloc(APPEND_CAP * sizeof *log);
    for (unsigned i = 0; i < vals[1]; i++) {
        published += st[i].published;
        bad_ops += st[i].bad;
        size_t n = mkrt_append_log_read(rt, 1000 + i, log, APPEND_CAP);
        bool in_order = n == st[i].appends;
        for (size_t k = 0; k < n && in_order; k++)
            in_order = log[k] == k;
        if (!in_order)
            bad_logs++;
    }
    free(log);
    mkrt_stats s;
    if (mkrt_stats_read(rt, &s) != MKRT_OK) {
        fprintf(stderr, "runtime_stress: mkrt_stats_read failed\n");
        return 1;
    }
    bool accounted = s.published == published && s.published == s.executed + s.pruned + s.failed &&
                     s.failed == bad_ops && atomic_load(&callback_failures) == bad_ops;
    bool on_cuda = strcmp(s.backend, "cuda") == 0 && s.device_batches > 0 && s.device_failures == 0;
    bool pass = ds == MKRT_OK && bad_cells == 0 && bad_logs == 0 && accounted && (!vals[2] || on_cuda);
    printf("SUMMARY runtime_stress producers %u seconds %.1f published %llu executed %llu pruned %llu "
           "failed %llu batches %llu layers %llu p50 %lluns p99 %lluns bad_cells %llu bad_logs %llu "
           "rate %.2fM/s backend %s device_batches %llu %s\n",
           vals[1], secs, (unsigned long long)s.published, (unsigned long long)s.executed,
           (unsigned long long)s.pruned, (unsigned long long)s.failed, (unsigned long long)s.batches,
           (unsigned long long)s.layers, (unsigned long long)s.latency_p50_ns,
           (unsigned long long)s.latency_p99_ns, (unsigned long long)bad_cells,
           (unsigned long long)bad_logs, (double)s.published / secs / 1e6, s.backend,
           (unsigned long long)s.device_batches, pass ? "PASS" : "FAIL");
    if (!accounted)
        fprintf(stderr, "runtime_stress: accounting: published %llu (producers %llu) executed %llu pruned %llu failed %llu (bad ops %llu)\n",
                (unsigned long long)s.published, (unsigned long long)published,
                (unsigned long long)s.executed, (unsigned long long)s.pruned,
                (unsigned long long)s.failed, (unsigned long long)bad_ops);
    if (mkrt_destroy(rt, 30000000000ull, &err) != MKRT_OK) {
        fprintf(stderr, "runtime_stress: destroy: %s\n", err.message);
        pass = false;
    }
    return pass ? 0 : 1;
}
