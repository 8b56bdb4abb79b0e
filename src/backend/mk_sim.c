/* src/backend/mk_sim.c - the simulated megakernel (see mk_sim.h). */
#include <string.h>
#include <time.h>

#include "../alloc_internal.h"
#include "../error_internal.h"
#include "../waitq.h"
#include "mk_sim.h"

static bool shutting_down(const mkrt_mk_control *ctl)
{
    /* acquire: pairs with the host's release store in mkrt__mk_shutdown. */
    return atomic_load_explicit(&((mkrt_mk_control *)ctl)->shutdown, memory_order_acquire) != 0;
}

static void *sim_loop(void *p)
{
    mkrt__mk_sim *s = p;
    mkrt_mk_control *ctl = s->ctl;
    uint64_t last = 0;
    for (;;) {
        /* The doorbell spin: bounded per round, re-checks shutdown. */
        uint64_t bell;
        unsigned spins = 0;
        while ((bell = atomic_load_explicit(&ctl->doorbell, memory_order_acquire)) == last) {
            if (shutting_down(ctl))
                return NULL;
            if (++spins > 256) {
                struct timespec ts = {0, 10000};
                nanosleep(&ts, NULL); /* the device's __nanosleep backoff */
            }
        }
        for (uint64_t seq = last + 1; seq <= bell; seq++) {
            const mkrt_mk_desc *d = &ctl->desc[seq & 1];
            const mkrt_item *items = (const mkrt_item *)(uintptr_t)d->items;
            const uint32_t *off = (const uint32_t *)(uintptr_t)d->layer_offsets;
            for (uint32_t l = 0; l < d->layers; l++) {
                /* acquire: pairs with the release store in the injector. */
                if (seq == atomic_load_explicit(&s->hang_batch, memory_order_acquire) &&
                    l >= atomic_load_explicit(&s->hang_after_layer, memory_order_relaxed)) {
                    while (!shutting_down(ctl)) { /* a hung op: only shutdown ends it */
                        struct timespec ts = {0, 100000};
                        nanosleep(&ts, NULL);
                    }
                    return NULL;
                }
                /* "Blocks" take items grid-stride, as the kernel does. */
                for (uint32_t b = 0; b < s->blocks; b++) {
                    uint32_t done_here = 0;
                    for (uint32_t k = off[l] + b; k < off[l + 1]; k += s->blocks) {
                        const mkrt_item *it = &items[k];
                        uint32_t e;
                        if (it->op == 3) { /* APPEND */
                            uint64_t at = atomic_fetch_add_explicit(&ctl->append_len, 1, memory_order_relaxed);
                            e = it->out >= ctl->cell_count ? MKRT_MK_ERR_HANDLE : MKRT_MK_ERR_NONE;
                            uint32_t *log = (uint32_t *)(uintptr_t)ctl->append_log;
                            if (e == MKRT_MK_ERR_NONE && at < ctl->append_capacity) {
                                log[2 * at] = it->out;
                                log[2 * at + 1] = it->param;
                            }
                        } else {
                            e = mkrt_mk_run_builtin(it->op, it->in, it->out, it->param,
                                                    (uint64_t *)(uintptr_t)ctl->cells, ctl->cell_count);
                        }
                        if (e != MKRT_MK_ERR_NONE) {
                            ctl->error_item = k;
                            ctl->error_seq = seq;
                            /* release: pairs with the host's acquire of error. */
                            atomic_store_explicit(&ctl->error, e, memory_order_release);
                            return NULL; /* the kernel stops at its first error */
                        }
                        done_here++;
                    }
                    /* relaxed: a diagnostic word, read by the watchdog. */
                    atomic_store_explicit(&ctl->progress[b], (uint64_t)l << 32 | done_here,
                                          memory_order_relaxed);
                }
            }
            /* release: pairs with the host's acquire of done; the cell
             * writes above are visible to a host that sees done >= seq. */
            atomic_store_explicit(&ctl->done, seq, memory_order_release);
        }
        last = bell;
    }
}

mkrt_status mkrt__mk_sim_start(mkrt__mk_sim *s, uint32_t cells, uint32_t capacity, uint32_t blocks,
                               uint64_t append_capacity, mkrt_error *err)
{
    memset(s, 0, sizeof *s);
    s->capacity = capacity;
    s->cell_count = cells;
    s->append_capacity = append_capacity;
    s->blocks = blocks ? blocks : 1;
    s->ctl = mkrt__alloc_zeroed(sizeof *s->ctl, MKRT_MK_LINE);
    s->cells = mkrt__alloc_zeroed((size_t)cells * sizeof *s->cells, MKRT_CACHE_LINE);
    s->append_log = mkrt__alloc_zeroed(2 * append_capacity * sizeof(uint32_t) + 8, MKRT_CACHE_LINE);
    for (int i = 0; i < 2; i++) {
        s->buffers[i] = mkrt__alloc((size_t)capacity * sizeof(mkrt_item), MKRT_CACHE_LINE);
        s->offsets[i] = mkrt__alloc(((size_t)capacity + 1) * sizeof(uint32_t), MKRT_CACHE_LINE);
    }
    if (!s->ctl || !s->cells || !s->append_log || !s->buffers[0] || !s->buffers[1] || !s->offsets[0] ||
        !s->offsets[1]) {
        mkrt__mk_sim_stop(s);
        return mkrt__error_set(err, MKRT_ENOMEM, "simulated megakernel: allocation failed for %u "
                                                 "cells and %u-item buffers. Fix: smaller sizes.",
                               cells, capacity);
    }
    s->ctl->cells = (uint64_t)(uintptr_t)s->cells;
    s->ctl->cell_count = cells;
    s->ctl->blocks = s->blocks;
    s->ctl->append_log = (uint64_t)(uintptr_t)s->append_log;
    s->ctl->append_capacity = append_capacity;
    if (pthread_create(&s->thread, NULL, sim_loop, s) != 0) {
        mkrt__mk_sim_stop(s);
        return mkrt__error_set(err, MKRT_ENOMEM, "simulated megakernel: no thread. Fix: raise the "
                                                 "thread limit.");
    }
    return MKRT_OK;
}

mkrt_status mkrt__mk_sim_stage(void *ctx, unsigned buffer, const mkrt_item *items, uint32_t count,
                               const uint32_t *offsets, uint32_t layers, uint64_t *items_addr,
                               uint64_t *offsets_addr, mkrt_error *err)
{
    mkrt__mk_sim *s = ctx;
    if (count > s->capacity || layers > s->capacity)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "megakernel batch of %u items in %u layers exceeds the %u-item device "
                               "buffer. Fix: split the batch.",
                               count, layers, s->capacity);
    memcpy(s->buffers[buffer], items, (size_t)count * sizeof *items);      /* cuMemcpyHtoDAsync */
    memcpy(s->offsets[buffer], offsets, ((size_t)layers + 1) * sizeof *offsets);
    *items_addr = (uint64_t)(uintptr_t)s->buffers[buffer];
    *offsets_addr = (uint64_t)(uintptr_t)s->offsets[buffer];
    return MKRT_OK;
}

void mkrt__mk_sim_stop(mkrt__mk_sim *s)
{
    if (s->thread) {
        /* release: pairs with the sim's acquire loads of shutdown. */
        atomic_store_explicit(&s->ctl->shutdown, 1, memory_order_release);
        pthread_join(s->thread, NULL);
        s->thread = 0;
    }
    mkrt__free(s->ctl, sizeof *s->ctl);
    mkrt__free(s->cells, (size_t)s->cell_count * sizeof *s->cells);
    for (int i = 0; i < 2; i++) {
        mkrt__free(s->buffers[i], (size_t)s->capacity * sizeof(mkrt_item));
        mkrt__free(s->offsets[i], ((size_t)s->capacity + 1) * sizeof(uint32_t));
    }
    mkrt__free(s->append_log, 2 * s->append_capacity * sizeof(uint32_t) + 8);
    memset(s, 0, sizeof *s);
}
