/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_bad_input_plan.c - the second half of the bad-input tests
 * (the first is test_bad_input.c): topology.h and plan_cache.h with bad
 * input, as there, then allocation failure injection. For every create
 * function (and every call that grows a scratch or publishes a plan) the
 * k-th allocation fails, for k = 0, 1, 2, ... until the call succeeds; each
 * failure must come back as MKRT_ENOMEM with a Fix, and every byte the
 * call allocated must be freed again (allocation count == free count, and
 * the sizes passed to free add up to the sizes allocated).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "count_alloc.h"
#include "mkrt/alloc.h"
#include "mkrt/barrier.h"
#include "mkrt/frontier.h"
#include "mkrt/layer.h"
#include "mkrt/plan_cache.h"
#include "mkrt_planlib/cached.h"
#include "mkrt/ring.h"
#include "mkrt/status.h"
#include "mkrt/topology.h"
#include "ring_cases.h"
#include "tap.h"
#include "bad_input.h"

/* ---- topology.h --------------------------------------------------------- */

static bool decision_equal(const mkrt_topology_decision *a, const mkrt_topology_decision *b)
{
    return a->topology == b->topology && a->memory_pressure_bps == b->memory_pressure_bps &&
           a->average_degree_bps == b->average_degree_bps &&
           a->launch_pressure_bps == b->launch_pressure_bps;
}

static void topology_bad_input(void)
{
    mkrt_exec_sample zs = {0, 0, 0}, sample = {1000.0, 0.5, 4096};
    mkrt_graph_shape zg = {0, 0}, graph = {100, 400};
    mkrt_memory_budget zm = {0, 0};
    mkrt_byte_layout layout = {8, 8, 0, 0, 0}, huge_layout = {UINT64_MAX, 1, 0, 0, 0};
    mkrt_topology_decision want = mkrt_select_topology(&zs, &zg, &zm, 100.0, 0.5, true);
    mkrt_topology_decision got = mkrt_select_topology(NULL, NULL, NULL, 100.0, 0.5, true);
    ok(decision_equal(&got, &want), "select_topology(NULL, NULL, NULL) reads zeros");
    got = mkrt_select_topology_stable(NULL, NULL, NULL, 100.0, 0.5, MKRT_WAVE_HYBRID, true);
    ok(got.topology <= MKRT_WAVE_FUSED, "select_topology_stable(NULL, NULL, NULL) returns a topology");
    want = mkrt_select_topology(&sample, &graph, &zm, NAN, NAN, true);
    got = mkrt_select_topology_stable(&sample, &graph, &zm, NAN, NAN, (mkrt_wave_topology)99, true);
    ok(decision_equal(&got, &want), "select_topology_stable(previous 99) gives the plain decision");

    is_str(mkrt_wave_topology_name((mkrt_wave_topology)99), "Unknown", "wave_topology_name(99)");
    is_str(mkrt_wave_topology_name(MKRT_WAVE_NONE), "Unknown", "wave_topology_name(NONE)");

    uint64_t bytes;
    mkrt_memory_plan mp;
    mkrt_exec_plan xp;
    CHECK(MKRT_EINVAL, mkrt_topology_scratch_bytes((mkrt_wave_topology)99, 1, &bytes, E),
          "topology_scratch_bytes(topology 99)");
    CHECK(MKRT_EINVAL, mkrt_topology_scratch_bytes(MKRT_WAVE_NONE, 1, &bytes, E),
          "topology_scratch_bytes(MKRT_WAVE_NONE)");
    CHECK(MKRT_EINVAL, mkrt_topology_scratch_bytes(MKRT_WAVE_DENSE, 1, NULL, E),
          "topology_scratch_bytes(NULL result)");
    CHECK(MKRT_EOVERFLOW, mkrt_topology_scratch_bytes(MKRT_WAVE_FUSED, UINT64_MAX, &bytes, E),
          "topology_scratch_bytes(UINT64_MAX, fused)");
    CHECK(MKRT_EINVAL, mkrt_graph_resident_bytes(NULL, &layout, &bytes, E),
          "graph_resident_bytes(NULL graph)");
    CHECK(MKRT_EINVAL, mkrt_graph_resident_bytes(&graph, NULL, &bytes, E),
          "graph_resident_bytes(NULL layout)");
    CHECK(MKRT_EINVAL, mkrt_graph_resident_bytes(&graph, &layout, NULL, E),
          "graph_resident_bytes(NULL result)");
    CHECK(MKRT_EOVERFLOW, mkrt_graph_resident_bytes(&graph, &huge_layout, &bytes, E),
          "graph_resident_bytes(overflowing layout)");
    CHECK(MKRT_EINVAL, mkrt_plan_memory_budget(MKRT_WAVE_DENSE, NULL, &layout, 1000, &mp, E),
          "plan_memory_budget(NULL graph)");
    CHECK(MKRT_EINVAL, mkrt_plan_memory_budget(MKRT_WAVE_DENSE, &graph, NULL, 1000, &mp, E),
          "plan_memory_budget(NULL layout)");
    CHECK(MKRT_EINVAL, mkrt_plan_memory_budget(MKRT_WAVE_DENSE, &graph, &layout, 1000, NULL, E),
          "plan_memory_budget(NULL result)");
    CHECK(MKRT_EINVAL, mkrt_plan_memory_budget((mkrt_wave_topology)99, &graph, &layout, 1u << 30, &mp, E),
          "plan_memory_budget(topology 99)");
    CHECK(MKRT_EBUDGET, mkrt_plan_memory_budget(MKRT_WAVE_DENSE, &graph, &layout, 10, &mp, E),
          "plan_memory_budget(over budget)");
#define PX(S, G, L, O) mkrt_plan_execution(S, G, L, 1u << 30, 100.0, 0.5, true, O, E)
    CHECK(MKRT_EINVAL, PX(NULL, &graph, &layout, &xp), "plan_execution(NULL sample)");
    CHECK(MKRT_EINVAL, PX(&sample, NULL, &layout, &xp), "plan_execution(NULL graph)");
    CHECK(MKRT_EINVAL, PX(&sample, &graph, NULL, &xp), "plan_execution(NULL layout)");
    CHECK(MKRT_EINVAL, PX(&sample, &graph, &layout, NULL), "plan_execution(NULL result)");
#undef PX
    mkrt_exec_sample tel = mkrt_exec_sample_from_telemetry(UINT32_MAX, UINT64_MAX, NAN);
    ok(tel.frontier_density > 1, "exec_sample_from_telemetry(huge) returns a value");

}

/* ---- plan_cache.h ------------------------------------------------------- */

static const size_t group_offsets[3] = {0, 2, 3};
static const size_t group_waves[3] = {0, 1, 2};

enum { BUILD_GOOD, BUILD_NULL_OFFSETS, BUILD_NULL_WAVES, BUILD_FAILS };

static mkrt_status build(void *ctx, const mkrt_plan_key *key, mkrt_wave_topology previous,
                         mkrt_plan *plan, mkrt_error *e)
{
    (void)key;
    (void)previous;
    int mode = *(const int *)ctx;
    plan->decision.topology = MKRT_WAVE_SPARSE;
    plan->group_count = 2;
    plan->group_offsets = group_offsets;
    plan->group_waves = group_waves;
    if (mode == BUILD_NULL_OFFSETS)
        plan->group_offsets = NULL;
    if (mode == BUILD_NULL_WAVES)
        plan->group_waves = NULL;
    if (mode == BUILD_FAILS) {
        if (e != NULL) {
            e->status = MKRT_ESTATE;
            snprintf(e->message, sizeof e->message, "test builder refused. Fix: nothing to fix.");
        }
        return MKRT_ESTATE;
    }
    return MKRT_OK;
}

static void plan_cache_bad_input(void)
{
    mkrt_device_key dk = mkrt_device_key_from_caps(UINT32_MAX, UINT32_MAX, UINT32_MAX, true, 0);
    ok(dk.sm_major == 65535 && dk.sm_minor == 65535 && dk.warp_size == 65535,
       "device_key_from_caps(huge) saturates");
    mkrt_device_key cpu = mkrt_device_key_cpu();
    is(mkrt_plan_density_bucket(NAN), 0, "plan_density_bucket(NaN) is 0");
    is(mkrt_plan_density_bucket(-INFINITY), 0, "plan_density_bucket(-inf) is 0");
    is(mkrt_plan_density_bucket(1e300), 15, "plan_density_bucket(1e300) is 15");
    is(mkrt_plan_pressure_bucket(1, 0), UINT32_MAX / 1000, "plan_pressure_bucket(1, 0) saturates");
    is(mkrt_plan_readback_bucket(UINT64_MAX), 52, "plan_readback_bucket(UINT64_MAX) is 52");
    is(mkrt_plan_launch_bucket(INFINITY, 0), UINT32_MAX / 1000, "plan_launch_bucket(inf, 0)");
    is(mkrt_plan_launch_bucket(1.0, NAN), 0, "plan_launch_bucket(1, NaN) is 0");
    is(mkrt_plan_fusion_bucket(NAN), 0, "plan_fusion_bucket(NaN) is 0");
    is(mkrt_plan_fusion_bucket(1e300), UINT32_MAX / 1000, "plan_fusion_bucket(1e300) saturates");

    mkrt_exec_sample zs = {0, 0, 0}, sample = {1000.0, 0.5, 4096};
    mkrt_memory_budget zm = {0, 0}, mem = {1u << 20, 1u << 30};
    mkrt_device_key zd;
    memset(&zd, 0, sizeof zd);
    mkrt_plan_key want = mkrt_plan_key_make(1, MKRT_ANALYSIS_DATAFLOW, 0, &zd, 1, &zs, &zm, 1.0, 0.0);
    mkrt_plan_key got = mkrt_plan_key_make(1, MKRT_ANALYSIS_DATAFLOW, 0, NULL, 1, NULL, NULL, 1.0, 0.0);
    ok(mkrt_plan_key_equal(&got, &want), "plan_key_make(NULL device, sample, memory) reads zeros");
    got = mkrt_plan_key_make(1, (mkrt_analysis_kind)99, 7, &cpu, 1, &sample, &mem, NAN, NAN);
    ok(got.custom_tag == 0, "plan_key_make(kind 99, NaN pressures) makes a key");
    mkrt_plan_key_rehash(NULL);
    ok(!mkrt_plan_key_equal(NULL, &want) && !mkrt_plan_key_equal(&want, NULL) &&
           mkrt_plan_key_equal(NULL, NULL),
       "plan_key_equal: NULL equals only NULL");
    is(mkrt_plan_checksum(NULL), 0, "plan_checksum(NULL) is 0");

    mkrt_plan_cache_config defaults = mkrt_plan_cache_config_default();
    ok(defaults.max_entries == MKRT_PLAN_CACHE_DEFAULT_ENTRIES && defaults.max_bytes == 0,
       "plan_cache_config_default");
    mkrt_plan_cache *c = NULL;
    mkrt_plan_cache_config cfg = {MKRT_PLAN_CACHE_MAX_ENTRIES + 1, 0}, tiny = {4, 1};
    CHECK(MKRT_EINVAL, mkrt_plan_cache_create(NULL, NULL, E), "plan_cache_create(NULL out)");
    CHECK(MKRT_EINVAL, mkrt_plan_cache_create(&cfg, &c, E), "plan_cache_create(2^24 + 1 entries)");
    ok(c == NULL, "... leaves *out NULL");
    cfg.max_entries = SIZE_MAX;
    CHECK(MKRT_EINVAL, mkrt_plan_cache_create(&cfg, &c, E), "plan_cache_create(SIZE_MAX entries)");
    CHECK(MKRT_EINVAL, mkrt_plan_cache_create(&tiny, &c, E), "plan_cache_create(max_bytes 1)");
    mkrt_plan_cache_destroy(NULL);
    is(mkrt_plan_cache_create(NULL, &c, NULL), MKRT_OK, "plan_cache_create(NULL config) uses the defaults");

    /* An unlock without a lock must not unbalance liburcu's nesting count:
     * if it did, the grace period in destroy below would never end. */
    mkrt_plan_cache_read_unlock();
    mkrt_plan_cache_read_unlock();
    mkrt_plan_cache_read_lock();
    mkrt_plan_cache_read_lock();
    mkrt_plan_cache_read_unlock();
    mkrt_plan_cache_read_unlock();
    mkrt_plan_cache_read_unlock();

    mkrt_plan_key k = mkrt_plan_key_make(1, MKRT_ANALYSIS_DATAFLOW, 0, &cpu, 1, &sample, &mem, 1.0, 0.0);
    const mkrt_plan *pp = NULL;
    mkrt_plan copy;
    int good = BUILD_GOOD, null_off = BUILD_NULL_OFFSETS, null_waves = BUILD_NULL_WAVES,
        fails = BUILD_FAILS;
    mkrt_plan_cache_read_lock();
    ok(mkrt_plan_cache_find(NULL, &k) == NULL, "plan_cache_find(NULL cache) is NULL");
    ok(mkrt_plan_cache_find(c, NULL) == NULL, "plan_cache_find(NULL key) is NULL");
    CHECK(MKRT_EINVAL, mkrt_plan_cache_get_or_plan(NULL, &k, build, &good, &pp, E),
          "plan_cache_get_or_plan(NULL cache)");
    CHECK(MKRT_EINVAL, mkrt_plan_cache_get_or_plan(c, NULL, build, &good, &pp, E),
          "plan_cache_get_or_plan(NULL key)");
    CHECK(MKRT_EINVAL, mkrt_plan_cache_get_or_plan(c, &k, NULL, &good, &pp, E),
          "plan_cache_get_or_plan(NULL builder)");
    CHECK(MKRT_EINVAL, mkrt_plan_cache_get_or_plan(c, &k, build, &good, NULL, E),
          "plan_cache_get_or_plan(NULL result)");
    CHECK(MKRT_EINVAL, mkrt_plan_cache_get_or_plan(c, &k, build, &null_off, &pp, E),
          "plan_cache_get_or_plan(builder: 2 groups, NULL offsets)");
    CHECK(MKRT_EINVAL, mkrt_plan_cache_get_or_plan(c, &k, build, &null_waves, &pp, E),
          "plan_cache_get_or_plan(builder: 2 groups, NULL waves)");
    CHECK(MKRT_ESTATE, mkrt_plan_cache_get_or_plan(c, &k, build, &fails, &pp, E),
          "plan_cache_get_or_plan(builder error)");
    mkrt_plan_cache_read_unlock();
    mkrt_plan_cache_stats stats;
    mkrt_plan_cache_stats_read(c, &stats);
    is(stats.entries, 0, "... none of them cached anything");
    CHECK(MKRT_EINVAL, mkrt_plan_cache_get_or_plan_copy(c, &k, build, &good, NULL, E),
          "plan_cache_get_or_plan_copy(NULL result)");
    CHECK(MKRT_EINVAL, mkrt_plan_cache_get_or_plan_copy(NULL, &k, build, &good, &copy, E),
          "plan_cache_get_or_plan_copy(NULL cache)");
    is(mkrt_plan_cache_get_or_plan_copy(c, &k, build, &good, &copy, NULL), MKRT_OK,
       "plan_cache_get_or_plan_copy with good input still plans");
    ok(copy.group_count == 2 && copy.group_offsets == NULL, "... and copies the fixed part");

    is(mkrt_plan_cache_remove(NULL, &k), 0, "plan_cache_remove(NULL cache) is 0");
    is(mkrt_plan_cache_remove(c, NULL), 0, "plan_cache_remove(NULL key) is 0");
    is(mkrt_plan_cache_invalidate_device(NULL, &cpu), 0, "plan_cache_invalidate_device(NULL cache) is 0");
    is(mkrt_plan_cache_invalidate_device(c, NULL), 0, "plan_cache_invalidate_device(NULL device) is 0");
    is(mkrt_plan_cache_invalidate_policy_before(NULL, UINT64_MAX), 0,
       "plan_cache_invalidate_policy_before(NULL cache) is 0");
    is(mkrt_plan_cache_clear(NULL), 0, "plan_cache_clear(NULL) is 0");
    memset(&stats, 0xFF, sizeof stats);
    mkrt_plan_cache_stats_read(NULL, &stats);
    ok(stats.hits == 0 && stats.entries == 0 && stats.bytes == 0,
       "plan_cache_stats_read(NULL cache) zeroes the stats");
    mkrt_plan_cache_stats_read(c, NULL);
    mkrt_plan_cache_stats_read(c, &stats);
    is(stats.entries, 1, "the cache kept the one good plan through all of it");

    mkrt_plan_identity id = {1, MKRT_ANALYSIS_DATAFLOW, 0, cpu, 1}, bad_id = id;
    bad_id.analysis_kind = (mkrt_analysis_kind)99;
    mkrt_graph_shape graph = {100, 400};
    mkrt_byte_layout layout = {8, 8, 0, 0, 0};
    mkrt_topology_decision dec;
    mkrt_exec_plan xp;
    mkrt_frontier_exec_plan fxp;
    mkrt_barrier_scratch *bs = mkrt_barrier_scratch_create(0, 0, NULL);
    mkrt_frontier_wave w[2] = {{10, 1, 1}, {10, 1, 1}};
    mkrt_wave_dep dep = {0, 1};

#define SEL(C, I, S, G, M, O) mkrt_plan_cache_select_topology(C, I, S, G, M, 100.0, 0.5, O, E)
    CHECK(MKRT_EINVAL, SEL(NULL, &id, &sample, &graph, &mem, &dec), "plan_cache_select_topology(NULL cache)");
    CHECK(MKRT_EINVAL, SEL(c, NULL, &sample, &graph, &mem, &dec), "plan_cache_select_topology(NULL identity)");
    CHECK(MKRT_EINVAL, SEL(c, &id, NULL, &graph, &mem, &dec), "plan_cache_select_topology(NULL sample)");
    CHECK(MKRT_EINVAL, SEL(c, &id, &sample, NULL, &mem, &dec), "plan_cache_select_topology(NULL graph)");
    CHECK(MKRT_EINVAL, SEL(c, &id, &sample, &graph, NULL, &dec), "plan_cache_select_topology(NULL memory)");
    CHECK(MKRT_EINVAL, SEL(c, &id, &sample, &graph, &mem, NULL), "plan_cache_select_topology(NULL result)");
    CHECK(MKRT_EINVAL, SEL(c, &bad_id, &sample, &graph, &mem, &dec),
          "plan_cache_select_topology(analysis kind 99)");
#undef SEL
#define PEX(C, I, S, G, L, O) mkrt_plan_cache_plan_execution(C, I, S, G, L, 1u << 30, 100.0, 0.5, O, E)
    CHECK(MKRT_EINVAL, PEX(NULL, &id, &sample, &graph, &layout, &xp), "plan_cache_plan_execution(NULL cache)");
    CHECK(MKRT_EINVAL, PEX(c, NULL, &sample, &graph, &layout, &xp), "plan_cache_plan_execution(NULL identity)");
    CHECK(MKRT_EINVAL, PEX(c, &id, NULL, &graph, &layout, &xp), "plan_cache_plan_execution(NULL sample)");
    CHECK(MKRT_EINVAL, PEX(c, &id, &sample, NULL, &layout, &xp), "plan_cache_plan_execution(NULL graph)");
    CHECK(MKRT_EINVAL, PEX(c, &id, &sample, &graph, NULL, &xp), "plan_cache_plan_execution(NULL layout)");
    CHECK(MKRT_EINVAL, PEX(c, &id, &sample, &graph, &layout, NULL), "plan_cache_plan_execution(NULL result)");
    CHECK(MKRT_EINVAL, PEX(c, &bad_id, &sample, &graph, &layout, &xp),
          "plan_cache_plan_execution(analysis kind 99)");
#undef PEX
#define PF(C, I, B, S, G, L, W, WN, D, DN, O)                                                  \
    mkrt_plan_cache_plan_frontier(C, I, B, S, G, L, W, WN, D, DN, 1u << 30, 100.0, 0.5, O, E)
    CHECK(MKRT_EINVAL, PF(NULL, &id, bs, &sample, &graph, &layout, w, 2, &dep, 1, &fxp),
          "plan_cache_plan_frontier(NULL cache)");
    CHECK(MKRT_EINVAL, PF(c, NULL, bs, &sample, &graph, &layout, w, 2, &dep, 1, &fxp),
          "plan_cache_plan_frontier(NULL identity)");
    CHECK(MKRT_EINVAL, PF(c, &id, NULL, &sample, &graph, &layout, w, 2, &dep, 1, &fxp),
          "plan_cache_plan_frontier(NULL scratch)");
    CHECK(MKRT_EINVAL, PF(c, &id, bs, NULL, &graph, &layout, w, 2, &dep, 1, &fxp),
          "plan_cache_plan_frontier(NULL sample)");
    CHECK(MKRT_EINVAL, PF(c, &id, bs, &sample, NULL, &layout, w, 2, &dep, 1, &fxp),
          "plan_cache_plan_frontier(NULL graph)");
    CHECK(MKRT_EINVAL, PF(c, &id, bs, &sample, &graph, NULL, w, 2, &dep, 1, &fxp),
          "plan_cache_plan_frontier(NULL layout)");
    CHECK(MKRT_EINVAL, PF(c, &id, bs, &sample, &graph, &layout, NULL, 2, &dep, 1, &fxp),
          "plan_cache_plan_frontier(NULL waves, 2)");
    CHECK(MKRT_EINVAL, PF(c, &id, bs, &sample, &graph, &layout, w, 2, NULL, 1, &fxp),
          "plan_cache_plan_frontier(NULL deps, 1)");
    CHECK(MKRT_EINVAL, PF(c, &id, bs, &sample, &graph, &layout, w, 2, &dep, 1, NULL),
          "plan_cache_plan_frontier(NULL result)");
    CHECK(MKRT_EINVAL, PF(c, &bad_id, bs, &sample, &graph, &layout, w, 2, &dep, 1, &fxp),
          "plan_cache_plan_frontier(analysis kind 99)");
    CHECK(MKRT_EOVERFLOW, PF(c, &id, bs, &sample, &graph, &layout, w, SIZE_MAX, NULL, 0, &fxp),
          "plan_cache_plan_frontier(SIZE_MAX waves)");
#undef PF
    E = NULL;
    is(mkrt_plan_cache_plan_frontier(c, &id, bs, &sample, &graph, &layout, w, 2, &dep, 1, 1u << 30,
                                     100.0, 0.5, &fxp, NULL),
       MKRT_OK, "plan_cache_plan_frontier with good input still plans");
    mkrt_barrier_scratch_destroy(bs);
    mkrt_plan_cache_destroy(c); /* hangs in its grace period if a section was left open */
}

/* ---- allocation failure injection --------------------------------------- */

/* One attempt at a call that allocates: returns its status and, on
 * success, an object for release() (which frees everything). */
typedef struct alloc_case {
    const char *name;
    mkrt_status (*attempt)(mkrt_error *e, void **obj);
    void (*release)(void *obj);
} alloc_case;

static mkrt_status try_spsc(mkrt_error *e, void **obj)
{
    *obj = mkrt_spsc_ring_create(1024, e);
    return *obj != NULL ? MKRT_OK : e->status;
}
static void rel_spsc(void *o) { mkrt_spsc_ring_destroy(o); }

static mkrt_status try_mpmc(mkrt_error *e, void **obj)
{
    *obj = mkrt_mpmc_ring_create(1024, e);
    return *obj != NULL ? MKRT_OK : e->status;
}
static void rel_mpmc(void *o) { mkrt_mpmc_ring_destroy(o); }

static mkrt_status try_barrier_scratch(mkrt_error *e, void **obj)
{
    *obj = mkrt_barrier_scratch_create(64, 128, e);
    return *obj != NULL ? MKRT_OK : e->status;
}
static void rel_barrier(void *o) { mkrt_barrier_scratch_destroy(o); }

/* A scratch created without failures, then grown by a plan. */
static mkrt_status try_barrier_growth(mkrt_error *e, void **obj)
{
    static mkrt_wave_dep deps[300];
    for (size_t i = 0; i < 300; i++)
        deps[i] = (mkrt_wave_dep){i, i + 1};
    mkrt_barrier_scratch *s = mkrt_barrier_scratch_create(0, 0, e);
    if (s == NULL)
        return e->status;
    mkrt_barrier_plan p = {99, 99, 99, NULL, NULL};
    mkrt_status st = mkrt_plan_barriers(s, 301, deps, 300, &p, e);
    if (st != MKRT_OK) {
        /* The failed growth left the scratch as it was, and usable. */
        mkrt_barrier_plan q;
        if (p.wave_count != 99 || mkrt_plan_barriers(s, 3, deps, 2, &q, NULL) != MKRT_OK ||
            q.group_count != 3)
            st = MKRT_ESTATE;
        mkrt_barrier_scratch_destroy(s);
        return st;
    }
    *obj = s;
    return p.group_count == 301 ? MKRT_OK : MKRT_ESTATE;
}

static mkrt_status try_layer(mkrt_error *e, void **obj)
{
    static mkrt_item items[5000];
    for (uint32_t i = 0; i < 5000; i++)
        items[i] = (mkrt_item){1, i * 7919u, i * 104729u, i}; /* sparse: the hash table */
    mkrt_layer_scratch *s = mkrt_layer_scratch_create(e);
    if (s == NULL)
        return e->status;
    mkrt_layer_plan p = {99, 99, NULL, NULL, NULL};
    mkrt_status st = mkrt_layer_batch(s, items, 5000, &p, e);
    if (st != MKRT_OK) {
        mkrt_layer_plan q;
        if (p.item_count != 99 || mkrt_layer_batch(s, items, 2, &q, NULL) != MKRT_OK ||
            q.layer_count != 1)
            st = MKRT_ESTATE;
        mkrt_layer_scratch_destroy(s);
        return st;
    }
    *obj = s;
    return p.item_count == 5000 ? MKRT_OK : MKRT_ESTATE;
}
static void rel_layer(void *o) { mkrt_layer_scratch_destroy(o); }

static mkrt_status try_plan_cache(mkrt_error *e, void **obj)
{
    mkrt_plan_cache *c = (mkrt_plan_cache *)(uintptr_t)1;
    mkrt_plan_cache_config cfg = {100, 0};
    mkrt_status st = mkrt_plan_cache_create(&cfg, &c, e);
    if (st != MKRT_OK)
        return c == NULL ? st : MKRT_ESTATE; /* *out must be NULL on failure */
    *obj = c;
    return MKRT_OK;
}
static void rel_plan_cache(void *o) { mkrt_plan_cache_destroy(o); }

/* A cache created without failures, then a miss that publishes a plan
 * with barrier groups (plan node, identity node). */
static mkrt_status try_plan_publish(mkrt_error *e, void **obj)
{
    mkrt_plan_cache *c;
    mkrt_plan_cache_config cfg = {8, 0};
    mkrt_status st = mkrt_plan_cache_create(&cfg, &c, e);
    if (st != MKRT_OK)
        return st;
    mkrt_device_key cpu = mkrt_device_key_cpu();
    mkrt_exec_sample sample = {1000.0, 0.5, 4096};
    mkrt_memory_budget mem = {1u << 20, 1u << 30};
    mkrt_plan_key k = mkrt_plan_key_make(1, MKRT_ANALYSIS_DATAFLOW, 0, &cpu, 1, &sample, &mem, 1.0, 0.0);
    int good = BUILD_GOOD;
    mkrt_plan p;
    st = mkrt_plan_cache_get_or_plan_copy(c, &k, build, &good, &p, e);
    mkrt_plan_cache_stats stats;
    mkrt_plan_cache_stats_read(c, &stats);
    if (st != MKRT_OK) {
        if (stats.entries != 0)
            st = MKRT_ESTATE; /* a failed publication must leave nothing behind */
        mkrt_plan_cache_destroy(c);
        return st;
    }
    *obj = c;
    return stats.entries == 1 && p.group_count == 2 ? MKRT_OK : MKRT_ESTATE;
}

static void run_alloc_case(const alloc_case *ac)
{
    int enomem = 0, other = 0, no_fix = 0, leaks = 0, failing = 0;
    bool finished = false;
    for (uint64_t k = 0; k < 200 && !finished; k++) {
        count_alloc_reset();
        count_alloc_fail_nth(k);
        mkrt_error e;
        mkrt_error_clear(&e);
        void *obj = NULL;
        mkrt_status st = ac->attempt(&e, &obj);
        uint64_t injected = count_alloc_failures();
        if (st == MKRT_OK) {
            ac->release(obj);
        } else {
            failing++;
            if (st == MKRT_ENOMEM && e.status == MKRT_ENOMEM)
                enomem++;
            else {
                other++;
                diag("%s: allocation %llu failing gave %s: %s", ac->name, (unsigned long long)k,
                     mkrt_status_name(st), e.message);
            }
            if (strstr(e.message, "Fix:") == NULL)
                no_fix++;
        }
        if (count_alloc_calls() != count_alloc_frees() ||
            count_alloc_bytes() != count_alloc_freed_bytes()) {
            leaks++;
            diag("%s: allocation %llu failing: %llu allocations (%llu bytes), %llu frees (%llu bytes)",
                 ac->name, (unsigned long long)k, (unsigned long long)count_alloc_calls(),
                 (unsigned long long)count_alloc_bytes(), (unsigned long long)count_alloc_frees(),
                 (unsigned long long)count_alloc_freed_bytes());
        }
        if (injected == 0) { /* k is past the call's last allocation */
            finished = true;
            ok(st == MKRT_OK, "%s: succeeds once no allocation fails (%llu allocations)", ac->name,
               (unsigned long long)k);
        }
    }
    ok(finished, "%s: the failure sweep reached a success", ac->name);
    ok(failing > 0 && enomem == failing && other == 0,
       "%s: each of the %d injected failures that failed the call is MKRT_ENOMEM", ac->name, failing);
    is(no_fix, 0, "%s: ... each with a Fix in the message", ac->name);
    is(leaks, 0, "%s: allocations == frees and bytes allocated == bytes freed after every attempt",
       ac->name);
}

static void allocation_failures(void)
{
    static const alloc_case cases[] = {
        {"mkrt_spsc_ring_create", try_spsc, rel_spsc},
        {"mkrt_mpmc_ring_create", try_mpmc, rel_mpmc},
        {"mkrt_barrier_scratch_create", try_barrier_scratch, rel_barrier},
        {"mkrt_plan_barriers (scratch growth)", try_barrier_growth, rel_barrier},
        {"mkrt_layer_scratch_create + mkrt_layer_batch growth", try_layer, rel_layer},
        {"mkrt_plan_cache_create", try_plan_cache, rel_plan_cache},
        {"mkrt_plan_cache_get_or_plan_copy (publication)", try_plan_publish, rel_plan_cache},
    };
    count_alloc_install();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_alloc_case(&cases[i]);

    /* The ring that cannot be sized: a 2^30-item MPMC ring needs 20 GiB,
     * more than the test allocator hands out. */
    count_alloc_reset();
    count_alloc_fail_after(0);
    mkrt_error e;
    mkrt_error_clear(&e);
    ok(mkrt_mpmc_ring_create(MKRT_RING_CAPACITY_MAX, &e) == NULL && e.status == MKRT_ENOMEM &&
           strstr(e.message, "Fix:") != NULL,
       "mpmc_ring_create(2^30) with no memory: NULL, MKRT_ENOMEM with a Fix");
    ok(count_alloc_calls() == count_alloc_frees(), "... and frees what it got");
    count_alloc_reset();
    count_alloc_uninstall();
}

int main(void)
{
    topology_bad_input();
    plan_cache_bad_input();
    allocation_failures();
    return done_testing();
}
