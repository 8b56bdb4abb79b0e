/* SPDX-License-Identifier: BSD-2-Clause */
/* mkrt/plan_cache.h - a concurrent cache of immutable launch plans, read
 * under RCU (liburcu, urcu-memb flavour).
 *
 * Keys: the batch's layout/shape hash, the analysis kind, the device key,
 * the policy fingerprint, and the schedule sample quantised into buckets so
 * that nearby samples share an entry: frontier density in 16 steps, memory
 * pressure in 1000-bps steps, readback bytes by bit length above 4 KiB,
 * launch pressure and fusion pressure in 1000-bps steps.
 *
 * Values: immutable mkrt_plan records (topology decision, memory envelope,
 * launch geometry, barrier groups). A plan is never modified once
 * published; replacing or evicting one unlinks it and frees it after a
 * grace period (call_rcu), so a reader that found it may use it until it
 * leaves its read-side section.
 *
 * Concurrency contract:
 *   - Lookups (mkrt_plan_cache_find, the hit path of get_or_plan, and the
 *     select/plan helpers) are lock-free and write no shared cache line
 *     (a recently-used bit is set only when it is clear).
 *   - Misses build the plan outside any lock and publish it with
 *     add-unique; when threads race on one key, exactly one plan is kept,
 *     the others are freed and every caller gets the kept plan (counted as
 *     insert races). Publication, eviction and invalidation serialise on one
 *     writer mutex that readers never take.
 *   - Eviction is CLOCK (second chance) over at most max_entries entries
 *     and max_bytes bytes: a read costs at most one store, ever.
 *   - Stats are per-thread counters summed on read: any thread may read
 *     them at any time without stopping readers.
 *   - RCU registration is automatic: the first cache call on a thread
 *     registers it with urcu-memb, and thread exit unregisters it. A thread
 *     must not hold a read-side section (mkrt_plan_cache_read_lock) across
 *     blocking waits for other threads' cache writes, and must not destroy a
 *     cache inside one.
 *   - Pointers returned by find / get_or_plan are valid until the caller's
 *     matching mkrt_plan_cache_read_unlock. Use the *_copy functions to keep
 *     a plan's fixed part beyond that.
 */
#ifndef MKRT_PLAN_CACHE_H
#define MKRT_PLAN_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/barrier.h"
#include "mkrt/frontier.h"
#include "mkrt/sizing.h"
#include "mkrt/status.h"
#include "mkrt/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MKRT_PLAN_CACHE_DEFAULT_ENTRIES 256
#define MKRT_PLAN_CACHE_MAX_ENTRIES ((size_t)1 << 24)

typedef enum mkrt_analysis_kind {
    MKRT_ANALYSIS_DATAFLOW,
    MKRT_ANALYSIS_IFDS,
    MKRT_ANALYSIS_REACHING_DEFINITIONS,
    MKRT_ANALYSIS_LIVENESS,
    MKRT_ANALYSIS_POINTS_TO,
    MKRT_ANALYSIS_PARSER_FRONTEND,
    MKRT_ANALYSIS_CUSTOM /* distinguished by custom_tag */
} mkrt_analysis_kind;

typedef struct mkrt_device_key {
    uint16_t sm_major;
    uint16_t sm_minor;
    uint16_t warp_size;
    bool supports_grid_sync;
    bool supports_tensor_cores;
    uint32_t max_workgroup_size;
} mkrt_device_key;

/* From device attributes: grid sync needs compute capability >= 6.0 and
 * cooperative launch; tensor cores need >= 7.0; fields saturate at 65535. */
mkrt_device_key mkrt_device_key_from_caps(uint32_t cc_major, uint32_t cc_minor, uint32_t warp_size,
                                          bool cooperative_launch, uint32_t max_threads_per_block);
/* The CPU backend's device key: {0, 0, 1, grid sync, no tensor cores, 1}. */
mkrt_device_key mkrt_device_key_cpu(void);

typedef struct mkrt_plan_key {
    uint64_t graph_layout_hash;
    mkrt_analysis_kind analysis_kind;
    uint64_t custom_tag;
    mkrt_device_key device;
    uint64_t policy_fingerprint;
    uint16_t frontier_density_bucket;  /* round(clamp(d, 0, 1) * 15) */
    uint32_t memory_pressure_bucket;   /* pressure_bps / 1000, not clamped */
    uint16_t readback_pressure_bucket; /* bit length of bytes >> 12 */
    uint32_t launch_pressure_bucket;   /* floor(launch / cost * 10000) / 1000 */
    uint32_t fusion_pressure_bucket;   /* floor(max(f, 0) * 10000) / 1000 */
    uint64_t hash; /* of all the fields above; set by mkrt_plan_key_make and
                    * mkrt_plan_key_rehash, used as is by the cache */
} mkrt_plan_key;

uint16_t mkrt_plan_density_bucket(double frontier_density);
uint32_t mkrt_plan_pressure_bucket(uint64_t required_bytes, uint64_t budget_bytes);
uint16_t mkrt_plan_readback_bucket(uint64_t readback_bytes);
uint32_t mkrt_plan_launch_bucket(double launch_overhead_ns, double dispatch_cost_ns);
uint32_t mkrt_plan_fusion_bucket(double effective_fusion_pressure);

/* Builds a key; effective_fusion is the fusion pressure after gating by the
 * device (0 without grid sync). A NULL device, sample or memory reads as
 * all zeros. */
mkrt_plan_key mkrt_plan_key_make(uint64_t graph_layout_hash, mkrt_analysis_kind kind,
                                 uint64_t custom_tag, const mkrt_device_key *device,
                                 uint64_t policy_fingerprint, const mkrt_exec_sample *sample,
                                 const mkrt_memory_budget *memory, double launch_overhead_ns,
                                 double effective_fusion);
/* Recomputes key->hash after fields were changed by hand (NULL: no-op). */
void mkrt_plan_key_rehash(mkrt_plan_key *key);
/* Field-by-field equality (the hash is compared first); NULL equals only
 * NULL. */
bool mkrt_plan_key_equal(const mkrt_plan_key *a, const mkrt_plan_key *b);

typedef struct mkrt_plan {
    mkrt_plan_key key;                 /* what it was planned for */
    mkrt_topology_decision decision;   /* topology and the metrics behind it */
    mkrt_memory_plan memory;           /* envelope at planning time */
    mkrt_launch_geometry geometry;     /* zero when the builder set none */
    uint32_t worker_groups;
    size_t group_count;                /* barrier groups, 0 when none */
    const size_t *group_offsets;       /* group_count + 1 entries, or NULL */
    const size_t *group_waves;         /* group_offsets[group_count] entries */
    uint64_t checksum;                 /* set by the cache over all of the above */
} mkrt_plan;

/* Fills *plan for `key`. `previous` is the topology most recently planned
 * for the same identity (layout hash, analysis, device, policy), or
 * MKRT_WAVE_NONE: use it for hysteresis. Arrays the plan points to must
 * stay valid until the get_or_plan call returns (keep them in ctx); the
 * cache copies them into the plan. */
typedef mkrt_status (*mkrt_plan_build_fn)(void *ctx, const mkrt_plan_key *key,
                                          mkrt_wave_topology previous, mkrt_plan *plan,
                                          mkrt_error *err);

typedef struct mkrt_plan_cache_config {
    size_t max_entries; /* 0: plans are built and handed out, never kept */
    size_t max_bytes;   /* 0: no byte bound */
} mkrt_plan_cache_config;

typedef struct mkrt_plan_cache_stats {
    uint64_t hits;
    uint64_t misses;
    uint64_t insert_races;  /* misses that lost the add-unique race */
    uint64_t evictions;
    uint64_t invalidations; /* entries removed by invalidate/clear */
    uint64_t entries;
    uint64_t bytes;
} mkrt_plan_cache_stats;

typedef struct mkrt_plan_cache mkrt_plan_cache;

mkrt_plan_cache_config mkrt_plan_cache_config_default(void);
/* MKRT_EINVAL when max_entries > MKRT_PLAN_CACHE_MAX_ENTRIES, when
 * max_bytes is non-zero but below one minimal plan, or for a NULL out (a
 * NULL cfg means the defaults). */
mkrt_status mkrt_plan_cache_create(const mkrt_plan_cache_config *cfg, mkrt_plan_cache **out,
                                   mkrt_error *err);
/* Removes every entry, waits for their grace periods (rcu_barrier) and
 * frees the cache. No other thread may use the cache any more, and the
 * caller must not be inside a read-side section. NULL is ignored. */
void mkrt_plan_cache_destroy(mkrt_plan_cache *c);

/* Sections nest; an unlock without a matching lock on this thread is
 * ignored. */
void mkrt_plan_cache_read_lock(void);
void mkrt_plan_cache_read_unlock(void);

/* Inside a read-side section: the plan for key, or NULL (a miss, or a
 * NULL c or key). */
const mkrt_plan *mkrt_plan_cache_find(mkrt_plan_cache *c, const mkrt_plan_key *key);
/* Inside a read-side section: the cached plan, or build, publish and
 * return one. On a build error nothing is cached and the error returns.
 * MKRT_EINVAL for a NULL c, key, build or out, and for a built plan with
 * group_count > 0 but NULL group arrays. */
mkrt_status mkrt_plan_cache_get_or_plan(mkrt_plan_cache *c, const mkrt_plan_key *key,
                                        mkrt_plan_build_fn build, void *ctx,
                                        const mkrt_plan **out, mkrt_error *err);
/* The same without a caller-held section: copies the plan's fixed part
 * (group pointers are set to NULL; group_count is kept). */
mkrt_status mkrt_plan_cache_get_or_plan_copy(mkrt_plan_cache *c, const mkrt_plan_key *key,
                                             mkrt_plan_build_fn build, void *ctx, mkrt_plan *out,
                                             mkrt_error *err);

/* Removes the entry for key (the next lookup plans it again); returns 1
 * when there was one, else 0. Counted as an invalidation. These removal
 * calls return 0 for a NULL c, key or device. */
size_t mkrt_plan_cache_remove(mkrt_plan_cache *c, const mkrt_plan_key *key);
/* Removes every entry whose device key equals `device`; returns how many. */
size_t mkrt_plan_cache_invalidate_device(mkrt_plan_cache *c, const mkrt_device_key *device);
/* Removes every entry planned under a policy fingerprint below `current`. */
size_t mkrt_plan_cache_invalidate_policy_before(mkrt_plan_cache *c, uint64_t current);
size_t mkrt_plan_cache_clear(mkrt_plan_cache *c);

/* Zeroes *out for a NULL c; a NULL out is ignored. */
void mkrt_plan_cache_stats_read(mkrt_plan_cache *c, mkrt_plan_cache_stats *out);

/* Checksum of a plan as the cache computes it (for verification); 0 for
 * NULL. */
uint64_t mkrt_plan_checksum(const mkrt_plan *p);

/* --- The reference planners through the cache ------------------------ */

typedef struct mkrt_plan_identity {
    uint64_t graph_layout_hash;
    mkrt_analysis_kind analysis_kind;
    uint64_t custom_tag;
    mkrt_device_key device;
    uint64_t policy_fingerprint;
} mkrt_plan_identity;

/* The cached planners return MKRT_EINVAL for a NULL pointer (err aside,
 * and arrays whose count is 0) and for an analysis kind outside the enum.
 *
 * Cached topology selection: fusion is gated by device.supports_grid_sync,
 * the key quantises the sample, and a miss runs the stable selector against
 * the identity's previous topology (the plain one without). */
mkrt_status mkrt_plan_cache_select_topology(mkrt_plan_cache *c, const mkrt_plan_identity *id,
                                            const mkrt_exec_sample *sample,
                                            const mkrt_graph_shape *graph,
                                            const mkrt_memory_budget *memory,
                                            double launch_overhead_ns, double fusion_pressure,
                                            mkrt_topology_decision *out, mkrt_error *err);
/* Cached execution planning: the topology comes from the cache (keyed by
 * the sparse envelope's pressure), then its memory plan is validated
 * against the exact budget on every call; a non-sparse topology that does
 * not fit is downgraded to sparse. */
mkrt_status mkrt_plan_cache_plan_execution(mkrt_plan_cache *c, const mkrt_plan_identity *id,
                                           const mkrt_exec_sample *sample,
                                           const mkrt_graph_shape *graph,
                                           const mkrt_byte_layout *layout, uint64_t budget_bytes,
                                           double launch_overhead_ns, double fusion_pressure,
                                           mkrt_exec_plan *out, mkrt_error *err);

typedef struct mkrt_frontier_exec_plan {
    mkrt_exec_plan execution;
    mkrt_frontier_plan frontier; /* barrier arrays live in the barrier scratch */
} mkrt_frontier_exec_plan;

/* Frontier execution planning (barriers, budget split, peaks) with the
 * execution topology from the cache; readback fed to the selector is the
 * amortized readback. layout.frontier/scratch/output are ignored (the
 * peaks are used). */
mkrt_status mkrt_plan_cache_plan_frontier(mkrt_plan_cache *c, const mkrt_plan_identity *id,
                                          mkrt_barrier_scratch *scratch,
                                          const mkrt_exec_sample *sample,
                                          const mkrt_graph_shape *graph,
                                          const mkrt_byte_layout *layout,
                                          const mkrt_frontier_wave *waves, size_t wave_count,
                                          const mkrt_wave_dep *deps, size_t dep_count,
                                          uint64_t budget_bytes, double launch_overhead_ns,
                                          double fusion_pressure, mkrt_frontier_exec_plan *out,
                                          mkrt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_PLAN_CACHE_H */
