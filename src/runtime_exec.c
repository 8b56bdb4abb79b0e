/* src/runtime_exec.c - running one range of a layer: the built-in ops on
 * runtime cells, and user ops. Called by backend workers; the layering and
 * the barriers guarantee that no two items of one layer touch the same
 * cell in conflicting ways, so cells are plain memory. */
#include "runtime_internal.h"

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
            if (it->out >= ncells)
                fail(b, it, MKRT_EINVAL);
            else
                cells[it->out] = it->param;
            break;
        case MKRT_OP_ADD:
            if (it->out >= ncells || it->in >= ncells)
                fail(b, it, MKRT_EINVAL);
            else
                cells[it->out] = cells[it->in] + it->param;
            break;
        case MKRT_OP_APPEND: {
            if (it->out >= ncells) {
                fail(b, it, MKRT_EINVAL);
                break;
            }
            /* relaxed: claims a log slot; appends to one handle are in
             * different layers, so the barrier between them already orders
             * the claims (modification order follows happens-before). */
            uint64_t at = atomic_fetch_add_explicit(&rt->append_len, 1, memory_order_relaxed);
            if (at >= rt->cfg.append_log_capacity)
                fail(b, it, MKRT_EOVERFLOW);
            else
                rt->append_log[at] = (mkrt__append_entry){it->out, it->param};
            break;
        }
        default: {
            const mkrt__op_entry *op = it->op < MKRT_OP_MAX ? &rt->ops[it->op] : NULL;
            if (op == NULL || op->fn == NULL) {
                fail(b, it, MKRT_ENOTSUP);
                break;
            }
            mkrt_op_ctx ctx = {cells, ncells, op->user};
            mkrt_status st = op->fn(it, &ctx);
            if (st != MKRT_OK)
                fail(b, it, st);
            break;
        }
        }
    }
}
