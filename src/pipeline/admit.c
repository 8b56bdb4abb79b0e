/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/admit.c - stage admit: every item is checked by the one
 * admission rule (mkrt__item_admit) and APPENDs get room in the log,
 * before dedupe and layering, so a refused item never adds a layer and no
 * backend sees it. Admitted items are compacted in drain order at the
 * front of b->items; refused ones go to the failure list.
 *
 * Most batches are admitted whole, and that is proved for the batch at
 * once (all_admitted): one branch-free pass gathers which built-in ops
 * occur, the highest handle and the APPENDs; the item-by-item rule runs
 * only when that proof fails (a user op, an op that is not known, a
 * handle out of range, the log full), and refuses exactly what it would
 * have refused item by item. */
#include <string.h>

#include "pipeline/stages.h"
#include "pipeline/dispatch.h"

/* The built-in ops whose rule is "every handle below the cell count"
 * (ops/builtin_ops.h, mkrt__ops_builtin_check; NOP needs less): a batch of
 * them with its highest handle in range is admitted whole. */
#define HANDLE_RULE_OPS                                                                          \
    (1u << MKRT_OPS_NOP | 1u << MKRT_OPS_STORE | 1u << MKRT_OPS_ADD | 1u << MKRT_OPS_APPEND |   \
     1u << MKRT_OPS_MIN | 1u << MKRT_OPS_OR | 1u << MKRT_OPS_ACC)

/* An item as four lanes: op, in, out, param (GNU vector extension, which
 * gcc and clang compile to SSE2 or NEON). */
typedef uint32_t item_lanes __attribute__((vector_size(16)));
_Static_assert(sizeof(item_lanes) == sizeof(mkrt_item), "an item is four 32-bit lanes");
enum { LANE_OP, LANE_IN, LANE_OUT };

/* Exact lowest and highest handle of the batch, and which ops occur. */
static uint32_t exact_scan(const mkrt__batch *b, uint32_t *lo, uint32_t *hi)
{
    uint32_t ops = 0, top = 0, bottom = UINT32_MAX;
    for (size_t i = 0; i < b->n; i++) {
        const mkrt_item *it = &b->items[i];
        ops |= 1u << (it->op & 31);
        top = it->in > top ? it->in : top;
        top = it->out > top ? it->out : top;
        bottom = it->in < bottom ? it->in : bottom;
        bottom = it->out < bottom ? it->out : bottom;
    }
    *lo = bottom;
    *hi = top;
    return ops;
}

/* Whether every item of b is admitted (a sufficient test: false may still
 * admit all); *appends: its APPENDs. Notes bounds of the batch's handles
 * (exact, or close enough for the layering table). One pass of ORs, ANDs
 * and compares, four lanes at a time: the OR of the ops is below 8 only
 * when every op is a built-in numbered below 8, and the OR (AND) of the
 * handles bounds the highest (lowest) handle. Only a batch those bounds
 * cannot prove (handles near the cell count, a wide spread, ops from 8 up)
 * takes the exact scan. */
static bool all_admitted(const mkrt__dispatch *dp, mkrt__batch *b, uint64_t room, uint64_t *appends)
{
    const item_lanes append_op = {MKRT_OP_APPEND, 0, 0, 0}, relax_op = {MKRT_OP_RELAX, 0, 0, 0};
    item_lanes any = {0, 0, 0, 0}, all = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
    item_lanes app = {0, 0, 0, 0}, relax = {0, 0, 0, 0};
    for (size_t i = 0; i < b->n; i++) {
        item_lanes v;
        memcpy(&v, &b->items[i], sizeof v);
        any |= v;
        all &= v;
        app -= (item_lanes)(v == append_op); /* -1 where equal: lane 0 counts APPENDs */
        relax |= (item_lanes)(v == relax_op);
    }
    uint32_t ops_or = any[LANE_OP];
    b->op_sig = ops_or; /* every item admitted: no user op (the slow path's otherwise) */
    uint32_t hi = any[LANE_IN] | any[LANE_OUT], lo = all[LANE_IN] & all[LANE_OUT];
    uint32_t ops;
    if (ops_or < 8 && hi < dp->cfg->cells && hi - lo < 65536) {
        ops = relax[LANE_OP] != 0 ? 1u << MKRT_OPS_RELAX : 0; /* what the mask below asks */
    } else {
        if (ops_or >= MKRT_OPS_USER_FIRST)
            return false; /* a user op or an unknown one: item by item */
        ops = exact_scan(b, &lo, &hi);
    }
    b->handle_lo = b->n > 0 ? lo : UINT32_MAX;
    b->handle_hi = b->n > 0 ? hi : 0;
    uint32_t allowed = HANDLE_RULE_OPS;
    /* RELAX: the handle rule and a registered graph (mkrt__item_admit). */
    if (dp->state->graph != NULL && dp->state->ops[MKRT_OPS_RELAX].mark != NULL)
        allowed |= 1u << MKRT_OPS_RELAX;
    *appends = app[LANE_OP];
    return (ops & ~allowed) == 0 && hi < dp->cfg->cells && app[LANE_OP] <= room;
}

/* Room: the log's capacity less what is in it (done - consumed) less what
 * the running batch reserved. */
void mkrt__stage_admit(mkrt__dispatch *dp, mkrt__batch *b, uint64_t running_appends)
{
    b->failed_n = 0;
    /* acquire: pairs with the release CAS in mkrt_append_log_consume: the
     * consumer's reads of the slots it freed happen before they are reused.
     * relaxed: append_done is written by this thread only. */
    uint64_t consumed = atomic_load_explicit(&dp->state->append_consumed, memory_order_acquire);
    uint64_t used = atomic_load_explicit(&dp->state->append_done, memory_order_relaxed) - consumed +
                    running_appends;
    uint64_t cap = dp->cfg->append_log_capacity;
    uint64_t room = cap > used ? cap - used : 0, appends = 0;
    if (all_admitted(dp, b, room, &appends)) {
        b->user_ops = 0;
        b->admitted = b->n;
        b->appends = appends;
        b->refused = 0;
        return;
    }
    appends = 0;
    size_t w = 0;
    uint32_t user = 0, lo = UINT32_MAX, hi = 0, sig = 0;
    for (size_t i = 0; i < b->n; i++) {
        mkrt_item it = b->items[i];
        mkrt_status st = mkrt__item_admit(dp->state, &it);
        if (st == MKRT_OK && it.op == MKRT_OP_APPEND)
            st = appends < room ? (appends++, MKRT_OK) : MKRT_EOVERFLOW;
        if (st != MKRT_OK) {
            mkrt__batch_fail(b, &it, st);
            continue;
        }
        user += it.op >= MKRT_OP_USER_FIRST;
        sig |= it.op;
        lo = it.in < lo ? it.in : lo;
        lo = it.out < lo ? it.out : lo;
        hi = it.in > hi ? it.in : hi;
        hi = it.out > hi ? it.out : hi;
        if (w != i)
            b->items[w] = it;
        w++;
    }
    b->user_ops = user;
    b->op_sig = user > 0 ? sig | 1u << 31 : sig;
    b->handle_lo = lo;
    b->handle_hi = hi;
    b->admitted = w;
    b->appends = appends;
    b->refused = b->failed_n;
}
