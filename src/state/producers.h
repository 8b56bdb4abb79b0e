/* SPDX-License-Identifier: BSD-2-Clause */
/* src/state/producers.h - the producers group of the runtime: each
 * producer's rings and counters, and the table of producer slots
 * (runtime/producer.c opens and closes them, pipeline/drain.c drains and
 * retires them, mkrt_destroy orphans the ones still open). */
#ifndef MKRT_STATE_PRODUCERS_H
#define MKRT_STATE_PRODUCERS_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/alloc_internal.h"
#include "base/spin_wait.h"
#include "base/thread.h"
#include "mkrt/ring.h"
#include "mkrt/runtime.h"

/* The producer's life, one word for both parties (owner and runtime):
 * the low bits say who frees it, MKRT__PRODUCER_BUSY says the owner is
 * inside a call that touches the runtime (publish, wait, close).
 *   OPEN -> CLOSED      mkrt_producer_close (CAS, BUSY held across its last
 *                       touch of the runtime); the runtime frees it (the
 *                       dispatcher once its items completed, or destroy).
 *   OPEN -> ORPHANED    mkrt_destroy, by a CAS that succeeds only while
 *                       BUSY is clear; after it destroy never touches the
 *                       producer again, and the owner frees it in close.
 * mkrt_wait sets WAITING the same way (it leaves when the dispatcher stops).
 * The owner sets BUSY with one fetch_or and backs out if the runtime is
 * closing or the producer orphaned; destroy waits for BUSY to clear before
 * it orphans. So exactly one party frees, and nobody reads freed memory. */
enum {
    MKRT__PRODUCER_OPEN = 0,
    MKRT__PRODUCER_CLOSED = 1,
    MKRT__PRODUCER_ORPHANED = 2,
    MKRT__PRODUCER_LIFE = 3,
    MKRT__PRODUCER_BUSY = 4,   /* publish or close inside: destroy waits before draining */
    MKRT__PRODUCER_WAITING = 8 /* mkrt_wait inside: leaves once the dispatcher stopped */
};

struct mkrt_producer {
    mkrt_runtime *rt;       /* its runtime (the API's; the floors below never follow it) */
    uint32_t id, slot;
    mkrt_spsc_ring *ring;   /* items, producer -> dispatcher */
    mkrt_spsc_ring *stamps; /* (sequence end, publish time) samples */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t published; /* written by the producer */
    _Atomic uint32_t state;  /* MKRT__PRODUCER_* life | BUSY */
    mkrt__spin_budget room_spin; /* the owner's spin for ring room (base/spin_wait.h) */
    _Atomic uint32_t klass;  /* mkrt_class: written by the owner, read by the drain */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t completed; /* written by the dispatcher */
    uint64_t drained;      /* dispatcher-only */
    uint64_t high_water;   /* dispatcher-only */
};

/* The producer table: max_producers slots, opened and closed by the
 * application (runtime/producer.c), drained and retired by the dispatcher
 * (pipeline/drain.c), all under producers_lock except the drain's loads. */
typedef struct mkrt__producers {
    mkrt__mutex producers_lock;
    _Atomic(mkrt_producer *) *slots; /* max_producers */
    /* One past the highest slot a producer was ever opened in (it never
     * shrinks): the drain's passes, which run on every round trip, look
     * at slots below it only (64 slots cost a single-item round trip
     * about 0.7 us of its 1.6). */
    _Atomic uint32_t slots_used;
    _Atomic uint32_t producers_open;
    /* Producers closed and not yet retired by the dispatcher thread: a
     * hint for threads that may not read the rings (a give of the
     * dispatch token, pipeline/dispatcher.c give_worth), which must wake
     * the dispatcher thread to retire them. */
    _Atomic uint32_t closed_unretired;
    uint32_t next_producer_id;
    _Atomic bool closing;  /* no new publishes */
    _Atomic bool classes_used; /* a producer was marked interactive (mkrt_producer_set_class) */
    _Atomic bool sealed;   /* closing, and no publish is inside any more: the
                            * dispatcher may stop once everything completed */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t published_total;
} mkrt__producers;

/* The slots a producer was ever opened in are below this. acquire: pairs
 * with the release store in mkrt_producer_open, made after the slot's
 * pointer was stored: a drain that sees the bound sees the producer. A
 * drain that sees an older bound misses only a producer whose open has
 * not returned, which has published nothing. */
static inline uint32_t mkrt__producer_slots_used(mkrt__producers *ps)
{
    return atomic_load_explicit(&ps->slots_used, memory_order_acquire);
}

/* Frees a producer's rings and the producer (producers.c). */
void mkrt__producer_free(mkrt_producer *p);

#endif
