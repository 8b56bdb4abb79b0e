/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/arms.c - ARMS, the plan's decision to skip redundant arms
 * (plan/decide.h), run by the dedupe stage (pipeline/prune.c) before its
 * prune-and-level pass, which skips what it marks.
 *
 * The seed's rule (vyre-semantics.md 5.7, detect_cross_arm_redundancy):
 * split the work into arms; an item whose (op, in, out) - param ignored -
 * was first seen in an earlier arm is redundant. Here an arm is one
 * producer's contiguous run of the batch (a segment, pipeline/batch.h),
 * and the emitted items drained first are one more; arms are numbered in
 * drain order, so "an earlier arm" is earlier in the order the contract
 * runs the batch in. mkrt_dedupe_cross_arm gives the candidates. A
 * candidate is marked, and the dedupe stage's prune-and-level pass
 * (pipeline/layer.c) does not run it where the ordering contract allows
 * (mkrt__decide_arm_covered): the last kept item before it that wrote its
 * out has its op and in, nothing wrote its in in between, and that item's
 * effect covers its own. Exact duplicates (param equal too) stay the
 * dedupe's rule, counted there.
 *
 * Cost: nothing for a batch with one arm, a frontier round, a batch with
 * refused items (admission moved items across arm boundaries: it runs
 * whole), or one without an op ARMS could ever skip (NOP, MIN, RELAX,
 * OR) among the items it would look at: a scan of their ops; nor a batch
 * where looking does not pay
 * (mkrt__decide_arms_look: the detector's measured cost against the
 * dispatching thread's measured slack, or against what its yield saves
 * a one-thread run; batch 1 and every 64th are probed all the same, the
 * detector on a sample of 4096 items: the first items of every arm). Otherwise one pass of the
 * detector's hash table over the batch (measured); the legality check is
 * a branch of the levelling pass, taken by marked items only. */
#include "pipeline/stages.h"
#include "pipeline/dispatch.h"

/* The ops ARMS could skip (mkrt__decide_arm_covered is true for some
 * params). */
#define COVERABLE_OPS (1u << MKRT_OP_NOP | 1u << MKRT_OP_MIN | 1u << MKRT_OP_RELAX | 1u << MKRT_OP_OR)

bool mkrt__arm_covered(const mkrt_item *early, const mkrt_item *late)
{
    return mkrt__decide_arm_covered(late->op, early->param, late->param);
}

static bool any_coverable(const mkrt_item *items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (items[i].op < 32 && (COVERABLE_OPS >> items[i].op & 1u))
            return true;
    return false;
}

/* The arms of b (emitted items, then its segments) into s; returns how
 * many. With look < b->n (a probe), every arm is cut to its first
 * look / arms items (at least one): a sample of every arm. */
static size_t arms_of(const mkrt__batch *b, mkrt__dispatch_scratch *s, size_t arms, size_t look)
{
    size_t na = 0, quota = look < b->n ? look / arms : b->n;
    quota = quota > 0 ? quota : 1;
    if (b->emitted_n > 0) {
        s->arm[na] = b->items;
        s->arm_len[na++] = b->emitted_n < quota ? b->emitted_n : quota;
    }
    for (size_t k = 0; k < b->nseg; k++) {
        size_t end = k + 1 < b->nseg ? b->segs[k + 1].at : b->n, len = end - b->segs[k].at;
        s->arm[na] = b->items + b->segs[k].at;
        s->arm_len[na++] = len < quota ? len : quota;
    }
    return na;
}

/* The index in b->items of report pair k. */
static size_t marked_at(const mkrt__dispatch_scratch *s, const mkrt__batch *b, size_t k)
{
    return (size_t)(s->arm[s->pairs[k].late_arm] - b->items) + s->pairs[k].index_in_late_arm;
}

const uint8_t *mkrt__stage_arms(mkrt__dispatch *dp, mkrt__batch *b, bool known_empty)
{
    const size_t n = b->admitted;
    const size_t arms = b->nseg + (b->emitted_n > 0);
    mkrt__dispatch_scratch *s = dp->scratch;
    s->marked = 0;
    s->looked = 0;
    if ((dp->planner.off & MKRT_PLAN_ARMS) || b->source->made || arms < 2 || n != b->n)
        return NULL;
    /* The plan cache: the detector found nothing in the last batch of
     * this shape; only ARMS's probes look (the load may have changed). */
    if (known_empty && b->seq % MKRT__ARMS_PROBE != 1)
        return NULL;
    const size_t look = (size_t)mkrt__decide_arms_look(&dp->planner.costs, n, b->seq);
    /* No op it could skip among the items it would look at (the first
     * `look` of a probe stand for the batch): nothing to do. */
    if (look == 0 || !any_coverable(b->items, look))
        return NULL;
    const uint64_t t0 = mkrt__now_ns();
    mkrt_error err;
    /* Grown to a power of two at least n (so a growing load reallocates
     * a few times, then never). Out of memory anywhere: every item runs
     * (legal, only slower). */
    size_t cap = 64;
    while (cap < n) /* n, not look: the levelling pass reads mark[0..n) */
        cap *= 2;
    if (mkrt__dispatch_scratch_reserve_arms(s, cap, arms, &err) != MKRT_OK)
        return NULL;
    size_t na = arms_of(b, s, arms, look);
    mkrt_cross_arm_report rep = {s->pairs, s->item_cap, 0};
    b->note.arms = (uint32_t)na;
    s->looked = 0;
    for (size_t a = 0; a < na; a++)
        s->looked += s->arm_len[a];
    if (mkrt_dedupe_cross_arm(s->dedupe, s->arm, s->arm_len, na, &rep, &err) != MKRT_OK)
        rep.count = 0;
    s->marked = rep.count < rep.capacity ? rep.count : rep.capacity;
    for (size_t k = 0; k < s->marked; k++)
        s->mark[marked_at(s, b, k)] = 1;
    const uint64_t spent = mkrt__now_ns() - t0;
    dp->planner.costs.arms_pending_ns = spent;
    mkrt__ema_add(&dp->planner.costs.arms_ns_item, (double)spent / (double)s->looked);
    return s->marked > 0 ? s->mark : NULL;
}

void mkrt__stage_arms_end(mkrt__dispatch *dp, mkrt__batch *b, size_t skipped)
{
    mkrt__dispatch_scratch *s = dp->scratch;
    /* The marks go back to zero for the next batch (only those set). */
    for (size_t k = 0; k < s->marked; k++)
        s->mark[marked_at(s, b, k)] = 0;
    s->marked = 0;
    if (s->looked > 0)
        mkrt__ema_add(&dp->planner.costs.arms_yield, (double)skipped / (double)s->looked);
    s->looked = 0;
    if (skipped > 0) {
        b->note.arm_skipped = (uint32_t)skipped;
        mkrt__planner_count(&dp->planner, MKRT_PLAN_N_ARMS_SKIPPED, skipped);
    }
}
