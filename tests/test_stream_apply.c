/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_stream_apply.c - mkrt_stream_apply, the synchronous writer's
 * path (no runtime): its results are exact when it returns, it counts as
 * the ops do, it refuses foreign items whole, and it runs concurrently
 * with updates published through a runtime (each round: one thread
 * publishes random updates, another applies random updates itself; after
 * mkrt_quiesce every query equals the oracle and every update is
 * counted exactly once). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/thread.h"
#include "mkrt/runtime.h"
#include "mkrt_stream/stream.h"
#include "stream_fixture.h"
#include "tap.h"

#define N 300u
#define ROUNDS 8
#define PER 600

static mkrt_stream *g_s;
static _Atomic uint64_t g_failed_cb;

static void on_error(void *ctx, const mkrt_item *it, mkrt_status why, const char *msg)
{
    (void)ctx;
    (void)msg;
    char buf[320];
    mkrt_stream_failed(g_s, it, why, buf, sizeof buf);
    atomic_fetch_add(&g_failed_cb, 1);
}

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void random_update(uint64_t *x, mkrt_item *it)
{
    uint32_t u = (uint32_t)(rnd(x) % 40), v = (uint32_t)(rnd(x) % N);
    if (u == v)
        v = (v + 1) % N;
    if (rnd(x) % 2)
        mkrt_stream_insert_item(g_s, u, v, 1 + (uint32_t)(rnd(x) % 3), it);
    else
        mkrt_stream_delete_item(g_s, u, v, it);
}

/* Every query of g_s's n vertices equals a recompute. */
static int views_exact_n(uint32_t n, uint32_t queries)
{
    uint64_t *got = malloc(n * sizeof *got), *want = malloc(n * sizeof *want);
    mkrt_stream_view v;
    int good = got != NULL && want != NULL;
    mkrt_stream_view_open(g_s, &v);
    for (uint32_t q = 0; q < queries && good; q++)
        good = mkrt_stream_view_read(&v, q, 0, n, got, NULL) == MKRT_OK &&
               mkrt_stream_recompute(g_s, q, want, NULL) == MKRT_OK && memcmp(got, want, n * sizeof *got) == 0;
    mkrt_stream_view_close(&v);
    free(got);
    free(want);
    return good;
}

static int views_exact(uint32_t queries)
{
    return views_exact_n(N, queries);
}

typedef struct side {
    mkrt_runtime *rt;
    uint64_t seed;
    int direct, failed;
    uint64_t refused; /* updates mkrt_stream_apply reported failed */
} side;

static int run_side(void *arg)
{
    side *a = arg;
    mkrt_item it[4];
    mkrt_status st[4];
    mkrt_producer *p = a->direct ? NULL : mkrt_producer_open(a->rt, NULL);
    for (int k = 0; k < PER / 4; k++) {
        for (int i = 0; i < 4; i++)
            random_update(&a->seed, &it[i]);
        if (a->direct) {
            mkrt_status r = mkrt_stream_apply(g_s, it, 4, st, NULL);
            int bad = 0;
            for (int i = 0; i < 4; i++)
                bad += st[i] != MKRT_OK;
            a->refused += (uint64_t)bad;
            if ((r == MKRT_OK) != (bad == 0))
                a->failed = 1;
        } else if (p == NULL || mkrt_publish(p, it, 4, MKRT_TIMEOUT_INFINITE, NULL) != MKRT_OK) {
            a->failed = 1;
        }
    }
    mkrt_producer_close(p);
    return 0;
}

static const mkrt_stream_query g_q[3] = {{MKRT_STREAM_BFS, 0}, {MKRT_STREAM_SSSP, 1}, {MKRT_STREAM_CC, 0}};

static mkrt_stream *make_stream(void)
{
    return stream_fixture_path(N, 3, g_q, 3);
}

static void test_alone(void)
{
    g_s = make_stream();
    if (!ok(g_s != NULL, "a stream with no runtime"))
        return;
    mkrt_item it[3];
    mkrt_status st[3];
    mkrt_error err;
    mkrt_stream_delete_item(g_s, 100, 101, &it[0]); /* cuts the path: BFS from 0 loses 101.. */
    mkrt_stream_insert_item(g_s, 0, 200, 2, &it[1]);
    mkrt_stream_delete_item(g_s, 5, 250, &it[2]); /* absent */
    mkrt_status r = mkrt_stream_apply(g_s, it, 3, st, &err);
    is(r, MKRT_ESTATE, "an absent deletion among three updates: its status is returned");
    like(err.message, "1 of 3 updates failed", "the message counts: %s", err.message);
    like(err.message, "Fix:", "and has a Fix");
    ok(st[0] == MKRT_OK && st[1] == MKRT_OK && st[2] == MKRT_ESTATE, "each update's status is given");
    mkrt_stream_view v;
    uint64_t val[2];
    mkrt_stream_view_open(g_s, &v);
    val[0] = 0;
    int read = mkrt_stream_view_read(&v, 0, 150, 1, &val[0], NULL) == MKRT_OK;
    ok(read && val[0] == 1 + 50, "a view opened after the call sees it: BFS(150) = %llu through the new edge "
       "{0, 200}", (unsigned long long)val[0]);
    is(v.position, 2, "the view's position counts the 2 updates that changed the graph");
    mkrt_stream_view_close(&v);
    ok(views_exact(3), "every query equals a recompute");
    mkrt_stream_stats st0;
    mkrt_stream_stats_read(g_s, &st0);
    ok(st0.inserted == 1 && st0.deleted == 1 && st0.failed_absent == 1 && st0.applies == 1,
       "counted as the ops count: 1 insert, 1 delete, 1 absent, 1 repair");
    mkrt_item foreign[2] = {it[0], {17, 1, 2, 0}};
    ok(mkrt_stream_apply(g_s, foreign, 2, NULL, &err) == MKRT_EINVAL, "a foreign item is refused");
    like(err.message, "item 1 has op 17", "naming it: %s", err.message);
    mkrt_stream_stats st1;
    mkrt_stream_stats_read(g_s, &st1);
    ok(st1.deleted == st0.deleted && st1.failed_absent == st0.failed_absent, "and nothing was applied");
    ok(mkrt_stream_apply(NULL, it, 1, NULL, &err) == MKRT_EINVAL && strstr(err.message, "Fix:") != NULL,
       "a NULL stream is refused with a Fix");
    ok(mkrt_stream_apply(g_s, NULL, 0, NULL, NULL) == MKRT_OK, "no items: nothing to do");
    mkrt_stream_insert_item(g_s, 7, 9, 99, &it[0]);
    ok(mkrt_stream_apply(g_s, it, 1, st, &err) == MKRT_EINVAL && st[0] == MKRT_EINVAL,
       "a weight out of range fails its update");
    mkrt_stream_stats_read(g_s, &st1);
    is(st1.failed_invalid, 1, "counted once in failed_invalid");
    mkrt_stream_destroy(g_s);
}

static void test_beside_runtime(void)
{
    g_s = make_stream();
    mkrt_config c = mkrt_config_default();
    c.cells = N;
    c.workers = 2;
    c.on_error = on_error;
    mkrt_runtime *rt = NULL;
    if (!ok(g_s != NULL && mkrt_create(&c, &rt, NULL) == MKRT_OK && mkrt_stream_register(g_s, rt, NULL) == MKRT_OK,
            "a stream on a runtime"))
        return;
    int all = 1;
    uint64_t refused = 0;
    for (int r = 0; r < ROUNDS && all; r++) {
        side a[2] = {{rt, 0x9e3779b97f4a7c15ULL * (uint64_t)(r + 1), 0, 0, 0},
                     {rt, 0xbf58476d1ce4e5b9ULL * (uint64_t)(r + 3), 1, 0, 0}};
        mkrt__thread t[2];
        for (int k = 0; k < 2; k++)
            mkrt__thread_start(&t[k], run_side, &a[k]);
        for (int k = 0; k < 2; k++)
            mkrt__thread_join_result(t[k], NULL);
        all &= !a[0].failed && !a[1].failed && mkrt_quiesce(rt, MKRT_TIMEOUT_INFINITE) == MKRT_OK;
        refused += a[1].refused;
        if (!views_exact(3)) {
            diag("round %d differs", r);
            all = 0;
        }
    }
    ok(all, "%d rounds of %d published and %d applied updates: every query equals a recompute", ROUNDS, PER, PER);
    mkrt_stream_stats st;
    mkrt_stats rs;
    mkrt_stream_stats_read(g_s, &st);
    mkrt_stats_read(rt, &rs);
    uint64_t total = 2ull * ROUNDS * PER, failed = st.failed_absent + st.failed_invalid + st.failed_resource;
    is(st.inserted + st.deleted + st.duplicates + failed + rs.pruned, total,
       "each of the %llu updates counted once (inserted, deleted, duplicate, failed, or pruned in a batch)",
       (unsigned long long)total);
    is(failed, rs.failed + refused, "the failures: the runtime's plus those mkrt_stream_apply returned");
    is(st.position, st.inserted + st.deleted, "the position counts every update that changed the graph");
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
    mkrt_stream_destroy(g_s);
}

/* A loaded row keeps room for an eighth more edges: the first inserts at
 * a loaded vertex do not reallocate its row (graph_bytes stays), the one
 * past the room does, and the results stay exact either way. */
static void test_load_room(void)
{
    mkrt_stream_config c = mkrt_stream_config_default();
    c.vertices = N;
    c.queries = 3;
    memcpy(c.query, g_q, sizeof g_q);
    uint32_t src[64], dst[64];
    for (uint32_t i = 0; i < 64; i++) {
        src[i] = 0;
        dst[i] = 1 + i;
    }
    mkrt_error err;
    g_s = NULL;
    if (!ok(mkrt_stream_create(&c, &g_s, &err) == MKRT_OK && mkrt_stream_load(g_s, src, dst, NULL, 64, NULL, &err) ==
                MKRT_OK,
            "a star of 64 edges at vertex 0 loaded"))
        return;
    mkrt_stream_stats before, after;
    mkrt_stream_stats_read(g_s, &before);
    mkrt_item it[8];
    for (uint32_t i = 0; i < 8; i++)
        mkrt_stream_insert_item(g_s, 0, 100 + i, 2, &it[i]);
    ok(mkrt_stream_apply(g_s, it, 8, NULL, &err) == MKRT_OK, "8 more edges at vertex 0 applied");
    mkrt_stream_stats_read(g_s, &after);
    /* The 8 new endpoints' first rows take 4 edges of 8 bytes each; a
     * full row at vertex 0 would have grown by 32 more slots besides. */
    ok(after.edges == 72 && after.graph_bytes - before.graph_bytes <= 8 * 4 * 8,
       "vertex 0's row took them in place: graph_bytes grew by %llu bytes (the 8 new rows' own blocks only)",
       (unsigned long long)(after.graph_bytes - before.graph_bytes));
    ok(views_exact(3), "every query equals a recompute");
    mkrt_stream_insert_item(g_s, 0, 200, 2, &it[0]);
    ok(mkrt_stream_apply(g_s, it, 1, NULL, &err) == MKRT_OK, "one edge past the room applied");
    mkrt_stream_stats grown;
    mkrt_stream_stats_read(g_s, &grown);
    ok(grown.graph_bytes - after.graph_bytes >= 72 / 2 * 8,
       "and vertex 0's row grew (by %llu bytes, at least half its 72 slots)",
       (unsigned long long)(grown.graph_bytes - after.graph_bytes));
    ok(views_exact(3), "every query still equals a recompute");
    mkrt_stream_destroy(g_s);
}

/* ---- A large batch on the stream's helpers (apply_threads) --------------
 * The same batches applied by a stream on the caller alone and by streams
 * with 2 and 3 apply threads: every status, counter, row (mkrt_stream_csr:
 * the same edges in the same order) and result is the same, and exact. */
#define PN 3000u
#define PBATCH 2048u

static mkrt_stream *par_stream(uint32_t threads, const uint32_t *src, const uint32_t *dst, const uint32_t *w,
                               size_t m)
{
    mkrt_stream_config c = mkrt_stream_config_default();
    c.vertices = PN;
    c.weight_max = 7;
    c.queries = 3;
    c.apply_threads = threads;
    c.query[0] = (mkrt_stream_query){MKRT_STREAM_BFS, 3};
    c.query[1] = (mkrt_stream_query){MKRT_STREAM_SSSP, 3};
    c.query[2] = (mkrt_stream_query){MKRT_STREAM_CC, 0};
    mkrt_stream *s = NULL;
    if (mkrt_stream_create(&c, &s, NULL) != MKRT_OK || mkrt_stream_load(s, src, dst, w, m, NULL, NULL) != MKRT_OK) {
        mkrt_stream_destroy(s);
        return NULL;
    }
    return s;
}

/* Updates around a few hubs (rows past the hash index's size) and many
 * small rows; some duplicates, absent deletions, weight clashes,
 * self-loops and vertices out of range. */
static void par_update(uint64_t *x, mkrt_item *it, const mkrt_stream *s)
{
    uint32_t r = (uint32_t)(rnd(x) % 100);
    uint32_t u = r < 40 ? (uint32_t)(rnd(x) % 4) : (uint32_t)(rnd(x) % PN), v = (uint32_t)(rnd(x) % PN);
    if (r == 99)
        v = u; /* a self-loop */
    if (r == 98)
        v = PN + 5; /* out of range */
    static uint32_t last_u = 0, last_v = 1; /* the last insertion: deleted again now and then */
    if (r >= 40 && r < 50) {
        u = (uint32_t)(rnd(x) % (PN - 1)); /* a path edge */
        v = u + 1;
    }
    if (rnd(x) % 2) {
        mkrt_stream_insert_item(s, u, v, 1 + (uint32_t)(rnd(x) % 3), it);
        last_u = u, last_v = v;
    } else if (r % 2) {
        mkrt_stream_delete_item(s, last_u, last_v, it);
    } else {
        mkrt_stream_delete_item(s, u, v, it);
    }
}

static int same_csr(mkrt_stream *a, mkrt_stream *b, uint64_t *oa, uint64_t *ob, uint32_t *ta, uint32_t *tb,
                    uint32_t *wa, uint32_t *wb, uint64_t cap)
{
    if (mkrt_stream_csr(a, oa, ta, wa, cap, NULL) != MKRT_OK || mkrt_stream_csr(b, ob, tb, wb, cap, NULL) != MKRT_OK)
        return 0;
    return memcmp(oa, ob, (PN + 1) * sizeof *oa) == 0 && memcmp(ta, tb, oa[PN] * sizeof *ta) == 0 &&
           memcmp(wa, wb, oa[PN] * sizeof *wa) == 0;
}

static void test_parallel_batch(void)
{
    size_t m = 0, cap = 4 * PN + 2 * 2000;
    uint32_t *src = malloc(cap * sizeof *src), *dst = malloc(cap * sizeof *dst), *w = malloc(cap * sizeof *w);
    uint64_t seed = 0x1234567u;
    for (uint32_t v = 0; v + 1 < PN && src && dst && w; v++, m++)
        src[m] = v, dst[m] = v + 1, w[m] = 1 + v % 7; /* a path */
    for (uint32_t k = 0; k < 2000 && src && dst && w; k++, m++)
        src[m] = k % 4, dst[m] = 4 + (uint32_t)(rnd(&seed) % (PN - 4)), w[m] = 1 + k % 7; /* hubs 0..3 */
    mkrt_stream *s[3] = {NULL, NULL, NULL};
    const uint32_t threads[3] = {1, 2, 3};
    for (int k = 0; k < 3 && src && dst && w; k++)
        s[k] = par_stream(threads[k], src, dst, w, m);
    uint64_t ecap = 2 * (m + 8 * (uint64_t)PBATCH);
    uint64_t *oa = malloc((PN + 1) * sizeof *oa), *ob = malloc((PN + 1) * sizeof *ob);
    uint32_t *ta = malloc(ecap * sizeof *ta), *tb = malloc(ecap * sizeof *tb), *wa = malloc(ecap * sizeof *wa),
             *wb = malloc(ecap * sizeof *wb);
    mkrt_item *it = malloc(PBATCH * sizeof *it);
    mkrt_status *st[3] = {malloc(PBATCH * sizeof(mkrt_status)), malloc(PBATCH * sizeof(mkrt_status)),
                          malloc(PBATCH * sizeof(mkrt_status))};
    if (!ok(s[0] && s[1] && s[2] && oa && ob && ta && tb && wa && wb && it && st[0] && st[1] && st[2],
            "three streams of %u vertices and %zu edges: 1, 2 and 3 apply threads", PN, m))
        goto out;
    int same_status = 1, same_rows = 1, exact = 1, same_ret = 1;
    for (int round = 0; round < 6; round++) {
        for (uint32_t i = 0; i < PBATCH; i++)
            par_update(&seed, &it[i], s[0]);
        mkrt_status r[3];
        for (int k = 0; k < 3; k++)
            r[k] = mkrt_stream_apply(s[k], it, PBATCH, st[k], NULL);
        same_ret &= r[1] == r[0] && r[2] == r[0];
        same_status &= memcmp(st[0], st[1], PBATCH * sizeof(mkrt_status)) == 0 &&
                       memcmp(st[0], st[2], PBATCH * sizeof(mkrt_status)) == 0;
        for (int k = 1; k < 3; k++)
            same_rows &= same_csr(s[0], s[k], oa, ob, ta, tb, wa, wb, ecap);
        for (int k = 0; k < 3; k++) {
            g_s = s[k];
            exact &= views_exact_n(PN, 3);
        }
    }
    ok(same_ret, "each batch returns the same status on 1, 2 and 3 threads");
    ok(same_status, "every update's status is the same");
    ok(same_rows, "every row holds the same edges in the same order (mkrt_stream_csr)");
    ok(exact, "every query of every stream equals a recompute after every batch");
    mkrt_stream_stats a, b, c;
    mkrt_stream_stats_read(s[0], &a);
    mkrt_stream_stats_read(s[1], &b);
    mkrt_stream_stats_read(s[2], &c);
    ok(a.inserted == b.inserted && a.deleted == b.deleted && a.duplicates == b.duplicates &&
           a.failed_invalid == b.failed_invalid && a.failed_absent == b.failed_absent && a.edges == b.edges &&
           a.position == b.position && a.applies == b.applies && b.inserted == c.inserted &&
           b.deleted == c.deleted && b.edges == c.edges && b.failed_invalid == c.failed_invalid,
       "the counters agree: %llu inserted, %llu deleted, %llu duplicates, %llu invalid, %llu absent, %llu edges",
       (unsigned long long)b.inserted, (unsigned long long)b.deleted, (unsigned long long)b.duplicates,
       (unsigned long long)b.failed_invalid, (unsigned long long)b.failed_absent, (unsigned long long)b.edges);
    ok(a.inserted > 0 && a.deleted > 0 && a.duplicates > 0 && a.failed_invalid > 0 && a.failed_absent > 0,
       "and the batches had every outcome");
    mkrt_stream_config cf = mkrt_stream_config_default();
    cf.vertices = 10;
    cf.queries = 1;
    cf.query[0] = (mkrt_stream_query){MKRT_STREAM_CC, 0};
    cf.apply_threads = MKRT_STREAM_APPLY_THREADS_MAX + 1;
    mkrt_error err;
    mkrt_stream *bad = NULL;
    ok(mkrt_stream_create(&cf, &bad, &err) == MKRT_EINVAL && bad == NULL, "apply_threads above %u is refused",
       MKRT_STREAM_APPLY_THREADS_MAX);
    like(err.message, "apply_threads is 17, above 16. Fix:", "naming it, with a Fix: %s", err.message);
out:
    for (int k = 0; k < 3; k++) {
        mkrt_stream_destroy(s[k]);
        free(st[k]);
    }
    free(src), free(dst), free(w), free(oa), free(ob), free(ta), free(tb), free(wa), free(wb), free(it);
}

/* The apply op (on a runtime worker) repairs a log of 1,024 updates or
 * more on the stream's helpers too: one runtime batch of 3,000 updates,
 * then its repair; the graph and the results equal those of the same
 * updates applied by a stream on one thread. */
static void test_parallel_runtime(void)
{
    size_t m = 0;
    uint32_t src[PN], dst[PN], w[PN];
    for (uint32_t v = 0; v + 1 < PN; v++, m++)
        src[m] = v, dst[m] = v + 1, w[m] = 1 + v % 7;
    mkrt_stream *one = par_stream(1, src, dst, w, m);
    g_s = par_stream(2, src, dst, w, m);
    mkrt_config c = mkrt_config_default();
    c.cells = PN;
    c.workers = 2;
    c.on_error = on_error;
    mkrt_runtime *rt = NULL;
    mkrt_producer *p = NULL;
    mkrt_item *it = malloc(3000 * sizeof *it);
    if (!ok(one != NULL && g_s != NULL && it != NULL && mkrt_create(&c, &rt, NULL) == MKRT_OK &&
                mkrt_stream_register(g_s, rt, NULL) == MKRT_OK && (p = mkrt_producer_open(rt, NULL)) != NULL,
            "a stream with 2 apply threads on a runtime"))
        goto out;
    uint64_t seed = 0xfeedu;
    for (uint32_t i = 0; i < 3000; i++) {
        par_update(&seed, &it[i], g_s);
        if (it[i].in >= PN || it[i].out >= PN) /* the runtime refuses those: keep both sides alike */
            mkrt_stream_delete_item(g_s, 1, 2, &it[i]);
    }
    ok(mkrt_publish(p, it, 3000, MKRT_TIMEOUT_INFINITE, NULL) == MKRT_OK &&
           mkrt_quiesce(rt, MKRT_TIMEOUT_INFINITE) == MKRT_OK,
       "3,000 updates published and quiesced");
    mkrt_stream_apply(one, it, 3000, NULL, NULL);
    mkrt_stream_stats a, b;
    mkrt_stream_stats_read(one, &a);
    mkrt_stream_stats_read(g_s, &b);
    ok(a.edges == b.edges && a.position == b.position,
       "the same graph as one thread's: %llu edges, position %llu", (unsigned long long)b.edges,
       (unsigned long long)b.position);
    ok(views_exact_n(PN, 3), "every query equals a recompute");
    diag("%llu repairs (a repair of 1,024 updates or more runs on the helpers)", (unsigned long long)b.applies);
out:
    mkrt_producer_close(p);
    if (rt != NULL)
        mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
    mkrt_stream_destroy(g_s);
    mkrt_stream_destroy(one);
    free(it);
}

int main(void)
{
    test_alone();
    test_beside_runtime();
    test_load_room();
    test_parallel_batch();
    test_parallel_runtime();
    return done_testing();
}
