/* SPDX-License-Identifier: BSD-2-Clause */
/* src/runtime/producer.c - producers (open, close, the life word) and
 * publishing: mkrt_publish_some, mkrt_publish, mkrt_try_publish, mkrt_fence. */
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <unistd.h>

#include "base/cpus.h"
#include "base/error_internal.h"
#include "base/spin_wait.h"
#include "runtime/api_internal.h"
#include "queue/spsc_wait.h"
#include "backend/cpu_pool.h"
#include "backend/megakernel_backend.h"

static mkrt_producer *open_refused(mkrt_error *err, mkrt_status st, const char *why)
{
    mkrt__error_set(err, st, "mkrt_producer_open: %s", why);
    return NULL;
}

/* Under producers_lock: the first free slot (max_producers when none), and
 * how many taken slots hold closed producers the dispatcher has yet to
 * retire. The dispatcher cannot free a producer here (it clears the slot
 * under the lock first). relaxed: the lock orders the slots; a stale OPEN
 * state only means one more look. */
static uint32_t free_slot(mkrt_runtime *rt, uint32_t *retiring)
{
    *retiring = 0;
    for (uint32_t s = 0; s < rt->cfg.max_producers; s++) {
        mkrt_producer *q = atomic_load_explicit(&rt->producers.slots[s], memory_order_relaxed);
        if (q == NULL)
            return s;
        *retiring += (atomic_load_explicit(&q->state, memory_order_relaxed) & MKRT__PRODUCER_LIFE) ==
                     MKRT__PRODUCER_CLOSED;
    }
    return rt->cfg.max_producers;
}

/* The refusal once mkrt_destroy began (checked before and under the lock). */
static mkrt_producer *refused_closing(mkrt_error *err)
{
    return open_refused(err, MKRT_ECLOSED, "mkrt_destroy began. Fix: open producers before shutting down.");
}

mkrt_producer *mkrt_producer_open(mkrt_runtime *rt, mkrt_error *err)
{
    if (rt == NULL)
        return open_refused(err, MKRT_EINVAL, "the runtime is NULL. Fix: pass the runtime from "
                                              "mkrt_create.");
    if (atomic_load_explicit(&rt->producers.closing, memory_order_acquire))
        return refused_closing(err);
    mkrt_producer *p = mkrt__alloc_zeroed(sizeof *p, alignof(mkrt_producer));
    mkrt_spsc_ring *ring = mkrt_spsc_ring_create(rt->cfg.ring_capacity, NULL);
    mkrt_spsc_ring *stamps = mkrt_spsc_ring_create(256, NULL);
    if (p == NULL || ring == NULL || stamps == NULL) {
        mkrt__free(p, sizeof *p);
        mkrt_spsc_ring_destroy(ring);
        mkrt_spsc_ring_destroy(stamps);
        mkrt__error_set(err, MKRT_ENOMEM,
                        "mkrt_producer_open could not allocate a %zu-item ring. Fix: lower "
                        "ring_capacity or free memory.",
                        rt->cfg.ring_capacity);
        return NULL;
    }
    p->rt = rt;
    p->ring = ring;
    p->stamps = stamps;
    mkrt__spin_budget_init(&p->room_spin);
    /* A closed producer keeps its slot until the dispatcher retires it
     * (once its items completed): a full table with closed producers in it
     * waits for that, up to RETIRE_WAIT_NS, rather than refusing an open
     * that follows a close. The loop leaves with producers_lock held. */
    const uint64_t RETIRE_WAIT_NS = 2000000000u;
    uint64_t waited_since = 0;
    uint32_t slot, retiring;
    bool closing;
    for (;;) {
        mkrt__mutex_lock(&rt->producers.producers_lock);
        slot = free_slot(rt, &retiring);
        /* acquire: pairs with the release store of closing in mkrt_destroy,
         * which closes the rings of the producers in the slots under this
         * lock: a producer added after that would have an open ring. */
        closing = atomic_load_explicit(&rt->producers.closing, memory_order_acquire);
        if (slot < rt->cfg.max_producers || closing || retiring == 0)
            break;
        uint64_t now = mkrt__now_ns();
        if (waited_since == 0)
            waited_since = now;
        else if (now - waited_since > RETIRE_WAIT_NS)
            break;
        mkrt__mutex_unlock(&rt->producers.producers_lock);
        mkrt__waitq_notify(&rt->dispatch.work_wq); /* the dispatcher retires closed producers */
        mkrt__thread_sleep_ns(100000);
    }
    if (slot == rt->cfg.max_producers || closing) {
        mkrt__mutex_unlock(&rt->producers.producers_lock);
        mkrt__producer_free(p);
        if (closing)
            return refused_closing(err);
        if (retiring > 0)
            mkrt__error_set(err, MKRT_EAGAIN,
                            "all %u producer slots are in use, %u of them by closed producers "
                            "whose items had not completed after %llu ms. Fix: close a producer "
                            "or raise mkrt_config.max_producers.",
                            rt->cfg.max_producers, retiring,
                            (unsigned long long)(RETIRE_WAIT_NS / 1000000u));
        else
            mkrt__error_set(err, MKRT_EAGAIN,
                            "all %u producer slots are in use. Fix: close a producer or raise "
                            "mkrt_config.max_producers.",
                            rt->cfg.max_producers);
        return NULL;
    }
    /* Only a successful open freezes the op table and takes an id. */
    rt->ops_frozen = true;
    p->slot = slot;
    p->id = rt->producers.next_producer_id++;
    atomic_fetch_add_explicit(&rt->producers.producers_open, 1, memory_order_relaxed);
    /* release: pairs with the dispatcher's acquire load of the slot. */
    atomic_store_explicit(&rt->producers.slots[slot], p, memory_order_release);
    /* release: pairs with mkrt__producer_slots_used's acquire (after the
     * slot's store). relaxed load: written under this lock only. */
    if (slot >= atomic_load_explicit(&rt->producers.slots_used, memory_order_relaxed))
        atomic_store_explicit(&rt->producers.slots_used, slot + 1, memory_order_release);
    mkrt__mutex_unlock(&rt->producers.producers_lock);
    return p;
}

void mkrt_producer_close(mkrt_producer *p)
{
    if (p == NULL)
        return;
    /* seq_cst: against mkrt_destroy's CAS OPEN -> ORPHANED. BUSY is held
     * across the notify, the last touch of the runtime. */
    uint32_t expect = MKRT__PRODUCER_OPEN;
    if (atomic_compare_exchange_strong(&p->state, &expect,
                                       MKRT__PRODUCER_CLOSED | MKRT__PRODUCER_BUSY)) {
        /* relaxed: a hint (producers.h), ordered before the wake's look
         * by the notify's fence. */
        atomic_fetch_add_explicit(&p->rt->producers.closed_unretired, 1, memory_order_relaxed);
        mkrt__waitq_notify(&p->rt->dispatch.work_wq); /* the runtime retires it once drained */
        mkrt__owner_leave(p, MKRT__PRODUCER_BUSY); /* p may be freed from here on */
        return;
    }
    /* Orphaned by mkrt_destroy, which never looks at p again: ours to free. */
    mkrt__producer_free(p);
}

mkrt_status mkrt_producer_set_class(mkrt_producer *p, mkrt_class klass, mkrt_error *err)
{
    if (p == NULL)
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_producer_set_class got a NULL producer. Fix: pass "
                                                 "the producer from mkrt_producer_open.");
    if (klass != MKRT_CLASS_BULK && klass != MKRT_CLASS_INTERACTIVE)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_producer_set_class got class %d, which is not a latency class "
                               "(%d bulk, %d interactive). Fix: pass MKRT_CLASS_BULK or "
                               "MKRT_CLASS_INTERACTIVE.",
                               (int)klass, (int)MKRT_CLASS_BULK, (int)MKRT_CLASS_INTERACTIVE);
    if (!mkrt__owner_enter(p, MKRT__PRODUCER_BUSY, true))
        return mkrt__error_set(err, MKRT_ECLOSED, "mkrt_producer_set_class after mkrt_destroy began; "
                                                  "nothing changed. Fix: set the class before shutting down.");
    mkrt_runtime *rt = p->rt;
    mkrt_status st = MKRT_OK;
    mkrt__mutex_lock(&rt->producers.producers_lock);
    mkrt__emitq *q = &rt->state.emitq[MKRT_CLASS_INTERACTIVE];
    if (klass == MKRT_CLASS_INTERACTIVE && q->ring == NULL)
        q->ring = mkrt__alloc(mkrt__emit_ring_slots(&rt->cfg) * sizeof *q->ring, MKRT_CACHE_LINE);
    if (klass == MKRT_CLASS_INTERACTIVE && q->ring == NULL)
        st = mkrt__error_set(err, MKRT_ENOMEM,
                             "mkrt_producer_set_class could not allocate the interactive emission "
                             "queue (%zu items of %zu bytes); the producer stays bulk. Fix: lower "
                             "mkrt_config::emit_capacity or free memory.",
                             mkrt__emit_ring_slots(&rt->cfg), sizeof *q->ring);
    else
        /* release: pairs with the drain's acquire load of klass (it uses
         * the interactive queue, allocated above, only after it saw an
         * interactive producer). */
    {
        atomic_store_explicit(&p->klass, (uint32_t)klass, memory_order_release);
        /* release: pairs with the drain's acquire load (classes_used). */
        if (klass == MKRT_CLASS_INTERACTIVE)
            atomic_store_explicit(&rt->producers.classes_used, true, memory_order_release);
    }
    mkrt__mutex_unlock(&rt->producers.producers_lock);
    mkrt__owner_leave(p, MKRT__PRODUCER_BUSY);
    return st;
}

mkrt_status mkrt_publish_some(mkrt_producer *p, const mkrt_item *items, size_t n,
                              uint64_t timeout_ns, size_t *published, mkrt_error *err)
{
    size_t dummy;
    size_t *done = published ? published : &dummy;
    *done = 0;
    if (p == NULL || (n > 0 && items == NULL))
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_publish got a NULL producer or items for %zu "
                                                 "item(s). Fix: pass valid pointers.",
                               n);
    if (!mkrt__owner_enter(p, MKRT__PRODUCER_BUSY, true)) {
        bool orphan = (atomic_load_explicit(&p->state, memory_order_relaxed) & MKRT__PRODUCER_LIFE) ==
                      MKRT__PRODUCER_ORPHANED; /* relaxed: only the message depends on it */
        return mkrt__error_set(err, MKRT_ECLOSED,
                               "mkrt_publish of %zu item(s) after mkrt_destroy %s; nothing was "
                               "published. Fix: finish publishing before shutting down.",
                               n, orphan ? "returned" : "began");
    }
    mkrt_runtime *rt = p->rt;
    /* Push what fits, tell the dispatcher, and only then wait for room:
     * a producer must never sleep on a full ring the dispatcher does not
     * know about. */
    mkrt_status st = MKRT_OK;
    struct timespec tsbuf;
    const struct timespec *deadline = NULL;
    bool have_deadline = false;
    while (*done < n) {
        size_t k = mkrt_spsc_ring_push(p->ring, items + *done, n - *done);
        if (k > 0) {
            *done += k;
            /* relaxed: only this thread writes published; readers (fence,
             * stats, the dispatcher after close) get it through their own
             * edges. */
            uint64_t total = atomic_load_explicit(&p->published, memory_order_relaxed) + k;
            atomic_store_explicit(&p->published, total, memory_order_relaxed);
            /* release: pairs with the acquire loads of published_total in
             * drain and in the dispatcher's shutdown check. */
            atomic_fetch_add_explicit(&rt->producers.published_total, k, memory_order_release);
            uint64_t now = mkrt__now_ns();
            mkrt_item stamp = {(uint32_t)total, (uint32_t)(total >> 32), (uint32_t)now,
                               (uint32_t)(now >> 32)};
            (void)mkrt_spsc_ring_push(p->stamps, &stamp, 1); /* a sample; skipped when full */
            mkrt__dispatch_notify_work(&rt->dispatch);
            continue;
        }
        if (timeout_ns == 0) {
            st = mkrt_spsc_ring_is_closed(p->ring) ? MKRT_ECLOSED : MKRT_ETIMEDOUT;
            break;
        }
        if (!have_deadline) {
            deadline = mkrt__deadline(timeout_ns, &tsbuf);
            have_deadline = true;
        }
        /* The dispatcher frees room within a batch's time: spin for it
         * (never past the timeout) while every producer and the
         * dispatcher can have a CPU (relaxed: a count read as a hint). */
        uint32_t open = atomic_load_explicit(&rt->producers.producers_open, memory_order_relaxed);
        st = mkrt__spsc_ring_wait_space(p->ring, &p->room_spin, rt->cpus > open ? timeout_ns : 0, deadline);
        if (st != MKRT_OK)
            break;
    }
    size_t ring_capacity = rt->cfg.ring_capacity; /* for the message below */
    mkrt__owner_leave(p, MKRT__PRODUCER_BUSY);          /* this call's last touch of the runtime */
    if (st == MKRT_ECLOSED)
        return mkrt__error_set(err, MKRT_ECLOSED,
                               "mkrt_publish: the runtime closed after %zu of %zu item(s) were "
                               "published. Fix: finish publishing before shutting down.",
                               *done, n);
    if (st == MKRT_ETIMEDOUT)
        return mkrt__error_set(err, MKRT_ETIMEDOUT,
                               "mkrt_publish timed out after %zu of %zu item(s): the producer ring "
                               "(%zu items) stayed full. Fix: wait longer, raise ring_capacity, or "
                               "publish with mkrt_try_publish and back off.",
                               *done, n, ring_capacity);
    return st;
}

mkrt_status mkrt_publish(mkrt_producer *p, const mkrt_item *items, size_t n, uint64_t timeout_ns,
                         mkrt_error *err)
{
    return mkrt_publish_some(p, items, n, timeout_ns, NULL, err);
}

size_t mkrt_try_publish(mkrt_producer *p, const mkrt_item *items, size_t n)
{
    size_t done = 0;
    mkrt_publish_some(p, items, n, 0, &done, NULL);
    return done;
}

mkrt_status mkrt_fence(mkrt_producer *p, uint64_t *ticket)
{
    if (p == NULL || ticket == NULL)
        return MKRT_EINVAL;
    /* relaxed: the owner's own view; an orphan has everything it will get. */
    if ((atomic_load_explicit(&p->state, memory_order_relaxed) & MKRT__PRODUCER_LIFE) ==
        MKRT__PRODUCER_ORPHANED)
        return MKRT_ECLOSED;
    /* relaxed: this thread is the only writer of published. */
    *ticket = atomic_load_explicit(&p->published, memory_order_relaxed);
    return MKRT_OK;
}

/* counter >= target. acquire: pairs with the release stores in the
 * complete stage. */
