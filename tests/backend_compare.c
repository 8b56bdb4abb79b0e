/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/backend_compare.c - see backend_compare.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/runtime/test_hooks.h"
#include "backend_compare.h"
#include "tap.h"

void bc_on_error(void *ctx, const mkrt_item *item, mkrt_status why, const char *message)
{
    (void)item;
    (void)message;
    bc_failures *f = ctx;
    f->last = why;
    atomic_fetch_add(&f->n, 1);
    atomic_fetch_add(&f->by_status[(unsigned)-why & 15], 1);
}

/* The CPU twins of the device user ops (tests/cuda/user_ops.cu). */
static mkrt_status op_mul3(const mkrt_item *it, const mkrt_op_ctx *c)
{
    if (it->in >= c->cell_count || it->out >= c->cell_count)
        return MKRT_EINVAL;
    c->cells[it->out] = c->cells[it->in] * 3 + it->param;
    return MKRT_OK;
}

static mkrt_status op_xor(const mkrt_item *it, const mkrt_op_ctx *c)
{
    if (it->in >= c->cell_count || it->out >= c->cell_count || it->param == 0)
        return MKRT_EINVAL;
    c->cells[it->out] ^= it->param;
    return MKRT_OK;
}

static mkrt_status op_hang(const mkrt_item *it, const mkrt_op_ctx *c)
{
    (void)it;
    (void)c;
    return MKRT_OK;
}

static mkrt_status op_slow(const mkrt_item *it, const mkrt_op_ctx *c)
{
    if (it->in >= c->cell_count || it->out >= c->cell_count)
        return MKRT_EINVAL;
    c->cells[it->out] = c->cells[it->in] + 1;
    return MKRT_OK;
}

uint32_t bc_device_state;

mkrt_runtime *bc_start(mkrt_backend_kind kind, bc_failures *f, uint32_t watchdog_ms, const char *ptx,
                           mkrt_error *err)
{
    mkrt_config c = mkrt_config_default();
    c.backend = kind;
    c.cells = BC_CELLS;
    c.append_log_capacity = BC_LOG_CAP;
    c.ring_capacity = 8192; /* a 5000-item batch is published while the dispatcher is held */
    c.on_error = bc_on_error;
    c.error_ctx = f;
    c.watchdog_ms = watchdog_ms;
    c.cuda_user_ptx = ptx;
    c.cuda_device_state = bc_device_state;
    c.plan_off = MKRT_PLAN_ROUTE; /* the device runs every batch it accepts: what is compared */
    mkrt_runtime *rt = NULL;
    if (mkrt_create(&c, &rt, err) != MKRT_OK)
        return NULL;
    mkrt_op_desc d16 = {.fn = op_mul3, .name = "mul3", .device = true};
    mkrt_op_desc d17 = {.fn = op_xor, .name = "xor", .device = true};
    mkrt_op_desc d18 = {.fn = op_hang, .name = "hang", .device = true};
    mkrt_op_register(rt, 16, &d16, NULL);
    mkrt_op_register(rt, 17, &d17, NULL);
    mkrt_op_desc d19 = {.fn = op_slow, .name = "slow", .device = true};
    mkrt_op_register(rt, 18, &d18, NULL);
    mkrt_op_register(rt, 19, &d19, NULL);
    return rt;
}

void bc_workload(mkrt_runtime *rt, int rounds, unsigned seed, uint64_t *cells_out, uint32_t *log_out,
                 size_t *log_n)
{
    mkrt_producer *a = mkrt_producer_open(rt, NULL), *b = mkrt_producer_open(rt, NULL);
    static mkrt_item buf[6000];
    for (int round = 0; round < rounds; round++) {
        mkrt__runtime_hold(rt, true); /* deterministic batches */
        for (int who = 0; who < 2; who++) {
            /* every 16th round a batch past the zero-copy size (HtoD copy) */
            size_t n = round % 16 == 5 ? 5000 : 1 + (size_t)(rand_r(&seed) % 300);
            for (size_t i = 0; i < n; i++) {
                uint32_t pick = (uint32_t)rand_r(&seed) % 6;
                uint32_t op = pick < 4 ? pick : 16 + (pick - 4); /* NOP STORE ADD APPEND 16 17 */
                uint32_t param = (uint32_t)rand_r(&seed) % 1000;
                uint32_t out = (uint32_t)rand_r(&seed) % BC_CELLS;
                if (rand_r(&seed) % 97 == 0)
                    out = BC_CELLS + 3; /* a bad handle now and then */
                if (rand_r(&seed) % 211 == 0)
                    op = 9; /* and an op nobody defined (MKRT_ENOTSUP) */
                buf[i] = (mkrt_item){op, (uint32_t)rand_r(&seed) % BC_CELLS, out, param};
            }
            mkrt_publish(who ? b : a, buf, n, BC_SEC, NULL);
        }
        mkrt__runtime_hold(rt, false);
        mkrt_drain(rt, BC_SEC);
    }
    for (uint32_t h = 0; h < BC_CELLS; h++)
        mkrt_cell_read(rt, h, &cells_out[h]);
    *log_n = 0;
    for (uint32_t h = 0; h < 16; h++) {
        size_t n = mkrt_append_log_read(rt, h, log_out + *log_n, BC_LOG_CAP);
        *log_n += n < BC_LOG_CAP ? n : BC_LOG_CAP;
    }
    mkrt_producer_close(a);
    mkrt_producer_close(b);
}

bool bc_run_workload(mkrt_backend_kind kind, const char *ptx, int rounds, unsigned seed, bc_run *r,
                     mkrt_error *err)
{
    memset(r, 0, sizeof *r);
    mkrt_runtime *rt = bc_start(kind, &r->f, kind == MKRT_BACKEND_CPU ? 0 : 5000, ptx, err);
    if (rt == NULL)
        return false;
    bc_workload(rt, rounds, seed, r->cells, r->log, &r->log_n);
    mkrt_stats_read(rt, &r->stats);
    snprintf(r->describe, sizeof r->describe, "%s", mkrt_backend_describe(rt));
    r->stats.backend_detail = NULL;
    r->destroyed = mkrt_destroy(rt, BC_SEC, NULL);
    return true;
}

void bc_check_same(const bc_run *cpu, const bc_run *dev, const char *what)
{
    ok(memcmp(cpu->cells, dev->cells, sizeof cpu->cells) == 0, "%s: the same cells as the CPU backend", what);
    ok(cpu->log_n == dev->log_n && memcmp(cpu->log, dev->log, cpu->log_n * sizeof *cpu->log) == 0,
       "... the same APPEND logs in the same order (%zu entries)", dev->log_n);
    ok(atomic_load(&cpu->f.n) == atomic_load(&dev->f.n) &&
           memcmp(cpu->f.by_status, dev->f.by_status, sizeof cpu->f.by_status) == 0,
       "... the same failures by status (%llu EINVAL incl. user ops, %llu EOVERFLOW of the log)",
       (unsigned long long)atomic_load(&dev->f.by_status[2]),
       (unsigned long long)atomic_load(&dev->f.by_status[4]));
    const mkrt_stats *sc = &cpu->stats, *sd = &dev->stats;
    ok(sc->executed == sd->executed && sd->published == sd->executed + sd->pruned + sd->failed,
       "... the same executed count (%llu); published = executed + pruned + failed",
       (unsigned long long)sd->executed);
}

char *bc_read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (buf != NULL && fread(buf, 1, (size_t)len, f) == (size_t)len) {
        buf[len] = '\0';
        *n = (size_t)len;
    } else {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

mkrt_status bc_one_batch(mkrt_runtime *rt, mkrt_producer *p, const mkrt_item *items, size_t n)
{
    mkrt__runtime_hold(rt, true);
    mkrt_publish(p, items, n, BC_SEC, NULL);
    mkrt__runtime_hold(rt, false);
    return mkrt_drain(rt, BC_SEC);
}

void bc_check_slow_op(mkrt_backend_kind kind, const char *ptx, uint32_t watchdog_ms, uint32_t op_ms,
                      const char *what)
{
    bc_failures f;
    memset(&f, 0, sizeof f);
    static mkrt_error err;
    mkrt_runtime *rt = bc_start(kind, &f, watchdog_ms, ptx, &err);
    if (rt == NULL)
        bail_out("%s: %s", what, err.message);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    /* The ADD into 3 is the batch's last layer, after the slow op. */
    const mkrt_item it[] = {{MKRT_OP_STORE, 0, 1, 5}, {19, 1, 2, op_ms}, {MKRT_OP_ADD, 2, 3, 1}};
    is(bc_one_batch(rt, p, it, 3), MKRT_OK, "%s: a slow device op (%u ms, watchdog %u ms) drains", what, op_ms,
       watchdog_ms);
    ok(atomic_load(&f.n) == 3 && f.last == MKRT_ETIMEDOUT, "... its batch failed (3 items, MKRT_ETIMEDOUT)");
    like(mkrt_backend_describe(rt), "the device stopped", "... after the kernel left: %.200s",
         mkrt_backend_describe(rt));
    const mkrt_item after = {MKRT_OP_STORE, 0, 3, 77};
    mkrt_publish(p, &after, 1, BC_SEC, NULL);
    mkrt_drain(rt, BC_SEC);
    struct timespec nap = {(time_t)(op_ms / 1000), (long)(op_ms % 1000) * 1000000L}; /* past the op's end */
    nanosleep(&nap, NULL);
    uint64_t v3 = 0;
    mkrt_cell_read(rt, 3, &v3);
    is((long long)v3, 77, "... and the CPU's later STORE stays (77)");
    mkrt_producer_close(p);
    is(mkrt_destroy(rt, BC_SEC, NULL), MKRT_OK, "... destroy succeeds");
}
