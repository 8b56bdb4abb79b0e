/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/stream_bench.c - streaming graph updates (include/mkrt_stream/stream.h).
 *
 * A Kronecker graph of --scale N (edgefactor 16, Graph500 weights 1..255)
 * is loaded; then P producer threads publish a mixed stream of insertions
 * (edges of a second Kronecker list: the same skew) and deletions (edges
 * of the loaded list), --delete-ratio of them deletions, while a BFS, an
 * SSSP (both from the highest-degree vertex) and CC are kept exact.
 *
 *   updates_per_s     updates published / seconds until the last is
 *                     visible in the results (mkrt_quiesce), checkpoints
 *                     excluded
 *   latency_p*_ms     a probe thread publishes one update every ~1 ms and
 *                     times it from its publish to the apply that makes it
 *                     visible in a view (its op ran, then one more apply)
 *   speedup_vs_recompute  per batch of 1,000 updates: the time to recompute
 *                     the three analyses with mkrt's own static kernels
 *                     (examples/graph500/traverse_mkrt.c, on a CSR of the
 *                     final graph) over the time 1,000 updates take here
 *   validated         yes when every checkpoint (--checkpoints, quiesced)
 *                     equalled the from-scratch oracle for every query
 *   bytes_per_edge    the adjacency's bytes from the allocator per
 *                     undirected edge; csr_bytes_per_edge beside it
 *
 *   stream_bench [--scale N] [--producers P] [--delete-ratio R] [--updates U]
 *                [--checkpoints K] [--batch B (runtime max_batch, 1024)] [--ring R (ring_capacity,
 *                256)] [--workers W]
 *                [--queries MASK: 1 BFS + 2 SSSP + 4 CC, default 7] [--seed S] [--csv FILE]
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_util.h"
#include "examples/graph500/graph500.h"
#include "examples/graph500/traverse.h"
#include "mkrt/runtime.h"
#include "mkrt_stream/stream.h"

#define CHUNK 256
#define PROBES_MAX 200000

typedef struct opts {
    uint32_t scale, producers, checkpoints, batch, workers, ring;
    double delete_ratio;
    uint64_t updates, seed;
    const char *csv;
    unsigned mask; /* queries kept: 1 BFS, 2 SSSP, 4 CC */
} opts;

static mkrt_stream *g_stream;
static g500_edge_list g_loaded, g_fresh;
static _Atomic int g_phase_on, g_stop;
static _Atomic uint64_t g_phase_id;
static double g_probe_ms[PROBES_MAX];
static size_t g_probes;
static uint32_t g_queries;

static void on_error(void *ctx, const mkrt_item *it, mkrt_status why, const char *msg)
{
    (void)ctx;
    (void)msg;
    char buf[320];
    mkrt_stream_failed(g_stream, it, why, buf, sizeof buf); /* counts; the stats report them */
}

static int usage(const char *why)
{
    fprintf(stderr, "stream_bench: %s\nusage: stream_bench [--scale 1..26] [--producers 1..16] "
            "[--delete-ratio 0..1] [--updates N] [--checkpoints 1..100] [--batch 1..65536] [--ring 2^k] [--workers 0..64] "
            "[--queries MASK (1 BFS, 2 SSSP, 4 CC; 7)] [--seed S] [--csv FILE]\n", why);
    return 2;
}

static int parse(int argc, char **argv, opts *o)
{
    *o = (opts){18, 2, 2, 1024, 0, 256, 0.5, 0, 1, NULL, 7};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc)
            return usage("an option without its value");
        char *end;
        errno = 0;
        const char *v = argv[++i];
        if (strcmp(a, "--csv") == 0) {
            o->csv = v;
            continue;
        }
        if (strcmp(a, "--delete-ratio") == 0) {
            o->delete_ratio = strtod(v, &end);
            if (*end != 0 || o->delete_ratio < 0 || o->delete_ratio > 1)
                return usage("--delete-ratio takes a number in 0..1");
            continue;
        }
        unsigned long long n = strtoull(v, &end, 10);
        if (*end != 0 || errno != 0 || v[0] == '-')
            return usage("a number was expected");
        if (strcmp(a, "--scale") == 0 && n >= 1 && n <= 26)
            o->scale = (uint32_t)n;
        else if (strcmp(a, "--producers") == 0 && n >= 1 && n <= 16)
            o->producers = (uint32_t)n;
        else if (strcmp(a, "--checkpoints") == 0 && n >= 1 && n <= 100)
            o->checkpoints = (uint32_t)n;
        else if (strcmp(a, "--batch") == 0 && n >= 1 && n <= 65536)
            o->batch = (uint32_t)n;
        else if (strcmp(a, "--ring") == 0 && n >= 2 && n <= 65536 && (n & (n - 1)) == 0)
            o->ring = (uint32_t)n;
        else if (strcmp(a, "--workers") == 0 && n <= 64)
            o->workers = (uint32_t)n;
        else if (strcmp(a, "--updates") == 0 && n >= 1)
            o->updates = n;
        else if (strcmp(a, "--queries") == 0 && n >= 1 && n <= 7)
            o->mask = (unsigned)n;
        else if (strcmp(a, "--seed") == 0)
            o->seed = n;
        else
            return usage("an unknown option or a value out of range");
    }
    if (o->updates == 0)
        o->updates = (uint64_t)8 << o->scale; /* 2M at scale 18 */
    return 0;
}

typedef struct producer {
    mkrt_runtime *rt;
    const opts *o;
    uint32_t id;
    uint64_t del_at, del_end, ins_at, ins_end; /* slices of the two lists */
    uint64_t phase_n;                          /* updates per phase */
    g500_rng rng;
    pthread_barrier_t *start, *done;
    int failed;
} producer;

static void next_update(producer *p, mkrt_item *it)
{
    int del = (double)(g500_rng_next(&p->rng) >> 11) * 0x1.0p-53 < p->o->delete_ratio;
    if ((del && p->del_at < p->del_end) || p->ins_at >= p->ins_end) {
        const g500_edge *e = &g_loaded.edge[p->del_at++ % g_loaded.edges];
        mkrt_stream_delete_item(g_stream, e->u, e->v == e->u ? (e->v + 1) % g_loaded.vertices : e->v, it);
    } else {
        const g500_edge *e = &g_fresh.edge[p->ins_at++ % g_fresh.edges];
        uint32_t v = e->v == e->u ? (e->v + 1) % g_fresh.vertices : e->v;
        mkrt_stream_insert_item(g_stream, e->u, v, g500_edge_weight(g_fresh.seed, e->u, v), it);
    }
}

static void *produce(void *arg)
{
    producer *p = arg;
    mkrt_producer *pr = mkrt_producer_open(p->rt, NULL);
    mkrt_item items[CHUNK];
    for (uint32_t ph = 0; ph < p->o->checkpoints; ph++) {
        pthread_barrier_wait(p->start);
        for (uint64_t left = p->phase_n; left > 0 && pr != NULL;) {
            size_t n = left < CHUNK ? (size_t)left : CHUNK;
            for (size_t k = 0; k < n; k++)
                next_update(p, &items[k]);
            if (mkrt_publish(pr, items, n, MKRT_TIMEOUT_INFINITE, NULL) != MKRT_OK)
                p->failed = 1;
            left -= n;
        }
        pthread_barrier_wait(p->done);
    }
    if (pr == NULL)
        p->failed = 1;
    mkrt_producer_close(pr);
    return NULL;
}

/* One update at a time, alternating insert and delete of one edge. */
static void *probe(void *arg)
{
    mkrt_runtime *rt = arg;
    mkrt_producer *pr = mkrt_producer_open(rt, NULL);
    uint32_t a = 1, b = g_loaded.vertices - 2;
    for (uint64_t k = 0; pr != NULL && !atomic_load(&g_stop); k++) {
        struct timespec nap = {0, 1000000};
        nanosleep(&nap, NULL);
        if (!atomic_load(&g_phase_on))
            continue;
        uint64_t phase = atomic_load(&g_phase_id);
        mkrt_item it;
        if (k % 2 == 0)
            mkrt_stream_insert_item(g_stream, a, b, 1, &it);
        else
            mkrt_stream_delete_item(g_stream, a, b, &it);
        uint64_t t0 = bench_now_ns(), ticket;
        if (mkrt_publish(pr, &it, 1, MKRT_TIMEOUT_INFINITE, NULL) != MKRT_OK || mkrt_fence(pr, &ticket) != MKRT_OK ||
            mkrt_wait(pr, ticket, MKRT_TIMEOUT_INFINITE) != MKRT_OK)
            break;
        mkrt_stream_stats st;
        mkrt_stream_stats_read(g_stream, &st);
        uint64_t want = st.applies + 1;
        while (!atomic_load(&g_stop) && st.applies < want) {
            sched_yield();
            mkrt_stream_stats_read(g_stream, &st);
        }
        uint64_t t1 = bench_now_ns();
        if (st.applies >= want && atomic_load(&g_phase_on) && atomic_load(&g_phase_id) == phase &&
            g_probes < PROBES_MAX)
            g_probe_ms[g_probes++] = (double)(t1 - t0) / 1e6;
    }
    mkrt_producer_close(pr);
    return NULL;
}

static int validate(uint32_t n)
{
    uint64_t *got = malloc((size_t)n * sizeof *got), *want = malloc((size_t)n * sizeof *want);
    int good = got != NULL && want != NULL;
    mkrt_stream_view view;
    mkrt_stream_view_open(g_stream, &view);
    for (uint32_t q = 0; q < g_queries && good; q++) {
        good = mkrt_stream_view_read(&view, q, 0, n, got, NULL) == MKRT_OK &&
               mkrt_stream_recompute(g_stream, q, want, NULL) == MKRT_OK &&
               memcmp(got, want, (size_t)n * sizeof *got) == 0;
        if (!good)
            fprintf(stderr, "stream_bench: query %u differs from the recompute\n", q);
    }
    mkrt_stream_view_close(&view);
    free(got);
    free(want);
    return good;
}

/* Seconds to recompute BFS, SSSP and CC with mkrt's static kernels (median of 3). */
static double recompute_seconds(uint32_t n, uint32_t root)
{
    mkrt_stream_stats st;
    mkrt_stream_stats_read(g_stream, &st);
    uint64_t *off = malloc(((size_t)n + 1) * sizeof *off);
    uint32_t *tg = malloc(2 * st.edges * sizeof *tg + 4), *w = malloc(2 * st.edges * sizeof *w + 4);
    uint32_t *parent = malloc((size_t)n * sizeof *parent), *comp = malloc((size_t)n * sizeof *comp);
    uint64_t *dist = malloc((size_t)n * sizeof *dist);
    double t[3] = {-1, -1, -1};
    char why[256];
    if (off != NULL && tg != NULL && w != NULL && parent != NULL && comp != NULL && dist != NULL &&
        mkrt_stream_csr(g_stream, off, tg, w, 2 * st.edges, NULL) == MKRT_OK) {
        g500_csr g = {n, off, tg, w};
        traverse_engine *e = traverse_mkrt_ops.open(&g, 0, why, sizeof why);
        for (int r = 0; r < 3 && e != NULL; r++) {
            uint64_t t0 = bench_now_ns();
            if (traverse_mkrt_ops.bfs(e, root, parent, why, sizeof why) != 0 ||
                traverse_mkrt_ops.sssp(e, root, dist, why, sizeof why) != 0 ||
                traverse_mkrt_ops.cc(e, comp, why, sizeof why) != 0) {
                fprintf(stderr, "stream_bench: recompute failed: %s\n", why);
                break;
            }
            t[r] = (double)(bench_now_ns() - t0) / 1e9;
        }
        if (e != NULL)
            traverse_mkrt_ops.close(e);
        else
            fprintf(stderr, "stream_bench: %s\n", why);
    }
    free(off), free(tg), free(w), free(parent), free(comp), free(dist);
    return bench_median(t, 3);
}

static double pct(double *v, size_t n, double p)
{
    if (n == 0)
        return -1;
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i];
}

int main(int argc, char **argv)
{
    opts o;
    int rc = parse(argc, argv, &o);
    if (rc != 0)
        return rc;
    char why[256];
    if (g500_generate(o.scale, 16, o.seed, &g_loaded, why, sizeof why) != 0 ||
        g500_generate(o.scale, 16, o.seed + 1000, &g_fresh, why, sizeof why) != 0) {
        fprintf(stderr, "stream_bench: %s\n", why);
        return 1;
    }
    uint32_t n = g_loaded.vertices;
    uint64_t m = g_loaded.edges;
    uint32_t *src = malloc(m * sizeof *src), *dst = malloc(m * sizeof *dst), *w = malloc(m * sizeof *w);
    uint32_t *deg = calloc(n, sizeof *deg);
    if (src == NULL || dst == NULL || w == NULL || deg == NULL)
        return fprintf(stderr, "stream_bench: out of memory\n"), 1;
    for (uint64_t i = 0; i < m; i++) {
        src[i] = g_loaded.edge[i].u;
        dst[i] = g_loaded.edge[i].v;
        w[i] = g500_edge_weight(g_loaded.seed, src[i], dst[i]);
        deg[src[i]]++, deg[dst[i]]++;
    }
    uint32_t root = 0;
    for (uint32_t v = 1; v < n; v++)
        root = deg[v] > deg[root] ? v : root;
    mkrt_stream_config sc = mkrt_stream_config_default();
    sc.vertices = n;
    const mkrt_stream_query all[3] = {{MKRT_STREAM_BFS, root}, {MKRT_STREAM_SSSP, root}, {MKRT_STREAM_CC, 0}};
    for (unsigned k = 0; k < 3; k++)
        if (o.mask & (1u << k))
            sc.query[sc.queries++] = all[k];
    g_queries = sc.queries;
    mkrt_error err;
    uint64_t skipped = 0, t_load = bench_now_ns();
    if (mkrt_stream_create(&sc, &g_stream, &err) != MKRT_OK ||
        mkrt_stream_load(g_stream, src, dst, w, m, &skipped, &err) != MKRT_OK)
        return fprintf(stderr, "stream_bench: %s\n", err.message), 1;
    double load_s = (double)(bench_now_ns() - t_load) / 1e9;
    free(src), free(dst), free(w), free(deg);
    mkrt_config c = mkrt_config_default();
    c.cells = n;
    c.max_batch = o.batch;
    c.ring_capacity = o.ring; /* a short ring: backpressure, not queueing, when producers outrun */
    c.workers = o.workers;
    c.on_error = on_error;
    mkrt_runtime *rt;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK || mkrt_stream_register(g_stream, rt, &err) != MKRT_OK)
        return fprintf(stderr, "stream_bench: %s\n", err.message), 1;
    mkrt_stream_stats st0;
    mkrt_stream_stats_read(g_stream, &st0);
    printf("scale %u: %u vertices, %llu edges loaded (%llu tuples skipped) in %.2f s; root %u\n", o.scale, n,
           (unsigned long long)st0.edges, (unsigned long long)skipped, load_s, root);

    pthread_barrier_t start, done;
    pthread_barrier_init(&start, NULL, o.producers + 1);
    pthread_barrier_init(&done, NULL, o.producers + 1);
    producer *ps = calloc(o.producers, sizeof *ps);
    pthread_t *th = calloc(o.producers, sizeof *th), pt;
    uint64_t per = o.updates / o.producers, del_slice = m / o.producers, ins_slice = g_fresh.edges / o.producers;
    for (uint32_t i = 0; i < o.producers; i++) {
        ps[i] = (producer){rt, &o, i, i * del_slice, (i + 1) * del_slice, i * ins_slice, (i + 1) * ins_slice,
                           per / o.checkpoints, {0}, &start, &done, 0};
        g500_rng_init(&ps[i].rng, o.seed, 77 + i);
        pthread_create(&th[i], NULL, produce, &ps[i]);
    }
    pthread_create(&pt, NULL, probe, rt);
    double busy_s = 0;
    int valid = 1;
    for (uint32_t ph = 0; ph < o.checkpoints; ph++) {
        atomic_fetch_add(&g_phase_id, 1);
        atomic_store(&g_phase_on, 1);
        uint64_t t0 = bench_now_ns();
        pthread_barrier_wait(&start);
        pthread_barrier_wait(&done);
        atomic_store(&g_phase_on, 0);
        mkrt_quiesce(rt, MKRT_TIMEOUT_INFINITE);
        busy_s += (double)(bench_now_ns() - t0) / 1e9;
        valid &= validate(n);
    }
    atomic_store(&g_stop, 1);
    for (uint32_t i = 0; i < o.producers; i++) {
        pthread_join(th[i], NULL);
        valid &= !ps[i].failed;
    }
    pthread_join(pt, NULL);
    mkrt_quiesce(rt, MKRT_TIMEOUT_INFINITE);
    valid &= validate(n);
    mkrt_stream_stats st;
    mkrt_stats rs;
    mkrt_stream_stats_read(g_stream, &st);
    mkrt_stats_read(rt, &rs);
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);

    uint64_t total = per / o.checkpoints * o.checkpoints * o.producers;
    double ups = (double)total / busy_s;
    double rec_s = recompute_seconds(n, root);
    double speedup = rec_s > 0 ? rec_s / (1000.0 / ups) : -1;
    qsort(g_probe_ms, g_probes, sizeof *g_probe_ms, bench_cmp_double);
    double bpe = (double)st.graph_bytes / (double)st.edges, cpe = (double)st.csr_bytes / (double)st.edges;
    printf("%llu updates (%.0f%% deletions) from %u producers in %.3f s: %.0f updates/s\n",
           (unsigned long long)total, o.delete_ratio * 100, o.producers, busy_s, ups);
    printf("  applied: %llu inserts, %llu deletes, %llu duplicates, %llu absent deletions; %llu applies, "
           "%llu values reset, %llu edges relaxed\n", (unsigned long long)st.inserted,
           (unsigned long long)st.deleted, (unsigned long long)st.duplicates, (unsigned long long)st.failed_absent,
           (unsigned long long)st.applies, (unsigned long long)st.reset, (unsigned long long)st.relaxed);
    printf("  latency (publish to visible, %zu probes): p50 %.3f ms, p99 %.3f ms, p999 %.3f ms\n", g_probes,
           pct(g_probe_ms, g_probes, 0.5), pct(g_probe_ms, g_probes, 0.99), pct(g_probe_ms, g_probes, 0.999));
    printf("  recompute BFS+SSSP+CC (mkrt static kernels): %.3f s; per 1000 updates here %.3f ms: %.0fx\n",
           rec_s, 1000.0 / ups * 1e3, speedup);
    printf("  graph %.2f bytes/edge (CSR %.2f): %.2fx; validated %s; runtime batches %llu\n", bpe, cpe, bpe / cpe,
           valid ? "yes" : "no", (unsigned long long)rs.batches);
    if (o.csv != NULL) {
        FILE *f = fopen(o.csv, "w");
        if (f == NULL)
            return fprintf(stderr, "stream_bench: cannot write %s\n", o.csv), 1;
        fprintf(f, "metric,value\nupdates_per_s,%.0f\nlatency_p50_ms,%.3f\nlatency_p99_ms,%.3f\n"
                   "latency_p999_ms,%.3f\nspeedup_vs_recompute,%.1f\nvalidated,%s\nbytes_per_edge,%.2f\n"
                   "csr_bytes_per_edge,%.2f\nscale,%u\nproducers,%u\ndelete_ratio,%.2f\nupdates,%llu\n"
                   "recompute_ms,%.2f\nprobes,%zu\nmax_batch,%u\nring_capacity,%u\n",
                ups, pct(g_probe_ms, g_probes, 0.5), pct(g_probe_ms, g_probes, 0.99),
                pct(g_probe_ms, g_probes, 0.999), speedup, valid ? "yes" : "no", bpe, cpe, o.scale, o.producers,
                o.delete_ratio, (unsigned long long)total, rec_s * 1e3, g_probes, o.batch, o.ring);
        fclose(f);
    }
    mkrt_stream_destroy(g_stream);
    g500_edge_list_free(&g_loaded);
    g500_edge_list_free(&g_fresh);
    free(ps);
    free(th);
    return valid ? 0 : 1;
}
