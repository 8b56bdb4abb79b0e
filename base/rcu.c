/* SPDX-License-Identifier: BSD-2-Clause */
/* base/rcu.c - automatic urcu-memb registration and thread slots. */
#include <stdint.h>

#include "base/rcu.h"
#include "base/thread.h"

_Thread_local int mkrt__rcu_registered;
_Thread_local int mkrt__thread_slot_index = -1;

static mkrt__once_flag once = MKRT__ONCE_INIT;
static mkrt__tss exit_key;
static mkrt__mutex slot_lock; /* initialised in make_key, under once */
static uint64_t slot_used[MKRT_THREAD_SLOTS / 64];

static void on_thread_exit(void *unused)
{
    (void)unused;
    if (mkrt__thread_slot_index >= 0) {
        int s = mkrt__thread_slot_index;
        mkrt__mutex_lock(&slot_lock);
        slot_used[s / 64] &= ~((uint64_t)1 << (s % 64));
        mkrt__mutex_unlock(&slot_lock);
        mkrt__thread_slot_index = -1;
    }
    if (mkrt__rcu_registered) {
        urcu_memb_unregister_thread();
        mkrt__rcu_registered = 0;
    }
}

static void make_key(void)
{
    mkrt__mutex_init(&slot_lock);
    mkrt__tss_create(&exit_key, on_thread_exit);
}

void mkrt__rcu_thread_enter_slow(void)
{
    mkrt__call_once(&once, make_key);
    urcu_memb_register_thread();
    mkrt__rcu_registered = 1;
    mkrt__mutex_lock(&slot_lock);
    for (int w = 0; w < MKRT_THREAD_SLOTS / 64 && mkrt__thread_slot_index < 0; w++) {
        if (~slot_used[w]) {
            int b = __builtin_ctzll(~slot_used[w]);
            slot_used[w] |= (uint64_t)1 << b;
            mkrt__thread_slot_index = w * 64 + b;
        }
    }
    mkrt__mutex_unlock(&slot_lock);
    /* Any non-NULL value makes the destructor run at thread exit. */
    mkrt__tss_set(exit_key, (void *)1);
}

#ifdef MKRT_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
static char grace_period_sync;

void mkrt__rcu_tsan_release(void)
{
    __tsan_release(&grace_period_sync);
}

void mkrt__rcu_tsan_acquire(void)
{
    __tsan_acquire(&grace_period_sync);
}
#endif
