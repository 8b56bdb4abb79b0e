/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_bad_input.c - every public call outside runtime.h and dedupe.h
 * with bad input (status, alloc, rings, barriers, layers, frontiers,
 * sizing, policy, priority here; topology, the plan cache and the
 * allocation failures in test_bad_input_plan.c): each NULL pointer in turn, zero and huge counts,
 * out-of-range enums. Status calls must return the documented status with
 * a "Fix:" message in err (and accept a NULL err); calls that return a
 * count, a handle, a value or nothing must return 0 / NULL / the documented
 * value or do nothing. None may crash, hang or abort.
 *
 * Second half: allocation failure injection. For every create function
 * (and every call that grows a scratch or publishes a plan) the k-th
 * allocation fails, for k = 0, 1, 2, ... until the call succeeds; each
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
#include "mkrt/policy.h"
#include "mkrt/priority.h"
#include "mkrt/ring.h"
#include "mkrt/sizing.h"
#include "mkrt/status.h"
#include "mkrt/topology.h"
#include "ring_cases.h"
#include "tap.h"
#include "bad_input.h"

/* ---- status.h, alloc.h -------------------------------------------------- */

static unsigned side_allocs;
static void *side_alloc(size_t size, size_t align, void *ctx)
{
    (void)ctx;
    side_allocs++;
    return aligned_alloc(align < sizeof(void *) ? sizeof(void *) : align,
                         (size + align - 1) & ~(align - 1));
}

static void status_and_alloc(void)
{
    is_str(mkrt_status_name((mkrt_status)1), "MKRT_UNKNOWN_STATUS", "status_name(1) is unknown");
    is_str(mkrt_status_name((mkrt_status)-1000), "MKRT_UNKNOWN_STATUS",
           "status_name(-1000) is unknown");
    is_str(mkrt_status_describe((mkrt_status)77), "unknown status", "status_describe(77)");
    mkrt_error_clear(NULL); /* must simply return */

    /* An allocator with a NULL free is refused: the default stays. */
    mkrt_allocator half = {side_alloc, NULL, NULL};
    mkrt_allocator_set(&half);
    mkrt_spsc_ring *r = mkrt_spsc_ring_create(8, NULL);
    ok(r != NULL && side_allocs == 0, "allocator_set with a NULL free keeps the default allocator");
    mkrt_spsc_ring_destroy(r);
    mkrt_allocator half2 = {NULL, NULL, NULL};
    mkrt_allocator_set(&half2);
    r = mkrt_spsc_ring_create(8, NULL);
    ok(r != NULL && side_allocs == 0, "allocator_set with a NULL alloc keeps the default allocator");
    mkrt_spsc_ring_destroy(r);
    mkrt_allocator_set(NULL);
}

/* ---- ring.h ------------------------------------------------------------- */


#define RING_WRAPPERS(K)                                                                       \
    static void *K##_create(size_t c, mkrt_error *e) { return mkrt_##K##_ring_create(c, e); }  \
    static size_t K##_push(void *r, const mkrt_item *i, size_t n)                              \
    {                                                                                          \
        return mkrt_##K##_ring_push(r, i, n);                                                  \
    }                                                                                          \
    static size_t K##_pop(void *r, mkrt_item *o, size_t m) { return mkrt_##K##_ring_pop(r, o, m); } \
    static mkrt_status K##_push_wait(void *r, const mkrt_item *i, size_t n, uint64_t t,        \
                                     size_t *d)                                                \
    {                                                                                          \
        return mkrt_##K##_ring_push_wait(r, i, n, t, d);                                       \
    }                                                                                          \
    static mkrt_status K##_pop_wait(void *r, mkrt_item *o, size_t m, uint64_t t, size_t *d)    \
    {                                                                                          \
        return mkrt_##K##_ring_pop_wait(r, o, m, t, d);                                        \
    }                                                                                          \
    static void K##_close(void *r) { mkrt_##K##_ring_close(r); }                               \
    static bool K##_is_closed(const void *r) { return mkrt_##K##_ring_is_closed(r); }          \
    static size_t K##_size(const void *r) { return mkrt_##K##_ring_size(r); }                  \
    static size_t K##_capacity(const void *r) { return mkrt_##K##_ring_capacity(r); }          \
    static void K##_destroy(void *r) { mkrt_##K##_ring_destroy(r); }                           \
    static const ring_ops K##_api = {.name = #K,           .create = K##_create,               \
                                     .push = K##_push,     .pop = K##_pop,                     \
                                     .push_wait = K##_push_wait, .pop_wait = K##_pop_wait,     \
                                     .close = K##_close,   .is_closed = K##_is_closed,         \
                                     .size = K##_size,     .capacity = K##_capacity,           \
                                     .destroy = K##_destroy};

RING_WRAPPERS(spsc)
RING_WRAPPERS(mpmc)

static void ring_bad_input(const ring_ops *a)
{
    const char *n = a->name;
    static const size_t bad_caps[] = {0, 1, 3, (size_t)MKRT_RING_CAPACITY_MAX * 2, SIZE_MAX};
    for (size_t i = 0; i < sizeof bad_caps / sizeof bad_caps[0]; i++) {
        mkrt_error_clear(&err);
        void *bad = a->create(bad_caps[i], &err);
        ok(bad == NULL && err.status == MKRT_EINVAL && strstr(err.message, "Fix:") != NULL,
           "%s_ring_create(%zu): NULL, MKRT_EINVAL with a Fix", n, bad_caps[i]);
        ok(a->create(bad_caps[i], NULL) == NULL, "%s_ring_create(%zu, NULL err): NULL", n,
           bad_caps[i]);
    }

    void *r = a->create(8, NULL);
    mkrt_item in[8], out[8];
    for (uint32_t i = 0; i < 8; i++)
        in[i] = (mkrt_item){i, i + 1, i + 2, i + 3};
    size_t done = 99;

    /* NULL ring. */
    is(a->push(NULL, in, 1), 0, "%s_ring_push(NULL ring) accepts nothing", n);
    is(a->pop(NULL, out, 1), 0, "%s_ring_pop(NULL ring) takes nothing", n);
    done = 99;
    is(a->push_wait(NULL, in, 1, MKRT_TIMEOUT_INFINITE, &done), MKRT_EINVAL,
       "%s_ring_push_wait(NULL ring) is MKRT_EINVAL, not a hang", n);
    is(done, 0, "%s: ... with *done = 0", n);
    done = 99;
    is(a->pop_wait(NULL, out, 1, MKRT_TIMEOUT_INFINITE, &done), MKRT_EINVAL,
       "%s_ring_pop_wait(NULL ring) is MKRT_EINVAL, not a hang", n);
    is(done, 0, "%s: ... with *done = 0", n);
    is(a->push_wait(NULL, in, 0, 0, NULL), MKRT_EINVAL, "%s_ring_push_wait(NULL ring, 0 items)", n);
    a->close(NULL);
    ok(!a->is_closed(NULL), "%s_ring_close(NULL) is a no-op, is_closed(NULL) is false", n);
    is(a->size(NULL), 0, "%s_ring_size(NULL) is 0", n);
    is(a->capacity(NULL), 0, "%s_ring_capacity(NULL) is 0", n);
    a->destroy(NULL);

    /* NULL buffers with non-zero counts (the defect this test was written
     * for: these used to crash in memcpy). */
    is(a->push(r, NULL, 1), 0, "%s_ring_push(NULL items, 1) accepts nothing", n);
    is(a->push(r, NULL, SIZE_MAX), 0, "%s_ring_push(NULL items, SIZE_MAX) accepts nothing", n);
    is(a->size(r), 0, "%s: ... and the ring is still empty", n);
    is(a->push(r, in, 3), 3, "%s: a good push after them works", n);
    is(a->pop(r, NULL, 1), 0, "%s_ring_pop(NULL out, 1) takes nothing", n);
    is(a->pop(r, NULL, SIZE_MAX), 0, "%s_ring_pop(NULL out, SIZE_MAX) takes nothing", n);
    is(a->size(r), 3, "%s: ... and drops nothing", n);
    done = 99;
    is(a->push_wait(r, NULL, 1, MKRT_TIMEOUT_INFINITE, &done), MKRT_EINVAL,
       "%s_ring_push_wait(NULL items, 1) is MKRT_EINVAL", n);
    is(done, 0, "%s: ... with *done = 0", n);
    done = 99;
    is(a->pop_wait(r, NULL, 4, MKRT_TIMEOUT_INFINITE, &done), MKRT_EINVAL,
       "%s_ring_pop_wait(NULL out, 4) is MKRT_EINVAL", n);
    is(done, 0, "%s: ... with *done = 0", n);
    is(a->push_wait(r, NULL, 1, 0, NULL), MKRT_EINVAL,
       "%s_ring_push_wait(NULL items, NULL done) is MKRT_EINVAL", n);
    is(a->pop_wait(r, NULL, 1, 0, NULL), MKRT_EINVAL,
       "%s_ring_pop_wait(NULL out, NULL done) is MKRT_EINVAL", n);
    is(a->size(r), 3, "%s: the three items are still there", n);
    is(a->push_wait(r, NULL, 0, MKRT_TIMEOUT_INFINITE, &done), MKRT_OK,
       "%s_ring_push_wait(NULL items, 0) is an empty request: MKRT_OK", n);
    is(a->pop_wait(r, NULL, 0, MKRT_TIMEOUT_INFINITE, &done), MKRT_OK,
       "%s_ring_pop_wait(NULL out, 0) is an empty request: MKRT_OK", n);
    is(a->pop_wait(r, out, 8, 0, NULL), MKRT_OK, "%s_ring_pop_wait with a NULL done works", n);
    is(a->size(r), 0, "%s: ... and took the items", n);

    /* Huge counts against real buffers: bounded by the ring, not by n. */
    is(a->push(r, in, SIZE_MAX), 8, "%s_ring_push(n = SIZE_MAX) stops at the capacity", n);
    is(a->pop(r, out, SIZE_MAX), 8, "%s_ring_pop(max = SIZE_MAX) stops at what is there", n);
    ok(memcmp(in, out, sizeof in) == 0, "%s: ... in order, intact", n);
    is(a->push(r, in, 8), 8, "%s: refill", n);
    done = 99;
    is(a->push_wait(r, in, SIZE_MAX, 0, &done), MKRT_ETIMEDOUT,
       "%s_ring_push_wait(n = SIZE_MAX, timeout 0) on a full ring times out", n);
    is(done, 0, "%s: ... having moved nothing", n);
    a->destroy(r);
}

/* ---- barrier.h, layer.h, frontier.h ----------------------------------- */

static void barrier_bad_input(void)
{
    mkrt_error_clear(&err);
    mkrt_barrier_scratch *s = mkrt_barrier_scratch_create(SIZE_MAX, 0, &err);
    ok(s == NULL && err.status == MKRT_EOVERFLOW && strstr(err.message, "Fix:"),
       "barrier_scratch_create(SIZE_MAX waves): NULL, MKRT_EOVERFLOW with a Fix");
    mkrt_error_clear(&err);
    s = mkrt_barrier_scratch_create(0, SIZE_MAX, &err);
    ok(s == NULL && err.status == MKRT_EOVERFLOW && strstr(err.message, "Fix:"),
       "barrier_scratch_create(SIZE_MAX deps): NULL, MKRT_EOVERFLOW with a Fix");
    mkrt_error_clear(&err);
    s = mkrt_barrier_scratch_create(SIZE_MAX / 16, 0, &err);
    ok(s == NULL && err.status == MKRT_ENOMEM && strstr(err.message, "Fix:"),
       "barrier_scratch_create(2^60 waves): NULL, MKRT_ENOMEM with a Fix");
    ok(mkrt_barrier_scratch_create(SIZE_MAX, 0, NULL) == NULL, "... and a NULL err is allowed");
    is(mkrt_barrier_scratch_wave_capacity(NULL), 0, "barrier_scratch_wave_capacity(NULL) is 0");
    is(mkrt_barrier_scratch_dependency_capacity(NULL), 0,
       "barrier_scratch_dependency_capacity(NULL) is 0");
    mkrt_barrier_scratch_destroy(NULL);

    s = mkrt_barrier_scratch_create(0, 0, NULL);
    mkrt_barrier_plan p;
    mkrt_wave_dep deps[2] = {{0, 1}, {1, 2}};
    mkrt_wave_dep far = {0, 7}, self = {1, 1};
    CHECK(MKRT_EINVAL, mkrt_plan_barriers(NULL, 3, deps, 2, &p, E), "plan_barriers(NULL scratch)");
    CHECK(MKRT_EINVAL, mkrt_plan_barriers(s, 3, NULL, 2, &p, E), "plan_barriers(NULL deps, 2)");
    CHECK(MKRT_EINVAL, mkrt_plan_barriers(s, 3, deps, 2, NULL, E), "plan_barriers(NULL plan)");
    CHECK(MKRT_EINVAL, mkrt_plan_barriers(s, 0, deps, 1, &p, E), "plan_barriers(0 waves, 1 dep)");
    CHECK(MKRT_EINVAL, mkrt_plan_barriers(s, 3, &far, 1, &p, E), "plan_barriers(dep to wave 7 of 3)");
    CHECK(MKRT_EINVAL, mkrt_plan_barriers(s, 3, &self, 1, &p, E), "plan_barriers(self dependency)");
    CHECK(MKRT_EOVERFLOW, mkrt_plan_barriers(s, SIZE_MAX, NULL, 0, &p, E),
          "plan_barriers(SIZE_MAX waves)");
    CHECK(MKRT_EOVERFLOW, mkrt_plan_barriers(s, 3, deps, SIZE_MAX, &p, E),
          "plan_barriers(SIZE_MAX deps)");
    CHECK(MKRT_ENOMEM, mkrt_plan_barriers(s, SIZE_MAX / 16, NULL, 0, &p, E),
          "plan_barriers(2^60 waves)");
    is(mkrt_plan_barriers(s, 0, NULL, 0, &p, NULL), MKRT_OK, "plan_barriers(0 waves, NULL deps) is OK");
    is(mkrt_plan_barriers(s, 3, deps, 2, &p, NULL), MKRT_OK, "the scratch still plans after them");
    is(p.group_count, 3, "... correctly");
    mkrt_barrier_scratch_destroy(s);
}

static void layer_bad_input(void)
{
    mkrt_layer_scratch *s = mkrt_layer_scratch_create(NULL);
    mkrt_layer_plan p;
    mkrt_item items[2] = {{1, 0, 1, 0}, {1, 1, 2, 0}};
    mkrt_layer_scratch_destroy(NULL);
    is(mkrt_layer_scratch_capacity(NULL), 0, "layer_scratch_capacity(NULL) is 0");
    CHECK(MKRT_EINVAL, mkrt_layer_batch(NULL, items, 2, &p, E), "layer_batch(NULL scratch)");
    CHECK(MKRT_EINVAL, mkrt_layer_batch(s, NULL, 2, &p, E), "layer_batch(NULL items, 2)");
    CHECK(MKRT_EINVAL, mkrt_layer_batch(s, items, 2, NULL, E), "layer_batch(NULL plan)");
    CHECK(MKRT_EINVAL, mkrt_layer_batch(s, items, (size_t)UINT32_MAX, &p, E),
          "layer_batch(2^32 - 1 items)");
    CHECK(MKRT_EINVAL, mkrt_layer_batch(s, items, SIZE_MAX, &p, E), "layer_batch(SIZE_MAX items)");
    is(mkrt_layer_batch(s, NULL, 0, &p, NULL), MKRT_OK, "layer_batch(NULL items, 0) is OK");
    is(p.layer_count, 0, "... with no layers");
    is(mkrt_layer_batch(s, items, 2, &p, NULL), MKRT_OK, "the scratch still layers after them");
    is(p.layer_count, 2, "... correctly");
    mkrt_layer_scratch_destroy(s);
}

static void frontier_bad_input(void)
{
    mkrt_barrier_scratch *s = mkrt_barrier_scratch_create(0, 0, NULL);
    mkrt_frontier_wave w[3] = {{10, 1, 1}, {10, 1, 1}, {10, 1, 1}};
    mkrt_frontier_wave huge = {0, UINT64_MAX / 2, 0};
    mkrt_wave_dep deps[1] = {{0, 1}};
    mkrt_frontier_plan fp;
    mkrt_exec_plan xp;
    uint64_t bytes;
    mkrt_exec_sample sample = {1000.0, 0.5, 4096};
    mkrt_graph_shape graph = {100, 400};
    mkrt_byte_layout layout = {8, 8, 0, 0, 0};

    CHECK(MKRT_EINVAL, mkrt_frontier_fused_wave_bytes(NULL, &bytes, E),
          "frontier_fused_wave_bytes(NULL wave)");
    CHECK(MKRT_EINVAL, mkrt_frontier_fused_wave_bytes(&w[0], NULL, E),
          "frontier_fused_wave_bytes(NULL result)");
    CHECK(MKRT_EOVERFLOW, mkrt_frontier_fused_wave_bytes(&huge, &bytes, E),
          "frontier_fused_wave_bytes(scratch 2^63)");

    CHECK(MKRT_EINVAL, mkrt_plan_frontier_memory(NULL, w, 3, deps, 1, 0, 1000, 0, &fp, E),
          "plan_frontier_memory(NULL scratch)");
    CHECK(MKRT_EINVAL, mkrt_plan_frontier_memory(s, NULL, 3, deps, 1, 0, 1000, 0, &fp, E),
          "plan_frontier_memory(NULL waves, 3)");
    CHECK(MKRT_EINVAL, mkrt_plan_frontier_memory(s, w, 3, NULL, 1, 0, 1000, 0, &fp, E),
          "plan_frontier_memory(NULL deps, 1)");
    CHECK(MKRT_EINVAL, mkrt_plan_frontier_memory(s, w, 3, deps, 1, 0, 1000, 0, NULL, E),
          "plan_frontier_memory(NULL plan)");
    CHECK(MKRT_EOVERFLOW, mkrt_plan_frontier_memory(s, w, SIZE_MAX, NULL, 0, 0, 1000, 0, &fp, E),
          "plan_frontier_memory(SIZE_MAX waves)");
    CHECK(MKRT_EBUDGET, mkrt_plan_frontier_memory(s, w, 3, deps, 1, 2000, 1000, 0, &fp, E),
          "plan_frontier_memory(resident over budget)");
    is(mkrt_plan_frontier_memory(s, NULL, 0, NULL, 0, 0, 0, 0, &fp, NULL), MKRT_OK,
       "plan_frontier_memory(no waves, NULL arrays) is OK");

#define FX(S, SA, G, L, W, WN, D, DN, X, P)                                                   \
    mkrt_plan_frontier_execution(S, SA, G, L, W, WN, D, DN, 1u << 30, 100.0, 0.5, true, X, P, E)
    CHECK(MKRT_EINVAL, FX(NULL, &sample, &graph, &layout, w, 3, deps, 1, &xp, &fp),
          "plan_frontier_execution(NULL scratch)");
    CHECK(MKRT_EINVAL, FX(s, NULL, &graph, &layout, w, 3, deps, 1, &xp, &fp),
          "plan_frontier_execution(NULL sample)");
    CHECK(MKRT_EINVAL, FX(s, &sample, NULL, &layout, w, 3, deps, 1, &xp, &fp),
          "plan_frontier_execution(NULL graph)");
    CHECK(MKRT_EINVAL, FX(s, &sample, &graph, NULL, w, 3, deps, 1, &xp, &fp),
          "plan_frontier_execution(NULL layout)");
    CHECK(MKRT_EINVAL, FX(s, &sample, &graph, &layout, NULL, 3, deps, 1, &xp, &fp),
          "plan_frontier_execution(NULL waves, 3)");
    CHECK(MKRT_EINVAL, FX(s, &sample, &graph, &layout, w, 3, NULL, 1, &xp, &fp),
          "plan_frontier_execution(NULL deps, 1)");
    CHECK(MKRT_EINVAL, FX(s, &sample, &graph, &layout, w, 3, deps, 1, NULL, &fp),
          "plan_frontier_execution(NULL execution)");
    CHECK(MKRT_EINVAL, FX(s, &sample, &graph, &layout, w, 3, deps, 1, &xp, NULL),
          "plan_frontier_execution(NULL plan)");
#undef FX
    is(mkrt_plan_frontier_execution(s, &sample, &graph, &layout, w, 3, deps, 1, 1u << 30, 100.0,
                                    0.5, true, &xp, &fp, NULL),
       MKRT_OK, "plan_frontier_execution with good input still plans");
    mkrt_barrier_scratch_destroy(s);
}

/* ---- sizing.h ----------------------------------------------------------- */

static void sizing_bad_input(void)
{
    mkrt_sizing_policy sp = mkrt_sizing_policy_standard();
    mkrt_grid_limits lim = {256, 1024, 1024}, zero_lim = {256, 0, 1024};
    mkrt_launch_geometry g;
    uint32_t workers;

    is(mkrt_sizing_workgroup_size(0, 0), 1, "sizing_workgroup_size(0, 0) is 1");
    is(mkrt_sizing_workgroup_size(UINT32_MAX, 0), 1, "sizing_workgroup_size(max, 0) is 1");
    is(mkrt_sizing_padded_slot_count(UINT32_MAX, 0), UINT32_MAX,
       "sizing_padded_slot_count(max, 0) saturates");
    is(mkrt_sizing_padded_slot_count(UINT32_MAX, 1000) % 1000, 0,
       "sizing_padded_slot_count(max, 1000) stays a multiple of the workgroup");
    uint32_t grid[3] = {7, 7, 7};
    mkrt_sizing_dispatch_grid(NULL, 4, 100, 32, grid);
    ok(grid[0] == 7 && grid[1] == 7 && grid[2] == 7, "sizing_dispatch_grid(NULL policy) writes nothing");
    mkrt_sizing_dispatch_grid(&sp, 4, 100, 32, NULL);
    mkrt_sizing_dispatch_grid(&sp, UINT32_MAX, UINT32_MAX, 0, grid);
    ok(grid[0] == sp.max_dispatch_workgroups, "sizing_dispatch_grid(huge, workgroup 0) is capped");
    is(mkrt_sizing_default_worker_groups(NULL, 1024, 1024), 0,
       "sizing_default_worker_groups(NULL policy) is 0");
    ok(!mkrt_sizing_fused_allowed(NULL, 1, 1), "sizing_fused_allowed(NULL policy) is false");
    ok(mkrt_sizing_fused_allowed(&sp, UINT64_MAX, UINT64_MAX),
       "sizing_fused_allowed(huge) does not overflow");
    g = mkrt_geometry_from_slots(NULL, 100, 4, 32);
    ok(g.workgroup_size_x == 0 && g.slot_count == 0 && g.dispatch_grid[0] == 0,
       "geometry_from_slots(NULL policy) is a zeroed geometry");
    g = mkrt_geometry_from_slots_cached(NULL, 100, 4, 32);
    ok(g.workgroup_size_x == 0 && g.slot_count == 0, "geometry_from_slots_cached(NULL policy) too");
    is(mkrt_geometry_covering_worker_groups(NULL), 0, "geometry_covering_worker_groups(NULL) is 0");

    CHECK(MKRT_EINVAL, mkrt_geometry_from_item_count(NULL, 10, 4, 32, &g, E),
          "geometry_from_item_count(NULL policy)");
    CHECK(MKRT_EINVAL, mkrt_geometry_from_item_count(&sp, 10, 4, 32, NULL, E),
          "geometry_from_item_count(NULL result)");
    CHECK(MKRT_EOVERFLOW, mkrt_geometry_from_item_count(&sp, UINT64_MAX, 4, 32, &g, E),
          "geometry_from_item_count(UINT64_MAX items)");
    CHECK(MKRT_EOVERFLOW, mkrt_geometry_from_item_count(&sp, UINT32_MAX, 1000, 1000, &g, E),
          "geometry_from_item_count(2^32 - 1 items, padding saturates)");

#define GRIDS(fn, label)                                                                       \
    CHECK(MKRT_EINVAL, fn(NULL, 10, 0, &lim, &g, &workers, E), label "(NULL policy)");         \
    CHECK(MKRT_EINVAL, fn(&sp, 10, 0, NULL, &g, &workers, E), label "(NULL limits)");          \
    CHECK(MKRT_EINVAL, fn(&sp, 10, 0, &lim, NULL, &workers, E), label "(NULL geometry)");      \
    CHECK(MKRT_EINVAL, fn(&sp, 10, 0, &lim, &g, NULL, E), label "(NULL worker groups)");       \
    CHECK(MKRT_EINVAL, fn(&sp, 10, 0, &zero_lim, &g, &workers, E), label "(a zero limit)");    \
    is(fn(&sp, UINT32_MAX, UINT32_MAX, &lim, &g, &workers, NULL), MKRT_OK,                     \
       label "(huge queue and workers) is OK");                                               \
    ok(workers <= lim.max_workgroups_per_dimension, label ": ... capped by the limit")
    GRIDS(mkrt_sizing_optimal_grid, "sizing_optimal_grid");
    GRIDS(mkrt_sizing_optimal_grid_cached, "sizing_optimal_grid_cached");
#undef GRIDS
    mkrt_sizing_cache_reset();
    mkrt_sizing_cache_stats st = mkrt_sizing_cache_stats_read();
    ok(st.grid_entries == 0 && st.geometry_entries == 0, "sizing cache reset and stats read");
}

/* ---- policy.h ----------------------------------------------------------- */

static void policy_bad_input(void)
{
    mkrt_launch_policy p = mkrt_launch_policy_standard();
    mkrt_launch_request req = mkrt_launch_request_direct(100, 8, 64);
    mkrt_launch_request no_limits = mkrt_launch_request_direct(100, 0, 0);
    mkrt_launch_recommendation rec;
    mkrt_topology_evidence tev;
    mkrt_promotion_evidence pev;

    CHECK(MKRT_EINVAL, mkrt_launch_recommend(NULL, &req, &rec, E), "launch_recommend(NULL policy)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend(&p, NULL, &rec, E), "launch_recommend(NULL request)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend(&p, &req, NULL, E), "launch_recommend(NULL result)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend(&p, &no_limits, &rec, E),
          "launch_recommend(zero device limits)");

    mkrt_dispatch_topology prev = MKRT_TOPOLOGY_HYBRID_FRONTIER;
    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_previous(NULL, &req, prev, &rec, E),
          "launch_recommend_with_previous(NULL policy)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_previous(&p, NULL, prev, &rec, E),
          "launch_recommend_with_previous(NULL request)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_previous(&p, &req, prev, NULL, E),
          "launch_recommend_with_previous(NULL result)");
    CHECK(MKRT_EINVAL,
          mkrt_launch_recommend_with_previous(&p, &req, (mkrt_dispatch_topology)99, &rec, E),
          "launch_recommend_with_previous(topology 99)");
    CHECK(MKRT_EINVAL,
          mkrt_launch_recommend_with_previous(&p, &req, (mkrt_dispatch_topology)-1, &rec, E),
          "launch_recommend_with_previous(topology -1)");

    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_topology_evidence(NULL, &req, &rec, &tev, E),
          "launch_recommend_with_topology_evidence(NULL policy)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_topology_evidence(&p, NULL, &rec, &tev, E),
          "launch_recommend_with_topology_evidence(NULL request)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_topology_evidence(&p, &req, NULL, &tev, E),
          "launch_recommend_with_topology_evidence(NULL result)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_topology_evidence(&p, &req, &rec, NULL, E),
          "launch_recommend_with_topology_evidence(NULL evidence)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_promotion_evidence(NULL, &req, &rec, &pev, E),
          "launch_recommend_with_promotion_evidence(NULL policy)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_promotion_evidence(&p, NULL, &rec, &pev, E),
          "launch_recommend_with_promotion_evidence(NULL request)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_promotion_evidence(&p, &req, NULL, &pev, E),
          "launch_recommend_with_promotion_evidence(NULL result)");
    CHECK(MKRT_EINVAL, mkrt_launch_recommend_with_promotion_evidence(&p, &req, &rec, NULL, E),
          "launch_recommend_with_promotion_evidence(NULL evidence)");
    ok(!mkrt_topology_evidence_is_complete(NULL), "topology_evidence_is_complete(NULL) is false");
    ok(!mkrt_promotion_evidence_is_complete(NULL), "promotion_evidence_is_complete(NULL) is false");
    mkrt_launch_cache_reset();
    mkrt_launch_cache_stats cs = mkrt_launch_cache_stats_read();
    is(cs.entries, 0, "launch cache reset and stats read");

    uint32_t cand[3] = {1, 2, 4};
    double cost[3] = {3.0, 1.0, 2.0};
    is(mkrt_autotune_hit_capacity_multiplier(NULL, NULL, 0, NULL, 0), 0,
       "autotune_hit_capacity_multiplier(NULL policy, nothing) is 0");
    is(mkrt_autotune_hit_capacity_multiplier(NULL, cand, 3, cost, 3), 2,
       "autotune_hit_capacity_multiplier(NULL policy) still picks the cheapest");
    is(mkrt_autotune_hit_capacity_multiplier(&p, NULL, 3, cost, 3), p.hit_capacity_multiplier,
       "autotune_hit_capacity_multiplier(NULL candidates, 3) keeps the current value");
    is(mkrt_autotune_hit_capacity_multiplier(&p, cand, 3, NULL, 3), p.hit_capacity_multiplier,
       "autotune_hit_capacity_multiplier(NULL costs, 3) keeps the current value");
    is(mkrt_autotune_workgroup_size(NULL, SIZE_MAX, cost, 3, 64), 64,
       "autotune_workgroup_size(NULL candidates, SIZE_MAX) keeps the current value");
    is(mkrt_autotune_workgroup_size(cand, 3, NULL, SIZE_MAX, 64), 64,
       "autotune_workgroup_size(NULL costs, SIZE_MAX) keeps the current value");
    is(mkrt_autotune_workgroup_size(cand, 3, cost, SIZE_MAX, 64), 2,
       "autotune_workgroup_size(SIZE_MAX costs) reads only min(n) entries");

    double m[4] = {1, 0, 0, 1}, grad[2] = {1, 2}, out[2];
    size_t written = 99;
#define NG(M, ML, G, GL, N, O, OC, W) mkrt_natural_gradient_step(M, ML, G, GL, N, 0.5, O, OC, W, E)
    CHECK(MKRT_EINVAL, NG(m, 4, grad, 2, 2, out, 2, NULL), "natural_gradient_step(NULL written)");
    CHECK(MKRT_EINVAL, NG(NULL, 4, grad, 2, 2, out, 2, &written),
          "natural_gradient_step(NULL m, 4 entries)");
    CHECK(MKRT_EINVAL, NG(m, 4, NULL, 2, 2, out, 2, &written),
          "natural_gradient_step(NULL grad, 2 entries)");
    CHECK(MKRT_EINVAL, NG(m, 4, grad, 2, 2, NULL, 2, &written), "natural_gradient_step(NULL out)");
    CHECK(MKRT_EINVAL, NG(m, 4, grad, 2, 2, out, 1, &written), "natural_gradient_step(out_cap 1 < 2)");
    CHECK(MKRT_EINVAL, NG(m, SIZE_MAX, grad, SIZE_MAX, UINT32_MAX, out, 2, &written),
          "natural_gradient_step(n = 2^32 - 1, out_cap 2)");
    written = 99;
    is(NG(NULL, 0, NULL, 0, 2, NULL, 0, &written), MKRT_OK,
       "natural_gradient_step(no entries) is OK ...");
    is(written, 0, "... and writes nothing");
    is(NG(m, 4, grad, 2, UINT32_MAX, out, 2, &written), MKRT_OK,
       "natural_gradient_step(n = 2^32 - 1, too few entries) is OK ...");
    is(written, 0, "... and writes nothing");
#undef NG

    mkrt_launch_config c = mkrt_launch_config_default();
    CHECK(MKRT_EINVAL, mkrt_launch_config_validate(NULL, E), "launch_config_validate(NULL)");
    c.worker_count = 0;
    CHECK(MKRT_EINVAL, mkrt_launch_config_validate(&c, E), "launch_config_validate(0 workers)");
    c = mkrt_launch_config_default();
    c.max_wall_time_ns = 0;
    CHECK(MKRT_EINVAL, mkrt_launch_config_validate(&c, E), "launch_config_validate(0 wall time)");
    mkrt_launch_request r0 = mkrt_launch_config_request(NULL, 10, 64, 128, 256);
    ok(r0.queue_len == 10 && r0.requested_worker_groups == 0 && r0.expected_hits_per_item == 1 &&
           r0.max_compute_workgroups_per_dimension == 128 && r0.hot_opcode_count == 0,
       "launch_config_request(NULL config) reads an all-zero config");

    mkrt_task_snapshot snap = {1, 2, 3, 4, 5, 6};
    mkrt_launch_request before = req, after = req;
    mkrt_launch_request_apply_tasks(&after, NULL);
    ok(after.queue_len == before.queue_len && after.requeue_count == before.requeue_count &&
           after.max_priority_age == before.max_priority_age,
       "launch_request_apply_tasks(NULL snapshot) changes nothing");
    mkrt_launch_request_apply_tasks(NULL, &snap);
    after.requeue_count = UINT64_MAX - 1;
    snap.task_requeues = UINT64_MAX;
    mkrt_launch_request_apply_tasks(&after, &snap);
    ok(after.requeue_count == UINT64_MAX, "launch_request_apply_tasks saturates requeue_count");

    is_str(mkrt_topology_name((mkrt_dispatch_topology)99), "unknown", "topology_name(99)");
    is_str(mkrt_topology_name((mkrt_dispatch_topology)-1), "unknown", "topology_name(-1)");
    is_str(mkrt_pressure_name((mkrt_queue_pressure)99), "unknown", "pressure_name(99)");
    is_str(mkrt_graphblas_class_name((mkrt_graphblas_class)99), "unknown", "graphblas_class_name(99)");
    is_str(mkrt_promotion_route_name((mkrt_promotion_route)99), "unknown", "promotion_route_name(99)");
}

/* ---- priority.h --------------------------------------------------------- */

static void priority_bad_input(void)
{
    mkrt_priority_accounting a = {UINT64_MAX, UINT64_MAX, 0};
    mkrt_priority_record_requeue(NULL, 5);
    mkrt_priority_record_aged_promotion(NULL, 5);
    mkrt_priority_record_requeue(&a, 5);
    ok(a.requeue_count == UINT64_MAX && a.max_priority_age == 5,
       "priority_record_requeue(NULL) is a no-op; saturates at the top");
    CHECK(MKRT_EINVAL, mkrt_priority_try_record_requeue(NULL, 1, E), "priority_try_record_requeue(NULL)");
    CHECK(MKRT_EINVAL, mkrt_priority_try_record_aged_promotion(NULL, 1, E),
          "priority_try_record_aged_promotion(NULL)");
    CHECK(MKRT_EOVERFLOW, mkrt_priority_try_record_requeue(&a, 1, E),
          "priority_try_record_requeue(at UINT64_MAX)");
    CHECK(MKRT_EOVERFLOW, mkrt_priority_try_record_aged_promotion(&a, 1, E),
          "priority_try_record_aged_promotion(at UINT64_MAX)");
    mkrt_drain_recommendation d = mkrt_priority_drain_recommendation(NULL);
    ok(!d.should_drain && d.reason == MKRT_DRAIN_NONE && d.requeue_counter_headroom == UINT64_MAX &&
           d.fix != NULL,
       "priority_drain_recommendation(NULL) reads a zeroed accounting");
    is_str(mkrt_drain_reason_name((mkrt_drain_reason)99), "unknown", "drain_reason_name(99)");
    is_str(mkrt_drain_reason_name((mkrt_drain_reason)-1), "unknown", "drain_reason_name(-1)");

    double st[3] = {1, 2, 3}, rs[3] = {0.5, 0.5, 0.5}, out[3] = {9, 9, 9}, scr[3];
    mkrt_priority_diffuse(NULL, 3, rs, 3, 0.5, 2, out, scr);
    ok(out[0] == 9 && out[2] == 9, "priority_diffuse(NULL stalks) writes nothing");
    mkrt_priority_diffuse(st, 3, rs, 3, 0.5, 2, NULL, scr);
    mkrt_priority_diffuse(st, 3, rs, 3, 0.5, 2, out, NULL);
    ok(out[0] == 9 && out[2] == 9, "priority_diffuse(NULL scratch, iterating) writes nothing");
    mkrt_priority_diffuse(st, 3, NULL, 3, 0.5, 2, out, scr);
    ok(out[0] == 1 && out[1] == 2 && out[2] == 3, "priority_diffuse(NULL restriction) copies stalks");
    mkrt_priority_diffuse(NULL, SIZE_MAX, NULL, SIZE_MAX, 0.5, UINT32_MAX, NULL, NULL);
    mkrt_priority_diffuse(st, SIZE_MAX, rs, 3, 0.5, 2, out, scr);
    ok(out[0] == 1 && out[1] == 2 && out[2] == 3,
       "priority_diffuse(n = SIZE_MAX) writes nothing (the byte count would overflow)");
    mkrt_priority_diffuse(st, 3, rs, 3, 0.5, 2, out, scr);
    ok(fabs(out[0] - 0.5625) < 1e-12, "priority_diffuse with good input still diffuses");

    mkrt_task_requeue(NULL);
    mkrt_task_item t[2];
    memset(t, 0, sizeof t);
    t[0].state = MKRT_TASK_READY;
    t[1].state = 42;
    mkrt_task_snapshot snap;
    CHECK(MKRT_EINVAL, mkrt_task_snapshot_take(NULL, 2, &snap, E), "task_snapshot_take(NULL tasks, 2)");
    CHECK(MKRT_EINVAL, mkrt_task_snapshot_take(t, 1, NULL, E), "task_snapshot_take(NULL out)");
    CHECK(MKRT_EINVAL, mkrt_task_snapshot_take(t, 2, &snap, E), "task_snapshot_take(state 42)");
    is(mkrt_task_snapshot_take(NULL, 0, &snap, NULL), MKRT_OK, "task_snapshot_take(NULL, 0) is OK");
}

int main(void)
{
    status_and_alloc();
    ring_bad_input(&spsc_api);
    ring_bad_input(&mpmc_api);
    barrier_bad_input();
    layer_bad_input();
    frontier_bad_input();
    sizing_bad_input();
    policy_bad_input();
    priority_bad_input();
    return done_testing();
}
