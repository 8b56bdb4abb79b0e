/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/ring.h
 * @brief Bounded lock-free rings of ::mkrt_item.
 *
 * Two rings share one shape: a power-of-two array of 16-byte items, burst
 * push and pop, a close flag, and blocking variants that sleep on a futex.
 *
 * - ::mkrt_spsc_ring: one producer thread and one consumer thread at a
 *   time. Wait-free: push and pop finish in a bounded number of steps
 *   whatever the other side does. Producer and consumer indices live on
 *   separate cache lines and each side caches the other's index, so a
 *   burst touches the shared line at most once.
 * - ::mkrt_mpmc_ring: any number of producers and consumers. Per-slot
 *   sequence numbers (Vyukov's bounded queue) with burst claims: one
 *   compare-and-swap claims a contiguous run of free (push) or full (pop)
 *   slots. Lock-free for the claim; as in every slot-sequence design, a
 *   thread preempted between its claim and its copy delays consumers of
 *   that slot (they see the ring as empty up to it) but never blocks other
 *   producers.
 *
 * Which calls may overlap (X = may not run concurrently with each other):
 *
 * @verbatim
                     push  pop   push_wait pop_wait close size  destroy
   spsc push         X     -     X         -        -     -     X
   spsc pop          -     X     -         X        -     -     X
   mpmc (any)        -     -     -         -        -     -     X
   @endverbatim
 *
 * That is, on an SPSC ring at most one thread pushes and at most one thread
 * pops at a time (the roles may pass from thread to thread with any
 * synchronisation between the old and the new holder). close and the
 * queries (is_closed, size, capacity) are safe from any thread. destroy
 * must not overlap anything.
 *
 * Ordering: items are popped in the order they were pushed (FIFO). For
 * mpmc, each producer's items are popped in that producer's order by any
 * single consumer; with several consumers, "in order" holds for the
 * claims. A successful push happens-before the pop that returns the item.
 *
 * Results:
 * - push returns how many items were accepted, 0..n, always a prefix of
 *   `items` (items[0..k-1]); 0 when the ring is full or closed.
 * - pop returns how many items were taken, 0..max, the oldest first.
 * - the *_wait calls return ::MKRT_OK when the request was met (push: all
 *   n accepted; pop: at least one item taken; n or max of 0 is met at
 *   once), ::MKRT_ETIMEDOUT when the deadline passed first, ::MKRT_ECLOSED
 *   when the ring is closed (push: some items may have been accepted before
 *   the close, see `*done`; pop: the ring is closed and empty). `*done`
 *   always holds the count moved (done may be NULL). timeout_ns 0 tries
 *   once; ::MKRT_TIMEOUT_INFINITE waits for ever. A waiting thread spins
 *   briefly, then sleeps on a futex: no busy-wait once asleep, and no lost
 *   wake-up (every push wakes sleeping poppers, every pop wakes sleeping
 *   pushers, close wakes everyone).
 * - bad input (a NULL ring, or a NULL items/out with a non-zero count)
 *   moves nothing: push and pop return 0, the *_wait calls return
 *   ::MKRT_EINVAL with `*done` = 0; close and destroy ignore a NULL ring,
 *   is_closed, size and capacity report false / 0 for it.
 *
 * Close: after mkrt_spsc_ring_close() or mkrt_mpmc_ring_close() returns,
 * pushes accept nothing and push_wait returns ::MKRT_ECLOSED. Items already
 * in the ring stay there and pop keeps returning them: the ring never drops
 * an accepted item. A push that overlaps close may or may not be accepted;
 * if accepted, it is poppable like any other.
 *
 * Capacity: a power of two, 2..::MKRT_RING_CAPACITY_MAX. Anything else
 * fails with ::MKRT_EINVAL. Indices are 64-bit and wrap correctly.
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

/**
 * @brief Largest ring capacity: 2^30 items (16 GiB of items).
 *
 * The MPMC ring keeps 32-bit slot sequence numbers, whose signed
 * differences must stay within +-capacity; 2^30 keeps them inside int32_t
 * with room to spare.
 */
#define MKRT_RING_CAPACITY_MAX ((size_t)1 << 30)

/** @brief Opaque single-producer single-consumer ring (see the file overview). */
typedef struct mkrt_spsc_ring mkrt_spsc_ring;
/** @brief Opaque multi-producer multi-consumer ring (see the file overview). */
typedef struct mkrt_mpmc_ring mkrt_mpmc_ring;

/**
 * @brief Creates an empty SPSC ring.
 * @param capacity Slots: a power of two in 2..::MKRT_RING_CAPACITY_MAX.
 * @param err Filled on failure; may be NULL.
 * @return The ring (free it with mkrt_spsc_ring_destroy()), or NULL with
 *         err set: ::MKRT_EINVAL for a bad capacity (the message suggests
 *         the next power of two), ::MKRT_ENOMEM when allocation fails.
 * @par Thread safety
 * Any thread.
 */
mkrt_spsc_ring *mkrt_spsc_ring_create(size_t capacity, mkrt_error *err);
/**
 * @brief Pushes up to n items without blocking.
 * @param r The ring.
 * @param items The items to copy in; items[0..k-1] are accepted.
 * @param n Number of items offered.
 * @return How many were accepted (a prefix of `items`): 0 when the ring is
 *         full or closed, n is 0, or r or items is NULL.
 * @par Thread safety
 * The producer role: one thread at a time, concurrently with the consumer.
 */
size_t mkrt_spsc_ring_push(mkrt_spsc_ring *r, const mkrt_item *items, size_t n);
/**
 * @brief Pops up to max items without blocking, oldest first.
 * @param r The ring.
 * @param out Where to copy the items; room for max.
 * @param max Most items to take.
 * @return How many were taken: 0 when the ring is empty, max is 0, or r or
 *         out is NULL. A closed ring still returns what it holds.
 * @par Thread safety
 * The consumer role: one thread at a time, concurrently with the producer.
 */
size_t mkrt_spsc_ring_pop(mkrt_spsc_ring *r, mkrt_item *out, size_t max);
/**
 * @brief Pushes all n items, waiting for room up to timeout_ns.
 * @param r The ring.
 * @param items The items to copy in.
 * @param n Number of items; 0 succeeds at once.
 * @param timeout_ns Relative timeout; 0 tries once,
 *        ::MKRT_TIMEOUT_INFINITE waits for ever.
 * @param[out] done How many items were accepted (a prefix), whatever the
 *        result; may be NULL.
 * @retval MKRT_OK All n items were accepted.
 * @retval MKRT_ETIMEDOUT The deadline passed with the ring still full.
 * @retval MKRT_ECLOSED The ring was closed; `*done` items went in before.
 * @retval MKRT_EINVAL r is NULL, or items is NULL with n > 0 (nothing moved).
 * @return The status, as listed.
 * @par Thread safety
 * The producer role, as mkrt_spsc_ring_push().
 */
mkrt_status mkrt_spsc_ring_push_wait(mkrt_spsc_ring *r, const mkrt_item *items, size_t n,
                                     uint64_t timeout_ns, size_t *done);
/**
 * @brief Pops at least one item (up to max), waiting up to timeout_ns.
 * @param r The ring.
 * @param out Where to copy the items; room for max.
 * @param max Most items to take; 0 succeeds at once.
 * @param timeout_ns Relative timeout; 0 tries once,
 *        ::MKRT_TIMEOUT_INFINITE waits for ever.
 * @param[out] done How many items were taken; may be NULL.
 * @retval MKRT_OK At least one item was taken (or max is 0).
 * @retval MKRT_ETIMEDOUT The deadline passed with the ring still empty.
 * @retval MKRT_ECLOSED The ring is closed and empty.
 * @retval MKRT_EINVAL r is NULL, or out is NULL with max > 0 (nothing moved).
 * @return The status, as listed.
 * @par Thread safety
 * The consumer role, as mkrt_spsc_ring_pop().
 */
mkrt_status mkrt_spsc_ring_pop_wait(mkrt_spsc_ring *r, mkrt_item *out, size_t max,
                                    uint64_t timeout_ns, size_t *done);
/**
 * @brief Closes the ring: later pushes accept nothing, waiters wake.
 *
 * Items already in the ring stay poppable. Closing twice is harmless.
 *
 * @param r The ring; NULL is ignored.
 * @par Thread safety
 * Any thread, concurrently with push, pop and the queries.
 */
void mkrt_spsc_ring_close(mkrt_spsc_ring *r);
/**
 * @brief Whether the ring was closed.
 * @param r The ring.
 * @return true once mkrt_spsc_ring_close() ran; false for a NULL ring.
 * @par Thread safety
 * Any thread.
 */
bool mkrt_spsc_ring_is_closed(const mkrt_spsc_ring *r);
/**
 * @brief Items in the ring.
 * @param r The ring.
 * @return The count: exact when called by the producer or the consumer
 *         while the other side is idle, a snapshot otherwise; 0 for NULL.
 * @par Thread safety
 * Any thread.
 */
size_t mkrt_spsc_ring_size(const mkrt_spsc_ring *r);
/**
 * @brief The ring's capacity.
 * @param r The ring.
 * @return The capacity given at creation; 0 for NULL.
 * @par Thread safety
 * Any thread.
 */
size_t mkrt_spsc_ring_capacity(const mkrt_spsc_ring *r);
/**
 * @brief Frees the ring and any items still in it.
 * @param r The ring; NULL is ignored.
 * @par Thread safety
 * Must not overlap any other call on the ring.
 */
void mkrt_spsc_ring_destroy(mkrt_spsc_ring *r);

/**
 * @brief Creates an empty MPMC ring.
 * @param capacity Slots: a power of two in 2..::MKRT_RING_CAPACITY_MAX.
 * @param err Filled on failure; may be NULL.
 * @return The ring (free it with mkrt_mpmc_ring_destroy()), or NULL with
 *         err set: ::MKRT_EINVAL for a bad capacity, ::MKRT_ENOMEM when
 *         allocation fails.
 * @par Thread safety
 * Any thread.
 */
mkrt_mpmc_ring *mkrt_mpmc_ring_create(size_t capacity, mkrt_error *err);
/**
 * @brief Pushes up to n items without blocking.
 * @param r The ring.
 * @param items The items to copy in; items[0..k-1] are accepted.
 * @param n Number of items offered.
 * @return How many were accepted (a prefix of `items`): 0 when the ring is
 *         full or closed, n is 0, or r or items is NULL.
 * @par Thread safety
 * Any thread, concurrently with every call but destroy.
 */
size_t mkrt_mpmc_ring_push(mkrt_mpmc_ring *r, const mkrt_item *items, size_t n);
/**
 * @brief Pops up to max items without blocking, oldest claim first.
 * @param r The ring.
 * @param out Where to copy the items; room for max.
 * @param max Most items to take.
 * @return How many were taken: 0 when the ring is empty (or its oldest
 *         slot is still being written), max is 0, or r or out is NULL.
 * @par Thread safety
 * Any thread, concurrently with every call but destroy.
 */
size_t mkrt_mpmc_ring_pop(mkrt_mpmc_ring *r, mkrt_item *out, size_t max);
/**
 * @brief Pushes all n items, waiting for room up to timeout_ns.
 * @param r The ring.
 * @param items The items to copy in.
 * @param n Number of items; 0 succeeds at once.
 * @param timeout_ns Relative timeout; 0 tries once,
 *        ::MKRT_TIMEOUT_INFINITE waits for ever.
 * @param[out] done How many items were accepted (a prefix), whatever the
 *        result; may be NULL.
 * @retval MKRT_OK All n items were accepted.
 * @retval MKRT_ETIMEDOUT The deadline passed before all were accepted.
 * @retval MKRT_ECLOSED The ring was closed; `*done` items went in before.
 * @retval MKRT_EINVAL r is NULL, or items is NULL with n > 0 (nothing moved).
 * @return The status, as listed.
 * @par Thread safety
 * Any thread, concurrently with every call but destroy. The n items are
 * not pushed as one unit: other producers' items may interleave.
 */
mkrt_status mkrt_mpmc_ring_push_wait(mkrt_mpmc_ring *r, const mkrt_item *items, size_t n,
                                     uint64_t timeout_ns, size_t *done);
/**
 * @brief Pops at least one item (up to max), waiting up to timeout_ns.
 * @param r The ring.
 * @param out Where to copy the items; room for max.
 * @param max Most items to take; 0 succeeds at once.
 * @param timeout_ns Relative timeout; 0 tries once,
 *        ::MKRT_TIMEOUT_INFINITE waits for ever.
 * @param[out] done How many items were taken; may be NULL.
 * @retval MKRT_OK At least one item was taken (or max is 0).
 * @retval MKRT_ETIMEDOUT The deadline passed with the ring still empty.
 * @retval MKRT_ECLOSED The ring is closed and empty.
 * @retval MKRT_EINVAL r is NULL, or out is NULL with max > 0 (nothing moved).
 * @return The status, as listed.
 * @par Thread safety
 * Any thread, concurrently with every call but destroy.
 */
mkrt_status mkrt_mpmc_ring_pop_wait(mkrt_mpmc_ring *r, mkrt_item *out, size_t max,
                                    uint64_t timeout_ns, size_t *done);
/**
 * @brief Closes the ring: later pushes accept nothing, waiters wake.
 *
 * Items already in the ring stay poppable. Closing twice is harmless.
 *
 * @param r The ring; NULL is ignored.
 * @par Thread safety
 * Any thread, concurrently with every call but destroy.
 */
void mkrt_mpmc_ring_close(mkrt_mpmc_ring *r);
/**
 * @brief Whether the ring was closed.
 * @param r The ring.
 * @return true once mkrt_mpmc_ring_close() ran; false for a NULL ring.
 * @par Thread safety
 * Any thread.
 */
bool mkrt_mpmc_ring_is_closed(const mkrt_mpmc_ring *r);
/**
 * @brief Items claimed by producers and not yet claimed by consumers.
 * @param r The ring.
 * @return A snapshot, at most the capacity; 0 for NULL.
 * @par Thread safety
 * Any thread.
 */
size_t mkrt_mpmc_ring_size(const mkrt_mpmc_ring *r);
/**
 * @brief The ring's capacity.
 * @param r The ring.
 * @return The capacity given at creation; 0 for NULL.
 * @par Thread safety
 * Any thread.
 */
size_t mkrt_mpmc_ring_capacity(const mkrt_mpmc_ring *r);
/**
 * @brief Frees the ring and any items still in it.
 * @param r The ring; NULL is ignored.
 * @par Thread safety
 * Must not overlap any other call on the ring.
 */
void mkrt_mpmc_ring_destroy(mkrt_mpmc_ring *r);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_RING_H */
