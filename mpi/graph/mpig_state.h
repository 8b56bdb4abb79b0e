/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/graph/mpig_state.h - the distributed engine's state, shared by
 * engine.c (open, close, BFS levels), sssp.c (SSSP rounds), local.c (one
 * rank), send.c (arrivals out) and report.c (errors, clock). See engine.c for the design;
 * include/mkrt_mpi/graph.h is the API. */
#ifndef MKRT_MPI_GRAPH_MPIG_STATE_H
#define MKRT_MPI_GRAPH_MPIG_STATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/alloc_internal.h"
#include "mkrt/mkrt.h"
#include "mkrt_mpi/graph.h"

enum { OP_VISIT = MKRT_OP_USER_FIRST, OP_SETTLE };
/* VISIT's or SETTLE's param on an EXPAND item: scan one vertex's row
 * (from edge offset `in`; a continuation after a full outbox). */
#define EXPAND UINT32_MAX
/* VISIT's param on a PULL item (bottom-up BFS over in + 1 vertices from
 * out: the runtime checks `in` as a handle, below the vertices, and a
 * span may be all of them). */
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
/* The SSSP buckets span MKRT_MPI_GRAPH_WEIGHT_MAX (mkrt_mpi/graph.h)
 * distances: weights are 1 .. it (checked at open, check_weights). */
/* SSSP rounds at several ranks: the window of distances one round scans
 * (mkrt_mpi_graph_config::delta overrides it). */
#define MPIG_DELTA 32u
/* SSSP round kinds: all edges, the light ones (weight <= delta) of a
 * window's due vertices, the heavy ones of a settled window's vertices. */
enum { MPIG_ALL, MPIG_LIGHT, MPIG_HEAVY };
/* A window covers further windows of delta while the global count of
 * their due vertices stays at most this (mkrt_mpi_graph_config::widen overrides): the
 * sparse tail of a search takes a few rounds, not three per window. */
#define MPIG_WIDEN 16384u
/* Windows counted per round (the last counts every farther one). */
#define MPIG_BINS 62u

/* Delegated vertices (BFS top-down): at most MPIG_HUBS (a bit each in the
 * level's count), those of degree MPIG_HUB_DEGREE or more (raised until
 * they fit); every rank scans a 1/P slice of a frontier hub's row. */
#define MPIG_HUBS 1024u
#define MPIG_HUB_WORDS (MPIG_HUBS / 64u)
#define MPIG_HUB_DEGREE 512u
#define MPIG_NO_HUB UINT16_MAX

/* One SSSP op's bucket queue (sssp.c): MKRT_MPI_GRAPH_WEIGHT_MAX + 1
 * buckets, kept between runs (grown, never shrunk: no allocation in steady state). */
typedef struct mpig_bucket {
    uint32_t *v;
    size_t n, cap;
} mpig_bucket;
typedef struct mpig_scratch {
    atomic_int busy; /* claimed by one op at a time (acq_rel exchange: pairs with the release store that frees it) */
    mpig_bucket b[MKRT_MPI_GRAPH_WEIGHT_MAX + 1];
} mpig_scratch;

/* An SSSP seed: a vertex due for a scan and its distance then. */
typedef struct mpig_seed {
    uint64_t d;
    uint32_t v;
} mpig_seed;

struct mkrt_mpi_graph {
    mkrt_runtime *rt;
    mkrt_mpi *mpi;
    mkrt_producer *producer;
    mkrt_graph graph; /* the caller's, its arrays borrowed until mkrt_mpi_graph_close */
    const mkrt_graph *g; /* &graph */
    bool symmetric;  /* mkrt_mpi_graph_config::symmetric: BFS may pull */
    bool own_rounds; /* mkrt_mpi_graph_config::own_rounds */
    uint64_t bad_weight_edge; /* the first edge SSSP cannot take, or UINT64_MAX */
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
    mkrt_item *seeds; /* the items of one level or round (at most the vertices + 1 + MPIG_HUBS) */
    /* BFS frontiers as vertex lists: `front` the level's (host), `next`
     * the vertices reached during it (appended by the ops and the receive
     * hook when a vertex leaves UNREACHED, so each once; relaxed index:
     * the host reads the list after a global quiescence). */
    uint32_t *front, *next;
    uint32_t front_n;
    atomic_uint_fast32_t next_n;
    uint16_t *hub_idx;  /* per vertex: its hub index, or MPIG_NO_HUB */
    uint32_t *hubs;     /* the hubs, by index */
    uint32_t nhubs, hub_degree, hub_depth; /* hub_depth: the level of the HUB items published */
    uint64_t hbits[MPIG_HUB_WORDS]; /* the level's frontier hubs (every rank's, or-ed) */
    uint32_t *chunk_lo; /* top-down: chunk i is front[chunk_lo[i] .. chunk_lo[i + 1]) */
    uint64_t owned_edges; /* edges of the owned vertices' rows */
    /* SSSP: the due vertices of a round, sorted by distance, and the
     * per-op bucket queues (workers + 2: ops also run on the dispatcher
     * and on a helping host thread). */
    mpig_seed *due, *due2; /* due2, csort: the counting sort's output and counts */
    uint32_t *csort;
    uint32_t due_n, due_stride;
    /* A round scans distances below due_bound only (the smallest due
     * distance + delta): farther vertices wait for the arrivals that may
     * still lower them (delta-stepping between ranks). */
    uint64_t due_bound, delta;
    int due_mode; /* MPIG_ALL, MPIG_LIGHT or MPIG_HEAVY: the edges a round's scans take */
    mpig_scratch *scratch;
    /* The owned rows again, by weight (weight << 32 | target, at the
     * graph's offsets), and each owned row's count of light edges. */
    uint64_t *wrow;
    uint64_t nwrow; /* its entries (the edges, at least 1: sized at open, the graph's arrays may be gone at close) */
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
    /* SSSP termination (sssp.c): per rank, the arrivals this rank's
     * outboxes accepted for it; per window of delta from arr_base, the
     * arrivals sent at distances in it (ops, relaxed: the host reads them
     * after its runtime's quiescence, which orders the ops' writes).
     * arr_base is written by the host before it publishes a round. */
    _Atomic uint64_t *sent_to, *arr_bins;
    uint64_t arr_base;
    uint64_t *wave;   /* one round's counts: 3 + MPIG_BINS + size values */
    uint64_t *sent0;  /* sent_to when the SSSP's rounds began */
    uint64_t block_k; /* block partition: vertices per rank */
    uint64_t coll;    /* the engine's own collectives (statistic, host only) */
    atomic_uint_fast64_t scanned; /* edges the row scans read (statistic, relaxed) */
    /* One rank: the runtime's traversals (local.c); NULL elsewhere. */
    mkrt_traversal *bfs_t, *sssp_t;
    mkrt_mpi_graph_level lv[MKRT_MPI_GRAPH_LEVELS]; /* the last BFS's levels (summed over the ranks) */
    size_t nlv;
};

/* Whether this rank owns v (the block partition inline). */
static inline bool mpig_mine(const mkrt_mpi_graph *e, uint32_t v)
{
    if (e->own_n > 0)
        return v - e->own_lo < e->own_n;
    return mkrt_mpi_owner(e->mpi, v) == e->rank;
}

/* Atomic minimum; returns the value it replaced, or v or more when it did
 * not lower *a (relaxed: see the fields). */
static inline uint64_t mpig_min(_Atomic uint64_t *a, uint64_t v)
{
    uint64_t cur = atomic_load_explicit(a, memory_order_relaxed);
    while (v < cur)
        if (atomic_compare_exchange_weak_explicit(a, &cur, v, memory_order_relaxed,
                                                  memory_order_relaxed))
            return cur;
    return v;
}

/* BFS: v was just reached (it left UNREACHED): it is in the next frontier. */
static inline void mpig_reached(mkrt_mpi_graph *e, uint32_t v)
{
    /* relaxed: the host reads next[] after the level's global quiescence */
    e->next[atomic_fetch_add_explicit(&e->next_n, 1, memory_order_relaxed)] = v;
}

/* send.c: sends staged arrivals; what an outbox refuses is queued
 * as RESEND items (*full set). */
mkrt_status mkrt__mpig_flush(const mkrt_mpi_graph *e, const mkrt_op_ctx *ctx, const mkrt_item *stage,
                       size_t n, bool *full);

/* Arrivals staged for mkrt__mpig_flush, a full stage at a time: a scan adds
 * with mpig_stage_add and sends the rest with mpig_stage_end. full: an
 * outbox refused items (they were queued as RESEND items). */
typedef struct mpig_stage {
    mkrt_item item[STAGE];
    size_t n;
    bool full;
} mpig_stage;

static inline mkrt_status mpig_stage_add(const mkrt_mpi_graph *e, const mkrt_op_ctx *ctx, mpig_stage *s,
                                         mkrt_item it)
{
    s->item[s->n++] = it;
    if (s->n < STAGE)
        return MKRT_OK;
    s->n = 0;
    return mkrt__mpig_flush(e, ctx, s->item, STAGE, &s->full);
}

/* Sends what is staged when st is MKRT_OK; returns the scan's status. */
static inline mkrt_status mpig_stage_end(const mkrt_mpi_graph *e, const mkrt_op_ctx *ctx, mpig_stage *s,
                                         mkrt_status st)
{
    if (st == MKRT_OK && s->n > 0)
        st = mkrt__mpig_flush(e, ctx, s->item, s->n, &s->full);
    s->n = 0;
    return st;
}
/* sssp.c: the per-op queues (open, close); the SSSP CHUNK op; the
 * rounds of one SSSP from the root already seeded in best (failed0: the
 * runtime's failed items when the search began, its mkrt_stats). */
int mkrt__mpig_sssp_open(mkrt_mpi_graph *e);
void mkrt__mpig_sssp_rows(mkrt_mpi_graph *e);
void mkrt__mpig_sssp_close(mkrt_mpi_graph *e);
mkrt_status mkrt__mpig_sssp_chunk(mkrt_mpi_graph *e, const mkrt_op_ctx *ctx, const mkrt_item *it);
mkrt_status mkrt__mpig_sssp_rounds(mkrt_mpi_graph *e, uint64_t failed0);
/* sssp.c: the layer is up (size known): the per-rank counters. */
int mkrt__mpig_sssp_ranks(mkrt_mpi_graph *e);
/* send.c: counts the arrivals an outbox accepted (n of them, from it),
 * per destination rank and, for SSSP's, per window of their distance. */
void mkrt__mpig_count_sent(const mkrt_mpi_graph *e, const mkrt_item *it, size_t n);

/* local.c: the graph registered with the runtime (before the
 * layer opens its producers); at one rank, the traversals; one search
 * through them (parent: BFS, else dist: SSSP). */
mkrt_status mkrt__mpig_local_register(mkrt_mpi_graph *e, mkrt_error *err);
mkrt_status mkrt__mpig_local_open(mkrt_mpi_graph *e, mkrt_error *err);
mkrt_status mkrt__mpig_local_search(mkrt_mpi_graph *e, uint32_t root, uint32_t *parent,
                                    uint64_t *dist, mkrt_mpi_graph_counts *c, mkrt_error *err);
/* report.c: err (when not NULL) filled with "mkrt_mpi_graph: " and the
 * formatted sentence; returns st. A monotonic clock in seconds. */
mkrt_status mkrt__mpig_fail(mkrt_error *err, mkrt_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
double mkrt__mpig_seconds(void);

#endif
