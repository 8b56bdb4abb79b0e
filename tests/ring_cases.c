/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/ring_cases.c - ring behaviour shared by the SPSC and MPMC rings. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/thread.h"
#include "mkrt/alloc.h"
#include "ring_cases.h"
#include "tap.h"

static int my_tid(void)
{
    return (int)syscall(SYS_gettid);
}

/* The scheduler state of thread `tid` of this process ('R', 'S', ...), from
 * /proc/self/task/<tid>/stat; 0 when it cannot be read. */
static char thread_state(int tid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the name may hold spaces and ')' */
    return p != NULL && p[1] == ' ' ? p[2] : 0;
}

/* Polls (bounded: 20 s in 1 ms steps) until the waiter thread whose id is
 * published in *tid is asleep in the ring: registered on one of its wait
 * queues AND in the kernel's interruptible sleep. Between prepare and
 * finish the only place a waiter blocks is the futex wait, so both at once
 * mean it is asleep there. Where /proc cannot be read, the waiter count
 * alone is used (and said so). */
static bool waiter_asleep(const ring_ops *ops, void *ring, _Atomic int *tid)
{
    static int proc_checked, proc_ok;
    if (!proc_checked) {
        proc_checked = 1;
        proc_ok = thread_state(my_tid()) != 0;
        if (!proc_ok)
            diag("/proc/self/task unreadable: confirming sleep by the waiter count alone");
    }
    for (int i = 0; i < 20000; i++) {
        int t = atomic_load(tid);
        if (t != 0 && ops->sleepers(ring) > 0 && (!proc_ok || thread_state(t) == 'S'))
            return true;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return false;
}

static void bad_capacities(const ring_ops *ops)
{
    static const size_t bad[] = {0, 1, 3, 6, 1000, MKRT_RING_CAPACITY_MAX * 2};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mkrt_error err;
        mkrt_error_clear(&err);
        void *r = ops->create(bad[i], &err);
        ok(r == NULL && err.status == MKRT_EINVAL, "%s: capacity %zu is refused with MKRT_EINVAL",
           ops->name, bad[i]);
        ops->destroy(r);
    }
    mkrt_error err;
    void *r = ops->create(3, &err);
    ops->destroy(r);
    like(err.message, "capacity 3 is invalid", "%s: message names the capacity", ops->name);
    like(err.message, "Fix: use 4.", "%s: message suggests the next power of two", ops->name);
    r = ops->create(5, NULL);
    ok(r == NULL, "%s: a NULL err is allowed on failure", ops->name);
}

static void boundaries(const ring_ops *ops)
{
    void *r = ops->create(4, NULL);
    mkrt_item in[8], out[8];
    for (int i = 0; i < 8; i++)
        in[i] = ring_test_item(0, (uint64_t)i);
    is(ops->capacity(r), 4, "%s: capacity is reported", ops->name);
    is(ops->size(r), 0, "%s: new ring is empty", ops->name);
    is(ops->pop(r, out, 8), 0, "%s: pop on empty returns 0", ops->name);
    is(ops->push(r, in, 0), 0, "%s: push of 0 items returns 0", ops->name);
    is(ops->push(r, in, 4), 4, "%s: push fills the ring exactly", ops->name);
    is(ops->size(r), 4, "%s: size is the capacity when full", ops->name);
    is(ops->push(r, in + 4, 1), 0, "%s: push on full returns 0", ops->name);
    is(ops->pop(r, out, 2), 2, "%s: partial pop", ops->name);
    ok(memcmp(out, in, 2 * sizeof *in) == 0, "%s: popped the two oldest items", ops->name);
    is(ops->push(r, in + 4, 3), 2, "%s: partial burst accepts what fits", ops->name);
    is(ops->pop(r, out, 8), 4, "%s: pop takes at most what is there", ops->name);
    ok(memcmp(out, in + 2, 4 * sizeof *in) == 0, "%s: FIFO across the partial burst", ops->name);
    is(ops->size(r), 0, "%s: empty again", ops->name);
    ops->destroy(r);
}

/* Random bursts through a small ring whose indices start just below 2^64. */
static void wraparound(const ring_ops *ops)
{
    void *r = ops->create(8, NULL);
    ops->seed(r, UINT64_MAX - 20);
    uint64_t next_in = 0, next_out = 0;
    unsigned seed = 7;
    bool fifo = true, sizes = true;
    for (int round = 0; round < 2000; round++) {
        mkrt_item buf[11];
        size_t want = (size_t)(rand_r(&seed) % 11);
        for (size_t i = 0; i < want; i++)
            buf[i] = ring_test_item(1, next_in + i);
        size_t k = ops->push(r, buf, want);
        next_in += k;
        if (ops->size(r) != next_in - next_out)
            sizes = false;
        size_t m = ops->pop(r, buf, (size_t)(rand_r(&seed) % 11));
        for (size_t i = 0; i < m; i++)
            if (ring_test_seq(&buf[i]) != next_out++ || !ring_test_intact(&buf[i]))
                fifo = false;
    }
    ok(next_in > 2000, "%s: moved %llu items across the 2^64 index wrap", ops->name,
       (unsigned long long)next_in);
    ok(fifo, "%s: FIFO order and contents hold across the wrap", ops->name);
    ok(sizes, "%s: size stays exact across the wrap", ops->name);
    ops->destroy(r);
}

static void close_semantics(const ring_ops *ops)
{
    void *r = ops->create(8, NULL);
    mkrt_item in[3] = {ring_test_item(0, 1), ring_test_item(0, 2), ring_test_item(0, 3)};
    mkrt_item out[8];
    size_t done = 99;
    ops->push(r, in, 2);
    ok(!ops->is_closed(r), "%s: open before close", ops->name);
    ops->close(r);
    ok(ops->is_closed(r), "%s: closed after close", ops->name);
    is(ops->push(r, in + 2, 1), 0, "%s: push after close accepts nothing", ops->name);
    is(ops->push_wait(r, in + 2, 1, 1000000, &done), MKRT_ECLOSED,
       "%s: push_wait after close is MKRT_ECLOSED", ops->name);
    is(done, 0, "%s: ... and moved nothing", ops->name);
    is(ops->pop_wait(r, out, 8, MKRT_TIMEOUT_INFINITE, &done), MKRT_OK,
       "%s: items pushed before close still pop", ops->name);
    is(done, 2, "%s: ... all of them", ops->name);
    is(ops->pop_wait(r, out, 8, MKRT_TIMEOUT_INFINITE, &done), MKRT_ECLOSED,
       "%s: pop_wait on closed and empty is MKRT_ECLOSED, not a hang", ops->name);
    ops->destroy(r);
}

static void timeouts(const ring_ops *ops)
{
    void *r = ops->create(4, NULL);
    mkrt_item in[6], out[4];
    size_t done = 99;
    for (int i = 0; i < 6; i++)
        in[i] = ring_test_item(0, (uint64_t)i);
    is(ops->pop_wait(r, out, 4, 0, &done), MKRT_ETIMEDOUT, "%s: pop_wait(0) on empty times out",
       ops->name);
    memset(out, 0xA5, sizeof out);
    is(ops->pop_wait(r, out, 4, 30000000, &done), MKRT_ETIMEDOUT,
       "%s: pop_wait(30 ms) on empty times out", ops->name);
    is(done, 0, "%s: ... with nothing moved", ops->name);
    ok(ops->size(r) == 0 && out[0].op == 0xA5A5A5A5u,
       "%s: ... the ring really stayed empty and out was not written", ops->name);
    is(ops->push_wait(r, in, 6, 30000000, &done), MKRT_ETIMEDOUT,
       "%s: push_wait of 6 into 4 slots times out", ops->name);
    is(done, 4, "%s: ... having moved the 4 that fit", ops->name);
    is(ops->size(r), 4, "%s: ... the ring really stayed full (no room ever came)", ops->name);
    is(ops->pop(r, out, 4), 4, "%s: ... and holds exactly those 4", ops->name);
    ok(memcmp(out, in, 4 * sizeof *in) == 0, "%s: ... in order: the first 4 of the burst",
       ops->name);
    is(ops->push_wait(r, in, 0, 0, &done), MKRT_OK, "%s: push_wait of nothing is OK", ops->name);
    is(ops->pop_wait(r, out, 0, MKRT_TIMEOUT_INFINITE, &done), MKRT_OK,
       "%s: pop_wait with max 0 returns at once", ops->name);
    ops->destroy(r);
}

typedef struct waiter_arg {
    const ring_ops *ops;
    void *ring;
    uint64_t timeout_ns; /* 0: MKRT_TIMEOUT_INFINITE */
    _Atomic int tid;     /* the waiter's thread id, published before it waits */
    _Atomic int returned;
    mkrt_status status;
    size_t done;
    mkrt_item buf[8];
} waiter_arg;

static int pop_waiter(void *p)
{
    waiter_arg *a = p;
    atomic_store(&a->tid, my_tid());
    a->status = a->ops->pop_wait(a->ring, a->buf, 8,
                                 a->timeout_ns ? a->timeout_ns : MKRT_TIMEOUT_INFINITE, &a->done);
    atomic_store(&a->returned, 1);
    return 0;
}

static int push_waiter(void *p)
{
    waiter_arg *a = p;
    atomic_store(&a->tid, my_tid());
    a->status = a->ops->push_wait(a->ring, a->buf, 8,
                                  a->timeout_ns ? a->timeout_ns : MKRT_TIMEOUT_INFINITE, &a->done);
    atomic_store(&a->returned, 1);
    return 0;
}

static void wakeups(const ring_ops *ops)
{
    /* A popper asleep (confirmed, not assumed after a pause) is woken by a
     * push. */
    waiter_arg a = {.ops = ops, .ring = ops->create(8, NULL)};
    mkrt__thread t;
    mkrt__thread_start(&t, pop_waiter, &a);
    ok(waiter_asleep(ops, a.ring, &a.tid), "%s: the popper went to sleep in pop_wait on empty",
       ops->name);
    ok(!atomic_load(&a.returned), "%s: ... and is still waiting", ops->name);
    mkrt_item it = ring_test_item(3, 42);
    ops->push(a.ring, &it, 1);
    mkrt__thread_join(t);
    ok(a.status == MKRT_OK && a.done == 1 && ring_test_seq(&a.buf[0]) == 42,
       "%s: a push wakes a popper asleep in pop_wait", ops->name);
    is(ops->sleepers(a.ring), 0, "%s: ... which left the wait queue", ops->name);
    ops->destroy(a.ring);

    /* A timed wait sleeps until the condition comes, rather than giving up
     * early: 60 s is far beyond this test, the push ends it. */
    waiter_arg at = {.ops = ops, .ring = ops->create(8, NULL), .timeout_ns = 60000000000ull};
    mkrt__thread_start(&t, pop_waiter, &at);
    ok(waiter_asleep(ops, at.ring, &at.tid), "%s: a popper with a deadline went to sleep",
       ops->name);
    it = ring_test_item(3, 43);
    ops->push(at.ring, &it, 1);
    mkrt__thread_join(t);
    ok(at.status == MKRT_OK && at.done == 1 && ring_test_seq(&at.buf[0]) == 43,
       "%s: ... and a push wakes it with the item, not MKRT_ETIMEDOUT", ops->name);
    ops->destroy(at.ring);

    /* A sleeping pusher is woken by a pop. */
    waiter_arg b = {.ops = ops, .ring = ops->create(4, NULL)};
    for (int i = 0; i < 8; i++)
        b.buf[i] = ring_test_item(0, (uint64_t)i);
    mkrt__thread_start(&t, push_waiter, &b);
    ok(waiter_asleep(ops, b.ring, &b.tid), "%s: the pusher went to sleep on a full ring",
       ops->name);
    ok(!atomic_load(&b.returned) && ops->size(b.ring) == 4,
       "%s: ... having filled it, still waiting", ops->name);
    mkrt_item out[8];
    size_t got = 0;
    while (got < 8) {
        size_t d = 0;
        ops->pop_wait(b.ring, out + got, 8 - got, 2000000000u, &d);
        got += d;
        if (d == 0)
            break;
    }
    mkrt__thread_join(t);
    ok(b.status == MKRT_OK && b.done == 8 && got == 8, "%s: pops wake a pusher blocked on full",
       ops->name);
    bool order = true;
    for (int i = 0; i < 8; i++)
        order = order && ring_test_seq(&out[i]) == (uint64_t)i;
    ok(order, "%s: ... and the blocked burst arrives in order", ops->name);
    ops->destroy(b.ring);

    /* close wakes a sleeping popper with MKRT_ECLOSED. */
    waiter_arg c = {.ops = ops, .ring = ops->create(8, NULL)};
    mkrt__thread_start(&t, pop_waiter, &c);
    ok(waiter_asleep(ops, c.ring, &c.tid), "%s: a popper is asleep before the close", ops->name);
    ops->close(c.ring);
    mkrt__thread_join(t);
    is(c.status, MKRT_ECLOSED, "%s: close wakes a sleeping popper with MKRT_ECLOSED", ops->name);

    /* close wakes a sleeping pusher with MKRT_ECLOSED. */
    waiter_arg d = {.ops = ops, .ring = ops->create(2, NULL)};
    mkrt__thread_start(&t, push_waiter, &d);
    ok(waiter_asleep(ops, d.ring, &d.tid), "%s: a pusher is asleep before the close", ops->name);
    ops->close(d.ring);
    mkrt__thread_join(t);
    ok(d.status == MKRT_ECLOSED && d.done == 2,
       "%s: close wakes a blocked pusher with MKRT_ECLOSED (2 accepted before)", ops->name);
    ops->destroy(d.ring);
    ops->destroy(c.ring);
}

typedef struct flow_arg {
    const ring_ops *ops;
    void *ring;
    uint32_t id;
    uint64_t count;
    unsigned seed;
} flow_arg;

static int flow_producer(void *p)
{
    flow_arg *a = p;
    mkrt_item buf[32];
    uint64_t next = 0;
    while (next < a->count) {
        size_t n = 1 + (size_t)(rand_r(&a->seed) % 32);
        if (n > a->count - next)
            n = (size_t)(a->count - next);
        for (size_t i = 0; i < n; i++)
            buf[i] = ring_test_item(a->id, next + i);
        size_t done = 0;
        if (rand_r(&a->seed) & 1) {
            a->ops->push_wait(a->ring, buf, n, MKRT_TIMEOUT_INFINITE, &done);
        } else {
            done = a->ops->push(a->ring, buf, n);
        }
        next += done;
    }
    return 0;
}

/* Producers push `count` items each; one consumer checks FIFO per producer
 * (the ring promises it for a single consumer) and exactly-once. */
static void threaded_fifo(const ring_ops *ops, uint32_t producers)
{
    const uint64_t count = 100000;
    void *r = ops->create(64, NULL);
    flow_arg args[4];
    mkrt__thread th[4];
    for (uint32_t p = 0; p < producers; p++) {
        args[p] = (flow_arg){ops, r, p, count, 11u + p};
        mkrt__thread_start(&th[p], flow_producer, &args[p]);
    }
    uint64_t next[4] = {0};
    uint64_t total = 0;
    bool order = true, intact = true;
    unsigned seed = 3;
    mkrt_item buf[32];
    while (total < count * producers) {
        size_t done = 0;
        mkrt_status st = ops->pop_wait(r, buf, 1 + (size_t)(rand_r(&seed) % 32), 5000000000u, &done);
        if (st != MKRT_OK)
            break;
        for (size_t i = 0; i < done; i++) {
            uint32_t p = buf[i].op;
            if (p >= producers || ring_test_seq(&buf[i]) != next[p]++)
                order = false;
            if (!ring_test_intact(&buf[i]))
                intact = false;
        }
        total += done;
    }
    for (uint32_t p = 0; p < producers; p++)
        mkrt__thread_join(th[p]);
    is(total, count * producers, "%s: %u producer(s) -> 1 consumer moved every item", ops->name,
       producers);
    ok(order, "%s: ... each producer's items arrive in publish order, once", ops->name);
    ok(intact, "%s: ... and no item was torn", ops->name);
    is(ops->size(r), 0, "%s: ... leaving the ring empty", ops->name);
    ops->destroy(r);
}

static size_t fail_after; /* allocations allowed before failing */
static void *failing_alloc(size_t size, size_t align, void *ctx)
{
    (void)ctx;
    if (fail_after == 0)
        return NULL;
    fail_after--;
    return aligned_alloc(align, (size + align - 1) & ~(align - 1));
}
static void plain_free(void *p, size_t size, void *ctx)
{
    (void)size;
    (void)ctx;
    free(p);
}

static void allocation_failure(const ring_ops *ops)
{
    for (size_t allowed = 0; allowed < 2; allowed++) {
        mkrt_allocator a = {failing_alloc, plain_free, NULL};
        fail_after = allowed;
        mkrt_allocator_set(&a);
        mkrt_error err;
        void *r = ops->create(1024, &err);
        mkrt_allocator_set(NULL);
        ok(r == NULL && err.status == MKRT_ENOMEM,
           "%s: allocation failure %zu is MKRT_ENOMEM, not a crash", ops->name, allowed + 1);
        like(err.message, "Fix:", "%s: ... with a Fix message", ops->name);
    }
}

void run_ring_cases(const ring_ops *ops)
{
    bad_capacities(ops);
    boundaries(ops);
    wraparound(ops);
    close_semantics(ops);
    timeouts(ops);
    wakeups(ops);
    threaded_fifo(ops, 1);
    if (ops->multi)
        threaded_fifo(ops, 3);
    allocation_failure(ops);
}
