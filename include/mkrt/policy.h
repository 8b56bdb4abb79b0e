/* SPDX-License-Identifier: BSD-2-Clause */
/* mkrt/policy.h - the launch policy: from queue and workload telemetry to a
 * launch recommendation (topology, workers, geometry, hit capacity, memory
 * envelope, JIT or interpreter).
 *
 * Behaviour (reference: vyre megakernel launch policy), in order:
 *   1. Memo: without a previous topology, the (policy, request) pair is
 *      looked up in a per-thread cache of 128 recommendations (least
 *      recently used evicted; no locks; errors are never cached).
 *   2. Inference of missing signals: density = clamp(floor(min(queue,
 *      nodes) * 10000 / nodes), 1, 10000) when density is 0 and queue and
 *      nodes are known; memory pressure = min(10000, floor(resident * 10000 /
 *      budget)) when pressure is 0 and resident and budget are known.
 *   3. Hot promotion: hot opcodes >= 8, hot windows >= 4.
 *   4. Topology, first match: empty queue -> EMPTY; pressure >= 8500 ->
 *      MEMORY_CONSTRAINED; density <= 500 -> SPARSE_FRONTIER; density >=
 *      4000 on a large graph (edges >= 65536) with hot promotion ->
 *      FUSED_DENSE; density >= 4000 -> DENSE_FRONTIER; else HYBRID_FRONTIER.
 *   5. Hysteresis of 250 bps against a previous topology (see
 *      mkrt_launch_recommend_with_previous).
 *   6. Worker shedding: MEMORY_CONSTRAINED keeps 75% of the workers at the
 *      threshold down to 50% at 10000 bps; SPARSE_FRONTIER scales workers
 *      by density / 500 with a floor of min(workers, 32).
 *   7. Grid (mkrt/sizing.h), queue pressure against the grid's lanes, hit
 *      capacity (requested, else max(1024, queue * hits * (2, or 1 under
 *      memory pressure))), peak device bytes = resident + 16 per hit; over
 *      a non-zero budget: MKRT_EBUDGET.
 *   8. JIT when queue >= 4096, hot promotion, or FUSED_DENSE; priority
 *      aging when work was requeued or aged >= 32.
 * All arithmetic is checked; overflow is MKRT_EOVERFLOW naming the value.
 * The policy functions are pure apart from the calling thread's memo.
 */
#ifndef MKRT_POLICY_H
#define MKRT_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/sizing.h"
#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mkrt_queue_pressure {
    MKRT_PRESSURE_EMPTY,
    MKRT_PRESSURE_LIGHT,
    MKRT_PRESSURE_BALANCED,
    MKRT_PRESSURE_SATURATED
} mkrt_queue_pressure;

typedef enum mkrt_execution_mode { MKRT_EXEC_INTERPRETER, MKRT_EXEC_JIT } mkrt_execution_mode;

typedef enum mkrt_dispatch_topology {
    MKRT_TOPOLOGY_EMPTY,
    MKRT_TOPOLOGY_SPARSE_FRONTIER,
    MKRT_TOPOLOGY_HYBRID_FRONTIER,
    MKRT_TOPOLOGY_DENSE_FRONTIER,
    MKRT_TOPOLOGY_FUSED_DENSE,
    MKRT_TOPOLOGY_MEMORY_CONSTRAINED
} mkrt_dispatch_topology;

typedef enum mkrt_graphblas_class {
    MKRT_GRAPHBLAS_EMPTY,
    MKRT_GRAPHBLAS_SPARSE,
    MKRT_GRAPHBLAS_HYBRID,
    MKRT_GRAPHBLAS_DENSE,
    MKRT_GRAPHBLAS_MEMORY_CONSTRAINED
} mkrt_graphblas_class;

typedef enum mkrt_promotion_route {
    MKRT_ROUTE_INTERPRETER,
    MKRT_ROUTE_QUEUE_JIT,
    MKRT_ROUTE_OPCODE_JIT,
    MKRT_ROUTE_WINDOW_JIT,
    MKRT_ROUTE_OPCODE_AND_WINDOW_JIT
} mkrt_promotion_route;

#define MKRT_FRONTIER_TOPOLOGY_HYSTERESIS_BPS 250
#define MKRT_MEMORY_TOPOLOGY_HYSTERESIS_BPS 250
#define MKRT_TOPOLOGY_EVIDENCE_SCHEMA_VERSION 1
#define MKRT_PROMOTION_EVIDENCE_SCHEMA_VERSION 1
#define MKRT_LAUNCH_CACHE_CAPACITY 128

typedef struct mkrt_launch_policy {
    mkrt_sizing_policy sizing;
    uint32_t min_hit_capacity;              /* 1024 */
    uint32_t hit_capacity_multiplier;       /* 2 */
    uint32_t saturated_waves;               /* 4 */
    uint32_t hot_opcode_threshold;          /* 8 */
    uint32_t hot_window_threshold;          /* 4 */
    uint32_t jit_queue_len_threshold;       /* 4096 */
    uint32_t priority_age_threshold;        /* 32 */
    uint16_t sparse_frontier_threshold_bps; /* 500 */
    uint16_t dense_frontier_threshold_bps;  /* 4000 */
    uint16_t memory_pressure_threshold_bps; /* 8500 */
    uint32_t fusion_edge_threshold;         /* 65536 */
    uint32_t scratch_bytes_per_hit;         /* 16 */
} mkrt_launch_policy;

typedef struct mkrt_launch_request {
    uint32_t queue_len;
    uint32_t requested_worker_groups; /* 0: derive */
    uint32_t max_workgroup_size_x;
    uint32_t max_compute_workgroups_per_dimension;
    uint32_t max_compute_invocations_per_workgroup;
    uint32_t requested_hit_capacity;  /* 0: derive */
    uint32_t expected_hits_per_item;
    uint32_t hot_opcode_count;
    uint32_t hot_window_count;
    uint64_t requeue_count;
    uint32_t max_priority_age;
    uint32_t graph_node_count;        /* 0: unknown */
    uint32_t graph_edge_count;
    uint16_t frontier_density_bps;    /* 0: infer */
    uint16_t memory_pressure_bps;     /* 0: infer */
    uint64_t resident_device_bytes;
    uint64_t device_memory_budget_bytes; /* 0: unbounded */
} mkrt_launch_request;

typedef struct mkrt_launch_recommendation {
    mkrt_launch_geometry geometry;
    uint32_t worker_groups;
    uint32_t hit_capacity;
    mkrt_queue_pressure pressure;
    mkrt_execution_mode execution_mode;
    mkrt_dispatch_topology topology;
    bool promote_hot_opcodes;
    bool promote_hot_windows;
    bool age_priority_work;
    uint64_t estimated_peak_device_bytes;
    uint64_t device_memory_budget_bytes;
} mkrt_launch_recommendation;

typedef struct mkrt_topology_evidence {
    uint32_t schema_version;
    mkrt_queue_pressure queue_pressure;
    uint16_t frontier_density_bps;
    uint16_t semiring_frontier_density_bps;
    mkrt_dispatch_topology selected_topology;
    mkrt_graphblas_class graphblas_switch_class;
    uint64_t resident_device_bytes;
    uint64_t estimated_peak_device_bytes;
    bool output_parity_required;
} mkrt_topology_evidence;

typedef struct mkrt_promotion_evidence {
    uint32_t schema_version;
    uint32_t queue_len;
    uint32_t jit_queue_len_threshold;
    uint32_t hot_opcode_count;
    uint32_t hot_opcode_threshold;
    uint32_t hot_window_count;
    uint32_t hot_window_threshold;
    mkrt_execution_mode execution_mode;
    bool promote_hot_opcodes;
    bool promote_hot_windows;
    mkrt_promotion_route promotion_route;
    bool fused_descriptor_window_required;
    bool output_parity_required;
} mkrt_promotion_evidence;

typedef struct mkrt_launch_cache_stats {
    size_t entries;
    uint64_t hits;
    uint64_t misses;
} mkrt_launch_cache_stats;

/* Workload hints a runtime configuration carries into every request. */
typedef struct mkrt_workload_hints {
    uint32_t hot_opcode_count;
    uint32_t hot_window_count;
    uint32_t graph_node_count;
    uint32_t graph_edge_count;
    uint16_t frontier_density_bps;
    uint16_t memory_pressure_bps;
    uint64_t resident_device_bytes;
    uint64_t device_memory_budget_bytes;
} mkrt_workload_hints;

typedef struct mkrt_launch_config {
    uint32_t worker_count;              /* 64 */
    uint64_t max_wall_time_ns;          /* 60 s */
    uint32_t expected_items_per_worker; /* 0 */
    mkrt_workload_hints hints;
} mkrt_launch_config;

mkrt_launch_policy mkrt_launch_policy_standard(void);
/* Request with the reference's direct(q, w, x) defaults: workgroups per
 * dimension = w, invocations = x, expected hits 1, everything else 0. */
mkrt_launch_request mkrt_launch_request_direct(uint32_t queue_len, uint32_t worker_groups,
                                               uint32_t max_workgroup_size_x);

/* MKRT_EINVAL for a NULL policy, request or result (here and in the
 * variants below, evidence records included).
 * On MKRT_EBUDGET, rec->estimated_peak_device_bytes and
 * rec->device_memory_budget_bytes still hold the two numbers (the message
 * has them too); the rest of rec is unspecified. */
mkrt_status mkrt_launch_recommend(const mkrt_launch_policy *p, const mkrt_launch_request *req,
                                  mkrt_launch_recommendation *rec, mkrt_error *err);
/* Same, stabilised against the topology chosen last time (no memo):
 *   MEMORY_CONSTRAINED holds while pressure >= threshold - 250;
 *   SPARSE holds while density <= 500 + 250;
 *   HYBRID holds against SPARSE while density >= 500 - 250, and against
 *   DENSE/FUSED_DENSE while density <= 4000 + 250;
 *   DENSE holds against HYBRID while density >= 4000 - 250;
 *   FUSED_DENSE holds against HYBRID while density >= 4000 - 250 on a
 *   large graph with hot promotion. EMPTY and MEMORY_CONSTRAINED as raw
 *   choices always win. A previous outside the enum is MKRT_EINVAL. */
mkrt_status mkrt_launch_recommend_with_previous(const mkrt_launch_policy *p,
                                                const mkrt_launch_request *req,
                                                mkrt_dispatch_topology previous,
                                                mkrt_launch_recommendation *rec, mkrt_error *err);
/* Recommendation plus an evidence record; the memo key is the request
 * after inference. */
mkrt_status mkrt_launch_recommend_with_topology_evidence(const mkrt_launch_policy *p,
                                                         const mkrt_launch_request *req,
                                                         mkrt_launch_recommendation *rec,
                                                         mkrt_topology_evidence *ev,
                                                         mkrt_error *err);
mkrt_status mkrt_launch_recommend_with_promotion_evidence(const mkrt_launch_policy *p,
                                                          const mkrt_launch_request *req,
                                                          mkrt_launch_recommendation *rec,
                                                          mkrt_promotion_evidence *ev,
                                                          mkrt_error *err);
/* Both false for NULL. */
bool mkrt_topology_evidence_is_complete(const mkrt_topology_evidence *ev);
bool mkrt_promotion_evidence_is_complete(const mkrt_promotion_evidence *ev);

/* The calling thread's memo. */
mkrt_launch_cache_stats mkrt_launch_cache_stats_read(void);
void mkrt_launch_cache_reset(void);

/* Autotune: the candidate at the first index of minimal cost under the
 * IEEE total order (NaN sorts after +inf, -NaN before -inf); with no
 * candidates or costs, the current value. Only the first min(n_candidates,
 * n_costs) entries count. NULL arrays count as empty; a NULL p as current 0. */
uint32_t mkrt_autotune_hit_capacity_multiplier(const mkrt_launch_policy *p,
                                               const uint32_t *candidates, size_t n_candidates,
                                               const double *costs, size_t n_costs);
uint32_t mkrt_autotune_workgroup_size(const uint32_t *candidates, size_t n_candidates,
                                      const double *costs, size_t n_costs, uint32_t current);
/* out[r] = -learning_rate * sum_c m[r * n + c] * grad[c] for r < n.
 * *written = n, or 0 when m has fewer than n*n entries or grad fewer than
 * n (nothing written). MKRT_EINVAL when out_cap < n otherwise, for a NULL
 * out, m or grad that would be read, and for a NULL written. */
mkrt_status mkrt_natural_gradient_step(const double *m, size_t m_len, const double *grad,
                                       size_t grad_len, uint32_t n, double learning_rate,
                                       double *out, size_t out_cap, size_t *written,
                                       mkrt_error *err);

mkrt_launch_config mkrt_launch_config_default(void);
/* MKRT_EINVAL for zero workers, a zero wall time, or a NULL config. */
mkrt_status mkrt_launch_config_validate(const mkrt_launch_config *c, mkrt_error *err);
/* Request from a config: workers = worker_count, expected hits =
 * expected_items_per_worker when > 1 (else 1), hints copied verbatim. A
 * NULL config reads as an all-zero one. */
mkrt_launch_request mkrt_launch_config_request(const mkrt_launch_config *c, uint32_t queue_len,
                                               uint32_t max_workgroup_size_x,
                                               uint32_t max_workgroups_per_dimension,
                                               uint32_t max_invocations_per_workgroup);

/* Applies a task-queue snapshot: queue_len = ready + yielded + requeued;
 * requeue_count += yielded + requeued + the tasks' own requeue counts
 * (saturating); max_priority_age = the oldest task's age. A NULL r or s
 * makes it a no-op. */
struct mkrt_task_snapshot;
void mkrt_launch_request_apply_tasks(mkrt_launch_request *r, const struct mkrt_task_snapshot *s);

const char *mkrt_topology_name(mkrt_dispatch_topology t);
const char *mkrt_pressure_name(mkrt_queue_pressure p);
const char *mkrt_graphblas_class_name(mkrt_graphblas_class c);
const char *mkrt_promotion_route_name(mkrt_promotion_route r);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_POLICY_H */
