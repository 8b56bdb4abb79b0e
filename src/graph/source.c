/* SPDX-License-Identifier: BSD-2-Clause */
/* src/graph/source.c - the graph engine as a client of the core: its row
 * in the pipeline's table of work sources (plan/source.h) and its
 * expansion in the op table's rows (ops/op_table.h, mkrt__op_entry.mark).
 * The core calls these and knows nothing of frontiers, chunks or lanes. */
#include "graph/graph_internal.h"

static mkrt__taken take(void *ctx, mkrt_item *items, bool batch_running)
{
    /* A round of traversal jobs for the device first (graph/device.c),
     * then the frontier rounds, whose take-up of starts may claim more. */
    size_t jobs = mkrt__graph_device_take(ctx, items, batch_running);
    if (jobs != 0)
        return (mkrt__taken){jobs, 0, false};
    mkrt__round r = mkrt__graph_round_take(ctx, items, batch_running);
    if (r.n == 0 && (jobs = mkrt__graph_device_take(ctx, items, batch_running)) != 0)
        return (mkrt__taken){jobs, 0, false};
    /* A pulled round's edges, and a run of levels', are known once it
     * ran (ran). */
    return (mkrt__taken){r.n, r.edges, r.levels};
}

/* A run of levels (round.c): the CPU pool's workers call these. */
static bool part(void *ctx, const mkrt_item *item, mkrt__fail_list *fails)
{
    return mkrt__graph_level_part(ctx, item, fails);
}

static bool next_level(void *ctx, const mkrt_item *item, bool yield, bool *alone)
{
    return mkrt__graph_next_level(ctx, item, yield, alone);
}

static bool is_levels(const mkrt_item *item)
{
    mkrt__chunk c;
    mkrt__chunk_get(item, &c);
    return c.first == MKRT__CHUNK_LEVELS;
}

static bool pending(void *ctx)
{
    return mkrt__graph_pending(ctx);
}

static bool wants(void *ctx)
{
    return mkrt__graph_wants(ctx);
}

static void run(void *ctx, const mkrt_item *items, size_t from, size_t to, mkrt__fail_list *fails)
{
    mkrt__graph_engine *e = ctx;
    uint64_t changed = 0;
    if (from < to && mkrt__graph_device_job(e, &items[from]) != NULL) {
        mkrt__graph_device_run(e, items, from, to); /* a job round the device did not take */
        return;
    }
    mkrt__graph_apply(e, items, from, to, fails, &changed);
    if (changed != 0)
        /* relaxed: a statistic, read by stats without ordering. */
        atomic_fetch_add_explicit(e->host.changed, changed, memory_order_relaxed);
}

static uint64_t ran(void *ctx)
{
    return mkrt__graph_pulled_take(ctx) + mkrt__graph_device_ran(ctx);
}

static mkrt__device_job *job(void *ctx, const mkrt_item *item)
{
    return mkrt__graph_device_job(ctx, item);
}

/* The failure encodings of mkrt__graph_apply: a pushed chunk's edge j
 * fails as (k | j << 24, status); a pulled chunk's edge as (k, status)
 * and (edge low, edge high). A round holds chunks of one kind. */
static bool failed(void *ctx, const mkrt_item *items, size_t n, const uint32_t *pairs, uint32_t left,
                   uint32_t *used, mkrt_item *item, mkrt_status *why)
{
    const mkrt__graph_engine *e = ctx;
    const uint32_t k = pairs[0] & 0xffffffu;
    *used = 1;
    if (k >= n || is_levels(&items[k])) /* a run's edges never fail one by one */
        return false;
    *why = (mkrt_status)(int32_t)pairs[1];
    if (mkrt__graph_chunk_pulled(&items[k])) {
        *used = 2;
        if (left < 2 || pairs[0] >= n)
            return false;
        *item = mkrt__graph_edge_item(e, &items[k], (uint64_t)pairs[3] << 32 | pairs[2], true);
        return true;
    }
    bool exists;
    const uint64_t edge = mkrt__graph_chunk_edge(e, &items[k], pairs[0] >> 24, &exists);
    if (!exists)
        return false;
    *item = mkrt__graph_edge_item(e, &items[k], edge, false);
    return true;
}

/* A cell lane's chunk fails as its edge items; a public traversal's ends
 * with MKRT_ETIMEDOUT instead (mkrt__graph_chunk_abandon). */
static size_t abandon(void *ctx, const mkrt_item *item, mkrt_item *out, size_t max)
{
    mkrt__graph_engine *e = ctx;
    if (is_levels(item)) {
        /* A run not launched: the lane is the rounds' again (they end it). */
        mkrt__chunk c;
        mkrt__chunk_get(item, &c);
        mkrt__traversal *t = mkrt__lane_at(e, c.lane);
        /* release: as the run's own hand-back (round.c). */
        atomic_store_explicit(&t->in_levels, false, memory_order_release);
    }
    if (mkrt__graph_device_abandon(e, item) || !mkrt__graph_chunk_abandon(e, item))
        return 0;
    size_t k = 0;
    for (uint32_t j = 0; k < max; j++) {
        bool exists;
        const uint64_t edge = mkrt__graph_chunk_edge(e, item, j, &exists);
        if (!exists)
            break;
        out[k++] = mkrt__graph_edge_item(e, item, edge, false);
    }
    return k;
}

/* The registered graph's arrays: offsets, targets and weights (what a
 * device holds of it, mkrt__backend.graph_in). */
static uint64_t resident_bytes(void *ctx)
{
    const mkrt__graph_engine *e = ctx;
    /* acquire: pairs with the release store in mkrt__graph_engine_set. */
    if (!atomic_load_explicit(&e->ready, memory_order_acquire))
        return 0;
    const uint64_t v = e->graph.vertices, m = e->graph.offsets[v];
    return (v + 1) * sizeof(uint64_t) + m * sizeof(uint32_t) * (e->graph.weights != NULL ? 2u : 1u);
}

/* The round's level as the engine decided it (round.c). */
static void note(void *ctx, const mkrt_item *items, size_t n, mkrt_plan_record *r)
{
    mkrt__graph_engine *e = ctx;
    if (n > 0 && mkrt__graph_device_job(e, &items[0]) != NULL) {
        /* A job round: its jobs ran whole on the device (or the host);
         * the traversals that waited for a slot are the plan's pieces. */
        r->split_layers = e->jobs_waiting;
        return;
    }
    r->pulled = n > 0 && mkrt__graph_chunk_pulled(&items[0]);
    r->frontier_bps = e->level_density_bps;
    r->frontier_class = (uint32_t)e->level_class;
    r->frontier_queue = e->level_queue;
}

const mkrt__source *mkrt__graph_source(mkrt__graph_engine *e)
{
    e->source = (mkrt__source){.name = "graph engine", .ctx = e, .made = true, .take = take,
                               .pending = pending, .wants = wants, .run = run, .ran = ran,
                               .failed = failed, .abandon = abandon,
                               .resident_bytes = resident_bytes, .note = note, .job = job,
                               .part = part, .next_level = next_level};
    return &e->source;
}

static bool row_mark(void *engine, uint32_t slot, uint32_t v)
{
    return mkrt__graph_mark(engine, slot, v);
}

void mkrt__graph_row_claim(mkrt__graph_engine *e, mkrt__op_entry *row)
{
    row->mark = row_mark;
    row->engine = e;
}
