/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/admit.c - stage admit: every item is checked by the one
 * admission rule (mkrt__item_admit) and APPENDs get room in the log,
 * before dedupe and layering, so a refused item never adds a layer and no
 * backend sees it. Admitted items are compacted in drain order at the
 * front of b->items; refused ones go to the failure list. */
#include "pipeline/stages.h"
#include "runtime/runtime_internal.h"

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
    size_t w = 0;
    uint32_t user = 0;
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
        b->items[w++] = it;
    }
    b->user_ops = user;
    b->admitted = w;
    b->appends = appends;
    b->refused = b->failed_n;
}
