/* SPDX-License-Identifier: BSD-2-Clause */
/* src/runtime/api_internal.h - what the files of the public runtime API
 * (src/runtime/: config, lifecycle, ops, producers, waits, state) share. */
#ifndef MKRT_RUNTIME_API_INTERNAL_H
#define MKRT_RUNTIME_API_INTERNAL_H

#include "runtime/runtime_internal.h"

/* Cells and the APPEND log may be registered with the CUDA driver, which
 * pins whole pages: give them pages of their own. */
#define MKRT__PAGE_BYTES 4096u


/* config.c: every field against its documented range (runtime.h), and
 * the byte sizes computed from them with checked arithmetic. */
mkrt_status mkrt__config_check(const mkrt_config *c, size_t *cells_bytes, size_t *log_bytes,
                               mkrt_error *err);

/* The owner enters a call that touches the runtime: BUSY is set (seq_cst,
 * against mkrt_destroy's store of closing and loads of state, see
 * runtime_internal.h). False when the producer is orphaned or the runtime
 * is closing: the caller has left again and must not touch the runtime. */
static inline bool mkrt__owner_enter(mkrt_producer *p, uint32_t bit, bool refuse_closing)
{
    uint32_t s = atomic_fetch_or(&p->state, bit);
    if ((s & MKRT__PRODUCER_LIFE) == MKRT__PRODUCER_ORPHANED ||
        (refuse_closing && atomic_load(&p->rt->producers.closing))) {
        /* release: pairs with destroy's loads of state; nothing touched. */
        atomic_fetch_and_explicit(&p->state, ~bit, memory_order_release);
        return false;
    }
    return true;
}

/* The owner's last touch of the runtime in this call is behind it. */
static inline void mkrt__owner_leave(mkrt_producer *p, uint32_t bit)
{
    /* release: pairs with the loads of state in mkrt_destroy and the
     * dispatcher, which may free the runtime or the producer after. */
    atomic_fetch_and_explicit(&p->state, ~bit, memory_order_release);
}

#endif
