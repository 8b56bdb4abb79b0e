/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_huge_pages.c - the arrays that threads read at random (the
 * cells, a weighted graph's interleaved rows, a traversal's values) are
 * asked for on a 2 MiB boundary once they are 2 MiB or more, and, where
 * the kernel offers transparent huge pages only on request
 * ("[madvise]"), their mapping is marked eligible (THPeligible in
 * /proc/self/smaps) before the first touch; small arrays keep the
 * alignment they asked for. The search on such a graph still answers
 * right. Linux only: the smaps check is skipped where the file or the
 * THP setting is absent. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_fixture.h"
#include "mkrt/mkrt.h"
#include "tap.h"

#define HUGE ((size_t)2 << 20)
#define SEC 10000000000ull
#define BLOCKS 64u

/* The allocator records each request of 2 MiB or more. */
typedef struct block {
    void *p;
    size_t size, align;
} block;
static block blocks[BLOCKS];
static unsigned nblocks;

static void *rec_alloc(size_t size, size_t align, void *ctx)
{
    (void)ctx;
    if (align < sizeof(void *))
        align = sizeof(void *);
    void *p = aligned_alloc(align, (size + align - 1) & ~(align - 1));
    if (p != NULL && size >= HUGE && nblocks < BLOCKS)
        blocks[nblocks++] = (block){p, size, align};
    return p;
}

static void rec_free(void *p, size_t size, void *ctx)
{
    (void)size;
    (void)ctx;
    for (unsigned i = 0; i < nblocks; i++)
        if (blocks[i].p == p)
            blocks[i].p = NULL;
    free(p);
}

/* The block of exactly this size, or NULL. */
static const block *sized(size_t size)
{
    for (unsigned i = 0; i < nblocks; i++)
        if (blocks[i].p != NULL && blocks[i].size == size)
            return &blocks[i];
    return NULL;
}

/* 1: the THP setting is "[madvise]" (eligibility then says the advice
 * was given); 0: another setting; -1: no such file. */
static int thp_madvise(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f == NULL)
        return -1;
    char line[128] = {0};
    const bool got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    return got && strstr(line, "[madvise]") != NULL;
}

/* THPeligible of the mapping holding p: 1, 0, or -1 when smaps has no
 * such field or no mapping holds p. */
static int eligible(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (f == NULL)
        return -1;
    char line[512];
    bool inside = false;
    int found = -1;
    const uintptr_t a = (uintptr_t)p;
    while (fgets(line, sizeof line, f) != NULL) {
        uintptr_t lo, hi;
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2 && strchr(line, ':') != NULL &&
            line[0] != 'T') {
            inside = lo <= a && a < hi;
            continue;
        }
        int v;
        if (inside && sscanf(line, "THPeligible: %d", &v) == 1) {
            found = v;
            break;
        }
    }
    fclose(f);
    return found;
}

static void check_block(const char *what, size_t size, int madvise_mode)
{
    const block *b = sized(size);
    ok(b != NULL && b->align == HUGE && (uintptr_t)b->p % HUGE == 0,
       "%s (%zu bytes) was asked for on a 2 MiB boundary (align %zu)", what, size, b != NULL ? b->align : 0);
    if (madvise_mode == 1 && b != NULL) {
        const int e = eligible(b->p);
        if (e < 0)
            skip(1, "no THPeligible in /proc/self/smaps");
        else
            ok(e == 1, "%s: its mapping is eligible for huge pages (THPeligible %d)", what, e);
    } else {
        skip(1, "transparent huge pages are not in madvise mode here");
    }
}

int main(void)
{
    const mkrt_allocator rec = {rec_alloc, rec_free, NULL};
    mkrt_allocator_set(&rec);
    const int mode = thp_madvise();

    /* 2^18 vertices: 2 MiB of values, 2 MiB of cells; 2^19 + 4096
     * undirected edges: 8 MiB and 64 KiB of interleaved rows (a size no
     * other block has). */
    const uint32_t v = 1u << 18;
    test_graph g = test_graph_random(v, (1u << 19) + 4096, 7);
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CPU;
    c.workers = 2;
    c.cells = v;
    mkrt_runtime *rt = NULL;
    mkrt_error err = {0};
    if (mkrt_create(&c, &rt, &err) != MKRT_OK)
        bail_out("mkrt_create: %s", err.message);
    mkrt_graph mg = {g.v, g.off, g.dst, g.w};
    if (mkrt_graph_register(rt, &mg, &err) != MKRT_OK)
        bail_out("mkrt_graph_register: %s", err.message);
    const size_t edges = (size_t)g.off[v];
    check_block("the cells", (size_t)v * sizeof(uint64_t), mode);
    check_block("the interleaved rows", edges * 2 * sizeof(uint32_t), mode);

    mkrt_traversal *t = NULL;
    const mkrt_traversal_desc d = {MKRT_TRAVERSAL_SSSP, true};
    if (mkrt_traversal_open(rt, &d, &t, &err) != MKRT_OK)
        bail_out("mkrt_traversal_open: %s", err.message);
    /* The values are the open's only allocation of 8 bytes a vertex
     * (the cells' block has the same size: the newest one is the values). */
    const block *values = NULL;
    for (unsigned i = 0; i < nblocks; i++)
        if (blocks[i].p != NULL && blocks[i].size == (size_t)v * sizeof(uint64_t))
            values = &blocks[i];
    ok(values != NULL && values != sized((size_t)v * sizeof(uint64_t)) && values->align == HUGE &&
           (uintptr_t)values->p % HUGE == 0,
       "the SSSP traversal's values were asked for on a 2 MiB boundary");

    uint64_t *got = malloc((size_t)v * sizeof *got);
    bool *tight = calloc(v, sizeof *tight);
    if (got == NULL || tight == NULL)
        bail_out("out of memory");
    mkrt_status st = mkrt_traversal_start(t, 0, &err);
    if (st == MKRT_OK)
        st = mkrt_traversal_wait(t, SEC);
    if (st == MKRT_OK)
        st = mkrt_traversal_read(t, 0, v, got, &err);
    /* Shortest distances, checked in O(edges): no edge can lower one, and
     * each reached vertex but the root has an edge that gives its
     * distance (weights are positive, so those edges lead back to 0). */
    uint64_t lowered = 0, untight = 0;
    for (uint32_t u = 0; u < v && st == MKRT_OK; u++)
        for (uint64_t e = g.off[u]; e < g.off[u + 1] && got[u] != UINT64_MAX; e++) {
            const uint64_t via = got[u] + g.w[e];
            lowered += via < got[g.dst[e]];
            tight[g.dst[e]] |= via == got[g.dst[e]];
        }
    for (uint32_t x = 1; x < v && st == MKRT_OK; x++)
        untight += got[x] != UINT64_MAX && !tight[x];
    ok(st == MKRT_OK && got[0] == 0 && lowered == 0 && untight == 0,
       "SSSP over the huge-page rows and values: %" PRIu64 " edges lower a distance, %" PRIu64
       " distances no edge gives (%s)",
       lowered, untight, st == MKRT_OK ? "ok" : err.message);
    mkrt_traversal_close(t, NULL);
    mkrt_destroy(rt, SEC, NULL);
    free(got);
    free(tight);

    /* A small runtime asks for nothing on a 2 MiB boundary (its append
     * log is large, but written in order: not a huge-page block). */
    nblocks = 0;
    test_graph small = test_graph_ring(1000);
    c.cells = 1000;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK)
        bail_out("mkrt_create: %s", err.message);
    mkrt_graph ms = {small.v, small.off, small.dst, small.w};
    st = mkrt_graph_register(rt, &ms, &err);
    unsigned huge = 0;
    for (unsigned i = 0; i < nblocks; i++)
        huge += blocks[i].align == HUGE;
    ok(st == MKRT_OK && huge == 0, "a graph of 1000 vertices: no block asked for on a 2 MiB boundary (%u)", huge);
    mkrt_destroy(rt, SEC, NULL);
    test_graph_free(&small);
    test_graph_free(&g);
    mkrt_allocator_set(NULL);
    return done_testing();
}
