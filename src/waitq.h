/* src/waitq.h - an eventcount on a futex: sleep until "something changed".
 *
 * Used by every blocking wait in mkrt. The fast path (notify with nobody
 * asleep) is one uncontended read-modify-write on the waitq's own cache
 * line and no system call.
 *
 * Protocol:
 *   waker:   publish the state change (any store), then mkrt__waitq_notify.
 *   waiter:  e = mkrt__waitq_prepare(q);
 *            re-check the condition; if met -> mkrt__waitq_finish(q), done;
 *            mkrt__waitq_sleep(q, e, deadline); mkrt__waitq_finish(q); loop.
 *
 * Why no wake-up is lost, in C11 terms: notify and prepare are both
 * acq_rel read-modify-writes of `waiters`, so they are ordered in its
 * modification order. If notify comes later it reads waiters >= 1 and bumps
 * the epoch and wakes. If it comes earlier, prepare's acquire RMW reads from
 * notify's release RMW (or a later RMW in its release sequence), so the
 * waker's state change happens-before the waiter's re-check, which sees it.
 * The epoch closes the gap between re-check and sleep: the futex sleeps only
 * while epoch still equals the value read in prepare.
 */
#ifndef MKRT_SRC_WAITQ_H
#define MKRT_SRC_WAITQ_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "mkrt/status.h"

typedef struct mkrt__waitq {
    _Atomic uint32_t waiters; /* threads between prepare and finish */
    _Atomic uint32_t epoch;   /* bumped by every notify that found waiters */
} mkrt__waitq;

void mkrt__waitq_wake_all(mkrt__waitq *q);

static inline void mkrt__waitq_notify(mkrt__waitq *q)
{
    /* acq_rel RMW: the release half publishes the caller's earlier stores to
     * a waiter whose prepare RMW reads from this one; see the header note. */
    if (atomic_fetch_add_explicit(&q->waiters, 0, memory_order_acq_rel) != 0)
        mkrt__waitq_wake_all(q);
}

static inline uint32_t mkrt__waitq_prepare(mkrt__waitq *q)
{
    /* acq_rel RMW: pairs with the RMW in mkrt__waitq_notify. */
    atomic_fetch_add_explicit(&q->waiters, 1, memory_order_acq_rel);
    /* acquire: pairs with the release increment in mkrt__waitq_wake_all. */
    return atomic_load_explicit(&q->epoch, memory_order_acquire);
}

static inline void mkrt__waitq_finish(mkrt__waitq *q)
{
    /* relaxed: leaving publishes nothing; an RMW keeps notify's release
     * sequence unbroken. */
    atomic_fetch_sub_explicit(&q->waiters, 1, memory_order_relaxed);
}

/* Sleeps while epoch == `epoch`, until woken or `deadline` (CLOCK_MONOTONIC,
 * absolute; NULL = no deadline). Returns MKRT_ETIMEDOUT when the deadline
 * passed, MKRT_OK otherwise (woken, epoch moved, or a spurious return). */
mkrt_status mkrt__waitq_sleep(mkrt__waitq *q, uint32_t epoch, const struct timespec *deadline);

/* Monotonic clock in nanoseconds. */
uint64_t mkrt__now_ns(void);

/* Turns a relative timeout into an absolute CLOCK_MONOTONIC deadline.
 * Returns NULL (no deadline) for MKRT_TIMEOUT_INFINITE, else `buf`. */
const struct timespec *mkrt__deadline(uint64_t timeout_ns, struct timespec *buf);

/* True once `deadline` (may be NULL = never) has passed. */
int mkrt__deadline_passed(const struct timespec *deadline);

static inline void mkrt__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

#endif
