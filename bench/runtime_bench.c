/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/runtime_bench.c - end to end: mkrt vs what a user would otherwise
 * write, in one run.
 *
 * Baseline: one mutex + condition variable queue per worker thread; a
 * producer sends each item to the worker that owns its out handle (out %
 * workers), so items writing one handle run in publish order - the same
 * guarantee mkrt gives for these ops (NOP, and ADD with in == out). Workers
 * take everything queued under the lock and run it.
 *
 * Throughput: P producers (1, 2) publish ITEMS items each in bursts of 64,
 * then wait for completion; ops NOP and ADD (h += seq over 1024 handles;
 * params unique, so nothing is pruned). Latency at light load: one item at
 * a time, publish then wait for its completion; p50 and p99 of 20000.
 * Workers: the pool 2 (the machine has 2 CPUs); mkrt its default, which
 * sizes itself from the CPUs the process has (mkrt_config::workers); the
 * report says how many that was.
 *
 *   runtime_bench [--quick] [--out FILE.md] [--csv FILE.csv]
 */
#include <stdatomic.h>
#include <stdbool.h>

#include "base/thread.h"
#include "bench_util.h"
#include "mkrt/runtime.h"

/* The pool's workers: 2 (the machine has 2 CPUs), or --threads N, which
 * also gives mkrt N workers (else its default). */
#define WORKERS_MAX 64
static unsigned workers = 2, mkrt_workers = 0;
#define HANDLES 1024
#define BURST 64

/* ---- baseline ------------------------------------------------------- */

typedef struct wq {
    mkrt__mutex mu;
    mkrt__cond cv, done_cv;
    mkrt_item *buf;
    size_t cap, head, len;
    uint64_t completed;
    bool stop;
} wq;

typedef struct baseline {
    wq q[WORKERS_MAX];
    mkrt__thread th[WORKERS_MAX];
    uint64_t cells[HANDLES];
} baseline;

static void run_item(uint64_t *cells, const mkrt_item *it)
{
    if (it->op == MKRT_OP_ADD)
        cells[it->out] = cells[it->in] + it->param;
}

typedef struct base_arg {
    baseline *b;
    unsigned id;
} base_arg;

static int base_worker_main(void *p)
{
    base_arg *a = p;
    wq *q = &a->b->q[a->id];
    mkrt_item local[4096];
    for (;;) {
        mkrt__mutex_lock(&q->mu);
        while (q->len == 0 && !q->stop)
            mkrt__cond_wait(&q->cv, &q->mu);
        if (q->len == 0 && q->stop) {
            mkrt__mutex_unlock(&q->mu);
            return 0;
        }
        size_t n = q->len < 4096 ? q->len : 4096;
        for (size_t i = 0; i < n; i++)
            local[i] = q->buf[(q->head + i) % q->cap];
        q->head = (q->head + n) % q->cap;
        q->len -= n;
        mkrt__cond_broadcast(&q->done_cv); /* room for producers */
        mkrt__mutex_unlock(&q->mu);
        for (size_t i = 0; i < n; i++)
            run_item(a->b->cells, &local[i]);
        mkrt__mutex_lock(&q->mu);
        q->completed += n;
        mkrt__cond_broadcast(&q->done_cv);
        mkrt__mutex_unlock(&q->mu);
    }
}

static base_arg base_args[WORKERS_MAX];

static baseline *base_start(void)
{
    baseline *b = calloc(1, sizeof *b);
    for (unsigned i = 0; i < workers; i++) {
        wq *q = &b->q[i];
        mkrt__mutex_init(&q->mu);
        mkrt__cond_init(&q->cv);
        mkrt__cond_init(&q->done_cv);
        q->cap = 1 << 16;
        q->buf = malloc(q->cap * sizeof *q->buf);
        base_args[i] = (base_arg){b, i};
        mkrt__thread_start(&b->th[i], base_worker_main, &base_args[i]);
    }
    return b;
}

/* Enqueue a burst: items go to the queue that owns their out handle. */
static void base_publish(baseline *b, const mkrt_item *items, size_t n, uint64_t sent[WORKERS_MAX])
{
    for (unsigned w = 0; w < workers; w++) {
        wq *q = &b->q[w];
        mkrt__mutex_lock(&q->mu);
        bool any = false;
        for (size_t i = 0; i < n; i++) {
            if (items[i].out % workers != w)
                continue;
            while (q->len == q->cap)
                mkrt__cond_wait(&q->done_cv, &q->mu);
            q->buf[(q->head + q->len) % q->cap] = items[i];
            q->len++;
            sent[w]++;
            any = true;
        }
        if (any)
            mkrt__cond_signal(&q->cv);
        mkrt__mutex_unlock(&q->mu);
    }
}

static void base_wait(baseline *b, const uint64_t target[WORKERS_MAX])
{
    for (unsigned w = 0; w < workers; w++) {
        wq *q = &b->q[w];
        mkrt__mutex_lock(&q->mu);
        while (q->completed < target[w])
            mkrt__cond_wait(&q->done_cv, &q->mu);
        mkrt__mutex_unlock(&q->mu);
    }
}

static void base_stop(baseline *b)
{
    for (unsigned w = 0; w < workers; w++) {
        mkrt__mutex_lock(&b->q[w].mu);
        b->q[w].stop = true;
        mkrt__cond_signal(&b->q[w].cv);
        mkrt__mutex_unlock(&b->q[w].mu);
        mkrt__thread_join(b->th[w]);
        free(b->q[w].buf);
    }
    free(b);
}

/* ---- runs ------------------------------------------------------------ */

typedef struct run_ctx {
    bool use_mkrt;
    mkrt_runtime *rt;
    baseline *base;
    uint32_t op;
    uint64_t items;
    _Atomic unsigned ready;
    _Atomic bool go;
    /* baseline: per-producer counts sent to each worker queue */
    uint64_t sent[2][WORKERS_MAX];
} run_ctx;

typedef struct prod_arg {
    run_ctx *c;
    unsigned id;
} prod_arg;

static int producer_main(void *p)
{
    prod_arg *a = p;
    run_ctx *c = a->c;
    mkrt_producer *mp = c->use_mkrt ? mkrt_producer_open(c->rt, NULL) : NULL;
    mkrt_item buf[BURST];
    atomic_fetch_add(&c->ready, 1);
    while (!atomic_load_explicit(&c->go, memory_order_acquire))
        ;
    uint32_t seq = a->id << 28;
    for (uint64_t done = 0; done < c->items; done += BURST) {
        for (int i = 0; i < BURST; i++, seq++) {
            uint32_t h = seq % HANDLES;
            buf[i] = (mkrt_item){c->op, h, h, seq};
        }
        if (c->use_mkrt)
            mkrt_publish(mp, buf, BURST, UINT64_MAX, NULL);
        else
            base_publish(c->base, buf, BURST, c->sent[a->id]);
    }
    if (c->use_mkrt) {
        uint64_t t;
        mkrt_fence(mp, &t);
        mkrt_wait(mp, t, UINT64_MAX);
        mkrt_producer_close(mp);
    }
    return 0;
}

/* Items per second; *cpu: CPU seconds of the process's threads (the
 * producers', the runtime's or the pool's) per second of wall time. */
static double throughput(bool use_mkrt, unsigned producers, uint32_t op, uint64_t items, double *cpu)
{
    run_ctx c = {.use_mkrt = use_mkrt, .op = op, .items = items};
    if (use_mkrt) {
        mkrt_config cfg = mkrt_config_default();
        cfg.cells = HANDLES;
        cfg.workers = mkrt_workers; /* 0: the default */
        mkrt_create(&cfg, &c.rt, NULL);
    } else {
        c.base = base_start();
    }
    mkrt__thread th[2];
    prod_arg args[2];
    for (unsigned i = 0; i < producers; i++) {
        args[i] = (prod_arg){&c, i};
        mkrt__thread_start(&th[i], producer_main, &args[i]);
    }
    while (atomic_load(&c.ready) < producers)
        ;
    const double c0 = bench_cpu_seconds(RUSAGE_SELF);
    uint64_t t0 = bench_now_ns();
    atomic_store_explicit(&c.go, true, memory_order_release);
    for (unsigned i = 0; i < producers; i++)
        mkrt__thread_join(th[i]);
    if (use_mkrt) {
        mkrt_drain(c.rt, UINT64_MAX);
    } else {
        uint64_t target[WORKERS_MAX] = {0};
        for (unsigned i = 0; i < producers; i++)
            for (unsigned w = 0; w < workers; w++)
                target[w] += c.sent[i][w];
        base_wait(c.base, target);
    }
    uint64_t t1 = bench_now_ns();
    *cpu = (bench_cpu_seconds(RUSAGE_SELF) - c0) / ((double)(t1 - t0) / 1e9);
    if (use_mkrt)
        mkrt_destroy(c.rt, UINT64_MAX, NULL);
    else
        base_stop(c.base);
    return (double)(items * producers) / ((double)(t1 - t0) / 1e9);
}

/* *cpu: CPU microseconds of the process per round trip. */
static void latency(bool use_mkrt, int rounds, double *p50, double *p99, double *cpu)
{
    double *v = malloc(sizeof(double) * (size_t)rounds);
    mkrt_runtime *rt = NULL;
    mkrt_producer *p = NULL;
    baseline *b = NULL;
    if (use_mkrt) {
        mkrt_config cfg = mkrt_config_default();
        cfg.cells = HANDLES;
        cfg.workers = mkrt_workers; /* 0: the default */
        mkrt_create(&cfg, &rt, NULL);
        p = mkrt_producer_open(rt, NULL);
    } else {
        b = base_start();
    }
    uint64_t sent[WORKERS_MAX] = {0};
    const double c0 = bench_cpu_seconds(RUSAGE_SELF);
    for (int r = 0; r < rounds; r++) {
        mkrt_item it = {MKRT_OP_ADD, (uint32_t)r % HANDLES, (uint32_t)r % HANDLES, (uint32_t)r};
        uint64_t t0 = bench_now_ns();
        if (use_mkrt) {
            uint64_t t;
            mkrt_publish(p, &it, 1, UINT64_MAX, NULL);
            mkrt_fence(p, &t);
            mkrt_wait(p, t, UINT64_MAX);
        } else {
            base_publish(b, &it, 1, sent);
            base_wait(b, sent);
        }
        v[r] = (double)(bench_now_ns() - t0);
    }
    *cpu = (bench_cpu_seconds(RUSAGE_SELF) - c0) * 1e6 / rounds;
    qsort(v, (size_t)rounds, sizeof *v, bench_cmp_double);
    *p50 = v[rounds / 2];
    *p99 = v[rounds * 99 / 100];
    free(v);
    if (use_mkrt) {
        mkrt_producer_close(p);
        mkrt_destroy(rt, UINT64_MAX, NULL);
    } else {
        base_stop(b);
    }
}

int main(int argc, char **argv)
{
    bench_opts opt;
    bench_opts_init(&opt, argc, argv);
    unsigned threads = 0;
    for (int i = 1; i < argc; i++)
        if (!bench_common_arg(argc, argv, &i, &opt) && !bench_threads_arg(argc, argv, &i, &threads)) {
            fprintf(stderr, "usage: %s " BENCH_USAGE " [--threads N]\n", argv[0]);
            return 2;
        }
    if (threads != 0)
        workers = mkrt_workers = threads;
    const bool quick = opt.quick;
    bench_csv csv;
    if (bench_csv_open(&csv, opt.csv, "runtime") != 0)
        return 1;
    const int reps = quick ? 1 : 5;
    const uint64_t items = quick ? 200000 : 2000000;
    char machine[256], report[4096];
    size_t len = 0;
    bench_machine(machine, sizeof machine);
#define EMIT(...) len += (size_t)snprintf(report + len, sizeof report - len, __VA_ARGS__)
    printf("runtime_bench: %llu items per producer, median of %d; %s\n", (unsigned long long)items,
           reps, machine);
    EMIT("| op | producers | mkrt | mutex+condvar pool | ratio | mkrt CPU / wall | pool CPU / wall |\n"
         "|---|---|---|---|---|---|---|\n");
    double min_ratio = 1e9;
    static const uint32_t ops[] = {MKRT_OP_NOP, MKRT_OP_ADD};
    for (int oi = 0; oi < 2; oi++)
        for (unsigned p = 1; p <= 2; p++) {
            double m[8], bl[8], mc[8], bc[8];
            for (int r = 0; r < reps; r++) {
                m[r] = throughput(true, p, ops[oi], items, &mc[r]);
                bl[r] = throughput(false, p, ops[oi], items, &bc[r]);
            }
            double mm = bench_median(m, reps), bb = bench_median(bl, reps);
            double mcpu = bench_median(mc, reps), bcpu = bench_median(bc, reps);
            min_ratio = mm / bb < min_ratio ? mm / bb : min_ratio;
            EMIT("| %s | %u | %.1f M/s | %.1f M/s | %.2fx | %.2f | %.2f |\n", oi ? "ADD" : "NOP", p, mm / 1e6,
                 bb / 1e6, mm / bb, mcpu, bcpu);
            const char *tcase = oi ? "throughput ADD" : "throughput NOP";
            bench_csv_rowp(&csv, tcase, p, "mkrt", mm / 1e6, "M items/s");
            bench_csv_rowp(&csv, tcase, p, "mutex+condvar pool", bb / 1e6, "M items/s");
            const char *ccase = oi ? "cpu ADD" : "cpu NOP";
            bench_csv_rowp(&csv, ccase, p, "mkrt", mcpu, "CPU s per s");
            bench_csv_rowp(&csv, ccase, p, "mutex+condvar pool", bcpu, "CPU s per s");
            printf("%s %u producer(s): mkrt %.1f M/s, baseline %.1f M/s\n", oi ? "ADD" : "NOP", p, mm / 1e6, bb / 1e6);
            fflush(stdout);
        }
    int rounds = quick ? 2000 : 20000;
    double m50, m99, b50, b99, mcpu, bcpu;
    latency(true, rounds, &m50, &m99, &mcpu);
    latency(false, rounds, &b50, &b99, &bcpu);
    bench_csv_row(&csv, "latency", "cpu", "mkrt", mcpu, "CPU us per round trip");
    bench_csv_row(&csv, "latency", "cpu", "mutex+condvar pool", bcpu, "CPU us per round trip");
    bench_csv_row(&csv, "latency", "p50", "mkrt", m50 / 1e3, "us");
    bench_csv_row(&csv, "latency", "p50", "mutex+condvar pool", b50 / 1e3, "us");
    bench_csv_row(&csv, "latency", "p99", "mkrt", m99 / 1e3, "us");
    bench_csv_row(&csv, "latency", "p99", "mutex+condvar pool", b99 / 1e3, "us");
    if (bench_csv_close(&csv) != 0)
        return 1;
    EMIT("\n| latency, one item at a time | mkrt | mutex+condvar pool |\n|---|---|---|\n"
         "| p50 | %.1f us | %.1f us |\n| p99 | %.1f us | %.1f us |\n| CPU per round trip | %.1f us | %.1f us |\n",
         m50 / 1e3, b50 / 1e3, m99 / 1e3, b99 / 1e3, mcpu, bcpu);
    EMIT("\n| target | value | met |\n|---|---|---|\n"
         "| issue 13: every row >= 1.5x the baseline | worst %.2fx | %s |\n"
         "| the first version's: every row >= 3x the baseline | worst %.2fx | %s |\n"
         "| lower p99 latency than the baseline | %.1f us vs %.1f us | %s |\n",
         min_ratio, min_ratio >= 1.5 ? "yes" : "NO", min_ratio, min_ratio >= 3 ? "yes" : "NO", m99 / 1e3,
         b99 / 1e3, m99 < b99 ? "yes" : "NO");
    printf("\n%s", report);
    char setup[1024];
    mkrt_runtime *probe = NULL;
    mkrt_stats ps = {0};
    mkrt_config pc = mkrt_config_default();
    pc.cells = HANDLES;
    pc.workers = mkrt_workers;
    if (mkrt_create(&pc, &probe, NULL) == MKRT_OK) {
        mkrt_stats_read(probe, &ps);
        mkrt_destroy(probe, UINT64_MAX, NULL);
    }
    snprintf(setup, sizeof setup, "%llu items per producer in bursts of %d; the pool with %u workers, mkrt with %s (%u here); median of %d runs; latency over %d single-item round trips. CPU / wall: CPU seconds of all the process's threads (producers included; getrusage RUSAGE_SELF) per second of the run: above the threads doing work means spinning.", (unsigned long long)items, BURST, workers, mkrt_workers ? "--threads workers" : "its default worker count", ps.workers, reps, rounds);
    if (bench_write_report(&opt, "make bench RECORD=1", "Runtime end to end: mkrt vs a mutex+condvar queue feeding a thread pool", machine, setup, report) != 0)
        return 1;
    return 0;
}
