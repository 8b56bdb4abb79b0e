/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/cache_bench.c - plan cache lookups per second: mkrt's RCU cache vs
 * the same hash table behind a reader-writer lock (pthread_rwlock_t, see
 * bench_util.h) and behind a mutex.
 *
 * Each thread performs operations on 256 hot keys for a fixed time; a
 * fraction of them (0%, 1%, 10%) are writes that replace one key's plan
 * (mkrt: remove + plan again through get_or_plan; locked tables: replace
 * the entry under the write lock, freeing the old plan). A lookup reads
 * the plan's topology and checksum, as a dispatcher would. 1 and 2 threads
 * (2 cores). Median of runs; ratios in the same run.
 *
 *   cache_bench [--quick] [--out FILE.md] [--csv FILE.csv]
 */
#include <stdatomic.h>
#include <stdbool.h>

#include "base/thread.h"
#include "bench_util.h"
#include "mkrt/plan_cache.h"

#define KEYS 256
#define BUCKETS 1024

static mkrt_plan_key keys[KEYS];

/* ---- the locked baseline: chained hash table of heap plans ------------- */

typedef struct entry {
    struct entry *next;
    mkrt_plan plan;
} entry;

typedef struct locked_table {
    entry *buckets[BUCKETS];
    bench_rwlock rw;
    mkrt__mutex mu;
    bool use_rw;
} locked_table;

static uint64_t key_hash(const mkrt_plan_key *k)
{
    uint64_t h = k->graph_layout_hash * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)k->frontier_density_bucket << 40 ^ k->memory_pressure_bucket;
    return h ^ h >> 29;
}

static void plan_for(const mkrt_plan_key *k, mkrt_plan *p)
{
    memset(p, 0, sizeof *p);
    p->key = *k;
    p->decision.topology = (mkrt_wave_topology)(k->graph_layout_hash % 6);
    p->worker_groups = (uint32_t)k->graph_layout_hash;
    p->checksum = mkrt_plan_checksum(p);
}

static entry *table_find(locked_table *t, const mkrt_plan_key *k)
{
    for (entry *e = t->buckets[key_hash(k) % BUCKETS]; e != NULL; e = e->next)
        if (mkrt_plan_key_equal(&e->plan.key, k))
            return e;
    return NULL;
}

static void table_replace(locked_table *t, const mkrt_plan_key *k)
{
    entry *fresh = malloc(sizeof *fresh);
    plan_for(k, &fresh->plan);
    entry **slot = &t->buckets[key_hash(k) % BUCKETS];
    while (*slot != NULL && !mkrt_plan_key_equal(&(*slot)->plan.key, k))
        slot = &(*slot)->next;
    entry *old = *slot;
    fresh->next = old ? old->next : NULL;
    *slot = fresh;
    free(old);
}

/* ---- contestants ---------------------------------------------------- */

typedef struct ctx {
    int kind; /* 0 mkrt, 1 rwlock, 2 mutex */
    mkrt_plan_cache *cache;
    locked_table *table;
    double write_fraction;
    uint64_t deadline;
    _Atomic unsigned ready;
    _Atomic bool go;
    unsigned threads;
} ctx;

static mkrt_status build(void *p, const mkrt_plan_key *key, mkrt_wave_topology prev, mkrt_plan *plan,
                         mkrt_error *err)
{
    (void)p;
    (void)prev;
    (void)err;
    plan->decision.topology = (mkrt_wave_topology)(key->graph_layout_hash % 6);
    plan->worker_groups = (uint32_t)key->graph_layout_hash;
    return MKRT_OK;
}

typedef struct thread_arg {
    ctx *c;
    unsigned id;
    uint64_t ops;
    uint64_t sink;
} thread_arg;

static int run(void *p)
{
    thread_arg *a = p;
    ctx *c = a->c;
    bench_pin((int)a->id);
    uint64_t x = 0x9E3779B97F4A7C15ull * (a->id + 1);
    uint32_t write_threshold = (uint32_t)(c->write_fraction * 4294967296.0);
    uint64_t ops = 0, sink = 0;
    atomic_fetch_add(&c->ready, 1);
    while (!atomic_load_explicit(&c->go, memory_order_acquire))
        ;
    while (bench_now_ns() < c->deadline) {
        for (int i = 0; i < 256; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            const mkrt_plan_key *k = &keys[x % KEYS];
            bool write = (uint32_t)(x >> 32) < write_threshold;
            if (c->kind == 0) {
                if (write)
                    mkrt_plan_cache_remove(c->cache, k);
                mkrt_plan_cache_read_lock();
                const mkrt_plan *pl = mkrt_plan_cache_find(c->cache, k);
                if (pl == NULL)
                    mkrt_plan_cache_get_or_plan(c->cache, k, build, NULL, &pl, NULL);
                sink += pl->decision.topology + pl->checksum;
                mkrt_plan_cache_read_unlock();
            } else if (c->kind == 1) {
                if (write) {
                    bench_rwlock_write(&c->table->rw);
                    table_replace(c->table, k);
                    bench_rwlock_unlock(&c->table->rw);
                } else {
                    bench_rwlock_read(&c->table->rw);
                    entry *e = table_find(c->table, k);
                    sink += e->plan.decision.topology + e->plan.checksum;
                    bench_rwlock_unlock(&c->table->rw);
                }
            } else {
                mkrt__mutex_lock(&c->table->mu);
                if (write) {
                    table_replace(c->table, k);
                } else {
                    entry *e = table_find(c->table, k);
                    sink += e->plan.decision.topology + e->plan.checksum;
                }
                mkrt__mutex_unlock(&c->table->mu);
            }
            ops++;
        }
    }
    a->ops = ops;
    a->sink = sink;
    return 0;
}

static double run_case(int kind, unsigned threads, double wf, double seconds)
{
    ctx c = {.kind = kind, .write_fraction = wf, .threads = threads};
    locked_table *t = NULL;
    if (kind == 0) {
        mkrt_plan_cache_config cfg = {4 * KEYS, 0};
        mkrt_plan_cache_create(&cfg, &c.cache, NULL);
        for (int i = 0; i < KEYS; i++) {
            mkrt_plan pl;
            mkrt_plan_cache_get_or_plan_copy(c.cache, &keys[i], build, NULL, &pl, NULL);
        }
    } else {
        t = calloc(1, sizeof *t);
        if (t == NULL || bench_rwlock_init(&t->rw) != 0 || mkrt__mutex_init(&t->mu) != 0) {
            fprintf(stderr, "cache_bench: cannot set up the locked table\n");
            exit(1);
        }
        for (int i = 0; i < KEYS; i++)
            table_replace(t, &keys[i]);
        c.table = t;
    }
    mkrt__thread th[2];
    thread_arg args[2];
    for (unsigned i = 0; i < threads; i++) {
        args[i] = (thread_arg){&c, i, 0, 0};
        mkrt__thread_start(&th[i], run, &args[i]);
    }
    while (atomic_load(&c.ready) < threads)
        ;
    uint64_t t0 = bench_now_ns();
    c.deadline = t0 + (uint64_t)(seconds * 1e9);
    atomic_store_explicit(&c.go, true, memory_order_release);
    uint64_t total = 0;
    for (unsigned i = 0; i < threads; i++) {
        mkrt__thread_join(th[i]);
        total += args[i].ops;
    }
    double rate = (double)total / ((double)(bench_now_ns() - t0) / 1e9);
    if (kind == 0) {
        mkrt_plan_cache_destroy(c.cache);
    } else {
        for (int b = 0; b < BUCKETS; b++)
            for (entry *e = t->buckets[b], *n; e != NULL; e = n) {
                n = e->next;
                free(e);
            }
        bench_rwlock_destroy(&t->rw);
        mkrt__mutex_destroy(&t->mu);
        free(t);
    }
    return rate;
}

int main(int argc, char **argv)
{
    bench_opts opt;
    bench_args(argc, argv, &opt);
    const bool quick = opt.quick;
    bench_csv csv;
    if (bench_csv_open(&csv, opt.csv, "cache") != 0)
        return 1;
    mkrt_device_key dev = mkrt_device_key_cpu();
    for (int i = 0; i < KEYS; i++) {
        mkrt_exec_sample s = {1000, 0.5, 4096};
        mkrt_memory_budget m = {1000, 10000};
        keys[i] = mkrt_plan_key_make((uint64_t)i * 7919, MKRT_ANALYSIS_DATAFLOW, 0, &dev, 1, &s, &m, 100, 0);
    }
    const int reps = quick ? 1 : 5;
    const double secs = quick ? 0.1 : 0.4;
    char machine[256], report[4096];
    size_t len = 0;
    bench_machine(machine, sizeof machine);
#define EMIT(...) len += (size_t)snprintf(report + len, sizeof report - len, __VA_ARGS__)
    printf("cache_bench: %d hot keys, median of %d runs of %.1f s; %s\n", KEYS, reps, secs, machine);
    EMIT("| threads | writes | mkrt RCU cache | rwlock table | mutex table | vs rwlock | vs mutex | ns/lookup (mkrt, per thread) |\n|---|---|---|---|---|---|---|---|\n");
    static const double wfs[] = {0.0, 0.01, 0.10};
    double target = 0;
    for (unsigned threads = 1; threads <= 2; threads++)
        for (int w = 0; w < 3; w++) {
            double r[3];
            for (int kind = 0; kind < 3; kind++) {
                double v[8];
                for (int i = 0; i < reps; i++)
                    v[i] = run_case(kind, threads, wfs[w], secs);
                r[kind] = bench_median(v, reps);
            }
            if (threads == 2 && w == 1)
                target = r[0] / r[1];
            EMIT("| %u | %.0f%% | %.1f M/s | %.1f M/s | %.1f M/s | %.2fx | %.2fx | %.1f |\n", threads,
                 wfs[w] * 100, r[0] / 1e6, r[1] / 1e6, r[2] / 1e6, r[0] / r[1], r[0] / r[2],
                 1e9 * threads / r[0]);
            static const char *const names[3] = {"mkrt RCU cache", "rwlock table", "mutex table"};
            for (int kind = 0; kind < 3; kind++)
                bench_csv_rowp(&csv, threads == 1 ? "1 thread" : "2 threads", wfs[w] * 100, names[kind],
                               r[kind] / 1e6, "M ops/s");
            printf("%u threads, %4.0f%% writes: mkrt %.1f M/s, rwlock %.1f M/s, mutex %.1f M/s\n", threads,
                   wfs[w] * 100, r[0] / 1e6, r[1] / 1e6, r[2] / 1e6);
            fflush(stdout);
        }
    EMIT("\n| target | ratio | met |\n|---|---|---|\n| 2 readers, 1%% writes: >= 3x the rwlock table | %.2fx | %s |\n",
         target, target >= 3 ? "yes" : "NO");
    if (bench_csv_close(&csv) != 0)
        return 1;
    printf("\n%s", report);
    char setup[512];
    snprintf(setup, sizeof setup, "%d hot keys; median of %d runs of %.1f s; a write replaces one key's plan; threads pinned to CPUs 0 and 1.", KEYS, reps, secs);
    if (bench_write_report(&opt, "make bench RECORD=1", "Plan cache: RCU lookups vs rwlock and mutex", machine, setup, report) != 0)
        return 1;
    return 0;
}
