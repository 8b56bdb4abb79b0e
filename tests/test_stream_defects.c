/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_stream_defects.c - the streaming layer's accounting and
 * messages on the paths the main test does not walk (issue 34):
 *  1. an update the runtime refuses (a handle at or above its cells)
 *     before any op of the stream ran is counted in failed_invalid, also
 *     when the host registers the ops itself (mkrt_stream_ops);
 *  2. a failed apply item (the stream's own) is explained as such, with
 *     a Fix naming what dropped it, never as a self-loop; a dropped update
 *     names the step or resource that dropped it;
 *  3. an op that returns the MKRT_EOVERFLOW mkrt_op_emit gave it (the
 *     stream with emit_capacity 0) gets a runtime message whose Fix names
 *     emit_capacity, not the APPEND log; an APPEND past the log still
 *     names the log; an op's own overflow names neither;
 *  4. mkrt_stream_stats::position is never below the position of a view
 *     opened before the read, while updates are applied;
 *  5. loading 0 edges (NULL arrays allowed) works (and is clean under
 *     UBSan: no NULL reaches a libc call). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/thread.h"
#include "mkrt/runtime.h"
#include "mkrt_stream/stream.h"
#include "stream/stream_internal.h"
#include "stream_fixture.h"
#include "tap.h"

#define N 64u

typedef struct host {
    mkrt_stream *s;
    _Atomic uint64_t failures;
    char rt_msg[512];     /* the runtime's message for the last failure */
    char stream_msg[512]; /* mkrt_stream_failed's */
    mkrt_status why;
} host;

static void on_error(void *ctx, const mkrt_item *it, mkrt_status why, const char *msg)
{
    host *h = ctx;
    snprintf(h->rt_msg, sizeof h->rt_msg, "%s", msg);
    h->why = why;
    if (h->s == NULL || it->op < 4000 || it->op >= 4000 + MKRT_STREAM_OPS ||
        mkrt_stream_failed(h->s, it, why, h->stream_msg, sizeof h->stream_msg) != MKRT_OK)
        snprintf(h->stream_msg, sizeof h->stream_msg, "(not a stream item)");
    atomic_fetch_add(&h->failures, 1);
}

static mkrt_stream *path_stream(uint32_t queries)
{
    const mkrt_stream_query q[2] = {{MKRT_STREAM_BFS, 0}, {MKRT_STREAM_CC, 0}};
    return stream_fixture_path(N, 255, q, queries);
}

static mkrt_runtime *runtime(host *h, uint32_t cells, size_t emit_capacity, size_t append_log)
{
    mkrt_config c = mkrt_config_default();
    c.cells = cells;
    c.workers = 1;
    c.emit_capacity = emit_capacity;
    c.append_log_capacity = append_log;
    c.on_error = on_error;
    c.error_ctx = h;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK)
        diag("mkrt_create: %s", err.message);
    return rt;
}

static int publish1(mkrt_runtime *rt, mkrt_item it)
{
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    int good = p != NULL && mkrt_publish(p, &it, 1, MKRT_TIMEOUT_INFINITE, NULL) == MKRT_OK &&
               mkrt_quiesce(rt, MKRT_TIMEOUT_INFINITE) == MKRT_OK;
    mkrt_producer_close(p);
    return good;
}

/* 1. Refused at admission before any op ran, ops registered by the host. */
static void test_refused_first(void)
{
    host h = {0};
    h.s = path_stream(1);
    mkrt_runtime *rt = runtime(&h, N + 16, 1024, 0);
    if (!ok(h.s != NULL && rt != NULL, "defect 1: stream and runtime of %u cells up", N + 16))
        return;
    uint32_t ops[MKRT_STREAM_OPS];
    mkrt_op_desc descs[MKRT_STREAM_OPS];
    int reg = mkrt_stream_ops(h.s, ops, descs, MKRT_STREAM_OPS) == MKRT_STREAM_OPS;
    for (uint32_t i = 0; i < MKRT_STREAM_OPS && reg; i++)
        reg = mkrt_op_register(rt, ops[i], &descs[i], NULL) == MKRT_OK;
    ok(reg, "the host registers the stream's ops itself (mkrt_stream_ops)");
    mkrt_item it;
    mkrt_stream_insert_item(h.s, 3, N + 40, 1, &it); /* handle N + 40 >= cells: the runtime refuses it */
    ok(publish1(rt, it) && atomic_load(&h.failures) == 1, "an update naming handle %u >= %u cells fails first",
       N + 40, N + 16);
    mkrt_stream_stats st;
    mkrt_stream_stats_read(h.s, &st);
    is(st.failed_invalid, 1, "and is counted in failed_invalid though no op of the stream had run");
    like(h.stream_msg, "Fix:", "explained: %s", h.stream_msg);
    mkrt_stream_insert_item(h.s, 3, N + 5, 1, &it); /* below cells, beyond the stream: the op refuses it */
    ok(publish1(rt, it), "an update naming vertex %u (below cells, beyond the stream)", N + 5);
    mkrt_stream_insert_item(h.s, 3, N + 41, 1, &it);
    ok(publish1(rt, it), "and another refused by the runtime after the ops ran");
    mkrt_stream_stats_read(h.s, &st);
    is(st.failed_invalid, 3, "each counted once: 3 invalid updates");
    mkrt_stats rs;
    mkrt_stats_read(rt, &rs);
    is(rs.failed, st.failed_invalid, "as many as the runtime failed");
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
    mkrt_stream_destroy(h.s);
}

/* 2. The stream's own apply item, and updates dropped for a reason other
 * than their numbers. */
static void test_apply_explained(void)
{
    mkrt_stream *s = path_stream(1);
    if (!ok(s != NULL, "defect 2: stream up"))
        return;
    char buf[512];
    mkrt_item apply = {4000 + 2, 0, 0, 0};
    ok(mkrt_stream_failed(s, &apply, MKRT_ETIMEDOUT, buf, sizeof buf) == MKRT_OK, "a dropped apply item is ours");
    ok(strstr(buf, "self-loop") == NULL, "not a self-loop: %s", buf);
    like(buf, "apply", "the apply is named");
    matches(buf, "Fix: .*mkrt_destroy", "the Fix names the destroy that dropped it");
    mkrt_item ins;
    mkrt_stream_insert_item(s, 1, 2, 1, &ins);
    mkrt_stream_failed(s, &ins, MKRT_ETIMEDOUT, buf, sizeof buf);
    matches(buf, "Fix: .*mkrt_destroy", "a dropped update names the destroy: %s", buf);
    ok(strstr(buf, "free memory") == NULL, "not memory");
    mkrt_stream_failed(s, &ins, MKRT_EOVERFLOW, buf, sizeof buf);
    like(buf, "emit_capacity", "an overflowed update names emit_capacity: %s", buf);
    mkrt_stream_failed(s, &ins, MKRT_ENOMEM, buf, sizeof buf);
    like(buf, "Fix: free memory", "a memory failure names memory");
    mkrt_stream_stats st;
    mkrt_stream_stats_read(s, &st);
    is(st.failed_invalid, 0, "none of them counted as invalid");
    mkrt_stream_destroy(s);
}

static mkrt_status op_own_overflow(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    (void)it;
    (void)ctx;
    return MKRT_EOVERFLOW; /* a table of its own is full, say */
}

/* 3. The runtime's message for an MKRT_EOVERFLOW names its resource. */
static void test_overflow_named(void)
{
    host h = {0};
    h.s = path_stream(1);
    mkrt_runtime *rt = runtime(&h, N, 0, 4);
    mkrt_error err;
    if (!ok(h.s != NULL && rt != NULL && mkrt_stream_register(h.s, rt, &err) == MKRT_OK,
            "defect 3: a runtime with emit_capacity 0 and a stream"))
        return;
    mkrt_item it;
    mkrt_stream_delete_item(h.s, 4, 5, &it);
    ok(publish1(rt, it) && atomic_load(&h.failures) == 1, "an update fails: no room to emit the apply item");
    is(h.why, MKRT_EOVERFLOW, "with MKRT_EOVERFLOW");
    like(h.rt_msg, "Fix: raise mkrt_config::emit_capacity", "the runtime's Fix names emit_capacity: %s", h.rt_msg);
    ok(strstr(h.rt_msg, "Fix: consume the APPEND") == NULL, "not the APPEND log");
    like(h.stream_msg, "emit_capacity", "the stream's Fix too: %s", h.stream_msg);
    mkrt_stream_stats st;
    mkrt_stream_stats_read(h.s, &st);
    is(st.failed_resource, 1, "counted in failed_resource");
    is(st.edges, N - 1, "the graph is unchanged");

    mkrt_item app[6];
    for (int k = 0; k < 6; k++)
        app[k] = (mkrt_item){MKRT_OP_APPEND, 0, (uint32_t)k % 2, (uint32_t)k};
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    ok(p != NULL && mkrt_publish(p, app, 6, MKRT_TIMEOUT_INFINITE, NULL) == MKRT_OK &&
           mkrt_quiesce(rt, MKRT_TIMEOUT_INFINITE) == MKRT_OK && atomic_load(&h.failures) == 3,
       "6 APPENDs into a log of 4: 2 fail");
    like(h.rt_msg, "Fix: consume the APPEND log", "and their Fix names the APPEND log: %s", h.rt_msg);
    mkrt_op_desc d = {.fn = op_own_overflow, .name = "own overflow"};
    mkrt_producer_close(p);
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);

    mkrt_stream_destroy(h.s);
    rt = runtime(&h, N, 16, 0);
    h.s = NULL;
    atomic_store(&h.failures, 0);
    ok(rt != NULL && mkrt_op_register(rt, 100, &d, NULL) == MKRT_OK, "registered on a fresh runtime");
    ok(publish1(rt, (mkrt_item){100, 1, 1, 0}) && atomic_load(&h.failures) == 1, "its item fails");
    ok(strstr(h.rt_msg, "Fix: consume the APPEND") == NULL, "its Fix does not blame the APPEND log: %s", h.rt_msg);
    ok(strstr(h.rt_msg, "Fix: raise mkrt_config::emit_capacity") == NULL, "nor emit_capacity");
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
    mkrt_stream_destroy(path_stream(1)); /* (a stream is still freed cleanly) */
}

typedef struct churn {
    mkrt_runtime *rt;
    mkrt_stream *s;
    _Atomic int stop;
    int failed;
} churn;

/* Deletes and re-inserts path edges one at a time, quiescing after each. */
static int churner(void *arg)
{
    churn *c = arg;
    mkrt_producer *p = mkrt_producer_open(c->rt, NULL);
    for (uint32_t k = 0; p != NULL && !atomic_load(&c->stop); k++) {
        mkrt_item it[2];
        uint32_t v = 1 + k % (N - 2);
        mkrt_stream_delete_item(c->s, v, v + 1, &it[0]);
        mkrt_stream_insert_item(c->s, v, v + 1, 1, &it[1]);
        if (mkrt_publish(p, it, 2, MKRT_TIMEOUT_INFINITE, NULL) != MKRT_OK ||
            mkrt_quiesce(c->rt, MKRT_TIMEOUT_INFINITE) != MKRT_OK)
            c->failed = 1;
    }
    mkrt_producer_close(p);
    return 0;
}

static _Atomic uint64_t g_hook_runs, g_hook_below;

/* Runs on the applying thread right after a new copy became the front:
 * the latest moment at which the counter could lag the views. */
static void after_publish(mkrt_stream *s)
{
    mkrt_stream_view v;
    mkrt_stream_stats st;
    mkrt_stream_view_open(s, &v);
    mkrt_stream_view_close(&v);
    mkrt_stream_stats_read(s, &st);
    atomic_fetch_add(&g_hook_runs, 1);
    if (st.position < v.position)
        atomic_fetch_add(&g_hook_below, 1);
}

/* 4. position as the newest view's, read after a view was opened. */
static void test_position(void)
{
    host h = {0};
    h.s = path_stream(2);
    mkrt_runtime *rt = runtime(&h, N, 1024, 0);
    if (!ok(h.s != NULL && rt != NULL && mkrt_stream_register(h.s, rt, NULL) == MKRT_OK, "defect 4: stream up"))
        return;
    churn c = {rt, h.s, 0, 0};
    mkrt__stream_hook_published = after_publish;
    mkrt__thread t;
    mkrt__thread_start(&t, churner, &c);
    uint64_t below = 0, worst = 0, reads = 0, last = 0;
    /* Enough reads that the window between an apply's publish and its
     * bookkeeping is hit many times when it exists. */
    for (; reads < 400000 || last < 2000; reads++) {
        mkrt_stream_view v;
        mkrt_stream_stats st;
        mkrt_stream_view_open(h.s, &v);
        mkrt_stream_view_close(&v);
        mkrt_stream_stats_read(h.s, &st);
        if (st.position < v.position) {
            below++;
            worst = v.position - st.position > worst ? v.position - st.position : worst;
        }
        last = st.position;
        if (reads > 40000000)
            break;
    }
    atomic_store(&c.stop, 1);
    mkrt__thread_join_result(t, NULL);
    mkrt__stream_hook_published = NULL;
    ok(atomic_load(&g_hook_runs) > 0, "read %llu times right as an apply published",
       (unsigned long long)atomic_load(&g_hook_runs));
    is(atomic_load(&g_hook_below), 0, "and there too stats.position was not below the newest view");
    ok(!c.failed, "updates applied meanwhile (position %llu after %llu reads)", (unsigned long long)last,
       (unsigned long long)reads);
    is(below, 0, "stats.position was never below a view opened before it (worst gap %llu)",
       (unsigned long long)worst);
    mkrt_stream_stats st;
    mkrt_stream_stats_read(h.s, &st);
    is(st.position, st.inserted + st.deleted, "at rest it counts every update that changed the graph");
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
    mkrt_stream_destroy(h.s);
}

/* 5. Zero edges. */
static void test_empty_load(void)
{
    mkrt_stream_config c = mkrt_stream_config_default();
    c.vertices = N;
    c.queries = 1;
    c.query[0] = (mkrt_stream_query){MKRT_STREAM_SSSP, 2};
    mkrt_stream *s = NULL;
    mkrt_error err;
    uint64_t skipped = 7;
    ok(mkrt_stream_create(&c, &s, &err) == MKRT_OK &&
           mkrt_stream_load(s, NULL, NULL, NULL, 0, &skipped, &err) == MKRT_OK,
       "defect 5: loading 0 edges from NULL arrays works");
    is(skipped, 0, "nothing skipped");
    mkrt_stream_destroy(s);
    uint32_t one = 1;
    ok(mkrt_stream_create(&c, &s, &err) == MKRT_OK && mkrt_stream_load(s, &one, &one, &one, 0, NULL, &err) == MKRT_OK,
       "and from non-NULL arrays with n 0");
    uint32_t loop[2] = {3, 3};
    mkrt_stream_destroy(s);
    ok(mkrt_stream_create(&c, &s, &err) == MKRT_OK && mkrt_stream_load(s, loop, loop, NULL, 2, &skipped, &err) ==
                                                          MKRT_OK && skipped == 2,
       "and only self-loops: every one skipped, none kept");
    uint64_t val[N];
    ok(mkrt_stream_recompute(s, 0, val, &err) == MKRT_OK && val[2] == 0 && val[3] == MKRT_STREAM_UNREACHED,
       "the empty graph's SSSP: the source 0, the rest unreached");
    mkrt_stream_destroy(s);
}

int main(void)
{
    test_refused_first();
    test_apply_explained();
    test_overflow_named();
    test_position();
    test_empty_load();
    return done_testing();
}
