/* SPDX-License-Identifier: BSD-2-Clause */
/* planlib/src/envelope.h - the frontier envelope both frontier execution
 * planners build on (planners.c, uncached; cached_planners.c, through a
 * plan cache). */
#ifndef MKRT_PLANLIB_ENVELOPE_H
#define MKRT_PLANLIB_ENVELOPE_H

#include <stddef.h>
#include <stdint.h>

#include "mkrt/barrier.h"
#include "mkrt/frontier.h"
#include "mkrt/topology.h"

/* Graph bytes, the frontier memory plan, and the sample and layout the
 * execution planner gets: the amortized readback, the plan's peaks. */
mkrt_status mkrt__pl_envelope(mkrt_barrier_scratch *s, const mkrt_exec_sample *sample, const mkrt_graph_shape *graph,
                              const mkrt_byte_layout *layout, const mkrt_frontier_wave *waves, size_t wave_count,
                              const mkrt_wave_dep *deps, size_t dep_count, uint64_t budget_bytes,
                              mkrt_frontier_plan *plan, mkrt_exec_sample *topo_sample, mkrt_byte_layout *peaks,
                              mkrt_error *err);

#endif
