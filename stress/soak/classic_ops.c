/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/soak/classic_ops.c - the classic workload's user ops, its error
 * callback (every failure checked against what the item may get and
 * booked on the shadows), and its APPEND log consumer. */
#include <string.h>

#include "classic.h"

mkrt_status fail_expect(uint32_t param)
{
    return param % 8 == 3 ? MKRT_EINVAL : param % 8 == 5 ? CUSTOM_STATUS : MKRT_OK;
}

bool gate_enter(round *r)
{
    /* seq_cst (both sides): the store-load pairing with gate_close. */
    atomic_fetch_add(&r->users, 1);
    if (atomic_load(&r->gate_closed)) {
        atomic_fetch_sub(&r->users, 1);
        return false;
    }
    return true;
}

void gate_leave(round *r)
{
    atomic_fetch_sub(&r->users, 1);
}

void gate_close(round *r)
{
    atomic_store(&r->gate_closed, true);
    while (atomic_load(&r->users) != 0)
        nap_us(100);
}


/* ---- user ops ------------------------------------------------------------ */

static void shadow_exec(round *r, const mkrt_item *it)
{
    if (it->out < TRACKED) {
        /* relaxed: tallies read by main after mkrt_drain (its acquire of
         * the completions), mkrt_wait, or mkrt_destroy (thread joins). */
        atomic_fetch_add_explicit(&r->cell[it->out].exec_user_sum, it->param, memory_order_relaxed);
        atomic_fetch_add_explicit(&r->exec_user_n, 1, memory_order_relaxed);
    }
}

mkrt_status op_acc(const mkrt_item *it, const mkrt_op_ctx *c)
{
    c->cells[it->out] += it->param;
    shadow_exec(c->user, it);
    if (it->op == OP_ACC && sabotage(SAB_DOUBLE_RUN)) {
        c->cells[it->out] += it->param;
        shadow_exec(c->user, it);
    }
    return MKRT_OK;
}

mkrt_status op_max(const mkrt_item *it, const mkrt_op_ctx *c)
{
    if (c->cells[it->out] < it->param)
        c->cells[it->out] = it->param;
    return MKRT_OK;
}

mkrt_status op_fail(const mkrt_item *it, const mkrt_op_ctx *c)
{
    mkrt_status st = fail_expect(it->param);
    if (st != MKRT_OK)
        return st; /* fails without touching the cell */
    return op_acc(it, c);
}

mkrt_status op_slow(const mkrt_item *it, const mkrt_op_ctx *c)
{
    if (it->param % 64 == 0)
        nap_us(100 + it->param % 1024); /* now and then: 0.1 .. 1.1 ms */
    return op_acc(it, c);
}

/* ---- the error callback (dispatcher thread) ------------------------------ */

static void unexpected(round *r, const mkrt_item *it, mkrt_status why, const char *msg)
{
    atomic_fetch_add(&r->unexpected, 1);
    soak_error("unexpected failure %s (%d) of op %u in %u out %u param %u: %s", mkrt_status_name(why),
               (int)why, it->op, it->in, it->out, it->param, msg ? msg : "");
}

void classic_on_error(void *ctx, const mkrt_item *it, mkrt_status why, const char *msg)
{
    round *r = ctx;
    if (sabotage(SAB_LOST_FAILURE))
        return;
    atomic_fetch_add(&r->callbacks, 1);
    /* Any item may fail when destroy times out or (SIM, CUDA) the device fails. */
    bool infra = why == MKRT_ETIMEDOUT || (why == MKRT_EDEVICE && r->backend != MKRT_BACKEND_CPU);
    if (why == MKRT_ETIMEDOUT)
        atomic_fetch_add(&r->why_timedout, 1);
    if (why == MKRT_EDEVICE)
        atomic_fetch_add(&r->why_device, 1);
    uint32_t out = it->out, p = it->param;
    bool tracked = out < TRACKED;
    switch (it->op) {
    case OP_ACC:
    case OP_SLOW:
    case OP_FAIL:
        if (!tracked) { /* a bad handle */
            atomic_fetch_add(&r->must_fail_reported, 1);
            if (why != MKRT_EINVAL && !infra)
                unexpected(r, it, why, msg);
            break;
        }
        /* relaxed (these three): read after the drain or the joins. */
        atomic_fetch_add_explicit(&r->cell[out].fail_all_sum, p, memory_order_relaxed);
        atomic_fetch_add_explicit(&r->cell[out].fail_user_sum, p, memory_order_relaxed);
        atomic_fetch_add_explicit(&r->fail_user_n, 1, memory_order_relaxed);
        if (it->op == OP_FAIL && fail_expect(p) != MKRT_OK) {
            atomic_fetch_add(&r->must_fail_reported, 1);
            if (why != fail_expect(p) && !infra)
                unexpected(r, it, why, msg);
        } else if (!infra) {
            unexpected(r, it, why, msg);
        }
        break;
    case MKRT_OP_ADD:
        if (out == PROBE_CELL) {
            atomic_fetch_add(&r->probe_failures, 1);
            if (!infra)
                unexpected(r, it, why, msg);
        } else if (!tracked) {
            atomic_fetch_add(&r->must_fail_reported, 1);
            if (why != MKRT_EINVAL && !infra)
                unexpected(r, it, why, msg);
        } else {
            /* relaxed: read after the drain or the joins. */
            atomic_fetch_add_explicit(&r->cell[out].fail_all_sum, p, memory_order_relaxed);
            if (!infra)
                unexpected(r, it, why, msg);
        }
        break;
    case OP_MAX:
        if (tracked)
            atomic_store(&r->cell[out].max_failed, true);
        if (!infra)
            unexpected(r, it, why, msg);
        break;
    case MKRT_OP_STORE:
        if (tracked)
            atomic_store(&r->cell[out].store_failed, true);
        if (!infra)
            unexpected(r, it, why, msg);
        break;
    case MKRT_OP_APPEND: {
        if (!tracked) {
            atomic_fetch_add(&r->must_fail_reported, 1);
            if (why != MKRT_EINVAL && !infra)
                unexpected(r, it, why, msg);
            break;
        }
        unsigned s = out / SLOT_STRIDE;
        uint32_t seq = p & 0xFFFF;
        if (why == MKRT_EOVERFLOW)
            atomic_fetch_add(&r->why_overflow, 1);
        else if (!infra)
            unexpected(r, it, why, msg);
        if (out % SLOT_STRIDE != APPEND_OFF || s >= r->producers) {
            soak_error("failed APPEND to a handle nobody appends to: out %u param %u", out, p);
            break;
        }
        atomic_fetch_add(&r->append_failed[s], 1);
        uint8_t old = atomic_fetch_or(&r->marks[s][seq], MARK_FAILED);
        if (old != 0)
            soak_error("APPEND slot %u seq %u session %u reported failed after it was %s", s, seq,
                       p >> 16, old & MARK_FAILED ? "already reported failed" : "consumed from the log");
        break;
    }
    case OP_UNKNOWN:
        atomic_fetch_add(&r->must_fail_reported, 1);
        if (why != MKRT_ENOTSUP && !infra)
            unexpected(r, it, why, msg);
        break;
    default: /* NOP */
        if (!infra)
            unexpected(r, it, why, msg);
        break;
    }
}

/* ---- the APPEND consumer ----------------------------------------------- */

static void consume_entries(round *r, const mkrt_append_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t h = e[i].handle, p = e[i].param;
        unsigned s = h / SLOT_STRIDE;
        if (h % SLOT_STRIDE != APPEND_OFF || s >= r->producers) {
            soak_error("log entry for a handle nobody appends to: handle %u param %u", h, p);
            continue;
        }
        uint32_t seq = p & 0xFFFF, sess = p >> 16;
        if (sabotage(SAB_LOST_ENTRY))
            continue;
        if (sess >= MAX_SESSIONS) {
            soak_error("log entry with a garbled param: handle %u param %u", h, p);
            continue;
        }
        uint8_t old = atomic_fetch_or(&r->marks[s][seq], MARK_CONSUMED);
        if (old != 0)
            soak_error("APPEND slot %u seq %u session %u consumed after it was %s", s, seq, sess,
                       old & MARK_CONSUMED ? "already consumed (duplicate entry)" : "reported failed");
        if (r->last_seq[s][sess] >= seq + 1)
            soak_error("APPEND slot %u session %u out of order: seq %u after %u", s, sess, seq,
                       r->last_seq[s][sess] - 1);
        else
            r->last_seq[s][sess] = seq + 1;
        atomic_fetch_add(&r->append_consumed[s], 1);
    }
    atomic_fetch_add(&g_appends_consumed, n);
}

/* mkrt_append_log_read of one slot's handle: what it lists is in the log
 * (completed, not consumed), so this thread, the only consumer, has not
 * consumed it, and it did not fail; per session in publish order. Inside
 * the gate. */
static void peek_log(round *r)
{
    unsigned s = rnd_below(&r->consumer_rng, r->producers);
    uint32_t params[64];
    size_t n = mkrt_append_log_read(r->rt, s * SLOT_STRIDE + APPEND_OFF, params, 64);
    uint32_t last_seq = 0, last_sess = UINT32_MAX;
    for (size_t i = 0; i < n && i < 64; i++) {
        uint32_t seq = params[i] & 0xFFFF, sess = params[i] >> 16;
        uint8_t m = atomic_load(&r->marks[s][seq]);
        if (sess >= MAX_SESSIONS || m != 0) {
            soak_error("mkrt_append_log_read lists slot %u seq %u session %u, which was %s", s, seq,
                       sess, sess >= MAX_SESSIONS ? "never published"
                             : m & MARK_CONSUMED ? "consumed already"
                                                 : "reported failed");
            return;
        }
        if (sess == last_sess && seq <= last_seq)
            soak_error("mkrt_append_log_read: slot %u session %u seq %u listed after %u", s, sess, seq,
                       last_seq);
        last_sess = sess;
        last_seq = seq;
    }
}

int consumer_main(void *arg)
{
    round *r = arg;
    mkrt_append_entry e[256];
    for (unsigned iter = 0;; iter++) {
        bool stopping = atomic_load(&r->consumer_stop);
        if (!gate_enter(r))
            return 0;
        if (iter % 16 == 0)
            peek_log(r);
        size_t n = mkrt_append_log_consume(r->rt, e, 1 + rnd_below(&r->consumer_rng, 256));
        gate_leave(r);
        consume_entries(r, e, n);
        if (n == 0) {
            if (stopping)
                return 0; /* stopped after the drain, and the log is empty */
            nap_us(200);
        }
    }
}

