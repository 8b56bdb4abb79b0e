/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_bad_input.c - every public call outside runtime.h and dedupe.h
 * with bad input: each NULL pointer in turn, zero and huge counts,
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

/* Huge requests must come back as NULL (MKRT_ENOMEM), as they do from
 * glibc; ASan and TSan would otherwise report them instead of returning
 * NULL. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
    return "allocator_may_return_null=1";
}

/* ---- checking helpers --------------------------------------------------- */

/* The err argument of the call under test: CHECK evaluates the call once
 * with E = &err (status, err->status and a Fix are checked) and once with
 * E = NULL (same status, no crash). */
static mkrt_error err;
static mkrt_error *E;

static void check_status(mkrt_status got, mkrt_status got_null_err, mkrt_status want,
                         const char *what)
{
    if (!is(got, want, "%s -> %s", what, mkrt_status_name(want)))
        diag("got %s: %s", mkrt_status_name(got), err.message);
    ok(err.status == want && strstr(err.message, "Fix:") != NULL,
       "%s: err holds the status and says what to fix", what);
    if (strstr(err.message, "Fix:") == NULL)
        diag("message: \"%s\"", err.message);
    is(got_null_err, want, "%s: the same with a NULL err", what);
}

#define CHECK(want, expr, what)                                                                \
    do {                                                                                       \
        mkrt_error_clear(&err);                                                                \
        E = &err;                                                                              \
        mkrt_status got_ = (expr);                                                             \
        mkrt_error keep_ = err;                                                                \
        E = NULL;                                                                              \
        mkrt_status got_null_ = (expr);                                                        \
        err = keep_;                                                                           \
        check_status(got_, got_null_, (want), (what));                                         \
    } while (0)

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

    char buf[256] = "x";
    is(mkrt_topology_explain(NULL, buf, sizeof buf), 0, "topology_explain(NULL decision) is 0 ...");
    is_str(buf, "", "... with an empty buffer");
    size_t full = mkrt_topology_explain(&want, NULL, 100);
    ok(full > 0, "topology_explain(NULL buf, len 100) returns the length without writing");
    is(mkrt_topology_explain(&want, buf, 0), full, "topology_explain(len 0) too");
    mkrt_topology_decision bad = want;
    bad.topology = (mkrt_wave_topology)99;
    mkrt_topology_explain(&bad, buf, sizeof buf);
    like(buf, "topology=Unknown", "topology_explain(topology 99) names it Unknown");
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

    double fp[2];
    mkrt_exec_sample two[2] = {sample, sample}, nan_cost[1] = {{NAN, 0.5, 0}};
    CHECK(MKRT_EINVAL, mkrt_schedule_fusion_pressure(NULL, 2, 10.0, 4, 0.5, fp, E),
          "schedule_fusion_pressure(NULL samples, 2)");
    CHECK(MKRT_EINVAL, mkrt_schedule_fusion_pressure(two, 2, 10.0, 4, 0.5, NULL, E),
          "schedule_fusion_pressure(NULL out, 2)");
    CHECK(MKRT_EINVAL, mkrt_schedule_fusion_pressure(NULL, SIZE_MAX, 10.0, 4, 0.5, NULL, E),
          "schedule_fusion_pressure(NULL arrays, SIZE_MAX)");
    CHECK(MKRT_EINVAL, mkrt_schedule_fusion_pressure(two, 2, 10.0, 4, NAN, fp, E),
          "schedule_fusion_pressure(dt NaN)");
    CHECK(MKRT_EINVAL, mkrt_schedule_fusion_pressure(two, 2, -1.0, 4, 0.5, fp, E),
          "schedule_fusion_pressure(overhead -1)");
    CHECK(MKRT_EINVAL, mkrt_schedule_fusion_pressure(nan_cost, 1, 10.0, 4, 0.5, fp, E),
          "schedule_fusion_pressure(cost NaN)");
    is(mkrt_schedule_fusion_pressure(NULL, 0, 10.0, UINT32_MAX, 0.5, NULL, NULL), MKRT_OK,
       "schedule_fusion_pressure(no candidates, NULL arrays) is OK");
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
    /* Warm what allocates once per thread and is never freed on the main
     * thread (the launch memo), so it does not count against a case. */
    mkrt_launch_policy p = mkrt_launch_policy_standard();
    mkrt_launch_request r = mkrt_launch_request_direct(10, 4, 32);
    mkrt_launch_recommendation rec;
    mkrt_launch_recommend(&p, &r, &rec, NULL);

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
    status_and_alloc();
    ring_bad_input(&spsc_api);
    ring_bad_input(&mpmc_api);
    barrier_bad_input();
    layer_bad_input();
    frontier_bad_input();
    sizing_bad_input();
    policy_bad_input();
    priority_bad_input();
    topology_bad_input();
    plan_cache_bad_input();
    allocation_failures();
    return done_testing();
}
