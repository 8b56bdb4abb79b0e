/* SPDX-License-Identifier: BSD-2-Clause */
/* src/graph/device.c - the public traversals on the device (issue 36).
 *
 * When the runtime's device holds the graph and has job slots
 * (mkrt__backend.jobs_max, set by the runtime after mkrt_graph_register:
 * mkrt__graph_engine_device_jobs), a started BFS, SSSP, CC or PageRank is
 * not a lane of the frontier rounds: its take-up (round.c, take_starts)
 * claims it here, and the engine's next take hands it to the pipeline as
 * one item of a job round (a chunk of kind MKRT__CHUNK_DEVICE). The plan
 * stage routes a job round to the device (plan/source.h, job), whose loop
 * runs every job of the round whole, level after level, all at once
 * (protocol.h, "Traversal jobs"; backend/mk_trav.h and megakernel.cu):
 * the frontier never comes back to the host between levels. Its values
 * are the traversal's own arrays (the device copies them in and out where
 * it has memory of its own). When the round completes, ran finishes each
 * traversal as the rounds' engine would, with the same counters.
 *
 * One job round is out at a time (the slots are reused by the next), of
 * at most the device's slots: traversals started beyond them wait for
 * the next round (the plan in pieces; EXPLAIN's split_layers says how
 * many waited). A round the device cannot take (it failed, or the budget
 * left no slot) goes to the CPU pool like any made batch, and run
 * executes its jobs there through the same C loop the simulated device
 * runs, on one worker: the results are the same. A round the device
 * failed (a fault, the watchdog) comes back with its jobs marked so, and
 * ran puts them back to wait: the next round goes to the CPU pool, the
 * device being failed for good. */
#include "backend/mk_job.h"
#include "backend/mk_trav.h"
#include "graph/graph_internal.h"
#include "graph/sweep.h"

void mkrt__graph_engine_device_jobs(mkrt__graph_engine *e, uint32_t jobs)
{
    /* release: pairs with the dispatcher's acquire in mkrt__graph_device_claim. */
    atomic_store_explicit(&e->device_jobs, jobs < MKRT__DEVICE_JOBS_MAX ? jobs : MKRT__DEVICE_JOBS_MAX,
                          memory_order_release);
}

bool mkrt__graph_device_claim(mkrt__traversal *t)
{
    /* acquire: as in mkrt__graph_engine_device_jobs. */
    if (t->lane < MKRT__LANE_PUBLIC ||
        atomic_load_explicit(&t->engine->device_jobs, memory_order_acquire) == 0)
        return false;
    t->x.dev = MKRT__DEV_WAITING;
    return true;
}

/* The job of t's run: its arrays (filled by the start) and parameters. */
static void job_of(mkrt__traversal *t)
{
    const mkrt__graph_engine *e = t->engine;
    mkrt__device_job *j = &t->job;
    *j = (mkrt__device_job){0};
    j->root = t->root;
    j->status = MKRT_OK;
    if (t->kind == MKRT__LANE_CC || t->kind == MKRT__LANE_PR) {
        mkrt__sweep_job(t, j);
        return;
    }
    j->kind = t->kind == MKRT__LANE_BFS ? MKRT__JOB_BFS : MKRT__JOB_SSSP;
    j->pulls = t->pulls;
    j->values = t->values;
    j->value_bytes = (size_t)e->graph.vertices * sizeof *t->values;
}

size_t mkrt__graph_device_take(mkrt__graph_engine *e, mkrt_item *items, bool batch_running)
{
    (void)batch_running; /* a job round uses the slots only: it may overlap a batch of another kind */
    /* acquire: as in mkrt__graph_engine_device_jobs. */
    const uint32_t slots = atomic_load_explicit(&e->device_jobs, memory_order_acquire);
    if (e->jobs_out)
        return 0;
    /* acquire: pairs with the release store of aborting (destroy). */
    const bool aborting = atomic_load_explicit(e->host.aborting, memory_order_acquire);
    const uint32_t n = atomic_load_explicit(&e->nlanes, memory_order_acquire);
    const size_t max = slots != 0 ? slots : 1; /* no slot (any more): one at a time on the host */
    size_t k = 0;
    uint32_t waiting = 0;
    for (uint32_t l = MKRT__LANE_PUBLIC; l < n; l++) {
        mkrt__traversal *t = mkrt__lane_at(e, l);
        if (t == NULL || t->x.dev != MKRT__DEV_WAITING)
            continue;
        if (aborting) {
            t->x.dev = MKRT__DEV_NONE;
            mkrt__traversal_finish(t, MKRT_ETIMEDOUT);
            continue;
        }
        if (k == max || k == e->host.max_batch) {
            waiting++;
            continue;
        }
        job_of(t);
        t->x.dev = MKRT__DEV_RUNNING;
        mkrt__chunk_put(&items[k++], &(mkrt__chunk){t->lane, 0, MKRT__CHUNK_DEVICE});
    }
    e->jobs_out = k != 0;
    e->jobs_waiting = waiting;
    return k;
}

mkrt__device_job *mkrt__graph_device_job(mkrt__graph_engine *e, const mkrt_item *item)
{
    mkrt__chunk c;
    mkrt__chunk_get(item, &c);
    if (c.first != MKRT__CHUNK_DEVICE || c.lane >= MKRT__LANES)
        return NULL;
    mkrt__traversal *t = mkrt__lane_at(e, c.lane);
    return t != NULL ? &t->job : NULL;
}

/* The host's run of a job round: the device loop's calls (mk_trav.h) on
 * the traversal's arrays, one block, its own bitsets as the job's
 * bitmaps (idle while it runs on the device; left clear after). */
void mkrt__graph_device_run(mkrt__graph_engine *e, const mkrt_item *items, size_t from, size_t to)
{
    const mkrt__mk_graph_view g = {e->graph.offsets, e->graph.targets, e->graph.weights, e->graph.vertices};
    for (size_t k = from; k < to; k++) {
        mkrt__device_job *j = mkrt__graph_device_job(e, &items[k]);
        if (j == NULL)
            continue;
        mkrt__chunk c;
        mkrt__chunk_get(&items[k], &c);
        mkrt__traversal *t = mkrt__lane_at(e, c.lane);
        mkrt__mk_job rec;
        mkrt__mk_job_record(j, &rec);
        mkrt__mk_trav tr = {0};
        tr.job = &rec;
        mkrt__mk_trav_begin(&tr, &g, j->values, j->aux, (void *)t->bits);
        (void)mkrt__mk_trav_run(&tr, 1, &g, 1, NULL, NULL);
        mkrt__bitmap_clear_range(t->bits, 0, 4 * t->words * 64);
        mkrt__mk_job_result(&rec, j);
    }
}

uint64_t mkrt__graph_device_ran(mkrt__graph_engine *e)
{
    if (!e->jobs_out)
        return 0;
    const uint32_t n = atomic_load_explicit(&e->nlanes, memory_order_acquire);
    uint64_t edges = 0;
    bool out = false;
    for (uint32_t l = MKRT__LANE_PUBLIC; l < n; l++) {
        mkrt__traversal *t = mkrt__lane_at(e, l);
        if (t == NULL || t->x.dev != MKRT__DEV_RUNNING)
            continue;
        const mkrt__device_job *j = &t->job;
        if (!j->done) {
            out = true; /* its round has not completed (another batch did) */
            continue;
        }
        if (j->status == MKRT_EDEVICE) { /* the device failed the round: again, where the plan sends it */
            t->x.dev = MKRT__DEV_WAITING;
            continue;
        }
        mkrt__graph_count(&t->levels_pushed, j->levels_pushed);
        mkrt__graph_count(&t->levels_pulled, j->levels_pulled);
        mkrt__graph_count(&t->edges, j->edges);
        mkrt__graph_count(&e->levels_pushed, j->levels_pushed);
        mkrt__graph_count(&e->levels_pulled, j->levels_pulled);
        atomic_fetch_add_explicit(&e->edges, j->edges, memory_order_relaxed); /* the workers add theirs (round.c) */
        edges += j->edges;
        if (t->kind == MKRT__LANE_PR)
            mkrt__sweep_job_done(t, j->iterations);
        t->x.dev = MKRT__DEV_NONE;
        mkrt__traversal_finish(t, j->status);
    }
    e->jobs_out = out;
    return edges; /* the edge items the round stood for (each as an emitted one, as a round's) */
}

bool mkrt__graph_device_abandon(mkrt__graph_engine *e, const mkrt_item *item)
{
    mkrt__chunk c;
    mkrt__chunk_get(item, &c);
    if (c.first != MKRT__CHUNK_DEVICE)
        return false;
    mkrt__traversal *t = c.lane < MKRT__LANES ? mkrt__lane_at(e, c.lane) : NULL;
    if (t != NULL && t->x.dev == MKRT__DEV_RUNNING) {
        t->x.dev = MKRT__DEV_NONE;
        mkrt__traversal_finish(t, MKRT_ETIMEDOUT);
    }
    e->jobs_out = false;
    return true;
}
