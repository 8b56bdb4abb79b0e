/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/peer_bench.c - mkrt side by side with the task runtimes a user
 * would otherwise reach for, on the same dependency-ordered workloads, in
 * one run:
 *
 *   OpenMP tasks with depend clauses (the compiler's runtime: libgomp with
 *   gcc), and StarPU 1.3 (CPU workers only; one data handle per cell,
 *   registered and unregistered outside the timed region).
 *
 * Every item is an ADD on 64-bit cells, out = in + param, with the
 * sequential semantics of publish order: a later item that reads a cell
 * an earlier one writes (or writes a cell an earlier one reads or writes)
 * runs after it. That is mkrt's ordering contract, OpenMP's depend(in:
 * in) depend(inout: out), and StarPU's sequential consistency on handles
 * (R on in, W on out). Params are unique, so mkrt prunes nothing. Every
 * runtime's cells are compared with a sequential run: a mismatch stops
 * the benchmark with exit status 1.
 *
 * Workloads (N items, 1M; --quick 64K):
 *   independent     item i: cell i += param (N cells)
 *   chains, step    1024 chains (cell c += param), published step by step:
 *                   every step of all chains, then the next (wide layers)
 *   chains, chain   the same items published one chain at a time (each
 *                   chain's items form a run of one-item layers)
 *   random          out = in + param over 64K cells, in and out random
 * published in chunks of 1024 items (OpenMP and StarPU: one task per
 * item, submitted in the same order). mkrt runs with its default worker
 * count and with 1 and 2 workers, the three back to back in each round
 * (the target: the default is at least 0.95x the best of them, compared
 * round by round: where the default is one of the counts, as on 2 CPUs,
 * a ratio of medians would only measure the machine's drift); OpenMP and
 * StarPU with 2 threads/workers. mkrt's timed runs publish the workload
 * MK_PASSES times in a row into one runtime (its results checked against
 * as many sequential runs): one pass takes it milliseconds.
 * StarPU's per-task cost (microseconds) would make 1M items take minutes
 * and one handle per cell of 1M cells takes gigabytes, so it runs N/16
 * items of each workload (chains 1024 x N/16K) and its figure is a rate
 * like the others.
 *
 * Latency: one item at a time, submit then wait for it, p50 and p99 of
 * ROUNDS round trips, each runtime in a fresh process (this binary,
 * re-executed with --latency-child), so no thread is still spinning from
 * an earlier measurement.
 *
 *   peer_bench [--quick] [--out FILE.md] [--csv FILE.csv] [--mkrt-only]
 *
 * --mkrt-only measures mkrt's throughput alone (a development aid: it is
 * how the CPU pool's thresholds were swept, backend/cpu_pool.c).
 *
 * Built with -fopenmp when the compiler has it, and with StarPU when
 * pkg-config finds starpu-1.3 (Makefile); a missing peer is reported as
 * "skipped" and the rest runs.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "bench_util.h"
#include "mkrt/runtime.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef HAVE_STARPU
#include <starpu.h>
#endif

#define CHAINS 1024u
#define RANDOM_CELLS 65536u
#define CHUNK 1024u
#define PEER_THREADS 2
#define STARPU_SCALE 16u
#define NWORK 4

enum { W_INDEPENDENT, W_STEP, W_CHAIN, W_RANDOM };
static const char *const wl_names[NWORK] = {"independent", "chains, step-major", "chains, chain-major",
                                            "random conflicts (64K cells)"};

typedef struct workload {
    int kind;
    mkrt_item *items;
    size_t n;
    uint32_t cells;
    uint64_t *expect;    /* the sequential result */
    uint64_t *expect_mk; /* the sequential result of MK_PASSES runs in a row */
} workload;

/* mkrt's timed runs publish the workload this many times in a row into one
 * runtime: one pass takes it 5-10 ms, where single runs on the
 * development VMs fell in two modes (about 115 and 160 M items/s) whatever
 * the configuration; 8 passes average them out. Its rates are items over
 * time like every other figure here. */
#define MK_PASSES 8

static void die(const char *what)
{
    fprintf(stderr, "peer_bench: %s\n", what);
    exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (p == NULL)
        die("out of memory");
    return p;
}

/* splitmix64: a fixed sequence, the same in every process. */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The cells after `passes` sequential runs of w's items, from zero. */
static uint64_t *run_sequential(const workload *w, int passes)
{
    uint64_t *cells = xcalloc(w->cells, sizeof *cells);
    for (int pass = 0; pass < passes; pass++)
        for (size_t k = 0; k < w->n; k++)
            cells[w->items[k].out] = cells[w->items[k].in] + w->items[k].param;
    return cells;
}

static void build(workload *w, int kind, size_t n)
{
    w->kind = kind;
    w->n = n;
    w->items = xcalloc(n, sizeof *w->items);
    uint64_t seed = 42;
    size_t len = n / CHAINS; /* steps per chain */
    w->cells = kind == W_INDEPENDENT ? (uint32_t)n : kind == W_RANDOM ? RANDOM_CELLS : CHAINS;
    for (size_t k = 0; k < n; k++) {
        uint32_t in, out, param = (uint32_t)k + 1;
        switch (kind) {
        case W_INDEPENDENT:
            in = out = (uint32_t)k;
            break;
        case W_STEP: /* k = step * CHAINS + chain */
            in = out = (uint32_t)(k % CHAINS);
            break;
        case W_CHAIN: /* k = chain * len + step */
            in = out = (uint32_t)(k / len);
            break;
        default:
            in = (uint32_t)(next_rand(&seed) % RANDOM_CELLS);
            out = (uint32_t)(next_rand(&seed) % RANDOM_CELLS);
            break;
        }
        w->items[k] = (mkrt_item){MKRT_OP_ADD, in, out, param};
    }
    w->expect = run_sequential(w, 1);
    w->expect_mk = run_sequential(w, MK_PASSES);
}

static void free_workload(workload *w)
{
    free(w->items);
    free(w->expect);
    free(w->expect_mk);
}

static void check_against(const workload *w, const uint64_t *expect, int passes, const uint64_t *cells,
                          const char *impl)
{
    for (uint32_t c = 0; c < w->cells; c++) {
        if (cells[c] != expect[c]) {
            fprintf(stderr,
                    "peer_bench: RESULT MISMATCH: %s on \"%s\" (%zu items, %d pass(es)): cell %u = "
                    "%llu, the sequential run gives %llu\n",
                    impl, wl_names[w->kind], w->n, passes, c, (unsigned long long)cells[c],
                    (unsigned long long)expect[c]);
            exit(1);
        }
    }
}

static void check(const workload *w, const uint64_t *cells, const char *impl)
{
    check_against(w, w->expect, 1, cells, impl);
}

/* ---- mkrt ------------------------------------------------------------ */

static mkrt_runtime *mkrt_start(uint32_t workers, uint32_t cells)
{
    mkrt_config cfg = mkrt_config_default();
    cfg.backend = MKRT_BACKEND_CPU;
    cfg.workers = workers;
    cfg.cells = cells;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&cfg, &rt, &err) != MKRT_OK) {
        fprintf(stderr, "peer_bench: mkrt_create: %s\n", err.message);
        exit(1);
    }
    return rt;
}

/* Items per second; checks the cells. */
static double run_mkrt(const workload *w, uint32_t workers, uint64_t *cells)
{
    mkrt_runtime *rt = mkrt_start(workers, w->cells);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    if (p == NULL)
        die("mkrt_producer_open failed");
    uint64_t t0 = bench_now_ns(), ticket;
    for (int pass = 0; pass < MK_PASSES; pass++)
        for (size_t k = 0; k < w->n; k += CHUNK) {
            size_t len = w->n - k < CHUNK ? w->n - k : CHUNK;
            if (mkrt_publish(p, w->items + k, len, UINT64_MAX, NULL) != MKRT_OK)
                die("mkrt_publish failed");
        }
    if (mkrt_fence(p, &ticket) != MKRT_OK || mkrt_wait(p, ticket, UINT64_MAX) != MKRT_OK)
        die("mkrt_wait failed");
    uint64_t t1 = bench_now_ns();
    if (mkrt_cells_read(rt, 0, w->cells, cells) != MKRT_OK)
        die("mkrt_cells_read failed");
    mkrt_stats st;
    mkrt_stats_read(rt, &st);
    mkrt_producer_close(p);
    mkrt_destroy(rt, UINT64_MAX, NULL);
    char impl[64];
    snprintf(impl, sizeof impl, "mkrt (workers %u)", workers);
    check_against(w, w->expect_mk, MK_PASSES, cells, impl);
    if (st.pruned != 0 || st.failed != 0)
        die("mkrt pruned or failed items of a workload with unique params");
    return (double)w->n * MK_PASSES / ((double)(t1 - t0) / 1e9);
}

static void latency_mkrt(int rounds, double *v)
{
    mkrt_runtime *rt = mkrt_start(0, 1024);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    for (int r = 0; r < rounds; r++) {
        mkrt_item it = {MKRT_OP_ADD, (uint32_t)r % 1024, (uint32_t)r % 1024, (uint32_t)r};
        uint64_t t0 = bench_now_ns(), ticket;
        mkrt_publish(p, &it, 1, UINT64_MAX, NULL);
        mkrt_fence(p, &ticket);
        mkrt_wait(p, ticket, UINT64_MAX);
        v[r] = (double)(bench_now_ns() - t0);
    }
    mkrt_producer_close(p);
    mkrt_destroy(rt, UINT64_MAX, NULL);
}

/* ---- OpenMP tasks ---------------------------------------------------- */

#ifdef _OPENMP
static double run_omp(const workload *w, uint64_t *cells)
{
    memset(cells, 0, w->cells * sizeof *cells);
    uint64_t t0 = 0, t1 = 0;
#pragma omp parallel num_threads(PEER_THREADS) shared(t0, t1)
#pragma omp single
    {
        t0 = bench_now_ns();
        for (size_t k = 0; k < w->n; k++) {
            const mkrt_item it = w->items[k];
            uint64_t *in = &cells[it.in], *out = &cells[it.out];
            if (it.in == it.out) {
#pragma omp task depend(inout : out[0]) firstprivate(out, it)
                out[0] += it.param;
            } else {
#pragma omp task depend(in : in[0]) depend(inout : out[0]) firstprivate(in, out, it)
                out[0] = in[0] + it.param;
            }
        }
#pragma omp taskwait
        t1 = bench_now_ns();
    }
    check(w, cells, "OpenMP tasks");
    return (double)w->n / ((double)(t1 - t0) / 1e9);
}

static void latency_omp(int rounds, double *v)
{
    uint64_t cells[1024] = {0};
#pragma omp parallel num_threads(PEER_THREADS) shared(cells, v)
#pragma omp single
    for (int r = 0; r < rounds; r++) {
        uint64_t *c = &cells[r % 1024];
        uint32_t param = (uint32_t)r;
        uint64_t t0 = bench_now_ns();
#pragma omp task depend(inout : c[0]) firstprivate(c, param)
        c[0] += param;
#pragma omp taskwait
        v[r] = (double)(bench_now_ns() - t0);
    }
}
#endif

/* ---- StarPU ---------------------------------------------------------- */

#ifdef HAVE_STARPU
static void starpu_add_self(void *buffers[], void *arg)
{
    uint64_t *c = (uint64_t *)STARPU_VARIABLE_GET_PTR(buffers[0]);
    *c += ((const mkrt_item *)arg)->param;
}

static void starpu_add(void *buffers[], void *arg)
{
    const uint64_t *in = (const uint64_t *)STARPU_VARIABLE_GET_PTR(buffers[0]);
    uint64_t *out = (uint64_t *)STARPU_VARIABLE_GET_PTR(buffers[1]);
    *out = *in + ((const mkrt_item *)arg)->param;
}

static struct starpu_codelet cl_self = {.cpu_funcs = {starpu_add_self}, .nbuffers = 1, .modes = {STARPU_RW}};
static struct starpu_codelet cl_add = {.cpu_funcs = {starpu_add}, .nbuffers = 2, .modes = {STARPU_R, STARPU_W}};

static void starpu_start(void)
{
    setenv("STARPU_SILENT", "1", 0);
    struct starpu_conf conf;
    starpu_conf_init(&conf);
    conf.ncpus = PEER_THREADS;
    conf.ncuda = 0;
    conf.nopencl = 0;
    if (starpu_init(&conf) != 0)
        die("starpu_init failed");
}

static void starpu_submit(const mkrt_item *it, starpu_data_handle_t *h, bool sync)
{
    struct starpu_task *t = starpu_task_create();
    t->cl = it->in == it->out ? &cl_self : &cl_add;
    t->handles[0] = h[it->in];
    if (it->in != it->out)
        t->handles[1] = h[it->out];
    t->cl_arg = (void *)it; /* read in place: no copy per task */
    t->cl_arg_size = sizeof *it;
    t->cl_arg_free = 0;
    t->synchronous = sync;
    if (starpu_task_submit(t) != 0)
        die("starpu_task_submit failed");
}

static double run_starpu(const workload *w, uint64_t *cells)
{
    memset(cells, 0, w->cells * sizeof *cells);
    starpu_data_handle_t *h = xcalloc(w->cells, sizeof *h);
    for (uint32_t c = 0; c < w->cells; c++) /* outside the timed region */
        starpu_variable_data_register(&h[c], STARPU_MAIN_RAM, (uintptr_t)&cells[c], sizeof cells[c]);
    uint64_t t0 = bench_now_ns();
    for (size_t k = 0; k < w->n; k++)
        starpu_submit(&w->items[k], h, false);
    starpu_task_wait_for_all();
    uint64_t t1 = bench_now_ns();
    for (uint32_t c = 0; c < w->cells; c++) /* writes every cell back to cells[] */
        starpu_data_unregister(h[c]);
    free(h);
    check(w, cells, "StarPU");
    return (double)w->n / ((double)(t1 - t0) / 1e9);
}

static void latency_starpu(int rounds, double *v)
{
    static uint64_t cells[1024];
    static starpu_data_handle_t h[1024];
    mkrt_item *items = xcalloc((size_t)rounds, sizeof *items);
    starpu_start();
    for (uint32_t c = 0; c < 1024; c++)
        starpu_variable_data_register(&h[c], STARPU_MAIN_RAM, (uintptr_t)&cells[c], sizeof cells[c]);
    for (int r = 0; r < rounds; r++) {
        items[r] = (mkrt_item){MKRT_OP_ADD, (uint32_t)r % 1024, (uint32_t)r % 1024, (uint32_t)r};
        uint64_t t0 = bench_now_ns();
        starpu_submit(&items[r], h, true);
        v[r] = (double)(bench_now_ns() - t0);
    }
    for (uint32_t c = 0; c < 1024; c++)
        starpu_data_unregister(h[c]);
    starpu_shutdown();
    free(items);
}
#endif

/* ---- latency in a fresh process -------------------------------------- */

static int latency_child(const char *impl, int rounds)
{
    double *v = xcalloc((size_t)rounds, sizeof *v);
    if (strcmp(impl, "mkrt") == 0)
        latency_mkrt(rounds, v);
#ifdef _OPENMP
    else if (strcmp(impl, "openmp") == 0)
        latency_omp(rounds, v);
#endif
#ifdef HAVE_STARPU
    else if (strcmp(impl, "starpu") == 0)
        latency_starpu(rounds, v);
#endif
    else
        return 2;
    qsort(v, (size_t)rounds, sizeof *v, bench_cmp_double);
    printf("%.0f %.0f\n", v[rounds / 2], v[rounds * 99 / 100]);
    free(v);
    return 0;
}

/* Runs this binary again (Linux: /proc/self/exe names it) for one
 * runtime's latency; false when the child failed. */
static bool latency_fresh(const char *impl, int rounds, double *p50, double *p99)
{
    char self[1024], cmd[1200];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return false;
    self[n] = '\0';
    snprintf(cmd, sizeof cmd, "'%s' --latency-child %s %d", self, impl, rounds);
    FILE *f = popen(cmd, "r");
    if (f == NULL)
        return false;
    bool ok = fscanf(f, "%lf %lf", p50, p99) == 2;
    return pclose(f) == 0 && ok;
}

/* ---- main ------------------------------------------------------------ */

typedef struct row {
    double mk_def, mk1, mk2, omp, spu;
    /* default against each worker count, paired: the median over rounds
     * of default / that count in the same round (the three run back to
     * back), the smaller of the two; a drift of the machine between
     * rounds cancels, where a ratio of medians would keep it. */
    double def_vs_best;
} row;

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--latency-child") == 0)
        return latency_child(argv[2], atoi(argv[3]));
    bench_opts opt;
    bench_opts_init(&opt, argc, argv);
    bool mkrt_only = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mkrt-only") == 0) {
            mkrt_only = true;
        } else if (!bench_common_arg(argc, argv, &i, &opt)) {
            fprintf(stderr, "usage: %s " BENCH_USAGE " [--mkrt-only]\n", argv[0]);
            return 2;
        }
    }
    const bool quick = opt.quick;
    const size_t n = quick ? (size_t)1 << 16 : (size_t)1 << 20;
    /* mkrt: 15 rounds of its three configurations, each configuration 5
     * times in each position of the rotation, so the paired ratios do not
     * favour a position. */
    const int reps = quick ? 1 : 5, mk_reps = quick ? 3 : 15, rounds = quick ? 500 : 20000;
    bench_csv csv;
    if (bench_csv_open(&csv, opt.csv, "peers") != 0)
        return 1;
    bool have_omp = false, have_spu = false;
#ifdef _OPENMP
    have_omp = !mkrt_only;
#endif
#ifdef HAVE_STARPU
    have_spu = !mkrt_only;
#endif
    char machine[256], report[8192];
    size_t len = 0;
    bench_machine(machine, sizeof machine);
#define EMIT(...) len += (size_t)snprintf(report + len, len < sizeof report ? sizeof report - len : 0, __VA_ARGS__)
    printf("peer_bench: %zu items per workload (StarPU %zu), median of %d (mkrt: %d); %s\n", n,
           n / STARPU_SCALE, reps, mk_reps, machine);
    if (mkrt_only)
        printf("--mkrt-only: mkrt's throughput alone (peers and latency skipped)\n");
    if (!have_omp && !mkrt_only)
        printf("OpenMP: skipped: the compiler has no -fopenmp\n");
    if (!have_spu && !mkrt_only)
        printf("StarPU: skipped: StarPU not installed (pkg-config starpu-1.3; make bench-deps)\n");
    fflush(stdout);
    row rows[NWORK];
    uint64_t *cells = xcalloc(n, sizeof *cells);
    for (int k = 0; k < NWORK; k++) {
        workload w, ws;
        build(&w, k, n);
        build(&ws, k, n / STARPU_SCALE);
        double v[3][16], o[8] = {0}, s[8] = {0};
        static const uint32_t wk[3] = {0, 1, 2}; /* mkrt: default, 1, 2 workers */
        /* mkrt first, its configurations in a rotating order, while no
         * peer's threads exist or spin; then OpenMP; then StarPU, started
         * and stopped around its own runs. */
        for (int r = 0; r < mk_reps; r++)
            for (int j = 0; j < 3; j++) {
                int c = (r + j) % 3;
                v[c][r] = run_mkrt(&w, wk[c], cells);
            }
#ifdef _OPENMP
        if (have_omp) {
            run_omp(&w, cells); /* warm the thread team */
            for (int r = 0; r < reps; r++)
                o[r] = run_omp(&w, cells);
        }
#endif
#ifdef HAVE_STARPU
        if (have_spu) {
            starpu_start();
            for (int r = 0; r < reps; r++)
                s[r] = run_starpu(&ws, cells);
            starpu_shutdown();
        }
#endif
        struct timespec settle = {0, 100 * 1000 * 1000}; /* the peers' threads stop spinning */
        nanosleep(&settle, NULL);
        double *d = v[0], *a = v[1], *b = v[2];
        row *x = &rows[k];
        double pa[16], pb[16];
        for (int r = 0; r < mk_reps; r++) {
            pa[r] = d[r] / a[r];
            pb[r] = d[r] / b[r];
        }
        double ra = bench_median(pa, mk_reps), rb = bench_median(pb, mk_reps);
        *x = (row){bench_median(d, mk_reps), bench_median(a, mk_reps), bench_median(b, mk_reps), bench_median(o, reps),
                   bench_median(s, reps), ra < rb ? ra : rb};
        printf("%s: mkrt default %.2f M/s, 1 worker %.2f, 2 workers %.2f", wl_names[k], x->mk_def / 1e6,
               x->mk1 / 1e6, x->mk2 / 1e6);
        if (have_omp)
            printf("; OpenMP %.2f", x->omp / 1e6);
        if (have_spu)
            printf("; StarPU %.3f", x->spu / 1e6);
        printf("\n");
        fflush(stdout);
        bench_csv_row(&csv, wl_names[k], "default", "mkrt", x->mk_def / 1e6, "M items/s");
        bench_csv_row(&csv, wl_names[k], "1", "mkrt", x->mk1 / 1e6, "M items/s");
        bench_csv_row(&csv, wl_names[k], "2", "mkrt", x->mk2 / 1e6, "M items/s");
        if (have_omp)
            bench_csv_row(&csv, wl_names[k], "2", "OpenMP tasks", x->omp / 1e6, "M items/s");
        if (have_spu)
            bench_csv_row(&csv, wl_names[k], "2", "StarPU", x->spu / 1e6, "M items/s");
        free_workload(&w);
        free_workload(&ws);
    }
    free(cells);

    static const char *const lat_impl[3] = {"mkrt", "openmp", "starpu"};
    static const char *const lat_name[3] = {"mkrt (default)", "OpenMP tasks", "StarPU"};
    const bool lat_have[3] = {!mkrt_only, have_omp, have_spu};
    double p50[3] = {0}, p99[3] = {0};
    for (int i = 0; i < 3; i++) {
        if (!lat_have[i])
            continue;
        if (!latency_fresh(lat_impl[i], rounds, &p50[i], &p99[i])) {
            fprintf(stderr, "peer_bench: the latency child for %s failed\n", lat_name[i]);
            return 1;
        }
        printf("latency %s: p50 %.2f us, p99 %.2f us\n", lat_name[i], p50[i] / 1e3, p99[i] / 1e3);
        bench_csv_row(&csv, "latency", "p50", lat_name[i], p50[i] / 1e3, "us");
        bench_csv_row(&csv, "latency", "p99", lat_name[i], p99[i] / 1e3, "us");
    }
    if (bench_csv_close(&csv) != 0)
        return 1;
    unsigned default_workers = 0;
    mkrt_runtime *probe = mkrt_start(0, 1); /* exits if it cannot */
    mkrt_stats ps;
    mkrt_stats_read(probe, &ps);
    default_workers = ps.workers;
    mkrt_destroy(probe, UINT64_MAX, NULL);

    EMIT("Throughput, M items/s (higher is better); ratios are mkrt's default against each (against "
         "OpenMP and StarPU: of the medians; against the worker counts: paired, the median over %d "
         "rounds of default / that count in the same round, the smaller of the two). mkrt publishes "
         "each workload %d times in a row per timed run. The default resolves to %u worker(s) here.\n\n",
         mk_reps, MK_PASSES,
         default_workers);
    EMIT("| workload | mkrt default | mkrt 1 worker | mkrt 2 workers | OpenMP tasks | StarPU | default / "
         "OpenMP | default / StarPU | default / best worker count |\n"
         "|---|---|---|---|---|---|---|---|---|\n");
    double min_omp = 1e300, min_spu = 1e300, min_best = 1e300;
    for (int k = 0; k < NWORK; k++) {
        const row *x = &rows[k];
        double ro = have_omp ? x->mk_def / x->omp : 0, rs = have_spu ? x->mk_def / x->spu : 0;
        min_omp = ro < min_omp ? ro : min_omp;
        min_spu = rs < min_spu ? rs : min_spu;
        min_best = x->def_vs_best < min_best ? x->def_vs_best : min_best;
        EMIT("| %s | %.2f | %.2f | %.2f | ", wl_names[k], x->mk_def / 1e6, x->mk1 / 1e6, x->mk2 / 1e6);
        if (have_omp)
            EMIT("%.2f | ", x->omp / 1e6);
        else
            EMIT("skipped | ");
        if (have_spu)
            EMIT("%.3f | ", x->spu / 1e6);
        else
            EMIT("skipped | ");
        if (have_omp)
            EMIT("%.2fx | ", ro);
        else
            EMIT("- | ");
        if (have_spu)
            EMIT("%.1fx | ", rs);
        else
            EMIT("- | ");
        EMIT("%.2fx |\n", x->def_vs_best);
    }
    EMIT("\nSingle-item round trip, each runtime in a fresh process (lower is better)\n\n"
         "| runtime | p50 | p99 |\n|---|---|---|\n");
    for (int i = 0; i < 3; i++) {
        if (lat_have[i])
            EMIT("| %s | %.2f us | %.2f us |\n", lat_name[i], p50[i] / 1e3, p99[i] / 1e3);
        else
            EMIT("| %s | skipped | skipped |\n", lat_name[i]);
    }
    EMIT("\n| target | value | met |\n|---|---|---|\n");
    if (have_omp)
        EMIT("| every workload >= 5x OpenMP | worst %.2fx | %s |\n", min_omp, min_omp >= 5 ? "yes" : "NO");
    if (have_spu)
        EMIT("| every workload >= 50x StarPU | worst %.1fx | %s |\n", min_spu, min_spu >= 50 ? "yes" : "NO");
    EMIT("| default >= 0.95x the best worker count | worst %.2fx | %s |\n", min_best,
         min_best >= 0.95 ? "yes" : "NO");
    if (lat_have[0]) {
        EMIT("| single-item p50 <= 2 us | %.2f us | %s |\n", p50[0] / 1e3, p50[0] <= 2000 ? "yes" : "NO");
        EMIT("| single-item p99 <= 20 us | %.2f us | %s |\n", p99[0] / 1e3, p99[0] <= 20000 ? "yes" : "NO");
    }
    printf("\n%s", report);
    char setup[1024];
    snprintf(setup, sizeof setup,
             "%zu items per workload (StarPU: %zu, one handle per cell, registered outside the timed "
             "region), ADD on 64-bit cells published in chunks of %u, results checked equal to a "
             "sequential run; OpenMP and StarPU with %d threads, mkrt with its default worker count "
             "and with 1 and 2; median of %d runs (mkrt: %d rounds of its three configurations in a "
             "rotating order); latency over %d single-item round trips per fresh process.%s%s",
             n, n / STARPU_SCALE, CHUNK, PEER_THREADS, reps, mk_reps, rounds,
             have_omp ? "" : " OpenMP skipped: the compiler has no -fopenmp.",
             have_spu ? "" : " StarPU skipped: StarPU not installed.");
    if (bench_write_report(&opt, "make bench RECORD=1", "Peers: mkrt vs OpenMP tasks and StarPU", machine, setup,
                           report) != 0)
        return 1;
    return 0;
}
