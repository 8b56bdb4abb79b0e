/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_levels.c - a public traversal's levels run inside the CPU
 * pool's workers (a run of levels, plan/source.h: part and next_level):
 * along a path (one vertex per level) every level boundary but the first
 * is crossed at the workers' barrier, none goes back to the dispatcher
 * while nothing else waits; with DRAIN off every boundary goes back; with
 * a producer publishing all along, the run gives way to its items (and
 * they all run); the answers are the path's either way. A run's team is
 * the threads that joined it: with the pool threads deaf to launches the
 * holder runs every level alone, and with their deafness switched at
 * random they join at any level; a random graph's searches stay the
 * references' either way. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "../base/thread.h" /* pthreads under the C11 names: TSan sees them */
#include "backend/cpu_pool.h"
#include "deaf_toggler.h"
#include "graph_fixture.h"
#include "mkrt/mkrt.h"
#include "runtime/test_hooks.h"
#include "tap.h"

#define PATH 3000u
#define SEC 10000000000ull
#define TRIES 20

static test_graph path; /* 0 - 1 - ... - PATH-1, made once in main */

static mkrt_runtime *start(uint32_t workers, uint32_t plan_off)
{
    mkrt_config c = mkrt_config_default();
    c.workers = workers;
    c.cells = PATH;
    c.append_log_capacity = 0;
    c.plan_off = plan_off;
    mkrt_runtime *rt = NULL;
    mkrt_error err = {0};
    mkrt_graph g = {PATH, path.off, path.dst, NULL};
    if (mkrt_create(&c, &rt, &err) != MKRT_OK || mkrt_graph_register(rt, &g, &err) != MKRT_OK)
        bail_out("runtime: %s", err.message);
    return rt;
}

typedef struct counts {
    uint64_t on, yields;
} counts;

static counts read_counts(mkrt_runtime *rt)
{
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    return (counts){s.plan_counts[MKRT_PLAN_N_LEVELS_ON], s.plan_counts[MKRT_PLAN_N_LEVEL_YIELDS]};
}

/* A BFS or SSSP (unit weights) from 0 along the path: vertex v at depth
 * or distance v. A generous wait: a sanitizer's build under load, with
 * the producer's items between levels, is slow; a hang still fails. */
static uint64_t side_sent; /* items run_side published, main thread only */

/* The side items go out once the search's levels run in the workers (a
 * boundary crossed there since `on`), or once it ended: published with
 * the start, the planner could take them in the search's first batch and
 * leave nothing to wait at a boundary. Returns false (go on). */
static bool side_after_first(mkrt_runtime *rt, mkrt_traversal *t, uint64_t on)
{
    while (read_counts(rt).on == on && mkrt_traversal_wait(t, 0) == MKRT_ETIMEDOUT)
        mkrt__thread_yield();
    return false;
}

static int run_side(mkrt_runtime *rt, mkrt_traversal_kind kind, const char *what, mkrt_producer *side)
{
    mkrt_traversal *t = NULL;
    mkrt_error err = {0};
    mkrt_traversal_desc d = {kind, false};
    static uint64_t val[PATH];
    const mkrt_item items[4] = {{MKRT_OP_ADD, 8, 8, 1}, {MKRT_OP_ADD, 9, 9, 1}, {MKRT_OP_ADD, 10, 10, 1},
                                {MKRT_OP_ADD, 11, 11, 1}};
    const uint64_t on = read_counts(rt).on;
    if (mkrt_traversal_open(rt, &d, &t, &err) != MKRT_OK || mkrt_traversal_start(t, 0, &err) != MKRT_OK ||
        (side != NULL && (side_after_first(rt, t, on) || mkrt_publish(side, items, 4, SEC, &err) != MKRT_OK ||
                          (side_sent += 4) == 0)) ||
        mkrt_traversal_wait(t, 60 * SEC) != MKRT_OK || mkrt_traversal_read(t, 0, PATH, val, &err) != MKRT_OK) {
        ok(0, "%s: the search ran (%s)", what, err.message);
        return 1;
    }
    uint32_t bad = PATH;
    for (uint32_t v = 0; v < PATH && bad == PATH; v++)
        if (val[v] != v)
            bad = v;
    ok(bad == PATH, "%s: every vertex at its distance along the path (first wrong: %u)", what, bad);
    mkrt_traversal_close(t, NULL);
    return 0;
}

static int run_one(mkrt_runtime *rt, mkrt_traversal_kind kind, const char *what)
{
    return run_side(rt, kind, what, NULL);
}

static void quiet(uint32_t workers)
{
    char what[96];
    for (int k = 0; k < 2; k++) {
        const mkrt_traversal_kind kind = k == 0 ? MKRT_TRAVERSAL_BFS : MKRT_TRAVERSAL_SSSP;
        mkrt_runtime *rt = start(workers, 0);
        snprintf(what, sizeof what, "%u workers, %s, nothing else", workers, k == 0 ? "BFS" : "SSSP");
        const counts a = read_counts(rt);
        if (run_one(rt, kind, what) == 0) {
            const counts b = read_counts(rt);
            ok(b.on - a.on >= PATH - 8 && b.yields == a.yields,
               "%s: %llu of %u level boundaries crossed at the workers' barrier, %llu runs gave way", what,
               (unsigned long long)(b.on - a.on), PATH - 1, (unsigned long long)(b.yields - a.yields));
        }
        mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
    }
}

static void drain_off(void)
{
    mkrt_runtime *rt = start(2, MKRT_PLAN_DRAIN);
    const counts a = read_counts(rt);
    if (run_one(rt, MKRT_TRAVERSAL_BFS, "DRAIN off") == 0) {
        const counts b = read_counts(rt);
        ok(b.on == a.on && b.yields - a.yields >= PATH - 8,
           "DRAIN off: every boundary goes back to the dispatcher (%llu crossed in the workers, %llu gave way)",
           (unsigned long long)(b.on - a.on), (unsigned long long)(b.yields - a.yields));
    }
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
}

/* The producer publishes until told to stop (FEED items at most: a
 * bound, not a goal), all through the searches. */
#define FEED 100000000u

typedef struct feeder {
    mkrt_runtime *rt;
    _Atomic bool stop;
    _Atomic uint64_t published;
    _Atomic int failed; /* relaxed: a flag, read again after the join */
} feeder;

static int feed(void *p)
{
    feeder *f = p;
    mkrt_error err = {0};
    mkrt_producer *pr = mkrt_producer_open(f->rt, &err);
    if (pr == NULL) {
        atomic_store_explicit(&f->failed, 1, memory_order_relaxed);
        return 0;
    }
    mkrt_item items[8];
    for (uint32_t i = 0; i < 8; i++)
        items[i] = (mkrt_item){MKRT_OP_ADD, i, i, 1};
    /* acquire: pairs with the release store of stop by the main thread. */
    for (uint64_t n = 0; n < FEED && !atomic_load_explicit(&f->stop, memory_order_acquire); n += 8) {
        if (mkrt_publish(pr, items, 8, SEC, NULL) != MKRT_OK) {
            atomic_store_explicit(&f->failed, 1, memory_order_relaxed);
            break;
        }
        /* relaxed: read by the main thread as a hint, and after the join. */
        atomic_store_explicit(&f->published, n + 8, memory_order_relaxed);
    }
    mkrt_producer_close(pr);
    return 0;
}

static void with_producer(void)
{
    mkrt_runtime *rt = start(2, 0);
    feeder f = {rt, false, 0, 0};
    mkrt__thread th;
    if (mkrt__thread_start(&th, feed, &f) != 0)
        bail_out("thread");
    /* The producer is under way before the searches start. */
    while (atomic_load_explicit(&f.published, memory_order_relaxed) == 0 &&
           atomic_load_explicit(&f.failed, memory_order_relaxed) == 0)
        mkrt__thread_yield();
    const counts a = read_counts(rt);
    /* Searches until one gave way: at most TRIES, each checked. The
     * feeder may have no CPU while a search runs (a loaded machine), or
     * may have reached FEED already (its items are cheap adds), so this
     * thread also publishes 4 items of its own once each search's levels
     * run in the workers: they wait in its ring for a boundary. */
    mkrt_producer *side = mkrt_producer_open(rt, NULL);
    if (side == NULL)
        bail_out("producer");
    int bad = 0, tries = 0;
    counts b = a;
    while (bad == 0 && b.yields == a.yields && tries++ < TRIES) {
        bad = run_side(rt, MKRT_TRAVERSAL_BFS, "a producer publishing meanwhile", side);
        b = read_counts(rt);
    }
    mkrt_producer_close(side);
    /* release: pairs with the acquire load in feed. */
    atomic_store_explicit(&f.stop, true, memory_order_release);
    mkrt__thread_join(th);
    const uint64_t published = atomic_load_explicit(&f.published, memory_order_relaxed); /* after the join */
    /* Quiesced, not only drained: a drain waits for published items only,
     * and the search's last run may still be completing (its emitted
     * items counted, then its executed ones: once, under TSan, the
     * identity below read between the two). */
    ok(mkrt_drain(rt, SEC) == MKRT_OK && mkrt_quiesce(rt, SEC) == MKRT_OK &&
           atomic_load_explicit(&f.failed, memory_order_relaxed) == 0,
       "the producer's %llu items published, drained and quiesced", (unsigned long long)published);
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(s.published == published + side_sent && s.published + s.emitted == s.executed + s.pruned + s.failed,
       "every item accounted (published %llu, emitted %llu, executed %llu, pruned %llu, failed %llu)",
       (unsigned long long)s.published, (unsigned long long)s.emitted, (unsigned long long)s.executed,
       (unsigned long long)s.pruned, (unsigned long long)s.failed);
    if (bad == 0)
        ok(b.yields > a.yields, "the run gave way to the producer's items at %llu boundaries (%llu crossed, %d searches)",
           (unsigned long long)(b.yields - a.yields), (unsigned long long)(b.on - a.on), tries);
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
}

/* ---- a run's team: the threads that joined it ---------------------- */

#define RV 3000u      /* the random graph's vertices (Dijkstra's reference is O(V^2)) */
#define RE 24000u     /* its undirected edges */
#define SEARCHES 24u  /* per runtime, alternating BFS and SSSP */

static test_graph rnd;

/* Searches from SEARCHES roots on rnd, each compared with the reference;
 * returns the searches that went wrong (why: the first). poll_ns: the
 * waits are that short, again and again (a waiter that helps launches
 * runs with its deadline, and leaves them at it), else one long wait. */
static uint32_t searches(mkrt_runtime *rt, uint64_t poll_ns, char *why, size_t len)
{
    static uint64_t got[RV], want[RV];
    static uint32_t level[RV];
    uint32_t wrong = 0;
    mkrt_traversal *t[2] = {NULL, NULL};
    mkrt_error err = {0};
    for (int k = 0; k < 2; k++) {
        mkrt_traversal_desc d = {k == 0 ? MKRT_TRAVERSAL_BFS : MKRT_TRAVERSAL_SSSP, false};
        if (mkrt_traversal_open(rt, &d, &t[k], &err) != MKRT_OK) {
            snprintf(why, len, "open: %s", err.message);
            return SEARCHES;
        }
    }
    for (uint32_t i = 0; i < SEARCHES; i++) {
        const int k = (int)(i % 2);
        const uint32_t root = (i * 389u) % (RV - RV / 8); /* the last eighth is isolated */
        mkrt_status st = mkrt_traversal_start(t[k], root, &err);
        for (uint64_t waited = 0; st == MKRT_OK && poll_ns != 0 && waited < 60 * SEC; waited += poll_ns)
            if ((st = mkrt_traversal_wait(t[k], poll_ns)) == MKRT_ETIMEDOUT)
                st = MKRT_OK;
            else
                break;
        if (st != MKRT_OK || mkrt_traversal_wait(t[k], 60 * SEC) != MKRT_OK ||
            mkrt_traversal_read(t[k], 0, RV, got, &err) != MKRT_OK) {
            if (wrong++ == 0)
                snprintf(why, len, "search from %u did not finish: %s", root, err.message);
            continue;
        }
        if (k == 0) {
            test_graph_ref_bfs(&rnd, root, level);
            for (uint32_t v = 0; v < RV; v++)
                want[v] = level[v] == UINT32_MAX ? UINT64_MAX : level[v];
        } else {
            test_graph_ref_sssp(&rnd, root, rnd.w, want);
        }
        for (uint32_t v = 0; v < RV; v++)
            if (got[v] != want[v]) {
                if (wrong++ == 0)
                    snprintf(why, len, "%s from %u: vertex %u at %llu, the reference's %llu", k ? "SSSP" : "BFS",
                             root, v, (unsigned long long)got[v], (unsigned long long)want[v]);
                break;
            }
    }
    mkrt_traversal_close(t[0], NULL);
    mkrt_traversal_close(t[1], NULL);
    return wrong;
}

static mkrt_runtime *start_rnd(uint32_t workers)
{
    mkrt_config c = mkrt_config_default();
    c.workers = workers;
    c.cells = RV;
    c.append_log_capacity = 0;
    mkrt_runtime *rt = NULL;
    mkrt_error err = {0};
    mkrt_graph g = {RV, rnd.off, rnd.dst, rnd.w};
    if (mkrt_create(&c, &rt, &err) != MKRT_OK || mkrt_graph_register(rt, &g, &err) != MKRT_OK)
        bail_out("runtime: %s", err.message);
    return rt;
}

/* No pool thread joins (deaf to launches, as if asleep or without a
 * CPU): the holder runs every level of every search alone, its barriers
 * counting it only. Before, a run took every member and its first
 * barrier waited for the pool thread for good. Then the same searches
 * waited for in slices of 20 us: the waiter that helps joins the runs it
 * launches and leaves them at its deadline, with no one left in them,
 * and the next holder (the dispatcher thread, or the waiter again)
 * joins each such run where it stopped. */
static void nobody_joins(void)
{
    mkrt_runtime *rt = start_rnd(2);
    mkrt__cpu_pool_launch_deaf(mkrt__test_cpu_pool(rt), true);
    mkrt_stats a, b;
    mkrt_stats_read(rt, &a);
    const counts ca = read_counts(rt);
    char why[512] = "";
    const uint32_t wrong = searches(rt, 0, why, sizeof why);
    mkrt_stats_read(rt, &b);
    const counts cb = read_counts(rt);
    ok(wrong == 0, "2 workers, the pool thread joining no run: %u searches as the references' (%u wrong%s%s)",
       SEARCHES, wrong, wrong ? ": " : "", why);
    ok(cb.on > ca.on && b.units_by_planner - a.units_by_planner == b.units_run - a.units_run,
       "... %llu boundaries crossed in runs of levels, every unit the holder's (%llu of %llu)",
       (unsigned long long)(cb.on - ca.on), (unsigned long long)(b.units_by_planner - a.units_by_planner),
       (unsigned long long)(b.units_run - a.units_run));
    why[0] = 0;
    const uint32_t polled = searches(rt, 20000, why, sizeof why);
    ok(polled == 0, "... and waited for 20 us at a time: %u searches as the references' (%u wrong%s%s)", SEARCHES,
       polled, polled ? ": " : "", why);
    mkrt__cpu_pool_launch_deaf(mkrt__test_cpu_pool(rt), false);
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
}

/* The pool threads' deafness switched every few microseconds while the
 * searches run (3 workers: 2 pool threads): runs that none, some or all of
 * them join, at any level. */
static void joined_at_random(void)
{
    mkrt_runtime *rt = start_rnd(3);
    deaf_toggler tg = {mkrt__test_cpu_pool(rt), 2, 30000, false};
    mkrt__thread th;
    if (mkrt__thread_start(&th, deaf_toggler_main, &tg) != 0)
        bail_out("thread");
    mkrt_stats a, b;
    mkrt_stats_read(rt, &a);
    char why[512] = "";
    uint32_t wrong = 0;
    for (int round = 0; round < 3; round++)
        wrong += searches(rt, round == 1 ? 20000 : 0, why, sizeof why);
    atomic_store_explicit(&tg.stop, true, memory_order_relaxed);
    mkrt__thread_join(th);
    mkrt_stats_read(rt, &b);
    diag("units by the holder %llu of %llu", (unsigned long long)(b.units_by_planner - a.units_by_planner),
         (unsigned long long)(b.units_run - a.units_run));
    ok(wrong == 0, "3 workers, pool threads joining runs at random: %u searches as the references' (%u wrong%s%s)",
       3 * SEARCHES, wrong, wrong ? ": " : "", why);
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
}

/* As above, with the last arriver of every level pausing between its
 * move of the generation and its reopening of the word (a test hook):
 * a pool thread that joins the reopened level must not take the move for
 * its own level's end and run the level's parts again beside the next
 * transition. The pool counts the level ends that found a thread inside
 * a level's parts; the barrier promises none. */
static void joined_in_the_gap(void)
{
    mkrt_runtime *rt = start_rnd(3);
    mkrt__backend *pool = mkrt__test_cpu_pool(rt);
    mkrt__cpu_pool_reopen_gap(pool, 50000);
    deaf_toggler tg = {pool, 2, 30000, false};
    mkrt__thread th;
    if (mkrt__thread_start(&th, deaf_toggler_main, &tg) != 0)
        bail_out("thread");
    const uint64_t before = mkrt__cpu_pool_level_overlaps(pool);
    char why[512] = "";
    const uint32_t wrong = searches(rt, 0, why, sizeof why);
    atomic_store_explicit(&tg.stop, true, memory_order_relaxed);
    mkrt__thread_join(th);
    const uint64_t overlaps = mkrt__cpu_pool_level_overlaps(pool) - before;
    ok(wrong == 0 && overlaps == 0,
       "3 workers, 50 us between a level's generation and its word: %u searches as the references' (%u wrong%s%s), "
       "%llu level ends beside a thread in the level's parts",
       SEARCHES, wrong, wrong ? ": " : "", why, (unsigned long long)overlaps);
    mkrt__cpu_pool_reopen_gap(pool, 0);
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
}

int main(void)
{
    path = test_graph_path(PATH);
    rnd = test_graph_random(RV, RE, 7);
    quiet(2);
    quiet(1);
    drain_off();
    with_producer();
    nobody_joins();
    joined_at_random();
    joined_in_the_gap();
    test_graph_free(&rnd);
    test_graph_free(&path);
    return done_testing();
}
