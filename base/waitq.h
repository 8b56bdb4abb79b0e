/* SPDX-License-Identifier: BSD-2-Clause */
/* base/waitq.h - an eventcount on a futex: sleep until "something changed".
 *
 * Used by every blocking wait in mkrt. The fast path (notify with nobody
 * asleep) is a load of a line nobody writes meanwhile, behind a compiler
 * barrier (protocol 1) or a CPU-local fence (protocol 2), and no system
 * call.
 *
 * Protocol:
 *   setup:   mkrt__waitq_init(q) once, before the waitq is shared.
 *   waker:   publish the state change (any store), then mkrt__waitq_notify.
 *   waiter:  e = mkrt__waitq_prepare(q);
 *            re-check the condition; if met -> mkrt__waitq_finish(q), done;
 *            mkrt__waitq_sleep(q, e, deadline); mkrt__waitq_finish(q); loop.
 *
 * The hazard is the store-load pattern (Dekker): the waker stores its state
 * then loads `armed`; the waiter sets `armed` then loads the state.
 * Without a full barrier on both sides each can miss the other's store.
 * Two ways to get that barrier, chosen per queue at init:
 *
 * 1. Asymmetric (default on Linux >= 4.14): the waker's side is a compiler
 *    barrier and a relaxed load, nothing more, so the hot path pays nothing.
 *    The waiter, after setting `armed`, calls
 *    membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), which makes every running
 *    thread of the process execute a full memory barrier. Whatever point a
 *    waker has reached, either its state store is globally visible before
 *    the waiter re-checks, or its later load of `armed` sees it set (the
 *    argument liburcu's memb flavour rests on). The syscall costs the waiter
 *    a few microseconds and every other running thread an interrupt.
 * 2. Symmetric (membarrier refused, or a queue whose waiters sleep often):
 *    both sides put a seq_cst fence between their store and their load
 *    (the waiter between arming and re-checking, the waker between its
 *    state change and looking at `armed`). Of two seq_cst fences one
 *    precedes the other in the single total order, so either the waker's
 *    load sees the arming or the waiter's re-check sees the state. The
 *    fence is local to the waker's CPU: no cache line changes hands while
 *    nobody sleeps.
 *
 * The epoch closes the gap between re-check and sleep: the futex sleeps only
 * while epoch still equals the value read in prepare, and the waker bumps it
 * (release; the waiter's load is acquire) before waking.
 *
 * One wake-up per sleep, not per notify: the notify that finds `armed` set
 * takes it (exchange to 0), bumps the epoch and wakes everyone asleep;
 * later notifies find it clear and make no system call until a waiter
 * prepares again. Prepare reads the epoch before it arms, so the notify
 * that takes its arming bumps the epoch past what it read: its sleep
 * returns (woken, or the epoch no longer matches) and none is left behind.
 * `waiters` counts the threads between prepare and finish (the tests
 * read it).
 */
#ifndef MKRT_SRC_WAITQ_H
#define MKRT_SRC_WAITQ_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "mkrt/status.h"

typedef struct mkrt__waitq {
    _Atomic uint32_t waiters; /* threads between prepare and finish */
    _Atomic uint32_t armed;   /* set by prepare, taken by the notify that wakes */
    _Atomic uint32_t epoch;   /* bumped by every notify that took `armed` */
    _Atomic uint32_t epoch_unreliable; /* membarrier failed after setup */
    uint32_t asymmetric;      /* protocol 1 for this queue; fixed at init */
} mkrt__waitq;

/* Non-zero when the asymmetric (membarrier) protocol is in use. Written
 * once by mkrt__waitq_init's mkrt__call_once, before any waitq is shared. */
extern int mkrt__waitq_asymmetric;

/* Zeroes q and, the first time in the process, picks the protocol:
 * asymmetric where membarrier works. For queues notified per item or
 * burst (the rings), where a free notify matters most. */
void mkrt__waitq_init(mkrt__waitq *q);
/* Zeroes q for protocol 2 (a fence on both sides): for queues whose
 * waiters sleep often, where a membarrier per sleep (IPIs to every CPU)
 * would cost more than the notifies' fences. */
void mkrt__waitq_init_symmetric(mkrt__waitq *q);
void mkrt__waitq_wake_all(mkrt__waitq *q);
uint32_t mkrt__waitq_prepare(mkrt__waitq *q);

/* Wakes the waiters if one is armed and worth(ctx) says the change is
 * worth a wake-up (NULL: always). worth runs after the barrier, so what a
 * waiter stored before it prepared (a threshold, say) is visible to it
 * whenever that waiter could otherwise miss this change; a waiter whose
 * threshold worth finds unmet stays asleep, and the next notify asks
 * again. */
static inline void mkrt__waitq_notify_if(mkrt__waitq *q, bool (*worth)(const void *ctx), const void *ctx)
{
    if (q->asymmetric) {
        /* Compiler barrier: keep the caller's state stores before the load
         * below in program order; the waiter's membarrier supplies the
         * hardware barrier (protocol 1 above). */
        atomic_signal_fence(memory_order_seq_cst);
    } else {
        /* seq_cst fence: pairs with the fence in mkrt__waitq_prepare
         * (protocol 2 above). */
        atomic_thread_fence(memory_order_seq_cst);
    }
    /* relaxed (both): ordered against the waiter by the barrier above; the
     * load keeps the line shared while nobody is armed, and the exchange
     * only decides which notify wakes (its bump of the epoch is the
     * release the woken waiter acquires). */
    if (atomic_load_explicit(&q->armed, memory_order_relaxed) != 0 && (worth == NULL || worth(ctx)) &&
        atomic_exchange_explicit(&q->armed, 0, memory_order_relaxed) != 0)
        mkrt__waitq_wake_all(q);
}

static inline void mkrt__waitq_notify(mkrt__waitq *q)
{
    mkrt__waitq_notify_if(q, NULL, NULL);
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
