/* SPDX-License-Identifier: BSD-2-Clause */
/* src/runtime/wait.c - the waits: mkrt_wait (a fence's ticket),
 * mkrt_drain and mkrt_quiesce, helping the dispatcher within the caller's
 * deadline. */
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

static bool reached(_Atomic uint64_t *counter, uint64_t target)
{
    return atomic_load_explicit(counter, memory_order_acquire) >= target;
}

/* The deadline of a wait of timeout_ns from now (CLOCK_MONOTONIC ns,
 * UINT64_MAX: none), and as a timespec in *ts (NULL: none). */
static uint64_t deadline_ns(uint64_t timeout_ns, struct timespec *ts, const struct timespec **deadline)
{
    *deadline = NULL;
    if (timeout_ns == MKRT_TIMEOUT_INFINITE)
        return UINT64_MAX;
    uint64_t now = mkrt__now_ns(), until = now + timeout_ns;
    if (until < now || until == UINT64_MAX)
        return UINT64_MAX; /* saturates: for ever */
    ts->tv_sec = (time_t)(until / 1000000000u);
    ts->tv_nsec = (long)(until % 1000000000u);
    *deadline = ts;
    return until;
}

/* Waits until reached(): spins a little, runs pending batches itself while
 * the dispatcher is idle (mkrt__dispatch_help, which keeps to the
 * deadline: it returns after the op it runs when the deadline passes),
 * then sleeps on done_wq. The deadline is fixed on entry, so time spent
 * helping counts. */
/* Longest sleep on a queue the dispatcher's stop does not notify. */
#define WAIT_SLICE_NS 10000000u

static mkrt_status wait_loop(mkrt_runtime *rt, _Atomic uint64_t *counter, uint64_t target,
                             uint64_t timeout_ns, mkrt__waitq *wq)
{
    if (reached(counter, target))
        return MKRT_OK;
    struct timespec ts;
    const struct timespec *deadline = NULL;
    const uint64_t until = timeout_ns == 0 ? 0 : deadline_ns(timeout_ns, &ts, &deadline);
    /* On one CPU, spinning only delays the thread it waits for. */
    const unsigned spins = rt->cpus > 1 ? 256 : 0;
    for (unsigned spin = 0; spin < spins && timeout_ns != 0; spin++) {
        /* A completion is often microseconds away: look before sleeping. */
        if (reached(counter, target))
            return MKRT_OK;
        /* The dispatcher is idle (its token is free): run what is pending
         * here rather than wait for it to wake (pipeline/dispatcher.c). */
        if (mkrt__dispatch_help(&rt->dispatch, counter, target, until))
            continue;
        mkrt__cpu_relax();
    }
    for (;;) {
        if (reached(counter, target))
            return MKRT_OK;
        if (atomic_load_explicit(&rt->dispatch.stopped, memory_order_acquire))
            return reached(counter, target) ? MKRT_OK : MKRT_ECLOSED;
        if (timeout_ns == 0)
            return MKRT_ETIMEDOUT;
        if (mkrt__dispatch_help(&rt->dispatch, counter, target, until))
            continue;
        /* A queue other than done_wq is not notified when the dispatcher
         * stops: sleep there a slice at a time (WAIT_SLICE_NS). */
        struct timespec slice;
        const struct timespec *until_ts = deadline;
        if (wq != &rt->dispatch.done_wq) {
            uint64_t s = mkrt__now_ns() + WAIT_SLICE_NS;
            if (until_ts == NULL || s < until) {
                slice.tv_sec = (time_t)(s / 1000000000u);
                slice.tv_nsec = (long)(s % 1000000000u);
                until_ts = &slice;
            }
        }
        uint32_t e = mkrt__waitq_prepare(wq);
        if (reached(counter, target) || atomic_load_explicit(&rt->dispatch.stopped, memory_order_acquire)) {
            mkrt__waitq_finish(wq);
            continue;
        }
        mkrt_status st = mkrt__waitq_sleep(wq, e, until_ts);
        mkrt__waitq_finish(wq);
        if (st == MKRT_ETIMEDOUT && until_ts != deadline)
            continue; /* a slice, not the deadline */
        if (st == MKRT_ETIMEDOUT)
            return reached(counter, target) ? MKRT_OK : MKRT_ETIMEDOUT;
    }
}

mkrt_status mkrt__wait_until_on(mkrt_runtime *rt, _Atomic uint64_t *counter, uint64_t target,
                                 uint64_t timeout_ns, mkrt__waitq *wq)
{
    /* relaxed: a count the plan stage reads as a hint (batch_planner.c). */
    atomic_fetch_add_explicit(&rt->dispatch.waiting, 1, memory_order_relaxed);
    mkrt_status st = wait_loop(rt, counter, target, timeout_ns, wq);
    atomic_fetch_sub_explicit(&rt->dispatch.waiting, 1, memory_order_relaxed); /* as above */
    return st;
}

mkrt_status mkrt__wait_until(mkrt_runtime *rt, _Atomic uint64_t *counter, uint64_t target, uint64_t timeout_ns)
{
    return mkrt__wait_until_on(rt, counter, target, timeout_ns, &rt->dispatch.done_wq);
}

mkrt_status mkrt_wait(mkrt_producer *p, uint64_t ticket, uint64_t timeout_ns)
{
    if (p == NULL)
        return MKRT_EINVAL;
    /* relaxed: only this (the owner's) thread writes published. A ticket
     * above it was never issued and would never complete. */
    if (ticket > atomic_load_explicit(&p->published, memory_order_relaxed))
        return MKRT_EINVAL;
    if (!mkrt__owner_enter(p, MKRT__PRODUCER_WAITING, false))
        return MKRT_ECLOSED;
    mkrt_status st = mkrt__wait_until(p->rt, &p->completed, ticket, timeout_ns);
    mkrt__owner_leave(p, MKRT__PRODUCER_WAITING);
    return st;
}

static mkrt_status wait_producers(mkrt_runtime *rt, uint64_t timeout_ns);

/* What is left of timeout_ns since start (0: none given or infinite). */
static uint64_t time_left(uint64_t start, uint64_t timeout_ns)
{
    if (start == 0)
        return timeout_ns;
    uint64_t spent = mkrt__now_ns() - start;
    return spent < timeout_ns ? timeout_ns - spent : 0;
}

/* The totals first (the fast path: spinning, helping), then each producer:
 * the totals alone can be fooled by a racing publish whose item completed
 * before an older one (see wait_producers). */
mkrt_status mkrt_drain(mkrt_runtime *rt, uint64_t timeout_ns)
{
    if (rt == NULL)
        return MKRT_EINVAL;
    uint64_t start = timeout_ns != 0 && timeout_ns != MKRT_TIMEOUT_INFINITE ? mkrt__now_ns() : 0;
    /* acquire: pairs with the release increments in mkrt_publish_some. */
    uint64_t target = atomic_load_explicit(&rt->producers.published_total, memory_order_acquire);
    mkrt_status st = mkrt__wait_until(rt, &rt->dispatch.completed_total, target, timeout_ns);
    return st != MKRT_OK ? st : wait_producers(rt, time_left(start, timeout_ns));
}

/* Whether the producer in slot s (p, with id; looked at earlier) completed
 * target items, or is gone (retired only once all its items completed).
 * Under producers_lock, which the dispatcher retires producers under, so
 * p is alive while the slot still holds it (the id tells a producer that
 * reuses p's memory apart). */
static bool producer_caught_up(mkrt_runtime *rt, uint32_t s, const mkrt_producer *p, uint32_t id,
                               uint64_t target)
{
    mkrt__mutex_lock(&rt->producers.producers_lock);
    /* relaxed: the slot is written under the lock held here. acquire:
     * pairs with the release store of completed in the complete stage. */
    bool done = atomic_load_explicit(&rt->producers.slots[s], memory_order_relaxed) != p || p->id != id ||
                atomic_load_explicit(&p->completed, memory_order_acquire) >= target;
    mkrt__mutex_unlock(&rt->producers.producers_lock);
    return done;
}

/* Waits until every producer completed what it had published when looked
 * at (each producer's own counters: the runtime-wide published_total may
 * lag an item that a racing publish already pushed and the dispatcher
 * completed, so comparing the totals could count that item for an older
 * one that has not run). */
static mkrt_status wait_producers(mkrt_runtime *rt, uint64_t timeout_ns)
{
    struct timespec ts;
    const struct timespec *deadline = NULL;
    const uint64_t until = timeout_ns == 0 ? 0 : deadline_ns(timeout_ns, &ts, &deadline);
    /* What helping runs up to (the totals: a bound for the helper only;
     * the producers' own counters decide). acquire: pairs with the
     * release increments in mkrt_publish_some. */
    const uint64_t total = atomic_load_explicit(&rt->producers.published_total, memory_order_acquire);
    /* The slots a producer was ever opened in: one that published before
     * the call was opened before it (its open's release is seen). */
    const uint32_t used = mkrt__producer_slots_used(&rt->producers);
    for (uint32_t s = 0; s < used; s++) {
        mkrt__mutex_lock(&rt->producers.producers_lock);
        mkrt_producer *p = atomic_load_explicit(&rt->producers.slots[s], memory_order_relaxed); /* under the lock */
        uint32_t id = p != NULL ? p->id : 0;
        /* relaxed: written by the producer only; a publish that happens
         * before this call is seen (coherence). */
        uint64_t target = p != NULL ? atomic_load_explicit(&p->published, memory_order_relaxed) : 0;
        mkrt__mutex_unlock(&rt->producers.producers_lock);
        while (p != NULL && !producer_caught_up(rt, s, p, id, target)) {
            /* acquire: pairs with the dispatcher's release store of stopped. */
            if (atomic_load_explicit(&rt->dispatch.stopped, memory_order_acquire))
                return MKRT_ECLOSED;
            if (timeout_ns == 0)
                return MKRT_ETIMEDOUT;
            /* Runs pending batches (or finishes one a helper left) while
             * the dispatcher is idle, as wait_loop does. */
            if (mkrt__dispatch_help(&rt->dispatch, &rt->dispatch.completed_total, total, until))
                continue;
            uint32_t e = mkrt__waitq_prepare(&rt->dispatch.done_wq);
            if (!producer_caught_up(rt, s, p, id, target) &&
                mkrt__waitq_sleep(&rt->dispatch.done_wq, e, deadline) == MKRT_ETIMEDOUT &&
                !producer_caught_up(rt, s, p, id, target)) {
                mkrt__waitq_finish(&rt->dispatch.done_wq);
                return MKRT_ETIMEDOUT;
            }
            mkrt__waitq_finish(&rt->dispatch.done_wq);
        }
    }
    return MKRT_OK;
}

/* Quiescent for a snapshot (docs/design.md, pipeline/dispatch.h): first
 * everything published before the call completed (per producer,
 * wait_producers); its batches are numbered S or less (S: completed_seq
 * then), and so is the root of everything they emitted, transitively.
 * Then quiesce_target is raised to S, which (while this call waits) stops
 * the drain from taking new items from the rings while work rooted at S
 * or below is pending, and the call waits until pending_root passes S.
 * Both waits keep to the caller's deadline (helping included). */
mkrt_status mkrt_quiesce(mkrt_runtime *rt, uint64_t timeout_ns)
{
    if (rt == NULL)
        return MKRT_EINVAL;
    uint64_t start = timeout_ns != 0 && timeout_ns != MKRT_TIMEOUT_INFINITE ? mkrt__now_ns() : 0;
    mkrt_status st = wait_producers(rt, timeout_ns);
    if (st != MKRT_OK)
        return st;
    /* acquire: pairs with the release store in publish_roots (complete.c),
     * made before the producers' completions that wait_producers acquired:
     * S covers their batches, and pending_root is as recent. */
    uint64_t snap = atomic_load_explicit(&rt->dispatch.completed_seq, memory_order_acquire);
    /* relaxed: the dispatcher reads the target at each drain; a late look
     * only delays the stop of new items, and the wait below is exact. */
    uint64_t t = atomic_load_explicit(&rt->dispatch.quiesce_target, memory_order_relaxed);
    while (t < snap && !atomic_compare_exchange_weak_explicit(&rt->dispatch.quiesce_target, &t, snap,
                                                              memory_order_relaxed, memory_order_relaxed))
        ;
    atomic_fetch_add_explicit(&rt->dispatch.quiescing, 1, memory_order_relaxed); /* relaxed: as the target */
    st = mkrt__wait_until(rt, &rt->dispatch.pending_root, snap + 1, time_left(start, timeout_ns));
    atomic_fetch_sub_explicit(&rt->dispatch.quiescing, 1, memory_order_relaxed); /* as above */
    return st;
}
