/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt_planlib/priority.h
 * @brief Requeue and aging accounting for prioritised work, the drain
 * advice that keeps its counters from overflowing, priority diffusion
 * across siblings, and continuation task records.
 *
 * Behaviour (reference: vyre PriorityRequeueAccounting):
 * - record_*: saturating counters; max_priority_age = max(age, ...);
 * - try_record_*: the same but ::MKRT_EOVERFLOW instead of saturating (the
 *   counter is left unchanged);
 * - drain advice: reason, first match: requeue counter at UINT64_MAX, aged
 *   counter at UINT64_MAX, requeue headroom <= 1024, aged headroom <= 1024,
 *   anything non-zero (pending telemetry), else none.
 *
 * Plain values: one thread per accounting object (or per task array) at a
 * time; the functions keep no other state.
 */
#ifndef MKRT_PLANLIB_PRIORITY_H
#define MKRT_PLANLIB_PRIORITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Counter headroom at or below which draining is advised. */
#define MKRT_PRIORITY_DRAIN_HEADROOM 1024
/** @brief The fix text of every drain recommendation and counter overflow message. */
#define MKRT_PRIORITY_DRAIN_FIX "drain scheduler telemetry before counters reach u64::MAX"

/** @brief Requeue and aging counters of prioritised work; zero-initialise it. */
typedef struct mkrt_priority_accounting {
    uint64_t requeue_count;    /**< Requeues recorded. */
    uint64_t aged_promotions;  /**< Aged promotions recorded. */
    uint32_t max_priority_age; /**< Largest age_ticks recorded. */
} mkrt_priority_accounting;

/** @brief Why draining the accounting is advised. */
typedef enum mkrt_drain_reason {
    MKRT_DRAIN_NONE,              /**< All counters are zero ("none"). */
    MKRT_DRAIN_PENDING_TELEMETRY, /**< Some counter is non-zero ("pending_telemetry"). */
    MKRT_DRAIN_REQUEUE_NEAR_LIMIT, /**< Requeue headroom <= 1024 ("requeue_counter_near_limit"). */
    MKRT_DRAIN_AGED_NEAR_LIMIT,   /**< Aged-promotion headroom <= 1024 ("aged_promotion_counter_near_limit"). */
    MKRT_DRAIN_REQUEUE_EXHAUSTED, /**< Requeue counter at UINT64_MAX ("requeue_counter_exhausted"). */
    MKRT_DRAIN_AGED_EXHAUSTED     /**< Aged-promotion counter at UINT64_MAX ("aged_promotion_counter_exhausted"). */
} mkrt_drain_reason;

/** @brief Drain advice for an accounting object (mkrt_priority_drain_recommendation()). */
typedef struct mkrt_drain_recommendation {
    bool should_drain;                        /**< reason != ::MKRT_DRAIN_NONE. */
    mkrt_drain_reason reason;                 /**< First matching reason (see the file overview). */
    uint64_t requeue_count;                   /**< The accounting's requeue count. */
    uint64_t aged_promotions;                 /**< The accounting's aged promotions. */
    uint32_t max_priority_age;                /**< The accounting's largest age. */
    uint64_t requeue_counter_headroom;        /**< UINT64_MAX - requeue_count. */
    uint64_t aged_promotion_counter_headroom; /**< UINT64_MAX - aged_promotions. */
    const char *fix; /**< ::MKRT_PRIORITY_DRAIN_FIX. */
} mkrt_drain_recommendation;

/**
 * @brief Records a requeue: requeue_count + 1 (saturating), age noted.
 * @param a The accounting; NULL is ignored.
 * @param age_ticks Age of the requeued work; raises max_priority_age.
 * @par Thread safety
 * One thread per accounting object.
 */
void mkrt_priority_record_requeue(mkrt_priority_accounting *a, uint32_t age_ticks);
/**
 * @brief Records an aged promotion: aged_promotions + 1 (saturating), age noted.
 * @param a The accounting; NULL is ignored.
 * @param age_ticks Age of the promoted work; raises max_priority_age.
 * @par Thread safety
 * One thread per accounting object.
 */
void mkrt_priority_record_aged_promotion(mkrt_priority_accounting *a, uint32_t age_ticks);
/**
 * @brief Records a requeue, failing instead of saturating.
 * @param a The accounting.
 * @param age_ticks Age of the requeued work.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Recorded.
 * @retval MKRT_EINVAL a is NULL.
 * @retval MKRT_EOVERFLOW requeue_count is at UINT64_MAX; nothing changed.
 * @return The status, as listed.
 * @par Thread safety
 * One thread per accounting object.
 */
mkrt_status mkrt_priority_try_record_requeue(mkrt_priority_accounting *a, uint32_t age_ticks,
                                             mkrt_error *err);
/**
 * @brief Records an aged promotion, failing instead of saturating.
 * @param a The accounting.
 * @param age_ticks Age of the promoted work.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Recorded.
 * @retval MKRT_EINVAL a is NULL.
 * @retval MKRT_EOVERFLOW aged_promotions is at UINT64_MAX; nothing changed.
 * @return The status, as listed.
 * @par Thread safety
 * One thread per accounting object.
 */
mkrt_status mkrt_priority_try_record_aged_promotion(mkrt_priority_accounting *a,
                                                    uint32_t age_ticks, mkrt_error *err);
/**
 * @brief Drain advice for an accounting object.
 * @param a The accounting; NULL reads as a zeroed one (reason none).
 * @return The advice, by value.
 * @par Thread safety
 * Any thread that may read a.
 */
mkrt_drain_recommendation mkrt_priority_drain_recommendation(const mkrt_priority_accounting *a);
/**
 * @brief Name of a drain reason.
 * @param r The reason.
 * @return A static string ("none", "pending_telemetry",
 *         "requeue_counter_near_limit", ...; see ::mkrt_drain_reason), or
 *         "unknown" outside the enum.
 * @par Thread safety
 * Any thread.
 */
const char *mkrt_drain_reason_name(mkrt_drain_reason r);

/**
 * @brief Priority diffusion across siblings.
 *
 * `iterations` steps of out[i] = s[i] - damping * restriction[i] * s[i],
 * starting from stalks. When restriction_len != n (a NULL restriction acts
 * as restriction_len 0) or iterations is 0, out is a copy of stalks. No
 * allocation.
 *
 * @param stalks n starting values; may be the same array as out.
 * @param n Number of values.
 * @param restriction Per-value restriction, restriction_len entries.
 * @param restriction_len Entries in restriction.
 * @param damping Damping factor.
 * @param iterations Number of steps.
 * @param[out] out n entries (caller-owned).
 * @param scratch n entries of working memory (caller-owned); needed only
 *        when it iterates.
 * @note Nothing is written when n is 0, stalks or out is NULL, or scratch
 *       is NULL when it iterates.
 * @par Thread safety
 * Any thread (pure); the arrays must not be in use by another thread.
 */
void mkrt_priority_diffuse(const double *stalks, size_t n, const double *restriction,
                           size_t restriction_len, double damping, uint32_t iterations,
                           double *out, double *scratch);

/* --- Continuation tasks (reference: vyre task ring) -------------------- */

/** @brief State word of an ::mkrt_task_item. */
typedef enum mkrt_task_state {
    MKRT_TASK_EMPTY,    /**< Slot holds no task. */
    MKRT_TASK_READY,    /**< Ready to run. */
    MKRT_TASK_RUNNING,  /**< Running. */
    MKRT_TASK_DONE,     /**< Finished. */
    MKRT_TASK_PAUSED,   /**< Paused. */
    MKRT_TASK_YIELDED,  /**< Yielded; will run again. */
    MKRT_TASK_REQUEUED, /**< Requeued (mkrt_task_requeue()). */
    MKRT_TASK_FAULTED   /**< Failed. */
} mkrt_task_state;

/** @brief Bit of ::mkrt_task_item::flags set by mkrt_task_requeue(). */
#define MKRT_TASK_FLAG_REQUEUED (1u << 2)

/**
 * @brief A continuation task record: sixteen 32-bit words, in this order.
 *
 * mkrt reads state, task_id, age_ticks and requeue_count, and
 * mkrt_task_requeue() writes state, requeue_count, age_ticks and flags; the
 * other words are carried for the caller.
 */
typedef struct mkrt_task_item {
    uint32_t state, op, tenant_id, priority, in, out, param, continuation_pc;
    uint32_t continuation_data, resume_epoch, task_id, parent_task_id, age_ticks;
    uint32_t requeue_count, yield_count, flags;
    /** @var state
     *  @brief An ::mkrt_task_state value. */
    /** @var op
     *  @brief Operation word. */
    /** @var tenant_id
     *  @brief Tenant id. */
    /** @var priority
     *  @brief Priority word. */
    /** @var in
     *  @brief Input handle. */
    /** @var out
     *  @brief Output handle. */
    /** @var param
     *  @brief Operation argument. */
    /** @var continuation_pc
     *  @brief Continuation program counter. */
    /** @var continuation_data
     *  @brief Continuation data word. */
    /** @var resume_epoch
     *  @brief Resume epoch. */
    /** @var task_id
     *  @brief The task's id (named in snapshot errors). */
    /** @var parent_task_id
     *  @brief Parent task id. */
    /** @var age_ticks
     *  @brief Age in scheduler ticks (saturating in mkrt_task_requeue()). */
    /** @var requeue_count
     *  @brief Times requeued (saturating in mkrt_task_requeue()). */
    /** @var yield_count
     *  @brief Yield count. */
    /** @var flags
     *  @brief Flag bits, such as ::MKRT_TASK_FLAG_REQUEUED. */
} mkrt_task_item;

/**
 * @brief Marks a task requeued.
 *
 * state = ::MKRT_TASK_REQUEUED, requeue_count and age_ticks + 1
 * (saturating), flag bit ::MKRT_TASK_FLAG_REQUEUED set.
 *
 * @param t The task; NULL is ignored.
 * @par Thread safety
 * One thread per task record.
 */
void mkrt_task_requeue(mkrt_task_item *t);

/** @brief Task counts by state (mkrt_task_snapshot_take()). */
typedef struct mkrt_task_snapshot {
    uint32_t ready, yielded, requeued, other;
    uint64_t task_requeues; /**< Sum of the tasks' requeue_count. */
    uint32_t max_age_ticks; /**< Largest age_ticks of any task. */
    /** @var ready
     *  @brief Tasks in ::MKRT_TASK_READY. */
    /** @var yielded
     *  @brief Tasks in ::MKRT_TASK_YIELDED. */
    /** @var requeued
     *  @brief Tasks in ::MKRT_TASK_REQUEUED. */
    /** @var other
     *  @brief Tasks in any other valid state (EMPTY slots included). */
} mkrt_task_snapshot;

/**
 * @brief Counts tasks by state.
 * @param tasks n task records; may be NULL when n is 0.
 * @param n Number of records.
 * @param[out] out The snapshot; written only on success.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK `*out` is set.
 * @retval MKRT_EINVAL out is NULL, tasks is NULL with n > 0, or a task's
 *         state word is not an ::mkrt_task_state (the message names the
 *         first such task by index and id).
 * @return The status, as listed.
 * @par Thread safety
 * Any thread; the records must not change meanwhile.
 */
mkrt_status mkrt_task_snapshot_take(const mkrt_task_item *tasks, size_t n,
                                    mkrt_task_snapshot *out, mkrt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_PRIORITY_H */
