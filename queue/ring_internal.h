/* SPDX-License-Identifier: BSD-2-Clause */
/* queue/ring_internal.h - what the two rings share, and test-only hooks. */
#ifndef MKRT_QUEUE_RING_INTERNAL_H
#define MKRT_QUEUE_RING_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>

#include "base/waitq.h"
#include "mkrt/ring.h"

/* Checks a requested capacity; fills err and returns MKRT_EINVAL when it is
 * not a power of two in 2..MKRT_RING_CAPACITY_MAX. `what` names the ring. */
mkrt_status mkrt__ring_check_capacity(const char *what, size_t capacity, mkrt_error *err);

/* One non-blocking attempt: moves up to n items, returns how many. */
typedef size_t (*mkrt__ring_move_fn)(void *ring, mkrt_item *buf, size_t n);

/* The blocking loop behind every *_wait call.
 *   push mode: moves all n items from buf (waits on `space_wq`).
 *   pop mode:  waits until at least one item moved into buf (on `data_wq`).
 * `wq` is the queue to sleep on, `closed` the ring's close flag. */
mkrt_status mkrt__ring_wait(void *ring, mkrt__ring_move_fn move, mkrt__waitq *wq,
                            const _Atomic bool *closed, bool push_mode, mkrt_item *buf,
                            size_t n, uint64_t timeout_ns, size_t *done);

#include "queue/spsc_wait.h" /* mkrt__spsc_ring_wait_space */

/* Bad input to a *_wait call (NULL ring, or a NULL buffer with a non-zero
 * count): nothing moves, *done (when given) is 0, MKRT_EINVAL (ring.h). */
static inline mkrt_status mkrt__ring_bad_wait(size_t *done)
{
    if (done != NULL)
        *done = 0;
    return MKRT_EINVAL;
}

#ifdef MKRT_TEST_HOOKS
/* Test hook: threads currently between prepare and finish on either of
 * the ring's wait queues (about to sleep, asleep, or just woken). */
uint32_t mkrt__spsc_ring_sleepers(const mkrt_spsc_ring *r);
uint32_t mkrt__mpmc_ring_sleepers(const mkrt_mpmc_ring *r);

/* Test hooks: restart an EMPTY ring's indices at `index` (e.g. just below
 * 2^64) so tests can cross the wrap-around. Not for production use. */
void mkrt__spsc_ring_seed_index(mkrt_spsc_ring *r, uint64_t index);
void mkrt__mpmc_ring_seed_index(mkrt_mpmc_ring *r, uint64_t index);
#endif

#endif
