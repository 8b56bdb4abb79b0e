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

void mkrt_priority_record_requeue(mkrt_priority_accounting *a, uint32_t age_ticks);
void mkrt_priority_record_aged_promotion(mkrt_priority_accounting *a, uint32_t age_ticks);
mkrt_status mkrt_priority_try_record_requeue(mkrt_priority_accounting *a, uint32_t age_ticks,
                                             mkrt_error *err);
mkrt_status mkrt_priority_try_record_aged_promotion(mkrt_priority_accounting *a,
                                                    uint32_t age_ticks, mkrt_error *err);
mkrt_drain_recommendation mkrt_priority_drain_recommendation(const mkrt_priority_accounting *a);
/* "none", "pending_telemetry", "requeue_counter_near_limit", ... */
const char *mkrt_drain_reason_name(mkrt_drain_reason r);

/* `iterations` steps of out[i] = s[i] - damping * restriction[i] * s[i],
 * starting from stalks. out and scratch hold n entries each (caller-owned;
 * no allocation). When restriction_len != n, out is a copy of stalks. */
void mkrt_priority_diffuse(const double *stalks, size_t n, const double *restriction,
                           size_t restriction_len, double damping, uint32_t iterations,
                           double *out, double *scratch);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_PRIORITY_H */
