/* SPDX-License-Identifier: BSD-2-Clause */
/* queue/spsc_ring.c - wait-free single-producer single-consumer ring.
 *
 * head: next index the producer writes; only the producer stores it.
 * tail: next index the consumer reads; only the consumer stores it.
 * Indices run freely over uint64_t; slot = index & mask. head - tail is the
 * number of items and never exceeds capacity.
 *
 * Each side keeps a private copy of the other's index (cached_tail,
 * cached_head) and reloads the shared one only when the copy says the ring
 * is full (producer) or empty (consumer), so in steady state a burst reads
 * no line the other side writes.
 */
#include <stdalign.h>
#include <string.h>

#include "queue/ring_internal.h"
#include "base/alloc_internal.h"
#include "base/error_internal.h"
#include "base/spin_wait.h"

struct mkrt_spsc_ring {
    /* Producer line: written by the producer only. */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t head;
    uint64_t cached_tail; /* producer-private */

    /* Consumer line: written by the consumer only. */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t tail;
    uint64_t cached_head; /* consumer-private */

    /* Sleepers waiting for items; notified by the producer after a push. */
    alignas(MKRT_CACHE_LINE) mkrt__waitq data_wq;
    /* Sleepers waiting for space; notified by the consumer after a pop
     * that leaves at least room_want slots free (the producer's threshold,
     * stored before it prepares to sleep; 1 outside the runtime's wait). */
    alignas(MKRT_CACHE_LINE) mkrt__waitq space_wq;
    _Atomic uint64_t room_want;

    /* Read-mostly line. */
    alignas(MKRT_CACHE_LINE) _Atomic bool closed;
    uint64_t mask;
    size_t capacity;
    mkrt_item *slots;
};

mkrt_spsc_ring *mkrt_spsc_ring_create(size_t capacity, mkrt_error *err)
{
    if (mkrt__ring_check_capacity("mkrt_spsc_ring", capacity, err) != MKRT_OK)
        return NULL;
    mkrt_spsc_ring *r = mkrt__alloc_zeroed(sizeof *r, alignof(mkrt_spsc_ring));
    mkrt_item *slots = mkrt__alloc(capacity * sizeof(mkrt_item), MKRT_CACHE_LINE);
    if (r == NULL || slots == NULL) {
        mkrt__free(r, sizeof *r);
        mkrt__free(slots, capacity * sizeof(mkrt_item));
        mkrt__error_set(err, MKRT_ENOMEM,
                        "mkrt_spsc_ring allocation failed for %zu items (%zu bytes). "
                        "Fix: use a smaller capacity or free memory.",
                        capacity, capacity * sizeof(mkrt_item) + sizeof *r);
        return NULL;
    }
    r->slots = slots;
    r->capacity = capacity;
    r->mask = capacity - 1;
    mkrt__waitq_init(&r->data_wq);
    /* Notified per pop (a burst), slept on whenever the consumer falls
     * behind: a membarrier per sleep would interrupt the consumer each time. */
    mkrt__waitq_init_symmetric(&r->space_wq);
    atomic_init(&r->room_want, 1);
    return r;
}

void mkrt_spsc_ring_destroy(mkrt_spsc_ring *r)
{
    if (r == NULL)
        return;
    mkrt__free(r->slots, r->capacity * sizeof(mkrt_item));
    mkrt__free(r, sizeof *r);
}

/* Copies n items into the slots starting at index `at`, across the wrap. */
static void copy_in(mkrt_spsc_ring *r, uint64_t at, const mkrt_item *items, size_t n)
{
    size_t first = (size_t)(at & r->mask);
    size_t run = r->capacity - first;
    if (run >= n) {
        memcpy(r->slots + first, items, n * sizeof *items);
    } else {
        memcpy(r->slots + first, items, run * sizeof *items);
        memcpy(r->slots, items + run, (n - run) * sizeof *items);
    }
}

static void copy_out(const mkrt_spsc_ring *r, uint64_t at, mkrt_item *out, size_t n)
{
    size_t first = (size_t)(at & r->mask);
    size_t run = r->capacity - first;
    if (run >= n) {
        memcpy(out, r->slots + first, n * sizeof *out);
    } else {
        memcpy(out, r->slots + first, run * sizeof *out);
        memcpy(out + run, r->slots, (n - run) * sizeof *out);
    }
}

size_t mkrt_spsc_ring_push(mkrt_spsc_ring *r, const mkrt_item *items, size_t n)
{
    if (r == NULL || items == NULL)
        return 0; /* bad input: nothing accepted (ring.h) */
    /* relaxed: the flag carries no data; a push that overlaps close may go
     * either way (ring.h). */
    if (n == 0 || atomic_load_explicit(&r->closed, memory_order_relaxed))
        return 0;
    /* relaxed: only this thread (the producer) stores head. */
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    size_t free_slots = r->capacity - (size_t)(head - r->cached_tail);
    if (free_slots < n) {
        /* acquire: pairs with the release store of tail in pop, so the
         * consumer's reads of the slots we are about to reuse are done. */
        r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
        free_slots = r->capacity - (size_t)(head - r->cached_tail);
        if (free_slots == 0)
            return 0;
    }
    size_t k = n < free_slots ? n : free_slots;
    copy_in(r, head, items, k);
    /* release: pairs with the acquire load of head in pop; publishes the
     * slot contents written above. */
    atomic_store_explicit(&r->head, head + k, memory_order_release);
    mkrt__waitq_notify(&r->data_wq);
    return k;
}

/* The consumer (after a pop): whether the free slots reach the sleeping
 * producer's threshold. relaxed (all): read after mkrt__waitq_notify_if's
 * barrier (room_want), or this thread's own index (tail); a stale head is
 * older, so it can only overstate the room (an early wake-up, never a
 * missed one). */
static bool room_worth_waking(const void *p)
{
    const mkrt_spsc_ring *r = p;
    uint64_t used = atomic_load_explicit(&r->head, memory_order_relaxed) -
                    atomic_load_explicit(&r->tail, memory_order_relaxed);
    return r->capacity - used >= atomic_load_explicit(&r->room_want, memory_order_relaxed);
}

size_t mkrt_spsc_ring_pop(mkrt_spsc_ring *r, mkrt_item *out, size_t max)
{
    if (r == NULL || out == NULL || max == 0)
        return 0;
    /* relaxed: only this thread (the consumer) stores tail. */
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    size_t avail = (size_t)(r->cached_head - tail);
    if (avail < max) {
        /* acquire: pairs with the release store of head in push. */
        r->cached_head = atomic_load_explicit(&r->head, memory_order_acquire);
        avail = (size_t)(r->cached_head - tail);
        if (avail == 0)
            return 0;
    }
    size_t k = max < avail ? max : avail;
    copy_out(r, tail, out, k);
    /* release: pairs with the acquire load of tail in push; the slot reads
     * above complete before the producer may overwrite them. */
    atomic_store_explicit(&r->tail, tail + k, memory_order_release);
    mkrt__waitq_notify_if(&r->space_wq, room_worth_waking, r);
    return k;
}

static size_t push_move(void *ring, mkrt_item *buf, size_t n)
{
    return mkrt_spsc_ring_push(ring, buf, n);
}

static size_t pop_move(void *ring, mkrt_item *buf, size_t n)
{
    return mkrt_spsc_ring_pop(ring, buf, n);
}

mkrt_status mkrt_spsc_ring_push_wait(mkrt_spsc_ring *r, const mkrt_item *items, size_t n,
                                     uint64_t timeout_ns, size_t *done)
{
    size_t dummy;
    if (r == NULL || (items == NULL && n > 0))
        return mkrt__ring_bad_wait(done);
    /* The cast is safe: push_move only reads the buffer. */
    return mkrt__ring_wait(r, push_move, &r->space_wq, &r->closed, true, (mkrt_item *)items, n,
                           timeout_ns, done ? done : &dummy);
}

mkrt_status mkrt_spsc_ring_pop_wait(mkrt_spsc_ring *r, mkrt_item *out, size_t max,
                                    uint64_t timeout_ns, size_t *done)
{
    size_t dummy;
    if (r == NULL || (out == NULL && max > 0))
        return mkrt__ring_bad_wait(done);
    return mkrt__ring_wait(r, pop_move, &r->data_wq, &r->closed, false, out, max, timeout_ns,
                           done ? done : &dummy);
}

void mkrt_spsc_ring_close(mkrt_spsc_ring *r)
{
    if (r == NULL)
        return;
    /* release: pairs with the acquire load in mkrt__ring_wait's close check,
     * so a waiter that sees closed also sees items pushed before it. */
    atomic_store_explicit(&r->closed, true, memory_order_release);
    mkrt__waitq_notify(&r->data_wq);
    mkrt__waitq_notify(&r->space_wq);
}

bool mkrt_spsc_ring_is_closed(const mkrt_spsc_ring *r)
{
    if (r == NULL)
        return false;
    /* acquire: pairs with the release store in close. */
    return atomic_load_explicit(&r->closed, memory_order_acquire);
}

size_t mkrt_spsc_ring_size(const mkrt_spsc_ring *r)
{
    if (r == NULL)
        return 0;
    /* acquire on both: a consistent-enough snapshot; tail first so that
     * head - tail cannot go negative (head only grows past tail). */
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    size_t n = (size_t)(head - tail);
    return n > r->capacity ? r->capacity : n;
}

size_t mkrt_spsc_ring_capacity(const mkrt_spsc_ring *r)
{
    return r == NULL ? 0 : r->capacity;
}

#ifdef MKRT_TEST_HOOKS
void mkrt__spsc_ring_seed_index(mkrt_spsc_ring *r, uint64_t index)
{
    /* relaxed: test-only, called on an empty ring before any other thread
     * uses it (thread creation orders it). */
    atomic_store_explicit(&r->head, index, memory_order_relaxed);
    atomic_store_explicit(&r->tail, index, memory_order_relaxed);
    r->cached_head = index;
    r->cached_tail = index;
}
#endif

static bool has_space(mkrt_spsc_ring *r)
{
    /* relaxed: the producer's own index; acquire: pairs with pop's release
     * of tail, as in push. */
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    return head - atomic_load_explicit(&r->tail, memory_order_acquire) < r->capacity;
}

static int space_or_closed(void *p)
{
    mkrt_spsc_ring *r = p;
    return mkrt_spsc_ring_is_closed(r) ? 2 : has_space(r) ? 1 : 0;
}

/* room_want free slots, or closed (acquire on tail as in has_space;
 * relaxed on room_want: this thread's own store). */
static int room_or_closed(void *p)
{
    mkrt_spsc_ring *r = p;
    if (mkrt_spsc_ring_is_closed(r))
        return 2;
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t used = head - atomic_load_explicit(&r->tail, memory_order_acquire);
    return r->capacity - used >= atomic_load_explicit(&r->room_want, memory_order_relaxed);
}

mkrt_status mkrt__spsc_ring_wait_space(mkrt_spsc_ring *r, mkrt__spin_budget *budget, uint64_t cap_ns,
                                       const struct timespec *deadline)
{
    int got = mkrt__spin_adaptive(budget, space_or_closed, r, cap_ns);
    if (got == 0) {
        /* Asleep, the producer waits for half the ring, not one slot: the
         * consumer pops in bursts, and a wake-up per burst cost more than
         * the items it let in. relaxed: published by the waitq's barrier
         * in prepare (mkrt__waitq_notify_if reads it after its own). */
        atomic_store_explicit(&r->room_want, r->capacity / 2, memory_order_relaxed);
        got = mkrt__spin_then_sleep(&r->space_wq, room_or_closed, r, deadline);
        atomic_store_explicit(&r->room_want, 1, memory_order_relaxed);
        if (got == 0 && has_space(r)) /* the deadline passed with some room */
            got = 1;
    }
    return got == 2 ? MKRT_ECLOSED : got == 1 ? MKRT_OK : MKRT_ETIMEDOUT;
}

#ifdef MKRT_TEST_HOOKS
uint32_t mkrt__spsc_ring_sleepers(const mkrt_spsc_ring *r)
{
    /* relaxed: a test-only snapshot; the tests poll it together with the
     * thread's scheduler state and order nothing by it. */
    return atomic_load_explicit(&r->data_wq.waiters, memory_order_relaxed) +
           atomic_load_explicit(&r->space_wq.waiters, memory_order_relaxed);
}
#endif
