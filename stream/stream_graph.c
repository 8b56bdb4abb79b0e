/* SPDX-License-Identifier: BSD-2-Clause */
/* src/stream/stream_graph.c - the mutable adjacency of a stream: one
 * unsorted array of (target, weight) per vertex, both directions of every
 * undirected edge, loaded with an eighth more room, grown by half and
 * shrunk by half when a quarter full, so it stays within about twice a
 * CSR of the same edges. Updates
 * run concurrently on different edges: each takes the spin locks of its
 * two endpoints (smaller number first). Readers of the adjacency (the
 * apply op) run while no update is inside (the gate, stream_ops.c). */
#include <stdlib.h>
#include <string.h>

#include "base/alloc_internal.h"
#include "base/error_internal.h"
#include "stream/stream_internal.h"

static size_t block_bytes(uint32_t cap);
static void index_build(mkrt__sadj *a);

int mkrt__sgraph_init(mkrt_stream *s)
{
    size_t n = s->n;
    s->adj = mkrt__alloc_zeroed(n * sizeof *s->adj, MKRT_CACHE_LINE);
    s->lock = mkrt__alloc(n * sizeof *s->lock, MKRT_CACHE_LINE);
    if (s->adj == NULL || s->lock == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        atomic_flag_clear_explicit(&s->lock[i], memory_order_relaxed);
    atomic_store_explicit(&s->graph_bytes, n * (sizeof *s->adj + sizeof *s->lock), memory_order_relaxed);
    return 0;
}

void mkrt__sgraph_free(mkrt_stream *s)
{
    if (s->adj != NULL)
        for (uint32_t i = 0; i < s->n; i++)
            mkrt__free(s->adj[i].e, block_bytes(s->adj[i].cap));
    mkrt__free(s->adj, (size_t)s->n * sizeof *s->adj);
    mkrt__free(s->lock, (size_t)s->n * sizeof *s->lock);
    s->adj = NULL;
    s->lock = NULL;
}

static void lock1(mkrt_stream *s, uint32_t v)
{
    /* acquire: pairs with the release in unlock1, so the holder sees the
     * previous holder's changes to adj[v]. */
    while (atomic_flag_test_and_set_explicit(&s->lock[v], memory_order_acquire))
        ;
}

static void unlock1(mkrt_stream *s, uint32_t v)
{
    atomic_flag_clear_explicit(&s->lock[v], memory_order_release); /* pairs with lock1's acquire */
}

void mkrt__sgraph_lock2(mkrt_stream *s, uint32_t u, uint32_t v)
{
    lock1(s, u < v ? u : v);
    lock1(s, u < v ? v : u);
}

void mkrt__sgraph_unlock2(mkrt_stream *s, uint32_t u, uint32_t v)
{
    unlock1(s, u);
    unlock1(s, v);
}

/* ---- Large vertices: a hash index over the array ------------------------
 * A vertex with HUB_MIN or more slots gets, in the same block after
 * its edges, an open-addressing table (linear probing, at most 3/4 full)
 * from target to position, so finding an edge of a hub costs O(1) instead
 * of a scan of its row. */
#define HUB_MIN 384u
#define EMPTY UINT32_MAX

static uint32_t index_size(uint32_t cap)
{
    return cap < HUB_MIN ? 0 : cap + cap / 4 + 1; /* at most 4/5 full */
}

static size_t block_bytes(uint32_t cap)
{
    return (size_t)cap * sizeof(mkrt__sedge) + (size_t)index_size(cap) * sizeof(uint32_t);
}

static uint32_t *index_of(const mkrt__sadj *a)
{
    return (uint32_t *)(void *)(a->e + a->cap);
}

/* Multiply-shift onto 0..size-1 (any size, no modulo). */
static uint32_t hash_slot(uint32_t to, uint32_t size)
{
    return (uint32_t)(((uint64_t)(to * 0x9E3779B1u) * size) >> 32);
}

static uint32_t next_slot(uint32_t s, uint32_t size)
{
    return s + 1 == size ? 0 : s + 1;
}

/* A slot holds the edge's position in the row and, in its top 8 bits, a
 * tag of its target (rows below 2^24 slots; larger rows keep positions
 * alone, tag 0): a probe compares tags and reads the edge itself only on
 * a match (1 in 256 for another target), so walking a cluster stays in
 * the index's cache lines instead of touching a random edge per slot. */
#define POS_BITS 24u
static uint32_t pos_mask(const mkrt__sadj *a)
{
    return a->cap < (1u << POS_BITS) ? (1u << POS_BITS) - 1 : UINT32_MAX;
}

static uint32_t tag_of(const mkrt__sadj *a, uint32_t to)
{
    return a->cap < (1u << POS_BITS) ? (to * 0x85EBCA6Bu) >> POS_BITS << POS_BITS : 0;
}

/* The position of target `to` (EMPTY: absent) and the slot holding it
 * (or the empty slot that ends its probe). A position below 2^24 - 1
 * with any tag is never EMPTY. */
static uint32_t index_find(const mkrt__sadj *a, uint32_t to, uint32_t *slot)
{
    const uint32_t *ix = index_of(a);
    uint32_t size = index_size(a->cap), mask = pos_mask(a), tag = tag_of(a, to);
    for (uint32_t s = hash_slot(to, size);; s = next_slot(s, size)) {
        uint32_t x = ix[s];
        if (x == EMPTY) {
            *slot = s;
            return EMPTY;
        }
        if ((x & ~mask) == tag && a->e[x & mask].to == to) {
            *slot = s;
            return x & mask;
        }
    }
}

static void index_put(mkrt__sadj *a, uint32_t to, uint32_t pos)
{
    uint32_t slot;
    index_find(a, to, &slot);
    index_of(a)[slot] = tag_of(a, to) | pos;
}

/* Empties slot s, shifting later entries of its run back (no tombstones). */
static void index_drop(mkrt__sadj *a, uint32_t s)
{
    uint32_t *ix = index_of(a), size = index_size(a->cap);
    ix[s] = EMPTY;
    uint32_t mask = pos_mask(a);
    for (uint32_t j = next_slot(s, size); ix[j] != EMPTY; j = next_slot(j, size)) {
        uint32_t k = hash_slot(a->e[ix[j] & mask].to, size);
        int stays = s <= j ? (k > s && k <= j) : (k > s || k <= j);
        if (!stays) {
            ix[s] = ix[j];
            ix[j] = EMPTY;
            s = j;
        }
    }
}

static void index_build(mkrt__sadj *a)
{
    uint32_t n = index_size(a->cap);
    if (n == 0)
        return;
    memset(index_of(a), 0xff, (size_t)n * sizeof(uint32_t));
    for (uint32_t i = 0; i < a->deg; i++)
        index_put(a, a->e[i].to, i);
}

/* The position of `to` in a, MKRT__SNONE when absent; in a hub row,
 * *slot is the index slot that holds it (remove_at reuses it). */
static uint32_t find_at(const mkrt__sadj *a, uint32_t to, uint32_t *slot)
{
    if (index_size(a->cap) != 0)
        return index_find(a, to, slot); /* EMPTY is MKRT__SNONE */
    for (uint32_t i = 0; i < a->deg; i++)
        if (a->e[i].to == to)
            return i;
    return MKRT__SNONE;
}

static uint32_t find(const mkrt__sadj *a, uint32_t to)
{
    uint32_t slot;
    return find_at(a, to, &slot);
}

uint32_t mkrt__sgraph_weight(const mkrt_stream *s, uint32_t u, uint32_t v)
{
    const mkrt__sadj *a = &s->adj[u], *b = &s->adj[v];
    const mkrt__sadj *r = (index_size(a->cap) != 0 || (index_size(b->cap) == 0 && a->deg <= b->deg)) ? a : b;
    uint32_t at = find(r, r == a ? v : u);
    return at == MKRT__SNONE ? 0 : r->e[at].w;
}

/* A new block for a, of cap slots holding a's edges; NULL on failure. */
static mkrt__sedge *resized(const mkrt__sadj *a, uint32_t cap)
{
    mkrt__sedge *e = mkrt__alloc(block_bytes(cap), 8);
    if (e != NULL && a->deg > 0)
        memcpy(e, a->e, (size_t)a->deg * sizeof *e);
    return e;
}

static void replace(mkrt_stream *s, mkrt__sadj *a, mkrt__sedge *e, uint32_t cap)
{
    size_t was = a->e == NULL ? 0 : block_bytes(a->cap), now = block_bytes(cap);
    mkrt__free(a->e, was);
    /* relaxed: a byte count read by stats only. */
    if (now > was)
        atomic_fetch_add_explicit(&s->graph_bytes, now - was, memory_order_relaxed);
    else
        atomic_fetch_sub_explicit(&s->graph_bytes, was - now, memory_order_relaxed);
    a->e = e;
    a->cap = cap;
    index_build(a);
}

static uint32_t grown(uint32_t cap)
{
    return cap < 4 ? 4 : cap + (cap >> 1);
}

static void append(mkrt__sadj *a, uint32_t to, uint32_t w)
{
    a->e[a->deg] = (mkrt__sedge){to, w};
    if (index_size(a->cap) != 0)
        index_put(a, to, a->deg);
    a->deg++;
}

int mkrt__sgraph_insert(mkrt_stream *s, uint32_t u, uint32_t v, uint32_t w)
{
    mkrt__sadj *a = &s->adj[u], *b = &s->adj[v];
    const mkrt__sadj *small = (index_size(a->cap) != 0 || a->deg <= b->deg) ? a : b;
    uint32_t at = find(small, small == a ? v : u);
    if (at != MKRT__SNONE)
        return small->e[at].w == w ? 1 : MKRT_EINVAL;
    mkrt__sedge *na = NULL, *nb = NULL;
    uint32_t ca = a->deg == a->cap ? grown(a->cap) : a->cap;
    uint32_t cb = b->deg == b->cap ? grown(b->cap) : b->cap;
    if ((ca != a->cap && (na = resized(a, ca)) == NULL) || (cb != b->cap && (nb = resized(b, cb)) == NULL)) {
        mkrt__free(na, block_bytes(ca));
        return MKRT_ENOMEM;
    }
    if (na != NULL)
        replace(s, a, na, ca);
    if (nb != NULL)
        replace(s, b, nb, cb);
    append(a, v, w);
    append(b, u, w);
    atomic_fetch_add_explicit(&s->edges, 1, memory_order_relaxed); /* relaxed: a count for stats */
    return 0;
}

/* Gives memory back when a is a quarter full (halves it; keeps the larger
 * block when the smaller cannot be had: still correct). */
static void shrink(mkrt_stream *s, mkrt__sadj *a)
{
    if (a->cap > 8 && a->deg < a->cap / 4) {
        uint32_t cap = a->cap / 2;
        mkrt__sedge *e = resized(a, cap);
        if (e != NULL)
            replace(s, a, e, cap);
    }
}

/* Removes entry i of a, which a hub row's index holds at `slot` (from
 * find_at); with may_shrink, gives memory back when a is a quarter full. */
static void remove_at(mkrt_stream *s, mkrt__sadj *a, uint32_t i, uint32_t slot, bool may_shrink)
{
    uint32_t last = a->deg - 1;
    if (index_size(a->cap) != 0) {
        index_drop(a, slot);
        if (i != last) {
            index_find(a, a->e[last].to, &slot);
            index_of(a)[slot] = tag_of(a, a->e[last].to) | i;
        }
    }
    a->e[i] = a->e[last];
    a->deg = last;
    if (may_shrink)
        shrink(s, a);
}

mkrt_status mkrt__sgraph_delete(mkrt_stream *s, uint32_t u, uint32_t v)
{
    mkrt__sadj *a = &s->adj[u], *b = &s->adj[v];
    int a_first = index_size(a->cap) != 0 || (index_size(b->cap) == 0 && a->deg <= b->deg);
    uint32_t si = 0, sj = 0;
    uint32_t i = find_at(a_first ? a : b, a_first ? v : u, &si);
    if (i == MKRT__SNONE)
        return MKRT_ESTATE;
    uint32_t j = find_at(a_first ? b : a, a_first ? u : v, &sj);
    remove_at(s, a_first ? a : b, i, si, true);
    remove_at(s, a_first ? b : a, j, sj, true);
    atomic_fetch_sub_explicit(&s->edges, 1, memory_order_relaxed); /* relaxed: a count for stats */
    return MKRT_OK;
}

/* ---- One row at a time (a parallel batch, stream_par.c) -------------------
 * Row x holds `to` exactly when row `to` holds x, with the same weight, so
 * the owner of each row decides an update's outcome from its own row
 * alone, and the two owners decide alike when each runs the row's updates
 * in batch order. No lock: one thread owns a row for the whole batch. */

int mkrt__sgraph_reserve(mkrt_stream *s, uint32_t x, uint32_t more)
{
    mkrt__sadj *a = &s->adj[x];
    if ((uint64_t)a->deg + more <= a->cap)
        return 0;
    uint64_t want = (uint64_t)a->deg + more, cap = grown(a->cap);
    if (want > cap)
        cap = want;
    if (cap > UINT32_MAX / 2)
        return -1;
    mkrt__sedge *e = resized(a, (uint32_t)cap);
    if (e == NULL)
        return -1;
    replace(s, a, e, (uint32_t)cap);
    return 0;
}

int mkrt__sgraph_half_insert(mkrt_stream *s, uint32_t x, uint32_t to, uint32_t w)
{
    mkrt__sadj *a = &s->adj[x];
    uint32_t at = find(a, to);
    if (at != MKRT__SNONE)
        return a->e[at].w == w ? 1 : MKRT_EINVAL;
    if (a->deg == a->cap && mkrt__sgraph_reserve(s, x, 1) != 0)
        return MKRT_ENOMEM; /* not after mkrt__sgraph_reserve for the batch */
    append(a, to, w);
    return 0;
}

mkrt_status mkrt__sgraph_half_delete(mkrt_stream *s, uint32_t x, uint32_t to)
{
    mkrt__sadj *a = &s->adj[x];
    uint32_t slot = 0, i = find_at(a, to, &slot);
    if (i == MKRT__SNONE)
        return MKRT_ESTATE;
    remove_at(s, a, i, slot, false);
    return MKRT_OK;
}

void mkrt__sgraph_trim(mkrt_stream *s, uint32_t x)
{
    shrink(s, &s->adj[x]);
}

/* ---- Loading -------------------------------------------------------------- */

typedef struct load_edge {
    uint64_t key; /* min << 32 | max */
    uint32_t w, order;
} load_edge;

static int by_key(const void *x, const void *y)
{
    const load_edge *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* A loaded row's slots: its edges and an eighth more (rows of 8 or more),
 * so that the first updates after a load, which touch rows all over the
 * graph, do not each reallocate and copy a full row (and rebuild a hub's
 * index): a sliding window's first batch of 4096 grew 18.8 MB of rows
 * and was its slowest batch by 3-10x (bench/results/stream.md). */
static uint32_t loaded_cap(uint32_t deg)
{
    return deg > UINT32_MAX - deg / 8 ? deg : deg + deg / 8;
}

mkrt_status mkrt__sgraph_load(mkrt_stream *s, const uint32_t *src, const uint32_t *dst, const uint32_t *w,
                              size_t n, uint64_t *skipped, mkrt_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (src[i] >= s->n || dst[i] >= s->n)
            return mkrt__error_set(err, MKRT_EINVAL,
                                   "mkrt_stream_load: edge %zu is {%u, %u} but the stream has %u vertices. "
                                   "Fix: pass endpoints below mkrt_stream_config::vertices",
                                   i, src[i], dst[i], s->n);
    load_edge *e = n > 0 ? mkrt__alloc(n * sizeof *e, MKRT_CACHE_LINE) : NULL;
    uint32_t *deg = mkrt__alloc_zeroed((size_t)s->n * sizeof *deg, MKRT_CACHE_LINE);
    if ((n > 0 && e == NULL) || deg == NULL) {
        mkrt__free(e, n * sizeof *e);
        mkrt__free(deg, (size_t)s->n * sizeof *deg);
        return mkrt__error_set(err, MKRT_ENOMEM, "mkrt_stream_load: no memory to sort %zu edges. "
                                                 "Fix: load fewer edges at a time or free memory", n);
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t a = src[i] < dst[i] ? src[i] : dst[i], b = src[i] < dst[i] ? dst[i] : src[i];
        if (a == b)
            continue;
        uint32_t wt = w == NULL ? 1 : w[i];
        wt = wt == 0 ? 1 : wt > s->cfg.weight_max ? s->cfg.weight_max : wt;
        e[m++] = (load_edge){(uint64_t)a << 32 | b, wt, (uint32_t)i};
    }
    if (m > 1) /* e is NULL when n is 0: libc's arrays must not be */
        qsort(e, m, sizeof *e, by_key);
    size_t u = 0;
    for (size_t i = 0; i < m; i++)
        if (i == 0 || e[i].key != e[i - 1].key)
            e[u++] = e[i];
    for (size_t i = 0; i < u; i++) {
        deg[e[i].key >> 32]++;
        deg[(uint32_t)e[i].key]++;
    }
    mkrt_status st = MKRT_OK;
    uint64_t bytes = 0;
    for (uint32_t v = 0; v < s->n && st == MKRT_OK; v++) {
        if (deg[v] == 0)
            continue;
        uint32_t cap = loaded_cap(deg[v]);
        s->adj[v].e = mkrt__alloc(block_bytes(cap), 8);
        if (s->adj[v].e == NULL)
            st = MKRT_ENOMEM;
        else
            s->adj[v].cap = cap;
        bytes += block_bytes(cap);
    }
    if (st != MKRT_OK) {
        for (uint32_t v = 0; v < s->n; v++) {
            mkrt__free(s->adj[v].e, block_bytes(s->adj[v].cap));
            s->adj[v] = (mkrt__sadj){0};
        }
        mkrt__free(e, n * sizeof *e);
        mkrt__free(deg, (size_t)s->n * sizeof *deg);
        return mkrt__error_set(err, MKRT_ENOMEM, "mkrt_stream_load: no memory for the adjacency of %zu edges. "
                                                 "Fix: free memory or load a smaller graph", u);
    }
    for (size_t i = 0; i < u; i++) {
        uint32_t a = (uint32_t)(e[i].key >> 32), b = (uint32_t)e[i].key;
        s->adj[a].e[s->adj[a].deg++] = (mkrt__sedge){b, e[i].w};
        s->adj[b].e[s->adj[b].deg++] = (mkrt__sedge){a, e[i].w};
    }
    for (uint32_t v = 0; v < s->n; v++)
        index_build(&s->adj[v]);
    atomic_fetch_add_explicit(&s->graph_bytes, bytes, memory_order_relaxed); /* relaxed: stats */
    atomic_store_explicit(&s->edges, u, memory_order_relaxed);                 /* relaxed: stats */
    if (skipped != NULL)
        *skipped = n - u;
    mkrt__free(e, n * sizeof *e);
    mkrt__free(deg, (size_t)s->n * sizeof *deg);
    return MKRT_OK;
}
