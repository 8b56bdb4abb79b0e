/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/stream_bench.c - streaming graph updates (include/mkrt_stream/stream.h)
 * on RisGraph's sliding window, with RisGraph beside mkrt (--risgraph DIR).
 *
 * The workload (RisGraph's *_inc_batch, SIGMOD'21): a Kronecker graph of
 * --scale N (edge factor 16, Graph500 weights 1..255), its tuples reduced
 * to unique undirected edges without self-loops, in generation order. All
 * but the last --window W edges are loaded and the analyses computed;
 * then W / B batches each insert the next B edges and delete the oldest B
 * (2 W updates). Analyses: BFS and SSSP from the highest-degree vertex, CC
 * (smallest vertex number of the component), each alone and all three at
 * once. Modes:
 *   sync    each batch is exact before the next is given (mkrt: the
 *           producer applies it, mkrt_stream_apply; RisGraph: its
 *           update_tree_add / update_tree_del)
 *   sync-1t sync with mkrt_stream_config::apply_threads 1 (the caller
 *           alone; sync uses --apply-threads, default --workers)
 *   sync-rt the same through the runtime (mkrt: publish, mkrt_quiesce)
 *   stream  the producer never waits: it publishes every batch at once;
 *           a batch's latency runs from its publish to the apply whose
 *           view holds it (mkrt only: RisGraph has no asynchronous path)
 *   mixed   latency classes (mkrt_producer_set_class), mkrt only: two
 *           streams of the same graph on one runtime, a bulk loader
 *           (the window in batches of B, published without waiting) and an
 *           interactive producer (the same window in batches of one insert
 *           and one delete, each waited for until a view holds it; its
 *           latency runs from the publish to then). Four runs: the
 *           interactive producer alone (--mixed-n batches), the bulk
 *           loader alone, both (interactive marked interactive), and both
 *           with the interactive producer left bulk; rows mix-int and
 *           mix-bulk (updates/s of each side, latency of the interactive
 *           side). The bulk stream's answers are checked against the
 *           recompute; the interactive stream's (a part of the window)
 *           against mkrt_stream_recompute. With STREAM_BENCH_EXPLAIN set,
 *           the runs with both print the last 64 batches' EXPLAIN
 *           records (class, why, items, run time, bulk age and wait).
 * Reported per run: updates/s (2 W over the time from the first publish
 * to the last batch's results), p50/p99/p999 of the per-batch latency in
 * microseconds, resident bytes (the process's RSS growth from before the
 * system was built to after the run: graph, analyses, runtime), and
 * whether the final answers equal an independent recompute (a queue BFS,
 * a heap Dijkstra and a union-find CC in this file, on the final edges).
 *
 * RisGraph runs through bench/risgraph_driver.cpp, built inside the
 * RisGraph tree at DIR (make risgraph-driver RISGRAPH=DIR), with
 * OMP_NUM_THREADS = --workers.
 *
 *   stream_bench [--scale N] [--window W] [--batches 1,64,4096]
 *                [--analyses 1,2,4,7 (1 BFS + 2 SSSP + 4 CC)] [--modes sync,sync-rt,stream,mixed]
 *                [--workers W] [--seed S] [--risgraph DIR] [--csv FILE] [--quick] [--mixed-n N]
 *                [--mixed-batch N (the runtime's max_batch in mixed mode, 1024)]
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench_util.h"
#include "examples/graph500/graph500.h"
#include "mkrt/runtime.h"
#include "mkrt_stream/stream.h"

#define LIST_MAX 8

typedef struct opts {
    uint32_t scale, workers, nb, na;
    uint64_t window, seed;
    uint32_t batch[LIST_MAX];
    unsigned mask[LIST_MAX];
    int sync, sync_rt, stream, mixed, sync1;
    uint32_t apply_threads; /* sync: mkrt_stream_config::apply_threads (0: --workers) */
    uint64_t mixed_n; /* interactive batches when the interactive producer runs alone */
    uint64_t mixed_batch; /* mixed mode: the runtime's max_batch */
    const char *csv, *risgraph;
} opts;

typedef struct edge3 {
    uint32_t u, v, w;
} edge3;

typedef struct result {
    double ups, p50, p99, p999, graph_x_csr; /* mkrt: the adjacency's bytes over a CSR's */
    uint64_t bytes;
    int valid;
} result;

static edge3 *g_e;
static uint64_t g_m, g_loaded;
static uint32_t g_n, g_root;
static uint64_t *g_ref[3]; /* BFS, SSSP, CC on the final edges */

static int usage(const char *why)
{
    fprintf(stderr, "stream_bench: %s\nusage: stream_bench [--scale 8..26] [--window W] [--batches B,B,..] "
            "[--analyses M,M,.. (1 BFS, 2 SSSP, 4 CC; 1,2,4,7)] [--modes sync,sync-1t,sync-rt,stream,mixed] [--workers 1..64] "
            "[--apply-threads 1..16] [--seed S] [--risgraph DIR] [--csv FILE] [--quick] [--mixed-n N] [--mixed-batch N]\n", why);
    return 2;
}

static int parse_list(const char *v, uint32_t *out, uint32_t *n, uint64_t lo, uint64_t hi)
{
    *n = 0;
    for (const char *p = v; *p != 0 && *n < LIST_MAX;) {
        char *end;
        errno = 0;
        unsigned long long x = strtoull(p, &end, 10);
        if (end == p || errno != 0 || x < lo || x > hi || (*end != 0 && *end != ','))
            return -1;
        out[(*n)++] = (uint32_t)x;
        p = *end == ',' ? end + 1 : end;
    }
    return *n > 0 ? 0 : -1;
}

static int parse(int argc, char **argv, opts *o)
{
    *o = (opts){.scale = 18, .workers = 2, .nb = 3, .na = 4, .window = 131072, .seed = 1, .batch = {1, 64, 4096},
                .mask = {1, 2, 4, 7}, .sync = 1, .sync_rt = 1, .stream = 1, .mixed_n = 4000, .mixed_batch = 1024};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--quick") == 0) {
            o->scale = 12;
            o->window = 2048;
            o->nb = 2;
            o->batch[0] = 1, o->batch[1] = 64;
            continue;
        }
        if (i + 1 >= argc)
            return usage("an option without its value");
        const char *v = argv[++i];
        char *end;
        errno = 0;
        unsigned long long n = strtoull(v, &end, 10);
        int num = *end == 0 && errno == 0 && v[0] != '-';
        if (strcmp(a, "--csv") == 0)
            o->csv = v;
        else if (strcmp(a, "--risgraph") == 0)
            o->risgraph = v;
        else if (strcmp(a, "--modes") == 0) {
            o->sync = o->sync_rt = o->stream = o->mixed = o->sync1 = 0;
            char buf[64];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *t = strtok(buf, ","); t != NULL; t = strtok(NULL, ",")) {
                if (strcmp(t, "sync") == 0)
                    o->sync = 1;
                else if (strcmp(t, "sync-1t") == 0)
                    o->sync1 = 1;
                else if (strcmp(t, "sync-rt") == 0)
                    o->sync_rt = 1;
                else if (strcmp(t, "stream") == 0)
                    o->stream = 1;
                else if (strcmp(t, "mixed") == 0)
                    o->mixed = 1;
                else
                    return usage("--modes takes sync, sync-1t, sync-rt, stream and mixed, comma-separated");
            }
        } else if (strcmp(a, "--batches") == 0) {
            if (parse_list(v, o->batch, &o->nb, 1, 1u << 20) != 0)
                return usage("--batches takes sizes 1..2^20, comma-separated");
        } else if (strcmp(a, "--analyses") == 0) {
            if (parse_list(v, o->mask, &o->na, 1, 7) != 0)
                return usage("--analyses takes masks 1..7 (1 BFS, 2 SSSP, 4 CC), comma-separated");
        } else if (strcmp(a, "--scale") == 0 && num && n >= 8 && n <= 26)
            o->scale = (uint32_t)n;
        else if (strcmp(a, "--window") == 0 && num && n >= 1)
            o->window = n;
        else if (strcmp(a, "--workers") == 0 && num && n >= 1 && n <= 64)
            o->workers = (uint32_t)n;
        else if (strcmp(a, "--apply-threads") == 0 && num && n >= 1 && n <= MKRT_STREAM_APPLY_THREADS_MAX)
            o->apply_threads = (uint32_t)n;
        else if (strcmp(a, "--seed") == 0 && num)
            o->seed = n;
        else if (strcmp(a, "--mixed-n") == 0 && num && n >= 1)
            o->mixed_n = n;
        else if (strcmp(a, "--mixed-batch") == 0 && num && n >= 2 && n <= 65536)
            o->mixed_batch = n;
        else
            return usage("an unknown option or a value out of range");
    }
    return 0;
}

static uint64_t resident_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, rss = 0;
    if (f != NULL) {
        if (fscanf(f, "%llu %llu", &size, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    return rss * (uint64_t)sysconf(_SC_PAGESIZE);
}

static const char *analyses_name(unsigned mask)
{
    static const char *names[8] = {"", "bfs", "sssp", "bfs+sssp", "cc", "bfs+cc", "sssp+cc", "bfs+sssp+cc"};
    return names[mask & 7];
}

/* ---- The workload: unique undirected edges in generation order ---------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int build_workload(const opts *o)
{
    g500_edge_list l;
    char why[256];
    if (g500_generate(o->scale, 16, o->seed, &l, why, sizeof why) != 0)
        return fprintf(stderr, "stream_bench: %s\n", why), -1;
    g_n = l.vertices;
    /* Keys (min << 32 | max) << 0 with the tuple's index beside them: sort,
     * keep each key's first tuple, then restore generation order. */
    uint64_t *key = malloc(l.edges * 2 * sizeof *key);
    g_e = malloc(l.edges * sizeof *g_e);
    if (key == NULL || g_e == NULL)
        return fprintf(stderr, "stream_bench: out of memory\n"), -1;
    uint64_t k = 0;
    for (uint64_t i = 0; i < l.edges; i++) {
        uint32_t a = l.edge[i].u, b = l.edge[i].v;
        if (a == b)
            continue;
        uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
        key[2 * k] = (uint64_t)lo << 32 | hi;
        key[2 * k + 1] = i;
        k++;
    }
    qsort(key, k, 2 * sizeof *key, cmp_u64); /* by key, then (stable enough) any index: fixed below */
    uint64_t *keep = calloc((l.edges + 63) / 64, sizeof *keep);
    if (keep == NULL)
        return fprintf(stderr, "stream_bench: out of memory\n"), -1;
    for (uint64_t i = 0; i < k;) {
        uint64_t j = i, first = key[2 * i + 1];
        for (; j < k && key[2 * j] == key[2 * i]; j++)
            first = key[2 * j + 1] < first ? key[2 * j + 1] : first;
        keep[first / 64] |= 1ull << (first % 64);
        i = j;
    }
    g_m = 0;
    for (uint64_t i = 0; i < l.edges; i++)
        if (keep[i / 64] >> (i % 64) & 1) {
            uint32_t a = l.edge[i].u, b = l.edge[i].v;
            g_e[g_m++] = (edge3){a, b, g500_edge_weight(l.seed, a, b)};
        }
    free(key);
    free(keep);
    g500_edge_list_free(&l);
    if (o->window >= g_m)
        return fprintf(stderr, "stream_bench: --window %llu is not below the %llu edges. Fix: a smaller window "
                       "or a larger --scale\n", (unsigned long long)o->window, (unsigned long long)g_m), -1;
    g_loaded = g_m - o->window;
    uint32_t *deg = calloc(g_n, sizeof *deg);
    if (deg == NULL)
        return -1;
    for (uint64_t i = 0; i < g_loaded; i++)
        deg[g_e[i].u]++, deg[g_e[i].v]++;
    g_root = 0;
    for (uint32_t v = 1; v < g_n; v++)
        g_root = deg[v] > deg[g_root] ? v : g_root;
    free(deg);
    return 0;
}

/* ---- The independent recompute on the final edges ----------------------- */

static int reference(const opts *o)
{
    uint64_t first = o->window, m = g_m - first;
    uint64_t *off = calloc((size_t)g_n + 1, sizeof *off);
    uint32_t *to = malloc(2 * m * sizeof *to), *wt = malloc(2 * m * sizeof *wt), *heap = malloc(2 * m * 12 + 64);
    for (int q = 0; q < 3; q++)
        g_ref[q] = malloc((size_t)g_n * sizeof(uint64_t));
    if (off == NULL || to == NULL || wt == NULL || heap == NULL || !g_ref[0] || !g_ref[1] || !g_ref[2])
        return -1;
    for (uint64_t i = first; i < g_m; i++)
        off[g_e[i].u + 1]++, off[g_e[i].v + 1]++;
    for (uint32_t v = 0; v < g_n; v++)
        off[v + 1] += off[v];
    uint64_t *at = malloc((size_t)g_n * sizeof *at);
    if (at == NULL)
        return -1;
    memcpy(at, off, (size_t)g_n * sizeof *at);
    for (uint64_t i = first; i < g_m; i++) {
        to[at[g_e[i].u]] = g_e[i].v, wt[at[g_e[i].u]++] = g_e[i].w;
        to[at[g_e[i].v]] = g_e[i].u, wt[at[g_e[i].v]++] = g_e[i].w;
    }
    /* BFS: a FIFO queue (at[] reused). */
    uint64_t *bfs = g_ref[0], *d = g_ref[1], *cc = g_ref[2];
    for (uint32_t v = 0; v < g_n; v++)
        bfs[v] = d[v] = MKRT_STREAM_UNREACHED;
    uint64_t head = 0, tail = 0;
    bfs[g_root] = 0;
    at[tail++] = g_root;
    while (head < tail) {
        uint32_t x = (uint32_t)at[head++];
        for (uint64_t i = off[x]; i < off[x + 1]; i++)
            if (bfs[to[i]] == MKRT_STREAM_UNREACHED)
                bfs[to[i]] = bfs[x] + 1, at[tail++] = to[i];
    }
    /* SSSP: Dijkstra with a lazy binary heap of (distance, vertex). */
    typedef struct hent {
        uint64_t d;
        uint32_t v;
    } hent;
    hent *h = (hent *)(void *)heap;
    size_t hn = 0;
    d[g_root] = 0;
    h[hn++] = (hent){0, g_root};
    while (hn > 0) {
        hent top = h[0], last = h[--hn];
        size_t i = 0;
        for (;;) {
            size_t c = 2 * i + 1;
            if (c >= hn)
                break;
            if (c + 1 < hn && h[c + 1].d < h[c].d)
                c++;
            if (h[c].d >= last.d)
                break;
            h[i] = h[c];
            i = c;
        }
        if (hn > 0)
            h[i] = last;
        if (top.d != d[top.v])
            continue;
        for (uint64_t k = off[top.v]; k < off[top.v + 1]; k++) {
            uint64_t c = top.d + wt[k];
            if (c < d[to[k]]) {
                d[to[k]] = c;
                size_t j = hn++;
                while (j > 0 && h[(j - 1) / 2].d > c) {
                    h[j] = h[(j - 1) / 2];
                    j = (j - 1) / 2;
                }
                h[j] = (hent){c, to[k]};
            }
        }
    }
    /* CC: union-find (the smaller root wins), then every vertex's root. */
    uint32_t *par = (uint32_t *)(void *)at;
    for (uint32_t v = 0; v < g_n; v++)
        par[v] = v;
    for (uint64_t i = first; i < g_m; i++) {
        uint32_t a = g_e[i].u, b = g_e[i].v;
        while (par[a] != a)
            a = par[a] = par[par[a]];
        while (par[b] != b)
            b = par[b] = par[par[b]];
        if (a < b)
            par[b] = a;
        else if (b < a)
            par[a] = b;
    }
    for (uint32_t v = 0; v < g_n; v++) {
        uint32_t r = v;
        while (par[r] != r)
            r = par[r];
        cc[v] = r;
    }
    free(off), free(to), free(wt), free(heap), free(at);
    return 0;
}

static int equal_ref(unsigned mask, const uint64_t *const got[3], const char *who)
{
    static const char *names[3] = {"BFS", "SSSP", "CC"};
    int good = 1;
    for (int q = 0; q < 3; q++) {
        if (!(mask & (1u << q)))
            continue;
        for (uint32_t v = 0; v < g_n; v++)
            if (got[q][v] != g_ref[q][v]) {
                fprintf(stderr, "stream_bench: %s %s differs from the recompute at vertex %u: %llu, not %llu\n",
                        who, names[q], v, (unsigned long long)got[q][v], (unsigned long long)g_ref[q][v]);
                good = 0;
                break;
            }
    }
    return good;
}

/* Whether a view of s's analyses (mask) equals the recompute. */
static int view_equals_ref(mkrt_stream *s, unsigned mask, const char *who)
{
    uint64_t *got[3] = {0};
    mkrt_stream_view view;
    mkrt_stream_view_open(s, &view);
    int ok = 1;
    for (unsigned k = 0, q = 0; k < 3; k++) {
        if (!(mask & (1u << k)))
            continue;
        got[k] = malloc((size_t)g_n * sizeof(uint64_t));
        ok = ok && got[k] != NULL && mkrt_stream_view_read(&view, q++, 0, g_n, got[k], NULL) == MKRT_OK;
    }
    mkrt_stream_view_close(&view);
    ok = ok && equal_ref(mask, (const uint64_t *const *)got, who);
    for (int k = 0; k < 3; k++)
        free(got[k]);
    return ok;
}

static double pct(double *v, size_t n, double p)
{
    if (n == 0)
        return -1;
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i];
}

/* ---- mkrt ----------------------------------------------------------------- */

static mkrt_stream *g_stream;
static mkrt_stream *g_stream2; /* mixed mode: the interactive stream */
static _Atomic uint64_t g_failed;

static void on_error(void *ctx, const mkrt_item *it, mkrt_status why, const char *msg)
{
    (void)ctx;
    char buf[320];
    if (mkrt_stream_failed(g_stream, it, why, buf, sizeof buf) != MKRT_OK &&
        (g_stream2 == NULL || mkrt_stream_failed(g_stream2, it, why, buf, sizeof buf) != MKRT_OK))
        snprintf(buf, sizeof buf, "%s", msg);
    if (atomic_fetch_add(&g_failed, 1) == 0)
        fprintf(stderr, "stream_bench: an update failed: %s\n", buf);
}

typedef struct watch {
    const uint64_t *pub_ns; /* publish time of each batch */
    uint64_t *vis_ns;
    _Atomic uint64_t published; /* batches published */
    uint64_t batches, per_batch;
} watch;

/* Stream mode: stamps each batch when the views' position covers it. */
static void *watcher(void *arg)
{
    watch *w = arg;
    uint64_t next = 0;
    while (next < w->batches) {
        mkrt_stream_stats st;
        mkrt_stream_stats_read(g_stream, &st);
        uint64_t now = bench_now_ns();
        uint64_t pub = atomic_load(&w->published);
        while (next < pub && st.position >= (next + 1) * w->per_batch)
            w->vis_ns[next++] = now;
        if (atomic_load(&g_failed) != 0)
            break;
        struct timespec nap = {0, 20000}; /* 20 us: a poll, not a spinning third thread on 2 CPUs */
        nanosleep(&nap, NULL);
    }
    return NULL;
}

/* Profiling the updates alone: with STREAM_BENCH_PERF_CTL naming the
 * control FIFO of 'perf record --control fifo:CTL --delay=-1', perf
 * samples only while batches run (bench/results/stream_profile.md). */
static void perf_control(const char *cmd)
{
    const char *ctl = getenv("STREAM_BENCH_PERF_CTL");
    FILE *f = ctl != NULL ? fopen(ctl, "w") : NULL;
    if (f != NULL) {
        fprintf(f, "%s\n", cmd);
        fclose(f);
    }
}

/* mode 0: sync through mkrt_stream_apply (apply_threads --apply-threads,
 * or --workers); 1: stream; 2: sync through the runtime; 3: sync through
 * mkrt_stream_apply on the caller alone (apply_threads 1). */
static int run_mkrt(const opts *o, unsigned mask, uint32_t B, int stream_mode, result *r)
{
    *r = (result){0};
    atomic_store(&g_failed, 0);
    uint64_t rss0 = resident_bytes();
    mkrt_stream_config sc = mkrt_stream_config_default();
    sc.vertices = g_n;
    sc.apply_threads = stream_mode == 0 ? (o->apply_threads != 0 ? o->apply_threads : o->workers) : 1;
    if (stream_mode == 3)
        stream_mode = 0;
    const mkrt_stream_query all[3] = {{MKRT_STREAM_BFS, g_root}, {MKRT_STREAM_SSSP, g_root}, {MKRT_STREAM_CC, 0}};
    for (unsigned k = 0; k < 3; k++)
        if (mask & (1u << k))
            sc.query[sc.queries++] = all[k];
    uint32_t *src = malloc(g_loaded * sizeof *src), *dst = malloc(g_loaded * sizeof *dst),
             *w = malloc(g_loaded * sizeof *w);
    uint64_t batches = (o->window + B - 1) / B;
    uint64_t *pub = malloc(batches * sizeof *pub), *vis = malloc(batches * sizeof *vis);
    double *lat = malloc(batches * sizeof *lat);
    mkrt_item *items = malloc(2 * (size_t)B * sizeof *items);
    if (!src || !dst || !w || !pub || !vis || !lat || !items)
        return fprintf(stderr, "stream_bench: out of memory\n"), -1;
    for (uint64_t i = 0; i < g_loaded; i++)
        src[i] = g_e[i].u, dst[i] = g_e[i].v, w[i] = g_e[i].w;
    mkrt_error err;
    mkrt_runtime *rt = NULL;
    if (mkrt_stream_create(&sc, &g_stream, &err) != MKRT_OK ||
        mkrt_stream_load(g_stream, src, dst, w, g_loaded, NULL, &err) != MKRT_OK)
        return fprintf(stderr, "stream_bench: %s\n", err.message), -1;
    free(src), free(dst), free(w);
    mkrt_config c = mkrt_config_default();
    c.cells = g_n;
    c.workers = o->workers;
    c.on_error = on_error;
    /* Runtime batches of at most 1,024 items from a ring of 256: each gets
     * one repair, so a producer that outruns the workers waits at the ring
     * (backpressure) instead of queueing batches whose repair grows with
     * them (the runtime's defaults, 65,536 and 16,384, gave second-long
     * latencies in stream mode). */
    c.max_batch = 1024;
    c.ring_capacity = 256;
    mkrt_producer *p = NULL;
    /* sync applies on this thread (mkrt_stream_apply): no runtime. */
    if (stream_mode != 0 && (mkrt_create(&c, &rt, &err) != MKRT_OK ||
                             mkrt_stream_register(g_stream, rt, &err) != MKRT_OK))
        return fprintf(stderr, "stream_bench: %s\n", err.message), -1;
    if (stream_mode != 0 && (p = mkrt_producer_open(rt, NULL)) == NULL)
        return fprintf(stderr, "stream_bench: no producer\n"), -1;
    watch wt = {pub, vis, 0, batches, 2 * (uint64_t)B};
    pthread_t th;
    if (stream_mode == 1)
        pthread_create(&th, NULL, watcher, &wt);
    int ok = 1;
    perf_control("enable");
    uint64_t t_start = bench_now_ns();
    for (uint64_t k = 0; k < batches && ok; k++) {
        uint64_t at = g_loaded + k * B, old = k * B;
        uint32_t b = (uint32_t)(o->window - k * B < B ? o->window - k * B : B);
        for (uint32_t i = 0; i < b; i++) {
            const edge3 *e = &g_e[at + i], *d = &g_e[old + i];
            mkrt_stream_insert_item(g_stream, e->u, e->v, e->w, &items[i]);
            mkrt_stream_delete_item(g_stream, d->u, d->v, &items[b + i]);
        }
        pub[k] = bench_now_ns();
        if (stream_mode == 0) {
            ok = mkrt_stream_apply(g_stream, items, 2 * (size_t)b, NULL, &err) == MKRT_OK;
            if (!ok)
                fprintf(stderr, "stream_bench: %s\n", err.message);
            vis[k] = bench_now_ns();
            continue;
        }
        ok = mkrt_publish(p, items, 2 * (size_t)b, MKRT_TIMEOUT_INFINITE, NULL) == MKRT_OK;
        if (stream_mode == 1) {
            atomic_store(&wt.published, k + 1);
        } else {
            ok = ok && mkrt_quiesce(rt, MKRT_TIMEOUT_INFINITE) == MKRT_OK;
            vis[k] = bench_now_ns();
        }
    }
    ok = ok && (rt == NULL || mkrt_quiesce(rt, MKRT_TIMEOUT_INFINITE) == MKRT_OK);
    uint64_t t_end = bench_now_ns();
    perf_control("disable");
    if (stream_mode == 1)
        pthread_join(th, NULL);
    mkrt_producer_close(p);
    r->bytes = resident_bytes() - rss0;
    mkrt_stream_stats sst;
    mkrt_stream_stats_read(g_stream, &sst);
    r->graph_x_csr = (double)sst.graph_bytes / (double)sst.csr_bytes;
    for (uint64_t k = 0; k < batches; k++)
        lat[k] = (double)(vis[k] - pub[k]) / 1e3;
    qsort(lat, batches, sizeof *lat, bench_cmp_double);
    r->ups = 2.0 * (double)o->window / ((double)(t_end - t_start) / 1e9);
    r->p50 = pct(lat, batches, 0.5), r->p99 = pct(lat, batches, 0.99), r->p999 = pct(lat, batches, 0.999);
    r->valid = ok && atomic_load(&g_failed) == 0 && view_equals_ref(g_stream, mask, "mkrt");
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
    mkrt_stream_destroy(g_stream);
    g_stream = NULL;
    free(pub), free(vis), free(lat), free(items);
    return 0;
}

/* Each mkrt run in a child process, as RisGraph's runs are: its resident
 * bytes are its own, not memory an earlier run freed into the heap.
 * mode: run_mkrt's (r[0]), or MODE_MIXED + run_mixed's cfg (r[0] the
 * interactive side, r[1] the bulk side). */
#define MODE_MIXED 4
static int run_mixed(const opts *o, unsigned mask, uint32_t B, int cfg, result *ri, result *rb);

static int run_forked(const opts *o, unsigned mask, uint32_t B, int mode, result r[2])
{
    int fd[2];
    if (pipe(fd) != 0)
        return fprintf(stderr, "stream_bench: no pipe\n"), -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return fprintf(stderr, "stream_bench: no fork\n"), -1;
    if (pid == 0) {
        close(fd[0]);
        r[1] = (result){0};
        int rc = mode >= MODE_MIXED ? run_mixed(o, mask, B, mode - MODE_MIXED, &r[0], &r[1])
                                    : run_mkrt(o, mask, B, mode, &r[0]);
        fflush(stdout);
        if (rc == 0 && write(fd[1], r, 2 * sizeof *r) != (ssize_t)(2 * sizeof *r))
            rc = -1;
        _exit(rc == 0 ? 0 : 1);
    }
    close(fd[1]);
    ssize_t got = read(fd[0], r, 2 * sizeof *r);
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (got != (ssize_t)(2 * sizeof *r) || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return fprintf(stderr, "stream_bench: the mkrt run (analyses %u, batch %u, mode %d) failed\n", mask, B,
                       mode), -1;
    return 0;
}

/* ---- Mixed mode: a bulk loader beside an interactive producer ------------- */

/* A stream of the workload's loaded edges with the analyses of mask. */
static mkrt_stream *mixed_stream(unsigned mask, uint32_t op_base)
{
    mkrt_stream_config sc = mkrt_stream_config_default();
    sc.vertices = g_n;
    sc.op_base = op_base;
    const mkrt_stream_query all[3] = {{MKRT_STREAM_BFS, g_root}, {MKRT_STREAM_SSSP, g_root}, {MKRT_STREAM_CC, 0}};
    for (unsigned k = 0; k < 3; k++)
        if (mask & (1u << k))
            sc.query[sc.queries++] = all[k];
    uint32_t *src = malloc(g_loaded * sizeof *src), *dst = malloc(g_loaded * sizeof *dst),
             *w = malloc(g_loaded * sizeof *w);
    mkrt_stream *s = NULL;
    mkrt_error err;
    if (src != NULL && dst != NULL && w != NULL) {
        for (uint64_t i = 0; i < g_loaded; i++)
            src[i] = g_e[i].u, dst[i] = g_e[i].v, w[i] = g_e[i].w;
        if (mkrt_stream_create(&sc, &s, &err) != MKRT_OK ||
            mkrt_stream_load(s, src, dst, w, g_loaded, NULL, &err) != MKRT_OK) {
            fprintf(stderr, "stream_bench: %s\n", err.message);
            mkrt_stream_destroy(s);
            s = NULL;
        }
    }
    free(src), free(dst), free(w);
    return s;
}

static uint64_t position(mkrt_stream *s)
{
    mkrt_stream_stats st;
    mkrt_stream_stats_read(s, &st);
    return st.position;
}

typedef struct bulk_side {
    const opts *o;
    mkrt_producer *p;
    uint32_t B;
    uint64_t t0, t1;
    _Atomic int done;
    int ok;
} bulk_side;

/* The bulk loader: the whole window in batches of B, published without
 * waiting (the ring's backpressure paces it); done once a view holds all. */
static void *bulk_loader(void *arg)
{
    bulk_side *b = arg;
    mkrt_item *items = malloc(2 * (size_t)b->B * sizeof *items);
    b->ok = items != NULL;
    b->t0 = bench_now_ns();
    for (uint64_t k = 0; b->ok && k * b->B < b->o->window; k++) {
        uint64_t at = g_loaded + k * b->B, old = k * b->B;
        uint32_t n = (uint32_t)(b->o->window - k * b->B < b->B ? b->o->window - k * b->B : b->B);
        for (uint32_t i = 0; i < n; i++) {
            mkrt_stream_insert_item(g_stream, g_e[at + i].u, g_e[at + i].v, g_e[at + i].w, &items[i]);
            mkrt_stream_delete_item(g_stream, g_e[old + i].u, g_e[old + i].v, &items[n + i]);
        }
        b->ok = mkrt_publish(b->p, items, 2 * (size_t)n, MKRT_TIMEOUT_INFINITE, NULL) == MKRT_OK;
    }
    while (b->ok && position(g_stream) < 2 * b->o->window && atomic_load(&g_failed) == 0) {
        struct timespec nap = {0, 50000};
        nanosleep(&nap, NULL);
    }
    b->t1 = bench_now_ns();
    b->ok = b->ok && atomic_load(&g_failed) == 0;
    atomic_store(&b->done, 1);
    free(items);
    return NULL;
}

/* One mixed run. cfg: 0 the interactive producer alone, 1 the bulk loader
 * alone, 2 both (interactive marked interactive), 3 both, no classes. */
static int run_mixed(const opts *o, unsigned mask, uint32_t B, int cfg, result *ri, result *rb)
{
    *ri = (result){0};
    *rb = (result){0};
    atomic_store(&g_failed, 0);
    uint64_t rss0 = resident_bytes();
    const int inter = cfg != 1, bulk = cfg != 0;
    g_stream = bulk ? mixed_stream(mask, 4000) : NULL;
    g_stream2 = inter ? mixed_stream(mask, 4000 + MKRT_STREAM_OPS) : NULL;
    if ((bulk && g_stream == NULL) || (inter && g_stream2 == NULL))
        return -1;
    mkrt_config c = mkrt_config_default();
    c.cells = g_n;
    c.workers = o->workers;
    c.on_error = on_error;
    c.max_batch = o->mixed_batch; /* 1024: as stream mode (run_mkrt) */
    c.ring_capacity = 256;
    mkrt_error err;
    mkrt_runtime *rt = NULL;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK || (bulk && mkrt_stream_register(g_stream, rt, &err) != MKRT_OK) ||
        (inter && mkrt_stream_register(g_stream2, rt, &err) != MKRT_OK))
        return fprintf(stderr, "stream_bench: %s\n", err.message), -1;
    bulk_side bs = {.o = o, .B = B, .ok = 1};
    mkrt_producer *ip = inter ? mkrt_producer_open(rt, NULL) : NULL;
    bs.p = bulk ? mkrt_producer_open(rt, NULL) : NULL;
    if ((inter && ip == NULL) || (bulk && bs.p == NULL))
        return fprintf(stderr, "stream_bench: no producer\n"), -1;
    if (cfg == 0 || cfg == 2) {
        if (mkrt_producer_set_class(ip, MKRT_CLASS_INTERACTIVE, &err) != MKRT_OK)
            return fprintf(stderr, "stream_bench: %s\n", err.message), -1;
    }
    uint64_t most = inter ? (bulk ? o->window : (o->mixed_n < o->window ? o->mixed_n : o->window)) : 0;
    double *lat = malloc((most + 1) * sizeof *lat);
    if (lat == NULL)
        return fprintf(stderr, "stream_bench: out of memory\n"), -1;
    pthread_t th;
    if (bulk)
        pthread_create(&th, NULL, bulk_loader, &bs);
    /* The interactive producer: one insert and one delete, waited for. */
    uint64_t k = 0, ti0 = bench_now_ns();
    int ok = 1;
    while (inter && ok && k < most && !(bulk && atomic_load(&bs.done))) {
        mkrt_item it[2];
        mkrt_stream_insert_item(g_stream2, g_e[g_loaded + k].u, g_e[g_loaded + k].v, g_e[g_loaded + k].w, &it[0]);
        mkrt_stream_delete_item(g_stream2, g_e[k].u, g_e[k].v, &it[1]);
        uint64_t t = bench_now_ns();
        ok = mkrt_publish(ip, it, 2, MKRT_TIMEOUT_INFINITE, NULL) == MKRT_OK;
        /* Sleep until the two updates ran (mkrt_wait), then look for the
         * repair they emitted (the next interactive batch). */
        uint64_t ticket = 0;
        ok = ok && mkrt_fence(ip, &ticket) == MKRT_OK && mkrt_wait(ip, ticket, MKRT_TIMEOUT_INFINITE) == MKRT_OK;
        while (ok && position(g_stream2) < 2 * (k + 1) && atomic_load(&g_failed) == 0) {
            /* A short sleep, not sched_yield: on busy CPUs a yielding
             * thread waits for a whole scheduling period, a sleeping one
             * is woken first. */
            struct timespec nap = {0, 10000};
            nanosleep(&nap, NULL);
        }
        lat[k++] = (double)(bench_now_ns() - t) / 1e3;
        ok = ok && atomic_load(&g_failed) == 0;
    }
    uint64_t ti1 = bench_now_ns();
    if (bulk)
        pthread_join(th, NULL);
    ok = ok && mkrt_quiesce(rt, MKRT_TIMEOUT_INFINITE) == MKRT_OK;
    uint64_t bytes = resident_bytes() - rss0;
    if (inter) {
        qsort(lat, k, sizeof *lat, bench_cmp_double);
        ri->ups = k > 0 ? 2.0 * (double)k / ((double)(ti1 - ti0) / 1e9) : 0;
        ri->p50 = pct(lat, k, 0.5), ri->p99 = pct(lat, k, 0.99), ri->p999 = pct(lat, k, 0.999);
        ri->bytes = bytes;
        /* The interactive stream holds a part of the window: its own oracle. */
        int good = ok && k > 0;
        uint64_t *got = malloc((size_t)g_n * sizeof *got), *want = malloc((size_t)g_n * sizeof *want);
        mkrt_stream_view view;
        for (uint32_t q = 0; good && q < (uint32_t)__builtin_popcount(mask); q++) {
            good = got != NULL && want != NULL && mkrt_stream_recompute(g_stream2, q, want, NULL) == MKRT_OK;
            mkrt_stream_view_open(g_stream2, &view);
            good = good && mkrt_stream_view_read(&view, q, 0, g_n, got, NULL) == MKRT_OK &&
                   memcmp(got, want, (size_t)g_n * sizeof *got) == 0;
            mkrt_stream_view_close(&view);
        }
        free(got), free(want);
        ri->valid = good;
        if (!good)
            fprintf(stderr, "stream_bench: the interactive stream differs from its recompute\n");
    }
    if (bulk) {
        rb->ups = 2.0 * (double)o->window / ((double)(bs.t1 - bs.t0) / 1e9);
        rb->bytes = bytes;
        rb->valid = ok && bs.ok && view_equals_ref(g_stream, mask, "mkrt bulk");
    }
    if (getenv("STREAM_BENCH_EXPLAIN") && cfg >= 2) {
        mkrt_plan_record rec[64];
        size_t nr = mkrt_plan_explain(rt, rec, 64);
        for (size_t i = 0; i < nr; i++)
            printf("#  batch %llu class %u why %u items %llu run %llu us age %u wait %llu us\n",
                   (unsigned long long)rec[i].batch, rec[i].klass, rec[i].class_why, (unsigned long long)rec[i].items,
                   (unsigned long long)rec[i].run_ns / 1000, rec[i].bulk_age, (unsigned long long)rec[i].bulk_wait_ns / 1000);
    }
    mkrt_stats st;
    mkrt_stats_read(rt, &st);
    if (cfg >= 2)
        printf("# mixed cfg %d: %llu interactive batches, %llu bulk requeues, %llu aged and %llu max-age "
               "promotions\n", cfg, (unsigned long long)st.plan_counts[MKRT_PLAN_N_INTERACTIVE],
               (unsigned long long)st.plan_counts[MKRT_PLAN_N_CLASS_REQUEUES],
               (unsigned long long)st.plan_counts[MKRT_PLAN_N_CLASS_AGED],
               (unsigned long long)st.plan_counts[MKRT_PLAN_N_CLASS_MAX_AGE]);
    mkrt_producer_close(ip);
    mkrt_producer_close(bs.p);
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
    mkrt_stream_destroy(g_stream);
    mkrt_stream_destroy(g_stream2);
    g_stream = g_stream2 = NULL;
    free(lat);
    return 0;
}

/* ---- RisGraph ------------------------------------------------------------- */

static char g_edges_file[256];

static int run_risgraph(const opts *o, unsigned mask, uint32_t B, result *r)
{
    *r = (result){0};
    char out[300], cmd[1200];
    snprintf(out, sizeof out, "%s.out", g_edges_file);
    snprintf(cmd, sizeof cmd, "OMP_NUM_THREADS=%u '%s/build/mkrt_stream_driver' '%s' %u %llu %u %llu %u %u '%s'",
             o->workers, o->risgraph, g_edges_file, g_n, (unsigned long long)g_loaded, B,
             (unsigned long long)o->window, mask, g_root, out);
    FILE *pp = popen(cmd, "r");
    unsigned long long bytes = 0;
    int n = pp == NULL ? 0 : fscanf(pp, "%lf %lf %lf %lf %llu", &r->ups, &r->p50, &r->p99, &r->p999, &bytes);
    int rc = pp == NULL ? -1 : pclose(pp);
    if (n != 5 || rc != 0)
        return fprintf(stderr, "stream_bench: the RisGraph driver failed (%s)\n", cmd), -1;
    r->bytes = bytes;
    FILE *f = fopen(out, "rb");
    uint64_t *got[3] = {0};
    int ok = f != NULL;
    for (unsigned k = 0; k < 3 && ok; k++) {
        if (!(mask & (1u << k)))
            continue;
        got[k] = malloc((size_t)g_n * sizeof(uint64_t));
        ok = got[k] != NULL && fread(got[k], sizeof(uint64_t), g_n, f) == g_n;
    }
    if (f != NULL)
        fclose(f);
    remove(out);
    r->valid = ok && equal_ref(mask, (const uint64_t *const *)got, "RisGraph");
    for (int k = 0; k < 3; k++)
        free(got[k]);
    return 0;
}

static int write_edges(void)
{
    snprintf(g_edges_file, sizeof g_edges_file, "/tmp/stream_bench_%d.edges", (int)getpid());
    FILE *f = fopen(g_edges_file, "wb");
    if (f == NULL || fwrite(g_e, sizeof *g_e, g_m, f) != g_m) {
        if (f != NULL)
            fclose(f);
        return fprintf(stderr, "stream_bench: cannot write %s\n", g_edges_file), -1;
    }
    return fclose(f);
}

static void row(FILE *csv, const char *sys, unsigned mask, uint32_t B, const char *mode, const result *r)
{
    printf("%-8s %-12s %6u %-7s %12.0f %10.1f %10.1f %10.1f %12llu %-5s", sys, analyses_name(mask), B, mode, r->ups,
           r->p50, r->p99, r->p999, (unsigned long long)r->bytes, r->valid ? "yes" : "NO");
    if (r->graph_x_csr > 0)
        printf(" graph %.2fx CSR", r->graph_x_csr);
    printf("\n");
    fflush(stdout);
    if (csv != NULL)
        fprintf(csv, "%s,%s,%u,%s,%.0f,%.2f,%.2f,%.2f,%llu,%s\n", sys, analyses_name(mask), B, mode, r->ups, r->p50,
                r->p99, r->p999, (unsigned long long)r->bytes, r->valid ? "yes" : "no");
}

int main(int argc, char **argv)
{
    opts o;
    int rc = parse(argc, argv, &o);
    if (rc != 0)
        return rc;
    if (build_workload(&o) != 0 || reference(&o) != 0)
        return 1;
    printf("stream_bench: Kronecker scale %u, %u vertices, %llu unique undirected edges; %llu loaded, a window "
           "of %llu inserts + %llu deletes; root %u; %u workers\n", o.scale, g_n, (unsigned long long)g_m,
           (unsigned long long)g_loaded, (unsigned long long)o.window, (unsigned long long)o.window, g_root,
           o.workers);
    if (o.risgraph != NULL) {
        char path[600];
        snprintf(path, sizeof path, "%s/build/mkrt_stream_driver", o.risgraph);
        if (access(path, X_OK) != 0) {
            fprintf(stderr, "stream_bench: no RisGraph driver at %s. Fix: make risgraph-driver RISGRAPH=%s (DIR is "
                    "a build from peers/risgraph-build.sh)\n", path, o.risgraph);
            return 1;
        }
        if (write_edges() != 0)
            return 1;
    } else {
        printf("stream_bench: RisGraph skipped (no --risgraph DIR)\n");
    }
    FILE *csv = NULL;
    if (o.csv != NULL && (csv = fopen(o.csv, "w")) == NULL)
        return fprintf(stderr, "stream_bench: cannot write %s\n", o.csv), 1;
    if (csv != NULL)
        fprintf(csv, "system,analyses,batch,mode,updates_per_s,p50,p99,p999,bytes,validated\n");
    printf("%-8s %-12s %6s %-7s %12s %10s %10s %10s %12s %s\n", "system", "analyses", "batch", "mode",
           "updates/s", "p50 us", "p99 us", "p999 us", "bytes", "valid");
    int all_valid = 1;
    for (uint32_t a = 0; a < o.na; a++)
        for (uint32_t b = 0; b < o.nb; b++) {
            result r;
            if (o.risgraph != NULL) {
                if (run_risgraph(&o, o.mask[a], o.batch[b], &r) != 0)
                    return 1;
                row(csv, "risgraph", o.mask[a], o.batch[b], "sync", &r);
                all_valid &= r.valid;
            }
            static const char *const mode_name[4] = {"sync", "stream", "sync-rt", "sync-1t"};
            for (int mode = 0; mode < 4; mode++) {
                if ((mode == 0 && !o.sync) || (mode == 1 && !o.stream) || (mode == 2 && !o.sync_rt) ||
                    (mode == 3 && !o.sync1))
                    continue;
                result rm[2];
                if (run_forked(&o, o.mask[a], o.batch[b], mode, rm) != 0)
                    return 1;
                row(csv, "mkrt", o.mask[a], o.batch[b], mode_name[mode], &rm[0]);
                all_valid &= rm[0].valid;
            }
        }
    /* Mixed: per analysis, the largest batch size as the bulk loader's. */
    for (uint32_t a = 0; o.mixed && a < o.na; a++) {
        uint32_t B = 0;
        for (uint32_t b = 0; b < o.nb; b++)
            B = o.batch[b] > B ? o.batch[b] : B;
        static const char *const cfg_name[4] = {"alone", "alone", "classes", "no-class"};
        result ri[4], rb[4];
        for (int cfg = 0; cfg < 4; cfg++) {
            result rm[2];
            if (run_forked(&o, o.mask[a], B, MODE_MIXED + cfg, rm) != 0)
                return 1;
            ri[cfg] = rm[0];
            rb[cfg] = rm[1];
            char mode[32];
            if (cfg != 1) {
                snprintf(mode, sizeof mode, "mix-int-%s", cfg_name[cfg]);
                row(csv, "mkrt", o.mask[a], 1, mode, &ri[cfg]);
                all_valid &= ri[cfg].valid;
            }
            if (cfg != 0) {
                snprintf(mode, sizeof mode, "mix-bulk-%s", cfg_name[cfg]);
                row(csv, "mkrt", o.mask[a], B, mode, &rb[cfg]);
                all_valid &= rb[cfg].valid;
            }
        }
        printf("mixed %s: interactive p99 %.1f us alone, %.1f us beside the bulk loader with classes (target <= "
               "1000), %.1f us without; bulk loader %.0f updates/s alone, %.0f with classes (%.0f%%, target >= "
               "80%%), %.0f without (%.0f%%)\n",
               analyses_name(o.mask[a]), ri[0].p99, ri[2].p99, ri[3].p99, rb[1].ups, rb[2].ups,
               100.0 * rb[2].ups / rb[1].ups, rb[3].ups, 100.0 * rb[3].ups / rb[1].ups);
    }
    if (csv != NULL)
        fclose(csv);
    if (o.risgraph != NULL)
        remove(g_edges_file);
    for (int q = 0; q < 3; q++)
        free(g_ref[q]);
    free(g_e);
    printf("stream_bench: every answer %s the independent recompute\n", all_valid ? "equals" : "does NOT equal");
    return all_valid ? 0 : 1;
}
