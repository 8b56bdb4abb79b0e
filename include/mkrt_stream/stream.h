/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt_stream/stream.h
 * @brief Streaming graphs: edge updates as items, analyses kept exact.
 *
 * A stream is a mutable undirected weighted graph plus standing queries
 * (BFS levels or SSSP distances from a source, connected components) whose
 * results stay exact while any number of producers publish edge
 * insertions and deletions as ordinary mkrt items. It is a layer on the
 * public API: mkrt_stream_register() registers three user ops on a
 * runtime (insert, delete, apply); producers publish the items that
 * mkrt_stream_insert_item() and mkrt_stream_delete_item() build.
 *
 * How an update travels:
 * - The insert or delete op checks the item (vertices below
 *   mkrt_stream_config::vertices, no self-loop, weight in
 *   1..mkrt_stream_config::weight_max) and changes the adjacency at once,
 *   under per-vertex locks, so a bad update fails as its own item (error
 *   callback, counted in ::mkrt_stream_stats) and never touches the graph.
 *   Deleting an absent edge fails with ::MKRT_ESTATE; inserting an edge
 *   that exists with the same weight is a duplicate: dropped and counted
 *   (exact duplicates in one batch are pruned by the runtime's dedupe);
 *   with another weight it fails with ::MKRT_EINVAL (delete it first).
 * - The first update after an apply emits one apply item. The apply op
 *   takes the update log exclusively (updates running meanwhile wait for
 *   it) and repairs every query incrementally, deletions first: a deleted
 *   edge that is not in a query's dependency tree is safe (RisGraph) and
 *   costs nothing; a deleted tree edge's child keeps its value when
 *   another neighbour gives it the same (a smaller BFS/SSSP value, or for
 *   CC a smaller depth, KickStarter's level), else the subtree below it is
 *   reset (KickStarter's trimming), pulls from its neighbours and
 *   propagates; then each insertion relaxes its edge and propagates only
 *   improvements.
 * - The apply op publishes the results for readers in one of two copies
 *   (left-right: the writer updates the copy nobody reads, flips, and
 *   before it next writes that copy waits for the readers still on it),
 *   so readers never wait and never see a half-applied batch.
 *
 * A producer that waits for its own updates may instead apply them on
 * its own thread with mkrt_stream_apply(): the same checks, graph change
 * and repair, under the same gate, with no runtime round trip.
 *
 * Latency classes: an update has the latency class of the producer that
 * publishes it (mkrt_producer_set_class()), and the apply item the class
 * of the update that emitted it. A stream fed by interactive producers
 * is an interactive stream: its updates and repairs run ahead of any
 * bulk work waiting in the runtime (another stream's loader, say), and
 * wait for at most the one batch running when they arrive. A stream fed
 * by both classes repairs in the class of the first update after its
 * last repair, and that repair covers every update logged so far
 * (bench/stream_bench --modes mixed measures two streams, one per
 * class).
 *
 * After mkrt_quiesce() returns on the runtime, every update published
 * before it is applied and a view equals a recompute on the graph as it
 * then is (mkrt_stream_recompute()).
 *
 * Consistent reads: a view (mkrt_stream_view_open()) reads the results as
 * of one point in the update stream, mkrt_stream_view::position: the
 * first `position` updates that changed the graph, in apply order, are
 * in (a duplicate changes nothing), none after,
 * for every query and vertex alike, while producers keep publishing.
 * Every update whose publish returned before a mkrt_quiesce() that
 * returned before the view opened is in.
 *
 * Values: BFS gives hops from the source, SSSP the sum of weights of a
 * shortest path, CC the smallest vertex number of the component; an
 * unreached vertex reads ::MKRT_STREAM_UNREACHED.
 */
#ifndef MKRT_STREAM_H
#define MKRT_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "mkrt/item.h"
#include "mkrt/op.h"
#include "mkrt/runtime.h"
#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Most standing queries one stream keeps. */
#define MKRT_STREAM_QUERIES_MAX 16u
/** @brief Largest mkrt_stream_config::weight_max. */
#define MKRT_STREAM_WEIGHT_LIMIT ((uint32_t)1 << 24)
/** @brief The value of a vertex a BFS or SSSP query does not reach. */
#define MKRT_STREAM_UNREACHED UINT64_MAX
/** @brief Largest mkrt_stream_config::apply_threads. */
#define MKRT_STREAM_APPLY_THREADS_MAX 16u
/** @brief Op numbers a stream registers: op_base .. op_base + 2. */
#define MKRT_STREAM_OPS 3u

/** @brief One standing query's kind. */
typedef enum mkrt_stream_kind {
    MKRT_STREAM_BFS = 1,  /**< Hops from the source. */
    MKRT_STREAM_SSSP = 2, /**< Weighted distance from the source. */
    MKRT_STREAM_CC = 3    /**< Smallest vertex number of the component (no source). */
} mkrt_stream_kind;

/** @brief A standing query: its kind and, for BFS and SSSP, its source vertex. */
typedef struct mkrt_stream_query {
    mkrt_stream_kind kind; /**< What it computes. */
    uint32_t source;       /**< Source vertex (BFS, SSSP); ignored for CC. */
} mkrt_stream_query;

/** @brief A stream's configuration: start from mkrt_stream_config_default(). */
typedef struct mkrt_stream_config {
    uint32_t vertices;   /**< Vertices 0..vertices-1 (the runtime needs at least as many cells) [2..2^31]. */
    uint32_t weight_max; /**< Largest edge weight (255) [1..::MKRT_STREAM_WEIGHT_LIMIT]. */
    uint32_t op_base;    /**< First of the ::MKRT_STREAM_OPS op numbers (4000) [MKRT_OP_USER_FIRST..MKRT_OP_MAX-3]. */
    uint32_t queries;    /**< Standing queries in query[] [1..::MKRT_STREAM_QUERIES_MAX]. */
    mkrt_stream_query query[MKRT_STREAM_QUERIES_MAX]; /**< The standing queries. */
    /** Threads mkrt_stream_apply() changes the graph on for a batch of
     *  1,024 updates or more, and that repair 1,024 logged updates or
     *  more of a stream with two queries or more (one query per thread,
     *  also in the apply op): the caller and apply_threads - 1 helpers
     *  the stream starts and keeps asleep between batches (0 or 1: the
     *  caller alone, no thread started) [0..::MKRT_STREAM_APPLY_THREADS_MAX]. */
    uint32_t apply_threads;
} mkrt_stream_config;

/** @brief The stream (opaque). */
typedef struct mkrt_stream mkrt_stream;

/** @brief What a stream has done (mkrt_stream_stats_read()). */
typedef struct mkrt_stream_stats {
    uint64_t inserted, deleted, duplicates;
    /** @var inserted
     *  @brief Insertions applied to the graph. */
    /** @var deleted
     *  @brief Deletions applied to the graph. */
    /** @var duplicates
     *  @brief Insertions of an edge already there with that weight, dropped. */
    uint64_t failed_invalid; /**< Updates failed for a bad vertex, weight, self-loop or weight clash (::MKRT_EINVAL). */
    uint64_t failed_absent;  /**< Deletions of an absent edge (::MKRT_ESTATE). */
    uint64_t failed_resource; /**< Updates failed for memory or room (::MKRT_ENOMEM, ::MKRT_EOVERFLOW). */
    uint64_t failed_queries; /**< View reads refused (bad query or vertex). */
    uint64_t applies;        /**< Repairs run (batches of updates applied to the results: by the apply op or mkrt_stream_apply()). */
    uint64_t position;       /**< Updates applied to the results so far (the newest view's position). */
    uint64_t reset;          /**< Vertex values reset by deletions (the trimmed subtrees), summed over queries. */
    uint64_t relaxed;        /**< Edges relaxed by the incremental repair, summed over queries. */
    uint64_t edges;          /**< Undirected edges in the graph now. */
    uint64_t graph_bytes;    /**< Bytes the adjacency holds from the allocator now. */
    uint64_t csr_bytes;      /**< Bytes a CSR of the same edges takes: 8 (vertices + 1) + 2 x 8 per edge (target, weight). */
} mkrt_stream_stats;

/** @brief A consistent read of the results (mkrt_stream_view_open()). */
typedef struct mkrt_stream_view {
    mkrt_stream *stream; /**< The stream; NULL once closed. */
    uint32_t copy;       /**< Which published copy it reads (internal). */
    uint64_t position;   /**< Updates in these results: the first `position` applied, none after. */
} mkrt_stream_view;

/**
 * @brief The defaults: no vertices (set them), weights 1..255, op_base 4000, no query.
 * @return The default configuration.
 * @par Thread safety
 * Any thread.
 */
mkrt_stream_config mkrt_stream_config_default(void);

/**
 * @brief Creates an empty stream (no edges; every query at its start value).
 * @param cfg The configuration (copied).
 * @param[out] out The stream; NULL on failure.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Created.
 * @retval MKRT_EINVAL cfg or out is NULL, or a field is out of range (the
 *         message names it, the value, the range and a Fix).
 * @retval MKRT_ENOMEM Memory could not be had; nothing is left allocated.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread.
 */
mkrt_status mkrt_stream_create(const mkrt_stream_config *cfg, mkrt_stream **out, mkrt_error *err);

/**
 * @brief Frees the stream. Destroy the runtime it is registered with first.
 * @param s The stream; NULL is a no-op.
 * @par Thread safety
 * Any thread, once, with no view open and no op of the stream running.
 */
void mkrt_stream_destroy(mkrt_stream *s);

/**
 * @brief Loads a batch of edges before any update, and computes every query from scratch.
 *
 * Self-loops, repeated edges (the first weight wins) are skipped and
 * counted in `*skipped`; weights of 0 become 1 and weights above
 * weight_max become weight_max. w may be NULL (every weight 1).
 *
 * @param s The stream (no edges yet, no op of it run yet).
 * @param src Edge sources.
 * @param dst Edge targets.
 * @param w Edge weights, or NULL.
 * @param n How many edges.
 * @param[out] skipped Edges skipped (may be NULL).
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Loaded.
 * @retval MKRT_EINVAL s is NULL, src or dst is NULL with n > 0, an endpoint
 *         is not below vertices (the message names the edge), or the stream
 *         already has edges or applied updates.
 * @retval MKRT_ENOMEM Memory could not be had; the stream is still empty.
 * @return The status, as listed.
 * @par Thread safety
 * Not concurrently with anything else on s.
 */
mkrt_status mkrt_stream_load(mkrt_stream *s, const uint32_t *src, const uint32_t *dst, const uint32_t *w,
                             size_t n, uint64_t *skipped, mkrt_error *err);

/**
 * @brief Registers the stream's ops on a runtime (before its first producer).
 * @param s The stream.
 * @param rt The runtime: mkrt_config::cells at least the stream's vertices.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK The ops op_base .. op_base + 2 are registered.
 * @retval MKRT_EINVAL s or rt is NULL, the runtime has fewer cells than
 *         the stream has vertices, or mkrt_op_register() refused (a
 *         producer is open already).
 * @return The status, as listed.
 * @par Thread safety
 * As mkrt_op_register().
 */
mkrt_status mkrt_stream_register(mkrt_stream *s, mkrt_runtime *rt, mkrt_error *err);

/**
 * @brief The stream's op numbers and registrations, for hosts that register ops themselves (mkrt-soak).
 * @param s The stream.
 * @param[out] ops Room for max op numbers.
 * @param[out] descs Room for max registrations.
 * @param max Room in ops and descs.
 * @return How many were written (::MKRT_STREAM_OPS), 0 for a NULL argument or too little room.
 * @par Thread safety
 * Any thread.
 */
size_t mkrt_stream_ops(const mkrt_stream *s, uint32_t *ops, mkrt_op_desc *descs, size_t max);

/**
 * @brief Builds the item that inserts edge {u, v} with weight w.
 *
 * Any numbers are encoded; the op checks them when it runs (a bad update
 * fails as an item). Handles are min(u, v) (out) and max(u, v) (in).
 *
 * @param s The stream.
 * @param u One endpoint.
 * @param v The other endpoint.
 * @param w The weight, 1..weight_max.
 * @param[out] item The item.
 * @retval MKRT_OK Built.
 * @retval MKRT_EINVAL s or item is NULL.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread.
 */
mkrt_status mkrt_stream_insert_item(const mkrt_stream *s, uint32_t u, uint32_t v, uint32_t w, mkrt_item *item);

/**
 * @brief Builds the item that deletes edge {u, v} (whatever its weight).
 * @param s The stream.
 * @param u One endpoint.
 * @param v The other endpoint.
 * @param[out] item The item.
 * @retval MKRT_OK Built.
 * @retval MKRT_EINVAL s or item is NULL.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread.
 */
mkrt_status mkrt_stream_delete_item(const mkrt_stream *s, uint32_t u, uint32_t v, mkrt_item *item);

/**
 * @brief Applies updates on the calling thread and repairs the results before it returns.
 *
 * The fast path for a producer that waits for its own updates (a
 * synchronous writer): no runtime is involved, so there is no publish,
 * no dispatcher hop, no apply item and no quiesce. The call takes the
 * update gate alone (waiting for updates and a repair running through the
 * runtime, which wait for it in turn), changes the graph, then repairs
 * every query for these updates and for any the runtime's ops logged
 * before (an apply item already emitted then finds nothing to do), and
 * publishes the results: a view opened after the call returns holds them.
 * Each update is checked and counted as the ops do (::mkrt_stream_stats),
 * in array order. To keep order with updates the caller also publishes
 * through a runtime, wait for those (mkrt_wait()) before calling.
 *
 * @param s The stream.
 * @param items n items from mkrt_stream_insert_item() / mkrt_stream_delete_item().
 * @param n How many (0: only repairs what the runtime logged).
 * @param[out] status Room for n statuses (how each update went), or NULL.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Every update applied (or was a duplicate).
 * @retval MKRT_EINVAL s is NULL, items is NULL with n > 0, or an item is
 *         not one of the stream's updates: nothing was applied.
 * @return Otherwise the status of the first update that failed (the
 *         message says how many failed, which, why, and a Fix); the other
 *         updates are applied.
 * @par Thread safety
 * Any thread, concurrently with the stream's ops and other callers; not
 * while the calling thread holds a view open, nor from inside an op.
 */
mkrt_status mkrt_stream_apply(mkrt_stream *s, const mkrt_item *items, size_t n, mkrt_status *status,
                              mkrt_error *err);

/**
 * @brief Reports a failed stream item: explains it with a Fix, and counts it if the ops never saw it.
 *
 * Call it from the runtime's error callback (mkrt_config::on_error) for
 * items of the stream's ops. An update naming a handle at or above the
 * runtime's cells is refused by the runtime before any op runs; this call
 * counts it in mkrt_stream_stats::failed_invalid (the ops count every
 * other failure themselves).
 *
 * @param s The stream.
 * @param item The failed item.
 * @param why The status it failed with.
 * @param[out] buf Room for len bytes; NUL-terminated.
 * @param len Room in buf.
 * @retval MKRT_OK Written.
 * @retval MKRT_EINVAL s, item or buf is NULL, len is 0, or the item is not one of the stream's ops.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread (an absent edge is reported from the item's status: the
 * graph may have changed since the item ran).
 */
mkrt_status mkrt_stream_failed(mkrt_stream *s, const mkrt_item *item, mkrt_status why, char *buf, size_t len);

/**
 * @brief Opens a consistent view of every query's results (never waits).
 * @param s The stream.
 * @param[out] view The view; close it with mkrt_stream_view_close() soon:
 *        the apply op waits for views of the copy it is about to rewrite.
 *        Do not call mkrt_quiesce(), mkrt_drain() or mkrt_wait() while a
 *        view is open on the same thread.
 * @retval MKRT_OK Open.
 * @retval MKRT_EINVAL s or view is NULL.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread; a view belongs to the thread that opened it.
 */
mkrt_status mkrt_stream_view_open(mkrt_stream *s, mkrt_stream_view *view);

/**
 * @brief Reads values first .. first + count - 1 of one query from a view.
 * @param view An open view.
 * @param query The query's index in mkrt_stream_config::query.
 * @param first First vertex.
 * @param count How many vertices.
 * @param[out] out Room for count values.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Read.
 * @retval MKRT_EINVAL A NULL argument, a closed view, a query or a vertex
 *         range that does not exist (counted in failed_queries).
 * @return The status, as listed.
 * @par Thread safety
 * The view's thread.
 */
mkrt_status mkrt_stream_view_read(const mkrt_stream_view *view, uint32_t query, uint32_t first, size_t count,
                                  uint64_t *out, mkrt_error *err);

/**
 * @brief Closes a view.
 * @param view The view; NULL or a closed view is a no-op.
 * @par Thread safety
 * The view's thread.
 */
void mkrt_stream_view_close(mkrt_stream_view *view);

/**
 * @brief Computes one query from scratch on the graph as it is (the oracle).
 * @param s The stream, quiescent (no op of it running).
 * @param query The query's index.
 * @param[out] out Room for vertices values.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Computed.
 * @retval MKRT_EINVAL A NULL argument or no such query.
 * @retval MKRT_ENOMEM Scratch memory could not be had.
 * @return The status, as listed.
 * @par Thread safety
 * Not concurrently with the stream's ops.
 */
mkrt_status mkrt_stream_recompute(const mkrt_stream *s, uint32_t query, uint64_t *out, mkrt_error *err);

/**
 * @brief Writes the graph as a CSR (both directions of every edge).
 * @param s The stream, quiescent.
 * @param[out] offsets Room for vertices + 1 entries.
 * @param[out] targets Room for cap entries.
 * @param[out] weights Room for cap entries, or NULL.
 * @param cap Room in targets and weights: at least 2 x mkrt_stream_stats::edges.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Written.
 * @retval MKRT_EINVAL A NULL argument, or cap too small (the message says how much is needed).
 * @return The status, as listed.
 * @par Thread safety
 * Not concurrently with the stream's ops.
 */
mkrt_status mkrt_stream_csr(const mkrt_stream *s, uint64_t *offsets, uint32_t *targets, uint32_t *weights,
                            uint64_t cap, mkrt_error *err);

/**
 * @brief Reads the stream's counters.
 * @param s The stream.
 * @param[out] out The counters.
 * @retval MKRT_OK Read.
 * @retval MKRT_EINVAL s or out is NULL.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread (each counter is read atomically, not all at one instant).
 */
mkrt_status mkrt_stream_stats_read(const mkrt_stream *s, mkrt_stream_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_STREAM_H */
