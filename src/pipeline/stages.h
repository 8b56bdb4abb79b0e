/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/stages.h - the stages a batch goes through, in order (see
 * pipeline/batch.h). The dispatcher (pipeline/dispatcher.c) calls each
 * once per batch, from its own thread; each takes the dispatch group
 * (pipeline/dispatch.h) and the batch, nothing else. */
#ifndef MKRT_PIPELINE_STAGES_H
#define MKRT_PIPELINE_STAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/layer.h"
#include "plan/batch.h"
#include "pipeline/dispatch.h"


/* drain.c: round-robin passes over the producers' rings into b->items;
 * returns how many. Retires closed producers whose items all completed. */
size_t mkrt__stage_drain(mkrt__dispatch *dp, mkrt__batch *b);
/* Whether no ring holds an item and no closed producer waits to retire. */
bool mkrt__rings_empty(mkrt__dispatch *dp);

/* admit.c: the one admission rule (ops/op_table.h) for every item, and
 * room in the APPEND log for the admitted APPENDs (running_appends: what
 * the batch still running reserved). */
void mkrt__stage_admit(mkrt__dispatch *dp, mkrt__batch *b, uint64_t running_appends);

/* prune.c: drops the duplicates that cannot change a result (the
 * ordering contract), in place, and levels the kept items in the same
 * pass (b->layers: the levels); out of memory keeps them all, unlevelled
 * (b->layers 0). */
void mkrt__stage_dedupe(mkrt__dispatch *dp, mkrt__batch *b);
/* arms.c, called by the dedupe stage: ARMS (plan/decide.h) marks the
 * seed detector's candidates among items[0..admitted) (NULL: none, or
 * ARMS does not look at this batch), for the levelling pass, which skips
 * those the contract allows (counted as pruned: admitted - kept);
 * known_empty: the plan cache says the detector found nothing in the last
 * batch of this shape (it looks only on ARMS's probe batches then); end
 * clears the marks and counts what was skipped. */
const uint8_t *mkrt__stage_arms(mkrt__dispatch *dp, mkrt__batch *b, bool known_empty);
void mkrt__stage_arms_end(mkrt__dispatch *dp, mkrt__batch *b, size_t skipped);
/* Whether late, right after early (same op, in and out), changes nothing
 * (mkrt__decide_arm_covered on their params). */
bool mkrt__arm_covered(const mkrt_item *early, const mkrt_item *late);
/* prune.c, before the plan stage: the levels the place stage reads are
 * in the planning thread's scratch (a batch a helper levelled and left
 * prepared is levelled again there, or, out of memory, run one item a
 * layer). */
void mkrt__stage_own_levels(mkrt__dispatch *dp, mkrt__batch *b);

/* layer_split.c: the layers of items[0..kept) (the levels of the dedupe
 * stage), every layer whose bytes exceed the memory budget split with the
 * frontier planner (then gathered into exec in layer order); without a
 * split only counted: exec is items[0..kept) until the place stage. */
void mkrt__stage_layer_split(mkrt__dispatch *dp, mkrt__batch *b);

/* layer_split.c, after the plan: moves exec into layer order unless the
 * CPU pool runs the batch on one thread (plan.workers 1), which runs it in
 * drain order. */
void mkrt__stage_place(mkrt__dispatch *dp, mkrt__batch *b);

/* pipeline/batch_planner.c: picks the backend (the first that has not failed
 * and accepts the batch) and plans how it runs the batch (b->plan). */
void mkrt__stage_plan(mkrt__dispatch *dp, mkrt__batch *b);
/* batch_planner.c: the CPUs a batch on the CPU pool may use of `width`
 * (SHED: fewer while the batch's producers still publish). */
uint32_t mkrt__plan_cpu_width(mkrt__dispatch *dp, const mkrt__batch *b, uint32_t width);

/* complete.c: takes the backend's failure list, reports failures, counts,
 * and publishes completion to the producers. */
void mkrt__stage_take_failures(mkrt__dispatch *dp, mkrt__batch *b, const uint32_t *fails,
                               uint32_t nfails);
/* Every item the batch ran or was to run failed with why (its backend
 * failed); items refused at admission keep their own status. */
void mkrt__stage_fail_all(mkrt__batch *b, mkrt_status why);
void mkrt__stage_complete(mkrt__dispatch *dp, mkrt__batch *b);
/* Destroy timed out: everything still queued fails with MKRT_ETIMEDOUT. */
void mkrt__stage_fail_remaining(mkrt__dispatch *dp, mkrt__batch *b);

#endif
