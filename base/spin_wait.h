/* SPDX-License-Identifier: BSD-2-Clause */
/* base/spin_wait.h - the library's one spin-then-sleep wait.
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

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "base/waitq.h"

#define MKRT__SPIN_TRIES 128

/* How long a thread spins, where a CPU is its own, before it sleeps on
 * something another running thread will soon do (the dispatcher waiting
 * for work or for the dispatch token, a producer waiting for room in its
 * ring). Waking a sleeper costs its waker a futex call and, on the 2-CPU
 * development VMs (issue 13), an inter-processor interrupt of 10-25 us:
 * the whole p99 of a single item's round trip, and about a fifth of the
 * dispatcher's time at full rate when the producer slept on a full ring
 * once per batch. Measured on those VMs:
 * - the dispatcher, with `MKRT_DEV_IDLE_NS=v build/bench/peer_bench
 *   --latency-child mkrt 20000` (a temporary override, since removed),
 *   p50 / p99 in us, 3 fresh processes each: MKRT__SPIN_TRIES alone
 *   (about 2 us) 1.3-1.6 / 1.9-21.8; 20 us: p99 44-48; 50 us: 1.6 / 72;
 *   200 us: 1.0-2.2 / 1.7-4.1 (p99.9 about 230 us: the rare sleep then
 *   costs the budget too);
 * - a producer on a full ring (one producer, ADD over 1024 handles, 8M
 *   items, 5 interleaved runs of each, M items/s): 0 us 26.7-53.5 (median
 *   36.7), 50 us 33.0-55.9 (45.3), 200 us 33.8-61.1 (49.2).
 * Not on one CPU, where spinning only delays the thread it waits for.
 * Nor where the two CPUs are not really two: the same VMs have phases in
 * which the host runs both virtual CPUs on one core (the steal time in
 * /proc/stat climbs; a fixed loop runs half as fast), and then the thread
 * a spinner waits for cannot run until the spinner's time is used up:
 * every budget is lost whole. runtime_bench fell from 60-90 to 17-22 M
 * items/s in those phases while the mutex+condvar pool, which only
 * sleeps, kept its 50. So the budget adapts (mkrt__spin_budget). */
#define MKRT__SPIN_BUDGET_NS 200000u

/* One waiting site's spin budget (a producer's wait for ring room, the
 * dispatcher's waits), owned by the one thread that waits there: it
 * halves each time a spin runs out before the wait is over, and doubles
 * (up to MKRT__SPIN_BUDGET_NS) each time the wait ends within it. Below
 * MKRT__SPIN_FLOOR_NS it is 0 (the short spin of mkrt__spin_then_sleep
 * alone), except that every MKRT__SPIN_PROBE_EVERY-th wait then tries the
 * whole budget again, so a machine whose CPUs became real again is
 * noticed: at most one lost budget per that many waits. */
#define MKRT__SPIN_FLOOR_NS 2000u
#define MKRT__SPIN_PROBE_EVERY 64u

typedef struct mkrt__spin_budget {
    uint32_t ns;    /* the next spin's budget */
    uint32_t waits; /* waits at the floor, for the probes */
} mkrt__spin_budget;

static inline void mkrt__spin_budget_init(mkrt__spin_budget *b)
{
    b->ns = MKRT__SPIN_BUDGET_NS;
    b->waits = 0;
}

/* Non-zero: the wait is over (what it waited for happened, or a reason to
 * leave, such as a stop flag). Loads it makes must be acquire loads that
 * pair with the writer's release stores. */
typedef int (*mkrt__wait_check)(void *ctx);

/* Spins until check(ctx) returns non-zero or budget_ns pass (the clock
 * is read every 64 pauses); returns check's last value. */
static inline int mkrt__spin_for(mkrt__wait_check check, void *ctx, uint64_t budget_ns)
{
    if (budget_ns == 0)
        return check(ctx);
    uint64_t until = mkrt__now_ns() + budget_ns;
    for (unsigned i = 1;; i++) {
        int r = check(ctx);
        if (r != 0)
            return r;
        mkrt__cpu_relax();
        if (i % 64 == 0 && mkrt__now_ns() > until)
            return 0;
    }
}

/* mkrt__spin_for with the site's adaptive budget, capped at cap_ns (a
 * timeout; 0: no budgeted spin); returns check's last value. */
static inline int mkrt__spin_adaptive(mkrt__spin_budget *b, mkrt__wait_check check, void *ctx,
                                      uint64_t cap_ns)
{
    uint64_t ns = b->ns;
    bool probe = false;
    if (ns == 0 && ++b->waits % MKRT__SPIN_PROBE_EVERY == 0) {
        ns = MKRT__SPIN_BUDGET_NS;
        probe = true;
    }
    if (ns > cap_ns)
        ns = cap_ns;
    if (ns == 0)
        return check(ctx);
    int r = mkrt__spin_for(check, ctx, ns);
    if (r != 0) {
        uint64_t grown = probe ? MKRT__SPIN_BUDGET_NS : (uint64_t)b->ns * 2;
        b->ns = (uint32_t)(grown > MKRT__SPIN_BUDGET_NS ? MKRT__SPIN_BUDGET_NS : grown);
    } else if (!probe && ns == b->ns) {
        b->ns = b->ns / 2 < MKRT__SPIN_FLOOR_NS ? 0 : b->ns / 2;
    }
    return r;
}

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
