/* SPDX-License-Identifier: BSD-2-Clause */
/* base/rcu.h - mkrt's use of liburcu (urcu-memb flavour) and per-thread
 * slots.
 *
 * Flavour: urcu-memb. Its read side is a thread-local counter store and a
 * compiler barrier (about 1.5 ns here); the writer pays with
 * sys_membarrier. qsbr would be cheaper still, but it needs every
 * registered thread to announce quiescent states; user threads that call
 * into a cache do not, so qsbr would let one idle caller stall every grace
 * period. bp would not need registration but costs more on both sides.
 *
 * Registration: mkrt__rcu_thread_enter() registers the calling thread on
 * first use and arranges unregistration at thread exit (a thread-specific-storage key
 * destructor). It also hands the thread a slot index in
 * 0..MKRT_THREAD_SLOTS-1 (or -1 when all are taken) for per-thread
 * counters; a slot outlives its thread's exit only as a number: the next
 * thread to take it keeps adding to the same counters.
 *
 * ThreadSanitizer: liburcu 0.13 is not instrumented, so TSan cannot see the
 * ordering that its grace periods give. In TSan builds the read-side unlock
 * and the call_rcu enqueue release a global sync object and every RCU
 * callback acquires it first; this is exactly the happens-before a grace
 * period guarantees (no reader that could see the object is still inside
 * its section when the callback runs). Non-TSan builds compile it away.
 */
#ifndef MKRT_SRC_RCU_H
#define MKRT_SRC_RCU_H

#if defined(__SANITIZE_THREAD__)
#define MKRT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MKRT_TSAN 1
#endif
#endif

#ifndef MKRT_TSAN
#define _LGPL_SOURCE /* inline read-side fast paths */
#endif
#include <urcu/urcu-memb.h>

#define MKRT_THREAD_SLOTS 256

void mkrt__rcu_thread_enter_slow(void);
extern _Thread_local int mkrt__rcu_registered;
extern _Thread_local int mkrt__thread_slot_index;

static inline void mkrt__rcu_thread_enter(void)
{
    if (!mkrt__rcu_registered)
        mkrt__rcu_thread_enter_slow();
}

/* The calling thread's slot (after enter), or -1. */
static inline int mkrt__thread_slot(void)
{
    return mkrt__thread_slot_index;
}

#ifdef MKRT_TSAN
void mkrt__rcu_tsan_release(void);
void mkrt__rcu_tsan_acquire(void);
#else
static inline void mkrt__rcu_tsan_release(void) {}
static inline void mkrt__rcu_tsan_acquire(void) {}
#endif

static inline void mkrt__rcu_read_lock(void)
{
    mkrt__rcu_thread_enter();
    urcu_memb_read_lock();
}

static inline void mkrt__rcu_read_unlock(void)
{
    mkrt__rcu_tsan_release();
    urcu_memb_read_unlock();
}

/* fn(head) runs after a grace period, on liburcu's call_rcu thread; it must
 * start with mkrt__rcu_tsan_acquire(). */
static inline void mkrt__rcu_call(struct rcu_head *head, void (*fn)(struct rcu_head *))
{
    mkrt__rcu_thread_enter();
    mkrt__rcu_tsan_release();
    urcu_memb_call_rcu(head, fn);
}

#endif
