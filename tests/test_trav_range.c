/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_trav_range.c - the traversal job engine's frontier ranges
 * (issue 36; backend/mk_trav.h, protocol.h mkrt__mk_range_note): a
 * level scans only the words its frontier's marks raised. On a path of
 * 4096 vertices (64 words) SSSP, BFS and a RELAX job visit one word a
 * level (levels words in all, where a full scan is levels * 64), with the
 * path's distances and depths; a RELAX job leaves its bitmaps and ranges
 * all clear (the next batch's layers mark into them), and a second RELAX
 * job on them runs alike; BFS with pulled levels on a symmetric random
 * graph, over 3 blocks, twice on the same bits, gives a serial BFS's
 * depths. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/backend/mk_trav.h"
#include "tap.h"

#define V 4096u

typedef struct graph {
    uint64_t *off;
    uint32_t *tgt;
    uint32_t v;
} graph;

/* Directed path 0 -> 1 -> ... -> v - 1. */
static graph path_graph(uint32_t v)
{
    graph g = {calloc(v + 1, sizeof(uint64_t)), calloc(v, sizeof(uint32_t)), v};
    for (uint32_t i = 0; i < v; i++) {
        g.off[i + 1] = g.off[i] + (i + 1 < v);
        if (i + 1 < v)
            g.tgt[g.off[i]] = i + 1;
    }
    return g;
}

/* Symmetric random graph: n vertices, m undirected edges (xorshift). */
static graph random_sym(uint32_t n, uint32_t m, uint64_t seed)
{
    uint32_t *a = malloc(2 * (size_t)m * sizeof *a), *b = malloc(2 * (size_t)m * sizeof *b);
    graph g = {calloc(n + 1, sizeof(uint64_t)), malloc(2 * (size_t)m * sizeof(uint32_t)), n};
    for (uint32_t k = 0; k < m; k++) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        a[2 * k] = b[2 * k + 1] = (uint32_t)(seed % n);
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        b[2 * k] = a[2 * k + 1] = (uint32_t)(seed % n);
    }
    for (uint32_t k = 0; k < 2 * m; k++)
        g.off[a[k] + 1]++;
    for (uint32_t i = 0; i < n; i++)
        g.off[i + 1] += g.off[i];
    uint64_t *at = malloc(n * sizeof *at);
    memcpy(at, g.off, n * sizeof *at);
    for (uint32_t k = 0; k < 2 * m; k++)
        g.tgt[at[a[k]]++] = b[k];
    free(at);
    free(a);
    free(b);
    return g;
}

static void graph_free(graph *g)
{
    free(g->off);
    free(g->tgt);
}

static mkrt__mk_graph_view view_of(const graph *g)
{
    mkrt__mk_graph_view v = {g->off, g->tgt, NULL, g->v};
    return v;
}

static void *bits_for(uint32_t v)
{
    return calloc(1, (size_t)mkrt__mk_job_bits_bytes(v));
}

/* Whether the job's bitmaps are all zero. */
static int all_clear(const void *bits, uint32_t v)
{
    const uint64_t *w = bits;
    for (uint64_t i = 0; i < mkrt__mk_job_bits_bytes(v) / 8; i++)
        if (w[i] != 0)
            return 0;
    return 1;
}

/* Whether a job's three frontier ranges are empty (all zero). */
static int ranges_clear(const mkrt__mk_trav *t)
{
    for (int i = 0; i < 6; i++)
        if (t->range[i] != 0)
            return 0;
    return 1;
}

static void path_jobs(void)
{
    graph g = path_graph(V);
    const mkrt__mk_graph_view gv = view_of(&g);
    uint64_t *values = malloc(V * sizeof *values);
    void *bits = bits_for(V);

    /* SSSP from 0 over 4 blocks. */
    for (uint32_t i = 0; i < V; i++)
        values[i] = MKRT__MK_UNREACHED;
    values[0] = 0;
    mkrt__mk_job job = {.kind = MKRT_MK_JOB_SSSP, .root = 0};
    mkrt__mk_trav t = {.job = &job};
    mkrt__mk_trav_begin(&t, &gv, values, NULL, bits);
    is(mkrt__mk_trav_run(&t, 1, &gv, 4, NULL, NULL), 0, "SSSP on the path runs to its end");
    uint32_t bad = 0;
    for (uint32_t i = 0; i < V; i++)
        bad += values[i] != i;
    is(bad, 0, "SSSP: every distance is its index");
    is(job.levels_pushed, V, "SSSP: one level a vertex");
    is(t.scanned, V, "SSSP: a level scans its frontier's one word (a full scan: %u)", V * (V / 64));

    /* BFS from 0 (no pulls: a directed path). */
    for (uint32_t i = 0; i < V; i++)
        values[i] = MKRT__MK_UNREACHED;
    values[0] = 0;
    job = (mkrt__mk_job){.kind = MKRT_MK_JOB_BFS, .root = 0};
    t = (mkrt__mk_trav){.job = &job};
    mkrt__mk_trav_begin(&t, &gv, values, NULL, bits);
    is(mkrt__mk_trav_run(&t, 1, &gv, 4, NULL, NULL), 0, "BFS on the path runs to its end");
    bad = 0;
    for (uint32_t i = 1; i < V; i++)
        bad += values[i] != ((uint64_t)i << 32 | (i - 1));
    is(bad, 0, "BFS: every depth is its index, every parent its predecessor");
    is(t.scanned, job.levels_pushed, "BFS: one word a level");

    /* RELAX twice on the same (clear) bits: cells from vertex 0, marked
     * as a batch's layers mark; then from vertex V / 2 after lowering it. */
    memset(bits, 0, (size_t)mkrt__mk_job_bits_bytes(V));
    for (uint32_t i = 0; i < V; i++)
        values[i] = MKRT__MK_UNREACHED;
    values[0] = 0;
    mkrt__bitmap *f0 = bits, r0[2] = {0, 0}; /* F[0] and its range, as a batch's loop keeps them */
    ok(mkrt__mk_relax_mark(&gv, f0, r0, 0) == 1, "RELAX: vertex 0 marked in F[0]");
    job = (mkrt__mk_job){.kind = MKRT_MK_JOB_RELAX};
    t = (mkrt__mk_trav){.job = &job};
    mkrt__mk_trav_begin_relax(&t, &gv, values, bits, r0, 1);
    is(mkrt__mk_trav_run(&t, 1, &gv, 3, NULL, NULL), 0, "RELAX on the path runs to its end");
    bad = 0;
    for (uint32_t i = 0; i < V; i++)
        bad += values[i] != i;
    is(bad, 0, "RELAX: every cell is its index");
    is(t.changed, V - 1, "RELAX: each cell but the first lowered once");
    is(job.levels_pushed, V - 1, "RELAX: the last vertex (no edges) is never marked");
    is(t.scanned, job.levels_pushed, "RELAX: one word a level");
    ok(all_clear(bits, V) && r0[0] == 0 && r0[1] == 0 && ranges_clear(&t), "RELAX: its bitmaps and ranges are left clear for the next batch");

    values[V / 2] = 0; /* a second batch's RELAX item lowered it */
    ok(mkrt__mk_relax_mark(&gv, f0, r0, V / 2) == 1, "RELAX again: vertex V/2 marked");
    t = (mkrt__mk_trav){.job = &job};
    mkrt__mk_trav_begin_relax(&t, &gv, values, bits, r0, 1);
    is(mkrt__mk_trav_run(&t, 1, &gv, 3, NULL, NULL), 0, "the second RELAX runs to its end");
    bad = 0;
    for (uint32_t i = V / 2; i < V; i++)
        bad += values[i] != i - V / 2;
    is(bad, 0, "the second RELAX: cells past V/2 lowered to their distance from it");
    is(t.changed, V / 2 - 1, "the second RELAX: those cells lowered once each");
    is(t.scanned, job.levels_pushed, "the second RELAX: one word a level");
    ok(all_clear(bits, V) && r0[0] == 0 && r0[1] == 0 && ranges_clear(&t),
       "the second RELAX leaves its bits and ranges clear too");

    free(bits);
    free(values);
    graph_free(&g);
}

/* BFS with pulled levels (Beamer's rule) on a symmetric graph, over 3
 * blocks, twice on the same bits: a serial BFS's depths. */
static void pulled_bfs(void)
{
    const uint32_t n = 3000;
    graph g = random_sym(n, 12000, 7);
    const mkrt__mk_graph_view gv = view_of(&g);
    uint32_t *depth = malloc(n * sizeof *depth), *queue = malloc(n * sizeof *queue);
    for (uint32_t i = 0; i < n; i++)
        depth[i] = UINT32_MAX;
    uint32_t head = 0, tail = 0;
    depth[5] = 0;
    queue[tail++] = 5;
    while (head < tail) {
        const uint32_t v = queue[head++];
        for (uint64_t e = g.off[v]; e < g.off[v + 1]; e++)
            if (depth[g.tgt[e]] == UINT32_MAX) {
                depth[g.tgt[e]] = depth[v] + 1;
                queue[tail++] = g.tgt[e];
            }
    }
    uint64_t *values = malloc(n * sizeof *values);
    void *bits = bits_for(n);
    for (int run = 0; run < 2; run++) {
        for (uint32_t i = 0; i < n; i++)
            values[i] = MKRT__MK_UNREACHED;
        values[5] = 5;
        mkrt__mk_job job = {.kind = MKRT_MK_JOB_BFS, .root = 5, .pulls = 1};
        mkrt__mk_trav t = {.job = &job};
        mkrt__mk_trav_begin(&t, &gv, values, NULL, bits);
        is(mkrt__mk_trav_run(&t, 1, &gv, 3, NULL, NULL), 0, "pulled BFS (run %d) runs to its end", run);
        uint32_t bad = 0;
        for (uint32_t i = 0; i < n; i++)
            bad += (values[i] == MKRT__MK_UNREACHED ? UINT32_MAX : (uint32_t)(values[i] >> 32)) != depth[i];
        is(bad, 0, "pulled BFS (run %d): every depth is the serial BFS's", run);
        ok(job.levels_pulled > 0 && job.levels_pushed > 0, "pulled BFS (run %d): levels pushed %llu and pulled %llu",
           run, (unsigned long long)job.levels_pushed, (unsigned long long)job.levels_pulled);
    }
    free(bits);
    free(values);
    free(depth);
    free(queue);
    graph_free(&g);
}

int main(void)
{
    path_jobs();
    pulled_bfs();
    return done_testing();
}
