/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/drain.c - stage drain: the emitted items first (the
 * emission queue in emission order), or a batch of a made source
 * (plan/source.h), then items from the producers' rings. The rings'
 * source table is here too. */
#include <string.h>

#include "pipeline/stages.h"
#include "pipeline/dispatch.h"

/* p's items items[at..) just drained. */
static void note_segment(mkrt__batch *b, mkrt_producer *p, size_t at)
{
    if (b->nseg > 0 && b->segs[b->nseg - 1].p == p)
        b->segs[b->nseg - 1].end = p->drained;
    else
        b->segs[b->nseg++] = (mkrt__segment){p, p->drained, at};
}

/* Frees producers that were closed and whose every item has completed. */
static void retire_closed(mkrt__dispatch *dp, uint32_t slot, mkrt_producer *p)
{
    mkrt__mutex_lock(&dp->producers->producers_lock);
    /* release: pairs with acquire loads of slots (drain, stats). */
    atomic_store_explicit(&dp->producers->slots[slot], NULL, memory_order_release);
    atomic_fetch_sub_explicit(&dp->producers->producers_open, 1, memory_order_relaxed);
    /* relaxed: a hint (state/producers.h). */
    atomic_fetch_sub_explicit(&dp->producers->closed_unretired, 1, memory_order_relaxed);
    mkrt__mutex_unlock(&dp->producers->producers_lock);
    mkrt__producer_free(p);
}

/* Items emitted by completed batches of class c, [head, tail) of its
 * emission queue (state/state.h), at most `most`, at the batch's start. */
static size_t take_emitted(mkrt__dispatch *dp, mkrt__batch *b, size_t most, uint32_t c)
{
    const uint64_t cap = dp->cfg->emit_capacity;
    mkrt__emitq *q = &dp->state->emitq[c];
    size_t k = 0, want = most;
    while (q->head < q->tail && k < want) {
        size_t slot = (size_t)(q->head % cap);
        uint64_t run = cap - slot, left = q->tail - q->head;
        run = run < left ? run : left;
        run = run < want - k ? run : want - k;
        memcpy(b->items + k, q->ring + slot, (size_t)run * sizeof *b->items);
        k += (size_t)run;
        q->head += run;
    }
    return k;
}

static inline bool emitted_waiting(const mkrt__dispatch *dp, uint32_t c)
{
    return dp->state->emitq[c].head != dp->state->emitq[c].tail;
}

/* A producer's latency class. relaxed: it decides only which batch takes
 * its items, never whether or in what order (the drain's first look is
 * an acquire, below). */
static inline uint32_t class_of(const mkrt_producer *p)
{
    return atomic_load_explicit(&p->klass, memory_order_relaxed);
}

/* The rings' items are ops: the host runs them on the state group. */
static void rings_run(void *ctx, const mkrt_item *items, size_t from, size_t to, mkrt__fail_list *fails)
{
    mkrt__exec_range(ctx, items, from, to, fails);
}

/* A failure pair names the item that failed (its index) and the status. */
static bool rings_failed(void *ctx, const mkrt_item *items, size_t n, const uint32_t *pairs, uint32_t left,
                         uint32_t *used, mkrt_item *item, mkrt_status *why)
{
    (void)ctx;
    (void)left;
    *used = 1;
    if (pairs[0] >= n)
        return false;
    *item = items[pairs[0]];
    *why = (mkrt_status)(int32_t)pairs[1];
    return true;
}

/* An item not run fails as itself. */
static size_t rings_abandon(void *ctx, const mkrt_item *item, mkrt_item *out, size_t max)
{
    (void)ctx;
    if (max == 0)
        return 0;
    *out = *item;
    return 1;
}

void mkrt__dispatch_sources_init(mkrt__dispatch *dp, mkrt__state *st)
{
    dp->rings = (mkrt__source){.name = "rings", .ctx = st, .made = false, .run = rings_run,
                               .failed = rings_failed, .abandon = rings_abandon};
    dp->nsources = 0;
    dp->batch[0].source = dp->batch[1].source = &dp->rings;
}

bool mkrt__dispatch_source_add(mkrt__dispatch *dp, const mkrt__source *s)
{
    if (dp->nsources == MKRT__SOURCES_MAX || !s->made || s->take == NULL || s->pending == NULL ||
        s->run == NULL || s->failed == NULL || s->abandon == NULL)
        return false;
    dp->sources[dp->nsources++] = s;
    return true;
}

/* A batch of a made source (plan/source.h), the first that has items
 * from source_turn on. Every item they stand for is an emitted item. */
static size_t take_made(mkrt__dispatch *dp, mkrt__batch *b)
{
    for (uint32_t i = 0; i < dp->nsources; i++) {
        const uint32_t at = (dp->source_turn + i) % dp->nsources;
        const mkrt__source *s = dp->sources[at];
        mkrt__taken t = s->take(s->ctx, b->items, dp->batch_running);
        if (t.n == 0)
            continue;
        dp->source_turn = (at + 1) % dp->nsources;
        b->source = s;
        b->stands_for = t.stands_for; /* ran adds the rest at completion (complete.c) */
        b->levels = t.levels && t.n == 1 && s->part != NULL && s->next_level != NULL;
        mkrt__stat_add(&dp->state->emitted_total, t.stands_for);
        return t.n;
    }
    return 0;
}

/* Whether a made source has work (a frontier level in progress). */
static bool made_pending(mkrt__dispatch *dp)
{
    for (uint32_t i = 0; i < dp->nsources; i++)
        if (dp->sources[i]->pending(dp->sources[i]->ctx))
            return true;
    return false;
}

bool mkrt__emission_pending(mkrt__dispatch *dp)
{
    for (uint32_t c = 0; c < MKRT__CLASSES; c++)
        if (emitted_waiting(dp, c))
            return true;
    return made_pending(dp);
}


/* Numbers a drained batch and gives it its root (pipeline/dispatch.h):
 * the oldest work it may descend from. The emission root is let go once
 * nothing emitted waits (all of it is in this batch now). */
static size_t stamp(mkrt__dispatch *dp, mkrt__batch *b, size_t n)
{
    if (n == 0) {
        /* Nothing drained: if nothing is pending at all any more (a
         * frontier's last level ended without a batch), no completion
         * will say so: say it here. release: as in publish_roots
         * (complete.c); relaxed load: the token's holder wrote it. */
        if (!mkrt__emission_pending(dp)) {
            dp->emit_root = UINT64_MAX;
            if (dp->running == NULL && dp->drained == NULL &&
                atomic_load_explicit(&dp->pending_root, memory_order_relaxed) != UINT64_MAX) {
                atomic_store_explicit(&dp->pending_root, UINT64_MAX, memory_order_release);
                mkrt__waitq_notify(&dp->done_wq);
            }
        }
        return 0;
    }
    b->seq = ++dp->batch_seq;
    b->root = dp->emit_root < b->seq ? dp->emit_root : b->seq;
    if (!mkrt__emission_pending(dp))
        dp->emit_root = UINT64_MAX;
    return n;
}

/* Whether the drain leaves the rings alone: a quiesce waits past a batch
 * number, and work rooted there or below is pending (its emissions, or a
 * batch drained or running). Until that work is done no new item joins
 * it, so it cannot grow with other producers' load (mkrt_quiesce ends).
 * relaxed: the values only decide when new items are taken, never
 * whether; the holder of the token wrote pending_root itself. */
static bool intake_paused(mkrt__dispatch *dp)
{
    return atomic_load_explicit(&dp->quiescing, memory_order_relaxed) != 0 &&
           atomic_load_explicit(&dp->pending_root, memory_order_relaxed) <=
               atomic_load_explicit(&dp->quiesce_target, memory_order_relaxed);
}

/* DRAIN's look at the rings before a drain: each slot's items (the
 * planner's waiting), and the items per latency class; returns whether an
 * interactive producer is open. */
static bool scan_rings(mkrt__dispatch *dp, uint64_t *waiting_class)
{
    bool interactive = false;
    const uint32_t used = mkrt__producer_slots_used(dp->producers);
    for (uint32_t s = 0; s < used; s++) {
        /* acquire: pairs with the release store in mkrt_producer_open. */
        mkrt_producer *p = atomic_load_explicit(&dp->producers->slots[s], memory_order_acquire);
        uint64_t size = 0;
        if (p != NULL) {
            size = mkrt_spsc_ring_size(p->ring);
            /* acquire: pairs with the release store in mkrt_producer_set_class
             * (an interactive batch uses the emission queue allocated before). */
            uint32_t c = atomic_load_explicit(&p->klass, memory_order_acquire) & 1u;
            waiting_class[c] += size;
            interactive |= c == MKRT_CLASS_INTERACTIVE;
        }
        mkrt__plan_ring_seen(&dp->planner, s, size, 0);
    }
    return interactive;
}

/* Emitted items first (or a made source's batch), then round-robin passes over
 * the producer rings, at most burst_per_ring items per ring per pass, until
 * the batch is full or a pass finds nothing. With DRAIN on, a batch is of
 * one latency class (plan/decide.h): its emitted items and rings only. */
static size_t drain(mkrt__dispatch *dp, mkrt__batch *b);

/* The slot after s, round robin over the slots below `slots`. */
static inline uint32_t next_slot(uint32_t s, uint32_t slots)
{
    return s + 1 < slots ? s + 1 : 0;
}

size_t mkrt__stage_drain(mkrt__dispatch *dp, mkrt__batch *b)
{
    return stamp(dp, b, drain(dp, b));
}

static size_t drain(mkrt__dispatch *dp, mkrt__batch *b)
{
    const uint32_t slots = mkrt__producer_slots_used(dp->producers); /* the passes' bound */
    b->nseg = 0;
    b->n = 0;
    b->source = &dp->rings;
    b->stands_for = 0;
    b->levels = false;
    memset(&b->note, 0, sizeof b->note);
    bool progress = !intake_paused(dp);
    const bool on = !(dp->planner.off & MKRT_PLAN_DRAIN);
    const bool decide = progress && on;
    /* Latency classes, once a producer was marked interactive (acquire:
     * pairs with the release store in mkrt_producer_set_class). */
    const bool classes = on && atomic_load_explicit(&dp->producers->classes_used, memory_order_acquire);
    uint64_t waiting_class[MKRT__CLASSES] = {0};
    uint32_t klass = MKRT_CLASS_BULK;
    size_t cap = dp->cfg->max_batch; /* items this batch may take */
    if (classes) {
        /* DRAIN, classes: interactive work first, bulk aged; no bulk batch
         * is prepared behind a running one while an interactive producer
         * is open (plan/decide.h). */
        const bool open = decide && scan_rings(dp, waiting_class);
        const bool inter = emitted_waiting(dp, MKRT_CLASS_INTERACTIVE) || waiting_class[MKRT_CLASS_INTERACTIVE] > 0;
        const bool bulk = inter && (emitted_waiting(dp, MKRT_CLASS_BULK) ||
                                    waiting_class[MKRT_CLASS_BULK] > 0 || made_pending(dp));
        const bool hold = dp->running != NULL && (open || dp->running->klass == MKRT_CLASS_INTERACTIVE);
        klass = mkrt__plan_class(&dp->planner, inter, bulk, hold, &b->note);
        if (klass == MKRT__CLASS_HOLD)
            return 0; /* the dispatcher finishes the running batch and drains again */
        if (klass == MKRT_CLASS_BULK && open) {
            cap = mkrt__decide_bulk_cap(&dp->planner.costs.bulk_ns_item, dp->planner.slice_ns, cap);
            if (cap < dp->cfg->max_batch) {
                b->note.bulk_cap = (uint32_t)cap;
                mkrt__planner_count(&dp->planner, MKRT_PLAN_N_CLASS_CUT, 1);
            }
        }
    }
    b->klass = klass;
    size_t n = take_emitted(dp, b, cap, klass);
    if (klass == MKRT_CLASS_BULK) {
        /* A made source's batch is a batch of its own (bulk), after the
         * emitted items and alternating with the producers' items when
         * they have any. */
        bool made_turn = !dp->after_made || mkrt__rings_empty(dp);
        dp->after_made = false;
        if (n == 0 && made_turn && (n = take_made(dp, b)) > 0) {
            dp->after_made = true;
            b->emitted_n = b->n = n;
            return n;
        }
    }
    b->emitted_n = n;
    /* DRAIN: the ring the first pass starts at (plan/decide.h), from the
     * rings' occupancy now; with classes, this class's rings only. */
    if (decide && !classes)
        scan_rings(dp, waiting_class);
    for (uint32_t s = 0; decide && waiting_class[klass ^ 1u] > 0 && s < slots; s++) {
        /* acquire: pairs with the release store in mkrt_producer_open. */
        mkrt_producer *p = atomic_load_explicit(&dp->producers->slots[s], memory_order_acquire);
        if (p != NULL && class_of(p) != klass)
            mkrt__plan_ring_seen(&dp->planner, s, 0, 0);
    }
    /* dp->rr is below slots (0 with none): only this function sets it,
     * below a bound that never shrinks. */
    uint32_t rr = decide ? mkrt__plan_drain_first(&dp->planner, dp->rr, slots, &b->note) : dp->rr;
    while (progress && n < cap) {
        progress = false;
        for (uint32_t i = 0, slot = rr; i < slots && n < cap; i++, slot = next_slot(slot, slots)) {
            /* acquire: pairs with the release store in mkrt_producer_open. */
            mkrt_producer *p = atomic_load_explicit(&dp->producers->slots[slot], memory_order_acquire);
            if (p == NULL)
                continue;
            size_t waiting = mkrt_spsc_ring_size(p->ring);
            if (waiting > p->high_water) {
                p->high_water = waiting;
                if (waiting > mkrt__load_relaxed(&dp->stats->high_water))
                    atomic_store_explicit(&dp->stats->high_water, waiting, memory_order_relaxed);
            }
            const bool mine = !classes || class_of(p) == klass;
            size_t want = cap - n;
            want = want < dp->cfg->burst_per_ring ? want : dp->cfg->burst_per_ring;
            size_t k = mine ? mkrt_spsc_ring_pop(p->ring, b->items + n, want) : 0;
            if (mine)
                mkrt__plan_ring_seen(&dp->planner, slot, waiting > k ? waiting - k : 0, k);
            if (k > 0) {
                p->drained += k;
                note_segment(b, p, n);
                n += k;
                progress = true;
            } else if (!dp->helping && atomic_load(&p->state) == MKRT__PRODUCER_CLOSED &&
                       /* relaxed: published is final once the state is
                        * CLOSED with BUSY clear (seq_cst load above, after
                        * the closer's release), and only this thread
                        * writes completed and drained. */
                       mkrt__load_relaxed(&p->completed) == mkrt__load_relaxed(&p->published) &&
                       p->drained == mkrt__load_relaxed(&p->published)) {
                retire_closed(dp, slot, p);
            }
        }
        rr = next_slot(rr, slots);
    }
    dp->rr = rr;
    if (decide && n > b->emitted_n)
        mkrt__plan_drain_end(&dp->planner, n, cap, slots, &b->note);
    b->n = n;
    return n;
}

bool mkrt__rings_empty(mkrt__dispatch *dp)
{
    const uint32_t used = mkrt__producer_slots_used(dp->producers);
    for (uint32_t s = 0; s < used; s++) {
        /* acquire: pairs with the release store in mkrt_producer_open. */
        mkrt_producer *p = atomic_load_explicit(&dp->producers->slots[s], memory_order_acquire);
        if (p != NULL && (mkrt_spsc_ring_size(p->ring) > 0 ||
                          ((atomic_load(&p->state) & MKRT__PRODUCER_LIFE) == MKRT__PRODUCER_CLOSED &&
                           mkrt__load_relaxed(&p->completed) == mkrt__load_relaxed(&p->published))))
            return false; /* work, or a closed producer to retire */
    }
    return true;
}
