/* SPDX-License-Identifier: BSD-2-Clause */
/* base/waitq.c - futex sleeping and deadlines for mkrt__waitq. */
#include <errno.h>
#include <stdlib.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mkrt/ring.h"
#include "base/thread.h"
#include "base/waitq.h"

int mkrt__waitq_asymmetric;
static mkrt__once_flag protocol_once = MKRT__ONCE_INIT;

static void pick_protocol(void)
{
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
        mkrt__waitq_asymmetric = 1;
#ifdef MKRT_TEST_HOOKS
    /* Test builds only: MKRT_WAITQ_SYMMETRIC=1 forces the symmetric
     * (fence) protocol, so `make check` runs the tests under both. */
    const char *force = getenv("MKRT_WAITQ_SYMMETRIC");
    if (force != NULL && force[0] == '1')
        mkrt__waitq_asymmetric = 0;
#endif
}

void mkrt__waitq_init(mkrt__waitq *q)
{
    mkrt__call_once(&protocol_once, pick_protocol);
    memset(q, 0, sizeof *q);
    q->asymmetric = (uint32_t)mkrt__waitq_asymmetric;
}

void mkrt__waitq_init_symmetric(mkrt__waitq *q)
{
    memset(q, 0, sizeof *q);
}

uint32_t mkrt__waitq_prepare(mkrt__waitq *q)
{
    /* The epoch first, then arming: a notify that takes this arming bumps
     * the epoch past the value read here, so the sleep below cannot miss
     * it. acquire: pairs with the release increment in
     * mkrt__waitq_wake_all (and keeps the arming after it). */
    uint32_t epoch = atomic_load_explicit(&q->epoch, memory_order_acquire);
    if (q->asymmetric) {
        /* relaxed (both): ordered by the membarrier that follows (protocol 1). */
        atomic_fetch_add_explicit(&q->waiters, 1, memory_order_relaxed);
        atomic_store_explicit(&q->armed, 1, memory_order_relaxed);
        if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
            /* Cannot happen once registration succeeded; if the kernel
             * refuses anyway, wait in short slices rather than risk a lost
             * wake-up (mkrt__waitq_sleep caps the slice). */
            atomic_store_explicit(&q->epoch_unreliable, 1, memory_order_relaxed);
        }
    } else {
        /* relaxed (both): ordered by the fence that follows (protocol 2). */
        atomic_fetch_add_explicit(&q->waiters, 1, memory_order_relaxed);
        atomic_store_explicit(&q->armed, 1, memory_order_relaxed);
        /* seq_cst fence: pairs with the fence in mkrt__waitq_notify. */
        atomic_thread_fence(memory_order_seq_cst);
    }
    return epoch;
}

void mkrt__waitq_wake_all(mkrt__waitq *q)
{
    /* release: pairs with the acquire load of epoch in mkrt__waitq_prepare. */
    atomic_fetch_add_explicit(&q->epoch, 1, memory_order_release);
    syscall(SYS_futex, (uint32_t *)&q->epoch, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

mkrt_status mkrt__waitq_sleep(mkrt__waitq *q, uint32_t epoch, const struct timespec *deadline)
{
    if (deadline != NULL && mkrt__deadline_passed(deadline))
        return MKRT_ETIMEDOUT;
    const struct timespec *requested = deadline;
    struct timespec slice;
    /* relaxed: a sticky diagnostic flag, see mkrt__waitq_prepare. */
    if (atomic_load_explicit(&q->epoch_unreliable, memory_order_relaxed)) {
        slice = *mkrt__deadline(1000000, &slice); /* 1 ms */
        if (deadline == NULL || slice.tv_sec < deadline->tv_sec ||
            (slice.tv_sec == deadline->tv_sec && slice.tv_nsec < deadline->tv_nsec))
            deadline = &slice;
    }
    /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline, so
     * spurious returns and retries never stretch the total wait. */
    long rc = syscall(SYS_futex, (uint32_t *)&q->epoch, FUTEX_WAIT_BITSET_PRIVATE, epoch,
                      deadline, NULL, FUTEX_BITSET_MATCH_ANY);
    if (rc != 0 && errno == ETIMEDOUT && mkrt__deadline_passed(requested))
        return MKRT_ETIMEDOUT;
    return MKRT_OK; /* woken, EAGAIN (epoch moved) or EINTR: caller re-checks */
}

uint64_t mkrt__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const struct timespec *mkrt__deadline(uint64_t timeout_ns, struct timespec *buf)
{
    if (timeout_ns == MKRT_TIMEOUT_INFINITE)
        return NULL;
    uint64_t now = mkrt__now_ns();
    uint64_t at = now + timeout_ns;
    if (at < now) /* saturate: effectively infinite */
        return NULL;
    buf->tv_sec = (time_t)(at / 1000000000u);
    buf->tv_nsec = (long)(at % 1000000000u);
    return buf;
}

int mkrt__deadline_passed(const struct timespec *deadline)
{
    if (deadline == NULL)
        return 0;
    uint64_t at = (uint64_t)deadline->tv_sec * 1000000000u + (uint64_t)deadline->tv_nsec;
    return mkrt__now_ns() >= at;
}
