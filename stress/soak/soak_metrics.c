/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/soak/soak_metrics.c - what mkrt-soak measures every --interval,
 * and the drift verdicts at the end.
 *
 * Every interval the sampler thread prints one line and records one row
 * (CSV as it goes with --csv; every row again in the --json file at the
 * end): the throughput (items completed, that is executed + pruned +
 * failed, per second in the interval), the latency p50/p99/p999 of the
 * interval (publish to completion as the workloads see it: a classic
 * session's oldest unwaited batch until its mkrt_wait returned, a batch
 * until mkrt_wait or a traversal until mkrt_quiesce; a histogram with 4
 * buckets per power of two, so within 19%), RSS, open fds, threads, and
 * the items published, executed and failed so far. The sampler sleeps on
 * the monotonic clock (stress_sleep_until): a step of the wall clock
 * neither skips nor doubles a row. A row it could not take on time (a
 * stopped or starved process) is skipped, not taken late in a burst.
 *
 * Drift (soak_metrics_finish), after the warm-up (--warmup, default the
 * first fifth of the run, at least 10 s): the median of the first quarter
 * of a metric's points against the median of its last quarter, and the
 * Theil-Sen slope (the median of the pairwise slopes) per hour:
 *   rss        (interval rows) FAIL when it grew by more than max(16 MiB, 25%)
 *              (malloc arenas grow for minutes: 8.7 -> 20 MiB in a 120 s run)
 *   fds        (interval rows) FAIL when it grew by more than max(4, 25%)
 *   threads    (interval rows) FAIL when it grew by more than max(4, 25%)
 *   throughput (rounds) FAIL when it fell below a third of the first quarter's
 *   p99        (rounds) FAIL when it rose above 4x the first quarter's
 * Throughput and p99 are taken per round (items completed / the round's
 * wall time; the p99 of the latencies the round recorded) and divided by
 * the median of the same workload on the same backend over the first
 * half of the judged rounds: the workloads differ by orders of magnitude,
 * and the mix within an interval says nothing about drift.
 * Rounds are keyed by workload, backend and race (a race round ends
 * early). Fewer than 8 intervals or 20 rounds after the warm-up: "not
 * judged" (a short run); under a sanitizer RSS, throughput and p99 are
 * reported, not judged. The leak checks between
 * rounds (soak_env.c) are exact; these catch what grows slowly while
 * runtimes are alive, and slowdowns. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "soak.h"

/* ---- the latency histogram ------------------------------------------------ */

#define LAT_BUCKETS 256
static _Atomic uint64_t lat_hist[LAT_BUCKETS];
static _Atomic uint64_t round_hist[LAT_BUCKETS]; /* the same, per round */

static unsigned lat_bucket(uint64_t ns)
{
    if (ns < 16)
        return (unsigned)ns;
    unsigned e = 63u - (unsigned)__builtin_clzll(ns); /* 4.. */
    unsigned sub = (unsigned)(ns >> (e - 2)) & 3u;
    unsigned b = 16 + (e - 4) * 4 + sub;
    return b < LAT_BUCKETS ? b : LAT_BUCKETS - 1;
}

static double lat_value(unsigned b) /* the bucket's middle */
{
    if (b < 16)
        return (double)b;
    unsigned e = (b - 16) / 4 + 4, sub = (b - 16) % 4;
    double lo = ldexp(1.0, (int)e) * (1.0 + sub / 4.0);
    return lo * (1.0 + 1.0 / 8.0);
}

void soak_latency_record(uint64_t ns)
{
    /* relaxed: a statistic, taken by the sampler's exchange. */
    atomic_fetch_add_explicit(&lat_hist[lat_bucket(ns)], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&round_hist[lat_bucket(ns)], 1, memory_order_relaxed);
}

/* ---- the rows ----------------------------------------------------------------- */

typedef struct row {
    double t, rate, p50_us, p99_us, p999_us, rss_mib;
    int fds, threads;
    uint64_t published, executed, failed, pruned, samples, errors;
} row;

#define ROWS_MAX 100000
static row *rows;
static size_t nrows;
static mkrt__mutex rows_lock; /* made once: locks_init() */
bool g_metrics_quiet;
static uint64_t warm_at;
static uint64_t rss_max;
static FILE *csv;
static mkrt__thread sampler; /* stays here until joined */
static bool sampler_running;
static _Atomic bool stop_flag; /* soak_metrics_stop -> the sampler */

/* C11 has no static mutex initialiser: rows_lock is made on its first
 * use (soak_metrics_start, or a round's record). */
static mkrt__once_flag locks_once = MKRT__ONCE_INIT;

static void locks_init(void)
{
    if (mkrt__mutex_init(&rows_lock) != 0) {
        fprintf(stderr, "soak: cannot create the metrics lock\n");
        abort();
    }
}

static void rows_lock_take(void)
{
    mkrt__call_once(&locks_once, locks_init);
    mkrt__mutex_lock(&rows_lock);
}

/* Per round: its workload and backend, throughput and p99 (the drift of
 * throughput and latency is judged on these, normalised per workload and
 * backend, so that the mix of workloads in an interval does not count). */
typedef struct round_rec {
    double t, rate, p99_us;
    int key; /* (workload * 3 + backend) * 2 + race */
    uint64_t samples;
} round_rec;

#define ROUNDS_MAX ROWS_MAX
static round_rec *recs;
static size_t nrecs;
static uint64_t round_t0, round_done0;
_Atomic int g_round_backend;
_Atomic bool g_round_race;

void soak_round_begin(void)
{
    for (unsigned b = 0; b < LAT_BUCKETS; b++)
        /* relaxed: as in soak_latency_record. */
        atomic_store_explicit(&round_hist[b], 0, memory_order_relaxed);
    uint64_t e, f, p;
    soak_live_totals(&e, &f, &p);
    round_done0 = e + f + p;
    round_t0 = stress_now_ns();
}

static double pct(const uint64_t *h, uint64_t total, double q);

void soak_round_end(int workload)
{
    uint64_t now = stress_now_ns(), e, f, p, h[LAT_BUCKETS], total = 0;
    soak_live_totals(&e, &f, &p);
    for (unsigned b = 0; b < LAT_BUCKETS; b++) {
        /* relaxed: as in soak_latency_record; the round's threads are joined. */
        h[b] = atomic_load_explicit(&round_hist[b], memory_order_relaxed);
        total += h[b];
    }
    int bk = atomic_load(&g_round_backend);
    round_rec r = {(double)(now - t_start) / 1e9,
                   now > round_t0 && e + f + p >= round_done0
                       ? (double)(e + f + p - round_done0) / ((double)(now - round_t0) / 1e9)
                       : 0.0,
                   pct(h, total, 0.99) / 1e3,
                   (workload * 3 + (bk == MKRT_BACKEND_SIM ? 1 : bk == MKRT_BACKEND_CUDA ? 2 : 0)) * 2 +
                       atomic_load(&g_round_race),
                   total};
    rows_lock_take();
    if (recs != NULL && nrecs < ROUNDS_MAX)
        recs[nrecs++] = r;
    mkrt__mutex_unlock(&rows_lock);
}

uint64_t soak_metrics_rss_max(void)
{
    rows_lock_take();
    uint64_t m = rss_max;
    mkrt__mutex_unlock(&rows_lock);
    return m;
}

static double pct(const uint64_t *h, uint64_t total, double q)
{
    if (total == 0)
        return 0.0;
    uint64_t want = (uint64_t)ceil(q * (double)total), seen = 0;
    for (unsigned b = 0; b < LAT_BUCKETS; b++) {
        seen += h[b];
        if (seen >= want && h[b] != 0)
            return lat_value(b);
    }
    return lat_value(LAT_BUCKETS - 1);
}

static void take_row(uint64_t now, uint64_t *last_ns, uint64_t *last_done)
{
    uint64_t h[LAT_BUCKETS], total = 0;
    for (unsigned b = 0; b < LAT_BUCKETS; b++) {
        /* relaxed: as in soak_latency_record. */
        h[b] = atomic_exchange_explicit(&lat_hist[b], 0, memory_order_relaxed);
        total += h[b];
    }
    row r;
    memset(&r, 0, sizeof r);
    r.t = (double)(now - t_start) / 1e9;
    soak_live_totals(&r.executed, &r.failed, &r.pruned);
    r.published = atomic_load(&g_items);
    uint64_t done = r.executed + r.failed + r.pruned;
    double dt = (double)(now - *last_ns) / 1e9;
    r.rate = dt > 0 && done >= *last_done ? (double)(done - *last_done) / dt : 0.0;
    *last_ns = now;
    *last_done = done;
    r.samples = total;
    r.p50_us = pct(h, total, 0.50) / 1e3;
    r.p99_us = pct(h, total, 0.99) / 1e3;
    r.p999_us = pct(h, total, 0.999) / 1e3;
    if (sabotage(SAB_RSS_DRIFT) || (opt.sabotage == SAB_RSS_DRIFT && now >= warm_at)) {
        static char *keep[4096];
        static unsigned nkeep;
        if (nkeep < 4096 && (keep[nkeep] = malloc(4u << 20)) != NULL)
            memset(keep[nkeep++], 1, 4u << 20);
    }
    proc_lock_take();
    uint64_t rss = rss_bytes();
    r.fds = open_fds();
    r.threads = thread_count();
    proc_lock_give();
    r.rss_mib = (double)rss / 1048576.0;
    r.errors = atomic_load(&g_errors);
    if (!g_metrics_quiet)
        printf("soak: %7.1fs rate %8.0f/s lat p50 %8.1fus p99 %9.1fus p999 %9.1fus rss %6.1fMiB fds %3d "
           "threads %3d published %llu executed %llu failed %llu rounds %llu errors %llu\n",
           r.t, r.rate, r.p50_us, r.p99_us, r.p999_us, r.rss_mib, r.fds, r.threads,
           (unsigned long long)r.published, (unsigned long long)r.executed, (unsigned long long)r.failed,
           (unsigned long long)atomic_load(&g_rounds_done), (unsigned long long)r.errors);
    fflush(stdout);
    if (csv != NULL) {
        fprintf(csv, "%.1f,%.1f,%.1f,%.1f,%.1f,%.2f,%d,%d,%llu,%llu,%llu,%llu,%llu,%llu\n", r.t, r.rate,
                r.p50_us, r.p99_us, r.p999_us, r.rss_mib, r.fds, r.threads,
                (unsigned long long)r.published, (unsigned long long)r.executed,
                (unsigned long long)r.failed, (unsigned long long)r.pruned, (unsigned long long)r.samples,
                (unsigned long long)r.errors);
        fflush(csv);
    }
    rows_lock_take();
    if (rss > rss_max)
        rss_max = rss;
    if (nrows < ROWS_MAX)
        rows[nrows++] = r;
    mkrt__mutex_unlock(&rows_lock);
}

static int sampler_main(void *arg)
{
    (void)arg;
    uint64_t last_ns = t_start, last_done = 0;
    uint64_t period = (uint64_t)opt.interval * SEC_NS;
    uint64_t next = stress_next_tick(t_start, period, t_start);
    while (!stress_sleep_until(&stop_flag, next)) {
        uint64_t now = stress_now_ns();
        take_row(now, &last_ns, &last_done);
        next = stress_next_tick(next, period, now);
    }
    return 0;
}

void soak_metrics_start(uint64_t warm_at_ns)
{
    warm_at = warm_at_ns;
    rows = calloc(ROWS_MAX, sizeof *rows);
    recs = calloc(ROWS_MAX, sizeof *recs);
    if (opt.csv != NULL) {
        csv = fopen(opt.csv, "w");
        if (csv == NULL)
            soak_error("cannot write --csv %s", opt.csv);
        else
            fprintf(csv, "t_s,throughput_per_s,p50_us,p99_us,p999_us,rss_mib,fds,threads,published,"
                         "executed,failed,pruned,latency_samples,errors\n");
    }
    if (opt.interval == 0 || rows == NULL)
        return;
    mkrt__call_once(&locks_once, locks_init);
    sampler_running = mkrt__thread_start(&sampler, sampler_main, NULL) == 0;
}

void soak_metrics_stop(void)
{
    if (!sampler_running)
        return;
    /* relaxed: see stress_sleep_until; the join orders the rows. */
    atomic_store_explicit(&stop_flag, true, memory_order_relaxed);
    mkrt__thread_join(sampler);
    sampler_running = false;
}

/* ---- drift ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    if (n == 0)
        return 0.0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Theil-Sen: the median of the pairwise slopes, per hour (at most 400
 * points, evenly picked). */
static double slope_per_hour(const double *t, const double *y, size_t n)
{
    size_t step = n > 400 ? (n + 399) / 400 : 1, m = 0;
    double *s = malloc(sizeof *s * (n / step + 1) * (n / step + 1) / 2 + sizeof *s);
    if (s == NULL)
        return 0.0;
    for (size_t i = 0; i < n; i += step)
        for (size_t j = i + step; j < n; j += step)
            if (t[j] > t[i])
                s[m++] = (y[j] - y[i]) / (t[j] - t[i]);
    double r = median(s, m) * 3600.0;
    free(s);
    return r;
}

typedef struct drift {
    const char *metric, *unit, *rule;
    double first, last, slope;
    const char *verdict;
    size_t n;
    bool judged;
} drift;

enum { D_RSS, D_FDS, D_THREADS, D_RATE, D_P99, D_N };

static double field(const row *r, int d)
{
    return d == D_RSS ? r->rss_mib : d == D_FDS ? (double)r->fds : (double)r->threads;
}

/* The series a metric is judged on, after the warm-up: RSS, fds and
 * threads from the interval rows; throughput and p99 from the rounds,
 * each divided by the median of its workload and backend over the first
 * half of the judged rounds (rounds with fewer than 20 latency samples
 * have no p99; a pair with no round in the first half is left out). */
static size_t series(int d, double *t, double *y)
{
    size_t n = 0;
    if (d == D_RSS || d == D_FDS || d == D_THREADS) {
        for (size_t k = 0; k < nrows; k++)
            if (t_start + (uint64_t)(rows[k].t * 1e9) >= warm_at) {
                t[n] = rows[k].t;
                y[n++] = field(&rows[k], d);
            }
        return n;
    }
    size_t from = 0, m;
    while (from < nrecs && t_start + (uint64_t)(recs[from].t * 1e9) < warm_at)
        from++;
    m = nrecs - from;
    double ref[W_COUNT * 6];
    double *tmp = malloc(sizeof *tmp * (m + 1));
    if (tmp == NULL)
        return 0;
    for (int key = 0; key < W_COUNT * 6; key++) {
        size_t c = 0;
        for (size_t k = from; k < from + m / 2; k++) {
            const round_rec *r = &recs[k];
            if (r->key == key && (d == D_RATE ? r->rate > 0 : r->samples >= 20))
                tmp[c++] = d == D_RATE ? r->rate : r->p99_us;
        }
        ref[key] = c > 0 ? median(tmp, c) : 0.0;
    }
    free(tmp);
    for (size_t k = from; k < nrecs; k++) {
        const round_rec *r = &recs[k];
        double v = d == D_RATE ? r->rate : r->p99_us;
        if (ref[r->key] <= 0 || (d == D_RATE ? r->rate <= 0 : r->samples < 20))
            continue;
        t[n] = r->t;
        y[n++] = v / ref[r->key];
    }
    return n;
}

static void json_out(FILE *f, const drift *d, bool pass, double elapsed_s)
{
    fprintf(f, "{\n  \"tool\": \"mkrt-soak\",\n  \"config\": {\"seconds\": %u, \"interval\": %u, "
               "\"seed\": %llu, \"producers\": %u, \"workloads\": [",
            opt.seconds, opt.interval, (unsigned long long)opt.seed, opt.producers);
    const char *sep = "";
    for (int w = 0; w < W_COUNT; w++)
        if (opt.workloads & (1u << w)) {
            fprintf(f, "%s\"%s\"", sep, soak_workload_names[w]);
            sep = ", ";
        }
    static const char *const fault_names[] = {"alloc", "hang", "race", "device"};
    static const char *const backend_names[] = {"cpu", "sim", "cuda"};
    fprintf(f, "], \"faults\": [");
    sep = "";
    for (int i = 0; i < 4; i++)
        if (opt.faults & (1u << i)) {
            fprintf(f, "%s\"%s\"", sep, fault_names[i]);
            sep = ", ";
        }
    fprintf(f, "], \"backends\": [");
    sep = "";
    for (int i = 0; i < 3; i++)
        if (opt.backends & (1u << i)) {
            fprintf(f, "%s\"%s\"", sep, backend_names[i]);
            sep = ", ";
        }
    fprintf(f, "]},\n");
    fprintf(f, "  \"elapsed_s\": %.1f,\n  \"intervals\": [\n", elapsed_s);
    for (size_t i = 0; i < nrows; i++) {
        const row *r = &rows[i];
        fprintf(f, "    {\"t_s\": %.1f, \"throughput_per_s\": %.1f, \"p50_us\": %.1f, \"p99_us\": %.1f, "
                   "\"p999_us\": %.1f, \"rss_mib\": %.2f, \"fds\": %d, \"threads\": %d, \"published\": %llu, "
                   "\"executed\": %llu, \"failed\": %llu, \"pruned\": %llu, \"latency_samples\": %llu, "
                   "\"errors\": %llu}%s\n",
                r->t, r->rate, r->p50_us, r->p99_us, r->p999_us, r->rss_mib, r->fds, r->threads,
                (unsigned long long)r->published, (unsigned long long)r->executed,
                (unsigned long long)r->failed, (unsigned long long)r->pruned,
                (unsigned long long)r->samples, (unsigned long long)r->errors, i + 1 < nrows ? "," : "");
    }
    fprintf(f, "  ],\n  \"workloads\": [\n");
    sep = "";
    for (int w = 0; w < W_COUNT; w++) {
        if (!(opt.workloads & (1u << w)))
            continue;
        uint64_t rounds = atomic_load(&g_wstats[w].rounds), errors = atomic_load(&g_wstats[w].errors);
        fprintf(f, "%s    {\"name\": \"%s\", \"rounds\": %llu, \"errors\": %llu, \"skipped\": %llu, "
                   "\"verdict\": \"%s\"}",
                sep, soak_workload_names[w], (unsigned long long)rounds, (unsigned long long)errors,
                (unsigned long long)atomic_load(&g_wstats[w].skipped),
                errors ? "FAIL" : rounds ? "PASS" : "NOT RUN");
        sep = ",\n";
    }
    fprintf(f, "\n  ],\n  \"drift\": [\n");
    for (int i = 0; i < D_N; i++)
        fprintf(f, "    {\"metric\": \"%s\", \"unit\": \"%s\", \"points\": %zu, \"first_quarter_median\": %.3f, "
                   "\"last_quarter_median\": %.3f, \"slope_per_hour\": %.3f, \"rule\": \"%s\", "
                   "\"verdict\": \"%s\"}%s\n",
                d[i].metric, d[i].unit, d[i].n, d[i].first, d[i].last, d[i].slope, d[i].rule,
                d[i].judged ? d[i].verdict : "not judged", i + 1 < D_N ? "," : "");
    fprintf(f, "  ],\n  \"errors\": %llu,\n  \"verdict\": \"%s\"\n}\n",
            (unsigned long long)atomic_load(&g_errors), pass ? "PASS" : "FAIL");
}

bool soak_metrics_finish(double elapsed_s, bool pass_so_far)
{
    drift d[D_N] = {
        {"rss", "MiB", "FAIL if last - first > max(16 MiB, 25% of first)", 0, 0, 0, "ok", 0, false},
        {"fds", "fds", "FAIL if last - first > max(4, 25% of first)", 0, 0, 0, "ok", 0, false},
        {"threads", "threads", "FAIL if last - first > max(4, 25% of first)", 0, 0, 0, "ok", 0, false},
        {"throughput", "x", "per round, / its workload+backend's early median; FAIL if last < first / 3", 0, 0,
         0, "ok", 0, false},
        {"p99", "x", "per round, / its workload+backend's early median; FAIL if last > 4 x first", 0, 0, 0,
         "ok", 0, false},
    };
    rows_lock_take();
    size_t cap = (nrows > nrecs ? nrows : nrecs) + 1;
    bool ok = true;
    double *t = malloc(sizeof *t * cap), *y = malloc(sizeof *y * cap), *tmp = malloc(sizeof *tmp * cap);
    for (int i = 0; t != NULL && y != NULL && tmp != NULL && i < D_N; i++) {
        size_t n = series(i, t, y), q = n / 4;
        d[i].n = n;
        d[i].judged = n >= (i < D_RATE ? 8u : 20u) && !(i >= D_RATE && SOAK_SANITIZED);
        if (!d[i].judged)
            continue;
        memcpy(tmp, y, sizeof *y * q);
        d[i].first = median(tmp, q);
        memcpy(tmp, y + n - q, sizeof *y * q);
        d[i].last = median(tmp, q);
        d[i].slope = slope_per_hour(t, y, n);
        double f = d[i].first, l = d[i].last;
        bool bad = i == D_RSS       ? l - f > fmax(16.0, 0.25 * f)
                   : i == D_FDS     ? l - f > fmax(4.0, 0.25 * f)
                   : i == D_THREADS ? l - f > fmax(4.0, 0.25 * f)
                   : i == D_RATE    ? l < f / 3.0
                                    : l > 4.0 * f;
        if (bad && i == D_RSS && SOAK_SANITIZED)
            d[i].verdict = "grew (not judged under a sanitizer)";
        else if (bad) {
            d[i].verdict = "FAIL";
            ok = false;
        }
    }
    FILE *out = g_metrics_quiet ? NULL : stdout;
    if (out != NULL)
        fprintf(out, "soak: drift after the warm-up (%.0f s): first vs last quarter medians, Theil-Sen slope\n",
                (double)(warm_at - t_start) / 1e9);
    for (int i = 0; i < D_N; i++) {
        if (out == NULL && !(d[i].judged && strcmp(d[i].verdict, "FAIL") == 0))
            continue; /* a quiet rank tells its failures only */
        if (d[i].judged)
            printf("soak:   %-10s first %9.2f last %9.2f %s, slope %+.2f %s/h over %zu %s (%s): %s\n",
                   d[i].metric, d[i].first, d[i].last, d[i].unit, d[i].slope, d[i].unit, d[i].n,
                   i < D_RATE ? "intervals" : "rounds", d[i].rule, d[i].verdict);
        else if (i >= D_RATE && SOAK_SANITIZED)
            printf("soak:   %-10s not judged under a sanitizer (%zu rounds)\n", d[i].metric, d[i].n);
        else
            printf("soak:   %-10s not judged: %zu %s after the warm-up, %s needed (a longer --seconds%s)\n",
                   d[i].metric, d[i].n, i < D_RATE ? "intervals" : "rounds", i < D_RATE ? "8" : "20",
                   i < D_RATE ? " or a shorter --interval" : "");
    }
    if (opt.json != NULL) {
        FILE *f = fopen(opt.json, "w");
        if (f == NULL) {
            fprintf(stderr, "soak: cannot write --json %s\n", opt.json);
            ok = false;
        } else {
            json_out(f, d, pass_so_far && ok, elapsed_s);
            fclose(f);
        }
    }
    mkrt__mutex_unlock(&rows_lock);
    if (csv != NULL)
        fclose(csv);
    csv = NULL;
    free(t);
    free(y);
    free(tmp);
    return ok;
}
