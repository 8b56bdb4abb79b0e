/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_mpmc_ring.c - mkrt_mpmc_ring behaviour. */
#include "queue/ring_internal.h"
#include "count_alloc.h"
#include "ring_cases.h"
#include "tap.h"

static void *create(size_t c, mkrt_error *e) { return mkrt_mpmc_ring_create(c, e); }
static size_t push(void *r, const mkrt_item *i, size_t n) { return mkrt_mpmc_ring_push(r, i, n); }
static size_t pop(void *r, mkrt_item *o, size_t m) { return mkrt_mpmc_ring_pop(r, o, m); }
static mkrt_status push_wait(void *r, const mkrt_item *i, size_t n, uint64_t t, size_t *d)
{
    return mkrt_mpmc_ring_push_wait(r, i, n, t, d);
}
static mkrt_status pop_wait(void *r, mkrt_item *o, size_t m, uint64_t t, size_t *d)
{
    return mkrt_mpmc_ring_pop_wait(r, o, m, t, d);
}
static void close_(void *r) { mkrt_mpmc_ring_close(r); }
static bool is_closed(const void *r) { return mkrt_mpmc_ring_is_closed(r); }
static size_t size(const void *r) { return mkrt_mpmc_ring_size(r); }
static size_t capacity(const void *r) { return mkrt_mpmc_ring_capacity(r); }
static void destroy(void *r) { mkrt_mpmc_ring_destroy(r); }
static void seed(void *r, uint64_t i) { mkrt__mpmc_ring_seed_index(r, i); }
static uint32_t sleepers(const void *r) { return mkrt__mpmc_ring_sleepers(r); }

int main(void)
{
    const ring_ops ops = {"mpmc", true, create, push, pop, push_wait, pop_wait, close_,
                          is_closed, size, capacity, destroy, seed, sleepers};
    run_ring_cases(&ops);
    count_alloc_install();
    mkrt_mpmc_ring_destroy(NULL);
    ok(count_alloc_frees() == 0 && count_alloc_calls() == 0,
       "mpmc: destroy(NULL) is a no-op (frees nothing, allocates nothing)");
    count_alloc_uninstall();
    return done_testing();
}
