/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_spsc_ring.c - mkrt_spsc_ring behaviour. */
#include <time.h>

#include "queue/ring_internal.h"
#include "base/thread.h"
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
static int pop_later(void *p)
{
    struct timespec d = {0, 20000000};
    nanosleep(&d, NULL);
    mkrt_item it;
    mkrt_spsc_ring_pop(p, &it, 1);
    return 0;
}

static void wait_space_cases(void)
{
    mkrt_spsc_ring *r = mkrt_spsc_ring_create(4, NULL);
    mkrt_item it[4] = {{0}};
    mkrt_spsc_ring_push(r, it, 4);
    struct timespec ts;
    mkrt__spin_budget b;
    for (int spin = 0; spin < 2; spin++) {
        uint64_t cap = spin ? 1000000u : 0;
        mkrt__spin_budget_init(&b);
        uint64_t t0 = mkrt__now_ns();
        is(mkrt__spsc_ring_wait_space(r, &b, cap, mkrt__deadline(30000000u, &ts)), MKRT_ETIMEDOUT,
           "wait_space (spin up to %llu ns) on a full ring times out", (unsigned long long)cap);
        ok(mkrt__now_ns() - t0 >= 30000000u, "... at its deadline, not before");
    }
    for (int spin = 0; spin < 2; spin++) {
        mkrt__thread t;
        mkrt__spin_budget_init(&b);
        mkrt__thread_start(&t, pop_later, r);
        is(mkrt__spsc_ring_wait_space(r, &b, spin ? 100000u : 0, mkrt__deadline(5000000000u, &ts)), MKRT_OK,
           "wait_space (spin %s) returns once the consumer pops", spin ? "up to 100 us" : "0");
        mkrt__thread_join(t);
        is(mkrt_spsc_ring_push(r, it, 4), 1, "... with room for the one item popped");
    }
    mkrt_spsc_ring_close(r);
    is(mkrt__spsc_ring_wait_space(r, &b, 1000000u, NULL), MKRT_ECLOSED, "wait_space on a closed ring says so");
    mkrt_spsc_ring_destroy(r);
}

/* A producer asleep on a full ring is woken once half the ring is free,
 * not by the first pop (a wake-up per burst cost more than it let in). */
typedef struct room_waiter {
    mkrt_spsc_ring *r;
    mkrt_status st;
    _Atomic int returned;
} room_waiter;

static int wait_room(void *p)
{
    room_waiter *w = p;
    mkrt__spin_budget b;
    mkrt__spin_budget_init(&b);
    struct timespec ts;
    w->st = mkrt__spsc_ring_wait_space(w->r, &b, 0, mkrt__deadline(5000000000u, &ts));
    atomic_store(&w->returned, 1);
    return 0;
}

static int push_one(void *p)
{
    mkrt_item it = {0};
    return mkrt_spsc_ring_push_wait(p, &it, 1, 5000000000u, NULL) == MKRT_OK;
}

static void half_room_case(void)
{
    room_waiter w = {mkrt_spsc_ring_create(8, NULL), MKRT_OK, 0};
    mkrt_item it[8] = {{0}};
    mkrt_spsc_ring_push(w.r, it, 8);
    mkrt__thread t;
    mkrt__thread_start(&t, wait_room, &w);
    struct timespec d = {0, 1000000};
    for (int i = 0; i < 2000 && mkrt__spsc_ring_sleepers(w.r) == 0; i++)
        nanosleep(&d, NULL); /* until the producer sleeps */
    mkrt_spsc_ring_pop(w.r, it, 3);
    d.tv_nsec = 30000000;
    nanosleep(&d, NULL);
    ok(atomic_load(&w.returned) == 0 && mkrt__spsc_ring_sleepers(w.r) == 1,
       "a sleeping producer is not woken while less than half the ring is free (3 of 8)");
    mkrt_spsc_ring_pop(w.r, it, 1);
    mkrt__thread_join(t);
    ok(atomic_load(&w.returned) == 1 && w.st == MKRT_OK, "... and is woken once half is (4 of 8)");
    /* The public push_wait of one item is woken by the pop of one. */
    mkrt_spsc_ring_push(w.r, it, 4);
    mkrt__thread_start(&t, push_one, w.r);
    d.tv_nsec = 1000000;
    for (int i = 0; i < 2000 && mkrt__spsc_ring_sleepers(w.r) == 0; i++)
        nanosleep(&d, NULL);
    mkrt_spsc_ring_pop(w.r, it, 1);
    int res = 0;
    mkrt__thread_join_result(t, &res);
    ok(res == 1, "the public push_wait is not held to that threshold: one pop lets one item in");
    mkrt_spsc_ring_destroy(w.r);
}

/* The adaptive spin budget (base/spin_wait.h). */
static int never(void *p)
{
    (void)p;
    return 0;
}
static int at_once(void *p)
{
    (void)p;
    return 1;
}

static void spin_budget_cases(void)
{
    mkrt__spin_budget b;
    mkrt__spin_budget_init(&b);
    is(b.ns, MKRT__SPIN_BUDGET_NS, "a spin budget starts whole");
    unsigned failures = 0;
    while (b.ns != 0 && failures < 64) {
        mkrt__spin_adaptive(&b, never, NULL, UINT64_MAX);
        failures++;
    }
    ok(b.ns == 0 && failures <= 7, "spins that run out halve it to 0 (after %u)", failures);
    uint64_t t0 = mkrt__now_ns();
    for (unsigned i = 1; i < MKRT__SPIN_PROBE_EVERY; i++)
        mkrt__spin_adaptive(&b, never, NULL, UINT64_MAX);
    ok(mkrt__now_ns() - t0 < MKRT__SPIN_BUDGET_NS, "at 0 the waits do not spin (%u took %llu ns)",
       MKRT__SPIN_PROBE_EVERY - 1, (unsigned long long)(mkrt__now_ns() - t0));
    t0 = mkrt__now_ns();
    mkrt__spin_adaptive(&b, never, NULL, UINT64_MAX);
    ok(mkrt__now_ns() - t0 >= MKRT__SPIN_BUDGET_NS && b.ns == 0,
       "every %u-th wait probes with the whole budget, and a failed probe leaves it at 0",
       MKRT__SPIN_PROBE_EVERY);
    for (unsigned i = 1; i < MKRT__SPIN_PROBE_EVERY; i++)
        mkrt__spin_adaptive(&b, never, NULL, UINT64_MAX);
    is(mkrt__spin_adaptive(&b, at_once, NULL, UINT64_MAX), 1, "a probe whose wait ends ...");
    is(b.ns, MKRT__SPIN_BUDGET_NS, "... gives the whole budget back");
    b.ns = MKRT__SPIN_FLOOR_NS * 4;
    mkrt__spin_adaptive(&b, at_once, NULL, UINT64_MAX);
    is(b.ns, MKRT__SPIN_FLOOR_NS * 8, "a wait that ends within the budget doubles it");
    mkrt__spin_adaptive(&b, never, NULL, 1000);
    is(b.ns, MKRT__SPIN_FLOOR_NS * 8, "a spin cut short by a timeout cap is no evidence: unchanged");
}

int main(void)
{
    const ring_ops ops = {"spsc", false, create, push, pop, push_wait, pop_wait, close_,
                          is_closed, size, capacity, destroy, seed, sleepers};
    run_ring_cases(&ops);
    wait_space_cases();
    half_room_case();
    spin_budget_cases();
    count_alloc_install();
    mkrt_spsc_ring_destroy(NULL);
    ok(count_alloc_frees() == 0 && count_alloc_calls() == 0,
       "spsc: destroy(NULL) is a no-op (frees nothing, allocates nothing)");
    count_alloc_uninstall();
    return done_testing();
}
