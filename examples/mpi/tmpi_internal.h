/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/mpi/tmpi_internal.h - the distributed engine's state, shared by
 * traverse_mpi.c (open, close, BFS levels) and tmpi_sssp.c (SSSP rounds).
 * See traverse_mpi.c for the design. */
#ifndef MKRT_EXAMPLES_TMPI_INTERNAL_H
#define MKRT_EXAMPLES_TMPI_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "mkrt/mkrt.h"
#include "traverse_mpi.h"

enum { OP_VISIT = MKRT_OP_USER_FIRST, OP_SETTLE };
/* VISIT's or SETTLE's param on an EXPAND item: scan one vertex's row
 * (from edge offset `in`; a continuation after a full outbox). */
#define EXPAND UINT32_MAX
/* VISIT's param on a PULL item (bottom-up BFS over in vertices from out). */
#define PULL (UINT32_MAX - 1)
/* Param of a CHUNK item: a slice of the frontier (BFS: chunk `in` of
 * chunk_lo[]; SSSP: every nth seed from `in`), one runtime item for many
 * vertices. */
#define CHUNK (UINT32_MAX - 2)
/* Param of a HUB item: this rank's slice of hub `in`'s row (BFS top-down). */
#define HUB (UINT32_MAX - 3)
/* Arrival items carry a value up to ARRIVE_MAX in param with this bit
 * set (so it never reads as EXPAND, PULL, CHUNK or HUB). */
#define ARRIVE 0x80000000u
#define ARRIVE_MAX (ARRIVE - 5u)
#define UNREACHED UINT64_MAX
/* Remote arrivals a scan gathers before sending them. */
#define STAGE 256
/* The largest edge weight of the Graph500 kit (g500_edge_weight: 1..255):
 * the SSSP buckets span this many distances. */
#define TMPI_WMAX 255u
/* SSSP rounds at several ranks: the window of distances one round scans
 * (TMPI_DELTA in the environment overrides it). */
#define TMPI_DELTA 32u
/* SSSP round kinds: all edges, the light ones (weight <= delta) of a
 * window's due vertices, the heavy ones of a settled window's vertices. */
enum { TMPI_ALL, TMPI_LIGHT, TMPI_HEAVY };
/* A window covers further windows of delta while the global count of
 * their due vertices stays at most this (TMPI_WIDEN overrides): the
 * sparse tail of a search takes a few rounds, not three per window. */
#define TMPI_WIDEN 16384u
/* Windows counted per round (the last counts every farther one). */
#define TMPI_BINS 62u

/* Delegated vertices (BFS top-down): at most TMPI_HUBS (a bit each in the
 * level's count), those of degree TMPI_HUB_DEGREE or more (raised until
 * they fit); every rank scans a 1/P slice of a frontier hub's row. */
#define TMPI_HUBS 1024u
#define TMPI_HUB_WORDS (TMPI_HUBS / 64u)
#define TMPI_HUB_DEGREE 512u
#define TMPI_NO_HUB UINT16_MAX

/* One SSSP op's bucket queue (tmpi_sssp.c): TMPI_WMAX + 1 buckets, kept
 * between runs (grown, never shrunk: no allocation in steady state). */
typedef struct tmpi_bucket {
    uint32_t *v;
    size_t n, cap;
} tmpi_bucket;
typedef struct tmpi_scratch {
    atomic_int busy; /* claimed by one op at a time (acq_rel exchange: pairs with the release store that frees it) */
    tmpi_bucket b[TMPI_WMAX + 1];
} tmpi_scratch;

/* An SSSP seed: a vertex due for a scan and its distance then. */
typedef struct tmpi_seed {
    uint64_t d;
    uint32_t v;
} tmpi_seed;

struct tmpi_engine {
    mkrt_runtime *rt;
    mkrt_mpi *mpi;
    mkrt_producer *producer;
    const g500_csr *g; /* borrowed until tmpi_close */
    uint32_t vertices;
    uint32_t own_lo, own_n; /* block partition: the owned vertices; hash: own_n = 0 */
    unsigned workers;
    /* Bottom-up levels: the global frontier (a bit per vertex, or-ed over
     * the ranks) and its depth, written by the host before it publishes
     * the PULL items that read them (the publish orders them). */
    uint64_t *fbits;
    uint32_t fwords, pull_depth;
    int rank, size;
    uint64_t *cells; /* gathered results (rank 0), scratch elsewhere */
    mkrt_item *seeds; /* the items of one level or round (at most the vertices + 1 + TMPI_HUBS) */
    /* BFS frontiers as vertex lists: `front` the level's (host), `next`
     * the vertices reached during it (appended by the ops and the receive
     * hook when a vertex leaves UNREACHED, so each once; relaxed index:
     * the host reads the list after a global quiescence). */
    uint32_t *front, *next;
    uint32_t front_n;
    atomic_uint_fast32_t next_n;
    uint16_t *hub_idx;  /* per vertex: its hub index, or TMPI_NO_HUB */
    uint32_t *hubs;     /* the hubs, by index */
    uint32_t nhubs, hub_degree, hub_depth; /* hub_depth: the level of the HUB items published */
    uint64_t hbits[TMPI_HUB_WORDS]; /* the level's frontier hubs (every rank's, or-ed) */
    uint32_t *chunk_lo; /* top-down: chunk i is front[chunk_lo[i] .. chunk_lo[i + 1]) */
    uint64_t owned_edges; /* edges of the owned vertices' rows */
    /* SSSP: the due vertices of a round, sorted by distance, and the
     * per-op bucket queues (workers + 2: ops also run on the dispatcher
     * and on a helping host thread). */
    tmpi_seed *due, *due2; /* due2, csort: the counting sort's output and counts */
    uint32_t *csort;
    uint32_t due_n, due_stride;
    /* A round scans distances below due_bound only (the smallest due
     * distance + delta): farther vertices wait for the arrivals that may
     * still lower them (delta-stepping between ranks). */
    uint64_t due_bound, delta;
    int due_mode; /* TMPI_ALL, TMPI_LIGHT or TMPI_HEAVY: the edges a round's scans take */
    tmpi_scratch *scratch;
    /* The owned rows again, by weight (weight << 32 | target, at the
     * graph's offsets), and each owned row's count of light edges. */
    uint64_t *wrow;
    uint32_t *nlight;
    unsigned nscratch;
    /* Smallest value sent per remote vertex (ops, relaxed: each entry is
     * its own minimum, no other data hangs on it). */
    _Atomic uint64_t *sent_min;
    /* The best value known per owned vertex: lowered by the ops and, for
     * arrivals, by the receive hook (progress thread). Relaxed: each
     * entry is its own minimum; the host reads them after a global
     * quiescence, which orders them through the layer's seq_cst counters
     * and the runtime's quiescence. */
    _Atomic uint64_t *best;
    /* SSSP: the distance each owned vertex's row was last scanned with
     * (ops; relaxed like best): a vertex with best < done is due. */
    _Atomic uint64_t *done;
    /* SSSP: the distance each owned vertex's heavy edges were last
     * scanned with (heavy rounds and all-edge rounds; relaxed like best). */
    _Atomic uint64_t *hdone;
    uint64_t widen; /* a window spans windows of delta while the due count stays below this */
    /* SSSP termination (tmpi_sssp.c): per rank, the arrivals this rank's
     * outboxes accepted for it; per window of delta from arr_base, the
     * arrivals sent at distances in it (ops, relaxed: the host reads them
     * after its runtime's quiescence, which orders the ops' writes).
     * arr_base is written by the host before it publishes a round. */
    _Atomic uint64_t *sent_to, *arr_bins;
    uint64_t arr_base;
    uint64_t *wave;   /* one round's counts: 3 + TMPI_BINS + size values */
    uint64_t *sent0;  /* sent_to when the SSSP's rounds began */
    uint64_t block_k; /* block partition: vertices per rank */
    uint64_t coll;    /* the engine's own collectives (statistic, host only) */
    atomic_uint_fast64_t scanned; /* edges the row scans read (statistic, relaxed) */
    /* One rank: the runtime's traversals (tmpi_local.c); NULL elsewhere. */
    mkrt_traversal *bfs_t, *sssp_t;
    tmpi_level lv[TMPI_LEVELS]; /* the last BFS's levels (summed over the ranks) */
    size_t nlv;
};

/* Whether this rank owns v (the block partition inline). */
static inline bool tmpi_mine(const tmpi_engine *e, uint32_t v)
{
    if (e->own_n > 0)
        return v - e->own_lo < e->own_n;
    return mkrt_mpi_owner(e->mpi, v) == e->rank;
}

/* Atomic minimum; returns the value it replaced, or v or more when it did
 * not lower *a (relaxed: see the fields). */
static inline uint64_t tmpi_min(_Atomic uint64_t *a, uint64_t v)
{
    uint64_t cur = atomic_load_explicit(a, memory_order_relaxed);
    while (v < cur)
        if (atomic_compare_exchange_weak_explicit(a, &cur, v, memory_order_relaxed,
                                                  memory_order_relaxed))
            return cur;
    return v;
}

/* BFS: v was just reached (it left UNREACHED): it is in the next frontier. */
static inline void tmpi_reached(tmpi_engine *e, uint32_t v)
{
    /* relaxed: the host reads next[] after the level's global quiescence */
    e->next[atomic_fetch_add_explicit(&e->next_n, 1, memory_order_relaxed)] = v;
}

/* traverse_mpi.c: sends staged arrivals; what an outbox refuses is queued
 * as RESEND items (*full set). */
mkrt_status tmpi_flush(const tmpi_engine *e, const mkrt_op_ctx *ctx, const mkrt_item *stage,
                       size_t n, bool *full);

/* Arrivals staged for tmpi_flush, a full stage at a time: a scan adds
 * with tmpi_stage_add and sends the rest with tmpi_stage_end. full: an
 * outbox refused items (they were queued as RESEND items). */
typedef struct tmpi_stage {
    mkrt_item item[STAGE];
    size_t n;
    bool full;
} tmpi_stage;

static inline mkrt_status tmpi_stage_add(const tmpi_engine *e, const mkrt_op_ctx *ctx, tmpi_stage *s,
                                         mkrt_item it)
{
    s->item[s->n++] = it;
    if (s->n < STAGE)
        return MKRT_OK;
    s->n = 0;
    return tmpi_flush(e, ctx, s->item, STAGE, &s->full);
}

/* Sends what is staged when st is MKRT_OK; returns the scan's status. */
static inline mkrt_status tmpi_stage_end(const tmpi_engine *e, const mkrt_op_ctx *ctx, tmpi_stage *s,
                                         mkrt_status st)
{
    if (st == MKRT_OK && s->n > 0)
        st = tmpi_flush(e, ctx, s->item, s->n, &s->full);
    s->n = 0;
    return st;
}
/* tmpi_sssp.c: the per-op queues (open, close); the SSSP CHUNK op; the
 * rounds of one SSSP from the root already seeded in best. */
int tmpi_sssp_open(tmpi_engine *e);
void tmpi_sssp_rows(tmpi_engine *e);
void tmpi_sssp_close(tmpi_engine *e);
mkrt_status tmpi_sssp_chunk(tmpi_engine *e, const mkrt_op_ctx *ctx, const mkrt_item *it);
mkrt_status tmpi_sssp_rounds(tmpi_engine *e);
/* tmpi_sssp.c: the layer is up (size known): the per-rank counters. */
int tmpi_sssp_ranks(tmpi_engine *e);
/* Counts the arrivals an outbox accepted (n of them, from it), per
 * destination rank and, for SSSP's, per window of their distance. */
void tmpi_count_sent(const tmpi_engine *e, const mkrt_item *it, size_t n);

/* tmpi_local.c: the graph registered with the runtime (before the
 * layer opens its producers); at one rank, the traversals; one search
 * through them (parent: BFS, else dist: SSSP). */
mkrt_status tmpi_local_register(tmpi_engine *e, mkrt_error *err);
mkrt_status tmpi_local_open(tmpi_engine *e, mkrt_error *err);
int tmpi_local_search(tmpi_engine *e, uint32_t root, uint32_t *parent, uint64_t *dist,
                      double *seconds, tmpi_counts *c, char *why, size_t len);

#endif
