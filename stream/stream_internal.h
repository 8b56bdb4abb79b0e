/* SPDX-License-Identifier: BSD-2-Clause */
/* src/stream/stream_internal.h - the streaming graph's state, shared by its
 * files: the adjacency (stream_graph.c), the ops and the update log
 * (stream_ops.c), the incremental repair (stream_incr.c), the published
 * results and views (stream_view.c), the oracle (stream_oracle.c).
 * Only mkrt's public headers and base/ helpers are used. */
#ifndef MKRT_SRC_STREAM_INTERNAL_H
#define MKRT_SRC_STREAM_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "mkrt_stream/stream.h"

#define MKRT__SNONE UINT32_MAX
#define MKRT__SLOG_CHUNK 4096u
#define MKRT__SLOG_CHUNKS 4096u
/* The gate's writer bit; the low bits count updates inside. */
#define MKRT__SGATE_WRITER 0x80000000u

enum { MKRT__SOP_INSERT = 0, MKRT__SOP_DELETE = 1, MKRT__SOP_APPLY = 2 };
/* Arming states of the apply item (stream_ops.c). */
enum { MKRT__SARM_IDLE = 0, MKRT__SARM_EMITTING = 1, MKRT__SARM_ARMED = 2 };

typedef struct mkrt__sedge {
    uint32_t to, w;
} mkrt__sedge;

/* One applied update in the log: kind MKRT__SOP_INSERT or _DELETE, or
 * MKRT__SNONE for a slot whose update failed. */
typedef struct mkrt__slog_entry {
    uint32_t u, v, w, kind;
} mkrt__slog_entry;

/* One update of a parallel batch (stream_par.c): its log slot (NULL: it
 * failed its checks and changes nothing), its status when it failed
 * them, whether it inserts, and (stream_par.c's) where its outcome is. */
typedef struct mkrt__spitem {
    mkrt__slog_entry *slot;
    int32_t st;
    uint32_t at;
    bool insert;
} mkrt__spitem;

/* Batches of at least this many updates go to the helpers (stream_par.c). */
#define MKRT__SPAR_MIN 1024u

typedef struct mkrt__spool mkrt__spool;

typedef struct mkrt__sadj {
    mkrt__sedge *e;
    uint32_t deg, cap;
} mkrt__sadj;

/* One thread's repair scratch: an indexed heap, marks (stamped), a
 * queue and the seeds, each one entry per vertex. */
typedef struct mkrt__sscratch {
    uint32_t *heap, *hpos, *mark, *queue, *seeds;
    uint32_t heap_n, stamp;
} mkrt__sscratch;

/* One standing query: the writer's values and dependency tree, what the
 * current and the previous apply changed, and the two published copies. */
typedef struct mkrt__squery {
    mkrt_stream_query q;
    uint64_t *val;
    uint32_t *parent;
    uint32_t *depth;  /* hops from the root of the vertex's tree (a bound: grows down the tree) */
    uint32_t *dstamp; /* apply number that last listed the vertex */
    uint32_t *cur, *prev;
    uint32_t cur_n, prev_n;
    uint64_t *copy[2];
} mkrt__squery;

struct mkrt_stream {
    mkrt_stream_config cfg;
    uint32_t n;
    /* Graph. */
    mkrt__sadj *adj;
    atomic_flag *lock;
    _Atomic uint64_t graph_bytes, edges;
    /* Update log: chunks allocated on first use and kept. */
    _Atomic(mkrt__slog_entry *) chunk[MKRT__SLOG_CHUNKS];
    _Atomic uint64_t log_len;
    _Atomic uint32_t gate;
    _Atomic uint32_t arm;
    _Atomic uint32_t cells; /* the runtime's cell count; 0 while unknown */
    /* Counters. */
    _Atomic uint64_t inserted, deleted, duplicates, failed_invalid, failed_absent, failed_resource,
        failed_queries, applies, reset, relaxed;
    /* Repair scratch (the writer inside the gate): scr[0] for the writer's
     * own thread, scr[t] for helper t of a parallel repair (stream_par.c). */
    mkrt__sscratch scr[MKRT_STREAM_APPLY_THREADS_MAX];
    uint32_t apply_no;
    /* Queries and their published copies. */
    mkrt__squery qs[MKRT_STREAM_QUERIES_MAX];
    _Atomic uint32_t front;
    _Atomic uint64_t readers[2];
    /* Each copy's position (updates in it). The front copy's is the
     * newest view's position, which mkrt_stream_stats_read reports. */
    _Atomic uint64_t copy_pos[2];
    bool loaded, updated;
    /* The helpers of a large mkrt_stream_apply batch (stream_par.c); NULL
     * with apply_threads <= 1. */
    mkrt__spool *pool;
};

/* stream_graph.c */
int mkrt__sgraph_init(mkrt_stream *s);
void mkrt__sgraph_free(mkrt_stream *s);
/* Under both endpoint locks. 0 inserted, 1 duplicate, or a failure status. */
int mkrt__sgraph_insert(mkrt_stream *s, uint32_t u, uint32_t v, uint32_t w);
/* Under both endpoint locks. MKRT_OK, MKRT_ESTATE (absent) or MKRT_ENOMEM never. */
mkrt_status mkrt__sgraph_delete(mkrt_stream *s, uint32_t u, uint32_t v);
/* Row x alone, by its batch's owner (stream_par.c): room for `more`
 * appends (0, or -1 when the memory cannot be had); one side of an insert
 * (0 appended, 1 duplicate, MKRT_EINVAL weight clash, MKRT_ENOMEM) or a
 * delete (MKRT_OK, MKRT_ESTATE), neither shrinking the row; and the
 * shrink a delete would have done, once after the batch. */
int mkrt__sgraph_reserve(mkrt_stream *s, uint32_t x, uint32_t more);
int mkrt__sgraph_half_insert(mkrt_stream *s, uint32_t x, uint32_t to, uint32_t w);
mkrt_status mkrt__sgraph_half_delete(mkrt_stream *s, uint32_t x, uint32_t to);
void mkrt__sgraph_trim(mkrt_stream *s, uint32_t x);
void mkrt__sgraph_lock2(mkrt_stream *s, uint32_t u, uint32_t v);
void mkrt__sgraph_unlock2(mkrt_stream *s, uint32_t u, uint32_t v);
/* The weight of edge {u, v}, 0 when absent (no update running). */
uint32_t mkrt__sgraph_weight(const mkrt_stream *s, uint32_t u, uint32_t v);
mkrt_status mkrt__sgraph_load(mkrt_stream *s, const uint32_t *src, const uint32_t *dst, const uint32_t *w,
                              size_t n, uint64_t *skipped, mkrt_error *err);

/* stream_par.c */
int mkrt__spar_init(mkrt_stream *s);
void mkrt__spar_free(mkrt_stream *s);
/* The entries of a parallel batch of n items, parts filled and slots
 * NULL; NULL when the batch runs on the caller alone (no helpers, fewer
 * than MKRT__SPAR_MIN updates, or no memory for the entries). */
mkrt__spitem *mkrt__spar_items(mkrt_stream *s, const mkrt_item *items, size_t n);
/* Inside the gate, alone, after the caller set each entry's slot and
 * insert: changes the graph for the entries with a slot. */
void mkrt__spar_changes(mkrt_stream *s);
/* Inside the gate, alone: repairs the queries for log entries 0..n-1 on
 * the helpers, one query at a time per thread; false (nothing done) when
 * the caller repairs alone (no helpers, one query, fewer than
 * MKRT__SPAR_MIN entries). */
bool mkrt__spar_repair(mkrt_stream *s, uint64_t n);
/* Entry i's outcome after mkrt__spar_changes (mkrt__sgraph_insert's). */
int mkrt__spar_outcome(const mkrt_stream *s, size_t i);

/* stream_incr.c */
/* Inside the gate, alone, before the repair of log entries 0..n-1 (by
 * mkrt__spar_repair or mkrt__sincr_query per query: stream_ops.c, repair):
 * a new stamp for the values it changes; returns the entries that
 * changed the graph (the view's position moves by them). */
uint64_t mkrt__sincr_begin(mkrt_stream *s, uint64_t n);
void mkrt__sincr_full(mkrt_stream *s, uint32_t qi);
/* Repairs one query for log entries 0..n-1 with scratch w (the entries
 * and the graph are read only; the query is the caller's alone). */
void mkrt__sincr_query(mkrt_stream *s, mkrt__sscratch *w, mkrt__squery *q, uint64_t n);
/* Allocates w's arrays (0) or leaves none (-1). */
int mkrt__sincr_scratch(const mkrt_stream *s, mkrt__sscratch *w);
int mkrt__sincr_init(mkrt_stream *s);
void mkrt__sincr_free(mkrt_stream *s);
/* The value an edge of weight w from a vertex of value x gives its other end. */
static inline uint64_t mkrt__sstep(mkrt_stream_kind k, uint64_t x, uint32_t w)
{
    if (x == MKRT_STREAM_UNREACHED)
        return x;
    return k == MKRT_STREAM_CC ? x : x + (k == MKRT_STREAM_BFS ? 1u : w);
}

/* stream_view.c */
void mkrt__sview_publish(mkrt_stream *s, uint64_t position);
void mkrt__sview_publish_all(mkrt_stream *s, uint64_t position);
/* A test seam: when set, called by the writer right after it made a new
 * copy the front, before it returns (tests read views and stats there).
 * The layer's tests link libmkrt_stream.a, built without the runtime's
 * test hooks, so the pointer is always there (NULL, one predictable
 * branch per publish); libmkrt_stream.so does not export it. */
extern void (*mkrt__stream_hook_published)(mkrt_stream *s);
/* The front copy's position (the newest view's). */
uint64_t mkrt__sview_position(const mkrt_stream *s);

/* stream_oracle.c */
mkrt_status mkrt__soracle(const mkrt_stream *s, const mkrt_stream_query *q, uint64_t *out, mkrt_error *err);

#endif
