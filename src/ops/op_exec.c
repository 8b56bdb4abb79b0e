/* SPDX-License-Identifier: BSD-2-Clause */
/* src/ops/op_exec.c - the op rules of the runtime (see op_table.h): which
 * items may run (admission), which duplicates are redundant (dedupe), and
 * running one range of a layer on the host (the CPU pool, or the
 * dispatcher thread for a one-participant plan). Built-in semantics come
 * from ops/builtin_ops.h, shared with the device. */
#include "ops/builtin_ops.h"
#include "ops/op_table.h"
#include "graph/engine.h"
#include "state/state.h"

_Static_assert((int)MKRT_OPS_NOP == (int)MKRT_OP_NOP && (int)MKRT_OPS_STORE == (int)MKRT_OP_STORE &&
                   (int)MKRT_OPS_ADD == (int)MKRT_OP_ADD && (int)MKRT_OPS_APPEND == (int)MKRT_OP_APPEND &&
                   (int)MKRT_OPS_MIN == (int)MKRT_OP_MIN && (int)MKRT_OPS_RELAX == (int)MKRT_OP_RELAX &&
                   (int)MKRT_OPS_OR == (int)MKRT_OP_OR && (int)MKRT_OPS_ACC == (int)MKRT_OP_ACC &&
                   (int)MKRT_OPS_USER_FIRST == (int)MKRT_OP_USER_FIRST,
               "ops/builtin_ops.h and mkrt/item.h agree on the op codes");

mkrt_status mkrt__item_admit(const mkrt__state *sg, const mkrt_item *it)
{
    const uint32_t cells = sg->cfg->cells;
    if (!mkrt__ops_is_user(it->op)) {
        uint32_t e = mkrt__ops_builtin_check(it->op, it->in, it->out, cells);
        if (e == MKRT_MK_ERR_NONE && it->op == MKRT_OPS_RELAX && mkrt__graph_engine_graph(sg->graph) == NULL)
            return MKRT_ENOTSUP; /* RELAX expands over the registered graph */
        return e == MKRT_MK_ERR_NONE ? MKRT_OK : e == MKRT_MK_ERR_HANDLE ? MKRT_EINVAL : MKRT_ENOTSUP;
    }
    if (it->op >= MKRT_OP_MAX || sg->ops[it->op].fn == NULL)
        return MKRT_ENOTSUP;
    /* runtime.h promises a user op cells[in] and cells[out]. */
    if (it->in >= cells || it->out >= cells)
        return MKRT_EINVAL;
    /* The budget less what the device holds resident (state.h). relaxed:
     * a size. */
    uint64_t budget = sg->cfg->device_memory_budget;
    uint64_t resident = atomic_load_explicit(&sg->device_resident, memory_order_relaxed);
    if (budget != 0 && sg->ops[it->op].fused_bytes != 0 &&
        (resident >= budget || sg->ops[it->op].fused_bytes > budget - resident))
        return MKRT_EBUDGET;
    return MKRT_OK;
}

bool mkrt__item_idempotent(const mkrt_item *it, void *ctx)
{
    const mkrt__state *sg = ctx;
    if (!mkrt__ops_is_user(it->op))
        return mkrt__ops_builtin_idempotent(it->op, it->in, it->out);
    return it->op < MKRT_OP_MAX && sg->ops[it->op].idempotent;
}

uint32_t mkrt__item_commute_key(const mkrt_item *it, void *ctx)
{
    const mkrt__state *sg = ctx;
    if (!mkrt__ops_is_user(it->op))
        return mkrt__ops_builtin_commute_key(it->op, it->in, it->out);
    return it->op < MKRT_OP_MAX && sg->ops[it->op].commutes && it->in != it->out ? it->op : 0;
}

_Static_assert(MKRT_OPS_NOP == 0 && MKRT_OPS_STORE == 1 && MKRT_OPS_ADD == 2,
               "mkrt__exec_range's first test takes ops 0..2 as NOP, STORE and ADD");

void mkrt__exec_range(mkrt__state *sg, const mkrt_item *items, size_t from, size_t to,
                      mkrt__fail_list *fails)
{
    uint64_t *cells = sg->cells;
    const uint32_t ncells = sg->cfg->cells;
    const mkrt_graph *graph = mkrt__graph_engine_graph(sg->graph);
    uint64_t changed = 0;
    for (size_t k = from; k < to; k++) {
        const mkrt_item *it = &items[k];
        if (it->op <= MKRT_OPS_ADD) {
            /* NOP, STORE and ADD first: most items, and nothing to count
             * or claim (their handles were admitted). */
            mkrt__ops_run_admitted(it->op, it->in, it->out, it->param, cells);
        } else if (mkrt__ops_is_user(it->op)) {
            const mkrt__op_entry *op = &sg->ops[it->op];
            struct mkrt__op_run run = {sg, op->expand_slot, false};
            uint64_t outer;
            mkrt_op_ctx ctx = {cells, ncells, op->user, graph, &run, mkrt__op_begin(&outer)};
            mkrt_status st = op->fn(it, &ctx);
            mkrt__op_end(outer);
            changed += run.changed;
            if (st != MKRT_OK)
                mkrt__fail_list_add(fails, (uint32_t)k, (uint32_t)st);
        } else if (it->op >= MKRT_OPS_MIN && it->op <= MKRT_OPS_ACC) {
            if (mkrt__ops_run_update(it->op, it->in, it->out, it->param, cells)) { /* admitted */
                changed++;
                if (it->op == MKRT_OPS_RELAX)
                    (void)mkrt__graph_mark(sg->graph, 0, it->out); /* RELAX's lane */
            }
        } else if (it->op != MKRT_OPS_APPEND) {
            (void)mkrt__ops_run_builtin(it->op, it->in, it->out, it->param, cells, ncells); /* admitted */
        } else {
            /* relaxed: claims a log position; appends to one handle are in
             * different layers, so the barrier between them already orders
             * the claims (modification order follows happens-before).
             * Admission reserved room for it: the slot is not in the log. */
            uint64_t at = atomic_fetch_add_explicit(&sg->append_len, 1, memory_order_relaxed);
            /* release: pairs with the acquire fences of the log's readers
             * (see mkrt_append_log_read). */
            atomic_store_explicit(&sg->append_log[mkrt__ops_append_slot(at, sg->cfg->append_log_capacity)],
                                  mkrt__ops_append_word(it->out, it->param), memory_order_release);
        }
    }
    if (changed != 0)
        /* relaxed: a statistic, read by stats without ordering. */
        atomic_fetch_add_explicit(&sg->changed, changed, memory_order_relaxed);
}

void mkrt__exec_round(mkrt__state *sg, const mkrt_item *items, size_t from, size_t to, mkrt__fail_list *fails)
{
    uint64_t changed = 0;
    mkrt__graph_apply(sg->graph, items, from, to, fails, &changed);
    if (changed != 0)
        /* relaxed: a statistic, read by stats without ordering. */
        atomic_fetch_add_explicit(&sg->changed, changed, memory_order_relaxed);
}
