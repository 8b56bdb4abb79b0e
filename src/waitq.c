/* src/waitq.c - futex sleeping and deadlines for mkrt__waitq. */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mkrt/ring.h"
#include "waitq.h"

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
    /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline, so
     * spurious returns and retries never stretch the total wait. */
    long rc = syscall(SYS_futex, (uint32_t *)&q->epoch, FUTEX_WAIT_BITSET_PRIVATE, epoch,
                      deadline, NULL, FUTEX_BITSET_MATCH_ANY);
    if (rc != 0 && errno == ETIMEDOUT)
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
