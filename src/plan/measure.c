/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/measure.c - the planner's side of the data path: what the
 * dispatching thread measures (costs, ring occupancy) and records (the
 * EXPLAIN ring), around the pure rules of decide.c. The frontier levels'
 * decisions (PULL, QUEUE) are the graph engine's (its round.c),
 * which calls the same pure rules. */
#include <string.h>

#include "plan/batch.h"
#include "plan/source.h"
#include "plan/decide.h"
#include "base/waitq.h"

/* Fewer items than this make a CPU cost sample mostly clock reads. */
#define COST_MIN_ITEMS 16u

void mkrt__plan_measured(mkrt__planner *p, mkrt__batch *b, bool cpu, uint64_t ns)
{
    b->note.run_ns = ns;
    /* Classes: what a bulk batch from the rings costs per item drained
     * (its ops, and what the emitted items it took run, as a stream's
     * repair). */
    if (b->klass == MKRT_CLASS_BULK && !b->source->made && b->n >= COST_MIN_ITEMS)
        mkrt__ema_add(&p->costs.bulk_ns_item, (double)ns / (double)b->n);
    /* Costs of built-ins only: user ops and made sources' items cost what they
     * cost, and WAKE and ROUTE decide for built-in batches alone. */
    if (b->exec_n == 0 || b->user_ops != 0 || b->source->made)
        return;
    mkrt__plan_costs *c = &p->costs;
    double n = (double)b->exec_n;
    if (!cpu) {
        if (b->exec_n <= MKRT__DEV_SMALL)
            mkrt__ema_add(&c->dev_trip_ns, (double)ns);
    } else if (b->plan.workers == 1) {
        if (b->exec_n >= COST_MIN_ITEMS)
            mkrt__ema_add(&c->cpu_ns_item, (double)ns / n);
    } else if (c->cpu_ns_item.n != 0) {
        /* What the layers on several participants cost beyond their
         * share of the work: the hand-off and the barrier. */
        uint32_t multi = 0;
        for (size_t l = 0; l < b->layers; l++)
            multi += b->plan.participants[l] > 1;
        double over = (double)ns - n * c->cpu_ns_item.v / (double)b->plan.workers;
        if (multi > 0)
            mkrt__ema_add(&c->handoff_ns, over > 0.0 ? over / multi : 0.0);
    }
}

void mkrt__plan_waited(mkrt__planner *p, uint64_t ns)
{
    mkrt__ema_add(&p->costs.slack_ns, (double)(ns + p->costs.arms_pending_ns));
    p->costs.arms_pending_ns = 0;
}

void mkrt__plan_explain_batch(mkrt__planner *p, mkrt__batch *b)
{
    b->note.batch = b->seq;
    b->note.pulled = false;
    const mkrt__source *src = b->source;
    if (src->note != NULL)
        src->note(src->ctx, b->exec, b->exec_n, &b->note); /* the graph engine's: its level */
    mkrt__planner_explain_put(p, &b->note);
}

uint32_t mkrt__plan_drain_first(mkrt__planner *p, uint32_t rr, uint32_t slots, mkrt_plan_record *note)
{
    mkrt_plan_first why;
    slots = slots < p->slots ? slots : p->slots;
    uint32_t s = mkrt__decide_drain_first(p->waiting, p->age, slots, rr, !(p->off & MKRT_PLAN_DRAIN), &why);
    note->first_slot = s;
    note->first_reason = (uint32_t)why;
    if (why == MKRT_PLAN_FIRST_AGED)
        mkrt__planner_count(p, MKRT_PLAN_N_PROMOTED, 1);
    else if (why == MKRT_PLAN_FIRST_FULLEST)
        mkrt__planner_count(p, MKRT_PLAN_N_FULLEST_FIRST, 1);
    return s;
}

uint32_t mkrt__plan_class(mkrt__planner *p, bool interactive, bool bulk, bool hold, mkrt_plan_record *note)
{
    /* The clock is read only while both classes wait. */
    const uint64_t now = interactive && bulk && p->bulk_since_ns != 0 ? mkrt__now_ns() : 0;
    const uint64_t waited = now != 0 ? now - p->bulk_since_ns : 0;
    mkrt_plan_class_why why;
    uint32_t c = mkrt__decide_class(interactive, bulk, p->bulk_age, waited, p->max_age_ns, &why);
    if (c == MKRT_CLASS_BULK && hold) {
        mkrt__planner_count(p, MKRT_PLAN_N_CLASS_HELD, 1);
        return MKRT__CLASS_HOLD; /* nothing changes until the drain after it */
    }
    note->klass = c;
    note->class_why = (uint32_t)why;
    note->bulk_age = p->bulk_age;
    note->bulk_wait_ns = waited;
    if (c == MKRT_CLASS_INTERACTIVE)
        mkrt__planner_count(p, MKRT_PLAN_N_INTERACTIVE, 1);
    if (why == MKRT_PLAN_CLASS_FIRST) {
        /* A requeue of the bulk class (the seeds' record_requeue). */
        mkrt__planner_count(p, MKRT_PLAN_N_CLASS_REQUEUES, 1);
        p->bulk_age += p->bulk_age < UINT32_MAX;
        if (p->bulk_since_ns == 0)
            p->bulk_since_ns = mkrt__now_ns();
        return c;
    }
    if (why == MKRT_PLAN_CLASS_AGED || why == MKRT_PLAN_CLASS_MAX_AGE)
        mkrt__planner_count(p, why == MKRT_PLAN_CLASS_AGED ? MKRT_PLAN_N_CLASS_AGED : MKRT_PLAN_N_CLASS_MAX_AGE, 1);
    /* Bulk served, or none waited: young again. */
    p->bulk_age = 0;
    p->bulk_since_ns = 0;
    return c;
}

void mkrt__plan_drain_end(mkrt__planner *p, size_t n, size_t max_batch, uint32_t slots, mkrt_plan_record *note)
{
    /* A full batch requeues what it left in the rings; a ring it took
     * nothing from while it held items is one tick older; a ring it served
     * (or every ring, after a batch that was not full) is young. */
    bool full = n >= max_batch;
    uint64_t left = 0, requeued = 0;
    slots = slots < p->slots ? slots : p->slots; /* the others never held a producer: all zero */
    for (uint32_t s = 0; s < slots; s++) {
        if (!full)
            p->waiting[s] = 0; /* the passes ran until every ring was empty */
        if (p->waiting[s] != 0) {
            left += p->waiting[s];
            requeued++;
        }
        if (p->waiting[s] == 0 || p->served[s])
            p->age[s] = 0;
        else
            p->age[s] += p->age[s] < UINT32_MAX;
        p->served[s] = false;
    }
    if (requeued)
        mkrt__planner_count(p, MKRT_PLAN_N_REQUEUES, requeued);
    note->ring_waiting = left;
    note->pressure = (uint32_t)mkrt__decide_pressure(left + n, max_batch, requeued);
}
