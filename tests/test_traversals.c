/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_traversals.c - public traversals (mkrt_traversal_*): eight
 * BFS and SSSP searches from different roots, started and waited for by
 * eight threads at once while a producer's items run, each result equal
 * to the sequential reference; reuse, the work counters, and bad input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/thread.h" /* pthreads under the C11 names: TSan sees them */
#include "count_alloc.h"
#include "graph_fixture.h"
#include "graph_runtime.h"

#define SEARCHERS 8
#define ROUNDS 3

typedef struct searcher {
    mkrt_traversal *t;
    const test_graph *g;
    uint32_t roots[ROUNDS];
    bool bfs;
    int wrong;     /* results that differed from the reference */
    int failed;    /* calls that did not return MKRT_OK */
    char why[MKRT_ERROR_MESSAGE_MAX + 64];
} searcher;

/* A BFS tree is right when every reached vertex's parent is one level up
 * and adjacent to it (parents differ from the reference's where a vertex
 * has several at that level). */
static bool tree_ok(const test_graph *g, uint32_t root, const uint64_t *depth, const uint32_t *parent)
{
    for (uint32_t v = 0; v < g->v; v++) {
        if (depth[v] == UINT64_MAX) {
            if (parent[v] != UINT32_MAX)
                return false;
            continue;
        }
        if (v == root) {
            if (parent[v] != root || depth[v] != 0)
                return false;
            continue;
        }
        uint32_t p = parent[v];
        if (p >= g->v || depth[p] + 1 != depth[v])
            return false;
        bool adjacent = false;
        for (uint64_t e = g->off[p]; e < g->off[p + 1] && !adjacent; e++)
            adjacent = g->dst[e] == v;
        if (!adjacent)
            return false;
    }
    return true;
}

static int search(void *arg)
{
    searcher *s = arg;
    const test_graph *g = s->g;
    uint64_t *got = malloc(g->v * sizeof *got), *want = malloc(g->v * sizeof *want);
    uint32_t *level = malloc(g->v * sizeof *level), *parent = malloc(g->v * sizeof *parent);
    mkrt_error err;
    for (int r = 0; r < ROUNDS; r++) {
        uint32_t root = s->roots[r];
        if (mkrt_traversal_start(s->t, root, &err) != MKRT_OK ||
            mkrt_traversal_wait(s->t, MKRT_TIMEOUT_INFINITE) != MKRT_OK ||
            mkrt_traversal_read(s->t, 0, g->v, got, &err) != MKRT_OK) {
            s->failed++;
            snprintf(s->why, sizeof s->why, "root %u: %s", root, err.message);
            continue;
        }
        if (s->bfs) {
            test_graph_ref_bfs(g, root, level);
            for (uint32_t v = 0; v < g->v; v++)
                want[v] = level[v] == UINT32_MAX ? UINT64_MAX : level[v];
            if (mkrt_traversal_parents(s->t, 0, g->v, parent, &err) != MKRT_OK || !tree_ok(g, root, got, parent)) {
                s->wrong++;
                snprintf(s->why, sizeof s->why, "BFS from %u: not a BFS tree", root);
            }
        } else {
            test_graph_ref_sssp(g, root, g->w, want);
        }
        for (uint32_t v = 0; v < g->v; v++)
            if (got[v] != want[v]) {
                s->wrong++;
                snprintf(s->why, sizeof s->why, "%s from %u: vertex %u: %llu, the reference's %llu",
                         s->bfs ? "BFS" : "SSSP", root, v, (unsigned long long)got[v], (unsigned long long)want[v]);
                break;
            }
    }
    free(got);
    free(want);
    free(level);
    free(parent);
    return 0;
}

/* The producer's own work meanwhile: ADDs on cells the traversals never
 * touch (they have values of their own). */
typedef struct other {
    mkrt_runtime *rt;
    mkrt_producer *p;
    uint64_t items;
} other;

static int produce(void *arg)
{
    other *o = arg;
    mkrt_item adds[64];
    for (int i = 0; i < 64; i++)
        adds[i] = (mkrt_item){MKRT_OP_ADD, 7, 7, 1};
    for (int k = 0; k < 200; k++) {
        if (mkrt_publish(o->p, adds, 64, MKRT_TIMEOUT_INFINITE, NULL) != MKRT_OK)
            return 1;
        o->items += 64;
    }
    return mkrt_drain(o->rt, MKRT_TIMEOUT_INFINITE) == MKRT_OK ? 0 : 1;
}

static void concurrent(mkrt_backend_kind kind, const test_graph *g)
{
    mkrt_runtime *rt = start_with(kind, 64);
    mkrt_graph graph = {g->v, g->off, g->dst, g->w};
    mkrt_error err;
    if (mkrt_graph_register(rt, &graph, &err) != MKRT_OK)
        bail_out("register: %s", err.message);
    mkrt_producer *p = mkrt_producer_open(rt, &err);
    if (p == NULL)
        bail_out("producer: %s", err.message);
    searcher s[SEARCHERS];
    mkrt__thread th[SEARCHERS + 1];
    for (int i = 0; i < SEARCHERS; i++) {
        memset(&s[i], 0, sizeof s[i]);
        s[i].g = g;
        s[i].bfs = i % 2 == 0;
        for (int r = 0; r < ROUNDS; r++)
            s[i].roots[r] = (uint32_t)((i * 97 + r * 389 + 1) % g->v);
        mkrt_traversal_desc d = {s[i].bfs ? MKRT_TRAVERSAL_BFS : MKRT_TRAVERSAL_SSSP, i % 4 == 0};
        if (mkrt_traversal_open(rt, &d, &s[i].t, &err) != MKRT_OK)
            bail_out("open: %s", err.message);
    }
    other o = {rt, p, 0};
    for (int i = 0; i < SEARCHERS; i++)
        if (mkrt__thread_start(&th[i], search, &s[i]) != 0)
            bail_out("thread start");
    if (mkrt__thread_start(&th[SEARCHERS], produce, &o) != 0)
        bail_out("thread start");
    int wrong = 0, failed = 0, res = 0;
    for (int i = 0; i < SEARCHERS; i++) {
        mkrt__thread_join_result(th[i], NULL);
        wrong += s[i].wrong;
        failed += s[i].failed;
        if (s[i].failed || s[i].wrong)
            diag("searcher %d: %s", i, s[i].why);
    }
    mkrt__thread_join_result(th[SEARCHERS], &res);
    is(failed, 0, "%s: 8 threads x %d searches: every start, wait and read returned MKRT_OK", kind_name(kind), ROUNDS);
    is(wrong, 0, "%s: every BFS (depths, tree) and SSSP equals the sequential reference", kind_name(kind));
    is(res, 0, "%s: the producer's items ran meanwhile", kind_name(kind));
    is(cell(rt, 7), o.items, "%s: ... all of them (the cells are not the traversals' values)", kind_name(kind));
    mkrt_traversal_stats ts = {0};
    uint64_t pushed = 0, pulled = 0, edges = 0;
    for (int i = 0; i < SEARCHERS; i++) {
        ok(mkrt_traversal_stats_read(s[i].t, &ts) == MKRT_OK, "%s: stats of traversal %d", kind_name(kind), i);
        pushed += ts.levels_pushed;
        pulled += ts.levels_pulled;
        edges += ts.edges_examined;
        if (i == 0)
            ok(ts.levels_pulled > 0, "%s: the symmetric BFS pulled some levels (%llu of %llu)", kind_name(kind),
               (unsigned long long)ts.levels_pulled, (unsigned long long)(ts.levels_pulled + ts.levels_pushed));
        if (i == 1)
            is(ts.levels_pulled, 0, "%s: SSSP never pulls", kind_name(kind));
    }
    mkrt_stats st = stats(rt);
    ok(pushed > 0 && edges > 0, "%s: the traversals counted levels and edges", kind_name(kind));
    ok(st.levels_pushed >= pushed && st.levels_pulled >= pulled && st.edges_examined >= edges,
       "%s: mkrt_stats counts them too (levels %llu pushed, %llu pulled; %llu edges)", kind_name(kind),
       (unsigned long long)st.levels_pushed, (unsigned long long)st.levels_pulled,
       (unsigned long long)st.edges_examined);
    for (int i = 0; i < SEARCHERS; i++)
        is(mkrt_traversal_close(s[i].t, &err), MKRT_OK, "%s: close %d", kind_name(kind), i);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

static void bad_input(const test_graph *g)
{
    mkrt_runtime *rt = start_with(MKRT_BACKEND_CPU, 64);
    mkrt_error err;
    mkrt_traversal *t = NULL;
    mkrt_traversal_desc bfs = {MKRT_TRAVERSAL_BFS, true}, bogus = {(mkrt_traversal_kind)0, false};
    is(mkrt_traversal_open(rt, &bfs, &t, &err), MKRT_EINVAL, "open before a graph is registered");
    like(err.message, "Fix: call mkrt_graph_register", "... says what to do");
    ok(t == NULL, "... and leaves no traversal");
    is(mkrt_traversal_open(NULL, &bfs, &t, &err), MKRT_EINVAL, "open: NULL runtime");
    like(err.message, "Fix:", "... with a fix");
    is(mkrt_traversal_open(rt, NULL, &t, &err), MKRT_EINVAL, "open: NULL description");
    is(mkrt_traversal_open(rt, &bfs, NULL, &err), MKRT_EINVAL, "open: NULL out");
    mkrt_graph graph = {g->v, g->off, g->dst, g->w};
    if (mkrt_graph_register(rt, &graph, &err) != MKRT_OK)
        bail_out("register: %s", err.message);
    is(mkrt_traversal_open(rt, &bogus, &t, &err), MKRT_EINVAL, "open: unknown kind");
    like(err.message, "kind 0 is not a traversal. Fix:", "... naming it");
    if (mkrt_traversal_open(rt, &bfs, &t, &err) != MKRT_OK)
        bail_out("open: %s", err.message);
    uint64_t out[4];
    uint32_t par[4];
    is(mkrt_traversal_read(t, 0, 4, out, &err), MKRT_ESTATE, "read before any start");
    like(err.message, "never started", "... says so");
    is(mkrt_traversal_start(t, g->v, &err), MKRT_EINVAL, "start: root out of range");
    like(err.message, "root 1500 is not a vertex", "... naming the root");
    like(err.message, "Fix:", "... with a fix");
    is(mkrt_traversal_start(NULL, 0, &err), MKRT_EINVAL, "start: NULL traversal");
    is(mkrt_traversal_wait(NULL, 0), MKRT_EINVAL, "wait: NULL traversal");
    is(mkrt_graph_register(rt, &graph, &err), MKRT_EINVAL, "registering again after a traversal opened");
    like(err.message, "Fix: register the graph before opening traversals", "... is refused");
    /* A running search, held: the dispatcher parks, so it cannot finish. */
    mkrt__runtime_hold(rt, true);
    is(mkrt_traversal_start(t, 0, &err), MKRT_OK, "start while the dispatcher is held");
    is(mkrt_traversal_wait(t, 0), MKRT_ETIMEDOUT, "a poll of the running search times out");
    is(mkrt_traversal_start(t, 1, &err), MKRT_ESTATE, "start again while it runs");
    like(err.message, "still running. Fix:", "... says why and what to do");
    is(mkrt_traversal_read(t, 0, 4, out, &err), MKRT_ESTATE, "read while it runs");
    is(mkrt_traversal_close(t, &err), MKRT_ESTATE, "close while it runs");
    mkrt__runtime_hold(rt, false);
    is(mkrt_traversal_wait(t, MKRT_TIMEOUT_INFINITE), MKRT_OK, "released, it finishes");
    is(mkrt_traversal_read(t, g->v - 2, 4, out, &err), MKRT_EINVAL, "read past the last vertex");
    like(err.message, "Fix: read within", "... with a fix");
    is(mkrt_traversal_read(t, 0, 4, NULL, &err), MKRT_EINVAL, "read: NULL out");
    is(mkrt_traversal_read(t, 0, 1, out, &err), MKRT_OK, "read the root");
    is(out[0], 0, "... at depth 0");
    is(mkrt_traversal_parents(t, 0, 1, par, &err), MKRT_OK, "parents of a BFS");
    is(par[0], 0, "... the root is its own parent");
    is(mkrt_traversal_stats_read(t, NULL), MKRT_EINVAL, "stats: NULL out");
    is(mkrt_traversal_close(t, &err), MKRT_OK, "close a finished traversal");
    mkrt_traversal_desc sssp = {MKRT_TRAVERSAL_SSSP, false};
    mkrt_traversal *u = NULL;
    is(mkrt_traversal_open(rt, &sssp, &u, &err), MKRT_OK, "open reuses the closed one's memory");
    ok(u == t, "... the same object");
    is(mkrt_traversal_start(u, 3, &err), MKRT_OK, "an SSSP from 3");
    is(mkrt_traversal_wait(u, MKRT_TIMEOUT_INFINITE), MKRT_OK, "... finishes");
    is(mkrt_traversal_parents(u, 0, 1, par, &err), MKRT_ENOTSUP, "parents of an SSSP");
    like(err.message, "Fix: read distances", "... points at mkrt_traversal_read");
    mkrt_traversal *all[MKRT_TRAVERSALS_MAX];
    size_t opened = 1; /* u */
    while (opened < MKRT_TRAVERSALS_MAX && mkrt_traversal_open(rt, &sssp, &all[opened], &err) == MKRT_OK)
        opened++;
    is(opened, MKRT_TRAVERSALS_MAX, "%u traversals open at once", MKRT_TRAVERSALS_MAX);
    is(mkrt_traversal_open(rt, &sssp, &all[0], &err), MKRT_EAGAIN, "one more is refused");
    like(err.message, "close one", "... with a fix");
    mkrt_destroy(rt, SEC, NULL); /* frees the open traversals too */
}

/* A root without edges finishes at once: itself at 0, nothing else. */
static void lonely_root(void)
{
    uint64_t off[4] = {0, 1, 2, 2};
    uint32_t dst[2] = {1, 0};
    mkrt_graph g = {3, off, dst, NULL};
    mkrt_runtime *rt = start_with(MKRT_BACKEND_CPU, 64);
    mkrt_error err;
    mkrt_traversal *t = NULL;
    mkrt_traversal_desc d = {MKRT_TRAVERSAL_SSSP, false};
    if (mkrt_graph_register(rt, &g, &err) != MKRT_OK || mkrt_traversal_open(rt, &d, &t, &err) != MKRT_OK)
        bail_out("setup: %s", err.message);
    uint64_t out[3];
    is(mkrt_traversal_start(t, 2, &err), MKRT_OK, "start from a vertex without edges");
    is(mkrt_traversal_wait(t, MKRT_TIMEOUT_INFINITE), MKRT_OK, "... finishes");
    is(mkrt_traversal_read(t, 0, 3, out, &err), MKRT_OK, "... and reads");
    ok(out[0] == UINT64_MAX && out[1] == UINT64_MAX && out[2] == 0, "only the root is reached");
    is(mkrt_traversal_start(t, 0, &err), MKRT_OK, "again from 0");
    is(mkrt_traversal_wait(t, MKRT_TIMEOUT_INFINITE), MKRT_OK, "... finishes");
    mkrt_traversal_read(t, 0, 3, out, &err);
    ok(out[0] == 0 && out[1] == 1 && out[2] == UINT64_MAX, "0 and 1 reached, 2 not (the values were reset)");
    mkrt_destroy(rt, SEC, NULL);
}

/* An SSSP's distance buckets on every level (bucket_min 1): weights up to
 * 255 over buckets of width 16, so vertices wait in far across many
 * buckets; each answer equals the reference's, on one worker and two, and
 * a traversal run again from other roots starts with far empty. The
 * pushes read the engine's interleaved rows (8 bytes per edge, made at
 * registration) or, with `fallback`, the separate arrays: the rows'
 * allocation failed, which registration absorbs. With `hubs` (vertices of
 * 64 edges or more, graph/graph_internal.h MKRT__HUB_EDGES), a level of a
 * bucket runs only a hub's light edges (weight below the width) and the
 * bucket's last level their whole rows: that last level runs, unless the
 * rows' allocation failed (no level splits then). */
static void buckets_tiers(unsigned workers, const test_graph *g, bool fallback, bool hubs)
{
    mkrt_config c = mkrt_config_default();
    c.workers = workers;
    c.cells = CELLS;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK)
        bail_out("mkrt_create: %s", err.message);
    mkrt_graph graph = {g->v, g->off, g->dst, g->w};
    count_alloc_reset();
    if (mkrt_graph_register(rt, &graph, &err) != MKRT_OK)
        bail_out("register: %s", err.message);
    const uint64_t calls = count_alloc_calls();
    ok(count_alloc_bytes() >= 8 * g->off[g->v], "%u worker(s): registration made the interleaved rows (%llu bytes for %llu edges)",
       workers, (unsigned long long)count_alloc_bytes(), (unsigned long long)g->off[g->v]);
    if (fallback) {
        /* The rows are registration's last allocation; every other one
         * failing is MKRT_ENOMEM, so the first that registers from the
         * end is theirs. */
        mkrt_status st = MKRT_ENOMEM;
        uint64_t failed = 0;
        for (uint64_t k = calls; k-- > 0 && st != MKRT_OK;) {
            count_alloc_reset();
            count_alloc_fail_nth(k);
            st = mkrt_graph_register(rt, &graph, &err);
            failed = count_alloc_failures();
            count_alloc_fail_nth(UINT64_MAX);
        }
        ok(st == MKRT_OK && failed == 1, "%u worker(s): the rows' allocation failing still registers (the separate arrays)",
           workers);
        if (st != MKRT_OK && mkrt_graph_register(rt, &graph, &err) != MKRT_OK)
            bail_out("register: %s", err.message);
    }
    mkrt__test_set_bucket_min(rt, 1);
    mkrt_traversal *t = NULL;
    mkrt_traversal_desc d = {MKRT_TRAVERSAL_SSSP, true};
    if (mkrt_traversal_open(rt, &d, &t, &err) != MKRT_OK)
        bail_out("open: %s", err.message);
    uint64_t *got = malloc(g->v * sizeof *got), *want = malloc(g->v * sizeof *want);
    int wrong = 0;
    uint64_t levels = 0, edges = 0;
    for (uint32_t r = 0; r < 6; r++) {
        const uint32_t root = (r * 251 + 3) % g->v;
        if (mkrt_traversal_start(t, root, &err) != MKRT_OK || mkrt_traversal_wait(t, MKRT_TIMEOUT_INFINITE) != MKRT_OK ||
            mkrt_traversal_read(t, 0, g->v, got, &err) != MKRT_OK)
            bail_out("SSSP from %u: %s", root, err.message);
        test_graph_ref_sssp(g, root, g->w, want);
        for (uint32_t v = 0; v < g->v; v++)
            if (got[v] != want[v]) {
                if (wrong++ == 0)
                    diag("SSSP from %u: vertex %u: %llu, the reference's %llu", root, v, (unsigned long long)got[v],
                         (unsigned long long)want[v]);
            }
        mkrt_traversal_stats ts = {0};
        mkrt_traversal_stats_read(t, &ts);
        levels = ts.levels_pushed; /* the traversal's runs since it was opened */
        edges = ts.edges_examined;
    }
    is(wrong, 0, "%u worker(s), buckets on every level%s%s: 6 SSSPs equal the reference", workers,
       hubs ? ", hubs" : "", fallback ? ", the rows' allocation failed" : "");
    const uint64_t hub_levels = mkrt__test_hub_levels(t);
    ok(hubs && !fallback ? hub_levels > 0 : hub_levels == 0, "%u worker(s): %llu levels of hubs' rows", workers,
       (unsigned long long)hub_levels);
    /* Level by level without buckets relaxes each edge at each distance
     * its source passes; with them about once (12000 directed edges). */
    ok(levels / 6 > 20 && edges / 6 < 3 * g->off[g->v] / 2, "%u worker(s): %llu levels and %llu edges per search",
       workers, (unsigned long long)(levels / 6), (unsigned long long)(edges / 6));
    free(got);
    free(want);
    is(mkrt_traversal_close(t, &err), MKRT_OK, "%u worker(s): close", workers);
    mkrt_destroy(rt, SEC, NULL);
}

/* Far's restore takes the next bucket's words only (graph/round.c,
 * far_restore): a star whose root reaches leaf v at distance v (leaves
 * in order, so a word of 64 leaves holds 64 neighbouring distances) over
 * buckets of about N/8 (the engine's width: mean weight over mean
 * degree). Each bucket's restore moves about its own leaves, N in all;
 * restoring all of far at each bucket end moves about 3.5 N. Every
 * distance is the leaf's number, on one worker and two. */
#define STAR_LEAVES 2560u
static void far_by_words(unsigned workers)
{
    static uint64_t off[STAR_LEAVES + 2];
    static uint32_t dst[2 * STAR_LEAVES], wt[2 * STAR_LEAVES];
    const uint32_t n = STAR_LEAVES + 1;
    for (uint32_t v = 1; v <= STAR_LEAVES; v++) {
        dst[v - 1] = v;
        wt[v - 1] = v;
        dst[STAR_LEAVES + v - 1] = 0;
        wt[STAR_LEAVES + v - 1] = 1;
    }
    off[0] = 0;
    off[1] = STAR_LEAVES;
    for (uint32_t v = 1; v <= STAR_LEAVES; v++)
        off[v + 1] = off[v] + 1;
    mkrt_config c = mkrt_config_default();
    c.workers = workers;
    c.cells = CELLS;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    mkrt_graph graph = {n, off, dst, wt};
    if (mkrt_create(&c, &rt, &err) != MKRT_OK || mkrt_graph_register(rt, &graph, &err) != MKRT_OK)
        bail_out("star: %s", err.message);
    mkrt__test_set_bucket_min(rt, 1);
    mkrt_traversal *t = NULL;
    mkrt_traversal_desc d = {MKRT_TRAVERSAL_SSSP, false};
    static uint64_t got[STAR_LEAVES + 1];
    if (mkrt_traversal_open(rt, &d, &t, &err) != MKRT_OK || mkrt_traversal_start(t, 0, &err) != MKRT_OK ||
        mkrt_traversal_wait(t, MKRT_TIMEOUT_INFINITE) != MKRT_OK || mkrt_traversal_read(t, 0, n, got, &err) != MKRT_OK)
        bail_out("star SSSP: %s", err.message);
    uint32_t wrong = 0;
    for (uint32_t v = 0; v < n; v++)
        wrong += got[v] != v;
    is(wrong, 0u, "%u worker(s), a star over many buckets: every leaf at its number", workers);
    const uint64_t moved = mkrt__test_far_moved(t);
    ok(moved > 0 && moved < 3 * STAR_LEAVES / 2,
       "%u worker(s): far's restores moved %llu leaves of %u (all of far at each bucket: about 3.5x)", workers,
       (unsigned long long)moved, STAR_LEAVES);
    is(mkrt_traversal_close(t, &err), MKRT_OK, "%u worker(s): close", workers);
    mkrt_destroy(rt, SEC, NULL);
}

int main(void)
{
    count_alloc_install(); /* buckets_tiers fails the rows' allocation */
    test_graph g = test_graph_random(1500, 6000, 7);
    concurrent(MKRT_BACKEND_CPU, &g);
    concurrent(MKRT_BACKEND_SIM, &g);
    bad_input(&g);
    lonely_root();
    buckets_tiers(1, &g, false, false);
    buckets_tiers(2, &g, false, false);
    buckets_tiers(1, &g, true, false);
    buckets_tiers(2, &g, true, false);
    test_graph h = test_graph_hubs(1500, 6000, 8, 11);
    buckets_tiers(1, &h, false, true);
    buckets_tiers(2, &h, false, true);
    buckets_tiers(1, &h, true, true);
    buckets_tiers(2, &h, true, true);
    test_graph_free(&h);
    far_by_words(1);
    far_by_words(2);
    test_graph_free(&g);
    return done_testing();
}
