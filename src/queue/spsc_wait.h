/* SPDX-License-Identifier: BSD-2-Clause */
/* src/queue/spsc_wait.h - what the queue layer offers the layers above it
 * beyond the public ring API: a producer's blocking wait for room (the
 * runtime's mkrt_publish backpressure). */
#ifndef MKRT_QUEUE_SPSC_WAIT_H
#define MKRT_QUEUE_SPSC_WAIT_H

#include <time.h>

#include "mkrt/ring.h"

/* Waits until the ring has room for at least one item, is closed, or the
 * deadline (absolute, NULL = none) passes: MKRT_OK, MKRT_ECLOSED or
 * MKRT_ETIMEDOUT. Spins for spin_ns first (0: the short spin alone), then
 * sleeps until the consumer pops. For the producer side of an SPSC ring. */
mkrt_status mkrt__spsc_ring_wait_space(mkrt_spsc_ring *r, uint64_t spin_ns,
                                       const struct timespec *deadline);

#endif
