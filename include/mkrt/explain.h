/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/explain.h
 * @brief What the plan decided for the last batches, and why (the
 * database world's EXPLAIN ANALYZE: inputs, choice, measured time).
 *
 * The plan makes eight decisions per batch or frontier level, each a rule
 * of the seeds' planners fed with what the data path measures:
 * - ::MKRT_PLAN_WAKE: workers (blocks) per layer; a participant gets at
 *   least share_min items, the measured hand-off cost over the measured
 *   ns per item (off: 2048).
 * - ::MKRT_PLAN_SHED: fewer workers under pressure (producers publishing
 *   on the CPUs; memory pressure of 8500 bps or more keeps 75% of the
 *   workers, down to 50% at 10000).
 * - ::MKRT_PLAN_FUSE: FusedWave, runs of narrow layers on one
 *   participant without barriers, when the topology selector chooses it.
 * - ::MKRT_PLAN_ROUTE: on a device runtime, small batches whose CPU cost
 *   is below the device's measured round trip run on the CPU pool.
 * - ::MKRT_PLAN_DRAIN: the ring a batch cut by max_batch drains first
 *   (aged rings first, then the fullest; nothing starves).
 *   It also honours the latency classes (mkrt_producer_set_class()):
 *   while interactive work waits a batch takes interactive work only,
 *   and waiting bulk work is requeued; bulk goes first again after 32
 *   such batches in a row or after mkrt_config::class_max_age_us of
 *   measured waiting (::mkrt_plan_class_why); while an interactive
 *   producer is open, bulk batches are cut to mkrt_config::class_slice_us
 *   of measured run time.
 * - ::MKRT_PLAN_PULL: push or pull per frontier level.
 * - ::MKRT_PLAN_ARMS: redundant arms skipped. An arm is one producer's
 *   run of items in a batch (the emitted items are one more); the seed's
 *   cross-arm detector (mkrt_dedupe_cross_arm(): same op, in and out as
 *   an item of an earlier arm, param ignored) names candidates, and a
 *   candidate is not run only where that is legal under the ordering
 *   contract: the last item before it that wrote its out is an item with
 *   its op and in, nothing wrote its in since, and that item's effect
 *   covers its own - NOP always, MIN and RELAX with a param at least as
 *   large, OR with param bits a subset. Never STORE, ADD, APPEND, ACC or
 *   a user op (see docs/design.md, "Skipping redundant arms"). Skipped
 *   items count as pruned. The detector costs more than the built-ins
 *   it skips, so it looks at a whole batch only where its measured cost
 *   fits in the dispatching thread's measured idle time (or is below the
 *   run time it saves), and otherwise probes 4096 items of batch 1 and
 *   of every 64th batch.
 * - ::MKRT_PLAN_QUEUE: the next frontier of a level as a sparse queue of
 *   vertices or a dense bitset: the topology selector's sparse band (at
 *   most 12.5% of the vertices; a queue holds to 15%) on the level's
 *   counted density;
 *   SSSP and weighted RELAX levels (distance buckets) keep the bitset.
 *
 * mkrt_config::plan_off turns decisions off (an OR of these bits) for A/B
 * runs; any other bit is refused by mkrt_create() with ::MKRT_EINVAL.
 */
#ifndef MKRT_EXPLAIN_H
#define MKRT_EXPLAIN_H

#include <stddef.h>
#include <stdint.h>

#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Off bit: workers per layer from measured costs (off: fixed share of 2048 items). */
#define MKRT_PLAN_WAKE 1u
/** @brief Off bit: worker shedding under producer and memory pressure. */
#define MKRT_PLAN_SHED 2u
/** @brief Off bit: FusedWave runs of narrow layers. */
#define MKRT_PLAN_FUSE 4u
/** @brief Off bit: small batches on the CPU pool instead of the device. */
#define MKRT_PLAN_ROUTE 8u
/** @brief Off bit: the drain's choice of the first ring (off: round robin). */
#define MKRT_PLAN_DRAIN 16u
/** @brief Off bit: pulled frontier levels (off: every level pushes). */
#define MKRT_PLAN_PULL 32u
/** @brief Off bit: skipping redundant arms (off: every candidate runs). */
#define MKRT_PLAN_ARMS 64u
/** @brief Off bit: sparse-queue frontiers (off: every level scans its bitset). */
#define MKRT_PLAN_QUEUE 128u
/** @brief Every decision bit (mkrt_config::plan_off accepts no other). */
#define MKRT_PLAN_ALL 255u

/** @brief Queue pressure: items queued against the backend's lanes. */
typedef enum mkrt_plan_pressure {
    MKRT_PLAN_PRESSURE_EMPTY,     /**< Nothing queued. */
    MKRT_PLAN_PRESSURE_LIGHT,     /**< Fewer items than lanes. */
    MKRT_PLAN_PRESSURE_BALANCED,  /**< At least one item per lane. */
    MKRT_PLAN_PRESSURE_SATURATED  /**< Four or more per lane, or a ring was cut. */
} mkrt_plan_pressure;

/** @brief Where a batch ran and why. */
typedef enum mkrt_plan_route {
    MKRT_PLAN_ROUTE_CPU_ONLY,   /**< No device (or it cannot take the batch). */
    MKRT_PLAN_ROUTE_DEVICE,     /**< The device. */
    MKRT_PLAN_ROUTE_CPU_SMALL   /**< A device could, but the batch is cheaper on the CPU pool. */
} mkrt_plan_route;

/** @brief Why the drain started at its first ring. */
typedef enum mkrt_plan_first {
    MKRT_PLAN_FIRST_ROUND_ROBIN, /**< Round robin (DRAIN off, or every ring empty). */
    MKRT_PLAN_FIRST_AGED,        /**< A ring cut 32 batches in a row. */
    MKRT_PLAN_FIRST_FULLEST      /**< The ring with the most items waiting. */
} mkrt_plan_first;

/** @brief Why a batch has its latency class (mkrt_plan_record::class_why). */
typedef enum mkrt_plan_class_why {
    MKRT_PLAN_CLASS_BULK_ONLY,   /**< Bulk: no interactive work waited (or DRAIN is off). */
    MKRT_PLAN_CLASS_INTERACTIVE, /**< Interactive work waited and bulk did not: interactive. */
    MKRT_PLAN_CLASS_FIRST,       /**< Interactive ahead of waiting bulk work (a requeue of bulk). */
    MKRT_PLAN_CLASS_AGED,        /**< Bulk, promoted: it was passed over 32 batches in a row. */
    MKRT_PLAN_CLASS_MAX_AGE      /**< Bulk, promoted: it waited mkrt_config::class_max_age_us. */
} mkrt_plan_class_why;

/** @brief GraphBLAS switch class of a frontier level. */
typedef enum mkrt_plan_frontier {
    MKRT_PLAN_FRONTIER_NONE,   /**< Not a frontier round. */
    MKRT_PLAN_FRONTIER_SPARSE, /**< Density at most 500 bps. */
    MKRT_PLAN_FRONTIER_HYBRID, /**< Between. */
    MKRT_PLAN_FRONTIER_DENSE   /**< Density at least 4000 bps. */
} mkrt_plan_frontier;

/** @brief Indices of mkrt_stats::plan_counts. */
typedef enum mkrt_plan_counter {
    MKRT_PLAN_N_WAKE_NARROWED, /**< Layers WAKE gave fewer participants than the width. */
    MKRT_PLAN_N_SHED,          /**< Batches whose width SHED lowered. */
    MKRT_PLAN_N_FUSED,         /**< Layers FUSE put on one participant. */
    MKRT_PLAN_N_CPU_ROUTED,    /**< Batches ROUTE kept on the CPU pool. */
    MKRT_PLAN_N_REQUEUES,      /**< Rings a full batch left items in (requeues). */
    MKRT_PLAN_N_PROMOTED,      /**< Drains that started at an aged ring. */
    MKRT_PLAN_N_FULLEST_FIRST, /**< Drains that started at the fullest ring. */
    MKRT_PLAN_N_PULL_LEVELS,   /**< Frontier levels (per pulling op) that ran pulled. */
    MKRT_PLAN_N_PUSH_LEVELS,   /**< Frontier levels (per pulling op) that ran pushed. */
    MKRT_PLAN_N_ARMS_SKIPPED,  /**< Items ARMS did not run (redundant arms; also in mkrt_stats::pruned). */
    MKRT_PLAN_N_QUEUE_LEVELS,  /**< Frontier levels whose vertices the rounds took from the sparse queue. */
    MKRT_PLAN_N_BITSET_LEVELS, /**< Frontier levels whose vertices the rounds took by scanning the bitset. */
    MKRT_PLAN_N_INTERACTIVE,   /**< Batches of interactive work (latency classes). */
    MKRT_PLAN_N_CLASS_REQUEUES, /**< Interactive batches drained while bulk work waited (bulk requeued). */
    MKRT_PLAN_N_CLASS_AGED,    /**< Bulk batches promoted after 32 requeues in a row. */
    MKRT_PLAN_N_CLASS_MAX_AGE, /**< Bulk batches promoted after waiting mkrt_config::class_max_age_us. */
    MKRT_PLAN_N_CLASS_HELD,    /**< Drains that left bulk work until the running batch completed (an interactive producer is open). */
    MKRT_PLAN_N_CLASS_CUT,     /**< Bulk batches cut to mkrt_config::class_slice_us of measured run time (an interactive producer is open). */
    MKRT_PLAN_N_LEVELS_ON,     /**< Level boundaries the CPU pool's workers crossed at a barrier (no dispatcher between the levels). */
    MKRT_PLAN_N_LEVEL_YIELDS,  /**< Runs of levels that gave way to the dispatcher at a boundary (DRAIN: other work waited). */
    MKRT_PLAN_COUNTERS         /**< The number of counters. */
} mkrt_plan_counter;

/** @brief One batch's plan: its inputs, the decisions and the measured time. */
typedef struct mkrt_plan_record {
    uint64_t batch;              /**< The batch's number, in drain order (from 1). */
    uint64_t items;              /**< Items it ran (after dedupe). */
    uint32_t layers;             /**< Its layers. */
    uint32_t on_device;          /**< 1: the device ran it; 0: the CPU pool. */
    /* inputs */
    uint64_t ring_waiting;       /**< Items left in the rings after its drain. */
    uint32_t pressure;           /**< ::mkrt_plan_pressure of the queue at its drain. */
    uint32_t memory_bps;         /**< Memory pressure, 0..10000 bps (0: no budget). */
    uint64_t cpu_ps_per_item;    /**< Measured CPU cost per item, in ps (0: not measured yet). */
    uint64_t handoff_ns;         /**< Measured hand-off and barrier cost per layer (0: not yet). */
    uint64_t device_trip_ns;     /**< Measured device round trip (0: not yet, or no device). */
    uint32_t frontier_bps;       /**< A frontier round's level density (vertices, bps). */
    uint32_t frontier_class;     /**< ::mkrt_plan_frontier of that level. */
    /* decisions */
    uint32_t width;              /**< Workers or blocks the batch may use (after SHED). */
    uint32_t workers;            /**< Most participants of any layer. */
    uint32_t share_min;          /**< WAKE's items per participant. */
    uint32_t grid_barriers;      /**< Barriers between layers it crossed. */
    uint32_t fused_layers;       /**< Layers FUSE put on one participant. */
    uint32_t topology;           /**< ::mkrt_wave_topology of FUSE's selector. */
    uint32_t route;              /**< ::mkrt_plan_route. */
    uint32_t first_reason;       /**< ::mkrt_plan_first of its drain. */
    uint32_t first_slot;         /**< The producer slot its drain started at. */
    uint32_t pulled;             /**< 1: a pulled frontier round. */
    uint32_t arms;               /**< Input of ARMS: the batch's arms (0: ARMS did not look). */
    uint32_t arm_skipped;        /**< Items ARMS did not run. */
    uint32_t frontier_queue;     /**< QUEUE for the last frontier level: 1 sparse queue, 0 bitset. */
    uint32_t plan_cache;         /**< The runtime's plan cache for its shape (the decisions learned: ARMS, SPLIT): 0 not asked (a frontier round), 1 hit, 2 miss; plus 4 when SPLIT levelled it in parts on the CPU pool's executors, 8 when it tried and the parts shared a handle (the one pass levelled it). */
    /* measured */
    uint64_t run_ns;             /**< Launch to completion seen by the dispatching thread, in ns. */
    /* device memory (inputs and the split's result) */
    uint64_t memory_budget;      /**< Device memory budget in bytes (0: none): mkrt_config::device_memory_budget, or the device's default. */
    uint32_t budget_from_device; /**< 1: the budget is the device's (free memory at mkrt_create less the reserve). */
    uint32_t split_layers;       /**< Layers the split added to fit the budget. */
    uint64_t resident_bytes;     /**< The runtime's data on the device (graph, frontier, cells and log in device memory), in bytes. */
    uint64_t peak_layer_bytes;   /**< The split's largest layer (frontier, scratch and output bytes). */
    /* latency classes (mkrt_producer_set_class()) */
    uint32_t klass;              /**< The batch's ::mkrt_class. */
    uint32_t class_why;          /**< ::mkrt_plan_class_why. */
    uint32_t bulk_age;           /**< Input: batches in a row that passed waiting bulk work over, before this one. */
    uint32_t bulk_cap;           /**< A bulk batch cut while an interactive producer is open: the items it could take (0: not cut). */
    uint64_t bulk_wait_ns;       /**< Input: how long waiting bulk work had been passed over, measured at this drain (0: none waited). */
} mkrt_plan_record;

struct mkrt_runtime;

/**
 * @brief The plans of the last batches, oldest first.
 *
 * The runtime keeps the last 64 records (written by the thread that
 * dispatches, read here without stopping it).
 *
 * @param rt The runtime.
 * @param[out] out Room for max records.
 * @param max Most records to return.
 * @return Records written; 0 for a NULL rt, or a NULL out with max > 0.
 * @par Thread safety
 * Any thread, before mkrt_destroy().
 */
size_t mkrt_plan_explain(struct mkrt_runtime *rt, mkrt_plan_record *out, size_t max);

/**
 * @brief Name of a decision bit (::MKRT_PLAN_WAKE ...).
 * @param bit One MKRT_PLAN_* bit.
 * @return "wake", "shed", "fuse", "route", "drain", "pull", "arms", or "unknown".
 * @return "wake", "shed", "fuse", "route", "drain", "pull", "queue", or "unknown".
 * @par Thread safety
 * Any thread.
 */
const char *mkrt_plan_decision_name(uint32_t bit);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_EXPLAIN_H */
