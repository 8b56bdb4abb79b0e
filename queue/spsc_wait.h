/* SPDX-License-Identifier: BSD-2-Clause */
/* queue/spsc_wait.h - what the queue layer offers the layers above it
 * beyond the public ring API: a producer's blocking wait for room (the
 * runtime's mkrt_publish backpressure). */
#ifndef MKRT_QUEUE_SPSC_WAIT_H
#define MKRT_QUEUE_SPSC_WAIT_H

#include <time.h>

#include "base/spin_wait.h"
#include "mkrt/ring.h"

/* Waits until the ring has room for at least one item, is closed, or the
 * deadline (absolute, NULL = none) passes: MKRT_OK, MKRT_ECLOSED or
 * MKRT_ETIMEDOUT. Spins first for the caller's adaptive budget, at most
 * cap_ns (0: the short spin alone), then sleeps until the consumer pops.
 * For the producer side of an SPSC ring; the budget is the producer's. */
mkrt_status mkrt__spsc_ring_wait_space(mkrt_spsc_ring *r, mkrt__spin_budget *budget, uint64_t cap_ns,
                                       const struct timespec *deadline);

#endif
