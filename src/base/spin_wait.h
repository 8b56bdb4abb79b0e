/* SPDX-License-Identifier: BSD-2-Clause */
/* src/base/spin_wait.h - the library's one spin-then-sleep wait.
 *
 * A thread that waits for another thread's store first spins a little
 * (MKRT__SPIN_TRIES pauses, a few microseconds: long enough to catch a
 * layer or batch that is about to finish, short enough not to starve the
 * thread it waits for on a small machine), then sleeps on a wait queue
 * with the lost-wake-up-free protocol of base/waitq.h: prepare, check
 * again, sleep, finish. The writer stores, then notifies the queue.
 * Every blocking wait in the library goes through here, except the
 * megakernel host's poll of device memory (a device cannot notify a
 * futex; see backend/mk_host.c). */
#ifndef MKRT_BASE_SPIN_WAIT_H
#define MKRT_BASE_SPIN_WAIT_H

#include <time.h>

#include "base/waitq.h"

#define MKRT__SPIN_TRIES 128

/* Non-zero: the wait is over (what it waited for happened, or a reason to
 * leave, such as a stop flag). Loads it makes must be acquire loads that
 * pair with the writer's release stores. */
typedef int (*mkrt__wait_check)(void *ctx);

/* Waits until check(ctx) returns non-zero, or deadline (NULL: none)
 * passes; returns check's last value (0 on a deadline). */
static inline int mkrt__spin_then_sleep(mkrt__waitq *wq, mkrt__wait_check check, void *ctx,
                                        const struct timespec *deadline)
{
    int r;
    for (unsigned i = 0; i < MKRT__SPIN_TRIES; i++) {
        if ((r = check(ctx)) != 0)
            return r;
        mkrt__cpu_relax();
    }
    for (;;) {
        uint32_t epoch = mkrt__waitq_prepare(wq);
        if ((r = check(ctx)) != 0) {
            mkrt__waitq_finish(wq);
            return r;
        }
        mkrt_status st = mkrt__waitq_sleep(wq, epoch, deadline);
        mkrt__waitq_finish(wq);
        if (st == MKRT_ETIMEDOUT)
            return check(ctx);
    }
}

#endif
