/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/soak/soak_emit.c - two workloads of mkrt-soak on the harness of
 * soak_work.c.
 *
 * emit: emission chains. CHAIN(out, param k) adds 1 to cells[out] and,
 * when k > 0, first emits CHAIN(out, k - 1) (mkrt_op_emit); FAN(out,
 * width << 8 | depth) emits `width` CHAINs of length `depth` at once (all
 * or nothing). A small emission queue now and then makes emits fail with
 * MKRT_EOVERFLOW: the op then returns it and its item is reported failed,
 * cutting the chain. Shadow: a published CHAIN k is worth k + 1 on its
 * cell, a FAN w, d is worth w * (d + 1); a failed CHAIN j takes j + 1
 * back, a failed FAN its worth. After mkrt_quiesce every cell equals its
 * worth less what failed, and equals what the ops counted; after a race
 * (destroy under load) that returned OK, what the ops counted plus what
 * failed equals what was published. Each producer owns 8 cells.
 *
 * commute: commuting ops on shared cells. Every producer publishes MIN,
 * OR and ACC (built-ins) and UMIN (a user op registered with commutes,
 * mkrt_op_cell_min) onto 4 shared cells and 4 cells of its own, with in
 * = a cell that stays 0. After each mkrt_wait its own ACC cell holds its
 * sum; after mkrt_quiesce every cell holds the min / or / sum over all
 * producers' items.
 *
 * Both: exactly-once accounting after quiescence (soak_check_accounting);
 * mkrt_quiesce under load every few hundred ms (soak_work.c). */
#include <string.h>

#include "soak_work.h"

#define EMIT_CELLS_PER 8
#define OP_CHAIN 16
#define OP_FAN 17
#define OP_UMIN 18

/* ---- emit -------------------------------------------------------------------- */

typedef struct emit_state {
    work w;
    uint64_t worth[MAX_PRODUCERS * EMIT_CELLS_PER]; /* per cell, its slot's thread */
    _Atomic uint64_t ran[MAX_PRODUCERS * EMIT_CELLS_PER], lost[MAX_PRODUCERS * EMIT_CELLS_PER];
    _Atomic uint64_t unexpected, overflows;
} emit_state;

static emit_state es;

static uint64_t item_worth(const mkrt_item *it)
{
    return it->op == OP_CHAIN ? (uint64_t)it->param + 1 : (uint64_t)(it->param >> 8) * ((it->param & 0xFF) + 1);
}

static mkrt_status op_chain(const mkrt_item *it, const mkrt_op_ctx *c)
{
    emit_state *s = c->user;
    if (it->param > 0) {
        mkrt_item next = {OP_CHAIN, it->out, it->out, it->param - 1};
        mkrt_status st = mkrt_op_emit(c, &next, 1);
        if (st != MKRT_OK)
            return st;
    }
    c->cells[it->out] += 1;
    /* relaxed: read after mkrt_quiesce or mkrt_destroy (their joins). */
    atomic_fetch_add_explicit(&s->ran[it->out], 1, memory_order_relaxed);
    return MKRT_OK;
}

static mkrt_status op_fan(const mkrt_item *it, const mkrt_op_ctx *c)
{
    mkrt_item kids[16];
    uint32_t width = it->param >> 8, depth = it->param & 0xFF;
    for (uint32_t i = 0; i < width; i++)
        kids[i] = (mkrt_item){OP_CHAIN, it->out, it->out, depth};
    return mkrt_op_emit(c, kids, width);
}

static void emit_on_error(void *ctx, const mkrt_item *it, mkrt_status why, const char *msg)
{
    emit_state *s = ctx;
    atomic_fetch_add(&s->w.callbacks, 1);
    if (why == MKRT_EOVERFLOW)
        atomic_fetch_add(&s->overflows, 1);
    else if (!work_infra(&s->w, why)) {
        atomic_fetch_add(&s->unexpected, 1);
        soak_error("emit: unexpected failure %s of op %u out %u param %u: %s", mkrt_status_name(why),
                   it->op, it->out, it->param, msg ? msg : "");
    }
    if ((it->op == OP_CHAIN || it->op == OP_FAN) && it->out < MAX_PRODUCERS * EMIT_CELLS_PER)
        atomic_fetch_add(&s->lost[it->out], item_worth(it));
}

static size_t emit_gen(work *w, unsigned slot, uint64_t *rng, mkrt_item *buf)
{
    (void)w;
    size_t n = 1 + rnd_below(rng, 16);
    for (size_t i = 0; i < n; i++) {
        uint32_t out = slot * EMIT_CELLS_PER + rnd_below(rng, EMIT_CELLS_PER);
        if (rnd_below(rng, 4) == 0)
            buf[i] = (mkrt_item){OP_FAN, out, out, (1 + rnd_below(rng, 12)) << 8 | rnd_below(rng, 20)};
        else
            buf[i] = (mkrt_item){OP_CHAIN, out, out, rnd_below(rng, 64)};
    }
    return n;
}

static void emit_book(work *w, unsigned slot, const mkrt_item *items, size_t n)
{
    (void)w;
    (void)slot;
    for (size_t i = 0; i < n; i++)
        es.worth[items[i].out] += item_worth(&items[i]);
}

static const work_ops emit_ops = {emit_gen, emit_book, NULL};

void emit_round(unsigned index, uint64_t now, uint64_t t_stop)
{
    memset(&es, 0, sizeof es);
    work *w = &es.w;
    soak_plan_round(&w->plan, index, now, t_stop);
    w->ops = &emit_ops;
    mkrt_config c = mkrt_config_default();
    c.backend = w->plan.backend;
    c.workers = 1 + rnd_below(&w->plan.rng, 3);
    c.cells = MAX_PRODUCERS * EMIT_CELLS_PER;
    c.watchdog_ms = 200;
    c.ring_capacity = (size_t)32 << rnd_below(&w->plan.rng, 4);
    c.emit_capacity = rnd_below(&w->plan.rng, 3) == 0 ? 64 : 0; /* 0: the default */
    c.append_log_capacity = 0;
    c.on_error = emit_on_error;
    c.error_ctx = &es;
    if (c.emit_capacity == 0)
        c.emit_capacity = mkrt_config_default().emit_capacity;
    w->cfg = c;
    if (!work_create(w))
        return;
    const struct {
        uint32_t op;
        mkrt_op_fn fn;
        const char *name;
    } ops[] = {{OP_CHAIN, op_chain, "chain"}, {OP_FAN, op_fan, "fan"}};
    for (size_t i = 0; i < 2; i++) {
        mkrt_op_desc d = {.fn = ops[i].fn, .user = &es, .name = ops[i].name};
        mkrt_error err;
        if (mkrt_op_register(w->rt, ops[i].op, &d, &err) != MKRT_OK) {
            soak_error("emit: mkrt_op_register: %s", err.message);
            work_destroy(w);
            return;
        }
    }
    bool alive = work_run(w);
    uint64_t bad = 0;
    if (alive) {
        mkrt_stats st;
        bool device_failed = false;
        if (soak_check_accounting(w->rt, "emit", work_published(w), atomic_load(&w->callbacks), &st))
            device_failed = st.device_failures > 0;
        uint64_t cells[MAX_PRODUCERS * EMIT_CELLS_PER];
        mkrt_cells_read(w->rt, 0, c.cells, cells);
        for (uint32_t h = 0; h < w->producers * EMIT_CELLS_PER && !device_failed; h++) {
            uint64_t want = es.worth[h] - atomic_load(&es.lost[h]);
            if (cells[h] != want || atomic_load(&es.ran[h]) != want) {
                if (bad++ < 3)
                    soak_error("emit: cell %u = %llu, ops ran %llu links, want %llu (published worth %llu, "
                               "failed %llu)", h, (unsigned long long)cells[h],
                               (unsigned long long)atomic_load(&es.ran[h]), (unsigned long long)want,
                               (unsigned long long)es.worth[h], (unsigned long long)atomic_load(&es.lost[h]));
            }
        }
        work_destroy(w);
    } else {
        /* Destroy under load: what was published ran or was reported. */
        for (uint32_t h = 0; h < w->producers * EMIT_CELLS_PER; h++) {
            uint64_t got = atomic_load(&es.ran[h]) + atomic_load(&es.lost[h]);
            if (got != es.worth[h] && bad++ < 3)
                soak_error("emit race: cell %u: published worth %llu, ran %llu + failed %llu",
                           h, (unsigned long long)es.worth[h], (unsigned long long)atomic_load(&es.ran[h]),
                           (unsigned long long)atomic_load(&es.lost[h]));
        }
    }
    atomic_fetch_add(&g_callbacks, atomic_load(&w->callbacks));
    if (opt.verbose)
        printf("round %u emit %s%s: published %llu callbacks %llu overflows %llu\n", index,
               backend_name(w->plan.backend), w->plan.race ? " race" : "",
               (unsigned long long)work_published(w), (unsigned long long)atomic_load(&w->callbacks),
               (unsigned long long)atomic_load(&es.overflows));
}

/* ---- commute ------------------------------------------------------------------- */

#define CM_SHARED 4 /* cells 0..3: MIN, OR, ACC, UMIN shared by every producer */
#define CM_OWN(slot) (CM_SHARED + (slot) * 4)
#define CM_ZERO (CM_SHARED + MAX_PRODUCERS * 4)
#define CM_CELLS (CM_ZERO + 1)

typedef struct commute_state {
    work w;
    uint64_t min[MAX_PRODUCERS][2], orv[MAX_PRODUCERS][2], sum[MAX_PRODUCERS][2], umin[MAX_PRODUCERS][2];
} commute_state;

static commute_state cs;

static mkrt_status op_umin(const mkrt_item *it, const mkrt_op_ctx *c)
{
    mkrt_op_cell_min(c, it->out, it->param);
    return MKRT_OK;
}

static void commute_on_error(void *ctx, const mkrt_item *it, mkrt_status why, const char *msg)
{
    commute_state *s = ctx;
    atomic_fetch_add(&s->w.callbacks, 1);
    if (!work_infra(&s->w, why))
        soak_error("commute: unexpected failure %s of op %u out %u param %u: %s", mkrt_status_name(why),
                   it->op, it->out, it->param, msg ? msg : "");
    else
        atomic_fetch_add(&s->w.infra_failures, 1);
}

static size_t commute_gen(work *w, unsigned slot, uint64_t *rng, mkrt_item *buf)
{
    (void)w;
    size_t n = 1 + rnd_below(rng, WORK_BATCH);
    static const uint32_t kinds[4] = {MKRT_OP_MIN, MKRT_OP_OR, MKRT_OP_ACC, OP_UMIN};
    for (size_t i = 0; i < n; i++) {
        uint32_t k = rnd_below(rng, 4), own = rnd_below(rng, 2);
        uint32_t out = own ? CM_OWN(slot) + k : k;
        uint32_t p = k == 1 ? 1u << rnd_below(rng, 32) : 1 + rnd_below(rng, 1u << 30);
        buf[i] = (mkrt_item){kinds[k], CM_ZERO, out, p};
    }
    return n;
}

static void commute_book(work *w, unsigned slot, const mkrt_item *items, size_t n)
{
    (void)w;
    for (size_t i = 0; i < n; i++) {
        const mkrt_item *it = &items[i];
        unsigned own = it->out >= CM_SHARED, k = own ? (it->out - CM_SHARED) % 4 : it->out;
        uint64_t p = it->param;
        if (k == 0 && p < cs.min[slot][own])
            cs.min[slot][own] = p;
        if (k == 1)
            cs.orv[slot][own] |= p;
        if (k == 2)
            cs.sum[slot][own] += p;
        if (k == 3 && p < cs.umin[slot][own])
            cs.umin[slot][own] = p;
    }
}

static void commute_after_wait(work *w, unsigned slot)
{
    uint64_t v = 0;
    mkrt_cell_read(w->rt, CM_OWN(slot) + 2, &v);
    if (v != cs.sum[slot][1] && atomic_load(&w->infra_failures) == 0)
        soak_error("commute: after mkrt_wait producer %u's ACC cell = %llu, want %llu", slot,
                   (unsigned long long)v, (unsigned long long)cs.sum[slot][1]);
}

static const work_ops commute_ops = {commute_gen, commute_book, commute_after_wait};

static void commute_check(work *w)
{
    uint64_t cells[CM_CELLS];
    mkrt_cells_read(w->rt, 0, CM_CELLS, cells);
    uint64_t want[CM_SHARED] = {UINT64_MAX, 0, 0, UINT64_MAX};
    for (unsigned s = 0; s < w->producers; s++) {
        uint64_t own[4] = {cs.min[s][1], cs.orv[s][1], cs.sum[s][1], cs.umin[s][1]};
        for (unsigned k = 0; k < 4; k++)
            if (cells[CM_OWN(s) + k] != own[k])
                soak_error("commute: producer %u's cell %u (%s) = %llu, want %llu", s, k,
                           k == 0 ? "MIN" : k == 1 ? "OR" : k == 2 ? "ACC" : "UMIN",
                           (unsigned long long)cells[CM_OWN(s) + k], (unsigned long long)own[k]);
        want[0] = cs.min[s][0] < want[0] ? cs.min[s][0] : want[0];
        want[1] |= cs.orv[s][0];
        want[2] += cs.sum[s][0];
        want[3] = cs.umin[s][0] < want[3] ? cs.umin[s][0] : want[3];
    }
    for (unsigned k = 0; k < CM_SHARED; k++)
        if (cells[k] != want[k])
            soak_error("commute: shared cell %u (%s) = %llu, want %llu", k,
                       k == 0 ? "MIN" : k == 1 ? "OR" : k == 2 ? "ACC" : "UMIN", (unsigned long long)cells[k],
                       (unsigned long long)want[k]);
    if (cells[CM_ZERO] != 0)
        soak_error("commute: the zero cell = %llu", (unsigned long long)cells[CM_ZERO]);
}

void commute_round(unsigned index, uint64_t now, uint64_t t_stop)
{
    memset(&cs, 0, sizeof cs);
    for (unsigned s = 0; s < MAX_PRODUCERS; s++)
        cs.min[s][0] = cs.min[s][1] = cs.umin[s][0] = cs.umin[s][1] = UINT64_MAX;
    work *w = &cs.w;
    soak_plan_round(&w->plan, index, now, t_stop);
    w->ops = &commute_ops;
    mkrt_config c = mkrt_config_default();
    c.backend = w->plan.backend;
    c.workers = 1 + rnd_below(&w->plan.rng, 3);
    c.cells = CM_CELLS;
    c.watchdog_ms = 200;
    c.ring_capacity = (size_t)32 << rnd_below(&w->plan.rng, 4);
    c.append_log_capacity = 0;
    c.on_error = commute_on_error;
    c.error_ctx = &cs;
    w->cfg = c;
    if (!work_create(w))
        return;
    mkrt_op_desc d = {.fn = op_umin, .user = &cs, .name = "umin", .idempotent = true, .commutes = true};
    mkrt_error err;
    if (mkrt_op_register(w->rt, OP_UMIN, &d, &err) != MKRT_OK) {
        soak_error("commute: mkrt_op_register: %s", err.message);
        work_destroy(w);
        return;
    }
    for (unsigned s = 0; s <= MAX_PRODUCERS; s++) { /* MIN and UMIN cells start at the top */
        uint32_t base = s == 0 ? 0 : CM_OWN(s - 1);
        mkrt_cell_write(w->rt, base + 0, UINT64_MAX);
        mkrt_cell_write(w->rt, base + 3, UINT64_MAX);
    }
    if (work_run(w)) {
        mkrt_stats st;
        soak_check_accounting(w->rt, "commute", work_published(w), atomic_load(&w->callbacks), &st);
        if (st.device_failures == 0 && atomic_load(&w->callbacks) == 0)
            commute_check(w);
        work_destroy(w);
    }
    atomic_fetch_add(&g_callbacks, atomic_load(&w->callbacks));
    if (opt.verbose)
        printf("round %u commute %s%s: published %llu callbacks %llu\n", index, backend_name(w->plan.backend),
               w->plan.race ? " race" : "", (unsigned long long)work_published(w),
               (unsigned long long)atomic_load(&w->callbacks));
}
