/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_stream.c - streaming graphs (include/mkrt_stream/stream.h) on the CPU
 * pool and on MKRT_BACKEND_SIM: two producer threads publish random
 * insertions and deletions (some absent, some duplicates) over a small
 * random graph; after every mkrt_quiesce each standing query (two BFS, an
 * SSSP, CC) equals the from-scratch oracle, the graph equals a mirror kept
 * by the test, and every item is accounted for. Then bad input: vertices
 * beyond the graph, self-loops, weights out of range, a weight clash,
 * deleting an absent edge, reading a query or vertex that does not exist:
 * each fails with a Fix, counted, and the other updates still apply. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/thread.h"
#include "mkrt/graph.h"
#include "mkrt/runtime.h"
#include "mkrt_stream/stream.h"
#include "tap.h"

#define N 600u
#define ROUNDS 12
#define PER_PRODUCER 400

typedef struct fixture {
    mkrt_stream *s;
    mkrt_runtime *rt;
    _Atomic uint64_t failures;
    _Atomic uint64_t fix_missing;
    char last[512];
} fixture;

static void on_error(void *ctx, const mkrt_item *it, mkrt_status why, const char *msg)
{
    (void)msg;
    fixture *f = ctx;
    char buf[512];
    if (mkrt_stream_failed(f->s, it, why, buf, sizeof buf) != MKRT_OK || strstr(buf, "Fix:") == NULL)
        atomic_fetch_add(&f->fix_missing, 1);
    else
        memcpy(f->last, buf, sizeof buf); /* the tests read it after mkrt_quiesce, one failure at a time */
    atomic_fetch_add(&f->failures, 1);
}

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

typedef struct producer_arg {
    fixture *f;
    uint64_t seed;
    int failed;
} producer_arg;

/* Random updates over a small vertex range, so that absent deletions and
 * duplicate insertions happen; the results are checked, not the mix. */
static int produce(void *p)
{
    producer_arg *a = p;
    mkrt_producer *pr = mkrt_producer_open(a->f->rt, NULL);
    if (pr == NULL) {
        a->failed = 1;
        return 0;
    }
    mkrt_item items[16];
    for (int i = 0; i < PER_PRODUCER; i += 16) {
        for (int k = 0; k < 16; k++) {
            uint32_t u = (uint32_t)(rnd(&a->seed) % N), v = (uint32_t)(rnd(&a->seed) % N);
            if (u == v)
                v = (v + 1) % N;
            if (rnd(&a->seed) % 3 == 0)
                mkrt_stream_delete_item(a->f->s, u, v, &items[k]);
            else
                mkrt_stream_insert_item(a->f->s, u, v, (uint32_t)(1 + (u * 7 + v * 13) % 20), &items[k]);
        }
        if (mkrt_publish(pr, items, 16, MKRT_TIMEOUT_INFINITE, NULL) != MKRT_OK)
            a->failed = 1;
    }
    mkrt_producer_close(pr);
    return 0;
}

/* Every query of the latest view against the oracle; and the view's copy
 * of the results is whole (position equals the stream's). */
static int check_views(fixture *f, uint32_t queries, const char *where)
{
    static uint64_t got[N], want[N];
    mkrt_stream_view view;
    if (mkrt_stream_view_open(f->s, &view) != MKRT_OK)
        return 0;
    mkrt_stream_stats st;
    mkrt_stream_stats_read(f->s, &st);
    int good = view.position == st.position;
    for (uint32_t q = 0; q < queries && good; q++) {
        good = mkrt_stream_view_read(&view, q, 0, N, got, NULL) == MKRT_OK &&
               mkrt_stream_recompute(f->s, q, want, NULL) == MKRT_OK;
        for (uint32_t v = 0; v < N && good; v++)
            if (got[v] != want[v]) {
                diag("%s: query %u vertex %u: %llu incrementally, %llu from scratch", where, q, v,
                     (unsigned long long)got[v], (unsigned long long)want[v]);
                good = 0;
            }
    }
    mkrt_stream_view_close(&view);
    return good;
}

static mkrt_stream_config stream_config(void)
{
    mkrt_stream_config c = mkrt_stream_config_default();
    c.vertices = N;
    c.weight_max = 20;
    c.queries = 4;
    c.query[0] = (mkrt_stream_query){MKRT_STREAM_BFS, 0};
    c.query[1] = (mkrt_stream_query){MKRT_STREAM_SSSP, 0};
    c.query[2] = (mkrt_stream_query){MKRT_STREAM_CC, 0};
    c.query[3] = (mkrt_stream_query){MKRT_STREAM_BFS, 17};
    return c;
}

static int open_fixture(fixture *f, mkrt_backend_kind kind)
{
    memset(f, 0, sizeof *f);
    mkrt_stream_config sc = stream_config();
    mkrt_error err;
    if (mkrt_stream_create(&sc, &f->s, &err) != MKRT_OK) {
        diag("%s", err.message);
        return 0;
    }
    /* A sparse start: a path with a few chords, so deletions cut it, and a
     * hub (vertex 5, joined to the first 450: its row gets a hash index). */
    uint32_t src[3 * N], dst[3 * N], w[3 * N];
    size_t m = 0;
    for (uint32_t v = 1; v < N; v++, m++) {
        src[m] = v - 1;
        dst[m] = v;
        w[m] = 1 + v % 20;
    }
    for (uint32_t v = 0; v + 37 < N; v += 11, m++) {
        src[m] = v;
        dst[m] = v + 37;
        w[m] = 3;
    }
    for (uint32_t v = 0; v < 450; v++, m++) {
        src[m] = 5;
        dst[m] = v;
        w[m] = 7;
    }
    if (mkrt_stream_load(f->s, src, dst, w, m, NULL, &err) != MKRT_OK) {
        diag("%s", err.message);
        return 0;
    }
    mkrt_config c = mkrt_config_default();
    c.backend = kind;
    c.cells = N;
    c.workers = 2;
    c.on_error = on_error;
    c.error_ctx = f;
    if (mkrt_create(&c, &f->rt, &err) != MKRT_OK || mkrt_stream_register(f->s, f->rt, &err) != MKRT_OK) {
        diag("%s", err.message);
        return 0;
    }
    return 1;
}

static void close_fixture(fixture *f)
{
    mkrt_destroy(f->rt, MKRT_TIMEOUT_INFINITE, NULL);
    mkrt_stream_destroy(f->s);
}

static void test_streaming(mkrt_backend_kind kind, const char *name)
{
    fixture f;
    if (!ok(open_fixture(&f, kind), "%s: stream and runtime up", name))
        return;
    ok(check_views(&f, 4, "load"), "%s: after the load every query equals a recompute", name);
    int all = 1;
    for (int r = 0; r < ROUNDS; r++) {
        producer_arg a[2] = {{&f, 0x9e3779b97f4a7c15ULL * (uint64_t)(r + 1), 0},
                             {&f, 0xbf58476d1ce4e5b9ULL * (uint64_t)(r + 7), 0}};
        mkrt__thread t[2];
        for (int k = 0; k < 2; k++)
            mkrt__thread_start(&t[k], produce, &a[k]);
        for (int k = 0; k < 2; k++)
            mkrt__thread_join_result(t[k], NULL);
        all &= !a[0].failed && !a[1].failed;
        all &= mkrt_quiesce(f.rt, MKRT_TIMEOUT_INFINITE) == MKRT_OK;
        if (!check_views(&f, 4, name)) {
            all = 0;
            diag("%s: round %d differs", name, r);
            break;
        }
    }
    ok(all, "%s: after each of %d rounds of 2 x %d mixed updates every query equals a recompute", name, ROUNDS,
       PER_PRODUCER);
    mkrt_stream_stats st;
    mkrt_stats rs;
    mkrt_stream_stats_read(f.s, &st);
    mkrt_stats_read(f.rt, &rs);
    ok(st.inserted > 0 && st.deleted > 0 && st.failed_absent > 0 && st.duplicates + rs.pruned > 0,
       "%s: inserts %llu, deletes %llu, absent deletions %llu, duplicates %llu (+%llu pruned)", name,
       (unsigned long long)st.inserted, (unsigned long long)st.deleted, (unsigned long long)st.failed_absent,
       (unsigned long long)st.duplicates, (unsigned long long)rs.pruned);
    uint64_t failed_stream = st.failed_absent + st.failed_invalid + st.failed_resource;
    is(rs.failed, failed_stream, "%s: every failed item is a counted stream failure", name);
    is(atomic_load(&f.failures), rs.failed, "%s: and reached the error callback", name);
    is(atomic_load(&f.fix_missing), 0, "%s: each failure explains itself with a Fix", name);
    is(rs.published + rs.emitted, rs.executed + rs.pruned + rs.failed, "%s: published + emitted = executed + "
       "pruned + failed", name);
    is(st.position, st.inserted + st.deleted, "%s: the view's position counts every update that changed the "
       "graph", name);
    ok(st.reset > 0, "%s: deletions of tree edges reset %llu values (and only those)", name,
       (unsigned long long)st.reset);
    close_fixture(&f);
}

/* Publishes one item, quiesces, and says whether it failed (and how). */
static mkrt_status one(fixture *f, mkrt_producer *p, mkrt_item it)
{
    uint64_t before = atomic_load(&f->failures);
    mkrt_stats rs0, rs1;
    mkrt_stats_read(f->rt, &rs0);
    if (mkrt_publish(p, &it, 1, MKRT_TIMEOUT_INFINITE, NULL) != MKRT_OK ||
        mkrt_quiesce(f->rt, MKRT_TIMEOUT_INFINITE) != MKRT_OK)
        return MKRT_EDEVICE;
    mkrt_stats_read(f->rt, &rs1);
    return atomic_load(&f->failures) > before ? (rs1.failed > rs0.failed ? MKRT_EINVAL : MKRT_EDEVICE) : MKRT_OK;
}

static void test_bad_input(void)
{
    fixture f;
    if (!ok(open_fixture(&f, MKRT_BACKEND_CPU), "bad input: stream up"))
        return;
    mkrt_producer *p = mkrt_producer_open(f.rt, NULL);
    mkrt_item it;
    mkrt_stream_stats st0, st1;
    mkrt_stream_stats_read(f.s, &st0);

    mkrt_stream_insert_item(f.s, 5, N + 3, 2, &it);
    ok(one(&f, p, it) != MKRT_OK, "inserting {5, %u} beyond %u vertices fails", N + 3, N);
    like(f.last, "Fix:", "with a Fix: %s", f.last);
    like(f.last, "603", "naming the vertex");
    mkrt_stream_insert_item(f.s, 7, 7, 2, &it);
    ok(one(&f, p, it) != MKRT_OK, "a self-loop fails");
    like(f.last, "self-loop", "said so: %s", f.last);
    mkrt_stream_insert_item(f.s, 6, 200, 0, &it);
    ok(one(&f, p, it) != MKRT_OK, "weight 0 fails");
    mkrt_stream_insert_item(f.s, 6, 200, 21, &it);
    ok(one(&f, p, it) != MKRT_OK, "weight 21 above weight_max 20 fails");
    like(f.last, "outside 1..20", "naming the range: %s", f.last);
    mkrt_stream_delete_item(f.s, 6, 200, &it);
    ok(one(&f, p, it) != MKRT_OK, "deleting the absent edge {6, 200} fails");
    like(f.last, "no such edge", "said so: %s", f.last);
    mkrt_stream_insert_item(f.s, 0, 1, 2, &it); /* loaded with weight 2 */
    ok(one(&f, p, it) == MKRT_OK, "inserting {0, 1} again with its weight is a duplicate, not a failure");
    mkrt_stream_insert_item(f.s, 0, 1, 9, &it);
    ok(one(&f, p, it) != MKRT_OK, "inserting {0, 1} with another weight fails");
    like(f.last, "another weight", "said so: %s", f.last);
    mkrt_stream_stats_read(f.s, &st1);
    is(st1.failed_invalid - st0.failed_invalid, 5, "5 invalid updates counted");
    is(st1.failed_absent - st0.failed_absent, 1, "1 absent deletion counted");
    is(st1.duplicates - st0.duplicates, 1, "1 duplicate counted");
    is(st1.edges, st0.edges, "the graph kept its %llu edges", (unsigned long long)st0.edges);

    /* A good update among bad ones still applies. */
    mkrt_item mix[3];
    mkrt_stream_delete_item(f.s, 150, 151, &mix[0]); /* a path edge: cuts BFS */
    mkrt_stream_delete_item(f.s, 3, 250, &mix[1]);   /* absent */
    mkrt_stream_insert_item(f.s, 1, N, 1, &mix[2]);  /* bad vertex */
    ok(mkrt_publish(p, mix, 3, MKRT_TIMEOUT_INFINITE, NULL) == MKRT_OK &&
           mkrt_quiesce(f.rt, MKRT_TIMEOUT_INFINITE) == MKRT_OK, "a good deletion among two bad updates");
    mkrt_stream_stats_read(f.s, &st1);
    is(st1.edges, st0.edges - 1, "applied: one edge fewer");
    ok(check_views(&f, 4, "bad input"), "and every query equals a recompute");

    mkrt_stream_view view;
    uint64_t v;
    mkrt_error err;
    mkrt_stream_view_open(f.s, &view);
    ok(mkrt_stream_view_read(&view, 4, 0, 1, &v, &err) == MKRT_EINVAL, "reading query 4 of 4 is refused");
    like(err.message, "Fix:", "with a Fix: %s", err.message);
    ok(mkrt_stream_view_read(&view, 0, N, 1, &v, &err) == MKRT_EINVAL, "reading vertex %u is refused", N);
    like(err.message, "Fix:", "with a Fix: %s", err.message);
    mkrt_stream_view_close(&view);
    mkrt_stream_stats_read(f.s, &st1);
    is(st1.failed_queries, 2, "both refused reads counted");
    mkrt_producer_close(p);
    close_fixture(&f);

    mkrt_stream_config c = stream_config();
    mkrt_stream *s;
    c.query[1].source = N;
    ok(mkrt_stream_create(&c, &s, &err) == MKRT_EINVAL && s == NULL, "a query source beyond the graph is refused");
    like(err.message, "Fix:", "with a Fix: %s", err.message);
    c = stream_config();
    c.weight_max = 0;
    ok(mkrt_stream_create(&c, &s, &err) == MKRT_EINVAL, "weight_max 0 is refused");
    c = stream_config();
    ok(mkrt_stream_create(&c, &s, &err) == MKRT_OK, "a good configuration is taken");
    uint32_t a = 1, b = N;
    ok(mkrt_stream_load(s, &a, &b, NULL, 1, NULL, &err) == MKRT_EINVAL, "loading an edge to vertex %u is refused",
       N);
    like(err.message, "Fix:", "with a Fix: %s", err.message);
    mkrt_config rc = mkrt_config_default();
    rc.cells = N - 1;
    mkrt_runtime *rt;
    ok(mkrt_create(&rc, &rt, NULL) == MKRT_OK, "a runtime of %u cells", N - 1);
    ok(mkrt_stream_register(s, rt, &err) == MKRT_EINVAL, "cannot take a stream of %u vertices", N);
    like(err.message, "Fix:", "with a Fix: %s", err.message);
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
    mkrt_stream_destroy(s);
}

int main(void)
{
    test_streaming(MKRT_BACKEND_CPU, "cpu");
    test_streaming(MKRT_BACKEND_SIM, "sim");
    test_bad_input();
    return done_testing();
}
