/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_bad_input.c - every public call outside runtime.h and dedupe.h
 * with bad input (status, alloc, rings, barriers, layers, frontiers,
 * here (sizing, policy and priority: libmkrt_planlib's
 * planlib/tests/test_planlib_bad_input.c); topology, the plan cache and the
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
#include "mkrt/ring.h"
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
    uint64_t bytes;

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

    mkrt_barrier_scratch_destroy(s);
}

int main(void)
{
    status_and_alloc();
    ring_bad_input(&spsc_api);
    ring_bad_input(&mpmc_api);
    barrier_bad_input();
    layer_bad_input();
    frontier_bad_input();
    return done_testing();
}
