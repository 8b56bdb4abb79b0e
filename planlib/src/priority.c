/* SPDX-License-Identifier: BSD-2-Clause */
/* planlib/src/priority.c - requeue/aging accounting, drain advice, diffusion. */
#include <string.h>

#include "planlib_base.h"
#include "mkrt_planlib/priority.h"

static void note_age(mkrt_priority_accounting *a, uint32_t age)
{
    if (age > a->max_priority_age)
        a->max_priority_age = age;
}

static mkrt_status null_accounting(mkrt_error *err, const char *fn)
{
    return mkrt__pl_error_set(err, MKRT_EINVAL,
                           "%s got a NULL accounting object. Fix: pass the "
                           "mkrt_priority_accounting to update.",
                           fn);
}

void mkrt_priority_record_requeue(mkrt_priority_accounting *a, uint32_t age_ticks)
{
    if (a == NULL)
        return;
    if (a->requeue_count != UINT64_MAX)
        a->requeue_count++;
    note_age(a, age_ticks);
}

void mkrt_priority_record_aged_promotion(mkrt_priority_accounting *a, uint32_t age_ticks)
{
    if (a == NULL)
        return;
    if (a->aged_promotions != UINT64_MAX)
        a->aged_promotions++;
    note_age(a, age_ticks);
}

mkrt_status mkrt_priority_try_record_requeue(mkrt_priority_accounting *a, uint32_t age_ticks,
                                             mkrt_error *err)
{
    if (a == NULL)
        return null_accounting(err, "mkrt_priority_try_record_requeue");
    if (a->requeue_count == UINT64_MAX)
        return mkrt__pl_error_set(err, MKRT_EOVERFLOW,
                               "megakernel priority requeue_count overflowed u64. Fix: "
                               MKRT_PRIORITY_DRAIN_FIX ".");
    a->requeue_count++;
    note_age(a, age_ticks);
    return MKRT_OK;
}

mkrt_status mkrt_priority_try_record_aged_promotion(mkrt_priority_accounting *a,
                                                    uint32_t age_ticks, mkrt_error *err)
{
    if (a == NULL)
        return null_accounting(err, "mkrt_priority_try_record_aged_promotion");
    if (a->aged_promotions == UINT64_MAX)
        return mkrt__pl_error_set(err, MKRT_EOVERFLOW,
                               "megakernel aged_promotions overflowed u64. Fix: "
                               MKRT_PRIORITY_DRAIN_FIX ".");
    a->aged_promotions++;
    note_age(a, age_ticks);
    return MKRT_OK;
}

mkrt_drain_recommendation mkrt_priority_drain_recommendation(const mkrt_priority_accounting *a)
{
    static const mkrt_priority_accounting none = {0, 0, 0};
    if (a == NULL)
        a = &none;
    mkrt_drain_recommendation d;
    d.requeue_counter_headroom = UINT64_MAX - a->requeue_count;
    d.aged_promotion_counter_headroom = UINT64_MAX - a->aged_promotions;
    if (a->requeue_count == UINT64_MAX)
        d.reason = MKRT_DRAIN_REQUEUE_EXHAUSTED;
    else if (a->aged_promotions == UINT64_MAX)
        d.reason = MKRT_DRAIN_AGED_EXHAUSTED;
    else if (d.requeue_counter_headroom <= MKRT_PRIORITY_DRAIN_HEADROOM)
        d.reason = MKRT_DRAIN_REQUEUE_NEAR_LIMIT;
    else if (d.aged_promotion_counter_headroom <= MKRT_PRIORITY_DRAIN_HEADROOM)
        d.reason = MKRT_DRAIN_AGED_NEAR_LIMIT;
    else if (a->requeue_count || a->aged_promotions || a->max_priority_age)
        d.reason = MKRT_DRAIN_PENDING_TELEMETRY;
    else
        d.reason = MKRT_DRAIN_NONE;
    d.should_drain = d.reason != MKRT_DRAIN_NONE;
    d.requeue_count = a->requeue_count;
    d.aged_promotions = a->aged_promotions;
    d.max_priority_age = a->max_priority_age;
    d.fix = MKRT_PRIORITY_DRAIN_FIX;
    return d;
}

const char *mkrt_drain_reason_name(mkrt_drain_reason r)
{
    static const char *const n[] = {"none",
                                    "pending_telemetry",
                                    "requeue_counter_near_limit",
                                    "aged_promotion_counter_near_limit",
                                    "requeue_counter_exhausted",
                                    "aged_promotion_counter_exhausted"};
    return (unsigned)r < 6 ? n[r] : "unknown";
}

void mkrt_priority_diffuse(const double *stalks, size_t n, const double *restriction,
                           size_t restriction_len, double damping, uint32_t iterations,
                           double *out, double *scratch)
{
    if (n == 0 || stalks == NULL || out == NULL || n > SIZE_MAX / sizeof *out)
        return;
    bool iterate = restriction_len == n && iterations != 0 && restriction != NULL;
    if (iterate && scratch == NULL)
        return;
    memmove(out, stalks, n * sizeof *out);
    if (!iterate)
        return;
    double *cur = out, *next = scratch;
    for (uint32_t it = 0; it < iterations; it++) {
        for (size_t i = 0; i < n; i++)
            next[i] = cur[i] - damping * restriction[i] * cur[i];
        double *t = cur;
        cur = next;
        next = t;
    }
    if (cur != out)
        memcpy(out, cur, n * sizeof *out);
}

void mkrt_task_requeue(mkrt_task_item *t)
{
    if (t == NULL)
        return;
    t->state = MKRT_TASK_REQUEUED;
    if (t->requeue_count != UINT32_MAX)
        t->requeue_count++;
    if (t->age_ticks != UINT32_MAX)
        t->age_ticks++;
    t->flags |= MKRT_TASK_FLAG_REQUEUED;
}

mkrt_status mkrt_task_snapshot_take(const mkrt_task_item *tasks, size_t n,
                                    mkrt_task_snapshot *out, mkrt_error *err)
{
    if (out == NULL || (tasks == NULL && n > 0))
        return mkrt__pl_error_set(err, MKRT_EINVAL,
                               "mkrt_task_snapshot_take got a NULL %s (%zu tasks). Fix: pass "
                               "valid pointers.",
                               out == NULL ? "snapshot" : "task array", n);
    mkrt_task_snapshot s = {0, 0, 0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        const mkrt_task_item *t = &tasks[i];
        switch (t->state) {
        case MKRT_TASK_READY: s.ready++; break;
        case MKRT_TASK_YIELDED: s.yielded++; break;
        case MKRT_TASK_REQUEUED: s.requeued++; break;
        case MKRT_TASK_EMPTY:
        case MKRT_TASK_RUNNING:
        case MKRT_TASK_DONE:
        case MKRT_TASK_PAUSED:
        case MKRT_TASK_FAULTED: s.other++; break;
        default:
            return mkrt__pl_error_set(err, MKRT_EINVAL,
                                   "megakernel task %zu (id %u) has unknown state word %u. Fix: "
                                   "write one of the 8 task states (0..7) before snapshotting.",
                                   i, t->task_id, t->state);
        }
        s.task_requeues += t->requeue_count;
        if (t->age_ticks > s.max_age_ticks)
            s.max_age_ticks = t->age_ticks;
    }
    *out = s;
    return MKRT_OK;
}
