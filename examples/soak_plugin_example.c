/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/soak_plugin_example.c - a plugin for mkrt-soak: your own ops
 * soaked with every fault mode (include/mkrt_soak/soak_plugin.h).
 *
 *   make build/examples/soak_plugin_example.so build/bin/mkrt-soak
 *   build/bin/mkrt-soak --plugin build/examples/soak_plugin_example.so --seconds 60
 *
 * (Outside the tree: cc -shared -fPIC -I$PREFIX/include -o ex.so
 * soak_plugin_example.c, no -lmkrt: mkrt-soak provides the library.)
 *
 * Three ops, each stream owning 64 cells, and 4 cells shared by all:
 *   STEP   cells[out] += 1, then, while param is not 1, emits the next
 *          Collatz step STEP(out, param even ? param / 2 : 3 param + 1).
 *          An item with param p is worth steps(p) + 1 on its cell; when an
 *          emit fails (MKRT_EOVERFLOW) the op returns it and the rest of
 *          the chain is lost: the error path reports it.
 *   LOW    cells[out] = min(cells[out], param) on a shared cell, from any
 *          stream: registered with commutes (atomic: mkrt_op_cell_min).
 *   PICKY  cells[out] += param, but refuses params divisible by 7 with
 *          MKRT_EINVAL: those must come back through the error path.
 * The shadow model: per cell, what was published is worth, less what
 * failed; per shared cell, the smallest LOW param. verify() compares the
 * cells with it. SOAK_EXAMPLE_BREAK=1 in the environment makes verify()
 * expect one more on cell 0, to see the soak report a wrong result. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mkrt_soak/soak_plugin.h"

enum { OP_STEP = MKRT_OP_USER_FIRST, OP_LOW, OP_PICKY };
#define STREAMS_MAX 16
#define PER_STREAM 64
#define SHARED 4
#define SHARED_BASE (STREAMS_MAX * PER_STREAM)
#define CELLS (SHARED_BASE + SHARED)

typedef struct example {
    unsigned streams;
    uint64_t rng[STREAMS_MAX];
    uint64_t worth[CELLS];               /* published, by the owning stream */
    uint64_t low[STREAMS_MAX][SHARED];   /* smallest LOW param per stream */
    _Atomic uint64_t lost[CELLS];        /* what failed items were worth */
} example;

static uint64_t next_rand(uint64_t *s) /* xorshift64 */
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static uint64_t collatz_steps(uint64_t n)
{
    uint64_t k = 0;
    for (; n > 1; k++)
        n = n % 2 ? 3 * n + 1 : n / 2;
    return k;
}

static uint64_t worth(const mkrt_item *it)
{
    if (it->op == OP_STEP)
        return collatz_steps(it->param) + 1;
    if (it->op == OP_PICKY)
        return it->param % 7 == 0 ? 0 : it->param;
    return 0;
}

static mkrt_status op_step(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    if (it->param > 1) {
        uint32_t n = it->param % 2 ? 3 * it->param + 1 : it->param / 2;
        mkrt_item next = {OP_STEP, it->out, it->out, n};
        mkrt_status st = mkrt_op_emit(ctx, &next, 1);
        if (st != MKRT_OK)
            return st; /* the chain ends here; the error path tells the soak */
    }
    ctx->cells[it->out] += 1;
    return MKRT_OK;
}

static mkrt_status op_low(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    mkrt_op_cell_min(ctx, it->out, it->param);
    return MKRT_OK;
}

static mkrt_status op_picky(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    if (it->param % 7 == 0)
        return MKRT_EINVAL;
    ctx->cells[it->out] += it->param;
    return MKRT_OK;
}

static void *round_begin(uint64_t seed, unsigned streams, char *msg, size_t len)
{
    if (streams > STREAMS_MAX) {
        snprintf(msg, len, "at most %d streams, asked for %u", STREAMS_MAX, streams);
        return NULL;
    }
    example *e = calloc(1, sizeof *e);
    if (e == NULL) {
        snprintf(msg, len, "out of memory");
        return NULL;
    }
    e->streams = streams;
    for (unsigned s = 0; s < STREAMS_MAX; s++) {
        e->rng[s] = seed * 2654435761u + s * 0x9E3779B97F4A7C15ull + 1;
        for (unsigned k = 0; k < SHARED; k++)
            e->low[s][k] = UINT64_MAX;
    }
    return e;
}

static size_t ops(void *state, mkrt_soak_plugin_op *out, size_t max)
{
    if (max < 3)
        return 0;
    out[0] = (mkrt_soak_plugin_op){OP_STEP, {.fn = op_step, .user = state, .name = "collatz-step"}};
    out[1] = (mkrt_soak_plugin_op){OP_LOW, {.fn = op_low, .user = state, .name = "low",
                                             .idempotent = true, .commutes = true}};
    out[2] = (mkrt_soak_plugin_op){OP_PICKY, {.fn = op_picky, .user = state, .name = "picky"}};
    return 3;
}

static void init_cells(void *state, uint64_t *cells, uint32_t count)
{
    (void)state;
    for (uint32_t k = 0; k < SHARED && SHARED_BASE + k < count; k++)
        cells[SHARED_BASE + k] = UINT64_MAX;
}

static size_t generate(void *state, unsigned s, mkrt_item *items, size_t max)
{
    example *e = state;
    size_t n = 1 + next_rand(&e->rng[s]) % (max < 32 ? max : 32);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next_rand(&e->rng[s]);
        uint32_t own = s * PER_STREAM + (uint32_t)(r % PER_STREAM);
        switch ((r >> 8) % 3) {
        case 0:
            items[i] = (mkrt_item){OP_STEP, own, own, 1 + (uint32_t)((r >> 16) % 3000)};
            break;
        case 1: {
            uint32_t c = SHARED_BASE + (uint32_t)((r >> 16) % SHARED);
            items[i] = (mkrt_item){OP_LOW, c, c, (uint32_t)(r >> 24)};
            break;
        }
        default:
            items[i] = (mkrt_item){OP_PICKY, own, own, 1 + (uint32_t)((r >> 16) % 1000)};
            break;
        }
    }
    return n;
}

static void published(void *state, unsigned s, const mkrt_item *items, size_t n)
{
    example *e = state;
    for (size_t i = 0; i < n; i++) {
        const mkrt_item *it = &items[i];
        if (it->op == OP_LOW) {
            uint64_t *m = &e->low[s][it->out - SHARED_BASE];
            if (it->param < *m)
                *m = it->param;
        } else {
            e->worth[it->out] += worth(it);
        }
    }
}

static int failed(void *state, const mkrt_item *it, mkrt_status why)
{
    example *e = state;
    if (it->out < CELLS)
        atomic_fetch_add(&e->lost[it->out], worth(it));
    if (it->op == OP_STEP)
        return why == MKRT_EOVERFLOW ? 0 : 1;
    if (it->op == OP_PICKY)
        return it->param % 7 == 0 && why == MKRT_EINVAL ? 0 : 1;
    return 1; /* LOW never fails */
}

static int verify(void *state, const uint64_t *cells, uint32_t count, char *msg, size_t len)
{
    example *e = state;
    const char *brk = getenv("SOAK_EXAMPLE_BREAK");
    uint64_t extra = brk != NULL && strcmp(brk, "1") == 0;
    for (uint32_t h = 0; h < e->streams * PER_STREAM && h < count; h++) {
        uint64_t want = e->worth[h] - atomic_load(&e->lost[h]) + (h == 0 ? extra : 0);
        if (cells[h] != want) {
            snprintf(msg, len, "cell %u = %llu, want %llu (published worth %llu, failed %llu)", h,
                     (unsigned long long)cells[h], (unsigned long long)want,
                     (unsigned long long)e->worth[h], (unsigned long long)atomic_load(&e->lost[h]));
            return 1;
        }
    }
    for (uint32_t k = 0; k < SHARED; k++) {
        uint64_t want = UINT64_MAX;
        for (unsigned s = 0; s < e->streams; s++)
            want = e->low[s][k] < want ? e->low[s][k] : want;
        if (cells[SHARED_BASE + k] != want) {
            snprintf(msg, len, "shared LOW cell %u = %llu, want %llu", SHARED_BASE + k,
                     (unsigned long long)cells[SHARED_BASE + k], (unsigned long long)want);
            return 1;
        }
    }
    return 0;
}

static void round_end(void *state)
{
    free(state);
}

/* The one symbol mkrt-soak looks up. */
const mkrt_soak_plugin mkrt_soak_plugin_v1 = {
    .version = MKRT_SOAK_PLUGIN_VERSION,
    .size = sizeof(mkrt_soak_plugin),
    .name = "collatz-example",
    .cells = CELLS,
    .streams = 0, /* mkrt-soak's --producers */
    .round_begin = round_begin,
    .ops = ops,
    .init_cells = init_cells,
    .generate = generate,
    .published = published,
    .failed = failed,
    .verify = verify,
    .round_end = round_end,
};
