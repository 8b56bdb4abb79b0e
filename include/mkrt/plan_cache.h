/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/plan_cache.h
 * @brief A concurrent cache of immutable launch plans, read under RCU
 * (liburcu, urcu-memb flavour).
 *
 * Keys: the batch's layout/shape hash, the analysis kind, the device key,
 * the policy fingerprint, and the schedule sample quantised into buckets so
 * that nearby samples share an entry: frontier density in 16 steps, memory
 * pressure in 1000-bps steps, readback bytes by bit length above 4 KiB,
 * launch pressure and fusion pressure in 1000-bps steps.
 *
 * Values: immutable ::mkrt_plan records (topology decision, memory
 * envelope, launch geometry, barrier groups). A plan is never modified
 * once published; replacing or evicting one unlinks it and frees it after
 * a grace period (call_rcu), so a reader that found it may use it until it
 * leaves its read-side section.
 *
 * Concurrency contract:
 * - Lookups (mkrt_plan_cache_find(), the hit path of get_or_plan, and the
 *   select/plan helpers) are lock-free and write no shared cache line (a
 *   recently-used bit is set only when it is clear).
 * - Misses build the plan outside any lock and publish it with add-unique;
 *   when threads race on one key, exactly one plan is kept, the others are
 *   freed and every caller gets the kept plan (counted as insert races).
 *   Publication, eviction and invalidation serialise on one writer mutex
 *   that readers never take.
 * - Eviction is CLOCK (second chance) over at most max_entries entries and
 *   max_bytes bytes: a read costs at most one store, ever.
 * - Stats are per-thread counters summed on read: any thread may read them
 *   at any time without stopping readers.
 * - RCU registration is automatic: the first cache call on a thread
 *   registers it with urcu-memb, and thread exit unregisters it. A thread
 *   must not hold a read-side section (mkrt_plan_cache_read_lock()) across
 *   blocking waits for other threads' cache writes, and must not destroy a
 *   cache inside one.
 * - Pointers returned by find / get_or_plan are valid until the caller's
 *   matching mkrt_plan_cache_read_unlock(). Use the *_copy functions to
 *   keep a plan's fixed part beyond that.
 */
#ifndef MKRT_PLAN_CACHE_H
#define MKRT_PLAN_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/barrier.h"
#include "mkrt/frontier.h"
#include "mkrt/geometry.h"
#include "mkrt/status.h"
#include "mkrt/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief max_entries of mkrt_plan_cache_config_default(). */
#define MKRT_PLAN_CACHE_DEFAULT_ENTRIES 256
/** @brief Largest max_entries mkrt_plan_cache_create() accepts. */
#define MKRT_PLAN_CACHE_MAX_ENTRIES ((size_t)1 << 24)

/** @brief What kind of analysis a plan is for (part of the key). */
typedef enum mkrt_analysis_kind {
    MKRT_ANALYSIS_DATAFLOW,             /**< Dataflow analysis. */
    MKRT_ANALYSIS_IFDS,                 /**< IFDS analysis. */
    MKRT_ANALYSIS_REACHING_DEFINITIONS, /**< Reaching definitions. */
    MKRT_ANALYSIS_LIVENESS,             /**< Liveness. */
    MKRT_ANALYSIS_POINTS_TO,            /**< Points-to analysis. */
    MKRT_ANALYSIS_PARSER_FRONTEND,      /**< Parser front end. */
    MKRT_ANALYSIS_CUSTOM                /**< Anything else, distinguished by custom_tag. */
} mkrt_analysis_kind;

/** @brief The device a plan was made for (part of the key). */
typedef struct mkrt_device_key {
    uint16_t sm_major;          /**< Compute capability, major (saturating at 65535). */
    uint16_t sm_minor;          /**< Compute capability, minor (saturating at 65535). */
    uint16_t warp_size;         /**< Warp size (saturating at 65535). */
    bool supports_grid_sync;    /**< Device-wide barrier available; gates fusion pressure. */
    bool supports_tensor_cores; /**< Tensor cores available. */
    uint32_t max_workgroup_size; /**< Most threads per block. */
} mkrt_device_key;

/**
 * @brief A device key from device attributes.
 *
 * Grid sync needs compute capability >= 6.0 and cooperative launch; tensor
 * cores need >= 7.0; the 16-bit fields saturate at 65535.
 *
 * @param cc_major Compute capability, major.
 * @param cc_minor Compute capability, minor.
 * @param warp_size Warp size.
 * @param cooperative_launch Whether cooperative launch is supported.
 * @param max_threads_per_block Most threads per block.
 * @return The key, by value.
 * @par Thread safety
 * Any thread (pure).
 */
mkrt_device_key mkrt_device_key_from_caps(uint32_t cc_major, uint32_t cc_minor, uint32_t warp_size,
                                          bool cooperative_launch, uint32_t max_threads_per_block);
/**
 * @brief The CPU backend's device key: {0, 0, 1, grid sync, no tensor cores, 1}.
 * @return The key, by value.
 * @par Thread safety
 * Any thread (pure).
 */
mkrt_device_key mkrt_device_key_cpu(void);

/** @brief Cache key: the plan's identity plus the quantised schedule sample. */
typedef struct mkrt_plan_key {
    uint64_t graph_layout_hash;        /**< Hash of the batch's layout/shape. */
    mkrt_analysis_kind analysis_kind;  /**< Analysis kind. */
    uint64_t custom_tag;               /**< For ::MKRT_ANALYSIS_CUSTOM; mkrt_plan_key_make() zeroes it otherwise. */
    mkrt_device_key device;            /**< The device. */
    uint64_t policy_fingerprint;       /**< Fingerprint of the planning policy (higher = newer). */
    uint16_t frontier_density_bucket;  /**< round(clamp(d, 0, 1) * 15); 0 for non-finite d. */
    uint32_t memory_pressure_bucket;   /**< pressure_bps / 1000, not clamped. */
    uint16_t readback_pressure_bucket; /**< Bit length of bytes >> 12. */
    uint32_t launch_pressure_bucket;   /**< floor(launch / cost * 10000) / 1000. */
    uint32_t fusion_pressure_bucket;   /**< floor(max(f, 0) * 10000) / 1000. */
    /** Hash of all the fields above; set by mkrt_plan_key_make() and
     *  mkrt_plan_key_rehash(), used as is by the cache. */
    uint64_t hash;
} mkrt_plan_key;

/**
 * @brief Frontier density bucket: round(clamp(d, 0, 1) * 15).
 * @param frontier_density Density; non-finite values give 0.
 * @return The bucket, 0..15.
 * @par Thread safety
 * Any thread (pure).
 */
uint16_t mkrt_plan_density_bucket(double frontier_density);
/**
 * @brief Memory pressure bucket: floor(required * 10000 / budget) / 1000.
 * @param required_bytes Bytes required.
 * @param budget_bytes Budget; 0 gives pressure 0 when nothing is required,
 *        else the largest bucket.
 * @return The bucket (pressure in bps saturates at UINT32_MAX first).
 * @par Thread safety
 * Any thread (pure).
 */
uint32_t mkrt_plan_pressure_bucket(uint64_t required_bytes, uint64_t budget_bytes);
/**
 * @brief Readback bucket: bit length of readback_bytes >> 12.
 * @param readback_bytes Bytes read back.
 * @return 0 below 4 KiB, then 1, 2, ... per doubling.
 * @par Thread safety
 * Any thread (pure).
 */
uint16_t mkrt_plan_readback_bucket(uint64_t readback_bytes);
/**
 * @brief Launch pressure bucket: floor(launch / cost * 10000) / 1000.
 * @param launch_overhead_ns Launch overhead; a non-finite value gives the
 *        largest bucket.
 * @param dispatch_cost_ns Dispatch cost; a non-finite or non-positive cost
 *        (or a non-positive overhead) gives 0.
 * @return The bucket.
 * @par Thread safety
 * Any thread (pure).
 */
uint32_t mkrt_plan_launch_bucket(double launch_overhead_ns, double dispatch_cost_ns);
/**
 * @brief Fusion pressure bucket: floor(max(f, 0) * 10000) / 1000.
 * @param effective_fusion_pressure Fusion pressure after device gating;
 *        non-finite values give 0.
 * @return The bucket.
 * @par Thread safety
 * Any thread (pure).
 */
uint32_t mkrt_plan_fusion_bucket(double effective_fusion_pressure);

/**
 * @brief Builds a key and its hash.
 * @param graph_layout_hash Hash of the batch's layout/shape.
 * @param kind Analysis kind.
 * @param custom_tag Kept only when kind is ::MKRT_ANALYSIS_CUSTOM.
 * @param device The device; NULL reads as all zeros.
 * @param policy_fingerprint Fingerprint of the planning policy.
 * @param sample Schedule sample; NULL reads as all zeros.
 * @param memory Memory required and budget; NULL reads as all zeros.
 * @param launch_overhead_ns Launch overhead per dispatch.
 * @param effective_fusion Fusion pressure after gating by the device (0
 *        without grid sync).
 * @return The key, by value, with its hash set.
 * @par Thread safety
 * Any thread (pure).
 */
mkrt_plan_key mkrt_plan_key_make(uint64_t graph_layout_hash, mkrt_analysis_kind kind,
                                 uint64_t custom_tag, const mkrt_device_key *device,
                                 uint64_t policy_fingerprint, const mkrt_exec_sample *sample,
                                 const mkrt_memory_budget *memory, double launch_overhead_ns,
                                 double effective_fusion);
/**
 * @brief Recomputes key->hash after fields were changed by hand.
 * @param key The key; NULL is a no-op.
 * @par Thread safety
 * Any thread; key must not be in use by another thread.
 */
void mkrt_plan_key_rehash(mkrt_plan_key *key);
/**
 * @brief Field-by-field equality of two keys (the hash is compared first).
 * @param a A key, or NULL.
 * @param b A key, or NULL.
 * @return true when every field (hash included) is equal; NULL equals only
 *         NULL.
 * @par Thread safety
 * Any thread (pure).
 */
bool mkrt_plan_key_equal(const mkrt_plan_key *a, const mkrt_plan_key *b);

/** @brief An immutable cached plan. */
typedef struct mkrt_plan {
    mkrt_plan_key key;                 /**< What it was planned for (set by the cache). */
    mkrt_topology_decision decision;   /**< Topology and the metrics behind it. */
    mkrt_memory_plan memory;           /**< Envelope at planning time. */
    mkrt_launch_geometry geometry;     /**< Zero when the builder set none. */
    uint32_t worker_groups;            /**< Worker groups; as the builder set it. */
    size_t group_count;                /**< Barrier groups, 0 when none. */
    const size_t *group_offsets;       /**< group_count + 1 entries, or NULL. */
    const size_t *group_waves;         /**< group_offsets[group_count] entries. */
    uint64_t checksum;                 /**< Set by the cache over all of the above (mkrt_plan_checksum()). */
} mkrt_plan;

/**
 * @brief Builds the plan for a key on a cache miss.
 *
 * Fills `*plan` (zeroed, with the key set, on entry). `previous` is the
 * topology most recently planned for the same identity (layout hash,
 * analysis, device, policy), or ::MKRT_WAVE_NONE: use it for hysteresis.
 * Arrays the plan points to must stay valid until the get_or_plan call
 * returns (keep them in ctx); the cache copies them into the plan, and
 * sets key and checksum itself.
 *
 * Runs on the thread that missed, inside its read-side section; threads
 * that miss the same key at once may each build, and one result is kept.
 * It must not destroy the cache or wait for other threads' cache writes.
 *
 * @param ctx The ctx given to get_or_plan.
 * @param key The key that missed.
 * @param previous The identity's latest topology, or ::MKRT_WAVE_NONE.
 * @param[out] plan The plan to fill.
 * @param err Filled by the builder on failure; may be NULL.
 * @return ::MKRT_OK, or a failure status that get_or_plan returns as is
 *         (nothing is cached then).
 */
typedef mkrt_status (*mkrt_plan_build_fn)(void *ctx, const mkrt_plan_key *key,
                                          mkrt_wave_topology previous, mkrt_plan *plan,
                                          mkrt_error *err);

/** @brief Bounds of a plan cache; mkrt_plan_cache_config_default() gives {256, 0}. */
typedef struct mkrt_plan_cache_config {
    /** Most entries kept, 0..::MKRT_PLAN_CACHE_MAX_ENTRIES; 0: plans are
     *  built and handed out, never kept. */
    size_t max_entries;
    /** Most bytes kept; 0: no byte bound. A plan larger than this is handed
     *  out but not kept. */
    size_t max_bytes;
} mkrt_plan_cache_config;

/** @brief A snapshot of a plan cache's counters (mkrt_plan_cache_stats_read()). */
typedef struct mkrt_plan_cache_stats {
    uint64_t hits;          /**< Lookups that found a plan. */
    uint64_t misses;        /**< Lookups that did not (get_or_plan then builds). */
    uint64_t insert_races;  /**< Misses that lost the add-unique race. */
    uint64_t evictions;     /**< Entries evicted by the CLOCK hand. */
    uint64_t invalidations; /**< Entries removed by remove, invalidate or clear. */
    uint64_t entries;       /**< Entries now. */
    uint64_t bytes;         /**< Bytes held by the entries now. */
} mkrt_plan_cache_stats;

/** @brief Opaque plan cache. */
typedef struct mkrt_plan_cache mkrt_plan_cache;

/**
 * @brief The default configuration: ::MKRT_PLAN_CACHE_DEFAULT_ENTRIES entries, no byte bound.
 * @return The configuration, by value.
 * @par Thread safety
 * Any thread.
 */
mkrt_plan_cache_config mkrt_plan_cache_config_default(void);
/**
 * @brief Creates an empty plan cache.
 * @param cfg Bounds; NULL means the defaults.
 * @param[out] out The cache (NULL on failure). Free it with
 *        mkrt_plan_cache_destroy().
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK `*out` is the cache.
 * @retval MKRT_EINVAL out is NULL, max_entries is above
 *         ::MKRT_PLAN_CACHE_MAX_ENTRIES, or max_bytes is non-zero but below
 *         one minimal plan.
 * @retval MKRT_ENOMEM Allocation failed; nothing is left allocated.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread (registers it with RCU).
 */
mkrt_status mkrt_plan_cache_create(const mkrt_plan_cache_config *cfg, mkrt_plan_cache **out,
                                   mkrt_error *err);
/**
 * @brief Destroys a cache.
 *
 * Removes every entry, waits for their grace periods (rcu_barrier) and
 * frees the cache.
 *
 * @param c The cache; NULL is ignored.
 * @par Thread safety
 * No other thread may use the cache any more, and the caller must not be
 * inside a read-side section.
 */
void mkrt_plan_cache_destroy(mkrt_plan_cache *c);

/**
 * @brief Enters a read-side section on the calling thread.
 *
 * Sections nest. Plans returned by find / get_or_plan stay valid until the
 * matching unlock.
 *
 * @par Thread safety
 * Any thread; per-thread state.
 */
void mkrt_plan_cache_read_lock(void);
/**
 * @brief Leaves a read-side section on the calling thread.
 *
 * An unlock without a matching lock on this thread is ignored.
 *
 * @par Thread safety
 * Any thread; per-thread state.
 */
void mkrt_plan_cache_read_unlock(void);

/**
 * @brief Looks a key up (lock-free); counts a hit or a miss.
 * @param c The cache.
 * @param key The key (its hash must be set).
 * @return The plan, valid until this thread's matching
 *         mkrt_plan_cache_read_unlock(); NULL on a miss, or for a NULL c or
 *         key.
 * @par Thread safety
 * Any thread, inside a read-side section, concurrently with every cache
 * call but destroy.
 */
const mkrt_plan *mkrt_plan_cache_find(mkrt_plan_cache *c, const mkrt_plan_key *key);
/**
 * @brief Returns the cached plan for a key, or builds, publishes and returns one.
 *
 * On a build error nothing is cached and the builder's status returns.
 *
 * @param c The cache.
 * @param key The key (its hash must be set).
 * @param build Called on a miss (see ::mkrt_plan_build_fn).
 * @param ctx Passed to build.
 * @param[out] out The plan, valid until this thread's matching
 *        mkrt_plan_cache_read_unlock().
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK `*out` is the plan (cached, or handed out uncached when
 *         the cache keeps no entries or the plan exceeds max_bytes).
 * @retval MKRT_EINVAL c, key, build or out is NULL, or the built plan has
 *         group_count > 0 but NULL group arrays.
 * @retval MKRT_EOVERFLOW The built plan has more groups than a plan can hold.
 * @retval MKRT_ENOMEM The plan could not be copied into the cache.
 * @return The status, as listed, or the builder's failure status.
 * @par Thread safety
 * Any thread, inside a read-side section, concurrently with every cache
 * call but destroy.
 */
mkrt_status mkrt_plan_cache_get_or_plan(mkrt_plan_cache *c, const mkrt_plan_key *key,
                                        mkrt_plan_build_fn build, void *ctx,
                                        const mkrt_plan **out, mkrt_error *err);
/**
 * @brief mkrt_plan_cache_get_or_plan() without a caller-held section.
 *
 * Takes its own read-side section and copies the plan's fixed part: group
 * pointers are set to NULL; group_count is kept.
 *
 * @param c The cache.
 * @param key The key (its hash must be set).
 * @param build Called on a miss.
 * @param ctx Passed to build.
 * @param[out] out The copy; written only on success.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK `*out` holds the copy.
 * @retval MKRT_EINVAL out is NULL, or as for mkrt_plan_cache_get_or_plan().
 * @retval MKRT_EOVERFLOW As for mkrt_plan_cache_get_or_plan().
 * @retval MKRT_ENOMEM As for mkrt_plan_cache_get_or_plan().
 * @return The status, as listed, or the builder's failure status.
 * @par Thread safety
 * Any thread, concurrently with every cache call but destroy.
 */
mkrt_status mkrt_plan_cache_get_or_plan_copy(mkrt_plan_cache *c, const mkrt_plan_key *key,
                                             mkrt_plan_build_fn build, void *ctx, mkrt_plan *out,
                                             mkrt_error *err);

/**
 * @brief Removes the entry for a key (the next lookup plans it again).
 *
 * Counted as an invalidation. The plan is freed after a grace period, so
 * readers that hold it may finish with it.
 *
 * @param c The cache.
 * @param key The key.
 * @return 1 when there was an entry, else 0 (also for a NULL c or key).
 * @par Thread safety
 * Any thread, concurrently with every cache call but destroy; serialises
 * with other writers on the writer mutex.
 */
size_t mkrt_plan_cache_remove(mkrt_plan_cache *c, const mkrt_plan_key *key);
/**
 * @brief Removes every entry whose device key equals `device`.
 * @param c The cache.
 * @param device The device key.
 * @return How many entries were removed (0 for a NULL c or device).
 * @par Thread safety
 * As mkrt_plan_cache_remove().
 */
size_t mkrt_plan_cache_invalidate_device(mkrt_plan_cache *c, const mkrt_device_key *device);
/**
 * @brief Removes every entry planned under a policy fingerprint below `current`.
 * @param c The cache.
 * @param current The current fingerprint.
 * @return How many entries were removed (0 for a NULL c).
 * @par Thread safety
 * As mkrt_plan_cache_remove().
 */
size_t mkrt_plan_cache_invalidate_policy_before(mkrt_plan_cache *c, uint64_t current);
/**
 * @brief Removes every entry.
 * @param c The cache.
 * @return How many entries were removed (0 for a NULL c).
 * @par Thread safety
 * As mkrt_plan_cache_remove().
 */
size_t mkrt_plan_cache_clear(mkrt_plan_cache *c);

/**
 * @brief A snapshot of the cache's counters.
 * @param c The cache; NULL gives all zeros.
 * @param[out] out The counters; NULL is ignored.
 * @par Thread safety
 * Any thread, at any time, without stopping readers.
 */
void mkrt_plan_cache_stats_read(mkrt_plan_cache *c, mkrt_plan_cache_stats *out);

/**
 * @brief Checksum of a plan as the cache computes it (for verification).
 * @param p The plan.
 * @return The checksum over key hash, decision, memory, geometry, worker
 *         groups and barrier groups; 0 for NULL.
 * @par Thread safety
 * Any thread that may read the plan.
 */
uint64_t mkrt_plan_checksum(const mkrt_plan *p);

/* --- The reference planners through the cache ------------------------ */

/** @brief The identity part of a plan key (everything but the sample buckets). */
typedef struct mkrt_plan_identity {
    uint64_t graph_layout_hash;       /**< Hash of the batch's layout/shape. */
    mkrt_analysis_kind analysis_kind; /**< Analysis kind; must be within the enum. */
    uint64_t custom_tag;              /**< For ::MKRT_ANALYSIS_CUSTOM. */
    mkrt_device_key device;           /**< The device. */
    uint64_t policy_fingerprint;      /**< Fingerprint of the planning policy. */
} mkrt_plan_identity;

#ifdef __cplusplus
}
#endif
#endif /* MKRT_PLAN_CACHE_H */
