/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_alloc_sweep.c - allocation failure through a whole session
 * of the public graph API: mkrt_create, mkrt_graph_register, a traversal
 * of each kind opened, started, waited for, read and closed, a producer's
 * item published and drained, mkrt_destroy. The k-th allocation fails
 * (then, in a second sweep, every one from the k-th on), for k = 0, 1, ...
 * until a whole session runs with none refused, on the CPU pool and on
 * the simulated device. Each call that fails must say MKRT_ENOMEM with a
 * Fix; nothing may hang, crash or answer wrongly (a search that ran is
 * checked against the ring's distances); and once the runtime is
 * destroyed every allocation has been freed, byte for byte. The number
 * of allocations a session makes varies (threads take their scratch when
 * they first need it), which is why the sweep runs to the first clean
 * session rather than to a fixed count. */
#include <math.h>
#include <string.h>

#include "count_alloc.h"
#include "graph_fixture.h"
#include "mkrt/mkrt.h"
#include "tap.h"

#define V 600u
#define SEC 1000000000ull
#define MAX_K 2000u

static test_graph ring;
static uint32_t hops[V];  /* BFS from 0 */
static uint64_t dist[V];  /* SSSP from 0 */

typedef struct tally {
    mkrt_backend_kind backend;
    unsigned refused;  /* calls that failed, each MKRT_ENOMEM with a Fix */
    unsigned bad;      /* a failure of another kind, a hang or a wrong answer */
    unsigned leaks;    /* sessions that left an allocation unfreed */
} tally;

/* A failed call: MKRT_ENOMEM with a Fix is what is allowed. */
static bool refused(tally *t, mkrt_status st, const mkrt_error *e, const char *what, uint64_t k)
{
    return count_alloc_failed(st, e, false, what, k, &t->refused, &t->bad);
}

/* The answer of a search from 0 that ran: BFS depths and SSSP distances
 * along the ring (the shorter way round), one component, ranks of 1/V. */
static bool answer_ok(mkrt_traversal *t, mkrt_traversal_kind kind)
{
    static uint64_t out[V];
    static double ranks[V];
    mkrt_error e = {0};
    uint32_t iterations = 0;
    if (kind == MKRT_TRAVERSAL_PAGERANK) {
        if (mkrt_traversal_read_ranks(t, 0, V, ranks, &iterations, &e) != MKRT_OK)
            return false;
        for (uint32_t v = 0; v < V; v++)
            if (fabs(ranks[v] - 1.0 / V) > 1e-6)
                return false;
        return true;
    }
    if (mkrt_traversal_read(t, 0, V, out, &e) != MKRT_OK)
        return false;
    for (uint32_t v = 0; v < V; v++) {
        const uint64_t want = kind == MKRT_TRAVERSAL_BFS ? hops[v] : kind == MKRT_TRAVERSAL_SSSP ? dist[v] : out[0];
        if (out[v] != want)
            return false;
    }
    return true;
}

/* One session, with the allocation count_alloc_sweep refuses. */
static void session(void *ctx, uint64_t k)
{
    tally *t = ctx;
    mkrt_error e = {0};
    mkrt_config c = mkrt_config_default();
    c.backend = t->backend;
    c.workers = 2;
    c.cells = V;
    mkrt_runtime *rt = NULL;
    if (!refused(t, mkrt_create(&c, &rt, &e), &e, "mkrt_create", k)) {
        const mkrt_graph g = {V, ring.off, ring.dst, ring.w};
        bool stop = refused(t, mkrt_graph_register(rt, &g, &e), &e, "mkrt_graph_register", k);
        static const mkrt_traversal_kind kinds[] = {MKRT_TRAVERSAL_BFS, MKRT_TRAVERSAL_SSSP, MKRT_TRAVERSAL_CC,
                                                    MKRT_TRAVERSAL_PAGERANK};
        for (size_t i = 0; i < sizeof kinds / sizeof *kinds && !stop; i++) {
            mkrt_traversal *tr = NULL;
            const mkrt_traversal_desc d = {kinds[i], true};
            if ((stop = refused(t, mkrt_traversal_open(rt, &d, &tr, &e), &e, "mkrt_traversal_open", k)))
                break;
            if (!(stop = refused(t, mkrt_traversal_start(tr, 0, &e), &e, "mkrt_traversal_start", k))) {
                const mkrt_status w = mkrt_traversal_wait(tr, 10 * SEC);
                if (w != MKRT_OK || !answer_ok(tr, kinds[i])) {
                    t->bad++;
                    diag("allocation %llu refused: traversal kind %zu: wait %s, or a wrong answer",
                         (unsigned long long)k, i, mkrt_status_name(w));
                }
            }
            mkrt_error ce = {0};
            if (mkrt_traversal_close(tr, &ce) != MKRT_OK) {
                t->bad++;
                diag("allocation %llu refused: mkrt_traversal_close: %s", (unsigned long long)k, ce.message);
            }
        }
        mkrt_producer *p = stop ? NULL : mkrt_producer_open(rt, &e);
        if (!stop && p == NULL)
            refused(t, e.status, &e, "mkrt_producer_open", k);
        if (p != NULL) {
            const mkrt_item item = {MKRT_OP_ADD, 1, 1, 7};
            if (!refused(t, mkrt_publish(p, &item, 1, SEC, &e), &e, "mkrt_publish", k) &&
                mkrt_drain(rt, 10 * SEC) != MKRT_OK) {
                t->bad++;
                diag("allocation %llu refused: the item did not drain", (unsigned long long)k);
            }
            mkrt_producer_close(p);
        }
        mkrt_error de = {0};
        if (mkrt_destroy(rt, 10 * SEC, &de) != MKRT_OK) {
            t->bad++;
            diag("allocation %llu refused: mkrt_destroy: %s", (unsigned long long)k, de.message);
        }
    }
}

static void sweep(mkrt_backend_kind backend, bool after)
{
    const char *name = backend == MKRT_BACKEND_SIM ? "SIM" : "CPU";
    const char *mode = after ? "every allocation from the k-th" : "the k-th allocation";
    tally t = {backend, 0, 0, 0};
    const uint64_t k = count_alloc_sweep(session, &t, after, MAX_K, &t.leaks);
    ok(k > 20 && k < MAX_K, "%s, %s refused: a clean session after %llu refusals", name, mode,
       (unsigned long long)k);
    ok(t.refused > 0 && t.bad == 0, "%s, %s refused: %u calls failed, each with MKRT_ENOMEM and a Fix; "
                                    "no hang, no other status, no wrong answer",
       name, mode, t.refused);
    is(t.leaks, 0, "%s, %s refused: every session freed what it allocated, byte for byte", name, mode);
}

int main(void)
{
    ring = test_graph_ring(V);
    test_graph_ref_bfs(&ring, 0, hops);
    test_graph_ref_sssp(&ring, 0, ring.w, dist);
    count_alloc_install();
    sweep(MKRT_BACKEND_CPU, false);
    sweep(MKRT_BACKEND_CPU, true);
    sweep(MKRT_BACKEND_SIM, false);
    sweep(MKRT_BACKEND_SIM, true);
    count_alloc_uninstall();
    test_graph_free(&ring);
    return done_testing();
}
