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
#include "pipeline/stages.h"
#include "runtime/runtime_internal.h"

/* The built-in ops whose rule is "every handle below the cell count"
 * (ops/builtin_ops.h, mkrt_ops_builtin_check; NOP needs less): a batch of
 * them with its highest handle in range is admitted whole. */
#define HANDLE_RULE_OPS                                                                          \
    (1u << MKRT_OPS_NOP | 1u << MKRT_OPS_STORE | 1u << MKRT_OPS_ADD | 1u << MKRT_OPS_APPEND |   \
     1u << MKRT_OPS_MIN | 1u << MKRT_OPS_OR | 1u << MKRT_OPS_ACC)

/* Whether every item of b is admitted (a sufficient test: false may still
 * admit all); *appends: its APPENDs. Notes the batch's handle range. */
static bool all_admitted(const mkrt_runtime *rt, mkrt__batch *b, uint64_t room, uint64_t *appends)
{
    uint32_t ops = 0, any = 0, top = 0, bottom = UINT32_MAX;
    uint64_t app = 0;
    for (size_t i = 0; i < b->n; i++) {
        const mkrt_item *it = &b->items[i];
        any |= it->op;
        ops |= 1u << (it->op & 31);
        uint32_t h = it->in > it->out ? it->in : it->out, l = it->in > it->out ? it->out : it->in;
        top = h > top ? h : top;
        bottom = l < bottom ? l : bottom;
        app += it->op == MKRT_OP_APPEND;
    }
    b->handle_lo = bottom;
    b->handle_hi = top;
    uint32_t allowed = HANDLE_RULE_OPS;
    /* RELAX: the handle rule and a registered graph (mkrt__item_admit). */
    if (rt->graph.vertices != 0)
        allowed |= 1u << MKRT_OPS_RELAX;
    /* A round's chunks are made by the drain (no one may publish one). */
    if (b->round)
        allowed |= 1u << MKRT__OP_EXPAND;
    *appends = app;
    return any < MKRT_OPS_USER_FIRST && (ops & ~allowed) == 0 && top < rt->cfg.cells && app <= room;
}

/* Room: the log's capacity less what is in it (done - consumed) less what
 * the running batch reserved. */
void mkrt__stage_admit(mkrt_runtime *rt, mkrt__batch *b, uint64_t running_appends)
{
    b->failed_n = 0;
    /* acquire: pairs with the release CAS in mkrt_append_log_consume: the
     * consumer's reads of the slots it freed happen before they are reused.
     * relaxed: append_done is written by this thread only. */
    uint64_t consumed = atomic_load_explicit(&rt->append_consumed, memory_order_acquire);
    uint64_t used = atomic_load_explicit(&rt->append_done, memory_order_relaxed) - consumed +
                    running_appends;
    uint64_t cap = rt->cfg.append_log_capacity;
    uint64_t room = cap > used ? cap - used : 0, appends = 0;
    if (all_admitted(rt, b, room, &appends)) {
        b->user_ops = 0;
        b->admitted = b->n;
        b->appends = appends;
        b->refused = 0;
        return;
    }
    appends = 0;
    size_t w = 0;
    uint32_t user = 0, lo = UINT32_MAX, hi = 0;
    for (size_t i = 0; i < b->n; i++) {
        mkrt_item it = b->items[i];
        /* A round's chunks are made by the drain (no one may publish one). */
        mkrt_status st = b->round && it.op == MKRT__OP_EXPAND ? MKRT_OK : mkrt__item_admit(rt, &it);
        if (st == MKRT_OK && it.op == MKRT_OP_APPEND)
            st = appends < room ? (appends++, MKRT_OK) : MKRT_EOVERFLOW;
        if (st != MKRT_OK) {
            mkrt__batch_fail(b, &it, st);
            continue;
        }
        user += it.op >= MKRT_OP_USER_FIRST;
        lo = it.in < lo ? it.in : lo;
        lo = it.out < lo ? it.out : lo;
        hi = it.in > hi ? it.in : hi;
        hi = it.out > hi ? it.out : hi;
        if (w != i)
            b->items[w] = it;
        w++;
    }
    b->user_ops = user;
    b->handle_lo = lo;
    b->handle_hi = hi;
    b->admitted = w;
    b->appends = appends;
    b->refused = b->failed_n;
}
