/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/stats.h
 * @brief The runtime's counters and its backend's description.
 *
 */
#ifndef MKRT_STATS_H
#define MKRT_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/config.h"
#include "mkrt/explain.h"
#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief A snapshot of the runtime's counters (mkrt_stats_read()). */
typedef struct mkrt_stats {
    uint64_t published, executed, pruned, failed;
    uint64_t batches, layers, global_barriers;
    uint64_t plan_cache_hits, plan_cache_misses;
    uint64_t ring_high_water;      /**< Most items seen waiting in one ring. */
    uint64_t dead_letters_dropped; /**< Failures lost because the dead-letter ring was full (also counted failed). */
    uint64_t latency_samples;      /**< Publish-to-completion samples taken. */
    uint64_t latency_p50_ns, latency_p99_ns, latency_p999_ns; /* publish to completion */
    uint32_t producers_open;       /**< Producers in the runtime (closed ones count until retired). */
    uint32_t workers;              /**< CPU workers. */
    const char *backend;           /**< What runs batches now: "cpu", "sim" or "cuda" (static string). */
    uint64_t device_batches;       /**< Batches the device ran. */
    uint64_t device_failures;      /**< Device errors or watchdog trips. */
    /** As mkrt_backend_describe(): the backend and why AUTO fell back; owned
     *  by the runtime, valid until mkrt_destroy(). */
    const char *backend_detail;
    uint64_t emitted; /**< Items emitted by ops (mkrt_op_emit(), ::MKRT_OP_RELAX). */
    /** Items that changed their output: on the CPU pool (mkrt_op_changed(),
     *  the update built-ins), and the update built-ins and traversal edges
     *  a megakernel device ran. */
    uint64_t changed;
    /** What the plan decided, per decision (indices: ::mkrt_plan_counter). */
    uint64_t plan_counts[MKRT_PLAN_COUNTERS];
    /** Frontier levels run top-down (the frontier's edges pushed), over
     *  the host's traversals: RELAX, expanding user ops, mkrt_traversal_open(). */
    uint64_t levels_pushed;
    /** Frontier levels run bottom-up (unvisited vertices pulled from the
     *  frontier; mkrt_op_desc::pulls, a symmetric BFS traversal). */
    uint64_t levels_pulled;
    /** Edges the host's frontier rounds looked at, pushed and pulled. */
    uint64_t edges_examined;
    /** Work the CPU pool ran, in units: an item of a batch (a traversal
     *  round's chunk counts as one), or a part of a traversal's level run
     *  inside the workers (a claim of up to 32 frontier words, 64 queue
     *  entries, 2 visited words or one block of CC or PageRank vertices). */
    uint64_t units_run;
    /** Of units_run, those the thread that planned them ran itself (the
     *  holder of the planning role at the time: the dispatcher thread, a
     *  waiter that helped, or a pool thread that took the role); the rest
     *  ran on the pool's other threads. units_by_planner / units_run is
     *  the planner's share of the work. */
    uint64_t units_by_planner;
    /** @var published
     *  @brief Items accepted by mkrt_publish() and friends. */
    /** @var executed
     *  @brief Items that ran successfully. Once the runtime is quiescent,
     *  published + emitted = executed + pruned + failed. */
    /** @var pruned
     *  @brief Items dropped as redundant duplicates. */
    /** @var failed
     *  @brief Items that went to the error path. */
    /** @var batches
     *  @brief Batches run. */
    /** @var layers
     *  @brief Layers (barrier groups) run, over all batches. */
    /** @var global_barriers
     *  @brief Barriers between layers, over all batches. */
    /** @var plan_cache_hits
     *  @brief Batches whose shape (op mix, size, arms, handle span) the
     *  runtime's plan cache knew: the planning thread reused what it
     *  learned (ARMS's detector, the split levelling) instead of measuring
     *  it again. One lookup per levelled batch: hits + misses = batches
     *  levelled. */
    /** @var plan_cache_misses
     *  @brief Batches whose shape the plan cache did not know (first of
     *  their shape, or evicted). */
    /** @var latency_p50_ns
     *  @brief Median publish-to-completion latency, in ns. */
    /** @var latency_p99_ns
     *  @brief 99th percentile publish-to-completion latency, in ns. */
    /** @var latency_p999_ns
     *  @brief 99.9th percentile publish-to-completion latency, in ns. */
} mkrt_stats;

/** @brief Counters of one producer (mkrt_stats_producers()). */
typedef struct mkrt_producer_stats {
    uint32_t id; /**< The producer's id, unique within the runtime, in opening order. */
    uint64_t published, completed;
    /** @var published
     *  @brief Items this producer published. */
    /** @var completed
     *  @brief Items of this producer that completed (ran, were pruned or failed). */
} mkrt_producer_stats;

/**
 * @brief A snapshot of the counters.
 *
 * The counters are read one after another while the runtime runs, not
 * under a lock: published + emitted = executed + pruned + failed holds
 * exactly once the runtime is quiescent (mkrt_quiesce(), mkrt_drain()
 * with nothing emitted pending); while items run, a read may see an item
 * counted published and not yet completed, and, for an item whose
 * producer is still returning from its publish, the other way round.
 *
 * @param rt The runtime.
 * @param[out] out The counters.
 * @retval MKRT_OK `*out` is set.
 * @retval MKRT_EINVAL rt or out is NULL.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread, at any time before mkrt_destroy().
 */
mkrt_status mkrt_stats_read(mkrt_runtime *rt, mkrt_stats *out);
/**
 * @brief Counters of the producers in the runtime.
 *
 * Open producers, and closed ones the runtime has not retired yet.
 *
 * @param rt The runtime.
 * @param[out] out Room for max entries.
 * @param max Most entries to fill.
 * @return How many entries were filled; 0 for a NULL rt, or a NULL out
 *         with max > 0.
 * @par Thread safety
 * Any thread, before mkrt_destroy().
 */
size_t mkrt_stats_producers(mkrt_runtime *rt, mkrt_producer_stats *out, size_t max);

/**
 * @brief Describes the backend and why it was chosen.
 *
 * For example "cpu: 2 workers", "cpu: 2 workers (auto fell back: ...)",
 * or, once a device failed, "cpu: 2 workers (the device failed and is not
 * used again: ...)".
 *
 * @param rt The runtime.
 * @return A string owned by the runtime (valid until mkrt_destroy()), or a
 *         static message saying so for a NULL rt.
 * @par Thread safety
 * Any thread, before mkrt_destroy().
 */
const char *mkrt_backend_describe(mkrt_runtime *rt);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_STATS_H */
