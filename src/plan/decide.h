/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/decide.h - the plan's decisions: what the data path measures
 * (cheap to keep, written by the thread that dispatches) and the pure
 * functions that turn it into what a batch does. Each rule is one of the
 * seeds' planners (Vyre's planning semantics), re-stated for
 * mkrt's path:
 *
 *   WAKE   workers (blocks) per layer: a participant gets at least
 *          share_min items, share_min = the measured hand-off cost over
 *          the measured ns per item (off: the fixed 2048 of issue 13)
 *   SHED   fewer workers under pressure: the CPUs producers still publish
 *          on are left to them, and memory pressure >= 8500 bps keeps 75%
 *          of the workers, down to 50% at 10000 (the launch policy's rule)
 *   FUSE   FusedWave: the seed selector's fused band on the batch's
 *          measured shape (a layer's items at the measured ns per item,
 *          the measured hand-off, the share of narrow layers, the memory
 *          pressure), with hysteresis against its last choice; off until
 *          both costs were sampled; when it says FUSED, layers up to 4 x share_min run on one
 *          participant, so a run of them crosses no barrier
 *   ROUTE  device or CPU pool on AUTO: a batch whose CPU cost (items x ns
 *          per item) is below the device's measured round trip stays on
 *          the CPU pool (off: the device takes every batch it accepts)
 *   DRAIN  which producer a batch cut by max_batch drains first: a full
 *          batch that leaves items in a ring requeues them (counted); a
 *          ring it took nothing from ages one tick (one served is young
 *          again); at age 32 it goes first (an aged promotion, the oldest
 *          first), else the fullest ring goes first (the nearest to
 *          blocking its producer); round robin off. It also honours the
 *          latency classes (mkrt_class): while interactive work waits a
 *          batch takes interactive work only (its rings, and what
 *          interactive batches emitted), passing waiting bulk work over
 *          (a requeue: the bulk class ages one tick); after 32 ticks in a
 *          row (the launch policy's priority_age_threshold) or once bulk
 *          work has waited class_max_age_us (measured from the first
 *          batch that passed it over), a bulk batch goes first (an aged
 *          promotion). While an interactive producer is open, a bulk
 *          batch is drained only once the running batch completed (not
 *          prepared behind it), so interactive work waits for at most
 *          one bulk batch, and a bulk batch takes only the items that
 *          run in class_slice_us at the measured ns per item of the bulk
 *          batches before (at least 16); off: classes ignored, every
 *          batch bulk. At a level boundary of a run of levels
 *          (plan/source.h) it says whether the run yields to the
 *          dispatcher: when producers' items, another source's work or a
 *          quiesce wait (off: at every boundary)
 *   PULL   push or pull per frontier level (Beamer's rule: mkrt_graph_pull_next, mkrt/graph.h),
 *          and the level's GraphBLAS switch class (sparse <= 500 bps,
 *          dense >= 4000 bps, 250 bps hysteresis); off: always push
 *   ARMS   skip redundant arms (pipeline/arms.c): the seed's cross-arm
 *          detector names items whose (op, in, out) an earlier arm (a
 *          producer's run of the batch) has; one is not run where its
 *          effect is covered by the last writer of its out, which has its
 *          op and in, with nothing written to in since
 *          (mkrt__decide_arm_covered); it looks only while what it
 *          skips pays for the detector (mkrt__decide_arms_look); off: all
 *          run
 *   QUEUE  the next frontier of a level as a sparse queue of vertices (the
 *          ops append each vertex they mark first; the next level's rounds
 *          take it from the queue, no scan of the bitset) or the dense
 *          bitset alone: the seed selector's sparse band on the level's
 *          measured density (its frontier vertices over the graph's:
 *          at most 12.5%, held to 15% against the lane's last choice);
 *          off: the bitset. The graph engine decides it (and PULL) per
 *          level (its round.c), with the rules below.
 *          Not for a lane with distance buckets (weighted RELAX, SSSP):
 *          there the queue's discovery order examined 1% more edges and
 *          ran 4-5% slower on a 500 x 500 grid (bench/frontier_bench),
 *          while BFS ran 9% faster; those lanes keep the bitset
 *
 *   SPREAD claims per participant of a layer: 4 for a warp-sparse typical
 *          layer (at most 3.125% of the batch), 2 for a sparse one (12.5%,
 *          or memory pressure >= 9000 bps), else 1, with the selector's
 *          hysteresis against the last choice (batch_planner.c)
 *
 * Every input is measured on the path or counted from real state; where
 * a rule has no such input yet it does not decide (FUSE before its
 * samples). The public planners (mkrt/topology.h, plan_cache.h,
 * frontier.h) are the user's; the path does not feed them stand-ins.
 *
 * config.plan_off turns a decision off (MKRT_PLAN_* bits, mkrt/config.h)
 * for A/B runs. */
#ifndef MKRT_PLAN_DECIDE_H
#define MKRT_PLAN_DECIDE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "mkrt/config.h"
#include "mkrt/explain.h"
#include "mkrt/plan_cache.h"
#include "mkrt/topology.h"

/* The share of one participant before WAKE has measured anything, and
 * with WAKE off (batch_planner.c tells where 2048 came from). */
#define MKRT__SHARE_MIN_DEFAULT 2048u
#define MKRT__SHARE_MIN_LO 256u
#define MKRT__SHARE_MIN_HI 65536u
/* A ring cut this many batches in a row drains first (the launch
 * policy's priority_age_threshold). */
#define MKRT__AGE_PROMOTE 32u
/* Samples a moving average needs before a decision trusts it. */
#define MKRT__EMA_TRUST 4u

/* An exponentially weighted moving average, weight 1/8. */
typedef struct mkrt__ema {
    double v;
    uint32_t n;
} mkrt__ema;

static inline void mkrt__ema_add(mkrt__ema *e, double x)
{
    e->v = e->n == 0 ? x : e->v + (x - e->v) / 8.0;
    if (e->n < UINT32_MAX)
        e->n++;
}

/* A probe's sample: what was learned before no longer holds (the rule
 * stopped taking the path that measures it), so x is the estimate, as
 * trusted as before. */
static inline void mkrt__ema_restart(mkrt__ema *e, double x)
{
    e->v = x;
    if (e->n < UINT32_MAX)
        e->n++;
}

/* What the path measures (dispatcher-only). */
typedef struct mkrt__plan_costs {
    mkrt__ema cpu_ns_item;  /* CPU pool, one participant: run ns / items */
    mkrt__ema handoff_ns;   /* CPU pool, several: run ns less the work's share, per layer */
    mkrt__ema dev_trip_ns;  /* device: run ns of its batches below MKRT__DEV_SMALL items */
    /* The dispatching thread's slack per batch: ns it waited for the
     * running batch, plus the ns ARMS's detector spent meanwhile (what it
     * would have waited without looking). */
    mkrt__ema slack_ns;
    mkrt__ema arms_ns_item; /* ARMS: the detector's ns per item it looked at */
    mkrt__ema arms_yield;   /* ARMS: items skipped / items looked at, per batch */
    uint64_t arms_pending_ns; /* the detector's ns on the batch prepared now (dispatcher-only) */
    mkrt__ema bulk_ns_item; /* classes: run ns per drained item of bulk batches from the rings */
    mkrt__ema level_ns_item; /* the dedupe stage's one pass (prune + levels): ns per item */
    mkrt__ema split_handoff_ns; /* SPLIT: a split levelling's wall less its slowest part */
} mkrt__plan_costs;

/* ARMS probes batch 1 and every MKRT__ARMS_PROBE-th batch after it even
 * where looking does not pay (the workload may change); a probe looks at
 * MKRT__ARMS_PROBE_ITEMS items only, the first of every arm (its yield
 * and cost per item are a sample of the batch's). */
#define MKRT__ARMS_PROBE 64u
#define MKRT__ARMS_PROBE_ITEMS 4096u

#define MKRT__DEV_SMALL 4096u

/* The seed's queue pressure: queued items against lanes. */
mkrt_plan_pressure mkrt__decide_pressure(uint64_t queued, uint64_t lanes, uint64_t requeued);

/* SPLIT: the parts the dedupe stage's levelling of n items is split into
 * on `executors` idle executors (1: the one pass, pipeline/prune.c). From
 * the one pass's measured ns per item and the split's measured hand-off
 * (wake the pool, join it: its wall less its slowest part), the split
 * pays when the work it moves off the planning thread, n ns (1 - 1/p),
 * exceeds the hand-off by a quarter. Before a split was measured the
 * hand-off is the CPU pool's measured hand-off per layer, and before
 * that MKRT__SPLIT_HANDOFF_NS. Nothing before the one pass was measured
 * MKRT__EMA_TRUST times. A probe (every MKRT__ARMS_PROBE-th batch) leaves
 * the split's own measured hand-off out: the split's hand-off is measured
 * only where it splits, so one slow measurement (the pool's thread
 * asleep on a loaded machine: 0.8 ms once, bench/results/megakernel.md)
 * would otherwise keep every later batch on the one pass; the caller
 * then takes the probe's hand-off as the estimate (mkrt__ema_restart). */
uint32_t mkrt__decide_split(const mkrt__plan_costs *c, uint64_t n, uint32_t executors, bool probe);
/* The hand-off SPLIT assumes before any was measured: the upper end of a
 * hand-off plus a barrier measured on the 2-CPU development VMs (10-50
 * us, issue 13; batch_planner.c's MKRT__SHARE_MIN_DEFAULT). */
#define MKRT__SPLIT_HANDOFF_NS 50000.0
/* Most parts of a split (pipeline/layer_internal.h, MKRT__SPLIT_MAX). */
#define MKRT__SPLIT_PARTS_MAX 16u

/* WAKE: items one participant of a layer of built-ins gets at least. */
uint32_t mkrt__decide_share_min(const mkrt__plan_costs *c, bool on);

/* SHED under memory pressure: workers kept of p (at least 1). */
uint32_t mkrt__decide_shed_memory(uint32_t p, uint32_t memory_bps);

/* SHED under queue pressure (the CPU pool; pipeline/batch_planner.c counts
 * the busy producers):
 * the CPUs a batch may use, of width, with busy producers still
 * publishing on the process's cpus (the dispatching thread executes too,
 * so it needs no CPU of its own). */
uint32_t mkrt__decide_cpu_width(uint32_t cpus, uint32_t busy_producers, uint32_t width);

/* FUSE: whether a batch's layers fuse (MKRT_WAVE_FUSED; else
 * MKRT_WAVE_HYBRID), from the measured ns per item and hand-off (off
 * until both were sampled), the share of narrow layers (at most
 * share_min wide) and the memory pressure, with hysteresis against prev. */
mkrt_wave_topology mkrt__decide_fuse(uint64_t items, uint64_t layers, uint64_t narrow, const mkrt__plan_costs *c,
                                     uint32_t memory_bps, mkrt_wave_topology prev);
/* SPREAD: the shape of a batch's typical layer (width of items) for how
 * many claims a participant gets: warp-sparse (4), sparse (2), or hybrid
 * (1), from its density and the memory pressure, with hysteresis
 * against prev. */
mkrt_wave_topology mkrt__decide_spread(uint64_t width, uint64_t items, uint32_t memory_bps, mkrt_wave_topology prev);
/* QUEUE: whether the next frontier of a level of nf of vertices is kept
 * as a queue (sparse: at most 12.5%, 15% when prev, the lane's last
 * choice, was the queue); on: QUEUE is on and the lane may queue. */
bool mkrt__decide_frontier_queue(uint64_t nf, uint64_t vertices, bool prev, bool on);

/* FUSE: the widest layer a FUSED batch runs on one participant. */
uint32_t mkrt__decide_fuse_max(uint32_t share_min);

/* ROUTE: where a batch of n items of built-ins goes when a device could
 * take it (MKRT_PLAN_ROUTE_*). */
mkrt_plan_route mkrt__decide_route(uint64_t n, bool builtin_only, const mkrt__plan_costs *c, bool on);

/* DRAIN: the slot a drain starts at. waiting[s] (0: empty, or no
 * producer) and age[s] per slot (full batches in a row that took nothing
 * from a ring holding items); rr the round-robin start. *why:
 * MKRT_PLAN_FIRST_*. */
uint32_t mkrt__decide_drain_first(const uint64_t *waiting, const uint32_t *age, uint32_t slots,
                                  uint32_t rr, bool on, mkrt_plan_first *why);

/* DRAIN, classes: the class of the next batch (mkrt_class) from whether
 * interactive and bulk work wait, the bulk class's age (batches in a row
 * that passed it over) and its measured wait against max_age_ns (0: no
 * time bound). *why: mkrt_plan_class_why. */
uint32_t mkrt__decide_class(bool interactive, bool bulk, uint32_t bulk_age, uint64_t bulk_wait_ns,
                            uint64_t max_age_ns, mkrt_plan_class_why *why);

/* DRAIN, classes: the items a bulk batch takes while an interactive
 * producer is open: those that run in slice_ns at the measured ns per
 * item of bulk batches, at least MKRT__BULK_CAP_MIN, at most max_batch
 * (max_batch before MKRT__EMA_TRUST samples, or with slice_ns 0). */
size_t mkrt__decide_bulk_cap(const mkrt__ema *ns_item, uint64_t slice_ns, size_t max_batch);
#define MKRT__BULK_CAP_MIN 16u

/* DRAIN at a level boundary of a run of levels (plan/source.h): whether
 * the run yields back to the dispatcher: items published and not
 * completed, another source's work, a quiesce waiting or shutdown; off:
 * always (one level per batch, the dispatcher between levels). */
bool mkrt__decide_level_yield(bool items_waiting, bool source_waiting, bool quiesce_waiting, bool on);

/* WAKE at a level boundary of a run of levels: whether a level of
 * `edges` edges out runs on one participant (the one that opened it), the
 * others staying in the barrier: a second one pays only with share_min
 * items each (the default share: the level is known only at its start);
 * off: every level takes every participant. */
bool mkrt__decide_level_alone(uint64_t edges, bool on);

/* PULL: whether a frontier level of nf vertices and mf edges out runs
 * pulled (was: the level before did), unsettled edges left, of vertices. */
bool mkrt__decide_pull(uint64_t nf, uint64_t mf, uint64_t unsettled, uint64_t vertices, bool was, bool on);
/* The level's GraphBLAS switch class from its density, with hysteresis. */
mkrt_plan_frontier mkrt__decide_frontier_class(uint32_t density_bps, mkrt_plan_frontier prev);

/* ARMS: whether an item of op with param p_late, run right after one
 * with the same op, in and out and param p_early (in != out, nothing
 * between them writing in or out), changes nothing: NOP always; MIN and
 * RELAX when p_late >= p_early (cells[out] is already at most
 * cells[in] + p_early); OR when p_late's bits are among p_early's. Never
 * STORE or ADD (the later value stays), APPEND or ACC (every one counts),
 * or a user op (the op table does not say what param does). */
bool mkrt__decide_arm_covered(uint32_t op, uint32_t p_early, uint32_t p_late);
/* ARMS: how many items of batch seq (n items) the detector looks at:
 * a probe's (at most MKRT__ARMS_PROBE_ITEMS) at batch 1 and every
 * MKRT__ARMS_PROBE-th after it, and until its cost and yield are
 * measured; none before the dispatching thread's slack is measured; then
 * all n when it skips anything (yield >= 1%) and its cost (ns per item
 * looked at x n) fits in the slack (the thread would wait that long for
 * the running batch anyway) or is below the run time it saves where one
 * thread runs the batch (yield x n x CPU ns per item); else none. */
uint64_t mkrt__decide_arms_look(const mkrt__plan_costs *c, uint64_t n, uint64_t seq);

/* ---- the planner's state, counters and EXPLAIN ring (explain.c) ------- */

/* Words of one record in the ring (a seqlock over relaxed atomics: the
 * dispatching thread writes, any thread reads). */
#define MKRT__EXPLAIN_WORDS ((sizeof(mkrt_plan_record) + 7) / 8)
#define MKRT__EXPLAIN_RING 64u

typedef struct mkrt__explain_slot {
    _Atomic uint64_t seq; /* odd while written */
    _Atomic uint64_t w[MKRT__EXPLAIN_WORDS];
} mkrt__explain_slot;

typedef struct mkrt__planner {
    uint32_t off;               /* config.plan_off */
    mkrt__plan_costs costs;     /* dispatcher-only */
    mkrt_wave_topology fuse_prev; /* dispatcher-only: FUSE's last choice */
    /* Per producer slot (dispatcher-only, max_producers each): the ring's
     * items after the last drain, and its age in cut batches. */
    uint64_t *waiting;
    uint32_t *age;
    bool *served; /* the drain took items from it (this drain) */
    uint32_t slots;
    mkrt_wave_topology spread_prev; /* dispatcher-only: SPREAD's last choice */
    /* Latency classes (dispatcher-only): batches in a row that passed
     * waiting bulk work over, when the first of them was drained (ns, 0:
     * none), and the longest wait allowed (ns, 0: no bound). */
    uint32_t bulk_age;
    uint64_t bulk_since_ns;
    uint64_t max_age_ns;
    uint64_t slice_ns; /* class_slice_us in ns (0: no cut) */
    /* Counters, written by the dispatching thread, read by stats. */
    _Atomic uint64_t n[MKRT_PLAN_COUNTERS];
    /* The EXPLAIN ring; head counts records written. */
    _Atomic uint64_t head;
    mkrt__explain_slot ring[MKRT__EXPLAIN_RING];
} mkrt__planner;

/* ENOMEM-free: false when the per-slot arrays cannot be allocated. */
bool mkrt__planner_init(mkrt__planner *p, uint32_t slots, uint32_t off);
void mkrt__planner_fini(mkrt__planner *p);
void mkrt__planner_count(mkrt__planner *p, mkrt_plan_counter c, uint64_t d);
/* Dispatching thread: appends a record. */
void mkrt__planner_explain_put(mkrt__planner *p, const mkrt_plan_record *r);
/* Any thread: the last max records, newest last; returns how many. */
size_t mkrt__planner_explain_get(mkrt__planner *p, mkrt_plan_record *out, size_t max);

/* ---- on the path (measure.c; the dispatching thread) ------------------ */
struct mkrt__batch;
/* A batch ran in ns (cpu: on the CPU pool): its cost samples. */
void mkrt__plan_measured(mkrt__planner *p, struct mkrt__batch *b, bool cpu, uint64_t ns);
/* The dispatching thread waited ns for a batch (finish_running): a slack
 * sample, with what ARMS's detector spent on the batch prepared meanwhile. */
void mkrt__plan_waited(mkrt__planner *p, uint64_t ns);
/* A batch completed: its record into the EXPLAIN ring. */
void mkrt__plan_explain_batch(mkrt__planner *p, struct mkrt__batch *b);
/* DRAIN: the slot the drain starts at (note: the batch's record), of the
 * slots below `slots` (the ones a producer was ever opened in). */
uint32_t mkrt__plan_drain_first(mkrt__planner *p, uint32_t rr, uint32_t slots, mkrt_plan_record *note);
/* The drain saw `left` items in slot's ring (0: also no producer): before
 * its first pass, and after each pop (took: the items it popped). */
static inline void mkrt__plan_ring_seen(mkrt__planner *p, uint32_t slot, uint64_t left, uint64_t took)
{
    p->waiting[slot] = left;
    p->served[slot] |= took != 0;
}
/* DRAIN, classes: the class of the batch being drained (note: its
 * record), from whether interactive and bulk work wait; ages the bulk
 * class and counts requeues and promotions. hold: a batch runs and an
 * interactive producer is open or the running batch is interactive: a
 * bulk batch is then not prepared behind it (MKRT__CLASS_HOLD, counted;
 * the bulk class's age is kept), so that interactive work arriving while
 * it runs, or emitted by it, waits for no more than the running batch. */
uint32_t mkrt__plan_class(mkrt__planner *p, bool interactive, bool bulk, bool hold, mkrt_plan_record *note);
/* mkrt__plan_class: a bulk batch is not drained now (hold). */
#define MKRT__CLASS_HOLD 2u
/* The drain took n items: requeues, ages, the queue's pressure. */
void mkrt__plan_drain_end(mkrt__planner *p, size_t n, size_t max_batch, uint32_t slots, mkrt_plan_record *note);

#endif
