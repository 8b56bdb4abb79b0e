/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/soak/classic_sess.c - the classic workload's producer sessions:
 * random batches published every way the API offers, fences, waits and
 * the cell checks after each wait. */
#include <sched.h>
#include <string.h>

#include "classic.h"

/* ---- producer sessions ------------------------------------------------- */

/* The published prefix items[0..k) into the slot's books. */
static void account(session *s, const mkrt_item *items, size_t k)
{
    slot_state *sl = &s->r->slot[s->slot];
    const uint32_t base = s->slot * SLOT_STRIDE;
    for (size_t i = 0; i < k; i++) {
        const mkrt_item *it = &items[i];
        uint32_t p = it->param;
        switch (it->op) {
        case OP_ACC:
        case OP_SLOW:
        case OP_FAIL:
            if (it->out >= CELLS) {
                sl->must_fail++;
                break;
            }
            sl->pub_sum[it->out - base] += p;
            sl->pub_user_sum[it->out - base] += p;
            sl->pub_user_n++;
            if (it->op == OP_FAIL && fail_expect(p) != MKRT_OK)
                sl->must_fail++;
            break;
        case MKRT_OP_ADD:
            if (it->out >= CELLS)
                sl->must_fail++;
            else
                sl->pub_sum[it->out - base] += p;
            break;
        case OP_MAX:
            if (p > sl->pub_max[it->out - base - MAXC_OFF])
                sl->pub_max[it->out - base - MAXC_OFF] = p;
            break;
        case MKRT_OP_APPEND:
            if (it->out >= CELLS)
                sl->must_fail++;
            else
                sl->appends = (p & 0xFFFF) + 1;
            break;
        case MKRT_OP_STORE:
            sl->last_store = p;
            sl->stores = p;
            break;
        case OP_UNKNOWN:
            sl->must_fail++;
            break;
        default:
            break;
        }
    }
    sl->pub_items += k;
    /* relaxed: a progress counter. */
    atomic_fetch_add_explicit(&g_items, k, memory_order_relaxed);
}

/* A random batch. Sequence numbers continue from what was published. */
static size_t gen_batch(session *s, mkrt_item *buf)
{
    round *r = s->r;
    slot_state *sl = &r->slot[s->slot];
    const uint32_t base = s->slot * SLOT_STRIDE;
    uint32_t next_append = sl->appends, next_store = sl->stores;
    bool dev = atomic_load(&r->device_phase);
    size_t n = 1 + rnd_below(&s->rng, BATCH_MAX);
    uint64_t *g = &s->rng;
    for (size_t i = 0; i < n; i++) {
        uint32_t k = rnd_below(g, 100);
        uint32_t acc = base + rnd_below(g, ACC_N);
        mkrt_item it;
        bool dup_ok = true;
        if (dev) /* built-in ops only, so that batches run on the device */
            k = k < 35 ? 30 : k < 60 ? 62 : k < 80 ? 78 : k < 94 ? 88 : k < 97 ? 94 : 97;
        if (k < 30) {
            it = (mkrt_item){OP_ACC, acc, acc, 1 + rnd_below(g, 1u << 16)};
        } else if (k < 40) {
            it = (mkrt_item){MKRT_OP_ADD, acc, acc, 1 + rnd_below(g, 1u << 16)};
        } else if (k < 50) {
            uint32_t m = base + MAXC_OFF + rnd_below(g, MAXC_N);
            it = (mkrt_item){OP_MAX, m, m, 1 + rnd_below(g, 1u << 24)};
        } else if (k < 58) {
            it = (mkrt_item){OP_FAIL, acc, acc, 1 + rnd_below(g, 1u << 16)};
        } else if (k < 62) {
            it = (mkrt_item){OP_SLOW, acc, acc, 1 + rnd_below(g, 1u << 16)};
        } else if (k < 78 && next_append < APPEND_MAX) {
            it = (mkrt_item){MKRT_OP_APPEND, 0, base + APPEND_OFF, s->id << 16 | next_append++};
            dup_ok = false;
        } else if (k < 88) {
            it = (mkrt_item){MKRT_OP_STORE, 0, base + STORE_OFF, ++next_store};
        } else if (k < 94) {
            it = (mkrt_item){MKRT_OP_NOP, 0, 0, rnd_below(g, 4)};
        } else if (k < 97) {
            it = (mkrt_item){OP_UNKNOWN, 0, 0, rnd_below(g, 1u << 20)};
            dup_ok = false;
        } else {
            uint32_t which = rnd_below(g, dev ? 2 : 3);
            uint32_t op = which == 0 ? MKRT_OP_ADD : which == 1 ? MKRT_OP_APPEND : OP_ACC;
            it = (mkrt_item){op, BAD_HANDLE, BAD_HANDLE, 1 + rnd_below(g, 1000)};
            dup_ok = false;
        }
        buf[i] = it;
        /* Exact duplicates in a row: pruned only for idempotent ops. */
        if (dup_ok && i + 1 < n && rnd_below(g, 6) == 0)
            buf[++i] = it;
    }
    return n;
}

static bool orphaned(mkrt_producer *p)
{
    uint64_t t;
    return mkrt_fence(p, &t) == MKRT_ECLOSED;
}

static void backoff(uint64_t *rng, unsigned tries)
{
    if (tries < 4)
        sched_yield();
    else
        nap_us(tries < 12 ? 1u << (tries - 4) : 2000u + rnd_below(rng, 1000));
}

/* Publishes buf[0..n) one way or another; false once the runtime closed. */
static bool publish_batch(session *s, mkrt_producer *p, mkrt_item *buf, size_t n)
{
    round *r = s->r;
    size_t done = 0;
    mkrt_error err;
    uint32_t how = rnd_below(&s->rng, 3);
    if (how == 0) { /* blocking with short timeouts, retried */
        while (done < n) {
            size_t k = 0;
            uint64_t timeout = (1 + rnd_below(&s->rng, 50)) * 1000000ull;
            mkrt_status st = mkrt_publish_some(p, buf + done, n - done, timeout, &k, &err);
            if (k > n - done) {
                soak_error("mkrt_publish_some says %zu of %zu published", k, n - done);
                k = 0;
            }
            account(s, buf + done, k);
            done += k;
            if (st == MKRT_OK) {
                if (done != n)
                    soak_error("mkrt_publish_some returned OK after %zu of %zu items", done, n);
                return true;
            }
            if (st == MKRT_ECLOSED)
                return false;
            if (st != MKRT_ETIMEDOUT) {
                soak_error("mkrt_publish_some: %s: %s", mkrt_status_name(st), err.message);
                return false;
            }
            atomic_fetch_add(&g_backpressure, 1);
        }
        return true;
    }
    if (how == 1) { /* non-blocking, with back-off */
        unsigned tries = 0;
        while (done < n) {
            size_t k = mkrt_try_publish(p, buf + done, n - done);
            account(s, buf + done, k);
            done += k;
            if (k > 0) {
                tries = 0;
                continue;
            }
            if (++tries == 1)
                atomic_fetch_add(&g_backpressure, 1);
            if (tries % 8 == 0 && orphaned(p))
                return false;
            backoff(&s->rng, tries);
        }
        return true;
    }
    if (!r->race) { /* mkrt_publish of the whole batch; nothing closes it */
        mkrt_status st = mkrt_publish(p, buf, n, LONG_NS, &err);
        if (st != MKRT_OK) {
            soak_error("mkrt_publish of %zu items: %s: %s (the accounting of this round is off "
                       "from here)", n, mkrt_status_name(st), err.message);
            return false;
        }
        account(s, buf, n);
        return true;
    }
    /* Race rounds: one item per mkrt_publish, so that the published prefix
     * is known when it returns MKRT_ECLOSED. */
    while (done < n) {
        mkrt_status st = mkrt_publish(p, buf + done, 1, 20000000ull, &err);
        if (st == MKRT_OK) {
            account(s, buf + done, 1);
            done++;
        } else if (st == MKRT_ECLOSED) {
            return false;
        } else if (st == MKRT_ETIMEDOUT) {
            atomic_fetch_add(&g_backpressure, 1);
        } else {
            soak_error("mkrt_publish: %s: %s", mkrt_status_name(st), err.message);
            return false;
        }
    }
    return true;
}

/* After mkrt_wait covered everything this slot published (the caller
 * knows no earlier session left items behind): the cells hold their
 * values already. Inside the gate. */
/* After a device failure (an injected hang that tripped the watchdog, or
 * a stray trip) the cells the failed batch writes are undefined
 * (runtime.h, Accounting: its items are reported failed even when the
 * device ran them), so a mismatch is then noted, not an error, and the
 * round's values are no longer checked. Read after the cells, so that a
 * failure of items the caller waited for is seen (it is counted before
 * they complete). A 600 s run met one such mismatch in 12 injected hangs
 * (a cell off by one item's param after a hang at layer 0). */
bool cells_undefined(round *r)
{
    if (r->backend != MKRT_BACKEND_SIM)
        return false;
    if (atomic_load(&r->values_unchecked))
        return true;
    mkrt_stats st;
    if (mkrt_stats_read(r->rt, &st) != MKRT_OK || st.device_failures == 0)
        return false;
    if (!atomic_exchange(&r->values_unchecked, true)) {
        atomic_fetch_add(&g_values_unchecked, 1);
        fprintf(stderr, "soak: note: round %u: a cell differs from its shadow after %llu device "
                        "failure(s) (%s): a failed batch's cells are undefined; the round's values are "
                        "not checked from here\n",
                r->index, (unsigned long long)st.device_failures,
                r->hang_injected ? "a hang was injected" : "no hang injected: a stray trip");
    }
    return true;
}

void check_slot_cells(round *r, unsigned slot, const char *when)
{
    if (atomic_load(&r->values_unchecked))
        return;
    slot_state *sl = &r->slot[slot];
    const uint32_t base = slot * SLOT_STRIDE;
    for (unsigned i = 0; i < ACC_N; i++) {
        uint64_t v = 0, want = sl->pub_sum[i] - atomic_load(&r->cell[base + i].fail_all_sum);
        mkrt_cell_read(r->rt, base + i, &v);
        if (v != want && !cells_undefined(r))
            soak_error("%s: slot %u accumulate cell %u = %llu, want %llu (published %llu, failed "
                       "%llu)", when, slot, base + i, (unsigned long long)v, (unsigned long long)want,
                       (unsigned long long)sl->pub_sum[i],
                       (unsigned long long)atomic_load(&r->cell[base + i].fail_all_sum));
    }
    for (unsigned i = 0; i < MAXC_N; i++) {
        uint32_t h = base + MAXC_OFF + i;
        uint64_t v = 0;
        mkrt_cell_read(r->rt, h, &v);
        if (!atomic_load(&r->cell[h].max_failed) && v != sl->pub_max[i] && !cells_undefined(r))
            soak_error("%s: slot %u MAX cell %u = %llu, want %u", when, slot, h, (unsigned long long)v,
                       sl->pub_max[i]);
    }
    uint64_t v = 0;
    mkrt_cell_read(r->rt, base + STORE_OFF, &v);
    if (!atomic_load(&r->cell[base + STORE_OFF].store_failed) && v != sl->last_store && !cells_undefined(r))
        soak_error("%s: slot %u STORE cell = %llu, want %u (the last STORE published)", when, slot,
                   (unsigned long long)v, sl->last_store);
}

typedef enum { WAIT_OK, WAIT_SKIPPED, WAIT_CLOSED, WAIT_ERROR } wait_result;

/* fence, then wait. mkrt_wait may overlap mkrt_destroy (race rounds):
 * it returns when the ticket completed or with MKRT_ECLOSED once the
 * runtime stopped. The cell check after it reads the runtime itself, so
 * it runs inside the gate (skipped once a race round closed it). */
static wait_result fence_wait(session *s, mkrt_producer *p)
{
    round *r = s->r;
    uint64_t ticket;
    mkrt_status st = mkrt_fence(p, &ticket);
    if (st == MKRT_ECLOSED)
        return WAIT_CLOSED;
    if (st != MKRT_OK) {
        soak_error("mkrt_fence: %s", mkrt_status_name(st));
        return WAIT_ERROR;
    }
    st = mkrt_wait(p, ticket, LONG_NS);
    if (st == MKRT_OK && s->window_ns != 0) /* the oldest unwaited batch: published to completed */
        soak_latency_record(stress_now_ns() - s->window_ns);
    s->window_ns = 0;
    if (st == MKRT_ECLOSED && r->race && atomic_load(&r->gate_closed))
        return WAIT_CLOSED; /* destroy began (it closes the gate first) */
    if (st != MKRT_OK) {
        soak_error("slot %u session %u: mkrt_wait for ticket %llu: %s", s->slot, s->id,
                   (unsigned long long)ticket, mkrt_status_name(st));
        return WAIT_ERROR;
    }
    if (!gate_enter(r))
        return WAIT_OK;
    if (!r->slot[s->slot].unwaited) {
        check_slot_cells(r, s->slot, "after mkrt_wait");
        atomic_fetch_add(&g_mid_checks, 1);
    }
    gate_leave(r);
    return WAIT_OK;
}

static int session_main(void *arg)
{
    session *s = arg;
    round *r = s->r;
    slot_state *sl = &r->slot[s->slot];
    mkrt_producer *p = NULL;
    while (p == NULL && !atomic_load(&r->stop)) {
        if (!gate_enter(r))
            break;
        mkrt_error err;
        p = mkrt_producer_open(r->rt, &err);
        gate_leave(r);
        if (p != NULL)
            break;
        if (!soak_open_retry(&err))
            break;
        nap_us(500);
    }
    if (p == NULL) {
        atomic_store(&s->finished, true);
        return 0;
    }
    atomic_fetch_add(&g_sessions, 1);
    mkrt_item buf[BATCH_MAX];
    unsigned batches = 5 + rnd_below(&s->rng, 200);
    unsigned check_every = 4 + rnd_below(&s->rng, 28);
    bool open = true;
    for (unsigned b = 0; b < batches && open && (r->race || !atomic_load(&r->stop)); b++) {
        size_t n = gen_batch(s, buf);
        if (s->window_ns == 0)
            s->window_ns = stress_now_ns();
        open = publish_batch(s, p, buf, n);
        if (open && b % check_every == check_every - 1)
            open = fence_wait(s, p) != WAIT_CLOSED;
        if (rnd_below(&s->rng, 16) == 0)
            nap_us(rnd_below(&s->rng, 2000));
    }
    /* Most sessions wait for their items before closing; some close with
     * items in flight (they still run). */
    if (rnd_below(&s->rng, 8) == 0 || !open || fence_wait(s, p) != WAIT_OK)
        sl->unwaited = true;
    mkrt_producer_close(p);
    atomic_store(&s->finished, true);
    return 0;
}

void start_session(round *r, unsigned slot)
{
    session *s = &r->sess[slot];
    slot_state *sl = &r->slot[slot];
    if (sl->sessions >= MAX_SESSIONS)
        return;
    s->r = r;
    s->slot = slot;
    s->id = sl->sessions++;
    s->rng = rnd_seed(opt.seed, (uint64_t)r->index << 32 | slot, s->id);
    atomic_store(&s->finished, false);
    s->window_ns = 0;
    if (mkrt__thread_start(&s->thread, session_main, s) != 0) {
        soak_error("cannot start a thread for a producer session");
        sl->sessions--;
        return;
    }
    s->running = true;
}

void join_session(session *s)
{
    if (s->running) {
        mkrt__thread_join(s->thread);
        s->running = false;
    }
}

