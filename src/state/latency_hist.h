/* SPDX-License-Identifier: BSD-2-Clause */
/* src/state/latency_hist.h - log-linear latency histogram: one writer, readers
 * take snapshots at any time. 16 sub-buckets per power of two: a reported
 * percentile is within 6.25% of the true value. */
#ifndef MKRT_SRC_LATENCY_HIST_H
#define MKRT_SRC_LATENCY_HIST_H

#include <stdatomic.h>
#include <stdint.h>

#define MKRT_HIST_BUCKETS (16 * 60)

typedef struct mkrt__latency_hist {
    _Atomic uint64_t counts[MKRT_HIST_BUCKETS];
    _Atomic uint64_t samples;
} mkrt__latency_hist;

/* Single writer. */
void mkrt__hist_record(mkrt__latency_hist *h, uint64_t ns, uint64_t weight);
/* The value below which `permille` thousandths of the samples lie (the
 * bucket's upper bound); 0 without samples. */
uint64_t mkrt__hist_percentile(const mkrt__latency_hist *h, unsigned permille_x10);

#endif
