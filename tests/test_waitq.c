/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_waitq.c - the futex eventcount under both protocols.
 *
 * Two threads hand a token back and forth 20000 times, each sleeping on its
 * own waitq until the token is theirs. A lost wake-up leaves one of them
 * asleep for ever: every wait has a 10 s deadline, so a lost wake-up shows
 * up as a failed count instead of a hang. Run it with MKRT_WAITQ_SYMMETRIC=1
 * too (make check does) to cover the symmetric (fence) protocol. Then single-thread
 * checks of the protocol's steps: timeouts, a notify between prepare and
 * sleep, and one wake-up per sleep however many notifies come.
 */
#include <stdlib.h>
#include <string.h>

#include "../base/waitq.h"
#include "base/thread.h"
#include "mkrt/ring.h"
#include "tap.h"

#define ROUNDS 20000

typedef struct pingpong {
    _Atomic uint32_t turn; /* 0: ping's turn, 1: pong's */
    mkrt__waitq wq[2];
    uint64_t timeouts[2];
    uint64_t slept[2];
} pingpong;

static void play(pingpong *g, uint32_t me)
{
    for (int i = 0; i < ROUNDS; i++) {
        for (;;) {
            /* acquire: pairs with the release store of turn below. */
            if (atomic_load_explicit(&g->turn, memory_order_acquire) == me)
                break;
            uint32_t e = mkrt__waitq_prepare(&g->wq[me]);
            if (atomic_load_explicit(&g->turn, memory_order_acquire) == me) {
                mkrt__waitq_finish(&g->wq[me]);
                break;
            }
            struct timespec ts;
            g->slept[me]++;
            mkrt_status st = mkrt__waitq_sleep(&g->wq[me], e, mkrt__deadline(10000000000u, &ts));
            mkrt__waitq_finish(&g->wq[me]);
            if (st == MKRT_ETIMEDOUT) {
                g->timeouts[me]++;
                return;
            }
        }
        /* release: pairs with the acquire loads of turn above. */
        atomic_store_explicit(&g->turn, 1 - me, memory_order_release);
        mkrt__waitq_notify(&g->wq[1 - me]);
    }
}

static int pong(void *p)
{
    play(p, 1);
    return 0;
}

int main(void)
{
    pingpong g;
    memset(&g, 0, sizeof g);
    mkrt__waitq_init(&g.wq[0]);
    mkrt__waitq_init(&g.wq[1]);
    const char *sym = getenv("MKRT_WAITQ_SYMMETRIC");
    if (sym != NULL && sym[0] == '1')
        is(mkrt__waitq_asymmetric, 0, "MKRT_WAITQ_SYMMETRIC=1 selects the symmetric (fence) protocol");
    else
        diag("protocol: %s", mkrt__waitq_asymmetric ? "asymmetric (membarrier)" : "symmetric (fence)");
    mkrt__thread t;
    mkrt__thread_start(&t, pong, &g);
    play(&g, 0);
    mkrt__thread_join(t);
    is(g.timeouts[0] + g.timeouts[1], 0, "%d token handoffs with no lost wake-up", ROUNDS);
    ok(g.slept[0] + g.slept[1] > 0, "the players really slept (%llu sleeps)",
       (unsigned long long)(g.slept[0] + g.slept[1]));

    struct timespec ts;
    uint32_t e = mkrt__waitq_prepare(&g.wq[0]);
    is(mkrt__waitq_sleep(&g.wq[0], e, mkrt__deadline(20000000, &ts)), MKRT_ETIMEDOUT,
       "sleep without a notify times out");
    ok(mkrt__deadline_passed(&ts), "... only once its deadline has passed");
    is(atomic_load(&g.wq[0].epoch), e, "... and really was not notified (the epoch never moved)");
    is(atomic_load(&g.wq[0].waiters), 1, "... still counted as a waiter until finish");
    mkrt__waitq_finish(&g.wq[0]);
    is(atomic_load(&g.wq[0].waiters), 0, "finish leaves the queue");
    e = mkrt__waitq_prepare(&g.wq[0]);
    mkrt__waitq_notify(&g.wq[0]);
    ok(atomic_load(&g.wq[0].epoch) != e, "a notify with a waiter registered moves the epoch");
    is(mkrt__waitq_sleep(&g.wq[0], e, mkrt__deadline(5000000000u, &ts)), MKRT_OK,
       "a notify between prepare and sleep is not lost");
    mkrt__waitq_finish(&g.wq[0]);

    /* One wake-up per sleep: a burst of notifies moves the epoch once. */
    uint32_t before = atomic_load(&g.wq[0].epoch);
    for (int i = 0; i < 8; i++)
        mkrt__waitq_notify(&g.wq[0]);
    is(atomic_load(&g.wq[0].epoch), before, "notifies with nobody armed make no wake-up");
    e = mkrt__waitq_prepare(&g.wq[0]);
    for (int i = 0; i < 8; i++)
        mkrt__waitq_notify(&g.wq[0]);
    is(atomic_load(&g.wq[0].epoch), e + 1, "a burst of 8 notifies after one prepare wakes once");
    /* The waiter woke, found its condition false and prepares again: it
     * reads the moved epoch and arms afresh, so the next notify wakes it. */
    uint32_t e2 = mkrt__waitq_prepare(&g.wq[0]);
    is(e2, e + 1, "the next prepare reads the moved epoch");
    mkrt__waitq_notify(&g.wq[0]);
    is(mkrt__waitq_sleep(&g.wq[0], e2, mkrt__deadline(5000000000u, &ts)), MKRT_OK,
       "... and the next notify wakes it (the arming was not used up)");
    is(mkrt__waitq_sleep(&g.wq[0], e, mkrt__deadline(5000000000u, &ts)), MKRT_OK,
       "a sleep on an epoch read before a wake-up returns at once");
    mkrt__waitq_finish(&g.wq[0]);
    mkrt__waitq_finish(&g.wq[0]);
    is(atomic_load(&g.wq[0].waiters), 0, "both prepares left the queue");
    ok(mkrt__deadline(MKRT_TIMEOUT_INFINITE, &ts) == NULL, "an infinite timeout has no deadline");
    ok(!mkrt__deadline_passed(NULL), "no deadline never passes");
    return done_testing();
}
