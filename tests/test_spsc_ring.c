/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_spsc_ring.c - mkrt_spsc_ring behaviour. */
#include <pthread.h>
#include <time.h>

#include "../src/queue/ring_internal.h"
#include "count_alloc.h"
#include "ring_cases.h"
#include "tap.h"

static void *create(size_t c, mkrt_error *e) { return mkrt_spsc_ring_create(c, e); }
static size_t push(void *r, const mkrt_item *i, size_t n) { return mkrt_spsc_ring_push(r, i, n); }
static size_t pop(void *r, mkrt_item *o, size_t m) { return mkrt_spsc_ring_pop(r, o, m); }
static mkrt_status push_wait(void *r, const mkrt_item *i, size_t n, uint64_t t, size_t *d)
{
    return mkrt_spsc_ring_push_wait(r, i, n, t, d);
}
static mkrt_status pop_wait(void *r, mkrt_item *o, size_t m, uint64_t t, size_t *d)
{
    return mkrt_spsc_ring_pop_wait(r, o, m, t, d);
}
static void close_(void *r) { mkrt_spsc_ring_close(r); }
static bool is_closed(const void *r) { return mkrt_spsc_ring_is_closed(r); }
static size_t size(const void *r) { return mkrt_spsc_ring_size(r); }
static size_t capacity(const void *r) { return mkrt_spsc_ring_capacity(r); }
static void destroy(void *r) { mkrt_spsc_ring_destroy(r); }
static void seed(void *r, uint64_t i) { mkrt__spsc_ring_seed_index(r, i); }
static uint32_t sleepers(const void *r) { return mkrt__spsc_ring_sleepers(r); }

/* The runtime's backpressure wait (queue/spsc_wait.h): a consumer pops
 * after a short delay. */
static void *pop_later(void *p)
{
    struct timespec d = {0, 20000000};
    nanosleep(&d, NULL);
    mkrt_item it;
    mkrt_spsc_ring_pop(p, &it, 1);
    return NULL;
}

static void wait_space_cases(void)
{
    mkrt_spsc_ring *r = mkrt_spsc_ring_create(4, NULL);
    mkrt_item it[4] = {{0}};
    mkrt_spsc_ring_push(r, it, 4);
    struct timespec ts;
    for (int spin = 0; spin < 2; spin++) {
        uint64_t spin_ns = spin ? 1000000u : 0;
        uint64_t t0 = mkrt__now_ns();
        is(mkrt__spsc_ring_wait_space(r, spin_ns, mkrt__deadline(30000000u, &ts)), MKRT_ETIMEDOUT,
           "wait_space (spin %llu ns) on a full ring times out", (unsigned long long)spin_ns);
        ok(mkrt__now_ns() - t0 >= 30000000u, "... at its deadline, not before");
    }
    for (int spin = 0; spin < 2; spin++) {
        pthread_t t;
        pthread_create(&t, NULL, pop_later, r);
        is(mkrt__spsc_ring_wait_space(r, spin ? 100000u : 0, mkrt__deadline(5000000000u, &ts)), MKRT_OK,
           "wait_space (spin %s) returns once the consumer pops", spin ? "100 us" : "0");
        pthread_join(t, NULL);
        is(mkrt_spsc_ring_push(r, it, 4), 1, "... with room for the one item popped");
    }
    mkrt_spsc_ring_close(r);
    is(mkrt__spsc_ring_wait_space(r, 1000000u, NULL), MKRT_ECLOSED, "wait_space on a closed ring says so");
    mkrt_spsc_ring_destroy(r);
}

int main(void)
{
    const ring_ops ops = {"spsc", false, create, push, pop, push_wait, pop_wait, close_,
                          is_closed, size, capacity, destroy, seed, sleepers};
    run_ring_cases(&ops);
    wait_space_cases();
    count_alloc_install();
    mkrt_spsc_ring_destroy(NULL);
    ok(count_alloc_frees() == 0 && count_alloc_calls() == 0,
       "spsc: destroy(NULL) is a no-op (frees nothing, allocates nothing)");
    count_alloc_uninstall();
    return done_testing();
}
