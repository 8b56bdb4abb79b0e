/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/complete.c - the end of a batch: the backend's failures,
 * the error path (on_error or the dead-letter ring), the counters, and
 * completion published to the producers and to drain/fence waiters. */
#include <stdio.h>

#include "pipeline/stages.h"
#include "pipeline/dispatch.h"

void mkrt__stage_take_failures(mkrt__dispatch *dp, mkrt__batch *b, const uint32_t *fails, uint32_t nfails)
{
    if (b->pull) { /* pairs of pairs: (k, status), (edge low, high); see graph/apply.c */
        for (uint32_t i = 0; i + 1 < nfails; i += 2) {
            uint32_t k = fails[2 * i];
            if (k >= b->exec_n)
                continue;
            mkrt_item edge = mkrt__graph_edge_item(dp->state->graph, &b->exec[k],
                                                   (uint64_t)fails[2 * i + 3] << 32 | fails[2 * i + 2], true);
            mkrt__batch_fail(b, &edge, (mkrt_status)(int32_t)fails[2 * i + 1]);
        }
        return;
    }
    for (uint32_t i = 0; i < nfails; i++) {
        uint32_t k = b->round ? fails[2 * i] & 0xffffffu : fails[2 * i];
        if (k >= b->exec_n)
            continue;
        mkrt_status why = (mkrt_status)(int32_t)fails[2 * i + 1];
        if (b->round) { /* the failed edge item of a chunk: (k | j << 24, status) */
            bool exists;
            uint64_t e = mkrt__graph_chunk_edge(dp->state->graph, &b->exec[k], fails[2 * i] >> 24, &exists);
            (void)exists; /* the backend ran it */
            mkrt_item edge = mkrt__graph_edge_item(dp->state->graph, &b->exec[k], e, false);
            mkrt__batch_fail(b, &edge, why);
        } else {
            mkrt__batch_fail(b, &b->exec[k], why);
        }
    }
}

void mkrt__stage_fail_all(mkrt__batch *b, mkrt_status why)
{
    b->failed_n = b->refused;
    for (size_t k = 0; k < b->exec_n; k++)
        mkrt__batch_fail(b, &b->exec[k], why);
}

static const char *fix_for(mkrt_status why)
{
    switch (why) {
    case MKRT_ENOTSUP:
        return "register the op with mkrt_op_register before publishing";
    case MKRT_EINVAL:
        return "use handles below the configured cell count";
    case MKRT_EBUDGET:
        return "lower the op's envelope, free device memory, or raise device_memory_budget (the device's "
               "resident bytes count against it; see mkrt_plan_explain)";
    case MKRT_EOVERFLOW:
        return "consume the APPEND log with mkrt_append_log_consume, or raise append_log_capacity";
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
        snprintf(msg, sizeof msg,
                 "%s %u (in %u, out %u, param %u; %u cells, APPEND log of %zu) failed: %s. Fix: %s.",
                 name, it->op, it->in, it->out, it->param, dp->cfg->cells, dp->cfg->append_log_capacity,
                 mkrt_status_describe(why), fix_for(why));
        dp->cfg->on_error(dp->cfg->error_ctx, it, why, msg);
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
    if (b->pull) {
        /* The edges a pulled round ran are its emitted items. */
        b->round_edges = mkrt__graph_pulled_take(dp->state->graph);
        mkrt__stat_add(&dp->state->emitted_total, b->round_edges);
    }
    uint32_t failed = b->failed_n;
    for (uint32_t i = 0; i < failed; i++)
        report(dp, &b->failed[i], b->failed_why[i]);
    /* Every drained item in exactly one of the three (see batch.h); a
     * round's items are the edge items its chunks stand for. */
    mkrt__stat_add(&dp->stats->executed, (b->round ? b->round_edges : b->kept) - (failed - b->refused));
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
    mkrt__stat_add(&dp->state->emitted_done, b->round ? b->round_edges : b->emitted_n);
    /* release: pairs with the acquire load in mkrt_drain; every counter
     * above is visible to a drain that returns. */
    atomic_fetch_add_explicit(&dp->completed_total, b->n - b->emitted_n, memory_order_release);
    mkrt__waitq_notify(&dp->done_wq);
}

void mkrt__stage_fail_remaining(mkrt__dispatch *dp, mkrt__batch *b)
{
    while (mkrt__stage_drain(dp, b) > 0) {
        b->failed_n = 0;
        if (b->round) {
            /* A round fails as the edge items its chunks stand for (at
             * most max_batch), all of them emitted items. */
            for (size_t i = 0; i < b->n; i++) {
                mkrt_item chunk = b->items[i];
                if (!mkrt__graph_chunk_abandon(dp->state->graph, &chunk))
                    continue; /* a public traversal's: it ends MKRT_ETIMEDOUT */
                for (uint32_t j = 0;; j++) {
                    bool exists;
                    uint64_t e = mkrt__graph_chunk_edge(dp->state->graph, &chunk, j, &exists);
                    if (!exists)
                        break;
                    mkrt_item edge = mkrt__graph_edge_item(dp->state->graph, &chunk, e, false);
                    mkrt__batch_fail(b, &edge, MKRT_ETIMEDOUT);
                }
            }
            b->round = false;
            b->n = b->emitted_n = b->failed_n;
        } else {
            for (size_t i = 0; i < b->n; i++)
                mkrt__batch_fail(b, &b->items[i], MKRT_ETIMEDOUT);
        }
        b->admitted = b->kept = 0;
        b->exec_n = b->layers = 0;
        b->refused = (uint32_t)b->n;
        mkrt__stage_complete(dp, b);
    }
}
