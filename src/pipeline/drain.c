/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/drain.c - stage drain: items from the producers' rings. */
#include "pipeline/stages.h"
#include "runtime/runtime_internal.h"

static void note_segment(mkrt__batch *b, mkrt_producer *p)
{
    if (b->nseg > 0 && b->segs[b->nseg - 1].p == p)
        b->segs[b->nseg - 1].end = p->drained;
    else
        b->segs[b->nseg++] = (mkrt__segment){p, p->drained};
}

/* Frees producers that were closed and whose every item has completed. */
static void retire_closed(mkrt_runtime *rt, uint32_t slot, mkrt_producer *p)
{
    mkrt__mutex_lock(&rt->producers_lock);
    /* release: pairs with acquire loads of slots (drain, stats). */
    atomic_store_explicit(&rt->slots[slot], NULL, memory_order_release);
    atomic_fetch_sub_explicit(&rt->producers_open, 1, memory_order_relaxed);
    mkrt__mutex_unlock(&rt->producers_lock);
    mkrt__producer_free(p);
}

/* Round-robin passes over the producer rings, at most burst_per_ring items
 * per ring per pass, until the batch is full or a pass finds nothing. */
size_t mkrt__stage_drain(mkrt_runtime *rt, mkrt__batch *b)
{
    const uint32_t slots = rt->cfg.max_producers;
    size_t n = 0;
    b->nseg = 0;
    b->n = 0;
    bool progress = true;
    while (progress && n < rt->cfg.max_batch) {
        progress = false;
        for (uint32_t i = 0; i < slots && n < rt->cfg.max_batch; i++) {
            uint32_t slot = (rt->rr + i) % slots;
            /* acquire: pairs with the release store in mkrt_producer_open. */
            mkrt_producer *p = atomic_load_explicit(&rt->slots[slot], memory_order_acquire);
            if (p == NULL)
                continue;
            size_t waiting = mkrt_spsc_ring_size(p->ring);
            if (waiting > p->high_water) {
                p->high_water = waiting;
                if (waiting > mkrt__load_relaxed(&rt->high_water))
                    atomic_store_explicit(&rt->high_water, waiting, memory_order_relaxed);
            }
            size_t want = rt->cfg.max_batch - n;
            want = want < rt->cfg.burst_per_ring ? want : rt->cfg.burst_per_ring;
            size_t k = mkrt_spsc_ring_pop(p->ring, b->items + n, want);
            if (k > 0) {
                n += k;
                p->drained += k;
                note_segment(b, p);
                progress = true;
            } else if (!rt->helping && atomic_load(&p->state) == MKRT__PRODUCER_CLOSED &&
                       /* relaxed: published is final once the state is
                        * CLOSED with BUSY clear (seq_cst load above, after
                        * the closer's release), and only this thread
                        * writes completed and drained. */
                       mkrt__load_relaxed(&p->completed) == mkrt__load_relaxed(&p->published) &&
                       p->drained == mkrt__load_relaxed(&p->published)) {
                retire_closed(rt, slot, p);
            }
        }
        rt->rr = (rt->rr + 1) % slots;
    }
    b->n = n;
    return n;
}

bool mkrt__rings_empty(mkrt_runtime *rt)
{
    for (uint32_t s = 0; s < rt->cfg.max_producers; s++) {
        /* acquire: pairs with the release store in mkrt_producer_open. */
        mkrt_producer *p = atomic_load_explicit(&rt->slots[s], memory_order_acquire);
        if (p != NULL && (mkrt_spsc_ring_size(p->ring) > 0 ||
                          ((atomic_load(&p->state) & MKRT__PRODUCER_LIFE) == MKRT__PRODUCER_CLOSED &&
                           mkrt__load_relaxed(&p->completed) == mkrt__load_relaxed(&p->published))))
            return false; /* work, or a closed producer to retire */
    }
    return true;
}
