/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_plan_cache.c - the RCU plan cache: the reference cache tests
 * (megakernel_plan_cache, §3.8), the cross-backend parity scenarios (§2.6)
 * on the neutral and the cached path, eviction, invalidation, stats,
 * capacity errors and the insert race. */
#include <stdio.h>
#include <string.h>

#include "../src/plan/plan_cache_internal.h"
#include "base/thread.h"
#include "count_alloc.h"
#include "mkrt/plan_cache.h"
#include "mkrt_planlib/cached.h"
#include "tap.h"

static const mkrt_device_key SM120 = {12, 0, 32, true, true, 1024};
static const mkrt_graph_shape G = {1000, 4000};

static mkrt_plan_cache *new_cache(size_t entries, size_t bytes)
{
    mkrt_plan_cache_config cfg = {entries, bytes};
    mkrt_plan_cache *c = NULL;
    mkrt_error err;
    if (mkrt_plan_cache_create(&cfg, &c, &err) != MKRT_OK)
        bail_out("cache creation failed: %s", err.message);
    return c;
}

static mkrt_plan_key key_of(uint64_t hash, mkrt_analysis_kind kind, double density, uint64_t required)
{
    mkrt_exec_sample s = {1000, density, 512};
    mkrt_memory_budget m = {required, 10000};
    return mkrt_plan_key_make(hash, kind, 0, &SM120, 0, &s, &m, 100, 0);
}

/* A builder that plans a fixed topology and counts its calls. */
typedef struct fixed {
    mkrt_wave_topology t;
    int calls;
    mkrt_wave_topology saw_previous;
} fixed;

static mkrt_status build_fixed(void *p, const mkrt_plan_key *key, mkrt_wave_topology prev,
                               mkrt_plan *plan, mkrt_error *err)
{
    (void)key;
    (void)err;
    fixed *f = p;
    f->calls++;
    f->saw_previous = prev;
    plan->decision.topology = f->t;
    return MKRT_OK;
}

static mkrt_wave_topology get_topology(mkrt_plan_cache *c, const mkrt_plan_key *k, mkrt_wave_topology t)
{
    fixed f = {t, 0, MKRT_WAVE_NONE};
    mkrt_plan p;
    mkrt_plan_cache_get_or_plan_copy(c, k, build_fixed, &f, &p, NULL);
    return p.decision.topology;
}

static mkrt_plan_cache_stats stats(mkrt_plan_cache *c)
{
    mkrt_plan_cache_stats s;
    mkrt_plan_cache_stats_read(c, &s);
    return s;
}

static void reference_cache_tests(void)
{
    mkrt_plan_cache *c = new_cache(256, 0);
    mkrt_plan_key k1 = key_of(42, MKRT_ANALYSIS_IFDS, 0.52, 2400);
    mkrt_plan_key k1b = key_of(42, MKRT_ANALYSIS_IFDS, 0.53, 2450);
    mkrt_wave_topology a = get_topology(c, &k1, MKRT_WAVE_FUSED);
    mkrt_wave_topology b = get_topology(c, &k1b, MKRT_WAVE_SPARSE);
    mkrt_plan_cache_stats s = stats(c);
    ok(a == MKRT_WAVE_FUSED && b == MKRT_WAVE_FUSED && s.hits == 1 && s.misses == 1 && s.entries == 1,
       "cache_reuses_plan_for_same_pressure_bucket (a nearby sample hits)");
    mkrt_plan_cache_destroy(c);

    mkrt_device_key d = mkrt_device_key_from_caps(12, 0, 32, true, 1024);
    ok(memcmp(&d, &SM120, sizeof d) == 0 || (d.sm_major == 12 && d.sm_minor == 0 && d.warp_size == 32 &&
                                             d.supports_grid_sync && d.supports_tensor_cores &&
                                             d.max_workgroup_size == 1024),
       "device_key_is_derived_from_cuda_caps");
    d = mkrt_device_key_from_caps(5, 2, 32, true, 1024);
    ok(!d.supports_grid_sync && !d.supports_tensor_cores, "sm_52 has neither grid sync nor tensor cores");

    mkrt_plan_key base = key_of(42, MKRT_ANALYSIS_IFDS, 0.01, 1000);
    mkrt_plan_key live = key_of(42, MKRT_ANALYSIS_LIVENESS, 0.01, 1000);
    mkrt_plan_key dense = key_of(42, MKRT_ANALYSIS_IFDS, 0.95, 1000);
    mkrt_plan_key minor = base;
    minor.device.sm_minor = 1;
    mkrt_plan_key_rehash(&minor);
    ok(!mkrt_plan_key_equal(&base, &live) && !mkrt_plan_key_equal(&base, &dense) &&
           !mkrt_plan_key_equal(&base, &minor),
       "cache_separates_analysis_family_density_and_device_features");
    mkrt_plan_key custom1 = base, custom2 = base;
    custom1.analysis_kind = custom2.analysis_kind = MKRT_ANALYSIS_CUSTOM;
    custom1.custom_tag = 1;
    custom2.custom_tag = 2;
    mkrt_plan_key_rehash(&custom1);
    mkrt_plan_key_rehash(&custom2);
    ok(!mkrt_plan_key_equal(&custom1, &custom2), "custom analyses differ by tag");
    mkrt_plan_key same = base;
    same.custom_tag = 0;
    mkrt_plan_key_rehash(&same);
    ok(mkrt_plan_key_equal(&same, &base) && same.hash == base.hash, "rehash of unchanged fields gives the same key");

    c = new_cache(2, 0);
    mkrt_plan_key ka = key_of(1, MKRT_ANALYSIS_DATAFLOW, 0.5, 1000);
    mkrt_plan_key kb = key_of(2, MKRT_ANALYSIS_DATAFLOW, 0.5, 1000);
    mkrt_plan_key kc = key_of(3, MKRT_ANALYSIS_DATAFLOW, 0.5, 1000);
    get_topology(c, &ka, MKRT_WAVE_SPARSE);
    get_topology(c, &kb, MKRT_WAVE_HYBRID);
    get_topology(c, &ka, MKRT_WAVE_DENSE);
    get_topology(c, &kc, MKRT_WAVE_FUSED);
    s = stats(c);
    ok(s.hits == 1 && s.misses == 3 && s.evictions == 1 && s.entries == 2,
       "bounded_cache_evicts_lru_entry: hits 1, misses 3, evictions 1, entries 2");
    ok(get_topology(c, &kb, MKRT_WAVE_DENSE) == MKRT_WAVE_DENSE,
       "... the entry that was not reused (k2) was the one evicted");
    ok(get_topology(c, &kc, MKRT_WAVE_WARP_SPARSE) == MKRT_WAVE_FUSED, "... k3 stays");
    mkrt_plan_cache_destroy(c);

    is(mkrt_plan_pressure_bucket(1ull << 62, 1ull << 63), 5, "cache_pressure_bucket_uses_exact_u128_math: 2^62/2^63");
    is(mkrt_plan_pressure_bucket(1ull << 63, 1ull << 63), 10, "... 2^63/2^63");
    is(mkrt_plan_pressure_bucket(1, 0), UINT32_MAX / 1000, "a zero budget with a requirement is the top bucket");
    ok(mkrt_plan_density_bucket(0.90) == 14 && mkrt_plan_density_bucket(0.91) == 14 &&
           mkrt_plan_density_bucket(0.70) == 11 && mkrt_plan_density_bucket(0.68) == 10,
       "density buckets: 0.90, 0.91 -> 14; 0.70 -> 11; 0.68 -> 10");
    ok(mkrt_plan_readback_bucket(4095) == 0 && mkrt_plan_readback_bucket(4096) == 1 &&
           mkrt_plan_readback_bucket(8191) == 1 && mkrt_plan_readback_bucket(1 << 20) == 9,
       "readback buckets by bit length above 4 KiB");
    ok(mkrt_plan_fusion_bucket(2.0) == 20 && mkrt_plan_fusion_bucket(-1) == 0 &&
           mkrt_plan_launch_bucket(250, 1000) == 2 && mkrt_plan_launch_bucket(1.0 / 0.0, 1000) == UINT32_MAX / 1000,
       "fusion and launch buckets (no upper clamp; infinite launch saturates)");
}

/* CLOCK, not LRU (README, "Planners on the path"): with every entry hit
 * since the hand last passed, the hand clears the bits and evicts the
 * first entry it meets again, which here is the most recently used one;
 * LRU would evict the least recently used (kb). */
static void clock_keeps(void)
{
    mkrt_plan_cache *c = new_cache(2, 0);
    mkrt_plan_key ka = key_of(11, MKRT_ANALYSIS_DATAFLOW, 0.5, 1000);
    mkrt_plan_key kb = key_of(12, MKRT_ANALYSIS_DATAFLOW, 0.5, 1000);
    mkrt_plan_key kc = key_of(13, MKRT_ANALYSIS_DATAFLOW, 0.5, 1000);
    get_topology(c, &ka, MKRT_WAVE_SPARSE);
    get_topology(c, &kb, MKRT_WAVE_HYBRID);
    get_topology(c, &kb, MKRT_WAVE_DENSE); /* hit: kb used */
    get_topology(c, &ka, MKRT_WAVE_DENSE); /* hit: ka used last */
    get_topology(c, &kc, MKRT_WAVE_FUSED); /* evicts one */
    mkrt_wave_topology a = get_topology(c, &ka, MKRT_WAVE_DENSE);
    ok(a == MKRT_WAVE_DENSE,
       "CLOCK keeps the least recently used entry when both were hit: the most recent (ka) was "
       "evicted, where LRU would evict kb (ka now %s)",
       mkrt_wave_topology_name(a));
    mkrt_plan_cache_destroy(c);
}

static const mkrt_plan_identity ID99 = {99, MKRT_ANALYSIS_DATAFLOW, 0, {12, 0, 32, true, true, 1024}, 0};

static mkrt_wave_topology select_t(mkrt_plan_cache *c, const mkrt_plan_identity *id, double density,
                                   uint64_t readback, uint64_t required, uint64_t budget, double launch,
                                   double fusion)
{
    mkrt_exec_sample s = {1000, density, readback};
    mkrt_memory_budget m = {required, budget};
    mkrt_topology_decision d;
    if (mkrt_plan_cache_select_topology(c, id, &s, &G, &m, launch, fusion, &d, NULL) != MKRT_OK)
        return MKRT_WAVE_NONE;
    return d.topology;
}

static void cached_selection(void)
{
    mkrt_plan_cache *c = new_cache(256, 0);
    mkrt_wave_topology a = select_t(c, &ID99, 0.90, 1 << 20, 1024, 16384, 250, 0.95);
    mkrt_wave_topology b = select_t(c, &ID99, 0.91, 1 << 20, 1100, 16384, 250, 0.95);
    mkrt_plan_cache_stats s = stats(c);
    ok(a == MKRT_WAVE_FUSED && b == a && s.hits == 1 && s.misses == 1,
       "cache_selects_topology_and_reuses_pressure_bucket_plan");
    mkrt_plan_cache_destroy(c);

    c = new_cache(256, 0);
    a = select_t(c, &ID99, 0.70, 512, 1000, 10000, 100, 0);
    b = select_t(c, &ID99, 0.68, 512, 1000, 10000, 100, 0);
    s = stats(c);
    ok(a == MKRT_WAVE_DENSE && b == MKRT_WAVE_DENSE && s.hits == 0 && s.misses == 2,
       "cache_stabilizes_topology_across_adjacent_pressure_buckets (0.68 held dense by the previous plan)");
    mkrt_plan_cache_destroy(c);

    c = new_cache(256, 0);
    a = select_t(c, &ID99, 0.90, 1 << 20, 1024, 16384, 250, 0.95);
    b = select_t(c, &ID99, 0.90, 1 << 20, 15500, 16384, 250, 0.95);
    ok(a == MKRT_WAVE_FUSED && b == MKRT_WAVE_SPARSE && stats(c).misses == 2,
       "cache_reselects_when_memory_pressure_bucket_changes");
    mkrt_plan_cache_destroy(c);

    c = new_cache(256, 0);
    a = select_t(c, &ID99, 0.50, 0, 1000, 10000, 250, 0.95);
    b = select_t(c, &ID99, 0.50, 1 << 20, 1000, 10000, 250, 0.95);
    ok(a == MKRT_WAVE_HYBRID && b == MKRT_WAVE_FUSED && stats(c).misses == 2,
       "cache_reselects_when_readback_launch_or_fusion_pressure_changes");
    mkrt_plan_identity nogrid = ID99;
    nogrid.device.supports_grid_sync = false;
    ok(select_t(c, &nogrid, 0.50, 1 << 20, 1000, 10000, 250, 0.95) != MKRT_WAVE_FUSED,
       "cache_never_selects_fused_wave_without_grid_sync_support");
    mkrt_plan_cache_destroy(c);

    c = new_cache(256, 0);
    mkrt_byte_layout l = {16, 8, 4096, 2048, 512};
    mkrt_exec_plan e1, e2;
    mkrt_exec_sample s1 = {1000, 0.90, 1 << 20}, s2 = {1000, 0.91, 1 << 20};
    mkrt_plan_cache_plan_execution(c, &ID99, &s1, &G, &l, 131072, 250, 0.95, &e1, NULL);
    mkrt_plan_cache_plan_execution(c, &ID99, &s2, &G, &l, 131072, 250, 0.95, &e2, NULL);
    s = stats(c);
    ok(e1.topology == MKRT_WAVE_FUSED && e2.topology == MKRT_WAVE_FUSED && e1.memory.scratch_bytes == 8192 &&
           !e1.downgraded_to_sparse && s.hits == 1 && s.misses == 1,
       "cached_execution_plan_reuses_topology_bucket_and_validates_memory");
    mkrt_plan_cache_destroy(c);

    c = new_cache(256, 0);
    l.scratch_bytes = 10000;
    mkrt_exec_sample s3 = {1000, 0.50, 1 << 20};
    mkrt_plan_cache_plan_execution(c, &ID99, &s3, &G, &l, 80000, 250, 0.90, &e1, NULL);
    s = stats(c);
    ok(e1.topology == MKRT_WAVE_SPARSE && e1.downgraded_to_sparse && e1.memory.scratch_bytes == 10000 &&
           s.misses == 1 && s.entries == 1,
       "cached_execution_plan_downgrades_non_sparse_topology_when_exact_budget_fails");
    mkrt_plan_cache_destroy(c);

    c = new_cache(256, 0);
    mkrt_plan_key k = key_of(7, MKRT_ANALYSIS_DATAFLOW, 0.5, 1000);
    get_topology(c, &k, MKRT_WAVE_HYBRID);
    mkrt__plan_cache_force_hits(c, UINT64_MAX);
    get_topology(c, &k, MKRT_WAVE_HYBRID);
    ok(stats(c).hits == UINT64_MAX, "cache_counters_pin_instead_of_failing_dispatch");
    mkrt_plan_cache_destroy(c);

    /* Frontier execution through the cache. */
    mkrt_barrier_scratch *bs = mkrt_barrier_scratch_create(0, 0, NULL);
    mkrt_frontier_wave two[] = {{1024, 512, 256}, {2048, 1024, 512}};
    mkrt_plan_identity pf = {42, MKRT_ANALYSIS_PARSER_FRONTEND, 0, {12, 0, 32, true, true, 1024}, 0};
    mkrt_byte_layout bl = {16, 8, 0, 0, 0};
    mkrt_frontier_exec_plan f1, f2;
    c = new_cache(256, 0);
    mkrt_plan_cache_plan_frontier(c, &pf, bs, &s1, &G, &bl, two, 2, NULL, 0, 131072, 250, 0.95, &f1, NULL);
    mkrt_plan_cache_plan_frontier(c, &pf, bs, &s2, &G, &bl, two, 2, NULL, 0, 131072, 250, 0.95, &f2, NULL);
    ok(f1.execution.topology == MKRT_WAVE_FUSED && f2.execution.topology == MKRT_WAVE_FUSED &&
           stats(c).hits == 1,
       "frontier via cache: equivalent pressure reuses the fused plan");
    pf.device.supports_grid_sync = false;
    mkrt_plan_cache_plan_frontier(c, &pf, bs, &s1, &G, &bl, two, 2, NULL, 0, 131072, 250, 0.95, &f1, NULL);
    ok(f1.execution.topology != MKRT_WAVE_FUSED, "frontier via cache: no grid sync, no fused wave");
    mkrt_plan_cache_destroy(c);
    mkrt_barrier_scratch_destroy(bs);
}

/* §2.6: the same signature from the neutral planner and the cache. */
typedef struct scenario {
    const char *name;
    int waves;            /* 0 none, 1 ONE, 3 THREE_EQUAL, 4 DIAMOND, 2 OUTPUT_HEAVY, 5 OVERFLOW */
    int deps;             /* 0 none, 1 CHAIN, 2 DIAMOND, 3 CYCLE */
    uint64_t nodes, edges, bpn, bpe, budget, readback;
    double density, fusion;
    bool grid;
    mkrt_status status;
    const char *groups;   /* "[0,1][2]" */
    size_t barriers;
    uint64_t pf, ps, po, readback_out;
    size_t width;
    mkrt_wave_topology topology;
    uint64_t graph_bytes, scratch_bytes, required;
    uint32_t pressure;
    const char *message;
} scenario;

static const scenario SCENARIOS[] = {
    {"1 one wave", 1, 0, 1, 0, 0, 0, 4096, 4096, 0.5, 0.95, true, MKRT_OK, "[0]", 0, 40, 15, 0, 4096, 1, MKRT_WAVE_FUSED, 0, 60, 100, 244, NULL},
    {"2 three equal", 3, 0, 1, 0, 0, 0, 300, 4096, 0.5, 0.95, true, MKRT_OK, "[0,1,2]", 0, 120, 45, 0, 4096, 3, MKRT_WAVE_FUSED, 0, 180, 300, 10000, NULL},
    {"3 budget 250", 3, 0, 1, 0, 0, 0, 250, 4096, 0.5, 0.95, true, MKRT_OK, "[0,1][2]", 1, 80, 30, 0, 4096, 2, MKRT_WAVE_FUSED, 0, 120, 200, 8000, NULL},
    {"4 budget 100", 3, 0, 1, 0, 0, 0, 100, 4096, 0.5, 0.95, true, MKRT_OK, "[0][1][2]", 2, 40, 15, 0, 4096, 1, MKRT_WAVE_FUSED, 0, 60, 100, 10000, NULL},
    {"5 no waves", 0, 0, 1000, 4000, 16, 8, 1u << 30, 4096, 0.5, 0.95, true, MKRT_OK, "", 0, 0, 0, 0, 4096, 0, MKRT_WAVE_FUSED, 48000, 0, 48000, 0, NULL},
    {"6 no waves, tight", 0, 0, 4, 0, 8, 0, 32, 4096, 0.5, 0.95, true, MKRT_OK, "", 0, 0, 0, 0, 4096, 0, MKRT_WAVE_SPARSE, 32, 0, 32, 10000, NULL},
    {"7 chain", 3, 1, 1000, 4000, 16, 8, 1u << 20, 4096, 0.5, 0.95, true, MKRT_OK, "[0][1][2]", 2, 40, 15, 0, 4096, 1, MKRT_WAVE_FUSED, 48000, 60, 48100, 458, NULL},
    {"8 diamond dense", 4, 2, 1000, 4000, 16, 8, 131072, 1u << 20, 0.90, 0.95, true, MKRT_OK, "[0][1,2][3]", 2, 8192, 4096, 2048, 1u << 20, 2, MKRT_WAVE_FUSED, 48000, 16384, 74624, 5693, NULL},
    {"9 #8 without grid sync", 4, 2, 1000, 4000, 16, 8, 131072, 1u << 20, 0.90, 0.95, false, MKRT_OK, "[0][1,2][3]", 2, 8192, 4096, 2048, 1u << 20, 2, MKRT_WAVE_BLOCK_DENSE, 48000, 8192, 66432, 5068, NULL},
    {"10 output heavy", 2, 0, 1000, 4000, 16, 8, 131072, 0, 0.5, 0.95, true, MKRT_OK, "[0,1]", 0, 2048, 1024, 6144, 6144, 2, MKRT_WAVE_FUSED, 48000, 4096, 60288, 4599, NULL},
    {"11 #10 without grid sync", 2, 0, 1000, 4000, 16, 8, 131072, 0, 0.5, 0.95, false, MKRT_OK, "[0,1]", 0, 2048, 1024, 6144, 6144, 2, MKRT_WAVE_HYBRID, 48000, 3072, 59264, 4521, NULL},
    {"12 warp sparse", 4, 2, 4096, 4096, 16, 8, 131072, 4096, 0.01, 0.0, true, MKRT_OK, "[0][1,2][3]", 2, 8192, 4096, 2048, 4096, 2, MKRT_WAVE_WARP_SPARSE, 98304, 4096, 112640, 8593, NULL},
    {"13 cycle", 3, 3, 1000, 4000, 16, 8, 1u << 20, 4096, 0.5, 0.95, true, MKRT_ECYCLE, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "cycle with 2 unscheduled waves"},
    {"14 graph over budget", 1, 0, 100, 100, 8, 8, 1000, 4096, 0.5, 0.95, true, MKRT_EBUDGET, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "requires 1600 bytes for resident graph bytes but budget allows 1000"},
    {"15 wave over budget", 1, 0, 1, 0, 0, 0, 50, 4096, 0.5, 0.95, true, MKRT_EBUDGET, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "requires 100 bytes for single fused frontier wave bytes but budget allows 50"},
    {"16 wave overflow", 5, 0, 1, 1, 1, 1, UINT64_MAX, 4096, 0.5, 0.95, true, MKRT_EOVERFLOW, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "accumulating fused wave bytes"},
    {"17 graph fills budget", 1, 0, UINT64_MAX, 0, 1, 0, UINT64_MAX, 4096, 0.5, 0.95, true, MKRT_EBUDGET, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "requires 100 bytes for single fused frontier wave bytes but budget allows 0"},
    {"18 graph overflow", 1, 0, UINT64_MAX, UINT64_MAX, 1, 1, UINT64_MAX, 4096, 0.5, 0.95, true, MKRT_EOVERFLOW, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "graph layout bytes"},
};

static void wave_set(int which, const mkrt_frontier_wave **w, size_t *n)
{
    static const mkrt_frontier_wave one[] = {{40, 15, 0}};
    static const mkrt_frontier_wave three[] = {{40, 15, 0}, {40, 15, 0}, {40, 15, 0}};
    static const mkrt_frontier_wave diamond[] = {{1024, 512, 256}, {2048, 1024, 512}, {4096, 2048, 1024}, {8192, 4096, 2048}};
    static const mkrt_frontier_wave heavy[] = {{1024, 512, 3072}, {1024, 512, 3072}};
    static const mkrt_frontier_wave ovf[] = {{UINT64_MAX, 1, 1}, {1, 1, 1}};
    switch (which) {
    case 1: *w = one; *n = 1; break;
    case 3: *w = three; *n = 3; break;
    case 4: *w = diamond; *n = 4; break;
    case 2: *w = heavy; *n = 2; break;
    case 5: *w = ovf; *n = 2; break;
    default: *w = NULL; *n = 0; break;
    }
}

static void dep_set(int which, const mkrt_wave_dep **d, size_t *n)
{
    static const mkrt_wave_dep chain[] = {{0, 1}, {1, 2}};
    static const mkrt_wave_dep diamond[] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
    static const mkrt_wave_dep cycle[] = {{0, 1}, {1, 0}};
    switch (which) {
    case 1: *d = chain; *n = 2; break;
    case 2: *d = diamond; *n = 4; break;
    case 3: *d = cycle; *n = 2; break;
    default: *d = NULL; *n = 0; break;
    }
}

static void groups_str(const mkrt_barrier_plan *b, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t g = 0; g < b->group_count; g++) {
        at += (size_t)snprintf(buf + at, len - at, "[");
        for (size_t k = b->group_offsets[g]; k < b->group_offsets[g + 1]; k++)
            at += (size_t)snprintf(buf + at, len - at, k > b->group_offsets[g] ? ",%zu" : "%zu", b->waves[k]);
        at += (size_t)snprintf(buf + at, len - at, "]");
    }
}

static int signature_ok(const scenario *sc, mkrt_status st, const mkrt_exec_plan *e,
                        const mkrt_frontier_plan *f, const mkrt_error *err)
{
    if (st != sc->status)
        return 0;
    if (st != MKRT_OK)
        return strstr(err->message, sc->message) != NULL;
    char groups[128];
    groups_str(&f->barriers, groups, sizeof groups);
    return strcmp(groups, sc->groups) == 0 && f->barriers.global_barriers == sc->barriers &&
           f->peak_frontier_bytes == sc->pf && f->peak_scratch_bytes == sc->ps &&
           f->peak_output_bytes == sc->po && f->amortized_readback_bytes == sc->readback_out &&
           f->max_group_width == sc->width && e->topology == sc->topology && !e->downgraded_to_sparse &&
           e->memory.graph_bytes == sc->graph_bytes && e->memory.scratch_bytes == sc->scratch_bytes &&
           e->memory.required_bytes == sc->required && e->memory.memory_pressure_bps == sc->pressure;
}

static void parity(void)
{
    mkrt_barrier_scratch *bs = mkrt_barrier_scratch_create(0, 0, NULL);
    for (size_t i = 0; i < sizeof SCENARIOS / sizeof SCENARIOS[0]; i++) {
        const scenario *sc = &SCENARIOS[i];
        const mkrt_frontier_wave *w;
        const mkrt_wave_dep *d;
        size_t nw, nd;
        wave_set(sc->waves, &w, &nw);
        dep_set(sc->deps, &d, &nd);
        mkrt_exec_sample s = {1000, sc->density, sc->readback};
        mkrt_graph_shape g = {sc->nodes, sc->edges};
        mkrt_byte_layout l = {sc->bpn, sc->bpe, 0, 0, 0};
        mkrt_error err;
        mkrt_status st;
        mkrt_plan_cache *c = new_cache(256, 0);
        mkrt_plan_identity id = {0xF00DBEEF, MKRT_ANALYSIS_DATAFLOW, 0, {12, 0, 32, sc->grid, true, 1024}, 0};
        mkrt_frontier_exec_plan fe;
        mkrt_error_clear(&err);
        st = mkrt_plan_cache_plan_frontier(c, &id, bs, &s, &g, &l, w, nw, d, nd, sc->budget, 250,
                                           sc->fusion, &fe, &err);
        ok(signature_ok(sc, st, &fe.execution, &fe.frontier, &err), "parity %s: cached planner", sc->name);
        if (st != sc->status)
            diag("status %s: %s", mkrt_status_name(st), err.message);
        mkrt_plan_cache_destroy(c);
    }
    mkrt_barrier_scratch_destroy(bs);
}

static void identity_hysteresis_passes_previous(void)
{
    mkrt_plan_cache *c = new_cache(256, 0);
    mkrt_plan_key k1 = key_of(5, MKRT_ANALYSIS_DATAFLOW, 0.2, 1000);
    mkrt_plan_key k2 = key_of(5, MKRT_ANALYSIS_DATAFLOW, 0.8, 1000);
    mkrt_plan_key other = key_of(6, MKRT_ANALYSIS_DATAFLOW, 0.8, 1000);
    fixed f = {MKRT_WAVE_HYBRID, 0, MKRT_WAVE_NONE};
    mkrt_plan p;
    mkrt_plan_cache_get_or_plan_copy(c, &k1, build_fixed, &f, &p, NULL);
    ok(f.saw_previous == MKRT_WAVE_NONE, "first plan of an identity has no previous topology");
    f.t = MKRT_WAVE_DENSE;
    mkrt_plan_cache_get_or_plan_copy(c, &k2, build_fixed, &f, &p, NULL);
    ok(f.saw_previous == MKRT_WAVE_HYBRID, "the next miss of the identity sees the previous topology");
    mkrt_plan_cache_get_or_plan_copy(c, &other, build_fixed, &f, &p, NULL);
    ok(f.saw_previous == MKRT_WAVE_NONE, "another identity starts fresh");
    mkrt_plan_cache_destroy(c);
}

/* A hit is the identity's latest use (the reference's identity map is
 * updated on hits): hits, then a miss, see the hit plan's topology. */
static void hit_updates_previous(void)
{
    mkrt_plan_cache *c = new_cache(256, 0);
    mkrt_plan_key k1 = key_of(7, MKRT_ANALYSIS_DATAFLOW, 0.2, 1000);
    mkrt_plan_key k2 = key_of(7, MKRT_ANALYSIS_DATAFLOW, 0.8, 1000);
    mkrt_plan_key k3 = key_of(7, MKRT_ANALYSIS_DATAFLOW, 0.5, 1000);
    fixed f = {MKRT_WAVE_SPARSE, 0, MKRT_WAVE_NONE};
    mkrt_plan p;
    mkrt_plan_cache_get_or_plan_copy(c, &k1, build_fixed, &f, &p, NULL);
    f.t = MKRT_WAVE_HYBRID;
    mkrt_plan_cache_get_or_plan_copy(c, &k2, build_fixed, &f, &p, NULL);
    mkrt_plan_cache_get_or_plan_copy(c, &k1, build_fixed, &f, &p, NULL); /* a hit */
    mkrt_plan_cache_get_or_plan_copy(c, &k3, build_fixed, &f, &p, NULL);
    ok(p.decision.topology == MKRT_WAVE_HYBRID && f.saw_previous == MKRT_WAVE_SPARSE,
       "after a hit on a Sparse plan, the next miss sees Sparse as the previous topology (saw %s)",
       mkrt_wave_topology_name(f.saw_previous));
    mkrt_plan_cache_destroy(c);
    /* Through the cached selector: Sparse (0.05), Hybrid (0.30), a hit on
     * the Sparse plan, then 0.14: stateless Hybrid, held Sparse by the
     * hysteresis against the hit (the reference's answer). */
    c = new_cache(256, 0);
    mkrt_wave_topology a = select_t(c, &ID99, 0.05, 0, 0, 16384, 0, 0);
    mkrt_wave_topology b = select_t(c, &ID99, 0.30, 0, 0, 16384, 0, 0);
    mkrt_wave_topology hit = select_t(c, &ID99, 0.05, 0, 0, 16384, 0, 0);
    mkrt_wave_topology d = select_t(c, &ID99, 0.14, 0, 0, 16384, 0, 0);
    mkrt_plan_cache_stats st = stats(c);
    ok(a == MKRT_WAVE_SPARSE && b == MKRT_WAVE_HYBRID && hit == MKRT_WAVE_SPARSE && st.hits == 1 &&
           d == MKRT_WAVE_SPARSE,
       "hits then a miss: the miss holds Sparse against the hit, as the reference does (got %s)",
       mkrt_wave_topology_name(d));
    mkrt_plan_cache_destroy(c);
}

typedef struct grouped {
    size_t offsets[4];
    size_t waves[6];
} grouped;

static mkrt_status build_grouped(void *p, const mkrt_plan_key *key, mkrt_wave_topology prev,
                                 mkrt_plan *plan, mkrt_error *err)
{
    (void)key;
    (void)prev;
    (void)err;
    grouped *g = p;
    plan->group_count = 3;
    plan->group_offsets = g->offsets;
    plan->group_waves = g->waves;
    plan->worker_groups = 7;
    return MKRT_OK;
}

static mkrt_status build_fail(void *p, const mkrt_plan_key *key, mkrt_wave_topology prev,
                              mkrt_plan *plan, mkrt_error *err)
{
    (void)p;
    (void)key;
    (void)prev;
    (void)plan;
    if (err != NULL) {
        err->status = MKRT_EBUDGET;
        snprintf(err->message, sizeof err->message, "test builder refuses. Fix: none.");
    }
    return MKRT_EBUDGET;
}

static void plans_groups_errors(void)
{
    mkrt_plan_cache *c = new_cache(256, 0);
    grouped g = {{0, 1, 4, 6}, {0, 3, 1, 2, 5, 4}};
    mkrt_plan_key k = key_of(11, MKRT_ANALYSIS_DATAFLOW, 0.5, 1000);
    mkrt_plan_cache_read_lock();
    const mkrt_plan *p = NULL;
    mkrt_plan_cache_get_or_plan(c, &k, build_grouped, &g, &p, NULL);
    memset(&g, 0xFF, sizeof g); /* the cache must have copied the arrays */
    const mkrt_plan *q = mkrt_plan_cache_find(c, &k);
    ok(p != NULL && q == p && p->group_count == 3 && p->group_offsets[3] == 6 && p->group_waves[1] == 3 &&
           p->worker_groups == 7 && p->checksum == mkrt_plan_checksum(p),
       "barrier groups are copied into the plan and the checksum matches");
    mkrt_plan_key absent = key_of(12, MKRT_ANALYSIS_DATAFLOW, 0.5, 1000);
    ok(mkrt_plan_cache_find(c, &absent) == NULL, "find on an absent key is a miss");
    mkrt_plan_cache_read_unlock();
    mkrt_error err;
    mkrt_plan out;
    is(mkrt_plan_cache_get_or_plan_copy(c, &absent, build_fail, NULL, &out, &err), MKRT_EBUDGET,
       "a builder error is returned");
    mkrt_plan_cache_stats s = stats(c);
    ok(s.entries == 1 && s.hits == 1 && s.misses == 3, "... and nothing is cached (stats: 1 entry, 1 hit, 3 misses)");
    mkrt_plan_cache_destroy(c);

    mkrt_plan_cache_config big = {MKRT_PLAN_CACHE_MAX_ENTRIES + 1, 0};
    is(mkrt_plan_cache_create(&big, &c, &err), MKRT_EINVAL, "too many entries is MKRT_EINVAL");
    like(err.message, "Fix:", "... with a Fix");
    mkrt_plan_cache_config tiny = {16, 8};
    is(mkrt_plan_cache_create(&tiny, &c, &err), MKRT_EINVAL, "a byte bound below one plan is MKRT_EINVAL");

    c = new_cache(0, 0);
    ok(get_topology(c, &k, MKRT_WAVE_DENSE) == MKRT_WAVE_DENSE && get_topology(c, &k, MKRT_WAVE_HYBRID) == MKRT_WAVE_HYBRID &&
           stats(c).entries == 0 && stats(c).misses == 2,
       "max_entries 0: plans are built and handed out, never kept");
    mkrt_plan_cache_destroy(c);

    /* Byte bound: room for about three plain plans. */
    mkrt_plan_key k1 = key_of(21, MKRT_ANALYSIS_DATAFLOW, 0.5, 1000);
    c = new_cache(256, 0);
    get_topology(c, &k1, MKRT_WAVE_SPARSE);
    uint64_t one = stats(c).bytes;
    mkrt_plan_cache_destroy(c);
    c = new_cache(256, (size_t)one * 3);
    for (uint64_t h = 0; h < 10; h++) {
        mkrt_plan_key kh = key_of(100 + h, MKRT_ANALYSIS_DATAFLOW, 0.5, 1000);
        get_topology(c, &kh, MKRT_WAVE_SPARSE);
    }
    s = stats(c);
    ok(s.entries == 3 && s.bytes == one * 3 && s.evictions == 7, "a byte bound evicts too (3 entries, 7 evictions)");
    mkrt_plan_cache_destroy(c);
}

static void invalidation(void)
{
    mkrt_plan_cache *c = new_cache(256, 0);
    mkrt_device_key other_dev = SM120;
    other_dev.sm_minor = 9;
    for (uint64_t h = 0; h < 6; h++) {
        mkrt_exec_sample s = {1000, 0.5, 512};
        mkrt_memory_budget m = {1000, 10000};
        mkrt_plan_key k = mkrt_plan_key_make(h, MKRT_ANALYSIS_DATAFLOW, 0, h < 2 ? &other_dev : &SM120,
                                             h < 4 ? 1 : 2, &s, &m, 100, 0);
        get_topology(c, &k, MKRT_WAVE_HYBRID);
    }
    is(mkrt_plan_cache_invalidate_device(c, &other_dev), 2, "invalidate_device removes that device's entries");
    is(mkrt_plan_cache_invalidate_policy_before(c, 2), 2, "invalidate_policy_before removes older fingerprints");
    mkrt_plan_cache_stats s = stats(c);
    ok(s.entries == 2 && s.invalidations == 4, "... leaving 2 entries, 4 invalidations counted");
    mkrt_exec_sample s5 = {1000, 0.5, 512};
    mkrt_memory_budget m5 = {1000, 10000};
    mkrt_plan_key k5 = mkrt_plan_key_make(5, MKRT_ANALYSIS_DATAFLOW, 0, &SM120, 2, &s5, &m5, 100, 0);
    ok(mkrt_plan_cache_remove(c, &k5) == 1 && mkrt_plan_cache_remove(c, &k5) == 0,
       "remove takes one entry out, once");
    ok(get_topology(c, &k5, MKRT_WAVE_DENSE) == MKRT_WAVE_DENSE, "... and the next lookup plans it again");
    s = stats(c);
    ok(s.invalidations == 5 && s.entries == 2, "... counted as an invalidation");
    is(mkrt_plan_cache_clear(c), 2, "clear removes the rest");
    s = stats(c);
    ok(s.entries == 0 && s.bytes == 0 && s.invalidations == 7, "... entries and bytes back to 0");
    mkrt_plan_cache_destroy(c);
}

/* Two threads miss the same key at once: both builders run (a barrier
 * inside the builder makes sure), one plan is kept, both get it. */
typedef struct racer {
    mkrt_plan_cache *c;
    mkrt__barrier *gate;
    const mkrt_plan *got;
    uint64_t checksum;
    mkrt_wave_topology topology;
} racer;

static mkrt_status build_slow(void *p, const mkrt_plan_key *key, mkrt_wave_topology prev,
                              mkrt_plan *plan, mkrt_error *err)
{
    (void)key;
    (void)prev;
    (void)err;
    racer *r = p;
    mkrt__barrier_wait(r->gate);
    plan->decision.topology = r->topology;
    return MKRT_OK;
}

static int race_main(void *p)
{
    racer *r = p;
    mkrt_plan_key k = key_of(77, MKRT_ANALYSIS_DATAFLOW, 0.5, 1000);
    mkrt_plan_cache_read_lock();
    mkrt_plan_cache_get_or_plan(r->c, &k, build_slow, r, &r->got, NULL);
    r->checksum = r->got->checksum == mkrt_plan_checksum(r->got) ? r->got->checksum : 0;
    r->topology = r->got->decision.topology;
    mkrt_plan_cache_read_unlock();
    return 0;
}

static void insert_race(void)
{
    mkrt_plan_cache *c = new_cache(256, 0);
    mkrt__barrier gate;
    mkrt__barrier_init(&gate, 2);
    racer a = {c, &gate, NULL, 0, MKRT_WAVE_DENSE}, b = {c, &gate, NULL, 0, MKRT_WAVE_HYBRID};
    mkrt__thread ta, tb;
    mkrt__thread_start(&ta, race_main, &a);
    mkrt__thread_start(&tb, race_main, &b);
    mkrt__thread_join(ta);
    mkrt__thread_join(tb);
    mkrt_plan_cache_stats s = stats(c);
    ok(s.entries == 1 && s.misses == 2 && s.insert_races == 1, "two concurrent misses: 1 entry kept, 1 race counted");
    ok(a.checksum != 0 && a.checksum == b.checksum && a.topology == b.topology,
       "... and both callers got the kept plan");
    mkrt__barrier_destroy(&gate);
    mkrt_plan_cache_destroy(c);
}

static void allocation(void)
{
    count_alloc_install();
    mkrt_plan_cache *c = new_cache(64, 0);
    mkrt_plan_key k = key_of(1, MKRT_ANALYSIS_DATAFLOW, 0.5, 1000);
    get_topology(c, &k, MKRT_WAVE_DENSE);
    uint64_t warm = count_alloc_calls();
    for (int i = 0; i < 1000; i++)
        get_topology(c, &k, MKRT_WAVE_DENSE);
    is(count_alloc_calls() - warm, 0, "1000 hits allocate nothing");
    count_alloc_fail_after(0);
    mkrt_plan_key k2 = key_of(2, MKRT_ANALYSIS_DATAFLOW, 0.5, 1000);
    fixed f = {MKRT_WAVE_DENSE, 0, MKRT_WAVE_NONE};
    mkrt_plan p;
    mkrt_error err;
    is(mkrt_plan_cache_get_or_plan_copy(c, &k2, build_fixed, &f, &p, &err), MKRT_ENOMEM,
       "a plan that cannot be allocated is MKRT_ENOMEM");
    count_alloc_fail_after(UINT64_MAX);
    is(stats(c).entries, 1, "... and the cache is unchanged");
    mkrt_plan_cache_destroy(c);
    count_alloc_uninstall();
}

int main(void)
{
    reference_cache_tests();
    cached_selection();
    parity();
    identity_hysteresis_passes_previous();
    hit_updates_previous();
    clock_keeps();
    plans_groups_errors();
    invalidation();
    insert_race();
    allocation();
    return done_testing();
}
