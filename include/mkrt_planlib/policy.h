/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt_planlib/policy.h
 * @brief The launch policy: from queue and workload telemetry to a launch
 * recommendation (topology, workers, geometry, hit capacity, memory
 * envelope, JIT or interpreter).
 *
 * Behaviour (reference: vyre megakernel launch policy), in order:
 * 1. Memo: without a previous topology, the (policy, request) pair is
 *    looked up in a per-thread cache of 128 recommendations (least recently
 *    used evicted; no locks; errors are never cached).
 * 2. Inference of missing signals: when density is 0 and queue and nodes
 *    are known, density = clamp(floor(a x 10000 / nodes), 1, 10000) with
 *    a = min(queue, nodes); when pressure is 0 and resident and budget are
 *    known, memory pressure = min(10000, floor(resident x 10000 / budget)).
 * 3. Hot promotion: hot opcodes >= 8, hot windows >= 4.
 * 4. Topology, first match: empty queue -> EMPTY; pressure >= 8500 ->
 *    MEMORY_CONSTRAINED; density <= 500 -> SPARSE_FRONTIER; density >= 4000
 *    on a large graph (nodes known and edges >= 65536) with hot promotion
 *    -> FUSED_DENSE; density >= 4000 -> DENSE_FRONTIER; else
 *    HYBRID_FRONTIER.
 * 5. Hysteresis of 250 bps against a previous topology (see
 *    mkrt_launch_recommend_with_previous()).
 * 6. Worker shedding: MEMORY_CONSTRAINED keeps 75% of the workers at the
 *    threshold down to 50% at 10000 bps; SPARSE_FRONTIER scales workers by
 *    density / 500 with a floor of min(workers, 32).
 * 7. Grid (mkrt/sizing.h), queue pressure against the grid's lanes, hit
 *    capacity (requested, else max(1024, queue x hits x m) with m = 2, or
 *    1 under memory pressure), peak device bytes = resident + 16 per hit;
 *    over a non-zero budget: ::MKRT_EBUDGET.
 * 8. JIT when queue >= 4096, hot promotion, or FUSED_DENSE; priority aging
 *    when work was requeued or aged >= 32.
 *
 * The numbers are those of mkrt_launch_policy_standard(); each comes from a
 * field of ::mkrt_launch_policy. All arithmetic is checked; overflow is
 * ::MKRT_EOVERFLOW naming the value. The policy functions are pure apart
 * from the calling thread's memo, and safe from any thread.
 */
#ifndef MKRT_PLANLIB_POLICY_H
#define MKRT_PLANLIB_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt_planlib/sizing.h"
#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Queue length against the grid's lanes (lanes = grid width x workgroup width). */
typedef enum mkrt_queue_pressure {
    MKRT_PRESSURE_EMPTY,    /**< Nothing queued. */
    MKRT_PRESSURE_LIGHT,    /**< Fewer items than lanes. */
    MKRT_PRESSURE_BALANCED, /**< At least one item per lane, below saturation. */
    /** At least saturated_waves items per lane, or any requeued work. */
    MKRT_PRESSURE_SATURATED
} mkrt_queue_pressure;

/** @brief How the recommended launch runs its ops. */
typedef enum mkrt_execution_mode {
    MKRT_EXEC_INTERPRETER, /**< Interpret the ops. */
    MKRT_EXEC_JIT          /**< Compile (JIT) the hot path. */
} mkrt_execution_mode;

/** @brief Dispatch topology chosen by the launch policy. */
typedef enum mkrt_dispatch_topology {
    MKRT_TOPOLOGY_EMPTY,              /**< Empty queue ("empty"). */
    MKRT_TOPOLOGY_SPARSE_FRONTIER,    /**< Low frontier density ("sparse_frontier"). */
    MKRT_TOPOLOGY_HYBRID_FRONTIER,    /**< Between sparse and dense ("hybrid_frontier"). */
    MKRT_TOPOLOGY_DENSE_FRONTIER,     /**< High frontier density ("dense_frontier"). */
    MKRT_TOPOLOGY_FUSED_DENSE,        /**< Dense, large graph, hot promotion ("fused_dense"). */
    MKRT_TOPOLOGY_MEMORY_CONSTRAINED  /**< Memory pressure at or above the threshold ("memory_constrained"). */
} mkrt_dispatch_topology;

/** @brief GraphBLAS-style class of a dispatch topology (in topology evidence). */
typedef enum mkrt_graphblas_class {
    MKRT_GRAPHBLAS_EMPTY,             /**< From MKRT_TOPOLOGY_EMPTY. */
    MKRT_GRAPHBLAS_SPARSE,            /**< From MKRT_TOPOLOGY_SPARSE_FRONTIER. */
    MKRT_GRAPHBLAS_HYBRID,            /**< From MKRT_TOPOLOGY_HYBRID_FRONTIER. */
    MKRT_GRAPHBLAS_DENSE,             /**< From MKRT_TOPOLOGY_DENSE_FRONTIER or _FUSED_DENSE. */
    MKRT_GRAPHBLAS_MEMORY_CONSTRAINED /**< From MKRT_TOPOLOGY_MEMORY_CONSTRAINED. */
} mkrt_graphblas_class;

/** @brief Why a launch is JIT-compiled (in promotion evidence). */
typedef enum mkrt_promotion_route {
    MKRT_ROUTE_INTERPRETER,          /**< Not JIT. */
    MKRT_ROUTE_QUEUE_JIT,            /**< JIT because of the queue length alone. */
    MKRT_ROUTE_OPCODE_JIT,           /**< JIT for hot opcodes. */
    MKRT_ROUTE_WINDOW_JIT,           /**< JIT for hot windows. */
    MKRT_ROUTE_OPCODE_AND_WINDOW_JIT /**< JIT for hot opcodes and hot windows. */
} mkrt_promotion_route;

/** @brief Density band, in bps, within which a previous frontier topology holds. */
#define MKRT_FRONTIER_TOPOLOGY_HYSTERESIS_BPS 250
/** @brief Pressure band, in bps, within which MEMORY_CONSTRAINED holds. */
#define MKRT_MEMORY_TOPOLOGY_HYSTERESIS_BPS 250
/** @brief Schema version written into ::mkrt_topology_evidence. */
#define MKRT_TOPOLOGY_EVIDENCE_SCHEMA_VERSION 1
/** @brief Schema version written into ::mkrt_promotion_evidence. */
#define MKRT_PROMOTION_EVIDENCE_SCHEMA_VERSION 1
/** @brief Recommendations kept in each thread's memo. */
#define MKRT_LAUNCH_CACHE_CAPACITY 128

/** @brief Launch policy constants; mkrt_launch_policy_standard() gives the values in brackets. */
typedef struct mkrt_launch_policy {
    mkrt_sizing_policy sizing;              /**< Geometry constants (mkrt_sizing_policy_standard()). */
    uint32_t min_hit_capacity;              /**< Floor of a derived hit capacity [1024]. */
    uint32_t hit_capacity_multiplier;       /**< Hits per expected hit, without memory pressure [2]. */
    uint32_t saturated_waves;               /**< Items per lane that make the queue SATURATED [4]. */
    uint32_t hot_opcode_threshold;          /**< Hot opcodes that promote to JIT [8]. */
    uint32_t hot_window_threshold;          /**< Hot windows that promote to JIT [4]. */
    uint32_t jit_queue_len_threshold;       /**< Queue length that selects JIT [4096]. */
    uint32_t priority_age_threshold;        /**< Priority age that turns on aging [32]. */
    uint16_t sparse_frontier_threshold_bps; /**< Density at or below which the frontier is sparse [500]. */
    uint16_t dense_frontier_threshold_bps;  /**< Density at or above which the frontier is dense [4000]. */
    /** Memory pressure at or above which the launch is MEMORY_CONSTRAINED
     *  [8500]; at most 10000 when workers are shed. */
    uint16_t memory_pressure_threshold_bps;
    uint32_t fusion_edge_threshold;         /**< Edges that make a graph large enough to fuse [65536]. */
    uint32_t scratch_bytes_per_hit;         /**< Device scratch bytes per hit [16]. */
} mkrt_launch_policy;

/** @brief Queue and workload telemetry for one launch recommendation. */
typedef struct mkrt_launch_request {
    uint32_t queue_len;                   /**< Items queued. */
    uint32_t requested_worker_groups;     /**< Worker groups asked for; 0: derive. */
    uint32_t max_workgroup_size_x;        /**< Device limit; must be non-zero. */
    uint32_t max_compute_workgroups_per_dimension;  /**< Device limit; must be non-zero. */
    uint32_t max_compute_invocations_per_workgroup; /**< Device limit; must be non-zero. */
    uint32_t requested_hit_capacity;      /**< Hit capacity asked for; 0: derive. */
    uint32_t expected_hits_per_item;      /**< Expected hits per item (0 counts as 1). */
    uint32_t hot_opcode_count;            /**< Opcodes observed hot. */
    uint32_t hot_window_count;            /**< Descriptor windows observed hot. */
    uint64_t requeue_count;               /**< Requeued work; non-zero saturates the queue and turns on aging. */
    uint32_t max_priority_age;            /**< Age of the oldest queued work, in ticks. */
    uint32_t graph_node_count;            /**< Graph nodes; 0: unknown. */
    uint32_t graph_edge_count;            /**< Graph edges. */
    uint16_t frontier_density_bps;        /**< Frontier density, 0..10000; 0: infer. */
    uint16_t memory_pressure_bps;         /**< Memory pressure, 0..10000; 0: infer. */
    uint64_t resident_device_bytes;       /**< Bytes already resident on the device. */
    uint64_t device_memory_budget_bytes;  /**< Device budget; 0: unbounded. */
} mkrt_launch_request;

/** @brief The policy's answer to a launch request. */
typedef struct mkrt_launch_recommendation {
    mkrt_launch_geometry geometry;         /**< Geometry for the queue. */
    uint32_t worker_groups;                /**< Worker groups after shedding. */
    uint32_t hit_capacity;                 /**< Sparse-hit capacity. */
    mkrt_queue_pressure pressure;          /**< Queue pressure against the grid's lanes. */
    mkrt_execution_mode execution_mode;    /**< JIT or interpreter. */
    mkrt_dispatch_topology topology;       /**< Dispatch topology (after hysteresis). */
    bool promote_hot_opcodes;              /**< hot_opcode_count reached the threshold. */
    bool promote_hot_windows;              /**< hot_window_count reached the threshold. */
    bool age_priority_work;                /**< Work was requeued or aged past the threshold. */
    uint64_t estimated_peak_device_bytes;  /**< resident + hit_capacity x scratch_bytes_per_hit. */
    uint64_t device_memory_budget_bytes;   /**< The request's budget (0: unbounded). */
} mkrt_launch_recommendation;

/** @brief Record of why a topology was chosen (mkrt_launch_recommend_with_topology_evidence()). */
typedef struct mkrt_topology_evidence {
    uint32_t schema_version;               /**< ::MKRT_TOPOLOGY_EVIDENCE_SCHEMA_VERSION. */
    mkrt_queue_pressure queue_pressure;    /**< The recommendation's queue pressure. */
    uint16_t frontier_density_bps;         /**< Frontier density after inference. */
    uint16_t semiring_frontier_density_bps; /**< Semiring frontier density (the same value). */
    mkrt_dispatch_topology selected_topology; /**< The recommendation's topology. */
    mkrt_graphblas_class graphblas_switch_class; /**< Class of selected_topology. */
    uint64_t resident_device_bytes;        /**< The request's resident bytes. */
    uint64_t estimated_peak_device_bytes;  /**< The recommendation's peak bytes. */
    bool output_parity_required;           /**< Always true: outputs must match the interpreter. */
} mkrt_topology_evidence;

/** @brief Record of why a launch was (not) JIT-promoted (mkrt_launch_recommend_with_promotion_evidence()). */
typedef struct mkrt_promotion_evidence {
    uint32_t schema_version;               /**< ::MKRT_PROMOTION_EVIDENCE_SCHEMA_VERSION. */
    uint32_t queue_len;                    /**< The request's queue length. */
    uint32_t jit_queue_len_threshold;      /**< The policy's threshold. */
    uint32_t hot_opcode_count;             /**< The request's hot opcodes. */
    uint32_t hot_opcode_threshold;         /**< The policy's threshold. */
    uint32_t hot_window_count;             /**< The request's hot windows. */
    uint32_t hot_window_threshold;         /**< The policy's threshold. */
    mkrt_execution_mode execution_mode;    /**< The recommendation's mode. */
    bool promote_hot_opcodes;              /**< As in the recommendation. */
    bool promote_hot_windows;              /**< As in the recommendation. */
    mkrt_promotion_route promotion_route;  /**< Why JIT was chosen, or INTERPRETER. */
    bool fused_descriptor_window_required; /**< Equal to promote_hot_windows. */
    bool output_parity_required;           /**< Always true: outputs must match the interpreter. */
} mkrt_promotion_evidence;

/** @brief Counters of the calling thread's launch memo. */
typedef struct mkrt_launch_cache_stats {
    size_t entries;  /**< Recommendations held, at most ::MKRT_LAUNCH_CACHE_CAPACITY. */
    uint64_t hits;   /**< Lookups answered from the memo (saturating). */
    uint64_t misses; /**< Lookups that computed (saturating). */
} mkrt_launch_cache_stats;

/** @brief Workload hints a runtime configuration carries into every request. */
typedef struct mkrt_workload_hints {
    uint32_t hot_opcode_count;           /**< Copied to the request. */
    uint32_t hot_window_count;           /**< Copied to the request. */
    uint32_t graph_node_count;           /**< Copied to the request; 0: unknown. */
    uint32_t graph_edge_count;           /**< Copied to the request. */
    uint16_t frontier_density_bps;       /**< Copied to the request; 0: infer. */
    uint16_t memory_pressure_bps;        /**< Copied to the request; 0: infer. */
    uint64_t resident_device_bytes;      /**< Copied to the request. */
    uint64_t device_memory_budget_bytes; /**< Copied to the request; 0: unbounded. */
} mkrt_workload_hints;

/** @brief A launch configuration; mkrt_launch_config_default() gives the values in brackets. */
typedef struct mkrt_launch_config {
    uint32_t worker_count;              /**< Worker groups to request [64]; must be non-zero. */
    uint64_t max_wall_time_ns;          /**< Wall-time limit of a launch [60 s]; must be non-zero. */
    uint32_t expected_items_per_worker; /**< Expected hits per item when > 1 [0]. */
    mkrt_workload_hints hints;          /**< Copied into every request [all 0]. */
} mkrt_launch_config;

/**
 * @brief The standard launch policy (the values in brackets in ::mkrt_launch_policy).
 * @return The policy, by value.
 * @par Thread safety
 * Any thread.
 */
mkrt_launch_policy mkrt_launch_policy_standard(void);
/**
 * @brief A request with the reference's direct(q, w, x) defaults.
 *
 * requested worker groups and workgroups per dimension = w, workgroup size
 * and invocations per workgroup = x, expected hits 1, everything else 0.
 *
 * @param queue_len Items queued (q).
 * @param worker_groups Worker groups (w).
 * @param max_workgroup_size_x Workgroup width (x).
 * @return The request, by value.
 * @par Thread safety
 * Any thread.
 */
mkrt_launch_request mkrt_launch_request_direct(uint32_t queue_len, uint32_t worker_groups,
                                               uint32_t max_workgroup_size_x);

/**
 * @brief Recommends a launch for a request (steps 1 to 8 of the file overview).
 *
 * A memo hit returns the recommendation computed earlier on this thread
 * for the same (policy, request) pair.
 *
 * @param p The policy.
 * @param req The request.
 * @param[out] rec The recommendation.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK `*rec` is set.
 * @retval MKRT_EINVAL p, req or rec is NULL; a device limit in the request
 *         is 0; or the policy's memory_pressure_threshold_bps is above
 *         10000 when workers are shed.
 * @retval MKRT_EOVERFLOW Checked arithmetic overflowed (the message names
 *         the value).
 * @retval MKRT_EBUDGET The estimated peak exceeds a non-zero budget;
 *         rec->estimated_peak_device_bytes and
 *         rec->device_memory_budget_bytes still hold the two numbers (the
 *         message has them too); the rest of rec is unspecified.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread; uses the calling thread's memo.
 */
mkrt_status mkrt_launch_recommend(const mkrt_launch_policy *p, const mkrt_launch_request *req,
                                  mkrt_launch_recommendation *rec, mkrt_error *err);
/**
 * @brief Recommends a launch stabilised against the topology chosen last time.
 *
 * No memo. Against the previous topology:
 * - MEMORY_CONSTRAINED holds while pressure >= threshold - 250;
 * - SPARSE holds while density <= 500 + 250;
 * - HYBRID holds against SPARSE while density >= 500 - 250, and against
 *   DENSE/FUSED_DENSE while density <= 4000 + 250;
 * - DENSE holds against HYBRID while density >= 4000 - 250;
 * - FUSED_DENSE holds against HYBRID while density >= 4000 - 250 on a
 *   large graph with hot promotion.
 *
 * EMPTY and MEMORY_CONSTRAINED as raw choices always win.
 *
 * @param p The policy.
 * @param req The request.
 * @param previous The topology of the last recommendation.
 * @param[out] rec The recommendation.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK `*rec` is set.
 * @retval MKRT_EINVAL previous is outside the enum, or as for
 *         mkrt_launch_recommend().
 * @retval MKRT_EOVERFLOW As for mkrt_launch_recommend().
 * @retval MKRT_EBUDGET As for mkrt_launch_recommend().
 * @return The status, as listed.
 * @par Thread safety
 * Any thread (pure).
 */
mkrt_status mkrt_launch_recommend_with_previous(const mkrt_launch_policy *p,
                                                const mkrt_launch_request *req,
                                                mkrt_dispatch_topology previous,
                                                mkrt_launch_recommendation *rec, mkrt_error *err);
/**
 * @brief Recommendation plus a topology evidence record.
 *
 * The memo key is the request after inference of missing signals.
 *
 * @param p The policy.
 * @param req The request.
 * @param[out] rec The recommendation.
 * @param[out] ev The evidence; written only on success.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK `*rec` and `*ev` are set.
 * @retval MKRT_EINVAL ev is NULL, or as for mkrt_launch_recommend().
 * @retval MKRT_EOVERFLOW As for mkrt_launch_recommend().
 * @retval MKRT_EBUDGET As for mkrt_launch_recommend().
 * @return The status, as listed.
 * @par Thread safety
 * Any thread; uses the calling thread's memo.
 */
mkrt_status mkrt_launch_recommend_with_topology_evidence(const mkrt_launch_policy *p,
                                                         const mkrt_launch_request *req,
                                                         mkrt_launch_recommendation *rec,
                                                         mkrt_topology_evidence *ev,
                                                         mkrt_error *err);
/**
 * @brief Recommendation plus a promotion evidence record.
 *
 * The memo key is the request after inference of missing signals.
 *
 * @param p The policy.
 * @param req The request.
 * @param[out] rec The recommendation.
 * @param[out] ev The evidence; written only on success.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK `*rec` and `*ev` are set.
 * @retval MKRT_EINVAL ev is NULL, or as for mkrt_launch_recommend().
 * @retval MKRT_EOVERFLOW As for mkrt_launch_recommend().
 * @retval MKRT_EBUDGET As for mkrt_launch_recommend().
 * @return The status, as listed.
 * @par Thread safety
 * Any thread; uses the calling thread's memo.
 */
mkrt_status mkrt_launch_recommend_with_promotion_evidence(const mkrt_launch_policy *p,
                                                          const mkrt_launch_request *req,
                                                          mkrt_launch_recommendation *rec,
                                                          mkrt_promotion_evidence *ev,
                                                          mkrt_error *err);
/**
 * @brief Whether a topology evidence record is complete.
 * @param ev The record.
 * @return true when the schema version is current, both densities are at
 *         most 10000 and output_parity_required is set; false for NULL.
 * @par Thread safety
 * Any thread (pure).
 */
bool mkrt_topology_evidence_is_complete(const mkrt_topology_evidence *ev);
/**
 * @brief Whether a promotion evidence record is complete.
 * @param ev The record.
 * @return true when the schema version is current, the three thresholds
 *         are non-zero, fused_descriptor_window_required equals
 *         promote_hot_windows and output_parity_required is set; false for
 *         NULL.
 * @par Thread safety
 * Any thread (pure).
 */
bool mkrt_promotion_evidence_is_complete(const mkrt_promotion_evidence *ev);

/**
 * @brief Counters of the calling thread's launch memo.
 * @return The counters; all zero before the thread's first recommendation.
 * @par Thread safety
 * Any thread; reads only the caller's memo.
 */
mkrt_launch_cache_stats mkrt_launch_cache_stats_read(void);
/**
 * @brief Empties the calling thread's launch memo and zeroes its counters.
 * @par Thread safety
 * Any thread; touches only the caller's memo.
 */
void mkrt_launch_cache_reset(void);

/**
 * @brief Autotunes the hit capacity multiplier from measured costs.
 *
 * Picks the candidate at the first index of minimal cost under the IEEE
 * total order (NaN sorts after +inf, -NaN before -inf). Only the first
 * min(n_candidates, n_costs) entries count; NULL arrays count as empty.
 *
 * @param p The policy whose multiplier is current (NULL: current is 0).
 * @param candidates Candidate multipliers.
 * @param n_candidates Number of candidates.
 * @param costs Measured cost of each candidate.
 * @param n_costs Number of costs.
 * @return The best candidate; the current value when there are no
 *         candidates or costs.
 * @par Thread safety
 * Any thread (pure).
 */
uint32_t mkrt_autotune_hit_capacity_multiplier(const mkrt_launch_policy *p,
                                               const uint32_t *candidates, size_t n_candidates,
                                               const double *costs, size_t n_costs);
/**
 * @brief Autotunes the workgroup size from measured costs.
 *
 * Same selection as mkrt_autotune_hit_capacity_multiplier().
 *
 * @param candidates Candidate sizes.
 * @param n_candidates Number of candidates.
 * @param costs Measured cost of each candidate.
 * @param n_costs Number of costs.
 * @param current Returned when there are no candidates or costs.
 * @return The best candidate, or current.
 * @par Thread safety
 * Any thread (pure).
 */
uint32_t mkrt_autotune_workgroup_size(const uint32_t *candidates, size_t n_candidates,
                                      const double *costs, size_t n_costs, uint32_t current);
/**
 * @brief One natural-gradient step: out[r] = -learning_rate * sum_c m[r * n + c] * grad[c].
 *
 * Nothing is written, and `*written` is 0, when n is 0, m has fewer than
 * n * n entries or grad fewer than n.
 *
 * @param m Row-major n x n matrix.
 * @param m_len Entries in m.
 * @param grad Gradient.
 * @param grad_len Entries in grad.
 * @param n Dimension.
 * @param learning_rate Step size.
 * @param[out] out Room for n entries.
 * @param out_cap Entries in out.
 * @param[out] written n on success, else 0.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Done (possibly with nothing written, as above).
 * @retval MKRT_EINVAL written is NULL; m or grad is NULL although it would
 *         be read; or out is NULL or out_cap < n.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread (pure).
 */
mkrt_status mkrt_natural_gradient_step(const double *m, size_t m_len, const double *grad,
                                       size_t grad_len, uint32_t n, double learning_rate,
                                       double *out, size_t out_cap, size_t *written,
                                       mkrt_error *err);

/**
 * @brief The default launch configuration (the values in brackets in ::mkrt_launch_config).
 * @return The configuration, by value.
 * @par Thread safety
 * Any thread.
 */
mkrt_launch_config mkrt_launch_config_default(void);
/**
 * @brief Checks a launch configuration.
 * @param c The configuration.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK The configuration is usable.
 * @retval MKRT_EINVAL c is NULL, worker_count is 0, or max_wall_time_ns is 0.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread (pure).
 */
mkrt_status mkrt_launch_config_validate(const mkrt_launch_config *c, mkrt_error *err);
/**
 * @brief A request from a configuration and the device's limits.
 *
 * requested worker groups = worker_count, expected hits =
 * expected_items_per_worker when > 1 (else 1), hints copied verbatim.
 *
 * @param c The configuration; NULL reads as an all-zero one.
 * @param queue_len Items queued.
 * @param max_workgroup_size_x Device limit.
 * @param max_workgroups_per_dimension Device limit.
 * @param max_invocations_per_workgroup Device limit.
 * @return The request, by value.
 * @par Thread safety
 * Any thread (pure).
 */
mkrt_launch_request mkrt_launch_config_request(const mkrt_launch_config *c, uint32_t queue_len,
                                               uint32_t max_workgroup_size_x,
                                               uint32_t max_workgroups_per_dimension,
                                               uint32_t max_invocations_per_workgroup);

struct mkrt_task_snapshot;
/**
 * @brief Applies a task-queue snapshot (mkrt/priority.h) to a request.
 *
 * queue_len = ready + yielded + requeued (saturating at UINT32_MAX);
 * requeue_count += yielded + requeued + the tasks' own requeue counts
 * (saturating); max_priority_age = the oldest task's age.
 *
 * @param r The request to update; NULL makes the call a no-op.
 * @param s The snapshot (mkrt_task_snapshot_take()); NULL makes the call a
 *        no-op.
 * @par Thread safety
 * Any thread; r must not be in use by another thread.
 */
void mkrt_launch_request_apply_tasks(mkrt_launch_request *r, const struct mkrt_task_snapshot *s);

/**
 * @brief Name of a dispatch topology.
 * @param t The topology.
 * @return A static string ("empty", "sparse_frontier", "hybrid_frontier",
 *         "dense_frontier", "fused_dense", "memory_constrained"), or
 *         "unknown" outside the enum.
 * @par Thread safety
 * Any thread.
 */
const char *mkrt_topology_name(mkrt_dispatch_topology t);
/**
 * @brief Name of a queue pressure.
 * @param p The pressure.
 * @return A static string ("empty", "light", "balanced", "saturated"), or
 *         "unknown" outside the enum.
 * @par Thread safety
 * Any thread.
 */
const char *mkrt_pressure_name(mkrt_queue_pressure p);
/**
 * @brief Name of a GraphBLAS class.
 * @param c The class.
 * @return A static string ("empty", "sparse", "hybrid", "dense",
 *         "memory_constrained"), or "unknown" outside the enum.
 * @par Thread safety
 * Any thread.
 */
const char *mkrt_graphblas_class_name(mkrt_graphblas_class c);
/**
 * @brief Name of a promotion route.
 * @param r The route.
 * @return A static string ("interpreter", "queue_jit", "opcode_jit",
 *         "window_jit", "opcode_and_window_jit"), or "unknown" outside the
 *         enum.
 * @par Thread safety
 * Any thread.
 */
const char *mkrt_promotion_route_name(mkrt_promotion_route r);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_POLICY_H */
