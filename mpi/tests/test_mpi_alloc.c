/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/tests/test_mpi_alloc.c - libmkrt_mpi allocates through the
 * allocator installed in libmkrt (include/mkrt/alloc.h: the layers use
 * it), and an allocation it is refused is an error return. A counting
 * allocator refuses the k-th allocation (then, in a second sweep, every
 * one from the k-th on) of a whole session, for k = 0, 1, ... until a
 * session runs with none refused: a runtime and the layer over it, items
 * published through the layer and quiesced, the layer destroyed; then the
 * distributed graph engine opened with its own rounds, a BFS and an SSSP
 * checked against the ring's answers, closed. A call that fails must say
 * MKRT_ENOMEM (a search: MKRT_ENOMEM or MKRT_ECLOSED, its items failed)
 * with a Fix; nothing may hang or crash, a search that succeeds is right,
 * and each session frees what it allocated, byte for byte. That runs at
 * one rank (a search refused memory on one rank of several ends the job:
 * the fault rule). At several ranks, mkrt_mpi_create and
 * mkrt_mpi_graph_open refused their k-th allocation on the last rank only
 * must fail on every rank alike. */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../tests/count_alloc.h"
#include "../../tests/graph_fixture.h"
#include "mkrt/mkrt.h"
#include "mkrt_mpi/graph.h"
#include "mkrt_mpi/mkrt_mpi.h"
#include "mpi_tap.h"

#define V 500u
#define SEC 1000000000ull
#define MAX_K 4000u

static test_graph ring;
static uint32_t hops[V];   /* BFS from 0 */
static uint64_t want[V];   /* SSSP from 0 */
static uint32_t parent[V];
static uint64_t dist[V];
static uint64_t layer_allocs; /* allocations mkrt_mpi_create made in the last layer session */

typedef struct tally {
    bool graph;       /* the graph engine's session, else the layer's */
    unsigned refused; /* calls that failed as allowed, with a Fix */
    unsigned bad;     /* another status, a wrong answer */
    unsigned leaks;   /* sessions that left an allocation unfreed */
} tally;

/* A failed call: MKRT_ENOMEM with a Fix (search: MKRT_ECLOSED too). */
static bool refused(tally *t, mkrt_status st, const mkrt_error *e, const char *what, uint64_t k, bool search)
{
    return count_alloc_failed(st, e, search, what, k, &t->refused, &t->bad);
}

/* The layer over a runtime: create, publish, quiesce, destroy. */
static void layer_session(tally *t, uint64_t k)
{
    mkrt_error e = {0};
    mkrt_config rc = mkrt_config_default();
    rc.cells = V;
    rc.workers = 2;
    mkrt_runtime *rt = NULL;
    if (refused(t, mkrt_create(&rc, &rt, &e), &e, "mkrt_create", k, false))
        return;
    mkrt_mpi_config c = mkrt_mpi_config_default();
    c.handles = V;
    mkrt_mpi *m = NULL;
    const uint64_t before = count_alloc_calls();
    const mkrt_status cst = mkrt_mpi_create(&c, rt, &m, &e);
    layer_allocs = count_alloc_calls() - before;
    if (!refused(t, cst, &e, "mkrt_mpi_create", k, false)) {
        mkrt_producer *p = mkrt_producer_open(rt, &e);
        if (p == NULL) {
            refused(t, e.status, &e, "mkrt_producer_open", k, false);
        } else {
            mkrt_item items[64];
            for (uint32_t i = 0; i < 64; i++)
                items[i] = (mkrt_item){MKRT_OP_ADD, i * 7 % V, i * 7 % V, 1};
            if (!refused(t, mkrt_mpi_publish(m, p, items, 64, 10 * SEC, NULL, &e), &e, "mkrt_mpi_publish", k,
                         false) &&
                mkrt_mpi_quiesce(m, 10 * SEC) != MKRT_OK) {
                t->bad++;
                printf("# allocation %llu refused: the layer did not quiesce\n", (unsigned long long)k);
            }
            mkrt_producer_close(p);
        }
        mkrt_error de = {0};
        if (mkrt_mpi_destroy(m, &de) != MKRT_OK) {
            t->bad++;
            printf("# allocation %llu refused: mkrt_mpi_destroy: %s\n", (unsigned long long)k, de.message);
        }
    }
    mkrt_error de = {0};
    if (mkrt_destroy(rt, 10 * SEC, &de) != MKRT_OK) {
        t->bad++;
        printf("# allocation %llu refused: mkrt_destroy: %s\n", (unsigned long long)k, de.message);
    }
}

/* The BFS tree from 0: each vertex's parent is its smaller ring
 * neighbour one hop nearer the root. */
static bool bfs_right(void)
{
    for (uint32_t v = 1; v < V; v++) {
        const uint32_t a = v - 1, b = (v + 1) % V;
        const bool a_ok = hops[a] + 1 == hops[v], b_ok = hops[b] + 1 == hops[v];
        if (parent[v] != (a_ok && (!b_ok || a < b) ? a : b))
            return false;
    }
    return parent[0] == 0;
}

/* The distributed engine with its own rounds: open, BFS, SSSP, close. */
static void graph_session(tally *t, uint64_t k)
{
    mkrt_error e = {0};
    const mkrt_graph g = {V, ring.off, ring.dst, ring.w};
    mkrt_mpi_graph_config c = mkrt_mpi_graph_config_default();
    c.own_rounds = true;
    c.symmetric = true;
    mkrt_mpi_graph *eng = NULL;
    if (refused(t, mkrt_mpi_graph_open(&g, &c, &eng, &e), &e, "mkrt_mpi_graph_open", k, false))
        return;
    if (!refused(t, mkrt_mpi_graph_bfs(eng, 0, parent, NULL, &e), &e, "mkrt_mpi_graph_bfs", k, true) &&
        !bfs_right()) {
        t->bad++;
        printf("# allocation %llu refused: a BFS that succeeded is wrong\n", (unsigned long long)k);
    }
    if (!refused(t, mkrt_mpi_graph_sssp(eng, 0, dist, NULL, &e), &e, "mkrt_mpi_graph_sssp", k, true) &&
        memcmp(dist, want, sizeof want) != 0) {
        t->bad++;
        printf("# allocation %llu refused: an SSSP that succeeded is wrong\n", (unsigned long long)k);
    }
    mkrt_mpi_graph_close(eng);
}

/* One session, with the allocation count_alloc_sweep refuses. */
static void session(void *ctx, uint64_t k)
{
    tally *t = ctx;
    if (t->graph)
        graph_session(t, k);
    else
        layer_session(t, k);
}

static void sweep(bool graph, bool after)
{
    char name[256];
    const char *what = graph ? "the graph engine" : "the layer";
    const char *mode = after ? "every allocation from the k-th" : "the k-th allocation";
    tally t = {graph, 0, 0, 0};
    const uint64_t k = count_alloc_sweep(session, &t, after, MAX_K, &t.leaks);
    snprintf(name, sizeof name, "%s, %s refused: a clean session after %llu refusals", what, mode,
             (unsigned long long)k);
    check(NULL, k > 5 && k < MAX_K, name);
    snprintf(name, sizeof name, "%s, %s refused: %u calls failed, each as allowed with a Fix; no hang, "
             "no other status, no wrong answer", what, mode, t.refused);
    check(NULL, t.refused > 0 && t.bad == 0, name);
    snprintf(name, sizeof name, "%s, %s refused: every session freed what it allocated, byte for byte", what,
             mode);
    check(NULL, t.leaks == 0, name);
}

/* One try of a call refused memory on the last rank (st, e, and whether
 * it left its out NULL), over the ranks: the job ends where they disagree
 * (the layers of those that succeeded could be neither used nor freed);
 * a failure on every rank counts as agreed where each has a Fix and the
 * refused rank says MKRT_ENOMEM, else as bad. *call_failed: it failed;
 * returns whether an allocation was refused on any rank. */
static bool tried(const char *what, uint64_t k, mkrt_status st, bool out_null, const mkrt_error *e,
                  bool *call_failed, unsigned *agreed, unsigned *bad)
{
    uint64_t v[2] = {st != MKRT_OK, count_alloc_failures()};
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (v[0] != 0 && v[0] != (uint64_t)ranks) {
        fprintf(stderr, "rank %d: allocation %llu of the last rank refused: %s failed on %d of %d ranks\n",
                rank, (unsigned long long)k, what, (int)v[0], ranks);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    *call_failed = v[0] != 0;
    if (*call_failed && out_null && strstr(e->message, "Fix:") != NULL && (rank != ranks - 1 || st == MKRT_ENOMEM))
        ++*agreed;
    else if (*call_failed)
        ++*bad;
    return v[1] != 0;
}

/* At several ranks: the k-th allocation of mkrt_mpi_create refused on
 * the last rank only, for k = 0, 1, ... until a create runs clean. The
 * ranks agree: every rank's create fails (the refused rank MKRT_ENOMEM,
 * the others naming it), each with a Fix, nothing left allocated, and the
 * job goes on to the next try; the clean create then works. */
static void create_refused_on_one_rank(void)
{
    mkrt_mpi_config c = mkrt_mpi_config_default();
    c.handles = V;
    unsigned agreed = 0, bad = 0, leaks = 0;
    uint64_t k = 0;
    for (; k < MAX_K; k++) {
        /* A runtime per try, counted (its producers are freed with it),
         * its own allocations not refused. */
        count_alloc_reset();
        mkrt_runtime *rt = new_runtime(V);
        if (rank == ranks - 1)
            count_alloc_fail_nth(k);
        mkrt_mpi *m = NULL;
        mkrt_error e = {0};
        const mkrt_status st = mkrt_mpi_create(&c, rt, &m, &e);
        bool call_failed;
        const bool refusal = tried("mkrt_mpi_create", k, st, m == NULL, &e, &call_failed, &agreed, &bad);
        mkrt_mpi_destroy(m, NULL); /* created everywhere: a refusal (if any) cost nothing */
        mkrt_destroy(rt, 10 * SEC, NULL);
        leaks += !count_alloc_balanced();
        if (!refusal)
            break;
    }
    count_alloc_reset();
    char name[256];
    snprintf(name, sizeof name, "mkrt_mpi_create, the k-th allocation refused on the last rank: every rank "
             "fails it with a Fix (%u tries), then a clean create after %llu", agreed, (unsigned long long)k);
    check(NULL, agreed > 0 && bad == 0 && k < MAX_K, name);
    check(NULL, leaks == 0, "mkrt_mpi_create refused on one rank: every rank freed what it allocated");
}

/* At several ranks: the engine's open with its k-th allocation refused on
 * the last rank only (its engine, runtime, registrations and arrays before
 * its layer exists, then the layer's own, the engine's counters and
 * producer), k = 0, 1, ... until an open runs clean: every rank's open
 * fails alike with a Fix and frees all it made, and the clean one
 * searches right. */
static void open_refused_on_one_rank(void)
{
    const mkrt_graph g = {V, ring.off, ring.dst, ring.w};
    mkrt_mpi_graph_config c = mkrt_mpi_graph_config_default();
    c.symmetric = true;
    unsigned agreed = 0, bad = 0, leaks = 0;
    bool searched = false;
    uint64_t k = 0;
    for (; k < MAX_K; k++) {
        count_alloc_reset();
        if (rank == ranks - 1)
            count_alloc_fail_nth(k);
        mkrt_mpi_graph *eng = NULL;
        mkrt_error e = {0};
        const mkrt_status st = mkrt_mpi_graph_open(&g, &c, &eng, &e);
        bool call_failed;
        const bool refusal = tried("mkrt_mpi_graph_open", k, st, eng == NULL, &e, &call_failed, &agreed, &bad);
        if (!call_failed && !refusal)
            searched = mkrt_mpi_graph_bfs(eng, 0, parent, NULL, NULL) == MKRT_OK &&
                       mkrt_mpi_graph_sssp(eng, 0, dist, NULL, NULL) == MKRT_OK &&
                       (rank != 0 || (bfs_right() && memcmp(dist, want, sizeof want) == 0));
        mkrt_mpi_graph_close(eng);
        leaks += !count_alloc_balanced();
        if (!refusal)
            break;
    }
    count_alloc_reset();
    char name[256];
    snprintf(name, sizeof name, "mkrt_mpi_graph_open, the k-th allocation refused on the last rank: every rank "
             "fails it with a Fix (%u tries), then a clean open after %llu searches right",
             agreed, (unsigned long long)k);
    check(NULL, agreed > 0 && bad == 0 && k < MAX_K && searched, name);
    check(NULL, leaks == 0, "mkrt_mpi_graph_open refused on one rank: every rank freed what it allocated");
}

int main(void)
{
    tap_start();
    ring = test_graph_ring(V);
    test_graph_ref_bfs(&ring, 0, hops);
    test_graph_ref_sssp(&ring, 0, ring.w, want);
    count_alloc_install();
    if (ranks != 1) {
        create_refused_on_one_rank();
        open_refused_on_one_rank();
        count_alloc_uninstall();
        test_graph_free(&ring);
        return tap_finish();
    }
    tally layer = {false, 0, 0, 0}, graph = {true, 0, 0, 0};
    count_alloc_reset();
    session(&graph, UINT64_MAX);
    const bool graph_clean = count_alloc_balanced();
    count_alloc_reset();
    session(&layer, UINT64_MAX);
    const bool layer_clean = count_alloc_balanced();
    check(NULL, layer.bad + graph.bad + layer.refused + graph.refused == 0 && graph_clean && layer_clean,
          "sessions with nothing refused run right and free every byte");
    check(NULL, layer_allocs >= 4, "mkrt_mpi_create allocates through the installed allocator");
    sweep(false, false);
    sweep(false, true);
    sweep(true, false);
    sweep(true, true);
    count_alloc_uninstall();
    test_graph_free(&ring);
    return tap_finish();
}
