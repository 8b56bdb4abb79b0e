/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/analysis_bench.c - the analysis demo's reaching definitions
 * (examples/analysis_demo.c, compiled in) at three sizes: mkrt against
 * the demo's sequential worklist solver (block order), a sequential FIFO
 * worklist (Kildall's), and a parallel worklist written by hand with a
 * mutex and a condition variable, one thread per CPU. Every result is
 * checked against the sequential solver's.
 *
 *   analysis_bench [--quick] [--out FILE.md] [--csv FILE.csv]
 */
#define ANALYSIS_NO_MAIN
#include "../examples/analysis_demo.c"

#include "bench_util.h"

/* Sequential FIFO worklist: each block at most once on the list. */
static uint64_t solve_fifo(const program *g)
{
    uint32_t *list = malloc(sizeof *list * g->blocks), head = 0, len = 0;
    bool *listed = calloc(g->blocks, sizeof *listed);
    uint64_t visits = 0;
    if (list == NULL || listed == NULL)
        exit(1);
    memset(g->out, 0, sizeof(uint64_t) * g->blocks * g->words);
    for (uint32_t b = 0; b < g->blocks; b++)
        if (add_gen(g, b))
            list[len++] = b, listed[b] = true;
    while (len > 0) {
        uint32_t p = list[head];
        head = (head + 1) % g->blocks, len--;
        listed[p] = false;
        for (uint32_t e = g->first[p]; e < g->first[p + 1]; e++) {
            uint32_t s = g->succ[e];
            visits++;
            if (flow(g, p, s) && !listed[s])
                list[(head + len++) % g->blocks] = s, listed[s] = true;
        }
    }
    free(list);
    free(listed);
    return visits;
}

/* ---- the hand-written parallel worklist ----
 * A FIFO of blocks under one mutex, a condition variable for idle
 * threads, a mutex per block around its bitset. A thread takes a block,
 * copies its facts, merges them into each successor under the
 * successor's lock, and queues the successors that grew. */
typedef struct hand {
    const program *g;
    pthread_mutex_t lock;
    pthread_cond_t more;
    pthread_mutex_t *block_lock;
    uint32_t *list, head, len, busy;
    bool *listed;
    uint64_t visits;
} hand;

static void *hand_worker(void *arg)
{
    hand *h = arg;
    const program *g = h->g;
    uint64_t *mine = malloc(sizeof(uint64_t) * g->words), visits = 0;
    if (mine == NULL)
        exit(1);
    pthread_mutex_lock(&h->lock);
    for (;;) {
        while (h->len == 0 && h->busy > 0)
            pthread_cond_wait(&h->more, &h->lock);
        if (h->len == 0)
            break; /* nothing queued and nobody can queue more */
        uint32_t p = h->list[h->head];
        h->head = (h->head + 1) % g->blocks, h->len--;
        h->listed[p] = false;
        h->busy++;
        pthread_mutex_unlock(&h->lock);

        pthread_mutex_lock(&h->block_lock[p]);
        memcpy(mine, bits(g, g->out, p), sizeof(uint64_t) * g->words);
        pthread_mutex_unlock(&h->block_lock[p]);
        for (uint32_t e = g->first[p]; e < g->first[p + 1]; e++) {
            uint32_t s = g->succ[e];
            pthread_mutex_lock(&h->block_lock[s]);
            uint32_t gained = merge(bits(g, g->out, s), mine, bits(g, g->kill, s), g->words);
            pthread_mutex_unlock(&h->block_lock[s]);
            visits++;
            if (gained == 0)
                continue;
            pthread_mutex_lock(&h->lock);
            if (!h->listed[s]) {
                h->list[(h->head + h->len++) % g->blocks] = s, h->listed[s] = true;
                pthread_cond_signal(&h->more);
            }
            pthread_mutex_unlock(&h->lock);
        }
        pthread_mutex_lock(&h->lock);
        if (--h->busy == 0 && h->len == 0)
            pthread_cond_broadcast(&h->more);
    }
    h->visits += visits;
    pthread_mutex_unlock(&h->lock);
    free(mine);
    return NULL;
}

static uint64_t solve_hand(const program *g, uint32_t threads)
{
    hand h = {.g = g, .list = malloc(sizeof(uint32_t) * g->blocks),
              .listed = calloc(g->blocks, sizeof(bool)),
              .block_lock = malloc(sizeof(pthread_mutex_t) * g->blocks)};
    pthread_t th[64];
    if (h.list == NULL || h.listed == NULL || h.block_lock == NULL)
        exit(1);
    pthread_mutex_init(&h.lock, NULL);
    pthread_cond_init(&h.more, NULL);
    for (uint32_t b = 0; b < g->blocks; b++)
        pthread_mutex_init(&h.block_lock[b], NULL);
    memset(g->out, 0, sizeof(uint64_t) * g->blocks * g->words);
    for (uint32_t b = 0; b < g->blocks; b++)
        if (add_gen(g, b))
            h.list[h.len++] = b, h.listed[b] = true;
    for (uint32_t i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, hand_worker, &h);
    for (uint32_t i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    for (uint32_t b = 0; b < g->blocks; b++)
        pthread_mutex_destroy(&h.block_lock[b]);
    pthread_mutex_destroy(&h.lock);
    pthread_cond_destroy(&h.more);
    free(h.list);
    free(h.listed);
    free(h.block_lock);
    return h.visits;
}

/* ---- measuring ---- */

enum { SEQ, FIFO, MKRT, MKRT1, MKRT2, HAND, IMPLS };
static const char *impl_name[IMPLS] = {"sequential (block order)", "sequential FIFO", "mkrt",
                                       "mkrt, workers = 1", "mkrt, workers = 2", "hand-written parallel"};
/* --threads N: mkrt's third runtime gets N workers (else 2) and the
 * hand-written worklist N threads (else one per CPU). */
static unsigned opt_threads;
static char mkrt_n_name[32];

typedef struct row {
    uint32_t blocks, edges;
    double secs[IMPLS];
    double cpu[IMPLS]; /* CPU seconds of the process's threads per solve (median) */
    uint64_t work[IMPLS]; /* bitset merges: gen sets and edge transfers */
    uint64_t pruned, batches, emitted, transfers, visits; /* mkrt's; the sequential solver's edge visits */
    bool ok;
} row;

static bool same(const program *g, const uint64_t *want)
{
    return memcmp(want, g->out, sizeof(uint64_t) * g->blocks * g->words) == 0;
}

static int measure(row *r, uint32_t blocks, int reps, uint32_t threads)
{
    program g;
    if (!make_program(&g, blocks, 1024)) {
        fprintf(stderr, "analysis_bench: out of memory\n");
        return 1;
    }
    mkrt_error err;
    /* The runtimes share g's region graph: one region size for all. */
    mkrt_runtime *rts[3] = {analysis_runtime(&g, 0, REGION_DEFAULT, &err), NULL, NULL};
    if (rts[0] != NULL)
        rts[1] = analysis_runtime(&g, 1, REGION_DEFAULT, &err);
    if (rts[1] != NULL)
        rts[2] = analysis_runtime(&g, opt_threads ? opt_threads : 2, REGION_DEFAULT, &err);
    uint64_t *want = malloc(sizeof(uint64_t) * g.blocks * g.words);
    if (rts[2] == NULL || want == NULL) {
        fprintf(stderr, "analysis_bench: %s\n", rts[2] == NULL ? err.message : "out of memory");
        return 1;
    }
    *r = (row){.blocks = g.blocks, .edges = g.edges, .ok = true};
    r->visits = solve_sequential(&g);
    r->work[SEQ] = g.blocks + r->visits;
    memcpy(want, g.out, sizeof(uint64_t) * g.blocks * g.words);
    double t[IMPLS][16], cpu[IMPLS][16];
    for (int k = 0; k < reps; k++) {
        for (int i = 0; i < IMPLS; i++) {
            mkrt_runtime *rt = rts[i == MKRT1 ? 1 : i == MKRT2 ? 2 : 0];
            bool on_mkrt = i == MKRT || i == MKRT1 || i == MKRT2;
            mkrt_stats s0, s1;
            mkrt_stats_read(rt, &s0);
            const double c0 = bench_cpu_seconds(RUSAGE_SELF);
            uint64_t t0 = bench_now_ns(), published = 0, visits = 0;
            if (i == SEQ)
                visits = solve_sequential(&g);
            else if (i == FIFO)
                visits = solve_fifo(&g);
            else if (i == HAND)
                visits = solve_hand(&g, threads);
            uint64_t t1 = bench_now_ns();
            t[i][k] = on_mkrt ? solve_mkrt(rt, &g, 4, &published) : (double)(t1 - t0) / 1e9;
            cpu[i][k] = bench_cpu_seconds(RUSAGE_SELF) - c0;
            mkrt_stats_read(rt, &s1);
            if (on_mkrt) /* the merges its seeds and sweeps counted */
                visits = atomic_load_explicit(&g.gens, memory_order_relaxed) +
                         atomic_load_explicit(&g.transfers, memory_order_relaxed);
            else
                visits += g.blocks; /* every solver merges each block's gen set once */
            if (i == MKRT) {
                r->pruned = s1.pruned - s0.pruned;
                r->batches = s1.batches - s0.batches;
                r->emitted = s1.emitted - s0.emitted;
                r->transfers = atomic_load_explicit(&g.transfers, memory_order_relaxed);
            }
            r->work[i] = visits;
            r->ok &= same(&g, want) && s1.failed == 0;
        }
    }
    for (int i = 0; i < IMPLS; i++) {
        r->secs[i] = bench_median(t[i], reps);
        r->cpu[i] = bench_median(cpu[i], reps);
    }
    for (int i = 0; i < 3; i++)
        mkrt_destroy(rts[i], MKRT_TIMEOUT_INFINITE, NULL);
    free(want);
    free_program(&g);
    return 0;
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_opts_init(&o, argc, argv);
    for (int i = 1; i < argc; i++)
        if (!bench_common_arg(argc, argv, &i, &o) && !bench_threads_arg(argc, argv, &i, &opt_threads)) {
            fprintf(stderr, "usage: %s " BENCH_USAGE " [--threads N]\n", argv[0]);
            return 2;
        }
    if (opt_threads) {
        snprintf(mkrt_n_name, sizeof mkrt_n_name, "mkrt with %u workers", opt_threads); /* no comma: CSV */
        impl_name[MKRT2] = mkrt_n_name;
    }
    /* The development machine is shared: say how busy it was. */
    char load[64] = "unknown";
    FILE *la = fopen("/proc/loadavg", "r");
    if (la != NULL) {
        if (fscanf(la, "%63s", load) != 1)
            snprintf(load, sizeof load, "unknown");
        fclose(la);
    }
    const uint32_t sizes[3] = {15000, 60000, 240000}, quick_sizes[3] = {4000, 15000, 0};
    const uint32_t *sz = o.quick ? quick_sizes : sizes;
    int reps = o.quick ? 1 : 7;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t threads = opt_threads ? opt_threads : cpus < 1 ? 1 : cpus > 64 ? 64 : (uint32_t)cpus;
    row rows[3];
    int nrows = 0;
    bool ok = true;
    for (int i = 0; i < 3 && sz[i] != 0; i++, nrows++) {
        if (measure(&rows[i], sz[i], reps, threads) != 0)
            return 1;
        ok &= rows[i].ok;
    }

    char machine[256], cmd[1024] = "";
    bench_machine(machine, sizeof machine);
    for (int i = 0; i < argc; i++)
        snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd), "%s%s", i ? " " : "", argv[i]);
    FILE *out = o.out ? fopen(o.out, "w") : NULL;
    FILE *fs[2] = {stdout, out};
    bench_csv csv;
    if (bench_csv_open(&csv, o.csv, "analysis") != 0)
        return 1;
    for (int f = 0; f < 2; f++) {
        FILE *w = fs[f];
        if (w == NULL)
            continue;
        fprintf(w, "# Reaching definitions: mkrt against sequential and hand-written worklists\n\n");
        fprintf(w, "Machine: %s; load average (1 min) when it started: %s\n\n", machine, load);
        fprintf(w,
                "Command: `%s` (what `make bench RECORD=1` runs). The demo's analysis "
                "(examples/analysis_demo.c, compiled in): 1024 facts per block (16-word bitsets), "
                "functions of %u blocks, 4 analysis threads seeding mkrt (workers: the runtime's "
                "choice, as in the demo, then 1 and %u workers given), regions of %u blocks; median of %d runs "
                "each, the implementations alternating; CPU: seconds of all "
                "the process's threads per solve (getrusage RUSAGE_SELF; spinning included); "
                "the hand-written worklist runs %u threads. Times include seeding (the gen sets) "
                "and exclude building the program and the runtime. Work: bitset merges, the blocks' "
                "gen sets (each once, on every side) and the edge transfers. Every result matched the sequential solver: "
                "%s.\n\n",
                cmd, FN_BLOCKS, opt_threads ? opt_threads : 2, REGION_DEFAULT, reps, threads, ok ? "yes" : "NO");
        fprintf(w, "| blocks | edges | impl | time (s) | CPU (s) | work | work / sequential | "
                   "sequential / impl (speedup) |\n|---|---|---|---|---|---|---|---|\n");
        for (int i = 0; i < nrows; i++) {
            const row *r = &rows[i];
            for (int k = 0; k < IMPLS; k++)
                fprintf(w, "| %u | %u | %s | %.4f | %.4f | %llu | %.2f | %.2fx |\n", r->blocks, r->edges,
                        impl_name[k], r->secs[k], r->cpu[k], (unsigned long long)r->work[k],
                        (double)r->work[k] / (double)r->work[SEQ], r->secs[SEQ] / r->secs[k]);
        }
        fprintf(w, "\n| blocks | mkrt / hand-written (speedup) | mkrt edge transfers / sequential "
                   "edge visits | mkrt items pruned | mkrt items emitted (sweeps) | mkrt batches |\n"
                   "|---|---|---|---|---|---|\n");
        for (int i = 0; i < nrows; i++)
            fprintf(w, "| %u | %.2fx | %.2f | %llu | %llu | %llu |\n", rows[i].blocks,
                    rows[i].secs[HAND] / rows[i].secs[MKRT],
                    (double)rows[i].transfers / (double)rows[i].visits, (unsigned long long)rows[i].pruned,
                    (unsigned long long)rows[i].emitted, (unsigned long long)rows[i].batches);
        /* The targets, at the demo's default size (60000 blocks). */
        for (int i = 0; i < nrows; i++) {
            const row *r = &rows[i];
            if (r->blocks != 60000)
                continue;
            double speed = r->secs[SEQ] / r->secs[MKRT], work = (double)r->work[MKRT] / (double)r->work[SEQ],
                   two = r->secs[MKRT1] / r->secs[MKRT2];
            fprintf(w, "\n| target (issue 33, %ld CPUs, 60000 blocks) | value | met |\n|---|---|---|\n",
                    cpus);
            fprintf(w, "| mkrt time <= sequential solver's | %.2fx | %s |\n", speed, speed >= 1 ? "yes" : "no");
            fprintf(w, "| work vs sequential <= 2 | %.2f | %s |\n", work, work <= 2 ? "yes" : "no");
            fprintf(w, "| %s >= 1.3x workers = 1 | %.2fx | %s |\n", impl_name[MKRT2], two,
                    two >= 1.3 ? "yes" : "no");
        }
    }
    for (int i = 0; i < nrows; i++) {
        char p[32];
        snprintf(p, sizeof p, "%u", rows[i].blocks);
        for (int k = 0; k < IMPLS; k++) {
            bench_csv_row(&csv, "time", p, impl_name[k], rows[i].secs[k], "s");
            bench_csv_row(&csv, "cpu", p, impl_name[k], rows[i].cpu[k], "CPU s");
            bench_csv_row(&csv, "work", p, impl_name[k], (double)rows[i].work[k], "visits");
        }
    }
    if (out != NULL)
        fclose(out);
    if (bench_csv_close(&csv) != 0)
        return 1;
    return ok ? 0 : 1;
}
