/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/device_state.c - where the cells and the APPEND log live
 * when a device backend keeps them in its own memory (backend.h,
 * state_in): the dispatcher moves them with the batch's backend, and the
 * application's reads and writes follow them (pipeline/dispatch.h).
 *
 * Ownership: the state lives with the backend that runs batches. A batch
 * planned on the CPU pool (ops the device lacks, or the device failed)
 * first brings the state home (one copy of the cells and the log from the
 * device), and the next device batch takes it back (one copy the other
 * way), so every batch sees every earlier batch's effects wherever it ran,
 * and results are the CPU's. The copies happen between batches (the
 * dispatcher launches a batch only once the one before completed). */
#include <string.h>

#include "pipeline/dispatch.h"

mkrt__backend *mkrt__state_move(mkrt__dispatch *dp, mkrt__backend *to, mkrt_error *err)
{
    if (!dp->device_state)
        return NULL;
    mkrt__backend *want = to != NULL && to->ops->state_in != NULL && !to->failed ? to : NULL;
    /* relaxed: state_at is written by this thread (the dispatcher) only. */
    mkrt__backend *at = atomic_load_explicit(&dp->state_at, memory_order_relaxed);
    if (at == want)
        return NULL;
    mkrt__backend *bad = NULL;
    mkrt__mutex_lock(&dp->state_lock);
    if (at != NULL) {
        if (at->ops->state_out(at, err) != MKRT_OK) {
            bad = at; /* the host arrays keep the last copy */
            dp->state_lost = true;
        }
        /* release: pairs with the acquire in the readers (under the lock
         * anyway; the atomic keeps unlocked peeks well defined). */
        atomic_store_explicit(&dp->state_at, NULL, memory_order_release);
    }
    if (want != NULL && bad == NULL) {
        if (want->ops->state_in(want, err) == MKRT_OK)
            /* release: as above. */
            atomic_store_explicit(&dp->state_at, want, memory_order_release);
        else
            bad = want;
    }
    mkrt__mutex_unlock(&dp->state_lock);
    return bad;
}

static mkrt__backend *state_at(mkrt__dispatch *dp)
{
    /* acquire: pairs with the release stores in mkrt__state_move (the
     * lock orders them too). */
    return atomic_load_explicit(&dp->state_at, memory_order_acquire);
}

mkrt_status mkrt__state_cells_read(mkrt__dispatch *dp, uint32_t first, size_t count, uint64_t *out)
{
    mkrt__mutex_lock(&dp->state_lock);
    mkrt__backend *at = state_at(dp);
    mkrt_status st = MKRT_OK;
    if (at != NULL)
        st = at->ops->cells_read(at, first, count, out, NULL);
    else
        memcpy(out, &dp->state->cells[first], count * sizeof *out);
    mkrt__mutex_unlock(&dp->state_lock);
    return st;
}

mkrt_status mkrt__state_cell_write(mkrt__dispatch *dp, uint32_t handle, uint64_t value)
{
    mkrt__mutex_lock(&dp->state_lock);
    mkrt__backend *at = state_at(dp);
    mkrt_status st = MKRT_OK;
    if (at != NULL)
        st = at->ops->cell_write(at, handle, value, NULL);
    else
        dp->state->cells[handle] = value;
    mkrt__mutex_unlock(&dp->state_lock);
    return st;
}

void mkrt__state_log_begin(mkrt__dispatch *dp, mkrt__log_reader *r)
{
    r->dp = dp;
    r->at = NULL;
    r->base = 0;
    r->n = 0;
    r->failed = false;
    if (!dp->device_state)
        return;
    mkrt__mutex_lock(&dp->state_lock);
    r->at = state_at(dp);
}

uint64_t mkrt__state_log_word(mkrt__log_reader *r, uint64_t position)
{
    if (position < r->base || position >= r->base + r->n) {
        size_t cap = r->dp->cfg->append_log_capacity;
        size_t n = sizeof r->words / sizeof r->words[0];
        r->base = position;
        r->n = n < cap ? n : cap;
        if (r->failed || r->at->ops->log_read(r->at, position, r->n, r->words, NULL) != MKRT_OK) {
            r->failed = true;
            memset(r->words, 0, sizeof r->words);
        }
    }
    return r->words[position - r->base];
}

void mkrt__state_log_end(mkrt__log_reader *r)
{
    if (r->dp->device_state)
        mkrt__mutex_unlock(&r->dp->state_lock);
}
