/* SPDX-License-Identifier: BSD-2-Clause */
/* mkrt/priority.h - requeue and aging accounting for prioritised work, the
 * drain advice that keeps its counters from overflowing, and priority
 * diffusion across siblings.
 *
 * Behaviour (reference: vyre PriorityRequeueAccounting):
 *   record_*      saturating counters; max_priority_age = max(age, ...);
 *   try_record_*  the same but MKRT_EOVERFLOW instead of saturating (the
 *                 counter is left unchanged);
 *   drain advice  reason, first match: requeue counter at UINT64_MAX,
 *                 aged counter at UINT64_MAX, requeue headroom <= 1024,
 *                 aged headroom <= 1024, anything non-zero (pending
 *                 telemetry), else none.
 * Plain values: one thread per accounting object.
 */
#ifndef MKRT_PRIORITY_H
#define MKRT_PRIORITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MKRT_PRIORITY_DRAIN_HEADROOM 1024
#define MKRT_PRIORITY_DRAIN_FIX "drain scheduler telemetry before counters reach u64::MAX"

typedef struct mkrt_priority_accounting {
    uint64_t requeue_count;
    uint64_t aged_promotions;
    uint32_t max_priority_age;
} mkrt_priority_accounting;

typedef enum mkrt_drain_reason {
    MKRT_DRAIN_NONE,
    MKRT_DRAIN_PENDING_TELEMETRY,
    MKRT_DRAIN_REQUEUE_NEAR_LIMIT,
    MKRT_DRAIN_AGED_NEAR_LIMIT,
    MKRT_DRAIN_REQUEUE_EXHAUSTED,
    MKRT_DRAIN_AGED_EXHAUSTED
} mkrt_drain_reason;

typedef struct mkrt_drain_recommendation {
    bool should_drain;
    mkrt_drain_reason reason;
    uint64_t requeue_count;
    uint64_t aged_promotions;
    uint32_t max_priority_age;
    uint64_t requeue_counter_headroom;
    uint64_t aged_promotion_counter_headroom;
    const char *fix; /* MKRT_PRIORITY_DRAIN_FIX */
} mkrt_drain_recommendation;

/* record_* ignore a NULL a; try_record_* return MKRT_EINVAL for it. */
void mkrt_priority_record_requeue(mkrt_priority_accounting *a, uint32_t age_ticks);
void mkrt_priority_record_aged_promotion(mkrt_priority_accounting *a, uint32_t age_ticks);
mkrt_status mkrt_priority_try_record_requeue(mkrt_priority_accounting *a, uint32_t age_ticks,
                                             mkrt_error *err);
mkrt_status mkrt_priority_try_record_aged_promotion(mkrt_priority_accounting *a,
                                                    uint32_t age_ticks, mkrt_error *err);
/* A NULL a reads as a zeroed accounting (reason none). */
mkrt_drain_recommendation mkrt_priority_drain_recommendation(const mkrt_priority_accounting *a);
/* "none", "pending_telemetry", "requeue_counter_near_limit", ... */
const char *mkrt_drain_reason_name(mkrt_drain_reason r);

/* `iterations` steps of out[i] = s[i] - damping * restriction[i] * s[i],
 * starting from stalks. out and scratch hold n entries each (caller-owned;
 * no allocation). When restriction_len != n, out is a copy of stalks.
 * A NULL restriction acts as restriction_len 0; NULL stalks or out, or a
 * NULL scratch when it iterates: nothing is written. */
void mkrt_priority_diffuse(const double *stalks, size_t n, const double *restriction,
                           size_t restriction_len, double damping, uint32_t iterations,
                           double *out, double *scratch);

/* --- Continuation tasks (reference: vyre task ring) -------------------- */

typedef enum mkrt_task_state {
    MKRT_TASK_EMPTY,
    MKRT_TASK_READY,
    MKRT_TASK_RUNNING,
    MKRT_TASK_DONE,
    MKRT_TASK_PAUSED,
    MKRT_TASK_YIELDED,
    MKRT_TASK_REQUEUED,
    MKRT_TASK_FAULTED
} mkrt_task_state;

#define MKRT_TASK_FLAG_REQUEUED (1u << 2)

/* Sixteen 32-bit words, in this order. */
typedef struct mkrt_task_item {
    uint32_t state, op, tenant_id, priority, in, out, param, continuation_pc;
    uint32_t continuation_data, resume_epoch, task_id, parent_task_id, age_ticks;
    uint32_t requeue_count, yield_count, flags;
} mkrt_task_item;

/* Marks t requeued: state REQUEUED, requeue_count and age_ticks + 1
 * (saturating), flag bit 2. NULL is ignored. */
void mkrt_task_requeue(mkrt_task_item *t);

typedef struct mkrt_task_snapshot {
    uint32_t ready, yielded, requeued, other;
    uint64_t task_requeues; /* sum of the tasks' requeue_count */
    uint32_t max_age_ticks;
} mkrt_task_snapshot;

/* Counts tasks by state; MKRT_EINVAL names the first task whose state word
 * is not an mkrt_task_state (also for NULL out, or NULL tasks with n > 0). */
mkrt_status mkrt_task_snapshot_take(const mkrt_task_item *tasks, size_t n,
                                    mkrt_task_snapshot *out, mkrt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_PRIORITY_H */
