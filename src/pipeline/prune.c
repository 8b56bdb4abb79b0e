/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/prune.c - stage dedupe: prunes only the duplicates that
 * cannot change the result (the ordering contract, with the op table's
 * idempotence rule) and skips the redundant arms ARMS marked where that
 * is legal (pipeline/arms.c), compacting items[0..kept) in place, and
 * levels the kept items in the same pass (pipeline/layer_internal.h: both
 * need the last writer of each handle; one table, one pass). Out of
 * memory (the layering scratch could not grow) runs the batch unpruned
 * and unskipped, b->layers 0: the split stage then runs every item as a
 * layer of its own. The scratch is the token holder's own (pipeline/
 * scratch.h).
 *
 * The plan cache (plan/shape_cache.h): the stage looks the batch's shape
 * up first (one lock-free RCU lookup, on whichever thread plans) and
 * reuses what the last batch of that shape measured: ARMS's detector is
 * not run where it found nothing (batch 1 and every 64th still probe),
 * and a shape whose split levelling conflicted levels serially (every
 * 64th tries again). What this batch measured goes back when it differs.
 *
 * SPLIT (plan/decide.h): a batch whose one pass costs more than handing
 * it to the CPU pool's idle executors is levelled in parts, one per
 * executor, each in its own scratch, merged exactly
 * (pipeline/layer_internal.h, mkrt__layer_split); where a handle crossed
 * parts the one pass runs after all. */
#include "pipeline/layer_internal.h"
#include "pipeline/stages.h"
#include "pipeline/dispatch.h"

_Static_assert(MKRT__SPLIT_MAX == MKRT__SPLIT_PARTS_MAX, "the split's parts: one bound");

/* SPLIT's outcomes (mkrt__shape_plan.split). SPLIT_DISJOINT: exact, and
 * no two parts' handle ranges overlapped, so the shape's next splits trust
 * the ranges and claim no handle (layer_internal.h, ranges); where they
 * overlap after all, that split counts as a conflict. */
enum { SPLIT_UNTRIED, SPLIT_EXACT, SPLIT_CONFLICT, SPLIT_DISJOINT };

/* SPLIT's probe (plan/decide.h, mkrt__decide_split): every
 * MKRT__ARMS_PROBE-th batch. */
static bool split_probe(const mkrt__batch *b)
{
    return b->seq % MKRT__ARMS_PROBE == 0;
}

/* The split levelling on the CPU pool's executors: SPLIT_EXACT or
 * SPLIT_DISJOINT (levelled, *kept, *layers, *skipped set), SPLIT_CONFLICT
 * (a handle crossed parts, or trusted ranges overlapped: nothing
 * changed), or SPLIT_UNTRIED (the pool was busy, no memory). ranges: the
 * shape's last split was SPLIT_DISJOINT. */
static int split_level(mkrt__dispatch *dp, mkrt__batch *b, size_t n, const mkrt__layer_rules *rules,
                       uint32_t parts, bool ranges, size_t *kept, size_t *layers, size_t *skipped)
{
    mkrt__backend *pool = mkrt__backends_cpu_pool(dp->backends, dp->nbackends);
    mkrt__dispatch_scratch *s = dp->scratch;
    for (uint32_t k = 0; k < parts; k++)
        if (s->split[k] == NULL && (s->split[k] = mkrt_layer_scratch_create(NULL)) == NULL)
            return SPLIT_UNTRIED;
    mkrt__layer_split sp;
    /* The kept items gather in exec_buf, free until the place stage. */
    if (!mkrt__layer_split_begin(&sp, s->layering, s->split, parts, b->items, b->exec_buf, n, rules, ranges))
        return SPLIT_UNTRIED;
    const uint64_t t0 = mkrt__now_ns();
    if (!pool->ops->run_task(pool, mkrt__layer_split_run, &sp))
        return SPLIT_UNTRIED;
    const uint64_t wall = mkrt__now_ns() - t0;
    uint64_t slowest = 0;
    for (uint32_t k = 0; k < parts; k++)
        slowest = sp.ns[k] > slowest ? sp.ns[k] : slowest;
    const double handoff = (double)(wall > slowest ? wall - slowest : 0);
    if (split_probe(b))
        mkrt__ema_restart(&dp->planner.costs.split_handoff_ns, handoff); /* see mkrt__decide_split */
    else
        mkrt__ema_add(&dp->planner.costs.split_handoff_ns, handoff);
    if (!mkrt__layer_split_end(&sp, kept, layers, skipped)) {
        b->note.plan_cache |= 8; /* EXPLAIN: split, thrown away */
        return SPLIT_CONFLICT;
    }
    b->note.plan_cache |= 4; /* EXPLAIN: levelled in parts */
    return sp.disjoint ? SPLIT_DISJOINT : SPLIT_EXACT;
}

/* Levels items[0..n) of b in the holder's scratch (and prunes them with
 * prune, skipping what ARMS marked where legal: *skipped), in `parts`
 * parts where SPLIT says so (*split: its outcome); false: out of memory,
 * nothing changed. */
static bool level(mkrt__dispatch *dp, mkrt__batch *b, size_t n, bool prune, const uint8_t *mark, size_t *skipped,
                  size_t *kept, size_t *layers, uint32_t parts, bool ranges, int *split)
{
    /* A batch of built-in ops (no user op, not a frontier round) takes the
     * built-ins' rules inline; the callbacks give the same answers. */
    const mkrt__layer_rules rules = {mkrt__item_commute_key, mkrt__item_idempotent, dp->state, prune,
                                     b->user_ops == 0 && !b->source->made, true, b->handle_lo, b->handle_hi,
                                     mark, mkrt__arm_covered, skipped};
    *split = parts > 1 ? split_level(dp, b, n, &rules, parts, ranges, kept, layers, skipped) : SPLIT_UNTRIED;
    if (*split != SPLIT_EXACT && *split != SPLIT_DISJOINT) {
        mkrt_error err;
        const uint32_t *lv;
        const uint64_t t0 = mkrt__now_ns();
        if (mkrt__layer_prune_levels(dp->scratch->layering, b->items, n, &rules, kept, layers, &lv, &err) !=
            MKRT_OK)
            return false;
        if (prune && n > 0)
            mkrt__ema_add(&dp->planner.costs.level_ns_item, (double)(mkrt__now_ns() - t0) / (double)n);
    }
    b->level_seq = ++dp->level_seq;
    dp->scratch->levelled_for = dp;
    dp->scratch->levelled_seq = b->level_seq;
    return true;
}

/* The executors a split may use: the CPU pool's, less the CPUs the
 * batch's publishing producers hold (SHED's width, batch_planner.c). */
static uint32_t split_parts(mkrt__dispatch *dp, mkrt__batch *b, const mkrt__shape_plan *was)
{
    mkrt__backend *pool = mkrt__backends_cpu_pool(dp->backends, dp->nbackends);
    if (pool == NULL || pool->ops->run_task == NULL || b->user_ops > 0)
        return 1;
    /* A shape whose last split conflicted stays serial; every 64th batch
     * looks again (the load may have changed). */
    if (was->split == SPLIT_CONFLICT && b->seq % MKRT__ARMS_PROBE != 0)
        return 1;
    uint32_t width = mkrt__plan_cpu_width(dp, b, pool->ops->executors(pool));
    return mkrt__decide_split(&dp->planner.costs, b->admitted, width, split_probe(b));
}

void mkrt__stage_dedupe(mkrt__dispatch *dp, mkrt__batch *b)
{
    /* The shape's learned plan, on whichever thread plans (lock-free). */
    const mkrt__shape shape = {b->op_sig, mkrt__bits(b->admitted), mkrt__bits(b->nseg + (b->emitted_n > 0)),
                               mkrt__bits(b->admitted ? (uint64_t)b->handle_hi - b->handle_lo + 1 : 0),
                               dp->planner.off};
    mkrt__shape_plan was, now;
    b->note.plan_cache = mkrt__shape_cache_get(&dp->shapes, &shape, &was) ? 1 : 2;
    const bool missed = b->note.plan_cache == 2;
    now = was;
    const uint8_t *mark = mkrt__stage_arms(dp, b, was.arms == 1);
    if (dp->scratch->looked > 0)
        now.arms = dp->scratch->marked > 0 ? 2 : 1;
    size_t kept, layers, skipped = 0;
    int split;
    b->level_seq = 0;
    if (!level(dp, b, b->admitted, true, mark, &skipped, &kept, &layers, split_parts(dp, b, &was),
               was.split == SPLIT_DISJOINT, &split)) {
        kept = b->admitted;
        layers = 0;
        skipped = 0;
    }
    if (split != SPLIT_UNTRIED)
        now.split = (uint8_t)split;
    now.layers = mkrt__bits(layers);
    mkrt__stage_arms_end(dp, b, skipped);
    b->kept = kept;
    b->layers = layers;
    if (missed || now.arms != was.arms || now.split != was.split || now.layers != was.layers)
        (void)mkrt__shape_cache_put(&dp->shapes, &shape, &now); /* out of memory: learned again */
}

void mkrt__stage_own_levels(mkrt__dispatch *dp, mkrt__batch *b)
{
    const mkrt__dispatch_scratch *s = dp->scratch;
    if (b->layered || b->level_seq == 0 || (s->levelled_for == dp && s->levelled_seq == b->level_seq))
        return;
    /* Levelled by another thread's scratch (a helper left the batch
     * prepared): the same items, the same rules, the same levels. */
    size_t kept, layers;
    int split;
    if (level(dp, b, b->kept, false, NULL, NULL, &kept, &layers, 1, false, &split) && kept == b->kept &&
        layers == b->layers)
        return;
    /* Out of memory: every item a layer of its own (stage layer_split's
     * rule for a batch it could not level). */
    b->exec = b->exec_buf;
    for (size_t k = 0; k < b->kept; k++) {
        b->exec[k] = b->items[k];
        b->layer_offsets[k + 1] = (uint32_t)(k + 1);
    }
    b->layer_offsets[0] = 0;
    b->exec_n = b->kept;
    b->layers = b->kept;
    b->layered = true;
}
