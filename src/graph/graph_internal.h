/* SPDX-License-Identifier: BSD-2-Clause */
/* src/graph/graph_internal.h - the graph engine's own structures, for the
 * files of src/graph/ only: the engine (the graph, its lanes) and the
 * traversal object (mkrt__traversal), one per lane.
 *
 * A traversal is a frontier over the graph's vertices and the values it
 * lowers: the runtime's cells (RELAX's lane and the expanding user ops'),
 * or an array of its own (a public BFS or SSSP, mkrt_traversal_open). Its
 * state is its own, so several run at once: the dispatcher's rounds take
 * chunks of every lane in turn, and each lane moves from level to level on
 * its own (a level ends when its frontier is used up and no batch runs). */
#ifndef MKRT_SRC_GRAPH_INTERNAL_H
#define MKRT_SRC_GRAPH_INTERNAL_H

#include <stdalign.h>
#include <string.h>

#include "base/alloc_internal.h"
#include "base/thread.h"
#include "graph/engine.h"
#include "mkrt/graph.h"

/* Arrays of words a traversal's bits allocation holds: w, r, visited,
 * far, far_low and hubs (mkrt__traversal). */
#define MKRT__TRAV_WORD_ARRAYS 6u

/* Distance buckets' hubs (round.c): a vertex of this many edges or more
 * runs its light edges (weight below the bucket width) in the levels of
 * a bucket and its whole row once, after them. */
#define MKRT__HUB_EDGES 64u

typedef struct mkrt_traversal mkrt__traversal;

/* *v = min(*v, x): the bounds the workers lower (next_min, far_min,
 * far_low). relaxed: hints read after the barrier or the batch's
 * completion, which order them. */
static inline void mkrt__graph_lower(_Atomic uint64_t *v, uint64_t x)
{
    uint64_t cur = atomic_load_explicit(v, memory_order_relaxed);
    while (x < cur && !atomic_compare_exchange_weak_explicit(v, &cur, x, memory_order_relaxed, memory_order_relaxed))
        ;
}

/* The same where no other thread writes *v meanwhile (the engine's
 * host.solo: one executor): a load, a compare and a store, no locked
 * instruction. Returns whether it lowered *v. relaxed: as above. */
static inline bool mkrt__graph_lower_alone(_Atomic uint64_t *v, uint64_t x)
{
    if (x >= atomic_load_explicit(v, memory_order_relaxed))
        return false;
    atomic_store_explicit(v, x, memory_order_relaxed);
    return true;
}

/* *f = true: the flags the workers raise (any, far_any, hubs_any). A
 * plain load first, so that a raised flag's line is not written again by
 * every edge that would raise it. relaxed: as mkrt__graph_lower. */
static inline void mkrt__graph_raise(_Atomic bool *f)
{
    if (!atomic_load_explicit(f, memory_order_relaxed))
        atomic_store_explicit(f, true, memory_order_relaxed);
}

/* What a lane's edges run. */
typedef enum mkrt__lane_kind {
    MKRT__LANE_RELAX, /* the built-in RELAX on the cells (lane 0) */
    MKRT__LANE_USER,  /* an expanding user op on the cells */
    MKRT__LANE_BFS,   /* a public BFS: values are depth << 32 | parent */
    MKRT__LANE_SSSP,  /* a public SSSP: values are distances */
    MKRT__LANE_CC,    /* a public CC: a sweep (graph/sweep.c) */
    MKRT__LANE_PR     /* a public PageRank: a sweep (graph/sweep.c) */
} mkrt__lane_kind;

struct mkrt__sweep; /* graph/sweep.h */

struct mkrt_traversal {
    mkrt__graph_engine *engine;
    uint32_t lane;
    mkrt__lane_kind kind;
    bool pulls;        /* its levels may run pulled (symmetric graph) */
    bool buckets;      /* distance buckets (weighted RELAX or SSSP) */
    uint64_t *values;  /* the cells, or its own (vertices words) */
    uint64_t depth;    /* a pulling BFS: its level's depth (dispatcher, before the launch) */
    /* Bitsets of words each: the ops set bits in w (the next level), the
     * rounds take them from r (this level); they swap when r is used up
     * and no batch runs. visited: the vertices settled since the lane
     * last ran empty (pulled levels); far: vertices deferred to a later
     * distance bucket (dispatcher-only, relaxed). */
    _Atomic uint64_t *bits; /* all five arrays of words, one allocation */
    _Atomic uint64_t *w, *r, *visited, *far;
    /* far_low[i]: a lower bound of the distances its chunks gave far's
     * vertices of word i since the word was last restored (round.c,
     * far_restore), so that a bucket's restore takes only the words that
     * may hold a vertex below the bound, and the filter reads the
     * distances of those words' vertices only. Lowered by the workers
     * (apply.c, in_bucket), set to UINT64_MAX by a restore (no batch
     * runs); UINT64_MAX at first. relaxed: as far. */
    _Atomic uint64_t *far_low;
    /* hubs: the hubs (MKRT__HUB_EDGES) whose light edges a level of the
     * bucket ran and whose heavy edges wait for its end (round.c). Set
     * by the workers, taken with no batch running. relaxed: as far. */
    _Atomic uint64_t *hubs;
    alignas(MKRT_CACHE_LINE) _Atomic bool any; /* a bit of w may be set */
    /* QUEUE (plan/decide.h): while qon, the op whose OR set a bit of w
     * also appends its vertex to wq (apply.c), so wq lists w's vertices,
     * each once; at the swap wq becomes rq, and the level's rounds take
     * rq[0 .. rq_n) instead of scanning r's words. An appender reserves
     * MKRT__QUEUE_BLOCK entries at a time (one fetch-add per block, not
     * per vertex); entries it did not fill stay MKRT__QUEUE_EMPTY, which
     * the readers skip, and every entry is EMPTY again before its queue
     * becomes wq. qcap entries each; more (wq_n > qcap), or a bit set in w
     * without an append (far coming back, wq_bad), leave the level to the
     * scan. qepoch names the level's queue (a new number at each swap):
     * an appender's block is its own only within one. relaxed (all): qon,
     * qepoch and the pointers are set by the dispatcher before a launch
     * (which publishes them); the entries and wq_n are read by it after
     * the batch completed (the backend's wait acquires). */
    _Atomic uint32_t *queues; /* both, one allocation */
    _Atomic uint32_t *wq, *rq;
    size_t qcap;
    _Atomic bool qon, wq_bad;
    _Atomic uint64_t qepoch;
    /* Its own line: the appenders' fetch-add must not evict the line
     * every marking op reads qon and wq from. */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t wq_n;
    /* The dispatcher's cursor over r and the level's state (dispatcher-only). */
    alignas(MKRT_CACHE_LINE) struct {
        bool scanning;      /* taking words of r from `word` on */
        bool swapped;       /* r was swapped in during the current round */
        bool took;          /* chunks of it are in the current round */
        size_t word;
        uint64_t mask;      /* taken bits of word - 1, not yet expanded */
        uint32_t v;         /* the vertex being expanded */
        uint64_t edge, end; /* its edges still to emit */
        bool pull;          /* this level runs pulled */
        bool queue_chosen;  /* QUEUE's last choice for the lane (its hysteresis) */
        bool queued;        /* this level's vertices come from rq (QUEUE) */
        uint64_t rq_n, rq_pos;
        bool pull_pending;  /* pulled chunks of the level remain */
        size_t pull_word;
        bool visited_dirty;
        uint64_t visited_edges; /* edges of the settled vertices */
        uint64_t bound;     /* buckets: the level expands vertices below it (0: none) */
        bool filter;        /* buckets: r may hold vertices at or above the bound */
        bool hubs_next;     /* buckets: w holds the bucket's hubs, for their whole rows */
        bool light;         /* buckets: a run's level runs only its hubs' light edges */
        uint64_t far_moved; /* buckets: far's vertices its restores moved (round.c) */
        uint64_t hub_levels; /* buckets: levels of hubs' whole rows it ran (round.c) */
        bool active;        /* public: started and not finished */
        bool sweep;         /* public: a sweep kind's run (graph/sweep.c) */
        bool alone;         /* a run of levels: the open level runs on one thread (round.c) */
        uint32_t dev;       /* public: on the device (graph/device.c): MKRT__DEV_* */
        uint64_t seen;      /* public: the start it took up */
    } x;
    /* A run of levels (round.c; plan/source.h, part and next_level): set
     * by the token holder when its round hands the lane's levels to the
     * CPU pool's workers, cleared by the barrier's last arriver that hands
     * the lane back (release; the holder's loads acquire). While set, the
     * lane's state (x) is the run's: the holder's rounds pass it by.
     * part_next: the open level's claim cursor (bitset or visited words,
     * or queue entries), one fetch-add per part (relaxed: it only hands
     * out disjoint ranges; the level's state is ordered by the barrier). */
    alignas(MKRT_CACHE_LINE) _Atomic bool in_levels;
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t part_next;
    /* Distance buckets, shared with the workers (relaxed; round.c): the
     * bound (x.bound as of the launch), far's state (a vertex lowered to
     * the bound or above is marked in far, not w) and the least distance
     * the level's chunks gave a vertex they marked in w. */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t bound;
    _Atomic bool far_any, hubs_any;
    _Atomic uint64_t far_min, next_min;
    /* A pulling BFS: the vertices its pulled chunks put into w (each
     * once: the bits their OR set) and the sum of their edges (apply.c,
     * pull_bfs; relaxed, one add per chunk, read at the swap with no
     * batch running). When they are all of w, the new level's edge count
     * (PULL's input, settle_level) needs no read of offsets per vertex. */
    _Atomic uint64_t pulled_marked, pulled_degrees;
    /* Public traversals. */
    bool open;                       /* under the engine's lock */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t started;  /* starts (release by the starter) */
    _Atomic uint64_t finished;       /* starts finished (release by the dispatcher) */
    _Atomic int32_t status;          /* MKRT_OK, or why the last run failed */
    uint32_t root;
    /* Counters of its runs (written by the dispatcher, relaxed). */
    _Atomic uint64_t levels_pushed, levels_pulled, edges;
    /* Edges its pulled and sweep rounds ran (the workers add, relaxed:
     * a statistic; counted here, not by the dispatcher at completion,
     * where the pulled round of another lane may be the last taken). */
    _Atomic uint64_t pulled_edges;
    uint64_t run_edges_base;
    /* CC and PageRank: their arrays and phases (set by open, before any
     * start publishes the traversal's run; graph/sweep.h). */
    struct mkrt__sweep *sweep;
    /* A run on the device (graph/device.c): the job the device backend
     * runs whole (dispatcher-only: written at the take, by the backend's
     * wait or the host run before the batch completes, read at ran). */
    mkrt__device_job job;
    mkrt__traversal *retired_next; /* the engine's retired lanes (engine.c) */
    size_t words;                  /* of each bitset (the graph's when it was made) */
    uint32_t vertices;             /* of its own values */
};

struct mkrt__graph_engine {
    mkrt__graph_host host;
    mkrt_graph graph;       /* vertices 0: none registered */
    /* The graph and the cell lanes are set (release by registration): the
     * dispatcher, which runs from create on, reads them only after an
     * acquire load of this. */
    _Atomic bool ready;
    /* Cell lanes of a graph registered before (a second registration):
     * the dispatcher may still look at them, so they are freed at destroy. */
    mkrt__traversal *retired;
    uint32_t chunk;         /* edges per chunk: min(MKRT__CHUNK_EDGES_MAX, max_batch) */
    uint64_t bucket_width;  /* distance buckets (round.c) */
    uint64_t bucket_min;    /* ... for levels of this many vertices or more */
    size_t words;           /* words of one bitset */
    /* Bit v: vertex v has edges (offsets[v] != offsets[v + 1]). An op that
     * lowers a vertex marks it in the next frontier only then; this small
     * bitset answers without the random read of offsets (a cache miss per
     * changed target at scale 18, measured 25% of SSSP's edge time). Set
     * at registration (no batch runs), read-only after. */
    _Atomic uint64_t *edged; /* a bitmap (base/bitmap.h), as w, r, visited */
    /* A weighted graph's rows interleaved: edge i is (rows[2i], rows[2i +
     * 1]) = (targets[i], weights[i]), so a row's start is one miss, not
     * two (the built-in pushes of RELAX and SSSP read it; BFS and the
     * user ops read targets). NULL without weights or when its allocation
     * failed: the separate arrays then. Set at registration, read-only
     * after; rows_bytes is its size. */
    uint32_t *rows;
    size_t rows_bytes;
    /* With rows: light[v], for a hub v (MKRT__HUB_EDGES), counts its light
     * edges (weight below bucket_width), which its row in rows lists last
     * (engine.c). NULL (no rows, or no memory): no level splits. Set at
     * registration, read-only after. */
    uint32_t *light;
    uint32_t lane_op[MKRT__LANE_PUBLIC]; /* the cell lanes' ops */
    uint32_t lanes_used;    /* user lanes claimed (1..) */
    /* The lanes; public ones published with release (mkrt_traversal_open),
     * never taken back before destroy (close keeps the object for reuse). */
    _Atomic(mkrt__traversal *) lanes[MKRT__LANES];
    _Atomic uint32_t nlanes;      /* lanes in use: 0 .. nlanes - 1 */
    mkrt__mutex lock;             /* opening and closing public traversals */
    alignas(MKRT_CACHE_LINE) mkrt__waitq finished_wq; /* traversal waiters (mkrt__traversal_finish) */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t starts; /* traversal starts (any thread) */
    _Atomic uint64_t starts_seen; /* ... the dispatcher has looked at */
    /* The lanes' round state (x) and the level decisions are written by
     * the token holder's rounds and by a run of levels' barrier (round.c,
     * next_level): one at a time, under this flag (acquire to take,
     * release to give back). */
    alignas(MKRT_CACHE_LINE) _Atomic bool rounds_lock;
    /* Dispatcher-only. */
    alignas(MKRT_CACHE_LINE) uint32_t next_lane; /* where the next round starts */
    /* Edges pulled rounds ran (workers add; the dispatcher takes). */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t pulled;
    /* Counters (relaxed): levels by the rounds' writer (rounds_lock),
     * edges by the holder and the workers (fetch-add). */
    _Atomic uint64_t levels_pushed, levels_pulled, edges;
    mkrt__source source; /* the engine as a source of work (source.c) */
    /* The level started last (dispatcher-only; round.c), for EXPLAIN: its
     * density, GraphBLAS class (PULL's lanes) and whether it was queued. */
    uint32_t level_density_bps;
    mkrt_plan_frontier level_class;
    bool level_queue;
    /* Device traversal jobs (graph/device.c): the slots the device has
     * (0: the public traversals run here; release by the runtime after
     * the graph went to the device, acquire by the dispatcher), whether a
     * job round is out, and how many started traversals waited for a slot
     * at the last job round (EXPLAIN's split). Dispatcher-only but
     * device_jobs. */
    _Atomic uint32_t device_jobs;
    bool jobs_out;
    uint32_t jobs_waiting;
};

/* A run on the device: t->x.dev. */
enum { MKRT__DEV_NONE, MKRT__DEV_WAITING, MKRT__DEV_RUNNING };
/* A job chunk (mkrt__chunk.first): the lane's whole run, on the device. */
#define MKRT__CHUNK_DEVICE (UINT64_MAX - 2)

/* Edges per chunk item, at most (and the cap on max_batch's share). */
#define MKRT__CHUNK_EDGES_MAX 256u

static inline mkrt__traversal *mkrt__lane_at(const mkrt__graph_engine *e, uint32_t lane)
{
    /* acquire: pairs with the release store that published the lane. */
    return atomic_load_explicit((_Atomic(mkrt__traversal *) *)&e->lanes[lane], memory_order_acquire);
}

static inline void mkrt__chunk_get(const mkrt_item *it, mkrt__chunk *c)
{
    _Static_assert(sizeof(mkrt__chunk) == sizeof(mkrt_item), "a chunk fills an item's slot");
    memcpy(c, it, sizeof *c);
}

static inline void mkrt__chunk_put(mkrt_item *it, const mkrt__chunk *c)
{
    memcpy(it, c, sizeof *c);
}

/* A dispatcher-only counter (relaxed: stats readers need no ordering). */
static inline void mkrt__graph_count(_Atomic uint64_t *v, uint64_t d)
{
    atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + d, memory_order_relaxed);
}

/* A run of levels of a public BFS or SSSP (round.c, plan/source.h): the
 * item of a batch of its own; its parts are claimed from the frontier. */
#define MKRT__CHUNK_LEVELS (UINT64_MAX - 3)

#define MKRT__QUEUE_EMPTY UINT32_MAX
#define MKRT__QUEUE_BLOCK 16u

/* QUEUE: v's bit was just set in w by this thread's OR: list it in an
 * entry of its own (the dispatcher's roots; apply.c reserves blocks). */
static inline void mkrt__queue_add_one(mkrt__traversal *t, uint32_t v)
{
    /* relaxed: see the fields. */
    if (atomic_load_explicit(&t->qon, memory_order_relaxed)) {
        uint64_t i = atomic_fetch_add_explicit(&t->wq_n, 1, memory_order_relaxed);
        if (i < t->qcap)
            atomic_store_explicit(&t->wq[i], v, memory_order_relaxed);
        else /* full (wq_n says so at the swap): no more appends this level */
            atomic_store_explicit(&t->qon, false, memory_order_relaxed);
    }
}

/* Entries of one sparse queue for a traversal of `words` bitset words:
 * an eighth of the vertices (QUEUE keeps levels of at most 15% in the
 * queue; a larger next level overflows it and is scanned). */
static inline size_t mkrt__queue_cap(size_t words)
{
    return words * 8 + 64;
}

/* traversal.c: allocates a traversal's bitsets (and values when own). */
mkrt__traversal *mkrt__traversal_new(mkrt__graph_engine *e, uint32_t lane, mkrt__lane_kind kind, bool own_values);
void mkrt__traversal_free(mkrt__traversal *t);
/* device.c: at the take-up of a start, whether the device runs it (it is
 * then no lane of the rounds until it finished). */
bool mkrt__graph_device_claim(mkrt__traversal *t);
/* device.c: a job round into items (n 0: none now); run: job chunks on the
 * host; ran: finishes the traversals whose jobs completed; job: the job of
 * a chunk, or NULL; abandon: a job chunk that will not run. */
size_t mkrt__graph_device_take(mkrt__graph_engine *e, mkrt_item *items, bool batch_running);
void mkrt__graph_device_run(mkrt__graph_engine *e, const mkrt_item *items, size_t from, size_t to);
uint64_t mkrt__graph_device_ran(mkrt__graph_engine *e);
mkrt__device_job *mkrt__graph_device_job(mkrt__graph_engine *e, const mkrt_item *item);
bool mkrt__graph_device_abandon(mkrt__graph_engine *e, const mkrt_item *item);
/* The traversal finished a run (dispatcher; no batch runs): round.c,
 * sweep.c and device.c end runs, so it lives here, below all three. */
static inline void mkrt__traversal_finish(mkrt__traversal *t, mkrt_status st)
{
    t->x.active = false;
    /* relaxed: published by the release store of finished below. */
    atomic_store_explicit(&t->status, (int32_t)st, memory_order_relaxed);
    /* release: pairs with the acquire in the waits (the values are final). */
    atomic_store_explicit(&t->finished, t->x.seen, memory_order_release);
    mkrt__waitq_notify(&t->engine->finished_wq);
}


/* ---- the source's side (source.c registers them in the table) ---- */
/* The dispatcher's side (the dispatch token's holder). */
typedef struct mkrt__round {
    size_t n;         /* chunks written */
    uint64_t edges;   /* edge items they stand for (pushed rounds) */
    bool pull;        /* a pulled round: the edges are known once it ran */
    bool levels;      /* items[0] is a run of levels (MKRT__CHUNK_LEVELS) */
} mkrt__round;
/* Writes a round into items (at most max_batch edges); n 0: none now.
 * batch_running: a batch is launched and not finished (a level may then
 * not end). round.c */
mkrt__round mkrt__graph_round_take(mkrt__graph_engine *e, mkrt_item *items, bool batch_running);
/* Whether the engine has work: frontier bits, a level under way, or a
 * traversal started and not yet taken up. */
bool mkrt__graph_pending(mkrt__graph_engine *e);
/* Any thread, without the token: a traversal was started since the
 * dispatcher last looked (it wakes the dispatcher). */
bool mkrt__graph_wants(mkrt__graph_engine *e);
/* After a round completed: the edges it pulled (0 for a pushed round). */
uint64_t mkrt__graph_pulled_take(mkrt__graph_engine *e);
/* The edge item a round's chunk ran as its failed edge (apply.c). */
mkrt_item mkrt__graph_edge_item(const mkrt__graph_engine *e, const mkrt_item *chunk, uint64_t edge,
                                bool pulled);
uint64_t mkrt__graph_chunk_edge(const mkrt__graph_engine *e, const mkrt_item *chunk, uint32_t j, bool *exists);
/* Destroy timed out: a round that is not run; public traversals in it end
 * with MKRT_ETIMEDOUT. Returns whether the chunk stands for items (a cell
 * lane's: fail its edges one by one). */
bool mkrt__graph_chunk_abandon(mkrt__graph_engine *e, const mkrt_item *chunk);
/* The backend's side (any worker): runs round chunks items[from, to);
 * failures of user ops go to fails in the engine's own encoding (a pushed
 * edge: (k | j << 24, status); a pulled edge: (k, status) then the edge
 * index as a second pair); adds to *changed the edges that changed their
 * target. */
void mkrt__graph_apply(mkrt__graph_engine *e, const mkrt_item *items, size_t from, size_t to,
                       mkrt__fail_list *fails, uint64_t *changed);
/* A run of levels (round.c; plan/source.h): any worker claims and runs a
 * part of the open level (false: none left); the barrier's last arriver
 * ends the level and opens the next (false: the run ends, the lane is the
 * rounds' again). */
bool mkrt__graph_level_part(mkrt__graph_engine *e, const mkrt_item *item, mkrt__fail_list *fails);
bool mkrt__graph_next_level(mkrt__graph_engine *e, const mkrt_item *item, bool yield, bool *alone);
/* Whether a chunk item is a pulled one. */
bool mkrt__graph_chunk_pulled(const mkrt_item *chunk);

#endif
