/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/measure.c - the planner's side of the data path: what the
 * dispatching thread measures (costs, ring occupancy, frontier levels)
 * and records (the EXPLAIN ring), around the pure rules of decide.c. */
#include <string.h>

#include "plan/batch.h"
#include "plan/decide.h"

/* Fewer items than this make a CPU cost sample mostly clock reads. */
#define COST_MIN_ITEMS 16u

void mkrt__plan_measured(mkrt__planner *p, mkrt__batch *b, bool cpu, uint64_t ns)
{
    b->note.run_ns = ns;
    /* Costs of built-ins only: user ops and frontier rounds cost what they
     * cost, and WAKE and ROUTE decide for built-in batches alone. */
    if (b->exec_n == 0 || b->user_ops != 0 || b->round)
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
    b->note.pulled = b->pull;
    if (b->round) {
        b->note.frontier_bps = p->level_density_bps;
        b->note.frontier_class = (uint32_t)p->level_class;
        b->note.frontier_queue = p->level_queue;
    }
    mkrt__planner_explain_put(p, &b->note);
}

bool mkrt__plan_level(mkrt__planner *p, uint64_t nf, uint64_t mf, uint64_t unsettled, uint64_t vertices,
                      bool was)
{
    bool pull = mkrt__decide_pull(nf, mf, unsettled, vertices, was, !(p->off & MKRT_PLAN_PULL));
    uint64_t bps = vertices ? nf * 10000u / vertices : 0;
    p->level_density_bps = (uint32_t)(bps < 10000u ? bps : 10000u);
    p->level_class = mkrt__decide_frontier_class(p->level_density_bps, p->level_class);
    p->level_pull = pull;
    mkrt__planner_count(p, pull ? MKRT_PLAN_N_PULL_LEVELS : MKRT_PLAN_N_PUSH_LEVELS, 1);
    return pull;
}

bool mkrt__plan_frontier_queue(mkrt__planner *p, uint64_t nf, uint64_t mf, uint64_t vertices, uint64_t edges,
                               bool weighted, uint32_t tag, bool queued, bool may)
{
    /* The level just started took its vertices from the queue or not. */
    mkrt__planner_count(p, queued ? MKRT_PLAN_N_QUEUE_LEVELS : MKRT_PLAN_N_BITSET_LEVELS, 1);
    bool queue = false;
    if (may && !(p->off & MKRT_PLAN_QUEUE) && p->plans != NULL && p->scratch != NULL && vertices != 0 && nf != 0) {
        const mkrt__plan_costs *c = &p->costs;
        const double ns_item = c->cpu_ns_item.n ? c->cpu_ns_item.v : 8.0;
        const double handoff = c->handoff_ns.n ? c->handoff_ns.v : 20000.0;
        /* One dispatch is the level: its edges at the measured cost per
         * item; it writes back a value per edge; its frontier as a queue
         * is 4 bytes a vertex; the graph is resident (offsets 8 bytes a
         * vertex, targets 4 an edge, weights 8) with the values. */
        mkrt_exec_sample s = {(double)mf * ns_item, (double)nf / (double)vertices, mf * 8u};
        mkrt_graph_shape g = {vertices, edges};
        mkrt_byte_layout l = {16u, weighted ? 12u : 4u, 0, 0, 0};
        mkrt_frontier_wave w = {nf * 4u, 0, mf * 8u};
        mkrt_plan_identity id = {vertices << 32 ^ edges, MKRT_ANALYSIS_CUSTOM, 0x5155455545ull << 8 | tag,
                                 mkrt_device_key_cpu(), MKRT_PLAN_QUEUE};
        mkrt_frontier_exec_plan out;
        mkrt_error err;
        if (mkrt_plan_cache_plan_frontier(p->plans, &id, p->scratch, &s, &g, &l, &w, 1, NULL, 0,
                                          p->budget ? p->budget : UINT64_MAX, handoff, 0.0, &out, &err) == MKRT_OK)
            queue = out.execution.topology == MKRT_WAVE_SPARSE || out.execution.topology == MKRT_WAVE_WARP_SPARSE;
    }
    p->level_queue = queued;
    return queue;
}

uint32_t mkrt__plan_drain_first(mkrt__planner *p, uint32_t rr, mkrt_plan_record *note)
{
    mkrt_plan_first why;
    uint32_t s = mkrt__decide_drain_first(p->waiting, p->age, p->slots, rr, !(p->off & MKRT_PLAN_DRAIN), &why);
    note->first_slot = s;
    note->first_reason = (uint32_t)why;
    if (why == MKRT_PLAN_FIRST_AGED)
        mkrt__planner_count(p, MKRT_PLAN_N_PROMOTED, 1);
    else if (why == MKRT_PLAN_FIRST_FULLEST)
        mkrt__planner_count(p, MKRT_PLAN_N_FULLEST_FIRST, 1);
    return s;
}

void mkrt__plan_drain_end(mkrt__planner *p, size_t n, size_t max_batch, mkrt_plan_record *note)
{
    /* A full batch requeues what it left in the rings; a ring it took
     * nothing from while it held items is one tick older; a ring it served
     * (or every ring, after a batch that was not full) is young. */
    bool full = n >= max_batch;
    uint64_t left = 0, requeued = 0;
    for (uint32_t s = 0; s < p->slots; s++) {
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
