/* SPDX-License-Identifier: BSD-2-Clause */
/* src/runtime/runtime_internal.h - the runtime's structures, shared by the API,
 * the dispatcher and the backends. */
#ifndef MKRT_SRC_RUNTIME_INTERNAL_H
#define MKRT_SRC_RUNTIME_INTERNAL_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>

#include "base/alloc_internal.h"
#include "runtime/latency_hist.h"
#include "mkrt/dedupe.h"
#include "mkrt/layer.h"
#include "mkrt/plan_cache.h"
#include "mkrt/ring.h"
#include "mkrt/runtime.h"
#include "base/waitq.h"

typedef struct mkrt__op_entry {
    mkrt_op_fn fn;          /* NULL: not registered (built-ins are handled inline) */
    void *user;
    uint64_t fused_bytes;   /* frontier + 4 x scratch + output, saturating */
    const char *name;
    bool device;            /* also in the linked user PTX (mkrt_op_desc.device) */
    bool idempotent;        /* exact duplicates may be pruned (mkrt_op_desc.idempotent) */
} mkrt__op_entry;

/* An APPEND log entry as one 64-bit word: handle in the low half, param in
 * the high half (the device's (handle, param) pair of 32-bit words on a
 * little-endian host). Written with one release store, read with relaxed
 * loads (see mkrt_append_log_read). */
static inline uint64_t mkrt__append_word(uint32_t handle, uint32_t param)
{
    return (uint64_t)param << 32 | handle;
}

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
    mkrt_runtime *rt;
    uint32_t id, slot;
    mkrt_spsc_ring *ring;   /* items, producer -> dispatcher */
    mkrt_spsc_ring *stamps; /* (sequence end, publish time) samples */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t published; /* written by the producer */
    _Atomic uint32_t state;  /* MKRT__PRODUCER_* life | BUSY */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t completed; /* written by the dispatcher */
    uint64_t drained;      /* dispatcher-only */
    uint64_t high_water;   /* dispatcher-only */
};

/* One producer's contiguous share of a batch. */
typedef struct mkrt__segment {
    mkrt_producer *p;
    uint64_t end; /* p->drained after this segment */
} mkrt__segment;

/* A batch through its stages: drain (items[0..n)), admit (items[0..admitted)
 * in drain order, refused items on the failure list), dedupe (dedup or
 * items, kept), layer and split (exec[0..exec_n) in layer order), run
 * (failures appended to the list). Every drained item ends in exactly one
 * of executed (kept - run failures), pruned (admitted - kept) and failed
 * (refused + run failures). */
typedef struct mkrt__batch {
    size_t n;                 /* items drained */
    mkrt_item *items;         /* drained, in drain order; admitted ones compacted in front */
    mkrt__segment *segs;
    size_t nseg;
    size_t admitted;          /* items that passed admission */
    uint64_t appends;         /* admitted APPENDs (room reserved in the log) */
    uint32_t refused;         /* failure-list entries written by admission */
    mkrt_item *dedup;         /* dedupe output */
    size_t kept;
    mkrt_item *exec;          /* kept items in layer order (after the budget split) */
    size_t exec_n;
    uint32_t *layer_offsets;  /* layers + 1 */
    size_t layers;
    _Atomic uint32_t *cursors; /* per layer claim cursor */
    uint32_t chunk;           /* items per claim */
    bool on_device;           /* runs on the megakernel device */
    mkrt_item *failed;        /* failed items and why */
    mkrt_status *failed_why;
    _Atomic uint32_t failed_n;
    uint64_t started_ns;
} mkrt__batch;

typedef struct mkrt__cpu_pool mkrt__cpu_pool;

struct mkrt_runtime {
    mkrt_config cfg;
    uint32_t workers;
    mkrt__op_entry ops[MKRT_OP_MAX]; /* written under producers_lock until frozen */
    bool ops_frozen;                 /* under producers_lock: a producer opened */
    uint64_t *cells;
    size_t cells_bytes, log_bytes;   /* allocation sizes (checked at create) */
    /* The APPEND log, a ring of append_log_capacity words (positions grow
     * for ever, slot = position % capacity):
     *   consumed <= done <= len, len - consumed <= capacity.
     * len: positions claimed by running APPENDs (workers, or the device);
     * done: everything below is complete (the dispatcher, after a batch);
     * consumed: everything below was taken by mkrt_append_log_consume.
     * Admission reserves room for a batch's APPENDs against consumed, so a
     * claimed position never overwrites an entry that is still in the log. */
    _Atomic uint64_t *append_log;
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t append_len;
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t append_done;
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t append_consumed;

    pthread_mutex_t producers_lock;
    _Atomic(mkrt_producer *) *slots; /* max_producers */
    _Atomic uint32_t producers_open;
    uint32_t next_producer_id;

    _Atomic bool closing;  /* no new publishes */
    _Atomic bool aborting; /* destroy timed out: fail what has not started */
    _Atomic bool stopped;  /* dispatcher has exited */
    _Atomic bool held;     /* test hook: the dispatcher parks between batches */
    _Atomic bool parked;   /* ... and says so here */

    alignas(MKRT_CACHE_LINE) mkrt__waitq work_wq; /* the dispatcher sleeps here */
    alignas(MKRT_CACHE_LINE) mkrt__waitq done_wq; /* fence and drain waiters sleep here */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t published_total;
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t completed_total;

    /* Written by the dispatcher only; read by stats. */
    _Atomic uint64_t executed, pruned, failed, batches, layers, barriers, high_water;
    _Atomic uint64_t dead_dropped;
    mkrt__latency_hist latency;

    pthread_t dispatcher;
    mkrt__cpu_pool *cpu;
    struct mkrt__device *device; /* megakernel backend, or NULL */
    bool use_device;             /* dispatcher-only after create */
    _Atomic uint64_t device_batches, device_failures;
    _Atomic bool device_failed;  /* set once, after backend_failure is written */
    char backend_failure[MKRT_ERROR_MESSAGE_MAX + 96];
    mkrt_dedupe_scratch *dedupe;
    mkrt_layer_scratch *layering;
    mkrt_plan_cache *plans;
    mkrt__batch batch[2];
    uint32_t rr;             /* round-robin start */
    mkrt_mpmc_ring *dead;
    char backend_desc[MKRT_ERROR_MESSAGE_MAX + 128];
};

/* Why item it cannot run here, or MKRT_OK: the op is known, its handles are
 * below the cell count, and its fused bytes fit the device budget. The one
 * admission rule of every backend (the dispatcher's admit stage). */
mkrt_status mkrt__item_admit(const mkrt_runtime *rt, const mkrt_item *it);
/* Whether an exact duplicate of it may be pruned (the op is idempotent for
 * it); ctx is the runtime. The one rule of the dedupe stage. */
bool mkrt__item_idempotent(const mkrt_item *it, void *ctx);

/* Runs items [from, to) of one layer of b (admitted items only); failures
 * of user ops go to b's failure list. */
void mkrt__exec_range(mkrt_runtime *rt, mkrt__batch *b, size_t from, size_t to);

/* The CPU backend: a persistent worker pool that runs a batch layer by
 * layer. launch() returns at once; the pool notifies rt->work_wq when the
 * batch is done (poll with done()). */
mkrt_status mkrt__cpu_pool_start(mkrt_runtime *rt, uint32_t workers, mkrt__cpu_pool **out,
                                 mkrt_error *err);
void mkrt__cpu_pool_launch(mkrt__cpu_pool *pool, mkrt__batch *b);
bool mkrt__cpu_pool_done(mkrt__cpu_pool *pool);
void mkrt__cpu_pool_stop(mkrt__cpu_pool *pool);

void *mkrt__dispatcher_main(void *rt);

/* Frees a producer's rings and the producer. */
void mkrt__producer_free(mkrt_producer *p);

/* Test hook: hold(true) returns once the dispatcher has finished its
 * current batch and parked; items then wait in the rings. Releasing
 * restarts the round robin at slot 0, so items published during the hold
 * form one batch in slot order. Aborts ignore holds. */
void mkrt__runtime_hold(mkrt_runtime *rt, bool hold);

/* Test hook (MKRT_BACKEND_SIM): the simulated device hangs in its n-th
 * batch from now, after `layer` layers. Call while the runtime is held or
 * idle, before publishing that batch. */
void mkrt__runtime_device_hang(mkrt_runtime *rt, uint64_t batches_from_now, uint32_t layer);

#endif
