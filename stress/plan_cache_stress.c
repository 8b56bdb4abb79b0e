/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/plan_cache_stress.c - readers and writers on one plan cache under
 * eviction pressure.
 *
 * R readers look up random keys from a space of 1024 layout hashes in a
 * cache of 64 entries (so most lookups evict someone); every plan a reader
 * gets must belong to its key: the key fields, the checksum, and contents
 * derived from the key (worker count, barrier groups) are all checked
 * while the reader is still inside its read-side section. Freed plans are
 * poisoned before release, so a use after free shows up as a checksum
 * failure even without ASan (and as a report with it). W writers insert
 * under a second device key, invalidate it, invalidate old policy
 * fingerprints and clear the cache. P planners do what every thread that
 * plans a batch does (plan/batch_planner.c): cached topology selection
 * (mkrt_plan_cache_select_topology) for shapes of a third device key,
 * whose entries the writers retire (old policies, clear) under them; each
 * decision must be one the selector can make for its shape (fresh, or
 * stable against some earlier choice). A monitor reads stats all along:
 * counters only grow and entries never exceed the capacity.
 * At the end hits + misses must equal the lookups all threads made.
 *
 *   plan_cache_stress [--seconds N] [--readers R] [--writers W] [--planners P] [--path Q] [--progress S]
 *                     [--help]
 *
 * On a terminal, a progress line every --progress seconds (default 5).
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "base/thread.h"
#include "mkrt/plan_cache.h"
#include "mkrt_planlib/cached.h"
#include "plan/shape_cache.h"
#include "stress_util.h"

#define KEYS 1024
#define CAPACITY 64
#define MAX_THREADS 16

static mkrt_plan_cache *cache;
static uint64_t deadline;
static _Atomic uint64_t lookups, failures, plans_checked;
static _Atomic uint64_t progress_lookups; /* lookups so far, for the progress line */
static _Atomic bool stop_monitor;
static const mkrt_device_key DEV_A = {9, 0, 32, true, true, 1024};
static const mkrt_device_key DEV_B = {9, 1, 32, true, true, 1024};
static const mkrt_device_key DEV_C = {0, 0, 1, false, false, 16}; /* the planners' */

/* The planners' shapes, and the topologies the selector may give each. */
#define SHAPES 64
typedef struct shape {
    mkrt_plan_identity id;
    mkrt_exec_sample s;
    mkrt_graph_shape g;
    mkrt_memory_budget m;
    double launch_ns, fusion;
    unsigned valid; /* bit t: topology t is a decision for this shape */
} shape;
static shape shapes[SHAPES];

static void shapes_init(void)
{
    for (unsigned i = 0; i < SHAPES; i++) {
        shape *x = &shapes[i];
        x->id = (mkrt_plan_identity){5000u + i, MKRT_ANALYSIS_DATAFLOW, 0, DEV_C, 1};
        x->s = (mkrt_exec_sample){100.0 * (1 + i % 7), (double)(i % 16) / 15.0, 64u << (i % 5)};
        x->g = (mkrt_graph_shape){1000u + 97u * i, (1000u + 97u * i) * (1 + i % 9)};
        x->m = (mkrt_memory_budget){(uint64_t)(i % 4) << 20, 4u << 20};
        x->launch_ns = 2000.0 * (1 + i % 3);
        x->fusion = (double)(i % 5) / 4.0;
        x->valid = 0;
        for (int wide = 0; wide < 2; wide++) {
            mkrt_topology_decision d = mkrt_select_topology(&x->s, &x->g, &x->m, x->launch_ns, x->fusion, wide);
            x->valid |= 1u << d.topology;
            for (int prev = MKRT_WAVE_WARP_SPARSE; prev <= MKRT_WAVE_FUSED; prev++) {
                d = mkrt_select_topology_stable(&x->s, &x->g, &x->m, x->launch_ns, x->fusion,
                                                (mkrt_wave_topology)prev, wide);
                x->valid |= 1u << d.topology;
            }
        }
    }
}

static mkrt_plan_key key_for(uint64_t h, const mkrt_device_key *dev, uint64_t policy)
{
    mkrt_exec_sample s = {1000, (double)(h % 16) / 15.0, 4096};
    mkrt_memory_budget m = {1000, 10000};
    return mkrt_plan_key_make(h, MKRT_ANALYSIS_DATAFLOW, 0, dev, policy, &s, &m, 100, 0);
}

static uint32_t workers_for(uint64_t h)
{
    return (uint32_t)(h * 2654435761u) | 1;
}

/* Per-call scratch for the builder's group arrays (they must outlive it). */
typedef struct build_buf {
    size_t offsets[5], waves[4];
} build_buf;

static mkrt_status build(void *ctx, const mkrt_plan_key *key, mkrt_wave_topology prev,
                         mkrt_plan *plan, mkrt_error *err)
{
    (void)prev;
    (void)err;
    build_buf *b = ctx;
    size_t *offsets = b->offsets, *waves = b->waves;
    uint64_t h = key->graph_layout_hash;
    size_t groups = 1 + h % 4;
    for (size_t g = 0; g <= groups; g++)
        offsets[g] = g;
    for (size_t g = 0; g < groups; g++)
        waves[g] = (size_t)h + g;
    plan->decision.topology = (mkrt_wave_topology)(h % 6);
    plan->worker_groups = workers_for(h);
    plan->group_count = groups;
    plan->group_offsets = offsets;
    plan->group_waves = waves;
    return MKRT_OK;
}

static void fail(const char *what, uint64_t h)
{
    if (atomic_fetch_add(&failures, 1) < 10)
        fprintf(stderr, "plan_cache_stress: %s (key %llu)\n", what, (unsigned long long)h);
}

static void check(const mkrt_plan *p, const mkrt_plan_key *k)
{
    uint64_t h = k->graph_layout_hash;
    if (!mkrt_plan_key_equal(&p->key, k))
        fail("plan for another key", h);
    else if (p->checksum != mkrt_plan_checksum(p))
        fail("checksum mismatch (torn or freed plan)", h);
    else if (p->worker_groups != workers_for(h) || p->group_count != 1 + h % 4 ||
             p->group_waves[p->group_count - 1] != h + p->group_count - 1 ||
             p->decision.topology != (mkrt_wave_topology)(h % 6))
        fail("plan contents do not match the key", h);
    atomic_fetch_add_explicit(&plans_checked, 1, memory_order_relaxed);
}

static int reader(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    uint64_t mine = 0;
    build_buf buf;
    while (stress_now_ns() < deadline) {
        for (int burst = 0; burst < 64; burst++) {
            uint64_t h = (uint64_t)rand_r(&seed) % KEYS;
            mkrt_plan_key k = key_for(h, &DEV_A, 1);
            mkrt_plan_cache_read_lock();
            const mkrt_plan *p = NULL;
            if (rand_r(&seed) % 4 == 0) {
                p = mkrt_plan_cache_find(cache, &k);
            } else if (mkrt_plan_cache_get_or_plan(cache, &k, build, &buf, &p, NULL) != MKRT_OK) {
                fail("get_or_plan failed", h);
            }
            mine++;
            if (p != NULL)
                check(p, &k);
            mkrt_plan_cache_read_unlock();
        }
        /* relaxed: a progress figure, read only for display. */
        atomic_fetch_add_explicit(&progress_lookups, 64, memory_order_relaxed);
    }
    atomic_fetch_add(&lookups, mine);
    return 0;
}

/* A thread that plans: the cached selection for random shapes, each
 * decision checked against what the selector can give for its shape. */
static int planner(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    uint64_t mine = 0;
    while (stress_now_ns() < deadline) {
        for (int burst = 0; burst < 64; burst++) {
            const shape *x = &shapes[(unsigned)rand_r(&seed) % SHAPES];
            mkrt_topology_decision d;
            memset(&d, 0xa5, sizeof d); /* a torn or missing write shows */
            mkrt_error err;
            if (mkrt_plan_cache_select_topology(cache, &x->id, &x->s, &x->g, &x->m, x->launch_ns, x->fusion, &d,
                                                &err) != MKRT_OK)
                fail(err.message, x->id.graph_layout_hash);
            else if ((unsigned)d.topology > MKRT_WAVE_FUSED || !(x->valid & (1u << d.topology)) ||
                     d.memory_pressure_bps > 10000u)
                fail("planner: a decision the selector cannot make for this shape", x->id.graph_layout_hash);
            mine++;
            /* relaxed: as in reader(). */
            atomic_fetch_add_explicit(&plans_checked, 1, memory_order_relaxed);
        }
        /* relaxed: a progress figure, read only for display. */
        atomic_fetch_add_explicit(&progress_lookups, 64, memory_order_relaxed);
    }
    atomic_fetch_add(&lookups, mine);
    return 0;
}

/* ---- the data path's cache (plan/shape_cache.h) ----------------------- */

#define PATH_SHAPES 256
#define PATH_CAPACITY 64
static mkrt__shape_cache path;
static _Atomic uint64_t path_lookups, path_puts;

static mkrt__shape path_shape(unsigned i)
{
    return (mkrt__shape){1u << (i % 8), (uint8_t)(i / 8 % 17), (uint8_t)(i % 5), (uint8_t)(i % 32), 0};
}

/* A planning thread on the path: lookups, and one in 8 a put of a value
 * that differs from what it read (arms and split flip between 1 and 2;
 * layers is the shape's span, so a value for another shape shows). */
static int path_planner(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    uint64_t mine = 0, puts = 0;
    while (stress_now_ns() < deadline) {
        for (int burst = 0; burst < 64; burst++) {
            const unsigned i = (unsigned)rand_r(&seed) % PATH_SHAPES;
            const mkrt__shape x = path_shape(i);
            mkrt__shape_plan v;
            memset(&v, 0xa5, sizeof v);
            const bool hit = mkrt__shape_cache_get(&path, &x, &v);
            mine++;
            if (hit && (v.layers != x.span || v.arms < 1 || v.arms > 2 || v.split < 1 || v.split > 2))
                fail("path: a value no writer published for this shape", i);
            else if (!hit && (v.arms | v.split | v.layers) != 0)
                fail("path: a miss left a value", i);
            if (!hit || rand_r(&seed) % 8 == 0) {
                mkrt__shape_plan now = {hit ? (uint8_t)(3 - v.arms) : 1, hit ? (uint8_t)(3 - v.split) : 2, x.span};
                if (!mkrt__shape_cache_put(&path, &x, &now))
                    fail("path: put failed", i);
                puts++;
            }
            /* relaxed: as in reader(). */
            atomic_fetch_add_explicit(&plans_checked, 1, memory_order_relaxed);
        }
        /* relaxed: a progress figure, read only for display. */
        atomic_fetch_add_explicit(&progress_lookups, 64, memory_order_relaxed);
    }
    atomic_fetch_add(&path_lookups, mine);
    atomic_fetch_add(&path_puts, puts);
    return 0;
}

static int writer(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    uint64_t mine = 0;
    build_buf buf;
    while (stress_now_ns() < deadline) {
        int what = rand_r(&seed) % 100;
        if (what < 90) {
            uint64_t h = (uint64_t)rand_r(&seed) % KEYS;
            mkrt_plan_key k = key_for(h, &DEV_B, 1 + (uint64_t)(rand_r(&seed) % 2));
            mkrt_plan p;
            if (mkrt_plan_cache_get_or_plan_copy(cache, &k, build, &buf, &p, NULL) != MKRT_OK)
                fail("writer get_or_plan failed", h);
            else if (p.worker_groups != workers_for(h))
                fail("writer copy mismatch", h);
            mine++;
            /* relaxed: a progress figure, read only for display. */
            atomic_fetch_add_explicit(&progress_lookups, 1, memory_order_relaxed);
        } else if (what < 96) {
            mkrt_plan_cache_invalidate_device(cache, &DEV_B);
        } else if (what < 99) {
            mkrt_plan_cache_invalidate_policy_before(cache, 2);
        } else {
            mkrt_plan_cache_clear(cache);
        }
        if (rand_r(&seed) % 16 == 0)
            sched_yield();
    }
    atomic_fetch_add(&lookups, mine);
    return 0;
}

static int monitor(void *arg)
{
    (void)arg;
    mkrt_plan_cache_stats last = {0};
    while (!atomic_load(&stop_monitor)) {
        mkrt_plan_cache_stats s;
        mkrt_plan_cache_stats_read(cache, &s);
        if (s.entries > CAPACITY)
            fail("entries above capacity", s.entries);
        if (s.evictions < last.evictions || s.invalidations < last.invalidations)
            fail("writer counters went backwards", 0);
        last = s;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

static void progress(void *ctx, double elapsed)
{
    (void)ctx;
    mkrt_plan_cache_stats s;
    mkrt_plan_cache_stats_read(cache, &s);
    /* relaxed: display only. */
    uint64_t n = atomic_load_explicit(&progress_lookups, memory_order_relaxed);
    printf("plan_cache_stress: %5.1fs lookups %llu hits %llu misses %llu evictions %llu "
           "invalidations %llu entries %llu failures %llu rate %.2fM/s\n",
           elapsed, (unsigned long long)n, (unsigned long long)s.hits, (unsigned long long)s.misses,
           (unsigned long long)s.evictions, (unsigned long long)s.invalidations,
           (unsigned long long)s.entries, (unsigned long long)atomic_load(&failures),
           elapsed > 0 ? (double)n / elapsed / 1e6 : 0.0);
}

int main(int argc, char **argv)
{
    unsigned vals[] = {3, 3, 1, 5, 2, 3};
    const stress_opt opts[] = {
        {"seconds", "run for N seconds", &vals[0]},
        {"readers", "reader threads, 1..16", &vals[1]},
        {"writers", "writer threads, 0..16", &vals[2]},
        {"progress", "progress line every N seconds on a terminal, 0: none", &vals[3]},
        {"planners", "planning threads (cached topology selection), 0..16", &vals[4]},
        {"path", "threads planning on the data path's cache (lookups, puts that retire), 0..16", &vals[5]},
        {NULL, NULL, NULL}};
    stress_getopt(argc, argv, "Readers and writers on one plan cache under eviction pressure.", opts);
    if (vals[1] < 1 || vals[1] > MAX_THREADS || vals[2] > MAX_THREADS || vals[4] > MAX_THREADS ||
        vals[5] > MAX_THREADS) {
        fprintf(stderr, "plan_cache_stress: readers 1..%d, writers 0..%d, planners 0..%d, path 0..%d\n",
                MAX_THREADS, MAX_THREADS, MAX_THREADS, MAX_THREADS);
        return 2;
    }
    mkrt_plan_cache_config cfg = {CAPACITY, 0};
    mkrt_error err;
    if (mkrt_plan_cache_create(&cfg, &cache, &err) != MKRT_OK) {
        fprintf(stderr, "plan_cache_stress: %s\n", err.message);
        return 1;
    }
    if (!mkrt__shape_cache_init(&path, PATH_CAPACITY, &err)) {
        fprintf(stderr, "plan_cache_stress: %s\n", err.message);
        return 1;
    }
    uint64_t t0 = stress_now_ns();
    deadline = t0 + (uint64_t)vals[0] * 1000000000u;
    shapes_init();
    mkrt__thread th[4 * MAX_THREADS + 1];
    unsigned n = 0;
    mkrt__thread_start(&th[n++], monitor, NULL);
    for (unsigned r = 0; r < vals[1]; r++)
        mkrt__thread_start(&th[n++], reader, (void *)(uintptr_t)(r + 1));
    for (unsigned w = 0; w < vals[2]; w++)
        mkrt__thread_start(&th[n++], writer, (void *)(uintptr_t)(w + 1000));
    for (unsigned q = 0; q < vals[4]; q++)
        mkrt__thread_start(&th[n++], planner, (void *)(uintptr_t)(q + 2000));
    for (unsigned q = 0; q < vals[5]; q++)
        mkrt__thread_start(&th[n++], path_planner, (void *)(uintptr_t)(q + 3000));
    stress_progress pg;
    stress_progress_start(&pg, vals[3], progress, NULL);
    for (unsigned i = 1; i < n; i++)
        mkrt__thread_join(th[i]);
    stress_progress_stop(&pg);
    atomic_store(&stop_monitor, true);
    mkrt__thread_join(th[0]);
    mkrt_plan_cache_stats s;
    mkrt_plan_cache_stats_read(cache, &s);
    mkrt_plan_cache_destroy(cache);
    /* relaxed: the path's counters, read after every thread joined. */
    const uint64_t ph = atomic_load_explicit(&path.hits, memory_order_relaxed),
                   pm = atomic_load_explicit(&path.misses, memory_order_relaxed),
                   pr = atomic_load_explicit(&path.replaced, memory_order_relaxed);
    mkrt__shape_cache_fini(&path);
    double secs = (double)(stress_now_ns() - t0) / 1e9;
    uint64_t total = atomic_load(&lookups), bad = atomic_load(&failures);
    bool accounted = s.hits + s.misses == total;
    if (!accounted)
        fprintf(stderr, "plan_cache_stress: hits %llu + misses %llu != lookups %llu\n",
                (unsigned long long)s.hits, (unsigned long long)s.misses, (unsigned long long)total);
    if (ph + pm != atomic_load(&path_lookups)) {
        fprintf(stderr, "plan_cache_stress: path hits %llu + misses %llu != lookups %llu\n",
                (unsigned long long)ph, (unsigned long long)pm, (unsigned long long)atomic_load(&path_lookups));
        accounted = false;
    }
    bool pass = bad == 0 && accounted && s.evictions > 0 && (vals[5] == 0 || pr > 0);
    printf("SUMMARY plan_cache_stress readers %u writers %u planners %u seconds %.1f lookups %llu checked %llu "
           "hits %llu misses %llu races %llu evictions %llu invalidations %llu path %u (hits %llu misses %llu "
           "puts %llu retired %llu) failures %llu rate %.2fM/s %s\n",
           vals[1], vals[2], vals[4], secs, (unsigned long long)total,
           (unsigned long long)atomic_load(&plans_checked), (unsigned long long)s.hits,
           (unsigned long long)s.misses, (unsigned long long)s.insert_races,
           (unsigned long long)s.evictions, (unsigned long long)s.invalidations, vals[5], (unsigned long long)ph,
           (unsigned long long)pm, (unsigned long long)atomic_load(&path_puts), (unsigned long long)pr,
           (unsigned long long)bad, (double)total / secs / 1e6, pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
}
