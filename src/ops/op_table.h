/* SPDX-License-Identifier: BSD-2-Clause */
/* src/ops/op_table.h - the runtime's ops: the table of registered user
 * ops, and the three rules every backend follows, written once here
 * (with the built-ins' semantics in ops/builtin_ops.h):
 *   admit       may this item run at all (op known, handles, budget);
 *   idempotent  may an exact duplicate of it be pruned (dedupe);
 *   exec        run a range of admitted items on the host's cells.
 * Failures of user ops are recorded as (index, status) pairs in a
 * failure list, the same shape the megakernel device returns. */
#ifndef MKRT_OPS_OP_TABLE_H
#define MKRT_OPS_OP_TABLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "mkrt/frontier.h"
#include "mkrt/runtime.h"
#include "state/op_generation.h"
#include "state/state.h"

typedef struct mkrt__op_entry {
    mkrt_op_fn fn;          /* NULL: not registered (built-ins are not in the table) */
    void *user;
    mkrt_frontier_wave envelope; /* the op's bytes, as the frontier planner sees a wave */
    uint64_t fused_bytes;   /* mkrt_frontier_fused_wave_bytes(envelope), saturating */
    const char *name;
    bool device;            /* also in the linked user PTX (mkrt_op_desc.device) */
    bool idempotent;        /* exact duplicates may be pruned (mkrt_op_desc.idempotent) */
    bool commutes;          /* commutes with itself on out (mkrt_op_desc.commutes) */
    uint32_t expand_slot;   /* its frontier slot (mkrt_op_desc.expands); 0: none (slot 0 is RELAX's) */
    bool pulls;             /* its levels may run pulled (mkrt_op_desc.pulls) */
    /* The row's expansion, filled by the engine that claims the op (as
     * io_uring's opdef.c rows): the graph engine claims RELAX at create
     * and each expanding user op as it registers. mark: v's edges are run
     * by the op at the next level of its slot's frontier (false: v is no
     * vertex with edges); any worker. NULL: the op does not expand (a
     * RELAX item is then refused, mkrt__item_admit). */
    bool (*mark)(void *engine, uint32_t slot, uint32_t v);
    void *engine;
} mkrt__op_entry;

/* One run of an op on the host (mkrt_op_ctx.run): what mkrt_op_emit and
 * mkrt_op_changed need. Lives on the running thread's stack. */
struct mkrt__op_run {
    mkrt__state *state;
    const mkrt__op_entry *op; /* its row: expand_slot and mark (mkrt_op_emit_edges) */
    bool changed;
    bool emit_full; /* mkrt_op_emit refused items for room (MKRT_EOVERFLOW) in this run */
};

/* The failure status an op run records: an MKRT_EOVERFLOW the op returned
 * after mkrt_op_emit refused it room is the emission queue's, told apart
 * (MKRT__EOVERFLOW_EMIT) so that the error path names emit_capacity, not
 * the APPEND log; the error callback still gets MKRT_EOVERFLOW. Clears
 * the run's flag for the next call on it. */
#define MKRT__EOVERFLOW_EMIT ((mkrt_status)-1004)
static inline mkrt_status mkrt__op_run_status(struct mkrt__op_run *run, mkrt_status st)
{
    bool emit = run->emit_full;
    run->emit_full = false;
    return st == MKRT_EOVERFLOW && emit ? MKRT__EOVERFLOW_EMIT : st;
}

/* Which op run is live on a thread: state/op_generation.h (below ops/
 * and the engines that start op calls). */

/* Failures of a batch's items: (index into the batch's items, the op's
 * mkrt_status as uint32_t) pairs. Writers claim slots with one relaxed fetch-add; the
 * reader reads after the batch's completion (acquire), which orders them. */
typedef struct mkrt__fail_list {
    uint32_t *pairs;       /* 2 x capacity */
    uint32_t capacity;
    _Atomic uint32_t count;
} mkrt__fail_list;

static inline void mkrt__fail_list_add(mkrt__fail_list *l, uint32_t index, uint32_t status)
{
    /* relaxed: hands out distinct slots; see mkrt__fail_list. */
    uint32_t at = atomic_fetch_add_explicit(&l->count, 1, memory_order_relaxed);
    if (at < l->capacity) {
        l->pairs[2 * at] = index;
        l->pairs[2 * at + 1] = status;
    }
}

/* A device's failure code as an mkrt_status: anything that is not one (a
 * device op returning garbage) is MKRT_EDEVICE. The host's own list
 * carries the op's status as it is (a user op may return its own codes). */
static inline mkrt_status mkrt__fail_status(uint32_t v)
{
    int32_t s = (int32_t)v;
    return s <= MKRT_EAGAIN && s >= MKRT_ESTATE ? (mkrt_status)s : MKRT_EDEVICE;
}

/* Why item it cannot run here, or MKRT_OK: the op is known, its handles are
 * below the cell count, and its fused bytes fit the device budget. The one
 * admission rule of every backend (the pipeline's admit stage). */
mkrt_status mkrt__item_admit(const mkrt__state *sg, const mkrt_item *it);
/* Whether an exact duplicate of it may be pruned (the op is idempotent for
 * it); ctx is the state group. The one rule of the dedupe stage. */
bool mkrt__item_idempotent(const mkrt_item *it, void *ctx);
/* The item's commuting group (0: none), for the layering
 * (pipeline/layer_internal.h): the built-ins' rule, and for user ops
 * registered with commutes, the op number (when in != out). */
uint32_t mkrt__item_commute_key(const mkrt_item *it, void *ctx);
/* Runs items[from, to) of one layer (admitted items only) on the runtime's
 * cells and APPEND log; a user op's failure goes to fails. The layering
 * and the barriers guarantee that no two items of one layer touch the
 * same cell in conflicting ways, so cells are plain memory. */
void mkrt__exec_range(mkrt__state *sg, const mkrt_item *items, size_t from, size_t to,
                      mkrt__fail_list *fails);
#endif
