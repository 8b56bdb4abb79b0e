/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/dispatcher.c - the dispatcher thread: the double-buffered
 * loop that moves batches down the stages (pipeline/stages.h) and through
 * the backend interface (backend/backend.h). Batch k+1 is drained,
 * admitted, deduped, layered, split, planned and prepared while batch k
 * runs; k is then waited for and completed, and k+1 launched. The loop
 * knows no backend by name: the plan says which one runs a batch. */
#include <stdio.h>

#include "base/spin_wait.h"
#include "pipeline/stages.h"
#include "runtime/runtime_internal.h"

/* The backend failed for good: it is not fed again, and the runtime says
 * what runs batches now. */
static void backend_failed(mkrt_runtime *rt, mkrt__backend *be, const mkrt_error *err)
{
    if (be->failed)
        return;
    be->failed = true;
    mkrt__stat_add(&rt->device_failures, 1);
    /* A failed device's state comes home now, so that reads see it; after
     * a sticky fault it cannot, and the host keeps its last copy. */
    mkrt_error why;
    bool lost = mkrt__state_move(rt, NULL, &why) != NULL || rt->state_lost;
    char now[64];
    mkrt__backend *next = rt->backends[rt->nbackends - 1];
    next->ops->describe(next, now, sizeof now);
    /* A long message is cut: the reason of the failure comes last. */
    int at = snprintf(rt->backend_failure, sizeof rt->backend_failure,
                      "%s (%s failed and is not used again%s: ", now, be->name,
                      lost ? "; its cells and APPEND log since their last copy to the host are lost" : "");
    if (at > 0 && (size_t)at < sizeof rt->backend_failure)
        snprintf(rt->backend_failure + at, sizeof rt->backend_failure - (size_t)at, "%.*s)",
                 (int)(sizeof rt->backend_failure - (size_t)at - 2), err->message);
    /* release: pairs with the acquire in mkrt_backend_describe. */
    atomic_store_explicit(&rt->backend_failed, true, memory_order_release);
}

/* Plans b and prepares it on the planned backend (while the batch before
 * may still run); a backend that cannot prepare fails, and b is planned
 * again for the next one (the CPU pool always prepares). */
static void plan_and_prepare(mkrt_runtime *rt, mkrt__batch *b)
{
    for (;;) {
        mkrt__stage_plan(rt, b);
        mkrt__backend *be = rt->backends[b->plan.backend];
        mkrt_error err;
        if (be->ops->prepare(be, b, &err) == MKRT_OK)
            return;
        backend_failed(rt, be, &err); /* nothing of b ran there */
    }
}

/* Stages admit .. plan, and the backend's prepare. */
static void prepare_batch(mkrt_runtime *rt, mkrt__batch *b, uint64_t running_appends)
{
    mkrt__stage_admit(rt, b, running_appends);
    mkrt__stage_dedupe(rt, b);
    mkrt__stage_layer_split(rt, b);
    if (b->exec_n > 0)
        plan_and_prepare(rt, b);
}

/* Launches b on its planned backend. A backend that failed since b was
 * planned (the batch before failed on it), or that cannot launch, is
 * passed over: b is planned and prepared again for the next one. */
static void launch_batch(mkrt_runtime *rt, mkrt__batch *b)
{
    /* The batch's ops may emit into the free part of the emission queue:
     * positions tail .. head + capacity (the drain only takes from below
     * tail meanwhile). relaxed: published to the workers by the launch
     * (release), or run on this thread. */
    rt->emit_limit = rt->emit_head + rt->cfg.emit_capacity;
    atomic_store_explicit(&rt->emit_claim, rt->emit_tail, memory_order_relaxed);
    for (;;) {
        mkrt__backend *be = rt->backends[b->plan.backend];
        if (!be->failed) {
            mkrt_error err;
            /* acquire: pairs with the release CAS in mkrt_append_log_consume
             * (a backend may reuse the slots a consumer freed). */
            uint64_t limit = atomic_load_explicit(&rt->append_consumed, memory_order_acquire) +
                             rt->cfg.append_log_capacity;
            /* The state moves to the backend that runs b (device_state). */
            mkrt__backend *bad = mkrt__state_move(rt, be, &err);
            if (bad != NULL)
                backend_failed(rt, bad, &err);
            if (bad != be && be->ops->launch(be, b, limit, &err) == MKRT_OK) {
                rt->batch_running = true;
                return;
            }
            if (bad != be)
                backend_failed(rt, be, &err);
        }
        plan_and_prepare(rt, b);
    }
}

/* Waits for the batch in flight (if any) and completes it. A backend that
 * fails or trips the watchdog fails every item of its batch (some may
 * have run; none is lost) and is not used again. */
static void finish_running(mkrt_runtime *rt, mkrt__batch **running)
{
    mkrt__batch *b = *running;
    if (b == NULL)
        return;
    mkrt__backend *be = rt->backends[b->plan.backend];
    uint64_t limit = rt->cfg.watchdog_ms ? (uint64_t)rt->cfg.watchdog_ms * 1000000u : MKRT_TIMEOUT_INFINITE;
    const uint32_t *fails;
    uint32_t nfails;
    mkrt_error err;
    mkrt_status st = be->ops->wait(be, limit, &fails, &nfails, &err);
    /* What the batch emitted can now be drained (relaxed: the backend's
     * completion, acquired by wait, orders the ops' claims and writes). */
    uint64_t claimed = atomic_load_explicit(&rt->emit_claim, memory_order_relaxed);
    mkrt__stat_add(&rt->emitted_total, claimed - rt->emit_tail);
    rt->emit_tail = claimed;
    if (st == MKRT_OK) {
        mkrt__stage_take_failures(rt, b, fails, nfails);
        if (b->plan.backend + 1 < rt->nbackends)
            mkrt__stat_add(&rt->device_batches, 1);
    } else {
        mkrt__stage_fail_all(b, st);
        backend_failed(rt, be, &err);
    }
    mkrt__stage_complete(rt, b);
    *running = NULL;
    rt->batch_running = false;
}

static int released_or_aborting(void *p)
{
    mkrt_runtime *rt = p;
    return !atomic_load(&rt->held) || atomic_load_explicit(&rt->aborting, memory_order_acquire);
}

/* Test hook: park between batches while held (see runtime_internal.h). */
static void park_while_held(mkrt_runtime *rt, mkrt__batch **running)
{
    if (released_or_aborting(rt))
        return;
    finish_running(rt, running);
    atomic_store(&rt->parked, true);
    mkrt__waitq_notify(&rt->done_wq);
    mkrt__spin_then_sleep(&rt->work_wq, released_or_aborting, rt, NULL);
    atomic_store(&rt->parked, false);
    rt->rr = 0;
}

static int work_or_leave(void *p)
{
    mkrt_runtime *rt = p;
    /* acquire: pairs with the release stores of closing and aborting. */
    return !mkrt__rings_empty(rt) || mkrt__emission_pending(rt) || atomic_load(&rt->held) ||
           atomic_load_explicit(&rt->closing, memory_order_acquire) ||
           atomic_load_explicit(&rt->aborting, memory_order_acquire);
}

int mkrt__dispatcher_main(void *arg)
{
    mkrt_runtime *rt = arg;
    mkrt__batch *running = NULL;
    unsigned cur = 0;
    for (;;) {
        park_while_held(rt, &running);
        mkrt__batch *b = &rt->batch[cur];
        bool aborting = atomic_load_explicit(&rt->aborting, memory_order_acquire);
        size_t n = aborting ? 0 : mkrt__stage_drain(rt, b);
        if (n > 0) {
            /* Not quiet from here until this batch and all it emits are
             * done; cleared before the batch completes (relaxed: the
             * release of completed_total in the complete stage publishes
             * it to mkrt_quiesce, which reads quiet after that). */
            if (atomic_load_explicit(&rt->quiet, memory_order_relaxed))
                atomic_store_explicit(&rt->quiet, false, memory_order_relaxed);
            prepare_batch(rt, b, running != NULL ? running->appends : 0);
        }
        finish_running(rt, &running);
        if (n > 0) {
            if (b->exec_n == 0) {
                mkrt__stage_complete(rt, b); /* everything pruned or refused */
                continue;
            }
            launch_batch(rt, b);
            running = b;
            cur ^= 1;
            continue;
        }
        if (aborting) {
            mkrt__stage_fail_remaining(rt, b);
            break;
        }
        /* acquire: pairs with the release store of closing in mkrt_destroy. */
        bool closing = atomic_load_explicit(&rt->closing, memory_order_acquire);
        bool pending = mkrt__emission_pending(rt);
        /* relaxed: emitted_total is this thread's. */
        if (closing && !pending &&
            mkrt__load_relaxed(&rt->completed_total) ==
                atomic_load_explicit(&rt->published_total, memory_order_acquire) &&
            mkrt__load_relaxed(&rt->emitted_done) == mkrt__load_relaxed(&rt->emitted_total) &&
            mkrt__rings_empty(rt))
            break;
        if (!pending && !atomic_load_explicit(&rt->quiet, memory_order_relaxed)) {
            /* Idle: nothing running (finished above), nothing drained,
             * nothing emitted waits. release: pairs with the acquire in
             * mkrt_quiesce. */
            atomic_store_explicit(&rt->quiet, true, memory_order_release);
            mkrt__waitq_notify(&rt->done_wq);
        }
        if (pending)
            continue;
        if (!closing) {
            mkrt__spin_then_sleep(&rt->work_wq, work_or_leave, rt, NULL);
        } else {
            /* closing with items still in flight elsewhere: nap briefly */
            struct timespec ts;
            uint32_t e = mkrt__waitq_prepare(&rt->work_wq);
            if (mkrt__rings_empty(rt))
                mkrt__waitq_sleep(&rt->work_wq, e, mkrt__deadline(1000000, &ts));
            mkrt__waitq_finish(&rt->work_wq);
        }
    }
    /* release: pairs with the acquire in mkrt_destroy. */
    atomic_store_explicit(&rt->stopped, true, memory_order_release);
    mkrt__waitq_notify(&rt->done_wq);
    return 0;
}
