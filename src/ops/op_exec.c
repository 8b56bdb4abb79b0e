/* SPDX-License-Identifier: BSD-2-Clause */
/* src/ops/op_exec.c - the op rules of the runtime: which items may run
 * (admission), which duplicates are redundant (dedupe), and running one
 * range of a layer (the built-in ops on runtime cells, and user ops).
 * exec_range is called by backend workers; the layering and the barriers
 * guarantee that no two items of one layer touch the same cell in
 * conflicting ways, so cells are plain memory. */
#include "runtime/runtime_internal.h"

mkrt_status mkrt__item_admit(const mkrt_runtime *rt, const mkrt_item *it)
{
    const uint32_t cells = rt->cfg.cells;
    switch (it->op) {
    case MKRT_OP_NOP:
        return MKRT_OK;
    case MKRT_OP_STORE:
    case MKRT_OP_APPEND:
        return it->out < cells ? MKRT_OK : MKRT_EINVAL;
    case MKRT_OP_ADD:
        return it->out < cells && it->in < cells ? MKRT_OK : MKRT_EINVAL;
    default:
        break;
    }
    if (it->op >= MKRT_OP_MAX || rt->ops[it->op].fn == NULL)
        return MKRT_ENOTSUP;
    /* runtime.h promises a user op cells[in] and cells[out]. */
    if (it->in >= cells || it->out >= cells)
        return MKRT_EINVAL;
    uint64_t budget = rt->cfg.device_memory_budget;
    if (budget != 0 && rt->ops[it->op].fused_bytes > budget)
        return MKRT_EBUDGET;
    return MKRT_OK;
}

bool mkrt__item_idempotent(const mkrt_item *it, void *ctx)
{
    const mkrt_runtime *rt = ctx;
    switch (it->op) {
    case MKRT_OP_NOP:
    case MKRT_OP_STORE:
        return true;
    case MKRT_OP_ADD:
        return it->in != it->out; /* out += param accumulates */
    case MKRT_OP_APPEND:
        return false;             /* every APPEND is an entry */
    default:
        return it->op < MKRT_OP_MAX && rt->ops[it->op].idempotent;
    }
}

static void fail(mkrt__batch *b, const mkrt_item *it, mkrt_status why)
{
    /* relaxed: hands out distinct slots; the dispatcher reads them after
     * the batch's `done` (acquire), which orders these writes. */
    uint32_t i = atomic_fetch_add_explicit(&b->failed_n, 1, memory_order_relaxed);
    b->failed[i] = *it;
    b->failed_why[i] = why;
}

void mkrt__exec_range(mkrt_runtime *rt, mkrt__batch *b, size_t from, size_t to)
{
    uint64_t *cells = rt->cells;
    const uint32_t ncells = rt->cfg.cells;
    for (size_t k = from; k < to; k++) {
        const mkrt_item *it = &b->exec[k];
        switch (it->op) {
        case MKRT_OP_NOP:
            break;
        case MKRT_OP_STORE:
            cells[it->out] = it->param;
            break;
        case MKRT_OP_ADD:
            cells[it->out] = cells[it->in] + it->param;
            break;
        case MKRT_OP_APPEND: {
            /* relaxed: claims a log position; appends to one handle are in
             * different layers, so the barrier between them already orders
             * the claims (modification order follows happens-before).
             * Admission reserved room for it: the slot is not in the log. */
            uint64_t at = atomic_fetch_add_explicit(&rt->append_len, 1, memory_order_relaxed);
            /* release: pairs with the acquire fences of the log's readers
             * (see mkrt_append_log_read). */
            atomic_store_explicit(&rt->append_log[at % rt->cfg.append_log_capacity],
                                  mkrt__append_word(it->out, it->param), memory_order_release);
            break;
        }
        default: {
            const mkrt__op_entry *op = &rt->ops[it->op];
            mkrt_op_ctx ctx = {cells, ncells, op->user};
            mkrt_status st = op->fn(it, &ctx);
            if (st != MKRT_OK)
                fail(b, it, st);
            break;
        }
        }
    }
}
