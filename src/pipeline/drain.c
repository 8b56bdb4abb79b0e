/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/drain.c - stage drain: the emitted items first (the
 * emission queue in emission order), or a frontier round (the edges of the
 * frontier's vertices, as chunk items), then items from the producers'
 * rings. */
#include <string.h>

#include "pipeline/stages.h"
#include "pipeline/dispatch.h"

static void note_segment(mkrt__batch *b, mkrt_producer *p)
{
    if (b->nseg > 0 && b->segs[b->nseg - 1].p == p)
        b->segs[b->nseg - 1].end = p->drained;
    else
        b->segs[b->nseg++] = (mkrt__segment){p, p->drained};
}

/* Frees producers that were closed and whose every item has completed. */
static void retire_closed(mkrt__dispatch *dp, uint32_t slot, mkrt_producer *p)
{
    mkrt__mutex_lock(&dp->producers->producers_lock);
    /* release: pairs with acquire loads of slots (drain, stats). */
    atomic_store_explicit(&dp->producers->slots[slot], NULL, memory_order_release);
    atomic_fetch_sub_explicit(&dp->producers->producers_open, 1, memory_order_relaxed);
    mkrt__mutex_unlock(&dp->producers->producers_lock);
    mkrt__producer_free(p);
}

/* Items emitted by completed batches, [head, tail) of the emission queue. */
static size_t take_emitted(mkrt__dispatch *dp, mkrt__batch *b, size_t n)
{
    const uint64_t cap = dp->cfg->emit_capacity;
    size_t k = 0, want = dp->cfg->max_batch - n;
    while (dp->state->emit_head < dp->state->emit_tail && k < want) {
        size_t slot = (size_t)(dp->state->emit_head % cap);
        uint64_t run = cap - slot, left = dp->state->emit_tail - dp->state->emit_head;
        run = run < left ? run : left;
        run = run < want - k ? run : want - k;
        memcpy(b->items + n + k, dp->state->emit_ring + slot, (size_t)run * sizeof *b->items);
        k += (size_t)run;
        dp->state->emit_head += run;
    }
    return k;
}

/* Direction-optimizing levels (Beamer, Asanovic and Patterson's
 * heuristic, with their constants): a pulling op's level runs pulled when
 * its frontier's edges exceed 1/ALPHA of the edges not yet settled, and
 * stays pulled while the frontier holds at least 1/BETA of the vertices. */
#define PULL_ALPHA 14u
#define PULL_BETA 24u

static bool slot_pulls(const mkrt__dispatch *dp, uint32_t slot)
{
    return slot > 0 && dp->state->ops[dp->graph_state.slot_op[slot]].pulls;
}

/* The level that ends: its pulled slots' frontier bits were read, not
 * taken; clears them (no batch runs). relaxed: as take_round. */
static void end_pulled_level(mkrt__dispatch *dp)
{
    for (uint32_t s = 1; s <= dp->graph_state.slots_used; s++)
        if (dp->graph_state.expand.pull_on >> s & 1)
            for (size_t w = 0; w < dp->graph_state.slot_words; w++)
                atomic_store_explicit(&dp->graph_state.frontier_r[s * dp->graph_state.slot_words + w], 0, memory_order_relaxed);
    dp->graph_state.expand.pull_on = 0;
    dp->graph_state.expand.pull_pending = false;
}

/* RELAX's distance buckets (delta-stepping's, over levels): a level of
 * RELAX's frontier (slot 0) on a weighted graph expands only its vertices
 * whose distance is below expand.bound, and sets the others aside in far
 * (unexpanded), so a vertex far from the root is not expanded at each of
 * the many distances it passes on the way down, nor looked at again at
 * each level of the bucket. The bound starts at, and moves up to, the
 * bucket (of bucket_width) above the nearest vertex of the level and of
 * far (far_min, a lower bound: a vertex leaves far when it is expanded,
 * and far_min keeps its distance until far is emptied). far goes back into
 * the frontier when a level starts with far_min below the bound (the
 * bucket moved up, or far_min is stale), when the frontier runs empty, when a
 * level and far together hold fewer than bucket_min vertices
 * (ops/graph_block.h: deferring saves less than the extra levels cost;
 * the level expands them all), and on abort; the bound is 0 again when
 * both are empty. A vertex in far that an op lowers is in the frontier
 * again and is expanded (and leaves far) once below the bound. relaxed
 * (cells): ops lower them concurrently; a stale distance only defers a
 * vertex, which stays in far. */

static uint64_t cell_now(const mkrt__dispatch *dp, uint32_t v)
{
    return atomic_load_explicit((_Atomic uint64_t *)&dp->state->cells[v], memory_order_relaxed);
}

/* Moves far's vertices into the frontier `to` (frontier_r, or frontier_w
 * with frontier_any set by the caller). relaxed: far is the dispatcher's
 * own; to as the frontier's other bits (see take_round). */
static void far_restore(mkrt__dispatch *dp, _Atomic uint64_t *to)
{
    if (dp->graph_state.expand.far_n == 0)
        return;
    for (size_t w = 0; w < dp->graph_state.slot_words; w++) {
        uint64_t x = atomic_load_explicit(&dp->graph_state.far[w], memory_order_relaxed);
        if (x != 0) {
            atomic_fetch_or_explicit(&to[w], x, memory_order_relaxed);
            atomic_store_explicit(&dp->graph_state.far[w], 0, memory_order_relaxed);
        }
    }
    dp->graph_state.expand.far_n = 0;
}

static void start_bucket(mkrt__dispatch *dp)
{
    if (dp->graph_state.graph.weights == NULL)
        return;
    uint64_t near = dp->graph_state.expand.far_n != 0 ? dp->graph_state.expand.far_min : UINT64_MAX, n = dp->graph_state.expand.far_n;
    for (size_t w = 0; w < dp->graph_state.slot_words; w++)
        for (uint64_t x = atomic_load_explicit(&dp->graph_state.frontier_r[w], memory_order_relaxed); x != 0; x &= x - 1) {
            uint64_t d = cell_now(dp, (uint32_t)(w * 64 + (size_t)__builtin_ctzll(x)));
            near = d < near ? d : near;
            n++;
        }
    if (near == UINT64_MAX || n < dp->graph_state.bucket_min) {
        far_restore(dp, dp->graph_state.frontier_r);
        dp->graph_state.expand.bound = 0;
        return;
    }
    uint64_t bound = (near / dp->graph_state.bucket_width + 1) * dp->graph_state.bucket_width;
    if (bound < near) /* wrapped: everything is in the last bucket */
        bound = UINT64_MAX;
    dp->graph_state.expand.bound = bound > dp->graph_state.expand.bound ? bound : dp->graph_state.expand.bound;
    /* far may hold vertices below the bound now (it moved up, or
     * far_min is stale): they are this level's (far_min is exact again
     * once the level deferred the rest). */
    if (dp->graph_state.expand.far_n != 0 && dp->graph_state.expand.far_min < dp->graph_state.expand.bound)
        far_restore(dp, dp->graph_state.frontier_r);
}

/* Of RELAX's frontier word w (taken), the vertices of the current bucket;
 * the others go to far. Those expanded leave far. */
static uint64_t in_bucket(mkrt__dispatch *dp, size_t w, uint64_t mask)
{
    if (dp->graph_state.expand.bound == 0 || w >= dp->graph_state.slot_words)
        return mask;
    uint64_t later = 0, far_min = dp->graph_state.expand.far_n != 0 ? dp->graph_state.expand.far_min : UINT64_MAX;
    for (uint64_t x = mask; x != 0; x &= x - 1) {
        uint32_t bit = (uint32_t)__builtin_ctzll(x);
        uint64_t d = cell_now(dp, (uint32_t)(w * 64 + bit));
        if (d >= dp->graph_state.expand.bound) {
            later |= (uint64_t)1 << bit;
            far_min = d < far_min ? d : far_min;
        }
    }
    /* relaxed: far is the dispatcher's own. */
    uint64_t was = atomic_load_explicit(&dp->graph_state.far[w], memory_order_relaxed), now = (was | later) & ~(mask & ~later);
    if (now != was) {
        atomic_store_explicit(&dp->graph_state.far[w], now, memory_order_relaxed);
        dp->graph_state.expand.far_n = dp->graph_state.expand.far_n + (uint64_t)__builtin_popcountll(now) - (uint64_t)__builtin_popcountll(was);
    }
    dp->graph_state.expand.far_min = far_min;
    return mask & ~later;
}

/* A new level (frontier_r just swapped in): its vertices settle, and each
 * pulling slot chooses push or pull for it. */
static void start_level(mkrt__dispatch *dp, bool aborting)
{
    const uint64_t *off = dp->graph_state.graph.offsets, all = off[dp->graph_state.graph.vertices];
    if (!aborting)
        start_bucket(dp);
    uint32_t was = dp->graph_state.expand.pull_on;
    dp->graph_state.expand.pull_on = 0;
    for (uint32_t s = 1; s <= dp->graph_state.slots_used; s++) {
        if (!slot_pulls(dp, s))
            continue;
        uint64_t nf = 0, mf = 0;
        for (size_t w = 0; w < dp->graph_state.slot_words; w++) {
            size_t at = s * dp->graph_state.slot_words + w;
            uint64_t x = atomic_load_explicit(&dp->graph_state.frontier_r[at], memory_order_relaxed);
            if (x == 0)
                continue;
            /* relaxed: read by the workers after the launch (release). */
            atomic_store_explicit(&dp->graph_state.visited[at], atomic_load_explicit(&dp->graph_state.visited[at], memory_order_relaxed) | x,
                                  memory_order_relaxed);
            nf += (uint64_t)__builtin_popcountll(x);
            for (; x != 0; x &= x - 1) {
                uint32_t v = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(x));
                mf += off[v + 1] - off[v];
            }
        }
        if (nf == 0)
            continue;
        dp->graph_state.expand.visited_dirty = true;
        uint64_t unsettled = all - dp->graph_state.expand.visited_edges[s];
        dp->graph_state.expand.visited_edges[s] += mf;
        bool pull = (was >> s & 1) ? nf * PULL_BETA >= dp->graph_state.graph.vertices : mf * PULL_ALPHA > unsettled;
        /* A pulled round needs room for two failure pairs per vertex of
         * a word (take_pulled). */
        if (pull && !aborting && dp->cfg->max_batch >= 128)
            dp->graph_state.expand.pull_on |= 1u << s;
    }
    if (dp->graph_state.expand.pull_on != 0) {
        dp->graph_state.expand.pull_pending = true;
        dp->graph_state.expand.pull_slot = 0;
        dp->graph_state.expand.pull_word = dp->graph_state.slot_words; /* find the first pulled slot */
    }
}

/* The frontiers ran empty: every vertex is unsettled again (no batch runs). */
static void unsettle(mkrt__dispatch *dp)
{
    for (uint32_t s = 1; s <= dp->graph_state.slots_used; s++) {
        if (!slot_pulls(dp, s))
            continue;
        for (size_t w = 0; w < dp->graph_state.slot_words; w++)
            atomic_store_explicit(&dp->graph_state.visited[s * dp->graph_state.slot_words + w], 0, memory_order_relaxed);
        dp->graph_state.expand.visited_edges[s] = 0;
    }
    dp->graph_state.expand.visited_dirty = false;
}

/* Pulled chunks (MKRT__EXPAND_PULL), one per visited word with an
 * unsettled vertex, at most cap / 2 unsettled vertices (each fails at
 * most once, in two failure pairs). */
static size_t take_pulled(mkrt__dispatch *dp, mkrt__batch *b, size_t k, uint64_t cap)
{
    uint64_t vertices = 0;
    while (dp->graph_state.expand.pull_pending) {
        if (dp->graph_state.expand.pull_word >= dp->graph_state.slot_words) {
            uint32_t s = dp->graph_state.expand.pull_slot + 1;
            while (s <= dp->graph_state.slots_used && !(dp->graph_state.expand.pull_on >> s & 1))
                s++;
            if (s > dp->graph_state.slots_used) {
                dp->graph_state.expand.pull_pending = false;
                break;
            }
            dp->graph_state.expand.pull_slot = s;
            dp->graph_state.expand.pull_word = 0;
        }
        const uint32_t s = dp->graph_state.expand.pull_slot;
        const size_t w = dp->graph_state.expand.pull_word;
        uint64_t open = ~atomic_load_explicit(&dp->graph_state.visited[s * dp->graph_state.slot_words + w], memory_order_relaxed);
        if (dp->graph_state.graph.vertices - w * 64 < 64)
            open &= ((uint64_t)1 << (dp->graph_state.graph.vertices - w * 64)) - 1;
        uint64_t n = (uint64_t)__builtin_popcountll(open);
        if (n > 0 && vertices + n > cap / 2)
            break;
        if (n > 0) {
            b->items[k++] = (mkrt_item){MKRT__OP_EXPAND, (uint32_t)(w * 64), (uint32_t)(w * 64),
                                        s << MKRT__EXPAND_CHUNK_BITS | MKRT__EXPAND_PULL};
            vertices += n;
        }
        dp->graph_state.expand.pull_word++;
    }
    return k;
}

/* A frontier round: the frontier's vertices as EXPAND chunk items (see
 * ops/op_table.h), slot by slot and vertex by vertex, up to max_batch
 * edges (so a round's edge failures fit the failure list); a vertex's
 * bit is taken with its word, and its chunks may span rounds. Levels:
 * rounds take frontier_r, ops mark frontier_w; a scan of the next level
 * starts (the two swap) only once frontier_r is used up and no batch runs,
 * so every round of a level ends before the next level's first starts
 * (level-synchronous: a BFS visits each vertex once). The flag says a bit
 * of frontier_w may be set; at most one scan starts per round, so a
 * vertex appears once in a round. relaxed (all): the bits are hints,
 * see mkrt__frontier_add in ops/op_exec.c. The graph is read only once a
 * bit was set: by an op that ran after mkrt_graph_register (registration
 * precedes the first producer). */
static size_t take_round(mkrt__dispatch *dp, mkrt__batch *b)
{
    const uint64_t cap = dp->cfg->max_batch, chunk = dp->graph_state.expand_chunk;
    size_t k = 0;
    uint64_t edges = 0;
    bool started = false;
    /* acquire: pairs with the release store of aborting; then the pulled
     * slots' bits go out as pushed edges, which fail one by one, and no
     * vertex waits for a later bucket. */
    if ((dp->graph_state.expand.pull_on != 0 || dp->graph_state.expand.bound != 0) &&
        atomic_load_explicit(&dp->aborting, memory_order_acquire)) {
        dp->graph_state.expand.pull_on = 0;
        dp->graph_state.expand.pull_pending = false;
        dp->graph_state.expand.bound = 0;
        far_restore(dp, dp->graph_state.frontier_r);
        dp->graph_state.expand.scanning = true;
        dp->graph_state.expand.word = 0;
    }
    for (;;) {
        if (dp->graph_state.expand.edge < dp->graph_state.expand.end) {
            uint64_t len = dp->graph_state.expand.end - dp->graph_state.expand.edge < chunk ? dp->graph_state.expand.end - dp->graph_state.expand.edge : chunk;
            if (edges + len > cap)
                break;
            uint32_t slot = (uint32_t)((dp->graph_state.expand.word - 1) / dp->graph_state.slot_words);
            uint64_t c = (dp->graph_state.expand.edge - dp->graph_state.graph.offsets[dp->graph_state.expand.v]) / chunk;
            b->items[k++] = (mkrt_item){MKRT__OP_EXPAND, dp->graph_state.expand.v, dp->graph_state.expand.v,
                                        slot << MKRT__EXPAND_CHUNK_BITS | (uint32_t)c};
            edges += len;
            dp->graph_state.expand.edge += len;
        } else if (dp->graph_state.expand.mask != 0) {
            uint32_t bit = (uint32_t)__builtin_ctzll(dp->graph_state.expand.mask);
            dp->graph_state.expand.mask &= dp->graph_state.expand.mask - 1;
            uint32_t v = (uint32_t)(((dp->graph_state.expand.word - 1) % dp->graph_state.slot_words) * 64 + bit);
            dp->graph_state.expand.v = v;
            dp->graph_state.expand.edge = dp->graph_state.graph.offsets[v];
            dp->graph_state.expand.end = dp->graph_state.graph.offsets[v + 1];
        } else if (dp->graph_state.expand.scanning) {
            size_t w = dp->graph_state.expand.word, used = (dp->graph_state.slots_used + 1) * dp->graph_state.slot_words;
            while (w < used &&
                   ((dp->graph_state.expand.pull_on != 0 && (dp->graph_state.expand.pull_on >> (w / dp->graph_state.slot_words) & 1)) ||
                    atomic_load_explicit(&dp->graph_state.frontier_r[w], memory_order_relaxed) == 0))
                w++;
            if (w >= used) {
                dp->graph_state.expand.scanning = false;
                continue;
            }
            dp->graph_state.expand.mask = in_bucket(dp, w, atomic_exchange_explicit(&dp->graph_state.frontier_r[w], 0, memory_order_relaxed));
            dp->graph_state.expand.word = w + 1;
            /* The word's vertices' rows are read one by one below: start
             * their (random) loads together. */
            for (uint64_t x = dp->graph_state.expand.mask; x != 0; x &= x - 1)
                __builtin_prefetch(&dp->graph_state.graph.offsets[(w % dp->graph_state.slot_words) * 64 + (size_t)__builtin_ctzll(x)], 0, 3);
        } else if (dp->graph_state.expand.pull_pending) {
            if (k > 0)
                break; /* a pulled round is a round of its own */
            k = take_pulled(dp, b, k, cap);
            b->pull = k > 0;
            break;
        } else if (!started && !dp->batch_running &&
                   atomic_exchange_explicit(&dp->graph_state.frontier_any, false, memory_order_relaxed)) {
            /* The next level: no batch runs, so no op sets bits now; the
             * launch of the round publishes the swap to the workers. */
            end_pulled_level(dp);
            _Atomic uint64_t *next = dp->graph_state.frontier_w;
            dp->graph_state.frontier_w = dp->graph_state.frontier_r;
            dp->graph_state.frontier_r = next;
            dp->graph_state.expand.scanning = true;
            dp->graph_state.expand.word = 0;
            /* acquire: as above. */
            start_level(dp, atomic_load_explicit(&dp->aborting, memory_order_acquire));
            started = true;
        } else if (!started && !dp->batch_running && dp->graph_state.expand.far_n != 0) {
            /* The bucket is done: far is the next level (no batch runs,
             * so no op sets bits now). */
            far_restore(dp, dp->graph_state.frontier_w);
            atomic_store_explicit(&dp->graph_state.frontier_any, true, memory_order_relaxed);
        } else if (!started && !dp->batch_running && (dp->graph_state.expand.visited_dirty || dp->graph_state.expand.bound != 0)) {
            end_pulled_level(dp); /* the last level */
            unsettle(dp);
            dp->graph_state.expand.bound = 0;
        } else {
            break;
        }
    }
    b->round = k > 0;
    b->round_edges = edges; /* a pulled round's: once it ran (complete.c) */
    mkrt__stat_add(&dp->state->emitted_total, edges);
    return k;
}

bool mkrt__emission_pending(mkrt__dispatch *dp)
{
    return dp->state->emit_head != dp->state->emit_tail || dp->graph_state.expand.edge < dp->graph_state.expand.end || dp->graph_state.expand.mask != 0 ||
           dp->graph_state.expand.scanning || dp->graph_state.expand.pull_pending || dp->graph_state.expand.visited_dirty || dp->graph_state.expand.bound != 0 ||
           dp->graph_state.expand.far_n != 0 ||
           /* relaxed: see take_round. */
           atomic_load_explicit(&dp->graph_state.frontier_any, memory_order_relaxed);
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

/* Emitted items first (or a frontier round), then round-robin passes over
 * the producer rings, at most burst_per_ring items per ring per pass, until
 * the batch is full or a pass finds nothing. */
static size_t drain(mkrt__dispatch *dp, mkrt__batch *b);

size_t mkrt__stage_drain(mkrt__dispatch *dp, mkrt__batch *b)
{
    return stamp(dp, b, drain(dp, b));
}

static size_t drain(mkrt__dispatch *dp, mkrt__batch *b)
{
    const uint32_t slots = dp->cfg->max_producers;
    b->nseg = 0;
    b->n = 0;
    b->round = false;
    b->pull = false;
    b->round_edges = 0;
    size_t n = take_emitted(dp, b, 0);
    /* A frontier round is a batch of its own, after the emitted items and
     * alternating with the producers' items when they have any. */
    bool round_turn = !dp->graph_state.expand.after_round || mkrt__rings_empty(dp);
    dp->graph_state.expand.after_round = false;
    if (n == 0 && round_turn && (n = take_round(dp, b)) > 0) {
        dp->graph_state.expand.after_round = true;
        b->emitted_n = b->n = n;
        return n;
    }
    b->emitted_n = n;
    bool progress = !intake_paused(dp);
    while (progress && n < dp->cfg->max_batch) {
        progress = false;
        for (uint32_t i = 0; i < slots && n < dp->cfg->max_batch; i++) {
            uint32_t slot = (dp->rr + i) % slots;
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
            size_t want = dp->cfg->max_batch - n;
            want = want < dp->cfg->burst_per_ring ? want : dp->cfg->burst_per_ring;
            size_t k = mkrt_spsc_ring_pop(p->ring, b->items + n, want);
            if (k > 0) {
                n += k;
                p->drained += k;
                note_segment(b, p);
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
        dp->rr = (dp->rr + 1) % slots;
    }
    b->n = n;
    return n;
}

bool mkrt__rings_empty(mkrt__dispatch *dp)
{
    for (uint32_t s = 0; s < dp->cfg->max_producers; s++) {
        /* acquire: pairs with the release store in mkrt_producer_open. */
        mkrt_producer *p = atomic_load_explicit(&dp->producers->slots[s], memory_order_acquire);
        if (p != NULL && (mkrt_spsc_ring_size(p->ring) > 0 ||
                          ((atomic_load(&p->state) & MKRT__PRODUCER_LIFE) == MKRT__PRODUCER_CLOSED &&
                           mkrt__load_relaxed(&p->completed) == mkrt__load_relaxed(&p->published))))
            return false; /* work, or a closed producer to retire */
    }
    return true;
}
