/* SPDX-License-Identifier: BSD-2-Clause */
/* planlib/src/policy.c - the launch recommendation pipeline. */
#include <string.h>

#include "planlib_base.h"
#include "mkrt_planlib/policy.h"
#include "mkrt_planlib/priority.h"
#include "policy_cache.h"

mkrt_launch_policy mkrt_launch_policy_standard(void)
{
    mkrt_launch_policy p;
    memset(&p, 0, sizeof p);
    p.sizing = mkrt_sizing_policy_standard();
    p.min_hit_capacity = 1024;
    p.hit_capacity_multiplier = 2;
    p.saturated_waves = 4;
    p.hot_opcode_threshold = 8;
    p.hot_window_threshold = 4;
    p.jit_queue_len_threshold = 4096;
    p.priority_age_threshold = 32;
    p.sparse_frontier_threshold_bps = 500;
    p.dense_frontier_threshold_bps = 4000;
    p.memory_pressure_threshold_bps = 8500;
    p.fusion_edge_threshold = 65536;
    p.scratch_bytes_per_hit = 16;
    return p;
}

mkrt_launch_request mkrt_launch_request_direct(uint32_t queue_len, uint32_t worker_groups,
                                               uint32_t max_workgroup_size_x)
{
    mkrt_launch_request r;
    memset(&r, 0, sizeof r);
    r.queue_len = queue_len;
    r.requested_worker_groups = worker_groups;
    r.max_workgroup_size_x = max_workgroup_size_x;
    r.max_compute_workgroups_per_dimension = worker_groups;
    r.max_compute_invocations_per_workgroup = max_workgroup_size_x;
    r.expected_hits_per_item = 1;
    return r;
}

static mkrt_status overflow(mkrt_error *err, const char *what, const char *fix)
{
    return mkrt__pl_error_set(err, MKRT_EOVERFLOW, "megakernel %s. Fix: %s.", what, fix);
}

static void infer_missing_signals(mkrt_launch_request *r)
{
    if (r->frontier_density_bps == 0 && r->queue_len != 0 && r->graph_node_count != 0) {
        uint64_t active = r->queue_len < r->graph_node_count ? r->queue_len : r->graph_node_count;
        uint64_t d = active * 10000 / r->graph_node_count; /* < 2^46: no overflow */
        r->frontier_density_bps = (uint16_t)(d < 1 ? 1 : d > 10000 ? 10000 : d);
    }
    if (r->memory_pressure_bps == 0 && r->device_memory_budget_bytes != 0 &&
        r->resident_device_bytes != 0) {
        unsigned __int128 p =
            (unsigned __int128)r->resident_device_bytes * 10000 / r->device_memory_budget_bytes;
        r->memory_pressure_bps = (uint16_t)(p > 10000 ? 10000 : p);
    }
}

static uint16_t sat_add16(uint16_t a, uint16_t b)
{
    return (uint32_t)a + b > UINT16_MAX ? UINT16_MAX : (uint16_t)(a + b);
}

static uint16_t sat_sub16(uint16_t a, uint16_t b)
{
    return a > b ? (uint16_t)(a - b) : 0;
}

static mkrt_dispatch_topology raw_topology(const mkrt_launch_policy *p, const mkrt_launch_request *r,
                                           bool hot)
{
    if (r->queue_len == 0)
        return MKRT_TOPOLOGY_EMPTY;
    if (r->memory_pressure_bps >= p->memory_pressure_threshold_bps)
        return MKRT_TOPOLOGY_MEMORY_CONSTRAINED;
    if (r->frontier_density_bps <= p->sparse_frontier_threshold_bps)
        return MKRT_TOPOLOGY_SPARSE_FRONTIER;
    bool dense = r->frontier_density_bps >= p->dense_frontier_threshold_bps;
    bool large = r->graph_node_count > 0 && r->graph_edge_count >= p->fusion_edge_threshold;
    if (dense && large && hot)
        return MKRT_TOPOLOGY_FUSED_DENSE;
    return dense ? MKRT_TOPOLOGY_DENSE_FRONTIER : MKRT_TOPOLOGY_HYBRID_FRONTIER;
}

/* previous < 0: none. */
static mkrt_dispatch_topology stabilize(const mkrt_launch_policy *p, mkrt_dispatch_topology raw,
                                        const mkrt_launch_request *r, int previous, bool hot)
{
    const uint16_t h = MKRT_FRONTIER_TOPOLOGY_HYSTERESIS_BPS, d = r->frontier_density_bps;
    if (raw == MKRT_TOPOLOGY_EMPTY || raw == MKRT_TOPOLOGY_MEMORY_CONSTRAINED || previous < 0)
        return raw;
    if (previous == MKRT_TOPOLOGY_MEMORY_CONSTRAINED &&
        r->memory_pressure_bps >=
            sat_sub16(p->memory_pressure_threshold_bps, MKRT_MEMORY_TOPOLOGY_HYSTERESIS_BPS))
        return MKRT_TOPOLOGY_MEMORY_CONSTRAINED;
    switch (previous) {
    case MKRT_TOPOLOGY_SPARSE_FRONTIER:
        if (raw != MKRT_TOPOLOGY_SPARSE_FRONTIER && d <= sat_add16(p->sparse_frontier_threshold_bps, h))
            return MKRT_TOPOLOGY_SPARSE_FRONTIER;
        break;
    case MKRT_TOPOLOGY_HYBRID_FRONTIER:
        if (raw == MKRT_TOPOLOGY_SPARSE_FRONTIER && d >= sat_sub16(p->sparse_frontier_threshold_bps, h))
            return MKRT_TOPOLOGY_HYBRID_FRONTIER;
        if ((raw == MKRT_TOPOLOGY_DENSE_FRONTIER || raw == MKRT_TOPOLOGY_FUSED_DENSE) &&
            d <= sat_add16(p->dense_frontier_threshold_bps, h))
            return MKRT_TOPOLOGY_HYBRID_FRONTIER;
        break;
    case MKRT_TOPOLOGY_DENSE_FRONTIER:
        if (raw == MKRT_TOPOLOGY_HYBRID_FRONTIER && d >= sat_sub16(p->dense_frontier_threshold_bps, h))
            return MKRT_TOPOLOGY_DENSE_FRONTIER;
        break;
    case MKRT_TOPOLOGY_FUSED_DENSE:
        if (raw == MKRT_TOPOLOGY_HYBRID_FRONTIER && d >= sat_sub16(p->dense_frontier_threshold_bps, h) &&
            r->graph_edge_count >= p->fusion_edge_threshold && hot)
            return MKRT_TOPOLOGY_FUSED_DENSE;
        break;
    default:
        break;
    }
    return raw;
}

static mkrt_status shed_workers(const mkrt_launch_policy *p, mkrt_dispatch_topology t,
                                mkrt_launch_request *r, mkrt_error *err)
{
    if (t == MKRT_TOPOLOGY_MEMORY_CONSTRAINED && r->memory_pressure_bps != 0 &&
        r->requested_worker_groups > 1) {
        if (p->memory_pressure_threshold_bps > 10000)
            return mkrt__pl_error_set(err, MKRT_EINVAL,
                                   "megakernel memory-pressure threshold exceeds 10000 bps. Fix: "
                                   "configure threshold in basis points.");
        uint32_t span = 10000u - p->memory_pressure_threshold_bps;
        span = span < 1 ? 1 : span;
        uint32_t over = r->memory_pressure_bps > p->memory_pressure_threshold_bps
                            ? (uint32_t)(r->memory_pressure_bps - p->memory_pressure_threshold_bps)
                            : 0;
        over = over < span ? over : span;
        uint32_t shed = 2500 + over * 2500 / span; /* over <= 10000: no overflow */
        uint32_t keep = 10000 - shed;              /* shed <= 5000 */
        uint64_t scaled = (uint64_t)r->requested_worker_groups * keep / 10000;
        r->requested_worker_groups = scaled < 1 ? 1 : (uint32_t)scaled;
    }
    if (t == MKRT_TOPOLOGY_SPARSE_FRONTIER && r->graph_node_count != 0 &&
        r->frontier_density_bps != 0 && r->requested_worker_groups > 1) {
        uint32_t span = p->sparse_frontier_threshold_bps ? p->sparse_frontier_threshold_bps : 1;
        uint32_t d = r->frontier_density_bps;
        d = d < 1 ? 1 : d > span ? span : d;
        uint64_t scaled = (uint64_t)r->requested_worker_groups * d / span;
        uint32_t w = r->requested_worker_groups;
        uint32_t floor = w < 32 ? w : 32;
        uint32_t v = (uint32_t)scaled > floor ? (uint32_t)scaled : floor;
        r->requested_worker_groups = v < w ? v : w;
    }
    return MKRT_OK;
}

static mkrt_status classify_pressure(const mkrt_launch_policy *p, uint32_t queue, uint64_t lanes,
                                     uint64_t requeue, mkrt_queue_pressure *out, mkrt_error *err)
{
    if (queue == 0) {
        *out = MKRT_PRESSURE_EMPTY;
        return MKRT_OK;
    }
    lanes = lanes < 1 ? 1 : lanes;
    uint64_t saturated;
    if (__builtin_mul_overflow(lanes, (uint64_t)p->saturated_waves, &saturated))
        return overflow(err, "pressure wave threshold overflowed u64",
                        "reduce worker lanes or saturated_waves");
    if (requeue > 0 || queue >= saturated)
        *out = MKRT_PRESSURE_SATURATED;
    else if (queue >= lanes)
        *out = MKRT_PRESSURE_BALANCED;
    else
        *out = MKRT_PRESSURE_LIGHT;
    return MKRT_OK;
}

static mkrt_status hit_capacity(const mkrt_launch_policy *p, const mkrt_launch_request *r,
                                uint32_t *out, mkrt_error *err)
{
    if (r->requested_hit_capacity != 0) {
        *out = r->requested_hit_capacity;
        return MKRT_OK;
    }
    uint32_t hits = r->expected_hits_per_item > 1 ? r->expected_hits_per_item : 1;
    uint32_t mult = r->memory_pressure_bps >= p->memory_pressure_threshold_bps
                        ? 1
                        : p->hit_capacity_multiplier;
    uint32_t v;
    if (__builtin_mul_overflow(r->queue_len, hits, &v) || __builtin_mul_overflow(v, mult, &v))
        return overflow(err, "sparse-hit capacity overflowed u32",
                        "lower queue length, expected_hits_per_item, or hit_capacity_multiplier");
    *out = v > p->min_hit_capacity ? v : p->min_hit_capacity;
    return MKRT_OK;
}

static mkrt_status recommend_inner(const mkrt_launch_policy *p, const mkrt_launch_request *req,
                                   int previous, mkrt_launch_recommendation *rec, mkrt_error *err)
{
    if (p == NULL || req == NULL || rec == NULL)
        return mkrt__pl_error_set(err, MKRT_EINVAL,
                               "mkrt_launch_recommend got a NULL policy, request or result. Fix: "
                               "pass valid pointers.");
    mkrt__launch_key key;
    if (previous < 0) {
        mkrt__launch_key_make(p, req, &key);
        if (mkrt__launch_cache_get(&key, rec))
            return MKRT_OK;
    }
    mkrt_launch_request e = *req;
    infer_missing_signals(&e);
    bool hot_ops = e.hot_opcode_count >= p->hot_opcode_threshold;
    bool hot_windows = e.hot_window_count >= p->hot_window_threshold;
    mkrt_dispatch_topology topo =
        stabilize(p, raw_topology(p, &e, hot_ops || hot_windows), &e, previous, hot_ops || hot_windows);
    mkrt_launch_request scheduled = e;
    mkrt_status st = shed_workers(p, topo, &scheduled, err);
    if (st != MKRT_OK)
        return st;
    mkrt_grid_limits limits = {scheduled.max_workgroup_size_x,
                               scheduled.max_compute_workgroups_per_dimension,
                               scheduled.max_compute_invocations_per_workgroup};
    mkrt_launch_recommendation out;
    memset(&out, 0, sizeof out);
    st = mkrt_sizing_optimal_grid(&p->sizing, scheduled.queue_len, scheduled.requested_worker_groups,
                                  &limits, &out.geometry, &out.worker_groups, err);
    if (st != MKRT_OK)
        return st;
    uint64_t lanes = (uint64_t)out.geometry.dispatch_grid[0] * out.geometry.workgroup_size_x;
    if ((st = classify_pressure(p, e.queue_len, lanes, e.requeue_count, &out.pressure, err)) != MKRT_OK)
        return st;
    if ((st = hit_capacity(p, &e, &out.hit_capacity, err)) != MKRT_OK)
        return st;
    uint64_t scratch;
    if (__builtin_mul_overflow((uint64_t)out.hit_capacity, (uint64_t)p->scratch_bytes_per_hit, &scratch))
        return overflow(err, "scratch byte estimate overflowed u64",
                        "lower hit capacity or scratch_bytes_per_hit");
    if (__builtin_add_overflow(e.resident_device_bytes, scratch, &out.estimated_peak_device_bytes))
        return overflow(err, "peak resident byte estimate overflowed u64",
                        "reduce resident buffers or scratch capacity");
    out.device_memory_budget_bytes = e.device_memory_budget_bytes;
    if (e.device_memory_budget_bytes != 0 &&
        out.estimated_peak_device_bytes > e.device_memory_budget_bytes) {
        rec->estimated_peak_device_bytes = out.estimated_peak_device_bytes;
        rec->device_memory_budget_bytes = e.device_memory_budget_bytes;
        return mkrt__pl_error_set(err, MKRT_EBUDGET,
                               "megakernel device out of memory: the launch needs %llu bytes "
                               "(resident %llu + %u hits x %u scratch bytes) but the device memory "
                               "budget allows %llu. Fix: lower the hit capacity or the resident "
                               "buffers, or raise device_memory_budget_bytes.",
                               (unsigned long long)out.estimated_peak_device_bytes,
                               (unsigned long long)e.resident_device_bytes, out.hit_capacity,
                               p->scratch_bytes_per_hit,
                               (unsigned long long)e.device_memory_budget_bytes);
    }
    out.topology = topo;
    out.promote_hot_opcodes = hot_ops;
    out.promote_hot_windows = hot_windows;
    out.execution_mode = e.queue_len >= p->jit_queue_len_threshold || hot_ops || hot_windows ||
                                 topo == MKRT_TOPOLOGY_FUSED_DENSE
                             ? MKRT_EXEC_JIT
                             : MKRT_EXEC_INTERPRETER;
    out.age_priority_work = e.requeue_count > 0 || e.max_priority_age >= p->priority_age_threshold;
    *rec = out;
    if (previous < 0)
        mkrt__launch_cache_insert(&key, &out);
    return MKRT_OK;
}

mkrt_status mkrt_launch_recommend(const mkrt_launch_policy *p, const mkrt_launch_request *req,
                                  mkrt_launch_recommendation *rec, mkrt_error *err)
{
    return recommend_inner(p, req, -1, rec, err);
}

mkrt_status mkrt_launch_recommend_with_previous(const mkrt_launch_policy *p,
                                                const mkrt_launch_request *req,
                                                mkrt_dispatch_topology previous,
                                                mkrt_launch_recommendation *rec, mkrt_error *err)
{
    if ((unsigned)previous > MKRT_TOPOLOGY_MEMORY_CONSTRAINED)
        return mkrt__pl_error_set(err, MKRT_EINVAL,
                               "previous topology %d is not an mkrt_dispatch_topology. Fix: pass "
                               "the topology of the last recommendation.",
                               (int)previous);
    return recommend_inner(p, req, (int)previous, rec, err);
}

static mkrt_graphblas_class graphblas_class(mkrt_dispatch_topology t)
{
    switch (t) {
    case MKRT_TOPOLOGY_EMPTY: return MKRT_GRAPHBLAS_EMPTY;
    case MKRT_TOPOLOGY_SPARSE_FRONTIER: return MKRT_GRAPHBLAS_SPARSE;
    case MKRT_TOPOLOGY_HYBRID_FRONTIER: return MKRT_GRAPHBLAS_HYBRID;
    case MKRT_TOPOLOGY_DENSE_FRONTIER:
    case MKRT_TOPOLOGY_FUSED_DENSE: return MKRT_GRAPHBLAS_DENSE;
    case MKRT_TOPOLOGY_MEMORY_CONSTRAINED: return MKRT_GRAPHBLAS_MEMORY_CONSTRAINED;
    }
    return MKRT_GRAPHBLAS_EMPTY;
}

/* The evidence variants: recommend for the request after inference (so
 * the memo key is the inferred request) and hand that request back. */
static mkrt_status recommend_inferred(const mkrt_launch_policy *p, const mkrt_launch_request *req,
                                      const void *ev, mkrt_launch_request *e,
                                      mkrt_launch_recommendation *rec, mkrt_error *err)
{
    if (p == NULL || req == NULL || rec == NULL || ev == NULL)
        return mkrt__pl_error_set(err, MKRT_EINVAL,
                               "mkrt_launch_recommend_with_*_evidence got a NULL %s. Fix: pass "
                               "valid pointers.",
                               p == NULL     ? "policy"
                               : req == NULL ? "request"
                               : rec == NULL ? "recommendation"
                                             : "evidence record");
    *e = *req;
    infer_missing_signals(e);
    return recommend_inner(p, e, -1, rec, err);
}

mkrt_status mkrt_launch_recommend_with_topology_evidence(const mkrt_launch_policy *p,
                                                         const mkrt_launch_request *req,
                                                         mkrt_launch_recommendation *rec,
                                                         mkrt_topology_evidence *ev,
                                                         mkrt_error *err)
{
    mkrt_launch_request e;
    mkrt_status st = recommend_inferred(p, req, ev, &e, rec, err);
    if (st != MKRT_OK)
        return st;
    *ev = (mkrt_topology_evidence){MKRT_TOPOLOGY_EVIDENCE_SCHEMA_VERSION,
                                   rec->pressure,
                                   e.frontier_density_bps,
                                   e.frontier_density_bps,
                                   rec->topology,
                                   graphblas_class(rec->topology),
                                   e.resident_device_bytes,
                                   rec->estimated_peak_device_bytes,
                                   true};
    return MKRT_OK;
}

mkrt_status mkrt_launch_recommend_with_promotion_evidence(const mkrt_launch_policy *p,
                                                          const mkrt_launch_request *req,
                                                          mkrt_launch_recommendation *rec,
                                                          mkrt_promotion_evidence *ev,
                                                          mkrt_error *err)
{
    mkrt_launch_request e;
    mkrt_status st = recommend_inferred(p, req, ev, &e, rec, err);
    if (st != MKRT_OK)
        return st;
    mkrt_promotion_route route = MKRT_ROUTE_INTERPRETER;
    if (rec->execution_mode == MKRT_EXEC_JIT)
        route = rec->promote_hot_opcodes
                    ? (rec->promote_hot_windows ? MKRT_ROUTE_OPCODE_AND_WINDOW_JIT : MKRT_ROUTE_OPCODE_JIT)
                    : (rec->promote_hot_windows ? MKRT_ROUTE_WINDOW_JIT : MKRT_ROUTE_QUEUE_JIT);
    *ev = (mkrt_promotion_evidence){MKRT_PROMOTION_EVIDENCE_SCHEMA_VERSION,
                                    e.queue_len,
                                    p->jit_queue_len_threshold,
                                    e.hot_opcode_count,
                                    p->hot_opcode_threshold,
                                    e.hot_window_count,
                                    p->hot_window_threshold,
                                    rec->execution_mode,
                                    rec->promote_hot_opcodes,
                                    rec->promote_hot_windows,
                                    route,
                                    rec->promote_hot_windows,
                                    true};
    return MKRT_OK;
}

bool mkrt_topology_evidence_is_complete(const mkrt_topology_evidence *ev)
{
    return ev != NULL && ev->schema_version == MKRT_TOPOLOGY_EVIDENCE_SCHEMA_VERSION &&
           ev->frontier_density_bps <= 10000 && ev->semiring_frontier_density_bps <= 10000 &&
           ev->output_parity_required;
}

bool mkrt_promotion_evidence_is_complete(const mkrt_promotion_evidence *ev)
{
    return ev != NULL && ev->schema_version == MKRT_PROMOTION_EVIDENCE_SCHEMA_VERSION &&
           ev->jit_queue_len_threshold != 0 && ev->hot_opcode_threshold != 0 &&
           ev->hot_window_threshold != 0 &&
           ev->fused_descriptor_window_required == ev->promote_hot_windows &&
           ev->output_parity_required;
}

/* IEEE 754 totalOrder key: compare the results as signed integers. */
static int64_t total_order_key(double d)
{
    int64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return bits ^ (int64_t)((uint64_t)(bits >> 63) >> 1);
}

static size_t best_cost_index(const double *costs, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (total_order_key(costs[i]) < total_order_key(costs[best]))
            best = i;
    return best;
}

uint32_t mkrt_autotune_hit_capacity_multiplier(const mkrt_launch_policy *p,
                                               const uint32_t *candidates, size_t n_candidates,
                                               const double *costs, size_t n_costs)
{
    return mkrt_autotune_workgroup_size(candidates, n_candidates, costs, n_costs,
                                        p == NULL ? 0 : p->hit_capacity_multiplier);
}

uint32_t mkrt_autotune_workgroup_size(const uint32_t *candidates, size_t n_candidates,
                                      const double *costs, size_t n_costs, uint32_t current)
{
    if (n_candidates == 0 || n_costs == 0 || candidates == NULL || costs == NULL)
        return current;
    size_t n = n_candidates < n_costs ? n_candidates : n_costs;
    return candidates[best_cost_index(costs, n)];
}

mkrt_status mkrt_natural_gradient_step(const double *m, size_t m_len, const double *grad,
                                       size_t grad_len, uint32_t n, double learning_rate,
                                       double *out, size_t out_cap, size_t *written,
                                       mkrt_error *err)
{
    if (written == NULL)
        return mkrt__pl_error_set(err, MKRT_EINVAL,
                               "mkrt_natural_gradient_step got a NULL `written`. Fix: pass where "
                               "to store the count.");
    *written = 0;
    uint64_t need = (uint64_t)n * n;
    if (m_len < need || grad_len < n || n == 0)
        return MKRT_OK;
    if (m == NULL || grad == NULL)
        return mkrt__pl_error_set(err, MKRT_EINVAL,
                               "mkrt_natural_gradient_step got a NULL %s with %zu entries claimed. "
                               "Fix: pass the array or a length of 0.",
                               m == NULL ? "matrix" : "gradient", m == NULL ? m_len : grad_len);
    if (out == NULL || out_cap < n)
        return mkrt__pl_error_set(err, MKRT_EINVAL,
                               "megakernel natural-gradient output holds %zu entries but the "
                               "dimension is %u. Fix: pass an output buffer of n entries.",
                               out_cap, n);
    for (uint32_t r = 0; r < n; r++) {
        double acc = 0.0;
        for (uint32_t c = 0; c < n; c++)
            acc += m[(size_t)r * n + c] * grad[c];
        out[r] = -learning_rate * acc;
    }
    *written = n;
    return MKRT_OK;
}

mkrt_launch_config mkrt_launch_config_default(void)
{
    mkrt_launch_config c;
    memset(&c, 0, sizeof c);
    c.worker_count = 64;
    c.max_wall_time_ns = 60ull * 1000000000ull;
    return c;
}

mkrt_status mkrt_launch_config_validate(const mkrt_launch_config *c, mkrt_error *err)
{
    if (c == NULL)
        return mkrt__pl_error_set(err, MKRT_EINVAL,
                               "mkrt_launch_config_validate got a NULL config. Fix: start from "
                               "mkrt_launch_config_default().");
    if (c->worker_count == 0)
        return mkrt__pl_error_set(err, MKRT_EINVAL,
                               "megakernel worker_count is 0. Fix: use at least one worker group.");
    if (c->max_wall_time_ns == 0)
        return mkrt__pl_error_set(err, MKRT_EINVAL,
                               "megakernel max_wall_time is 0. Fix: give the launch a non-zero "
                               "wall-time limit.");
    return MKRT_OK;
}

mkrt_launch_request mkrt_launch_config_request(const mkrt_launch_config *c, uint32_t queue_len,
                                               uint32_t max_workgroup_size_x,
                                               uint32_t max_workgroups_per_dimension,
                                               uint32_t max_invocations_per_workgroup)
{
    static const mkrt_launch_config zero = {0, 0, 0, {0, 0, 0, 0, 0, 0, 0, 0}};
    if (c == NULL)
        c = &zero;
    mkrt_launch_request r = mkrt_launch_request_direct(queue_len, c->worker_count, max_workgroup_size_x);
    r.max_compute_workgroups_per_dimension = max_workgroups_per_dimension;
    r.max_compute_invocations_per_workgroup = max_invocations_per_workgroup;
    r.expected_hits_per_item = c->expected_items_per_worker > 1 ? c->expected_items_per_worker : 1;
    r.hot_opcode_count = c->hints.hot_opcode_count;
    r.hot_window_count = c->hints.hot_window_count;
    r.graph_node_count = c->hints.graph_node_count;
    r.graph_edge_count = c->hints.graph_edge_count;
    r.frontier_density_bps = c->hints.frontier_density_bps;
    r.memory_pressure_bps = c->hints.memory_pressure_bps;
    r.resident_device_bytes = c->hints.resident_device_bytes;
    r.device_memory_budget_bytes = c->hints.device_memory_budget_bytes;
    return r;
}

void mkrt_launch_request_apply_tasks(mkrt_launch_request *r, const struct mkrt_task_snapshot *s)
{
    if (r == NULL || s == NULL)
        return;
    uint64_t q = (uint64_t)s->ready + s->yielded + s->requeued;
    r->queue_len = q > UINT32_MAX ? UINT32_MAX : (uint32_t)q;
    uint64_t add = (uint64_t)s->yielded + s->requeued, total;
    if (__builtin_add_overflow(add, s->task_requeues, &add) ||
        __builtin_add_overflow(r->requeue_count, add, &total))
        total = UINT64_MAX;
    r->requeue_count = total;
    r->max_priority_age = s->max_age_ticks;
}

const char *mkrt_topology_name(mkrt_dispatch_topology t)
{
    static const char *const n[] = {"empty", "sparse_frontier", "hybrid_frontier",
                                    "dense_frontier", "fused_dense", "memory_constrained"};
    return (unsigned)t < 6 ? n[t] : "unknown";
}

const char *mkrt_pressure_name(mkrt_queue_pressure p)
{
    static const char *const n[] = {"empty", "light", "balanced", "saturated"};
    return (unsigned)p < 4 ? n[p] : "unknown";
}

const char *mkrt_graphblas_class_name(mkrt_graphblas_class c)
{
    static const char *const n[] = {"empty", "sparse", "hybrid", "dense", "memory_constrained"};
    return (unsigned)c < 5 ? n[c] : "unknown";
}

const char *mkrt_promotion_route_name(mkrt_promotion_route r)
{
    static const char *const n[] = {"interpreter", "queue_jit", "opcode_jit", "window_jit",
                                    "opcode_and_window_jit"};
    return (unsigned)r < 5 ? n[r] : "unknown";
}
