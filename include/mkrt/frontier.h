/* SPDX-License-Identifier: BSD-2-Clause */
/* mkrt/frontier.h - memory envelope of dependency-layered frontier waves.
 *
 * Behaviour (reference: vyre megakernel_frontier):
 *   1. Barrier-plan the waves (mkrt_plan_barriers); its errors come first.
 *   2. group budget = budget_bytes - resident_graph_bytes; when resident
 *      exceeds the budget: MKRT_EBUDGET, "resident graph bytes".
 *   3. Split every barrier group, in order, greedily into chunks whose
 *      fused bytes fit the group budget, fused(w) = frontier + 4 x scratch
 *      + output (the 4 is the fused-wave scratch multiplier). A single wave
 *      that does not fit alone: MKRT_EBUDGET, "single fused frontier wave
 *      bytes". A chunk whose bytes equal the budget stays fused. Every
 *      extra chunk costs one more global barrier.
 *   4. Peaks: the largest per-group sum of frontier, scratch and output
 *      bytes (without the x4), the widest group, and the amortized readback
 *      max(readback_bytes, peak output bytes).
 * All byte arithmetic is checked: MKRT_EOVERFLOW names the field.
 *
 * The plan's barrier arrays live in the barrier scratch (valid until its
 * next use). One thread per scratch at a time.
 */
#ifndef MKRT_FRONTIER_H
#define MKRT_FRONTIER_H

#include <stddef.h>
#include <stdint.h>

#include "mkrt/barrier.h"
#include "mkrt/status.h"
#include "mkrt/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Scratch multiplier of a fused wave. */
#define MKRT_FUSED_SCRATCH_MULTIPLIER 4

typedef struct mkrt_frontier_wave {
    uint64_t frontier_bytes; /* resident frontier bytes the wave touches */
    uint64_t scratch_bytes;  /* temporary bytes before fusion scaling */
    uint64_t output_bytes;   /* bytes the wave produces */
} mkrt_frontier_wave;

typedef struct mkrt_frontier_plan {
    mkrt_barrier_plan barriers; /* after the budget split */
    uint64_t peak_frontier_bytes;
    uint64_t peak_scratch_bytes;
    uint64_t peak_output_bytes;
    uint64_t amortized_readback_bytes;
    size_t max_group_width;
} mkrt_frontier_plan;

/* fused(w) into *bytes; MKRT_EOVERFLOW ("fused wave scratch bytes" or
 * "fused wave bytes") when it does not fit 64 bits; MKRT_EINVAL for NULL. */
mkrt_status mkrt_frontier_fused_wave_bytes(const mkrt_frontier_wave *w, uint64_t *bytes,
                                           mkrt_error *err);

/* MKRT_EINVAL for a NULL scratch or plan, or a NULL array with a count. */
mkrt_status mkrt_plan_frontier_memory(mkrt_barrier_scratch *s, const mkrt_frontier_wave *waves,
                                      size_t wave_count, const mkrt_wave_dep *deps,
                                      size_t dep_count, uint64_t resident_graph_bytes,
                                      uint64_t budget_bytes, uint64_t readback_bytes,
                                      mkrt_frontier_plan *plan, mkrt_error *err);

/* Frontier execution planning: graph bytes from the layout's per-node and
 * per-edge sizes, the memory plan above (readback = the sample's), then
 * mkrt_plan_execution with the three peaks as the wave bytes and the
 * amortized readback in the sample. layout's frontier/scratch/output
 * fields are ignored. MKRT_EINVAL for any NULL pointer but err (and deps
 * or waves when their count is 0). */
mkrt_status mkrt_plan_frontier_execution(mkrt_barrier_scratch *s, const mkrt_exec_sample *sample,
                                         const mkrt_graph_shape *graph,
                                         const mkrt_byte_layout *layout,
                                         const mkrt_frontier_wave *waves, size_t wave_count,
                                         const mkrt_wave_dep *deps, size_t dep_count,
                                         uint64_t budget_bytes, double launch_overhead_ns,
                                         double fusion_pressure, bool device_wide_barrier,
                                         mkrt_exec_plan *execution, mkrt_frontier_plan *plan,
                                         mkrt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_FRONTIER_H */
