/* SPDX-License-Identifier: BSD-2-Clause */
/* queue/ring_wait.c - capacity checks and the shared blocking loop. */
#include "queue/ring_internal.h"
#include "base/error_internal.h"
#include "base/spin_wait.h"

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

/* One attempt of a blocking call, and the check its wait makes: moves
 * what it can; non-zero when the wait is over (DONE: all moved in push
 * mode, something in pop mode; CLOSED) or should start again (MOVED: part
 * of a push went in: no sleep while the other side keeps up). */
enum { WAITING, DONE, CLOSED, MOVED };

typedef struct ring_attempt {
    void *ring;
    mkrt__ring_move_fn move;
    const _Atomic bool *closed;
    bool push_mode;
    mkrt_item *buf;
    size_t n, moved;
} ring_attempt;

static int attempt(void *p)
{
    ring_attempt *a = p;
    size_t k = a->move(a->ring, a->buf + a->moved, a->n - a->moved);
    a->moved += k;
    if (a->push_mode ? a->moved == a->n : a->moved > 0)
        return DONE;
    if (is_closed(a->closed)) {
        if (!a->push_mode)
            a->moved += a->move(a->ring, a->buf, a->n); /* items that raced with close */
        return CLOSED;
    }
    return k > 0 ? MOVED : WAITING;
}

mkrt_status mkrt__ring_wait(void *ring, mkrt__ring_move_fn move, mkrt__waitq *wq,
                            const _Atomic bool *closed, bool push_mode, mkrt_item *buf,
                            size_t n, uint64_t timeout_ns, size_t *done)
{
    ring_attempt a = {ring, move, closed, push_mode, buf, n, 0};
    struct timespec tsbuf;
    const struct timespec *deadline = NULL;
    int r = n == 0 ? DONE : attempt(&a);
    if ((r == WAITING || r == MOVED) && timeout_ns != 0) {
        deadline = mkrt__deadline(timeout_ns, &tsbuf);
        do
            r = mkrt__spin_then_sleep(wq, attempt, &a, deadline);
        while (r == MOVED);
        if (r == WAITING) /* the deadline passed: a last attempt */
            r = attempt(&a);
    }
    *done = a.moved;
    if (r == DONE || (!push_mode && a.moved > 0))
        return MKRT_OK;
    return r == CLOSED ? MKRT_ECLOSED : MKRT_ETIMEDOUT;
}
