/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_stream_alloc_sweep.c - allocation failure through a whole
 * session of the streaming layer (include/mkrt_stream/stream.h): a stream
 * created and loaded, registered on a runtime, updates published by a
 * producer and quiesced, a batch applied on the caller's thread with
 * helper threads, views read against the from-scratch oracle, the CSR
 * written, runtime and stream destroyed. The k-th allocation fails (then,
 * in a second sweep, every one from the k-th on), for k = 0, 1, ... until
 * a whole session runs with none refused. A call that fails must say
 * MKRT_ENOMEM with a Fix; an update that fails must reach the error
 * callback (or mkrt_stream_apply's status) with a Fix and be counted in
 * failed_resource, and leave the graph as it was: every update is
 * accounted for once, every view equals a recompute on the graph as it
 * then is, and the CSR holds the edges the counters say. Nothing may hang
 * or crash, and once both are destroyed every allocation is freed, byte
 * for byte. */
#include <stdatomic.h>
#include <string.h>

#include "count_alloc.h"
#include "mkrt/mkrt.h"
#include "mkrt_stream/stream.h"
#include "tap.h"

#define V 96u
#define LOADED 120u   /* edges loaded before any update */
#define PUBLISHED 256u /* updates a producer publishes */
#define APPLIED 1100u  /* updates applied on the caller's thread (>= 1,024: the helpers run) */
#define SEC 1000000000ull
#define MAX_K 6000u

typedef struct tally {
    unsigned refused;  /* calls that failed, each MKRT_ENOMEM with a Fix */
    unsigned updates;  /* updates that failed for memory, each explained and counted */
    unsigned bad;      /* anything else: another status, a lost update, a wrong answer */
    unsigned leaks;    /* sessions that left an allocation unfreed */
} tally;

typedef struct fixture {
    mkrt_stream *s;
    _Atomic uint64_t memory;      /* updates the error callback saw fail for memory or room */
    _Atomic uint64_t unexplained; /* ... fail without a Fix, or for a reason no update here has */
} fixture;

/* An update's failure for memory or room (failed_resource). */
static bool for_memory(mkrt_status st)
{
    return st == MKRT_ENOMEM || st == MKRT_EOVERFLOW;
}

static void on_error(void *ctx, const mkrt_item *it, mkrt_status why, const char *msg)
{
    (void)msg;
    fixture *f = ctx;
    char buf[512];
    const bool memory = for_memory(why);
    if (mkrt_stream_failed(f->s, it, why, buf, sizeof buf) != MKRT_OK || strstr(buf, "Fix:") == NULL ||
        (!memory && why != MKRT_ESTATE))
        atomic_fetch_add(&f->unexplained, 1);
    if (memory)
        atomic_fetch_add(&f->memory, 1);
}

/* Edge l of the load: {l % V, l % V + 20 + l / V}, no two alike, none
 * an insertion below makes. */
static uint32_t loaded_u(uint32_t l)
{
    return l % V;
}

static uint32_t loaded_v(uint32_t l)
{
    return (l % V + 20 + l / V) % V;
}

static uint32_t weight(uint32_t u, uint32_t v)
{
    return 1 + (u + v) % 20;
}

/* Update i of the session: three in four insert new edges (the n-th
 * {n % V, n % V + 1 + n / V}: no two alike, so the adjacency grows and the
 * runtime prunes none), the fourth deletes a loaded one (cycling through
 * them: a second deletion, or one of an edge whose load was refused
 * memory, fails as absent, which the accounting counts). */
static void update(const mkrt_stream *s, uint32_t i, mkrt_item *it)
{
    if (i % 4 == 3) {
        const uint32_t l = (i / 4) % LOADED;
        mkrt_stream_delete_item(s, loaded_u(l), loaded_v(l), it);
    } else {
        const uint32_t n = i - i / 4, u = n % V, v = (u + 1 + n / V) % V;
        mkrt_stream_insert_item(s, u, v, weight(u, v), it);
    }
}

/* A failed call: MKRT_ENOMEM with a Fix is what is allowed. */
static bool refused(tally *t, mkrt_status st, const mkrt_error *e, const char *what, uint64_t k)
{
    return count_alloc_failed(st, e, false, what, k, &t->refused, &t->bad);
}

/* Every update counted once: applied, a duplicate, or a failure of a
 * counted kind. */
static bool accounted(const mkrt_stream *s, uint64_t updates, uint64_t k, const char *where)
{
    mkrt_stream_stats st;
    if (mkrt_stream_stats_read(s, &st) != MKRT_OK)
        return false;
    const uint64_t seen = st.inserted + st.deleted + st.duplicates + st.failed_invalid + st.failed_absent +
                          st.failed_resource;
    if (seen == updates && st.failed_invalid == 0)
        return true;
    diag("allocation %llu refused, %s: %llu updates, %llu counted (%llu invalid)", (unsigned long long)k, where,
         (unsigned long long)updates, (unsigned long long)seen, (unsigned long long)st.failed_invalid);
    return false;
}

/* Every query of a view against the oracle (which may be refused memory:
 * then that query is not compared). */
static bool views_exact(tally *t, mkrt_stream *s, uint32_t queries, uint64_t k)
{
    static uint64_t got[V], want[V];
    mkrt_stream_view view;
    if (mkrt_stream_view_open(s, &view) != MKRT_OK)
        return false;
    bool good = true;
    for (uint32_t q = 0; q < queries && good; q++) {
        mkrt_error e = {0};
        good = mkrt_stream_view_read(&view, q, 0, V, got, NULL) == MKRT_OK;
        if (!good || refused(t, mkrt_stream_recompute(s, q, want, &e), &e, "mkrt_stream_recompute", k))
            continue;
        for (uint32_t v = 0; v < V && good; v++)
            if (got[v] != want[v]) {
                diag("allocation %llu refused: query %u vertex %u: %llu incrementally, %llu from scratch",
                     (unsigned long long)k, q, v, (unsigned long long)got[v], (unsigned long long)want[v]);
                good = false;
            }
    }
    mkrt_stream_view_close(&view);
    return good;
}

/* The CSR holds both directions of the edges the counters say. */
static bool csr_matches(const mkrt_stream *s)
{
    static uint64_t off[V + 1];
    static uint32_t targets[2 * (LOADED + PUBLISHED + APPLIED)];
    mkrt_stream_stats st;
    if (mkrt_stream_stats_read(s, &st) != MKRT_OK ||
        mkrt_stream_csr(s, off, targets, NULL, sizeof targets / sizeof *targets, NULL) != MKRT_OK)
        return false;
    return off[V] == 2 * st.edges;
}

/* The stream's part of a session, on the runtime rt: register, publish and
 * quiesce, apply on this thread, read. */
static void stream_session(mkrt_runtime *rt, fixture *f, uint32_t queries, uint64_t k, tally *t)
{
    mkrt_error e = {0};
    if (refused(t, mkrt_stream_register(f->s, rt, &e), &e, "mkrt_stream_register", k))
        return;
    mkrt_producer *p = mkrt_producer_open(rt, &e);
    if (p == NULL) {
        refused(t, e.status, &e, "mkrt_producer_open", k);
        return;
    }
    static mkrt_item items[APPLIED];
    static mkrt_status status[APPLIED];
    for (uint32_t i = 0; i < PUBLISHED; i++)
        update(f->s, i, &items[i]);
    uint64_t updates = 0;
    for (uint32_t i = 0; i < PUBLISHED; i += 32) {
        if (refused(t, mkrt_publish(p, items + i, 32, 10 * SEC, &e), &e, "mkrt_publish", k))
            break;
        updates += 32;
    }
    mkrt_producer_close(p);
    if (mkrt_quiesce(rt, 10 * SEC) != MKRT_OK) {
        t->bad++;
        diag("allocation %llu refused: the updates did not quiesce", (unsigned long long)k);
        return;
    }
    if (!accounted(f->s, updates, k, "published") || !views_exact(t, f->s, queries, k)) {
        t->bad++;
        return;
    }
    for (uint32_t i = 0; i < APPLIED; i++)
        update(f->s, PUBLISHED + i, &items[i]);
    const mkrt_status st = mkrt_stream_apply(f->s, items, APPLIED, status, &e);
    uint32_t failed = 0;
    for (uint32_t i = 0; i < APPLIED; i++)
        failed += for_memory(status[i]);
    if (st != MKRT_OK && st != MKRT_ESTATE && !(failed > 0 && for_memory(st) && strstr(e.message, "Fix:") != NULL)) {
        t->bad++;
        diag("allocation %llu refused: mkrt_stream_apply gave %s: %s", (unsigned long long)k,
             mkrt_status_name(st), e.message);
    }
    t->updates += failed;
    updates += APPLIED;
    if (!accounted(f->s, updates, k, "applied") || !views_exact(t, f->s, queries, k) || !csr_matches(f->s))
        t->bad++;
}

/* One session, with the allocation count_alloc_sweep refuses. */
static void session(void *ctx, uint64_t k)
{
    tally *t = ctx;
    mkrt_error e = {0};
    mkrt_stream_config sc = mkrt_stream_config_default();
    sc.vertices = V;
    sc.weight_max = 20;
    sc.queries = 3;
    sc.query[0] = (mkrt_stream_query){MKRT_STREAM_BFS, 0};
    sc.query[1] = (mkrt_stream_query){MKRT_STREAM_SSSP, 5};
    sc.query[2] = (mkrt_stream_query){MKRT_STREAM_CC, 0};
    sc.apply_threads = 2;
    fixture f = {NULL, 0, 0};
    if (refused(t, mkrt_stream_create(&sc, &f.s, &e), &e, "mkrt_stream_create", k))
        return;
    static uint32_t src[LOADED], dst[LOADED], w[LOADED];
    for (uint32_t i = 0; i < LOADED; i++) {
        src[i] = loaded_u(i);
        dst[i] = loaded_v(i);
        w[i] = weight(src[i], dst[i]);
    }
    if (!refused(t, mkrt_stream_load(f.s, src, dst, w, LOADED, NULL, &e), &e, "mkrt_stream_load", k)) {
        mkrt_config c = mkrt_config_default();
        c.workers = 2;
        c.cells = V;
        c.on_error = on_error;
        c.error_ctx = &f;
        mkrt_runtime *rt = NULL;
        if (!refused(t, mkrt_create(&c, &rt, &e), &e, "mkrt_create", k)) {
            stream_session(rt, &f, sc.queries, k, t);
            mkrt_error de = {0};
            if (mkrt_destroy(rt, 10 * SEC, &de) != MKRT_OK) {
                t->bad++;
                diag("allocation %llu refused: mkrt_destroy: %s", (unsigned long long)k, de.message);
            }
        }
    } else {
        mkrt_stream_stats st;
        if (mkrt_stream_stats_read(f.s, &st) != MKRT_OK || st.edges != 0) {
            t->bad++;
            diag("allocation %llu refused: a refused load left %llu edges", (unsigned long long)k,
                 (unsigned long long)st.edges);
        }
    }
    if (atomic_load(&f.unexplained) != 0) {
        t->bad++;
        diag("allocation %llu refused: %llu failed updates without a Fix or of another kind",
             (unsigned long long)k, (unsigned long long)atomic_load(&f.unexplained));
    }
    t->updates += (unsigned)atomic_load(&f.memory);
    mkrt_stream_destroy(f.s);
}

static void sweep(bool after)
{
    const char *mode = after ? "every allocation from the k-th" : "the k-th allocation";
    tally t = {0, 0, 0, 0};
    const uint64_t k = count_alloc_sweep(session, &t, after, MAX_K, &t.leaks);
    ok(k > 20 && k < MAX_K, "%s refused: a clean session after %llu refusals", mode, (unsigned long long)k);
    ok(t.refused > 0 && t.bad == 0, "%s refused: %u calls failed, each with MKRT_ENOMEM and a Fix; "
                                    "no hang, no other status, no lost update, no wrong answer", mode, t.refused);
    ok(!after || t.updates > 0, "%s refused: %u updates failed for memory, each explained, counted and "
                                "leaving the graph as it was", mode, t.updates);
    is(t.leaks, 0, "%s refused: every session freed what it allocated, byte for byte", mode);
}

int main(void)
{
    count_alloc_install();
    sweep(false);
    sweep(true);
    count_alloc_uninstall();
    return done_testing();
}
