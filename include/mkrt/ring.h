/* SPDX-License-Identifier: BSD-2-Clause */
/* mkrt/ring.h - bounded lock-free rings of mkrt_item.
 *
 * Two rings share one shape: a power-of-two array of 16-byte items, burst
 * push and pop, a close flag, and blocking variants that sleep on a futex.
 *
 *   mkrt_spsc_ring  one producer thread and one consumer thread at a time.
 *                   Wait-free: push and pop finish in a bounded number of
 *                   steps whatever the other side does. Producer and
 *                   consumer indices live on separate cache lines and each
 *                   side caches the other's index, so a burst touches the
 *                   shared line at most once.
 *   mkrt_mpmc_ring  any number of producers and consumers. Per-slot sequence
 *                   numbers (Vyukov's bounded queue) with burst claims: one
 *                   compare-and-swap claims a contiguous run of free (push) or
 *                   full (pop) slots. Lock-free for the claim; as in every
 *                   slot-sequence design, a thread preempted between its claim
 *                   and its copy delays consumers of that slot (they see the
 *                   ring as empty up to it) but never blocks other producers.
 *
 * Which calls may overlap (X = may not run concurrently with each other):
 *
 *                       push  pop   push_wait pop_wait close size  destroy
 *   spsc push           X     -     X         -        -     -     X
 *   spsc pop            -     X     -         X        -     -     X
 *   mpmc (any)          -     -     -         -        -     -     X
 *
 * i.e. on an SPSC ring at most one thread pushes and at most one thread pops
 * at a time (the roles may pass from thread to thread with any
 * synchronisation between the old and the new holder). close and the
 * queries are safe from any thread. destroy must not overlap anything.
 *
 * Ordering: items are popped in the order they were pushed (FIFO). For
 * mpmc, each producer's items are popped in that producer's order by any
 * single consumer; with several consumers, "in order" holds for the claims.
 * A successful push happens-before the pop that returns the item.
 *
 * Results:
 *   push  returns how many items were accepted, 0..n, always a prefix of
 *         `items` (items[0..k-1]); 0 when the ring is full or closed.
 *   pop   returns how many items were taken, 0..max, the oldest first.
 *   *_wait return MKRT_OK when the request was met (push: all n accepted;
 *         pop: at least one item taken), MKRT_ETIMEDOUT when the deadline
 *         passed first, MKRT_ECLOSED when the ring is closed (push: some
 *         items may have been accepted before the close, see *done; pop:
 *         the ring is closed and empty). *done always holds the count moved
 *         (done may be NULL).
 *         timeout_ns 0 tries once; MKRT_TIMEOUT_INFINITE waits for ever. A
 *         waiting thread spins briefly, then sleeps on a futex: no busy-wait
 *         once asleep, and no lost wake-up (every push wakes sleeping
 *         poppers, every pop wakes sleeping pushers, close wakes everyone).
 *   bad input (a NULL ring, or a NULL items/out with a non-zero count)
 *         moves nothing: push and pop return 0, *_wait return MKRT_EINVAL
 *         with *done = 0; close and destroy ignore a NULL ring, is_closed,
 *         size and capacity report false / 0 for it.
 *
 * Close: after mkrt_*_ring_close returns, pushes accept nothing and
 * push_wait returns MKRT_ECLOSED. Items already in the ring stay there and
 * pop keeps returning them: the ring never drops an accepted item. A push
 * that overlaps close may or may not be accepted; if accepted, it is
 * poppable like any other.
 *
 * Capacity: a power of two, 2..MKRT_RING_CAPACITY_MAX. Anything else fails
 * with MKRT_EINVAL. Indices are 64-bit and wrap correctly.
 */
#ifndef MKRT_RING_H
#define MKRT_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/item.h"
#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Waits without a deadline. */
#define MKRT_TIMEOUT_INFINITE UINT64_MAX

/* Largest capacity: 2^30 items (16 GiB of items). The MPMC ring keeps
 * 32-bit slot sequence numbers, whose signed differences must stay within
 * +-capacity; 2^30 keeps them inside int32_t with room to spare. */
#define MKRT_RING_CAPACITY_MAX ((size_t)1 << 30)

typedef struct mkrt_spsc_ring mkrt_spsc_ring;
typedef struct mkrt_mpmc_ring mkrt_mpmc_ring;

/* Creates an empty ring. Returns NULL and fills err (MKRT_EINVAL for a bad
 * capacity, MKRT_ENOMEM when allocation fails). Pair with _destroy. */
mkrt_spsc_ring *mkrt_spsc_ring_create(size_t capacity, mkrt_error *err);
size_t mkrt_spsc_ring_push(mkrt_spsc_ring *r, const mkrt_item *items, size_t n);
size_t mkrt_spsc_ring_pop(mkrt_spsc_ring *r, mkrt_item *out, size_t max);
mkrt_status mkrt_spsc_ring_push_wait(mkrt_spsc_ring *r, const mkrt_item *items, size_t n,
                                     uint64_t timeout_ns, size_t *done);
mkrt_status mkrt_spsc_ring_pop_wait(mkrt_spsc_ring *r, mkrt_item *out, size_t max,
                                    uint64_t timeout_ns, size_t *done);
void mkrt_spsc_ring_close(mkrt_spsc_ring *r);
bool mkrt_spsc_ring_is_closed(const mkrt_spsc_ring *r);
/* Items in the ring. Exact when called by the producer or the consumer while
 * the other side is idle; a snapshot otherwise. */
size_t mkrt_spsc_ring_size(const mkrt_spsc_ring *r);
size_t mkrt_spsc_ring_capacity(const mkrt_spsc_ring *r);
/* Frees the ring and any items still in it. NULL is ignored. */
void mkrt_spsc_ring_destroy(mkrt_spsc_ring *r);

mkrt_mpmc_ring *mkrt_mpmc_ring_create(size_t capacity, mkrt_error *err);
size_t mkrt_mpmc_ring_push(mkrt_mpmc_ring *r, const mkrt_item *items, size_t n);
size_t mkrt_mpmc_ring_pop(mkrt_mpmc_ring *r, mkrt_item *out, size_t max);
mkrt_status mkrt_mpmc_ring_push_wait(mkrt_mpmc_ring *r, const mkrt_item *items, size_t n,
                                     uint64_t timeout_ns, size_t *done);
mkrt_status mkrt_mpmc_ring_pop_wait(mkrt_mpmc_ring *r, mkrt_item *out, size_t max,
                                    uint64_t timeout_ns, size_t *done);
void mkrt_mpmc_ring_close(mkrt_mpmc_ring *r);
bool mkrt_mpmc_ring_is_closed(const mkrt_mpmc_ring *r);
/* Items claimed by producers and not yet claimed by consumers (a snapshot). */
size_t mkrt_mpmc_ring_size(const mkrt_mpmc_ring *r);
size_t mkrt_mpmc_ring_capacity(const mkrt_mpmc_ring *r);
void mkrt_mpmc_ring_destroy(mkrt_mpmc_ring *r);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_RING_H */
