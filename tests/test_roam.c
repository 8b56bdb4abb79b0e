/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_roam.c - the dispatch token taken by the CPU pool's threads
 * (pipeline/dispatcher.c, the roam; backend/cpu_pool.c, members).
 *
 * With the dispatcher thread deaf (a test hook: it takes the token only to
 * shut down, and otherwise only serves as a member of the pool), every
 * batch is planned and launched by a pool thread: chains of ADDs on a few
 * cells (many layers, barriers between them), independent items, APPENDs
 * of two producers, and a BFS whose levels run in the workers' loop. The
 * results are exact, per-producer order holds, the dispatcher thread runs
 * its share of the pool threads' launches (or they would never finish),
 * and shutdown takes the token back from them. Without the hook, bursts
 * with idle gaps between them let the token go free again and again: pool
 * threads and the dispatcher thread race for it, and every item runs
 * exactly once. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/thread.h" /* pthreads under the C11 names: TSan sees them */
#include "../src/runtime/test_hooks.h"
#include "count_alloc.h"
#include "cpu_runtime.h"
#include "graph_fixture.h"
#include "mkrt/mkrt.h"
#include "tap.h"

#define SEC 10000000000ull
#define CELLS 4096u
#define CHAIN_CELLS 8u  /* ADDs on these form chains: one layer per step */
#define APPEND_HANDLE 9u
#define ROUNDS 40u
#define PER_ROUND 600u

static void nap_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}


/* One producer's round: ADDs on the chain cells (each ADD reads and
 * writes its cell: a chain per cell), ADDs on cells of their own
 * (independent), and APPENDs numbered base + k. sum[] gets what the
 * cells must add up to. */
static uint32_t make_round(mkrt_item *items, uint32_t round, uint32_t producer, uint32_t append_base,
                           uint64_t *sum)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < PER_ROUND; k++) {
        uint32_t param = 1 + (round * 7 + k * 3 + producer) % 13;
        if (k % 3 == 0) {
            uint32_t c = k % CHAIN_CELLS;
            items[n++] = (mkrt_item){MKRT_OP_ADD, c, c, param};
            sum[c] += param;
        } else if (k % 3 == 1) {
            uint32_t c = 64 + (producer * PER_ROUND + k) % (CELLS - 64);
            items[n++] = (mkrt_item){MKRT_OP_ADD, c, c, param};
            sum[c] += param;
        } else {
            items[n++] = (mkrt_item){MKRT_OP_APPEND, 0, APPEND_HANDLE, append_base + k / 3};
        }
    }
    return n;
}

/* Checks the cells against sum[] and the APPEND log's per-producer order
 * (producer p's values are p * 1000000 + 0, 1, 2, ...). */
static void check_results(mkrt_runtime *rt, const uint64_t *sum, uint32_t appends_each, const char *what)
{
    static uint64_t cells[CELLS];
    mkrt_cells_read(rt, 0, CELLS, cells);
    uint32_t bad = CELLS;
    for (uint32_t c = 0; c < CELLS && bad == CELLS; c++)
        if (c != APPEND_HANDLE && cells[c] != sum[c])
            bad = c;
    ok(bad == CELLS, "%s: every cell holds its sum, each item ran exactly once (first wrong: %u)", what, bad);
    static uint32_t log[2 * ROUNDS * PER_ROUND];
    size_t n = mkrt_append_log_read(rt, APPEND_HANDLE, log, 2 * ROUNDS * PER_ROUND);
    uint32_t next[2] = {0, 0};
    bool order = n == 2 * (size_t)appends_each;
    for (size_t i = 0; i < n && order; i++) {
        uint32_t p = log[i] / 1000000u;
        order = p < 2 && log[i] % 1000000u == next[p]++;
    }
    ok(order, "%s: %zu APPENDs of %u, each producer's in its own order", what, n, 2 * appends_each);
}

typedef struct pub_arg {
    mkrt_producer *p;
    uint32_t producer;
    bool gaps; /* an idle gap between rounds: the token goes free */
    uint64_t sum[CELLS];
    uint64_t sent;
    bool failed;
} pub_arg;

static int publisher(void *a_)
{
    pub_arg *a = a_;
    static _Thread_local mkrt_item items[PER_ROUND];
    uint32_t appended = 0;
    for (uint32_t r = 0; r < ROUNDS; r++) {
        uint32_t n = make_round(items, r, a->producer, a->producer * 1000000u + appended, a->sum);
        appended += PER_ROUND / 3;
        /* in pieces of varied size: batches of varied shape */
        for (uint32_t k = 0; k < n;) {
            uint32_t len = 1 + (r * 31 + k) % 97;
            len = len > n - k ? n - k : len;
            if (mkrt_publish(a->p, items + k, len, SEC, NULL) != MKRT_OK) {
                a->failed = true;
                return 0;
            }
            a->sent += len;
            k += len;
        }
        if (a->gaps)
            nap_us(50 + (r * 37) % 400);
    }
    return 0;
}

/* Two producer threads publish ROUNDS rounds each; returns the items. */
static uint64_t publish_rounds(mkrt_runtime *rt, bool gaps, uint64_t *sum)
{
    static pub_arg args[2];
    mkrt__thread th[2];
    for (uint32_t i = 0; i < 2; i++) {
        memset(&args[i], 0, sizeof args[i]);
        args[i].p = mkrt_producer_open(rt, NULL);
        args[i].producer = i;
        args[i].gaps = gaps;
        if (args[i].p == NULL || mkrt__thread_start(&th[i], publisher, &args[i]) != 0)
            bail_out("producer %u", i);
    }
    uint64_t sent = 0;
    for (uint32_t i = 0; i < 2; i++) {
        mkrt__thread_join(th[i]);
        ok(!args[i].failed, "producer %u published all its rounds", i);
        sent += args[i].sent;
        for (uint32_t c = 0; c < CELLS; c++)
            sum[c] += args[i].sum[c];
    }
    if (!test_completed_all(rt, sent))
        ok(0, "all %llu items completed", (unsigned long long)sent);
    /* Everything ran: the drain has nothing left to run itself, and gives
     * this thread the completions' happens-before (the stats do not). */
    is(mkrt_drain(rt, SEC), MKRT_OK, "a drain after all %llu items completed", (unsigned long long)sent);
    for (uint32_t i = 0; i < 2; i++)
        mkrt_producer_close(args[i].p);
    return sent;
}

/* The dispatcher thread deaf: pool threads plan and launch everything. */
static void deaf_dispatcher(uint32_t workers)
{
    char what[96];
    snprintf(what, sizeof what, "%u workers, dispatcher deaf", workers);
    mkrt_runtime *rt = test_cpu_runtime(workers, CELLS, NULL);
    mkrt__runtime_deaf(rt, true);
    static uint64_t sum[CELLS];
    memset(sum, 0, sizeof sum);
    const uint64_t roams0 = mkrt__test_roams(rt);
    publish_rounds(rt, false, sum);
    const uint64_t roams = mkrt__test_roams(rt) - roams0;
    ok(roams > 0, "%s: pool threads took the token %llu times and ran every batch", what,
       (unsigned long long)roams);
    check_results(rt, sum, ROUNDS * (PER_ROUND / 3), what);
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(s.layers > s.batches, "%s: batches of several layers ran (%llu layers in %llu batches)", what,
       (unsigned long long)s.layers, (unsigned long long)s.batches);
    /* Awake again, the dispatcher thread (or a waiter) runs batches. */
    mkrt__runtime_deaf(rt, false);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item one = {MKRT_OP_ADD, 100, 100, 5};
    is(mkrt_publish(p, &one, 1, SEC, NULL), MKRT_OK, "%s: awake, a publish", what);
    is(mkrt_drain(rt, SEC), MKRT_OK, "%s: ... drains", what);
    uint64_t v = 0;
    mkrt_cell_read(rt, 100, &v);
    is(v, sum[100] + 5, "%s: ... and ran", what);
    mkrt_producer_close(p);
    is(mkrt_destroy(rt, SEC, NULL), MKRT_OK, "%s: destroy", what);
}

/* Deaf, with items still coming when destroy begins: shutdown takes the
 * token back from the pool threads and every item runs. */
static void deaf_destroy(void)
{
    mkrt_runtime *rt = test_cpu_runtime(3, CELLS, NULL);
    mkrt__runtime_deaf(rt, true);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    static mkrt_item items[4000];
    for (uint32_t k = 0; k < 4000; k++)
        items[k] = (mkrt_item){MKRT_OP_ADD, k % 16, k % 16, 1};
    is(mkrt_publish(p, items, 4000, SEC, NULL), MKRT_OK, "deaf, 3 workers: 4000 chained ADDs published");
    mkrt_producer_close(p);
    is(mkrt_destroy(rt, 60 * SEC, NULL), MKRT_OK, "... destroy right away returns OK (the items ran)");
}

/* Waits for the search with timeouts of 0 (a waiter with time left would
 * take the token and run it itself); false after 60 s. */
static bool search_done(mkrt_traversal *t)
{
    for (int i = 0; i < 600000; i++) {
        if (mkrt_traversal_wait(t, 0) == MKRT_OK)
            return true;
        nap_us(100);
    }
    return false;
}

/* A BFS with the dispatcher thread deaf: the pool thread that takes the
 * token runs the traversal's levels as their launcher. */
static void deaf_bfs(uint32_t workers)
{
    test_graph g = test_graph_random(CELLS, 4 * CELLS, 7);
    static uint32_t level[CELLS];
    test_graph_ref_bfs(&g, 0, level);
    mkrt_runtime *rt = test_cpu_runtime(workers, CELLS, &g);
    mkrt__runtime_deaf(rt, true);
    mkrt_traversal *t = NULL;
    mkrt_error err = {0};
    mkrt_traversal_desc d = {MKRT_TRAVERSAL_BFS, false};
    static uint64_t val[CELLS];
    const uint64_t roams0 = mkrt__test_roams(rt);
    if (mkrt_traversal_open(rt, &d, &t, &err) != MKRT_OK || mkrt_traversal_start(t, 0, &err) != MKRT_OK ||
        !search_done(t) || mkrt_traversal_read(t, 0, CELLS, val, &err) != MKRT_OK) {
        ok(0, "%u workers, deaf: the BFS ran (%s)", workers, err.message);
    } else {
        uint32_t bad = CELLS;
        for (uint32_t v = 0; v < CELLS && bad == CELLS; v++)
            if (val[v] != (level[v] == UINT32_MAX ? UINT64_MAX : level[v]))
                bad = v;
        ok(bad == CELLS, "%u workers, deaf: every vertex at its BFS level (first wrong: %u)", workers, bad);
        ok(mkrt__test_roams(rt) > roams0, "... launched by a pool thread that took the token");
    }
    mkrt_traversal_close(t, NULL);
    is(mkrt_destroy(rt, SEC, NULL), MKRT_OK, "%u workers, deaf BFS: destroy", workers);
    test_graph_free(&g);
}

/* Bursts with idle gaps: the token goes free between them, and the pool
 * threads and the dispatcher thread race for it. */
static void racing_bursts(uint32_t workers)
{
    char what[96];
    snprintf(what, sizeof what, "%u workers, bursts with gaps", workers);
    mkrt_runtime *rt = test_cpu_runtime(workers, CELLS, NULL);
    static uint64_t sum[CELLS];
    memset(sum, 0, sizeof sum);
    publish_rounds(rt, true, sum);
    check_results(rt, sum, ROUNDS * (PER_ROUND / 3), what);
    diag("%s: pool threads took the token %llu times", what, (unsigned long long)mkrt__test_roams(rt));
    is(mkrt_destroy(rt, SEC, NULL), MKRT_OK, "%s: destroy", what);
}

/* A pool thread that cannot make its scratch (no memory) gives the token
 * back and asks no more: with the dispatcher thread deaf nothing runs
 * meanwhile (and nothing crashes or spins taking and giving the token),
 * and once it hears again every item runs. */
static void roam_without_memory(void)
{
    count_alloc_install();
    mkrt_runtime *rt = test_cpu_runtime(2, CELLS, NULL);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt__runtime_deaf(rt, true);
    count_alloc_fail_after(0);
    static mkrt_item items[100];
    for (uint32_t k = 0; k < 100; k++)
        items[k] = (mkrt_item){MKRT_OP_ADD, 200 + k, 200 + k, k + 1};
    is(mkrt_publish(p, items, 100, SEC, NULL), MKRT_OK, "no memory, dispatcher deaf: 100 items published");
    /* Until the pool thread asked (a loaded machine may not run it for a
     * while: once, in CI, not within 50 ms), then 50 ms more for it to
     * ask again if it would. */
    for (int ms = 0; ms < 10000 && count_alloc_failures() == 0; ms++)
        nap_us(1000);
    nap_us(50000);
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(mkrt__test_roams(rt) == 0 && s.executed == 0,
       "... the pool thread could not dispatch them (%llu roams, %llu run)",
       (unsigned long long)mkrt__test_roams(rt), (unsigned long long)s.executed);
    /* One refusal, not one per look: it stopped asking (a thread that
     * kept taking the token would be refused again and again). */
    ok(count_alloc_failures() >= 1 && count_alloc_failures() <= 4,
       "... its scratch was refused once and it asked no more (%llu allocations failed)",
       (unsigned long long)count_alloc_failures());
    count_alloc_fail_after(UINT64_MAX);
    mkrt__runtime_deaf(rt, false);
    is(mkrt_drain(rt, SEC), MKRT_OK, "... the dispatcher thread hears again: drained");
    uint64_t v = 0;
    mkrt_cell_read(rt, 299, &v);
    mkrt_stats_read(rt, &s);
    ok(s.executed == 100 && v == 100, "... every item ran once (%llu run, cell 299 = %llu)",
       (unsigned long long)s.executed, (unsigned long long)v);
    mkrt_producer_close(p);
    is(mkrt_destroy(rt, SEC, NULL), MKRT_OK, "... destroy");
    count_alloc_uninstall();
}

int main(void)
{
    roam_without_memory();
    for (uint32_t w = 2; w <= 4; w++)
        deaf_dispatcher(w);
    deaf_destroy();
    deaf_bfs(2);
    deaf_bfs(3);
    for (uint32_t w = 1; w <= 3; w++)
        racing_bursts(w);
    return done_testing();
}
