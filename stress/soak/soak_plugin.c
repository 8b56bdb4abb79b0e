/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/soak/soak_plugin.c - the plugin workload of mkrt-soak: the
 * user's own ops from --plugin FILE.so (include/mkrt_soak/soak_plugin.h), on
 * the harness of soak_work.c, so with every fault mode and backend the
 * other workloads get. Checked: the exactly-once accounting after
 * quiescence, the plugin's judgement of every failure, and its verify()
 * of the cells (skipped after a race, or when the device failed). */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "mkrt_soak/soak_plugin.h"
#include "soak_work.h"

static void *handle;
static const mkrt_soak_plugin *pl;

typedef struct plugin_state {
    work w;
    void *st;
    _Atomic uint64_t unexpected;
} plugin_state;

static plugin_state ps;

bool plugin_load(const char *path)
{
    handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        fprintf(stderr, "mkrt-soak: --plugin %s: cannot load it: %s. Fix: give the path of a shared "
                        "object built with cc -shared -fPIC%s\n",
                path, dlerror(),
                strchr(path, '/') ? "" : " (a name without a slash is looked up in the library path: "
                                         "write ./NAME for one in this directory)");
        return false;
    }
    pl = dlsym(handle, MKRT_SOAK_PLUGIN_SYMBOL);
    const char *why = NULL;
    if (pl == NULL)
        why = "it does not export " MKRT_SOAK_PLUGIN_SYMBOL;
    else if (pl->version != MKRT_SOAK_PLUGIN_VERSION)
        why = "its version is not the one this mkrt-soak knows";
    else if (pl->size < sizeof(mkrt_soak_plugin))
        why = "its size is smaller than sizeof(mkrt_soak_plugin)";
    else if (!pl->round_begin || !pl->ops || !pl->generate || !pl->published || !pl->failed || !pl->verify ||
             !pl->round_end)
        why = "a function pointer other than init_cells is NULL";
    else if (pl->cells == 0 || pl->cells > MKRT_CONFIG_CELLS_MAX || pl->streams > MAX_PRODUCERS)
        why = "cells is 0 or too large, or streams is above 16";
    if (why != NULL) {
        fprintf(stderr, "mkrt-soak: --plugin %s: %s (version %u, size %u; this mkrt-soak knows version "
                        "%d, size %zu). Fix: build it against this mkrt's include/mkrt_soak/soak_plugin.h "
                        "and export `const mkrt_soak_plugin " MKRT_SOAK_PLUGIN_SYMBOL "`\n",
                path, why, pl ? pl->version : 0, pl ? pl->size : 0, MKRT_SOAK_PLUGIN_VERSION,
                sizeof(mkrt_soak_plugin));
        dlclose(handle);
        handle = NULL;
        pl = NULL;
        return false;
    }
    printf("soak: plugin %s (%s): %u cells, %u streams\n", pl->name ? pl->name : "?", path, pl->cells,
           pl->streams ? pl->streams : opt.producers);
    return true;
}

void plugin_unload(void)
{
    /* Not dlclosed: its code may be named in the summary's late output
     * and the thread-local state of the loader is kept simple. */
    pl = NULL;
}

static void plugin_on_error(void *ctx, const mkrt_item *it, mkrt_status why, const char *msg)
{
    plugin_state *s = ctx;
    atomic_fetch_add(&s->w.callbacks, 1);
    bool infra = work_infra(&s->w, why);
    if (infra)
        atomic_fetch_add(&s->w.infra_failures, 1);
    if (pl->failed(s->st, it, why) != 0 && !infra) {
        atomic_fetch_add(&s->unexpected, 1);
        soak_error("plugin %s: unexpected failure %s of op %u in %u out %u param %u: %s", pl->name,
                   mkrt_status_name(why), it->op, it->in, it->out, it->param, msg ? msg : "");
    }
}

static size_t plugin_gen(work *w, unsigned slot, uint64_t *rng, mkrt_item *buf)
{
    (void)w;
    (void)rng;
    size_t n = pl->generate(ps.st, slot, buf, WORK_BATCH);
    if (n == 0 || n > WORK_BATCH) {
        soak_error("plugin %s: generate returned %zu items (1..%d)", pl->name, n, WORK_BATCH);
        n = 1;
        buf[0] = (mkrt_item){MKRT_OP_NOP, 0, 0, 0};
    }
    return n;
}

static void plugin_book(work *w, unsigned slot, const mkrt_item *items, size_t n)
{
    (void)w;
    pl->published(ps.st, slot, items, n);
}

static const work_ops plugin_ops = {plugin_gen, plugin_book, NULL};

void plugin_round(unsigned index, uint64_t now, uint64_t t_stop)
{
    memset(&ps, 0, sizeof ps);
    work *w = &ps.w;
    soak_plan_round(&w->plan, index, now, t_stop);
    w->ops = &plugin_ops;
    w->producers = pl->streams ? pl->streams : opt.producers;
    char msg[256] = "";
    ps.st = pl->round_begin(rnd_seed(opt.seed, index, 0x9106), w->producers, msg, sizeof msg);
    if (ps.st == NULL) {
        soak_error("plugin %s: round_begin failed: %s", pl->name, msg);
        return;
    }
    mkrt_config c = mkrt_config_default();
    c.backend = w->plan.backend;
    c.workers = 1 + rnd_below(&w->plan.rng, 3);
    c.cells = pl->cells;
    c.watchdog_ms = 200;
    c.ring_capacity = (size_t)32 << rnd_below(&w->plan.rng, 4);
    c.on_error = plugin_on_error;
    c.error_ctx = &ps;
    w->cfg = c;
    if (!work_create(w)) {
        pl->round_end(ps.st);
        return;
    }
    mkrt_soak_plugin_op ops[MKRT_SOAK_PLUGIN_OPS_MAX];
    size_t nops = pl->ops(ps.st, ops, MKRT_SOAK_PLUGIN_OPS_MAX);
    for (size_t i = 0; i < nops && i < MKRT_SOAK_PLUGIN_OPS_MAX; i++) {
        mkrt_error err;
        mkrt_status st;
        while ((st = mkrt_op_register(w->rt, ops[i].op, &ops[i].desc, &err)) == MKRT_ENOMEM)
            atomic_fetch_add(&g_enomem_retries, 1);
        if (st != MKRT_OK) {
            soak_error("plugin %s: mkrt_op_register(%u): %s", pl->name, ops[i].op, err.message);
            work_destroy(w);
            pl->round_end(ps.st);
            return;
        }
    }
    uint64_t *cells = calloc(pl->cells, sizeof *cells);
    if (cells == NULL) {
        soak_error("plugin %s: no memory for %u cells", pl->name, pl->cells);
        work_destroy(w);
        pl->round_end(ps.st);
        return;
    }
    if (pl->init_cells != NULL) {
        pl->init_cells(ps.st, cells, pl->cells);
        for (uint32_t h = 0; h < pl->cells; h++)
            if (cells[h] != 0)
                mkrt_cell_write(w->rt, h, cells[h]);
    }
    if (work_run(w)) {
        mkrt_stats st;
        soak_check_accounting(w->rt, "plugin", work_published(w), atomic_load(&w->callbacks), &st);
        if (st.device_failures == 0) {
            mkrt_cells_read(w->rt, 0, pl->cells, cells);
            msg[0] = '\0';
            if (pl->verify(ps.st, cells, pl->cells, msg, sizeof msg) != 0)
                soak_error("plugin %s: verify on %s: %s", pl->name, backend_name(w->plan.backend), msg);
        }
        work_destroy(w);
    }
    free(cells);
    atomic_fetch_add(&g_callbacks, atomic_load(&w->callbacks));
    pl->round_end(ps.st);
    if (opt.verbose)
        printf("round %u plugin %s%s: published %llu callbacks %llu\n", index, backend_name(w->plan.backend),
               w->plan.race ? " race" : "", (unsigned long long)work_published(w),
               (unsigned long long)atomic_load(&w->callbacks));
}
