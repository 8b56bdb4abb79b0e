/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/graph_runtime.h - what the streaming graph tests (test_graph.c,
 * test_graph_traverse.c) share: a runtime on the CPU pool or the simulated
 * device, cell and stats reads, publishing, the user op numbers, the
 * commuting MIN user op and op registration. Static inline: each test
 * program uses some of them. */
#ifndef MKRT_TESTS_GRAPH_RUNTIME_H
#define MKRT_TESTS_GRAPH_RUNTIME_H

#include "../src/runtime/test_hooks.h"
#include "mkrt/mkrt.h"
#include "tap.h"

#define SEC 10000000000ull
#define CELLS 4096

static const mkrt_backend_kind kinds[] = {MKRT_BACKEND_CPU, MKRT_BACKEND_SIM};
static const char *kind_name(mkrt_backend_kind k)
{
    return k == MKRT_BACKEND_SIM ? "sim" : "cpu";
}

static inline mkrt_runtime *start_with(mkrt_backend_kind kind, size_t emit_capacity)
{
    mkrt_config c = mkrt_config_default();
    c.backend = kind;
    c.workers = 2;
    c.cells = CELLS;
    c.emit_capacity = emit_capacity;
    c.append_log_capacity = 16;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK)
        bail_out("mkrt_create: %s", err.message);
    return rt;
}

static inline uint64_t cell(mkrt_runtime *rt, uint32_t h)
{
    uint64_t v = 0;
    mkrt_cell_read(rt, h, &v);
    return v;
}

static inline mkrt_stats stats(mkrt_runtime *rt)
{
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    return s;
}

static inline void publish(mkrt_producer *p, const mkrt_item *items, size_t n)
{
    if (mkrt_publish(p, items, n, MKRT_TIMEOUT_INFINITE, NULL) != MKRT_OK)
        bail_out("publish failed");
}

/* Publishes items as one batch (the dispatcher parked meanwhile). */
static inline void publish_one_batch(mkrt_runtime *rt, mkrt_producer *p, const mkrt_item *items, size_t n)
{
    mkrt__runtime_hold(rt, true);
    publish(p, items, n);
    mkrt__runtime_hold(rt, false);
}

static inline bool accounted(mkrt_runtime *rt)
{
    mkrt_stats s = stats(rt);
    return s.published + s.emitted == s.executed + s.pruned + s.failed;
}

enum { OP_EMIT_ADD = 16, OP_EMIT_TWICE, OP_EMIT_N, OP_CHAIN, OP_CMIN, OP_PMIN, OP_BAD_EMIT, OP_EDGES };

/* cells[out] = min(cells[out], param), atomically (a commuting user op). */
static inline mkrt_status cmin(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    (void)mkrt_op_cell_min(ctx, it->out, it->param);
    return MKRT_OK;
}

static inline void reg(mkrt_runtime *rt, uint32_t op, mkrt_op_fn fn, bool idempotent, bool commutes, bool expands)
{
    mkrt_op_desc d = {.fn = fn, .name = "test", .idempotent = idempotent, .commutes = commutes,
                      .expands = expands};
    mkrt_error err;
    if (mkrt_op_register(rt, op, &d, &err) != MKRT_OK)
        bail_out("mkrt_op_register: %s", err.message);
}

#endif
