/* SPDX-License-Identifier: BSD-2-Clause */
/* mkrt/barrier.h - minimum global barriers for a wave dependency DAG.
 *
 * Behaviour (reference: vyre megakernel_barrier): Kahn layering of the
 * waves 0..wave_count-1 under the dependencies (before -> after). Each
 * layer ("group") holds waves whose dependencies are all in earlier groups;
 * groups run back to back with one global barrier between two groups, so
 * global_barriers = group_count - 1 (0 for an empty plan). The first group
 * lists the waves without dependencies in ascending order; every later
 * group lists waves in the order they became ready (walking the previous
 * group in order, and each wave's targets in input order) - not sorted.
 * With no dependencies, one group holds every wave.
 *
 * Errors, checked edge by edge in input order:
 *   MKRT_EINVAL    an endpoint >= wave_count (also any edge when
 *                  wave_count is 0), or a self dependency (before == after,
 *                  checked after the range check of that edge);
 *   MKRT_ECYCLE    the graph has a cycle; the message gives the number of
 *                  waves that could not be scheduled;
 *   MKRT_EOVERFLOW a counter or offset overflowed (the message names it);
 *   MKRT_ENOMEM    scratch growth failed (the message names the array).
 *
 * Scratch: CSR adjacency (offsets + targets, the per-wave counts reused as
 * the write cursor) and the result arrays, owned by the caller and reused;
 * capacities only grow. Plans point into the scratch and stay valid until
 * its next use. One thread per scratch at a time.
 */
#ifndef MKRT_BARRIER_H
#define MKRT_BARRIER_H

#include <stddef.h>
#include <stdint.h>

#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mkrt_wave_dep {
    size_t before; /* must finish ... */
    size_t after;  /* ... before this wave starts */
} mkrt_wave_dep;

typedef struct mkrt_barrier_plan {
    size_t wave_count;
    size_t group_count;
    size_t global_barriers;      /* group_count - 1, or 0 */
    const size_t *group_offsets; /* group_count + 1 entries into waves */
    const size_t *waves;         /* wave indices, group by group */
} mkrt_barrier_plan;

typedef struct mkrt_barrier_scratch mkrt_barrier_scratch;

/* Scratch pre-sized for the given shape (0, 0 is fine: it grows on use).
 * NULL with MKRT_EOVERFLOW or MKRT_ENOMEM in err when it cannot be sized. */
mkrt_barrier_scratch *mkrt_barrier_scratch_create(size_t wave_capacity, size_t dep_capacity,
                                                  mkrt_error *err);
/* NULL is ignored. */
void mkrt_barrier_scratch_destroy(mkrt_barrier_scratch *s);
/* Capacities; 0 for a NULL scratch. */
size_t mkrt_barrier_scratch_wave_capacity(const mkrt_barrier_scratch *s);
size_t mkrt_barrier_scratch_dependency_capacity(const mkrt_barrier_scratch *s);

/* MKRT_EINVAL for a NULL scratch or plan, or NULL deps with dep_count > 0. */
mkrt_status mkrt_plan_barriers(mkrt_barrier_scratch *s, size_t wave_count,
                               const mkrt_wave_dep *deps, size_t dep_count,
                               mkrt_barrier_plan *plan, mkrt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_BARRIER_H */
