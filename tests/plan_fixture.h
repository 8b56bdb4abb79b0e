/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/plan_fixture.h - what the plan's decision tests share
 * (test_plan_decide.c, test_plan_arms.c): measured costs for the pure
 * rules, runtimes with the stamp and who ops, publishing, the newest
 * EXPLAIN record and the counters. */
#ifndef MKRT_TESTS_PLAN_FIXTURE_H
#define MKRT_TESTS_PLAN_FIXTURE_H

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/thread.h"
#include "graph_fixture.h"
#include "mkrt/mkrt.h"
#include "plan/decide.h"
#include "runtime/test_hooks.h"
#include "tap.h"

#define SEC 10000000000ull
#define OP_STAMP 16
#define OP_WHO 17
#define OP_VISIT 18
#define SEED UINT32_MAX
#define UNREACHED UINT64_MAX


static inline mkrt__plan_costs costs(double ns_item, double handoff, double trip)
{
    mkrt__plan_costs c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < 8; i++) {
        if (ns_item > 0)
            mkrt__ema_add(&c.cpu_ns_item, ns_item);
        if (handoff > 0)
            mkrt__ema_add(&c.handoff_ns, handoff);
        if (trip > 0)
            mkrt__ema_add(&c.dev_trip_ns, trip);
    }
    return c;
}


/* ---- runtimes ----------------------------------------------------------- */

static _Atomic uint64_t stamp_seq;
static _Atomic uint32_t next_tid = 1;
static _Thread_local uint32_t my_tid;

/* op OP_STAMP: cells[out] = the order it ran in. */
static inline mkrt_status stamp(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    ctx->cells[it->out] = atomic_fetch_add(&stamp_seq, 1) + 1;
    return MKRT_OK;
}

/* op OP_WHO: cells[out] = the running thread's id. */
static inline mkrt_status who(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    if (my_tid == 0)
        my_tid = atomic_fetch_add(&next_tid, 1);
    ctx->cells[it->out] = my_tid;
    return MKRT_OK;
}

/* op OP_VISIT: a BFS step (the Graph500 engine's visit). */
static inline mkrt_status visit(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    if (it->param == SEED)
        return mkrt_op_emit_edges(ctx, it->out);
    uint64_t from = mkrt_op_cell_load(ctx, it->in);
    if (from == UNREACHED)
        return MKRT_OK;
    if (mkrt_op_cell_min(ctx, it->out, ((from >> 32) + 1) << 32 | it->in))
        return mkrt_op_emit_edges(ctx, it->out);
    return MKRT_OK;
}

static inline mkrt_runtime *start(mkrt_config c)
{
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK)
        bail_out("mkrt_create: %s", err.message);
    mkrt_op_desc s = {.fn = stamp, .name = "stamp"};
    mkrt_op_desc w = {.fn = who, .name = "who"};
    mkrt_op_register(rt, OP_STAMP, &s, NULL);
    mkrt_op_register(rt, OP_WHO, &w, NULL);
    return rt;
}

static inline mkrt_config conf(mkrt_backend_kind kind, uint32_t workers, uint32_t off)
{
    mkrt_config c = mkrt_config_default();
    c.backend = kind;
    c.workers = workers;
    c.cells = 16384;
    c.plan_off = off;
    return c;
}

static inline void publish_all(mkrt_producer *p, const mkrt_item *items, size_t n)
{
    for (size_t done = 0; done < n;) {
        size_t k = n - done < 256 ? n - done : 256;
        if (mkrt_publish(p, items + done, k, SEC, NULL) != MKRT_OK)
            bail_out("publish failed");
        done += k;
    }
}

/* Publishes n items, held until all are in (one batch when n fits), and
 * drains. */
static inline void one_go(mkrt_runtime *rt, mkrt_producer *p, const mkrt_item *items, size_t n)
{
    mkrt__runtime_hold(rt, true);
    publish_all(p, items, n);
    mkrt__runtime_hold(rt, false);
    if (mkrt_drain(rt, SEC) != MKRT_OK)
        bail_out("drain");
}

/* The newest EXPLAIN record. */
static inline mkrt_plan_record last_record(mkrt_runtime *rt)
{
    mkrt_plan_record r[64];
    size_t n = mkrt_plan_explain(rt, r, 64);
    mkrt_plan_record none;
    memset(&none, 0, sizeof none);
    return n ? r[n - 1] : none;
}

static inline uint64_t count(mkrt_runtime *rt, mkrt_plan_counter c)
{
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    return s.plan_counts[c];
}

static inline mkrt_item item(uint32_t op, uint32_t in, uint32_t out, uint32_t param)
{
    return (mkrt_item){op, in, out, param};
}

#endif
