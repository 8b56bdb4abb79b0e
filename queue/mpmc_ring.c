/* SPDX-License-Identifier: BSD-2-Clause */
/* queue/mpmc_ring.c - bounded multi-producer multi-consumer ring.
 *
 * Vyukov's bounded queue with burst claims. Every slot has a sequence number
 * that says which position it is ready for (32 bits, compared as a signed
 * difference against the low bits of the 64-bit position):
 *   seq == pos          free, ready for the producer of position pos
 *   seq == pos + 1      full, ready for the consumer of position pos
 * A producer reads enq_pos, counts how many consecutive slots from there are
 * free (up to its burst), claims that run with one CAS on enq_pos, writes
 * the items and marks each slot full (seq = pos + 1). A consumer does the
 * mirror image on deq_pos and marks each slot free for the next lap
 * (seq = pos + capacity). Producers and consumers touch only their own
 * cursor line, the sequence array and the items, never each other's cursor.
 *
 * The sequence numbers live in their own array (16 per cache line), apart
 * from the items: a consumer then dirties 4 sequence lines per 64 items
 * instead of every item line, which halves the lines that travel back to
 * the producers.
 */
#include <stdalign.h>
#include <string.h>

#include "queue/ring_internal.h"
#include "base/alloc_internal.h"
#include "base/error_internal.h"

struct mkrt_mpmc_ring {
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t enq_pos; /* producers' claim cursor */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t deq_pos; /* consumers' claim cursor */
    alignas(MKRT_CACHE_LINE) mkrt__waitq data_wq;      /* poppers waiting for items */
    alignas(MKRT_CACHE_LINE) mkrt__waitq space_wq;     /* pushers waiting for space */
    alignas(MKRT_CACHE_LINE) _Atomic bool closed;
    uint64_t mask;
    size_t capacity;
    _Atomic uint32_t *seq;
    mkrt_item *items;
};

static void init_seq(mkrt_mpmc_ring *r, uint64_t start)
{
    for (uint64_t p = start; p < start + r->capacity; p++) {
        /* relaxed: before publication (create/seed run before any sharing). */
        atomic_store_explicit(&r->seq[p & r->mask], (uint32_t)p, memory_order_relaxed);
    }
}

mkrt_mpmc_ring *mkrt_mpmc_ring_create(size_t capacity, mkrt_error *err)
{
    if (mkrt__ring_check_capacity("mkrt_mpmc_ring", capacity, err) != MKRT_OK)
        return NULL;
    mkrt_mpmc_ring *r = mkrt__alloc_zeroed(sizeof *r, alignof(mkrt_mpmc_ring));
    _Atomic uint32_t *seq = mkrt__alloc(capacity * sizeof *seq, MKRT_CACHE_LINE);
    mkrt_item *items = mkrt__alloc(capacity * sizeof *items, MKRT_CACHE_LINE);
    if (r == NULL || seq == NULL || items == NULL) {
        mkrt__free(r, sizeof *r);
        mkrt__free(seq, capacity * sizeof *seq);
        mkrt__free(items, capacity * sizeof *items);
        mkrt__error_set(err, MKRT_ENOMEM,
                        "mkrt_mpmc_ring allocation failed for %zu items (%zu bytes). "
                        "Fix: use a smaller capacity or free memory.",
                        capacity, capacity * (sizeof *seq + sizeof *items) + sizeof *r);
        return NULL;
    }
    r->seq = seq;
    r->items = items;
    r->capacity = capacity;
    r->mask = capacity - 1;
    init_seq(r, 0);
    mkrt__waitq_init(&r->data_wq);
    /* Notified per pop, slept on whenever consumers fall behind: the
     * symmetric protocol (base/waitq.h), as the SPSC ring's. */
    mkrt__waitq_init_symmetric(&r->space_wq);
    return r;
}

void mkrt_mpmc_ring_destroy(mkrt_mpmc_ring *r)
{
    if (r == NULL)
        return;
    mkrt__free(r->seq, r->capacity * sizeof *r->seq);
    mkrt__free(r->items, r->capacity * sizeof *r->items);
    mkrt__free(r, sizeof *r);
}

/* How many slots from position pos on are in state `pos + i + offset`
 * (offset 0: free for producers, 1: full for consumers), at most n.
 * When none is, *ahead says whether the first slot is past that state
 * (another thread already claimed pos: reload the cursor) rather than
 * behind it (ring full for producers / empty for consumers). */
static size_t ready_run(const mkrt_mpmc_ring *r, uint64_t pos, size_t n, uint32_t offset,
                        bool *ahead)
{
    size_t k = 0;
    *ahead = false;
    while (k < n) {
        /* acquire: pairs with the release seq stores in push (offset 1)
         * and pop (offset 0), so the slot's last owner is done with it. */
        uint32_t seq = atomic_load_explicit(&r->seq[(pos + k) & r->mask], memory_order_acquire);
        int32_t diff = (int32_t)(seq - ((uint32_t)(pos + k) + offset));
        if (diff != 0) {
            if (k == 0)
                *ahead = diff > 0;
            break;
        }
        k++;
    }
    return k;
}

/* Claims up to n positions on `cursor`. Returns the count (0 when none are
 * ready) and the first claimed position in *first. */
static size_t claim(mkrt_mpmc_ring *r, _Atomic uint64_t *cursor, size_t n, uint32_t offset,
                    uint64_t *first)
{
    /* relaxed: the cursor only arbitrates between threads of one side;
     * slot contents are ordered by the acquire loads of seq in ready_run. */
    uint64_t pos = atomic_load_explicit(cursor, memory_order_relaxed);
    for (;;) {
        bool ahead;
        size_t k = ready_run(r, pos, n, offset, &ahead);
        if (k == 0) {
            if (!ahead)
                return 0;
            /* relaxed: as above. */
            pos = atomic_load_explicit(cursor, memory_order_relaxed);
            continue;
        }
        /* relaxed on success and failure: the CAS only decides who owns
         * positions pos..pos+k-1; their slots were checked ready above and
         * cannot change state until their new owner writes them. */
        if (atomic_compare_exchange_weak_explicit(cursor, &pos, pos + k, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            *first = pos;
            return k;
        }
    }
}

size_t mkrt_mpmc_ring_push(mkrt_mpmc_ring *r, const mkrt_item *items, size_t n)
{
    if (r == NULL || items == NULL)
        return 0; /* bad input: nothing accepted (ring.h) */
    /* relaxed: the flag carries no data (see ring.h on overlapping close). */
    if (n == 0 || atomic_load_explicit(&r->closed, memory_order_relaxed))
        return 0;
    uint64_t pos;
    size_t k = claim(r, &r->enq_pos, n, 0, &pos);
    for (size_t i = 0; i < k; i++)
        r->items[(pos + i) & r->mask] = items[i];
    for (size_t i = 0; i < k; i++) {
        /* release: pairs with the acquire seq load in ready_run (consumer
         * side); publishes the items written above. */
        atomic_store_explicit(&r->seq[(pos + i) & r->mask], (uint32_t)(pos + i + 1),
                              memory_order_release);
    }
    if (k > 0)
        mkrt__waitq_notify(&r->data_wq);
    return k;
}

size_t mkrt_mpmc_ring_pop(mkrt_mpmc_ring *r, mkrt_item *out, size_t max)
{
    if (r == NULL || out == NULL || max == 0)
        return 0;
    uint64_t pos;
    size_t k = claim(r, &r->deq_pos, max, 1, &pos);
    for (size_t i = 0; i < k; i++)
        out[i] = r->items[(pos + i) & r->mask];
    for (size_t i = 0; i < k; i++) {
        /* release: pairs with the acquire seq load in ready_run (producer
         * side); the item reads above complete before the slot is reused. */
        atomic_store_explicit(&r->seq[(pos + i) & r->mask], (uint32_t)(pos + i + r->capacity),
                              memory_order_release);
    }
    if (k > 0)
        mkrt__waitq_notify(&r->space_wq);
    return k;
}

static size_t push_move(void *ring, mkrt_item *buf, size_t n)
{
    return mkrt_mpmc_ring_push(ring, buf, n);
}

static size_t pop_move(void *ring, mkrt_item *buf, size_t n)
{
    return mkrt_mpmc_ring_pop(ring, buf, n);
}

mkrt_status mkrt_mpmc_ring_push_wait(mkrt_mpmc_ring *r, const mkrt_item *items, size_t n,
                                     uint64_t timeout_ns, size_t *done)
{
    size_t dummy;
    if (r == NULL || (items == NULL && n > 0))
        return mkrt__ring_bad_wait(done);
    /* The cast is safe: push_move only reads the buffer. */
    return mkrt__ring_wait(r, push_move, &r->space_wq, &r->closed, true, (mkrt_item *)items, n,
                           timeout_ns, done ? done : &dummy);
}

mkrt_status mkrt_mpmc_ring_pop_wait(mkrt_mpmc_ring *r, mkrt_item *out, size_t max,
                                    uint64_t timeout_ns, size_t *done)
{
    size_t dummy;
    if (r == NULL || (out == NULL && max > 0))
        return mkrt__ring_bad_wait(done);
    return mkrt__ring_wait(r, pop_move, &r->data_wq, &r->closed, false, out, max, timeout_ns,
                           done ? done : &dummy);
}

void mkrt_mpmc_ring_close(mkrt_mpmc_ring *r)
{
    if (r == NULL)
        return;
    /* release: pairs with the acquire load in mkrt__ring_wait's close check. */
    atomic_store_explicit(&r->closed, true, memory_order_release);
    mkrt__waitq_notify(&r->data_wq);
    mkrt__waitq_notify(&r->space_wq);
}

bool mkrt_mpmc_ring_is_closed(const mkrt_mpmc_ring *r)
{
    if (r == NULL)
        return false;
    /* acquire: pairs with the release store in close. */
    return atomic_load_explicit(&r->closed, memory_order_acquire);
}

size_t mkrt_mpmc_ring_size(const mkrt_mpmc_ring *r)
{
    if (r == NULL)
        return 0;
    /* relaxed: a snapshot of two monotonic cursors; a negative difference
     * (the loads are unordered) reads as 0. */
    uint64_t deq = atomic_load_explicit(&r->deq_pos, memory_order_relaxed);
    uint64_t enq = atomic_load_explicit(&r->enq_pos, memory_order_relaxed);
    int64_t n = (int64_t)(enq - deq);
    return n < 0 ? 0 : ((size_t)n > r->capacity ? r->capacity : (size_t)n);
}

size_t mkrt_mpmc_ring_capacity(const mkrt_mpmc_ring *r)
{
    return r == NULL ? 0 : r->capacity;
}

#ifdef MKRT_TEST_HOOKS
void mkrt__mpmc_ring_seed_index(mkrt_mpmc_ring *r, uint64_t index)
{
    /* relaxed: test-only, on an empty ring before any sharing. */
    atomic_store_explicit(&r->enq_pos, index, memory_order_relaxed);
    atomic_store_explicit(&r->deq_pos, index, memory_order_relaxed);
    init_seq(r, index);
}

uint32_t mkrt__mpmc_ring_sleepers(const mkrt_mpmc_ring *r)
{
    /* relaxed: a test-only snapshot; the tests poll it together with the
     * thread's scheduler state and order nothing by it. */
    return atomic_load_explicit(&r->data_wq.waiters, memory_order_relaxed) +
           atomic_load_explicit(&r->space_wq.waiters, memory_order_relaxed);
}
#endif
