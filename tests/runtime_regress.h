/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/runtime_regress.h - what the runtime's regression tests share
 * (tests/test_runtime_regress*.c): their ops, the runtime they start, and
 * the checks every group ends with. One copy per test program. */
#ifndef MKRT_TESTS_RUNTIME_REGRESS_H
#define MKRT_TESTS_RUNTIME_REGRESS_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>

#include "../src/runtime/test_hooks.h"
#include "base/thread.h"
#include "count_alloc.h"
#include "mkrt/runtime.h"
#include "tap.h"

#define SEC 5000000000ull
#define CELLS 256
#define OP_ACC 20   /* out += param (not idempotent) */
#define OP_MAX 21   /* out = max(out, param) (idempotent) */
#define OP_TOUCH 22 /* counts calls; writes nothing */
#define OP_BLOCK 23 /* waits for the test's go-ahead */

typedef struct failures {
    _Atomic uint64_t n;
    _Atomic uint64_t by_status[16]; /* index -status */
} failures;

static inline void on_error(void *ctx, const mkrt_item *item, mkrt_status why, const char *message)
{
    (void)item;
    (void)message;
    failures *f = ctx;
    atomic_fetch_add(&f->n, 1);
    if (why < 0 && why > -16)
        atomic_fetch_add(&f->by_status[-why], 1);
}

static uint64_t failed_with(failures *f, mkrt_status why)
{
    return atomic_load(&f->by_status[-why]);
}

static _Atomic uint64_t touch_calls;
static _Atomic int block_started, block_go;

static inline mkrt_status op_acc(const mkrt_item *it, const mkrt_op_ctx *c)
{
    c->cells[it->out] += it->param;
    return MKRT_OK;
}

static inline mkrt_status op_max(const mkrt_item *it, const mkrt_op_ctx *c)
{
    if (c->cells[it->out] < it->param)
        c->cells[it->out] = it->param;
    return MKRT_OK;
}

static inline mkrt_status op_touch(const mkrt_item *it, const mkrt_op_ctx *c)
{
    (void)c->cells[it->in]; /* the promise: cells[in] and cells[out] are valid */
    (void)c->cells[it->out];
    atomic_fetch_add(&touch_calls, 1);
    return MKRT_OK;
}

static inline mkrt_status op_block(const mkrt_item *it, const mkrt_op_ctx *c)
{
    (void)it;
    (void)c;
    atomic_store(&block_started, 1);
    while (!atomic_load(&block_go))
        sched_yield();
    return MKRT_OK;
}

static inline mkrt_config config(mkrt_backend_kind kind, failures *f)
{
    mkrt_config c = mkrt_config_default();
    c.backend = kind;
    c.cells = CELLS;
    c.workers = 2;
    c.on_error = f ? on_error : NULL;
    c.error_ctx = f;
    return c;
}

static inline mkrt_runtime *start(const mkrt_config *c)
{
    mkrt_runtime *rt;
    mkrt_error err;
    if (mkrt_create(c, &rt, &err) != MKRT_OK)
        bail_out("mkrt_create: %s", err.message);
    mkrt_op_desc acc = {.fn = op_acc, .name = "acc"};
    mkrt_op_desc max = {.fn = op_max, .name = "max", .idempotent = true};
    mkrt_op_desc touch = {.fn = op_touch, .name = "touch"};
    mkrt_op_desc block = {.fn = op_block, .name = "block"};
    if (mkrt_op_register(rt, OP_ACC, &acc, &err) || mkrt_op_register(rt, OP_MAX, &max, &err) ||
        mkrt_op_register(rt, OP_TOUCH, &touch, &err) || mkrt_op_register(rt, OP_BLOCK, &block, &err))
        bail_out("mkrt_op_register: %s", err.message);
    return rt;
}

static inline void stop(mkrt_runtime *rt)
{
    mkrt_error err;
    if (mkrt_destroy(rt, SEC, &err) != MKRT_OK)
        bail_out("mkrt_destroy: %s", err.message);
}

/* Publishes items as one batch (the dispatcher is held meanwhile) and
 * waits for them. */
static inline void run_batch(mkrt_runtime *rt, mkrt_producer *p, const mkrt_item *items, size_t n)
{
    mkrt__runtime_hold(rt, true);
    if (mkrt_publish(p, items, n, SEC, NULL) != MKRT_OK)
        bail_out("publish failed");
    mkrt__runtime_hold(rt, false);
    uint64_t t;
    mkrt_fence(p, &t);
    if (mkrt_wait(p, t, SEC) != MKRT_OK)
        bail_out("wait failed");
}

static uint64_t cell(mkrt_runtime *rt, uint32_t h)
{
    uint64_t v = 0;
    mkrt_cell_read(rt, h, &v);
    return v;
}

static inline void accounting_ok(mkrt_runtime *rt, const char *what)
{
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    is(s.published, s.executed + s.pruned + s.failed, "%s: published = executed + pruned + failed", what);
}

/* Defect 1: every config field has a bound; sizes are checked. */

#endif
