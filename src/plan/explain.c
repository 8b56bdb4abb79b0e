/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/explain.c - the planner's state: its per-ring arrays, the
 * per-decision counters and the EXPLAIN ring of the last batch plans.
 *
 * The ring is a seqlock per record over relaxed atomic words: the one
 * thread that dispatches (the token's holder) writes a record as
 * seq odd, words, seq even; a reader copies the words between two reads
 * of seq and retries a record that changed meanwhile. The writer never
 * waits for a reader, and the record costs the path about twenty relaxed
 * stores per batch. */
#include <stdalign.h>
#include <string.h>

#include "base/alloc_internal.h"
#include "plan/decide.h"

bool mkrt__planner_init(mkrt__planner *p, uint32_t slots, uint32_t off)
{
    p->off = off;
    p->fuse_prev = MKRT_WAVE_NONE;
    p->slots = slots;
    p->waiting = mkrt__alloc_zeroed((size_t)slots * sizeof *p->waiting, alignof(uint64_t));
    p->age = mkrt__alloc_zeroed((size_t)slots * sizeof *p->age, alignof(uint32_t));
    p->served = mkrt__alloc_zeroed((size_t)slots * sizeof *p->served, alignof(bool));
    if (p->waiting == NULL || p->age == NULL || p->served == NULL) {
        mkrt__planner_fini(p);
        return false;
    }
    return true;
}

void mkrt__planner_fini(mkrt__planner *p)
{
    mkrt__free(p->waiting, (size_t)p->slots * sizeof *p->waiting);
    mkrt__free(p->age, (size_t)p->slots * sizeof *p->age);
    mkrt__free(p->served, (size_t)p->slots * sizeof *p->served);
    p->waiting = NULL;
    p->age = NULL;
    p->served = NULL;
}

void mkrt__planner_count(mkrt__planner *p, mkrt_plan_counter c, uint64_t d)
{
    /* relaxed: one writer (the dispatching thread); stats read a snapshot. */
    atomic_store_explicit(&p->n[c], atomic_load_explicit(&p->n[c], memory_order_relaxed) + d,
                          memory_order_relaxed);
}

void mkrt__planner_explain_put(mkrt__planner *p, const mkrt_plan_record *r)
{
    uint64_t w[MKRT__EXPLAIN_WORDS] = {0};
    memcpy(w, r, sizeof *r);
    /* relaxed: only the dispatching thread writes head and the records. */
    uint64_t h = atomic_load_explicit(&p->head, memory_order_relaxed);
    mkrt__explain_slot *s = &p->ring[h % MKRT__EXPLAIN_RING];
    uint64_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
    atomic_store_explicit(&s->seq, seq + 1, memory_order_relaxed);
    /* release fence: the odd seq is visible before any new word (pairs
     * with the reader's acquire fence before its second seq load). */
    atomic_thread_fence(memory_order_release);
    for (size_t i = 0; i < MKRT__EXPLAIN_WORDS; i++)
        atomic_store_explicit(&s->w[i], w[i], memory_order_relaxed);
    /* release: pairs with the reader's acquire load of seq (the words). */
    atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
    /* release: pairs with the acquire load of head in explain_get. */
    atomic_store_explicit(&p->head, h + 1, memory_order_release);
}

/* Copies one record; false when it was being rewritten. */
static bool read_slot(mkrt__explain_slot *s, mkrt_plan_record *out)
{
    uint64_t w[MKRT__EXPLAIN_WORDS];
    /* acquire: pairs with the writer's release store of the even seq. */
    uint64_t a = atomic_load_explicit(&s->seq, memory_order_acquire);
    if (a & 1)
        return false;
    for (size_t i = 0; i < MKRT__EXPLAIN_WORDS; i++)
        w[i] = atomic_load_explicit(&s->w[i], memory_order_relaxed);
    /* acquire fence: pairs with the writer's release fence after its odd
     * seq: a word of a newer record means the seq below differs. */
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&s->seq, memory_order_relaxed) != a)
        return false;
    memcpy(out, w, sizeof *out);
    return true;
}

size_t mkrt__planner_explain_get(mkrt__planner *p, mkrt_plan_record *out, size_t max)
{
    /* acquire: pairs with the release store of head in explain_put. */
    uint64_t h = atomic_load_explicit(&p->head, memory_order_acquire);
    uint64_t have = h < MKRT__EXPLAIN_RING ? h : MKRT__EXPLAIN_RING;
    /* Leave out the oldest one or two, which the writer may be reusing. */
    if (have == MKRT__EXPLAIN_RING)
        have -= 2;
    if (max < have)
        have = max;
    size_t n = 0;
    for (uint64_t i = h - have; i < h; i++) {
        mkrt_plan_record r;
        if (read_slot(&p->ring[i % MKRT__EXPLAIN_RING], &r) && r.batch != 0)
            out[n++] = r;
    }
    return n;
}
