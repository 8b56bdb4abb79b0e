/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/stream_stress.c - streaming graphs (mkrt_stream/stream.h) under load:
 * producer threads publish random insertions and deletions (and, on
 * purpose, duplicates, weight clashes and deletions of absent edges) while
 * a reader thread opens views without pause. Each producer owns the edges
 * whose smaller endpoint is its own modulo P, and keeps a mirror of them,
 * so it knows what the graph must hold and which of its updates must fail.
 * Round after round: publish, mkrt_quiesce, then check that the graph
 * equals the mirrors, that every standing query (BFS and SSSP from two
 * sources, CC) equals a from-scratch recompute, and that every failure was
 * expected and counted. The reader checks what a view promises: positions
 * never go back, a source reads 0, a component label is at most its vertex.
 *
 *   stream_stress [--seconds N] [--producers P] [--vertices V] [--sim 0|1] [--help]
 *
 * Prints one SUMMARY line; exits 1 on any difference. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/thread.h"
#include "mkrt/mkrt.h"
#include "mkrt_stream/stream.h"
#include "stress_util.h"

#define MAX_PRODUCERS 8
#define PER_ROUND 3000

static mkrt_stream *stream;
static mkrt_runtime *rt;
static uint32_t V, P;
static _Atomic uint64_t failed_seen;
static _Atomic int reader_stop, reader_bad;

typedef struct producer {
    unsigned id;
    uint64_t seed;
    uint8_t *w; /* mirror: w[u * V + v] (u < v, u % P == id), 0: absent */
    uint64_t expect_fail, expect_dup;
    int bad;
} producer;

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void on_error(void *ctx, const mkrt_item *it, mkrt_status why, const char *msg)
{
    (void)ctx;
    (void)msg;
    char buf[320];
    if (mkrt_stream_failed(stream, it, why, buf, sizeof buf) != MKRT_OK || strstr(buf, "Fix:") == NULL)
        atomic_store(&reader_bad, 2);
    atomic_fetch_add(&failed_seen, 1);
}

static int produce(void *arg)
{
    producer *p = arg;
    mkrt_producer *pr = mkrt_producer_open(rt, NULL);
    if (pr == NULL) {
        p->bad = 1;
        return 0;
    }
    mkrt_item items[32];
    for (int done = 0; done < PER_ROUND; done += 32) {
        for (int k = 0; k < 32; k++) {
            uint32_t u, v;
            do {
                u = (uint32_t)(rnd(&p->seed) % V);
                v = (uint32_t)(rnd(&p->seed) % V);
                if (u > v) {
                    uint32_t t = u;
                    u = v;
                    v = t;
                }
            } while (u == v || u % P != p->id);
            uint8_t *cell = &p->w[(size_t)u * V + v];
            uint64_t r = rnd(&p->seed) % 16;
            if (*cell == 0 && r < 2) { /* a deletion of an absent edge */
                mkrt_stream_delete_item(stream, u, v, &items[k]);
                p->expect_fail++;
            } else if (*cell != 0 && r < 2) { /* the same edge again: a duplicate, or a clash */
                uint32_t w = r == 0 ? *cell : (*cell % 9) + 1;
                mkrt_stream_insert_item(stream, u, v, w, &items[k]);
                if (w == *cell)
                    p->expect_dup++;
                else
                    p->expect_fail++;
            } else if (*cell != 0) {
                mkrt_stream_delete_item(stream, u, v, &items[k]);
                *cell = 0;
            } else {
                *cell = (uint8_t)(1 + rnd(&p->seed) % 9);
                mkrt_stream_insert_item(stream, u, v, *cell, &items[k]);
            }
        }
        if (mkrt_publish(pr, items, 32, MKRT_TIMEOUT_INFINITE, NULL) != MKRT_OK)
            p->bad = 1;
    }
    mkrt_producer_close(pr);
    return 0;
}

static int read_views(void *arg)
{
    (void)arg;
    uint64_t last = 0, *val = malloc((size_t)V * sizeof *val);
    while (val != NULL && !atomic_load(&reader_stop)) {
        mkrt_stream_view view;
        mkrt_stream_view_open(stream, &view);
        int bad = view.position < last;
        last = view.position;
        uint64_t src;
        bad |= mkrt_stream_view_read(&view, 0, 0, 1, &src, NULL) != MKRT_OK || src != 0;
        bad |= mkrt_stream_view_read(&view, 4, 0, V, val, NULL) != MKRT_OK;
        for (uint32_t v = 0; v < V && !bad; v++)
            bad = val[v] > v;
        mkrt_stream_view_close(&view);
        if (bad)
            atomic_store(&reader_bad, 1);
    }
    free(val);
    return 0;
}

/* The graph as the stream holds it equals the mirrors; the queries equal the oracle. */
static int check(producer *ps, char *why, size_t len)
{
    mkrt_stream_stats st;
    mkrt_stream_stats_read(stream, &st);
    uint64_t *off = malloc(((size_t)V + 1) * sizeof *off), *got = malloc((size_t)V * sizeof *got);
    uint64_t *want = malloc((size_t)V * sizeof *want);
    uint32_t *tg = malloc((2 * st.edges + 1) * sizeof *tg), *w = malloc((2 * st.edges + 1) * sizeof *w);
    int good = off != NULL && got != NULL && want != NULL && tg != NULL && w != NULL &&
               mkrt_stream_csr(stream, off, tg, w, 2 * st.edges, NULL) == MKRT_OK;
    uint64_t mirrored = 0;
    for (uint32_t u = 0; u < V && good; u++) {
        const uint8_t *row = ps[u % P].w + (size_t)u * V;
        for (uint32_t v = u + 1; v < V; v++)
            mirrored += row[v] != 0;
        for (uint64_t i = off[u]; i < off[u + 1] && good; i++)
            if (tg[i] > u && row[tg[i]] != w[i]) {
                snprintf(why, len, "edge {%u, %u} weight %u in the graph, %u in the mirror", u, tg[i], w[i],
                         row[tg[i]]);
                good = 0;
            }
    }
    if (good && mirrored != st.edges) {
        snprintf(why, len, "%llu edges in the graph, %llu in the mirrors", (unsigned long long)st.edges,
                 (unsigned long long)mirrored);
        good = 0;
    }
    mkrt_stream_view view;
    mkrt_stream_view_open(stream, &view);
    for (uint32_t q = 0; q < 5 && good; q++) {
        good = mkrt_stream_view_read(&view, q, 0, V, got, NULL) == MKRT_OK &&
               mkrt_stream_recompute(stream, q, want, NULL) == MKRT_OK;
        for (uint32_t v = 0; v < V && good; v++)
            if (got[v] != want[v]) {
                snprintf(why, len, "query %u vertex %u: %llu incrementally, %llu from scratch", q, v,
                         (unsigned long long)got[v], (unsigned long long)want[v]);
                good = 0;
            }
    }
    mkrt_stream_view_close(&view);
    free(off), free(got), free(want), free(tg), free(w);
    return good;
}

int main(int argc, char **argv)
{
    unsigned vals[4] = {3, 2, 400, 0};
    const stress_opt opts[] = {{"seconds", "run for N seconds", &vals[0]},
                               {"producers", "producer threads (1..8)", &vals[1]},
                               {"vertices", "vertices (16..20000)", &vals[2]},
                               {"sim", "1: the SIM backend", &vals[3]},
                               {NULL, NULL, NULL}};
    stress_getopt(argc, argv, "random edge insertions and deletions against a mirror and an oracle", opts);
    P = vals[1] < 1 ? 1 : vals[1] > MAX_PRODUCERS ? MAX_PRODUCERS : vals[1];
    V = vals[2] < 16 ? 16 : vals[2] > 20000 ? 20000 : vals[2];
    mkrt_stream_config sc = mkrt_stream_config_default();
    sc.vertices = V;
    sc.weight_max = 9;
    sc.queries = 5;
    sc.query[0] = (mkrt_stream_query){MKRT_STREAM_BFS, 0};
    sc.query[1] = (mkrt_stream_query){MKRT_STREAM_SSSP, 0};
    sc.query[2] = (mkrt_stream_query){MKRT_STREAM_BFS, V / 2};
    sc.query[3] = (mkrt_stream_query){MKRT_STREAM_SSSP, V - 1};
    sc.query[4] = (mkrt_stream_query){MKRT_STREAM_CC, 0};
    mkrt_config c = mkrt_config_default();
    c.cells = V;
    c.backend = vals[3] ? MKRT_BACKEND_SIM : MKRT_BACKEND_CPU;
    c.on_error = on_error;
    c.max_batch = 1024; /* many batches, many applies */
    mkrt_error err;
    if (mkrt_stream_create(&sc, &stream, &err) != MKRT_OK || mkrt_create(&c, &rt, &err) != MKRT_OK ||
        mkrt_stream_register(stream, rt, &err) != MKRT_OK) {
        fprintf(stderr, "stream_stress: %s\n", err.message);
        return 1;
    }
    producer ps[MAX_PRODUCERS];
    for (unsigned i = 0; i < P; i++) {
        ps[i] = (producer){i, 0x9e3779b97f4a7c15ULL * (i + 1), calloc((size_t)V * V, 1), 0, 0, 0};
        if (ps[i].w == NULL) {
            fprintf(stderr, "stream_stress: no memory for the mirrors (%u vertices)\n", V);
            return 1;
        }
    }
    mkrt__thread reader;
    mkrt__thread_start(&reader, read_views, NULL);
    uint64_t end = stress_now_ns() + (uint64_t)vals[0] * 1000000000ull;
    unsigned rounds = 0;
    int good = 1;
    char why[256] = "";
    do {
        mkrt__thread t[MAX_PRODUCERS];
        for (unsigned i = 0; i < P; i++)
            mkrt__thread_start(&t[i], produce, &ps[i]);
        for (unsigned i = 0; i < P; i++)
            mkrt__thread_join_result(t[i], NULL);
        if (mkrt_quiesce(rt, MKRT_TIMEOUT_INFINITE) != MKRT_OK) {
            snprintf(why, sizeof why, "mkrt_quiesce failed");
            good = 0;
        }
        good = good && check(ps, why, sizeof why);
        rounds++;
    } while (good && stress_now_ns() < end);
    atomic_store(&reader_stop, 1);
    mkrt__thread_join_result(reader, NULL);
    mkrt_stream_stats st;
    mkrt_stats rs;
    mkrt_stream_stats_read(stream, &st);
    mkrt_stats_read(rt, &rs);
    uint64_t want_fail = 0, want_dup = 0;
    for (unsigned i = 0; i < P; i++) {
        want_fail += ps[i].expect_fail;
        want_dup += ps[i].expect_dup;
        good &= !ps[i].bad;
    }
    /* A weight clash published twice in a row is the same item twice: the
     * runtime's dedupe may prune the copy (the op is idempotent), so a
     * failure expected may come back as a prune instead. */
    if (good && (st.failed_absent + st.failed_invalid != rs.failed || rs.failed > want_fail ||
                 atomic_load(&failed_seen) != rs.failed ||
                 rs.failed + st.duplicates + rs.pruned != want_fail + want_dup ||
                 rs.published + rs.emitted != rs.executed + rs.pruned + rs.failed)) {
        snprintf(why, sizeof why, "failures %llu+%llu counted, %llu by the runtime, %llu expected; duplicates "
                 "%llu+%llu pruned, %llu expected", (unsigned long long)st.failed_absent,
                 (unsigned long long)st.failed_invalid, (unsigned long long)rs.failed,
                 (unsigned long long)want_fail, (unsigned long long)st.duplicates, (unsigned long long)rs.pruned,
                 (unsigned long long)want_dup);
        good = 0;
    }
    if (atomic_load(&reader_bad)) {
        snprintf(why, sizeof why, "%s", atomic_load(&reader_bad) == 2 ? "a failure without a Fix"
                                                                      : "a view broke its promises");
        good = 0;
    }
    if (!good)
        fprintf(stderr, "stream_stress: %s\n", why);
    printf("SUMMARY stream_stress producers %u vertices %u backend %s rounds %u inserts %llu deletes %llu "
           "failed_expected %llu applies %llu reset %llu %s\n", P, V, vals[3] ? "sim" : "cpu", rounds,
           (unsigned long long)st.inserted, (unsigned long long)st.deleted, (unsigned long long)want_fail,
           (unsigned long long)st.applies, (unsigned long long)st.reset, good ? "PASS" : "FAIL");
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
    mkrt_stream_destroy(stream);
    for (unsigned i = 0; i < P; i++)
        free(ps[i].w);
    return good ? 0 : 1;
}
