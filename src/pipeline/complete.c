/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/complete.c - the end of a batch: the backend's failures,
 * the error path (on_error or the dead-letter ring), the counters, and
 * completion published to the producers and to drain/fence waiters. */
#include <stdio.h>

#include "pipeline/stages.h"
#include "pipeline/dispatch.h"
#include "ops/builtin_ops.h"
#include "ops/op_table.h"

void mkrt__stage_take_failures(mkrt__dispatch *dp, mkrt__batch *b, const uint32_t *fails, uint32_t nfails)
{
    (void)dp;
    /* The batch's source says which item each failure is (plan/source.h). */
    const mkrt__source *src = b->source;
    for (uint32_t i = 0; i < nfails;) {
        uint32_t used = 1;
        mkrt_item item;
        mkrt_status why;
        if (src->failed(src->ctx, b->exec, b->exec_n, &fails[2 * i], nfails - i, &used, &item, &why))
            mkrt__batch_fail(b, &item, why);
        i += used > 0 ? used : 1;
    }
}

void mkrt__stage_fail_all(mkrt__batch *b, mkrt_status why)
{
    b->failed_n = b->refused;
    /* A round of traversal jobs (plan/source.h, job) holds no item of the
     * user's: its traversals learn the failure from their jobs. */
    if (b->source->made && b->source->job != NULL && b->exec_n > 0 &&
        b->source->job(b->source->ctx, &b->exec[0]) != NULL)
        return;
    for (size_t k = 0; k < b->exec_n; k++)
        mkrt__batch_fail(b, &b->exec[k], why);
}

/* The Fix for a failed item: each names the resource or step that failed
 * it. An MKRT_EOVERFLOW is the APPEND log's only for an APPEND; a user op
 * returns it when mkrt_op_emit had no room (MKRT__EOVERFLOW_EMIT) or for a
 * resource of its own. */
static const char *fix_for(const mkrt_item *it, mkrt_status why)
{
    if (why == MKRT__EOVERFLOW_EMIT)
        return "raise mkrt_config::emit_capacity (mkrt_op_emit had no room for the op's follow-up items), or "
               "emit fewer items per op";
    switch (why) {
    case MKRT_ENOTSUP:
        return "register the op with mkrt_op_register before publishing";
    case MKRT_EINVAL:
        return "use handles below the configured cell count";
    case MKRT_EBUDGET:
        return "lower the op's envelope, free device memory, or raise device_memory_budget (the device's "
               "resident bytes count against it; see mkrt_plan_explain)";
    case MKRT_EOVERFLOW:
        return it->op == MKRT_OPS_APPEND
                   ? "consume the APPEND log with mkrt_append_log_consume, or raise append_log_capacity"
                   : "the op ran out of room of its own: see the op's documentation";
    case MKRT_ETIMEDOUT:
        return "give mkrt_destroy more time or drain before destroying";
    default:
        return "see the op's own documentation";
    }
}

static void report(mkrt__dispatch *dp, const mkrt_item *it, mkrt_status why)
{
    if (dp->cfg->on_error != NULL) {
        char msg[MKRT_ERROR_MESSAGE_MAX];
        const char *name = it->op < MKRT_OP_MAX && dp->state->ops[it->op].name ? dp->state->ops[it->op].name : "op";
        mkrt_status pub = why == MKRT__EOVERFLOW_EMIT ? MKRT_EOVERFLOW : why;
        snprintf(msg, sizeof msg,
                 "%s %u (in %u, out %u, param %u; %u cells, emit capacity %zu, APPEND log of %zu) failed: %s. "
                 "Fix: %s.",
                 name, it->op, it->in, it->out, it->param, dp->cfg->cells, dp->cfg->emit_capacity,
                 dp->cfg->append_log_capacity, mkrt_status_describe(pub), fix_for(it, why));
        dp->cfg->on_error(dp->cfg->error_ctx, it, pub, msg);
    } else if (mkrt_mpmc_ring_push(dp->state->dead, it, 1) == 0) {
        mkrt__stat_add(&dp->stats->dead_dropped, 1);
    }
}

/* b completed: what it emitted (in the queue or the frontier) descends
 * from its root, so the emission root takes it in while anything emitted
 * waits. Then the oldest root of the work still pending (the emissions,
 * the batch drained and not launched, the one running) is published, and
 * b's number as the last completed; mkrt_quiesce reads them. */
static void publish_roots(mkrt__dispatch *dp, const mkrt__batch *b)
{
    if (!mkrt__emission_pending(dp))
        dp->emit_root = UINT64_MAX;
    else if (b->root < dp->emit_root)
        dp->emit_root = b->root;
    uint64_t root = dp->emit_root;
    if (dp->drained != NULL && dp->drained != b && dp->drained->root < root)
        root = dp->drained->root;
    if (dp->running != NULL && dp->running != b && dp->running->root < root)
        root = dp->running->root;
    /* release (both): pairs with the acquire loads in mkrt_quiesce (and
     * of pending_root in its wait); pending_root first, so a quiesce that
     * sees b's number sees the roots as they were at b's completion, or
     * later ones. */
    atomic_store_explicit(&dp->pending_root, root, memory_order_release);
    atomic_store_explicit(&dp->completed_seq, b->seq, memory_order_release);
}

void mkrt__stage_complete(mkrt__dispatch *dp, mkrt__batch *b)
{
    if (b->source->ran != NULL) {
        /* What the made source's batch stood for and knew only once it
         * ran: emitted items too. */
        uint64_t more = b->source->ran(b->source->ctx);
        b->stands_for += more;
        mkrt__stat_add(&dp->state->emitted_total, more);
    }
    uint32_t failed = b->failed_n;
    for (uint32_t i = 0; i < failed; i++)
        report(dp, &b->failed[i], b->failed_why[i]);
    /* Every drained item in exactly one of the three (see batch.h); a
     * made source's items are the emitted items they stand for. */
    const bool made = b->source->made;
    mkrt__stat_add(&dp->stats->executed, (made ? b->stands_for : b->kept) - (failed - b->refused));
    mkrt__stat_add(&dp->stats->pruned, b->admitted - b->kept);
    mkrt__stat_add(&dp->stats->failed, failed);
    mkrt__stat_add(&dp->stats->layers, b->layers);
    mkrt__stat_add(&dp->stats->barriers, b->layers ? b->layers - 1 : 0);
    /* A device traversal: its edge items were emitted and ran in the
     * batch, and each of its levels is a layer after a grid barrier. */
    mkrt__stat_add(&dp->stats->executed, b->device_edges);
    mkrt__stat_add(&dp->state->emitted_total, b->device_edges);
    mkrt__stat_add(&dp->state->emitted_done, b->device_edges);
    mkrt__stat_add(&dp->stats->layers, b->device_levels);
    mkrt__stat_add(&dp->stats->barriers, b->device_levels);
    b->device_edges = b->device_levels = 0;
    /* The batch's APPENDs are complete (the backend's completion was
     * acquired; a failed device batch left append_len where it was).
     * release: pairs with the acquire loads in the log's readers. */
    atomic_store_explicit(&dp->state->append_done, mkrt__load_relaxed(&dp->state->append_len), memory_order_release);
    mkrt__stat_add(&dp->stats->batches, 1);
#ifdef MKRT_TEST_HOOKS
    if (b->exec_n > 0) {
        dp->hooks.last_plan.plan = b->plan;
        dp->hooks.last_plan.layers = b->layers;
        dp->hooks.last_plan.items = b->exec_n;
        dp->hooks.last_plan.layered = b->layered;
        for (size_t l = 0; l < b->layers && l < 8; l++)
            dp->hooks.last_plan.participants[l] = b->plan.participants[l];
    }
#endif
    /* Before the producers' completions: a quiesce that acquires one of
     * them then sees b's number (or a later one) and the roots with it. */
    publish_roots(dp, b);
    uint64_t now = mkrt__now_ns();
    for (size_t i = 0; i < b->nseg; i++) {
        mkrt_producer *p = b->segs[i].p;
        /* release: pairs with the acquire load in mkrt_wait. */
        atomic_store_explicit(&p->completed, b->segs[i].end, memory_order_release);
        mkrt_item stamp;
        while (mkrt_spsc_ring_pop(p->stamps, &stamp, 1) == 1) {
            uint64_t end = (uint64_t)stamp.op | (uint64_t)stamp.in << 32;
            uint64_t at = (uint64_t)stamp.out | (uint64_t)stamp.param << 32;
            mkrt__hist_record(&dp->stats->latency, now > at ? now - at : 0, 1);
            if (end >= b->segs[i].end)
                break; /* later stamps belong to later batches */
        }
    }
    /* Emitted items count apart: completed_total is the published ones,
     * which drain and quiesce compare with published_total. */
    mkrt__stat_add(&dp->state->emitted_done, made ? b->stands_for : b->emitted_n);
    /* release: pairs with the acquire load in mkrt_drain; every counter
     * above is visible to a drain that returns. */
    atomic_fetch_add_explicit(&dp->completed_total, b->n - b->emitted_n, memory_order_release);
    mkrt__waitq_notify(&dp->done_wq);
}

void mkrt__stage_fail_remaining(mkrt__dispatch *dp, mkrt__batch *b)
{
    while (mkrt__stage_drain(dp, b) > 0) {
        /* Each item fails as what its source says it stands for (a made
         * source's at most max_batch in all, every one an emitted item;
         * ring items as themselves). */
        const mkrt__source *src = b->source;
        b->failed_n = 0;
        for (size_t i = 0; i < b->n; i++) {
            mkrt_item it = b->items[i];
            size_t k = src->abandon(src->ctx, &it, b->failed + b->failed_n, dp->cfg->max_batch - b->failed_n);
            for (size_t j = 0; j < k; j++)
                b->failed_why[b->failed_n + j] = MKRT_ETIMEDOUT;
            b->failed_n += (uint32_t)k;
        }
        if (src->made) {
            /* Now a batch of the failed emitted items themselves. */
            b->source = &dp->rings;
            b->stands_for = 0;
            b->n = b->emitted_n = b->failed_n;
        }
        b->admitted = b->kept = 0;
        b->exec_n = b->layers = 0;
        b->refused = (uint32_t)b->n;
        mkrt__stage_complete(dp, b);
    }
}
