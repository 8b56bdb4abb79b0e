/* SPDX-License-Identifier: BSD-2-Clause */
/* src/state/stats.h - the stats group of the runtime: counters the
 * dispatcher writes (mkrt__stat_add, state.h) and mkrt_stats reads, and
 * the publish-to-completion latency histogram. */
#ifndef MKRT_STATE_STATS_H
#define MKRT_STATE_STATS_H

#include <stdatomic.h>
#include <stdint.h>

#include "state/latency_hist.h"

typedef struct mkrt__stats {
    /* Written by the dispatcher only; read by stats. */
    _Atomic uint64_t executed, pruned, failed, batches, layers, barriers, high_water;
    _Atomic uint64_t dead_dropped;
    _Atomic uint64_t device_batches, device_failures; /* batches run on, failures of the device */
    mkrt__latency_hist latency;
} mkrt__stats;

#endif
