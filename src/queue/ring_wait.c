/* SPDX-License-Identifier: BSD-2-Clause */
/* src/queue/ring_wait.c - capacity checks and the shared blocking loop. */
#include "queue/ring_internal.h"
#include "base/error_internal.h"

/* Spin this many re-checks before sleeping: a handoff between running
 * threads lands within about a microsecond, a futex round trip costs ~5 us. */
#define MKRT_RING_SPIN_TRIES 64

mkrt_status mkrt__ring_check_capacity(const char *what, size_t capacity, mkrt_error *err)
{
    if (capacity < 2 || capacity > MKRT_RING_CAPACITY_MAX || (capacity & (capacity - 1)) != 0) {
        size_t up = 2;
        while (up < capacity && up < MKRT_RING_CAPACITY_MAX)
            up <<= 1;
        return mkrt__error_set(err, MKRT_EINVAL,
                               "%s capacity %zu is invalid: it must be a power of two "
                               "between 2 and %zu. Fix: use %zu.",
                               what, capacity, (size_t)MKRT_RING_CAPACITY_MAX, up);
    }
    return MKRT_OK;
}

static bool is_closed(const _Atomic bool *closed)
{
    /* acquire: pairs with the release store in *_ring_close, so a waiter
     * that sees the flag also sees every item pushed before the close. */
    return atomic_load_explicit(closed, memory_order_acquire);
}

mkrt_status mkrt__ring_wait(void *ring, mkrt__ring_move_fn move, mkrt__waitq *wq,
                            const _Atomic bool *closed, bool push_mode, mkrt_item *buf,
                            size_t n, uint64_t timeout_ns, size_t *done)
{
    size_t moved = 0;
    struct timespec tsbuf;
    const struct timespec *deadline = NULL;
    bool have_deadline = false;
    unsigned spins = 0;

    if (n == 0) {
        *done = 0;
        return MKRT_OK;
    }
    for (;;) {
        size_t k = move(ring, buf + moved, n - moved);
        moved += k;
        if (push_mode ? moved == n : moved > 0)
            break;
        if (k > 0)
            spins = 0; /* progress: keep going without sleeping */
        if (is_closed(closed)) {
            if (!push_mode)
                moved += move(ring, buf, n); /* items that raced with close */
            break;
        }
        if (timeout_ns == 0)
            break;
        if (!have_deadline) {
            deadline = mkrt__deadline(timeout_ns, &tsbuf);
            have_deadline = true;
        }
        if (spins < MKRT_RING_SPIN_TRIES) {
            spins++;
            mkrt__cpu_relax();
            continue;
        }
        uint32_t epoch = mkrt__waitq_prepare(wq);
        k = move(ring, buf + moved, n - moved);
        moved += k;
        if ((push_mode ? moved == n : moved > 0) || k > 0 || is_closed(closed)) {
            mkrt__waitq_finish(wq);
            continue; /* the loop head decides */
        }
        mkrt_status st = mkrt__waitq_sleep(wq, epoch, deadline);
        mkrt__waitq_finish(wq);
        if (st == MKRT_ETIMEDOUT) {
            moved += move(ring, buf + moved, n - moved);
            break;
        }
    }
    *done = moved;
    if (push_mode ? moved == n : moved > 0)
        return MKRT_OK;
    if (is_closed(closed))
        return MKRT_ECLOSED;
    return MKRT_ETIMEDOUT;
}
