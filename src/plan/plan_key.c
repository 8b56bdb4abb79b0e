/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/plan_key.c - plan cache keys: quantisation of the schedule sample. */
#include <math.h>

#include "plan/plan_cache_internal.h"

mkrt_device_key mkrt_device_key_from_caps(uint32_t cc_major, uint32_t cc_minor, uint32_t warp_size,
                                          bool cooperative_launch, uint32_t max_threads_per_block)
{
    mkrt_device_key k;
    k.sm_major = (uint16_t)(cc_major > 65535 ? 65535 : cc_major);
    k.sm_minor = (uint16_t)(cc_minor > 65535 ? 65535 : cc_minor);
    k.warp_size = (uint16_t)(warp_size > 65535 ? 65535 : warp_size);
    k.supports_grid_sync = cc_major >= 6 && cooperative_launch;
    k.supports_tensor_cores = cc_major >= 7;
    k.max_workgroup_size = max_threads_per_block;
    return k;
}

mkrt_device_key mkrt_device_key_cpu(void)
{
    return (mkrt_device_key){0, 0, 1, true, false, 1};
}

uint16_t mkrt_plan_density_bucket(double d)
{
    if (!isfinite(d))
        return 0;
    d = d < 0 ? 0 : d > 1 ? 1 : d;
    return (uint16_t)round(d * 15.0);
}

uint32_t mkrt_plan_pressure_bucket(uint64_t required, uint64_t budget)
{
    uint32_t bps;
    if (budget == 0) {
        bps = required == 0 ? 0 : UINT32_MAX;
    } else {
        unsigned __int128 p = (unsigned __int128)required * 10000 / budget;
        bps = p > UINT32_MAX ? UINT32_MAX : (uint32_t)p;
    }
    return bps / 1000;
}

uint16_t mkrt_plan_readback_bucket(uint64_t bytes)
{
    uint64_t v = bytes >> 12;
    return v == 0 ? 0 : (uint16_t)(64 - __builtin_clzll(v));
}

static uint32_t trunc_bps(double ratio)
{
    double v = floor(ratio * 10000.0);
    if (!(v > 0))
        return 0;
    return v >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

uint32_t mkrt_plan_launch_bucket(double launch, double cost)
{
    uint32_t bps;
    if (!isfinite(launch))
        bps = UINT32_MAX;
    else if (!isfinite(cost) || !(cost > 0) || !(launch > 0))
        bps = 0;
    else
        bps = trunc_bps(launch / cost);
    return bps / 1000;
}

uint32_t mkrt_plan_fusion_bucket(double f)
{
    if (!isfinite(f))
        return 0;
    return trunc_bps(f > 0 ? f : 0) / 1000;
}

mkrt_plan_key mkrt_plan_key_make(uint64_t graph_layout_hash, mkrt_analysis_kind kind,
                                 uint64_t custom_tag, const mkrt_device_key *device,
                                 uint64_t policy_fingerprint, const mkrt_exec_sample *sample,
                                 const mkrt_memory_budget *memory, double launch_overhead_ns,
                                 double effective_fusion)
{
    static const mkrt_device_key no_device = {0, 0, 0, false, false, 0};
    static const mkrt_exec_sample no_sample = {0.0, 0.0, 0};
    static const mkrt_memory_budget no_memory = {0, 0};
    device = device != NULL ? device : &no_device;
    sample = sample != NULL ? sample : &no_sample;
    memory = memory != NULL ? memory : &no_memory;
    mkrt_plan_key k;
    k.graph_layout_hash = graph_layout_hash;
    k.analysis_kind = kind;
    k.custom_tag = kind == MKRT_ANALYSIS_CUSTOM ? custom_tag : 0;
    k.device = *device;
    k.policy_fingerprint = policy_fingerprint;
    k.frontier_density_bucket = mkrt_plan_density_bucket(sample->frontier_density);
    k.memory_pressure_bucket = mkrt_plan_pressure_bucket(memory->required_bytes, memory->budget_bytes);
    k.readback_pressure_bucket = mkrt_plan_readback_bucket(sample->readback_bytes);
    k.launch_pressure_bucket = mkrt_plan_launch_bucket(launch_overhead_ns, sample->dispatch_cost_ns);
    k.fusion_pressure_bucket = mkrt_plan_fusion_bucket(effective_fusion);
    mkrt_plan_key_rehash(&k);
    return k;
}

void mkrt_plan_key_rehash(mkrt_plan_key *key)
{
    if (key == NULL)
        return;
    key->hash = mkrt__plan_key_hash(key);
}

static bool device_equal(const mkrt_device_key *a, const mkrt_device_key *b)
{
    return a->sm_major == b->sm_major && a->sm_minor == b->sm_minor &&
           a->warp_size == b->warp_size && a->supports_grid_sync == b->supports_grid_sync &&
           a->supports_tensor_cores == b->supports_tensor_cores &&
           a->max_workgroup_size == b->max_workgroup_size;
}

bool mkrt_plan_key_equal(const mkrt_plan_key *a, const mkrt_plan_key *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return a->hash == b->hash && a->graph_layout_hash == b->graph_layout_hash && a->analysis_kind == b->analysis_kind &&
           a->custom_tag == b->custom_tag && device_equal(&a->device, &b->device) &&
           a->policy_fingerprint == b->policy_fingerprint &&
           a->frontier_density_bucket == b->frontier_density_bucket &&
           a->memory_pressure_bucket == b->memory_pressure_bucket &&
           a->readback_pressure_bucket == b->readback_pressure_bucket &&
           a->launch_pressure_bucket == b->launch_pressure_bucket &&
           a->fusion_pressure_bucket == b->fusion_pressure_bucket;
}

/* Hashes and identities of keys: the cache (plan_cache.c) uses them;
 * they live with the keys so that the two files depend one way. */
/* Multiply-fold of two words (128-bit product, halves xored): the
 * products of a key's word pairs are independent, so the CPU computes them
 * in parallel instead of a chain of dependent multiplies. */
static inline uint64_t fold(uint64_t a, uint64_t b)
{
    unsigned __int128 p = (unsigned __int128)a * b;
    return (uint64_t)p ^ (uint64_t)(p >> 64);
}

static inline uint64_t identity_words_hash(uint64_t layout, uint64_t analysis,
                                           const mkrt_device_key *d, uint64_t policy)
{
    uint64_t dev0 = (uint64_t)d->sm_major << 32 | (uint64_t)d->sm_minor << 16 | d->warp_size;
    uint64_t dev1 = (uint64_t)d->supports_grid_sync << 40 | (uint64_t)d->supports_tensor_cores << 32 |
                    d->max_workgroup_size;
    return fold(layout ^ 0xA0761D6478BD642Full, analysis ^ 0xE7037ED1A0B428DBull) ^
           fold(dev0 ^ 0x8EBC6AF09C88C6E3ull, dev1 ^ 0x589965CC75374CC3ull) ^
           fold(policy ^ 0x1D8E4E27C47D124Full, 0x9E3779B97F4A7C15ull);
}

uint64_t mkrt__plan_identity_hash(const mkrt_plan_identity *id)
{
    uint64_t h = identity_words_hash(id->graph_layout_hash,
                                     (uint64_t)id->analysis_kind << 56 ^ id->custom_tag, &id->device,
                                     id->policy_fingerprint);
    return h ^ h >> 29;
}

uint64_t mkrt__plan_key_hash(const mkrt_plan_key *k)
{
    uint64_t h = identity_words_hash(k->graph_layout_hash,
                                     (uint64_t)k->analysis_kind << 56 ^ k->custom_tag, &k->device,
                                     k->policy_fingerprint);
    uint64_t b0 = (uint64_t)k->frontier_density_bucket << 48 |
                  (uint64_t)k->readback_pressure_bucket << 32 | k->memory_pressure_bucket;
    uint64_t b1 = (uint64_t)k->launch_pressure_bucket << 32 | k->fusion_pressure_bucket;
    h ^= fold(b0 ^ 0x2D358DCCAA6C78A5ull, b1 ^ 0x8BB84B93962EACC9ull);
    return h ^ h >> 29;
}

mkrt_plan_identity mkrt__plan_identity_of(const mkrt_plan_key *k)
{
    return (mkrt_plan_identity){k->graph_layout_hash, k->analysis_kind, k->custom_tag, k->device,
                                k->policy_fingerprint};
}

bool mkrt__plan_identity_equal(const mkrt_plan_identity *a, const mkrt_plan_identity *b)
{
    mkrt_plan_key ka = {0}, kb = {0};
    ka.graph_layout_hash = a->graph_layout_hash;
    ka.analysis_kind = a->analysis_kind;
    ka.custom_tag = a->custom_tag;
    ka.device = a->device;
    ka.policy_fingerprint = a->policy_fingerprint;
    kb.graph_layout_hash = b->graph_layout_hash;
    kb.analysis_kind = b->analysis_kind;
    kb.custom_tag = b->custom_tag;
    kb.device = b->device;
    kb.policy_fingerprint = b->policy_fingerprint;
    return mkrt_plan_key_equal(&ka, &kb); /* both hashes are 0 here */
}
