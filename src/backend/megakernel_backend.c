/* SPDX-License-Identifier: BSD-2-Clause */
/* src/backend/megakernel_backend.c - see megakernel_backend.h. */
#include <stdalign.h>
#include <stdio.h>
#include <string.h>

#include "backend/megakernel_backend.h"
#include "cuda/mk_device.h"
#include "backend/mk_host.h"
#include "backend/mk_sim.h"
#include "backend/mk_job.h"
#include "base/alloc_internal.h"
#include "base/error_internal.h"
#include "cuda/cuda_device.h"
#include "cuda/cuda_engine.h"
#include "mkrt/graph.h"
#include "ops/op_table.h"
#include "plan/source.h"
#include "state/state.h"

/* The megakernel backend: the host protocol (mk_host.h) and the backend
 * interface over one device (mk_device.h), the simulated one or the GPU;
 * past mkrt__megakernel_start nothing here asks which. */
typedef struct megakernel {
    mkrt__backend base;     /* first: the megakernel is its backend */
    mkrt__state *state; /* what the ops run against (state/state.h) */
    const mkrt__mk_device *dev;
    void *ctx;              /* the device's object: &sim or &cuda below */
    union {                 /* the device itself, as its start function made it */
        mkrt__mk_sim sim;
        mkrt__cuda_engine cuda;
    } u;
    mkrt__mk_host host;
    uint64_t staged_seq;    /* 0: nothing staged and not rung */
    uint64_t running_seq;   /* 0: nothing in flight */
    bool user_ops;          /* the device runs user ops (linked PTX) */
    bool graph_on;          /* the registered graph is on the device (graph_in) */
    uint64_t graph_bytes;   /* device bytes of the graph on it (graph_in) */
    char graph_note[MKRT_ERROR_MESSAGE_MAX + 64]; /* for describe: where the graph is */
    mkrt__batch *running;   /* the batch in flight (its device results) */
    /* Traversal jobs (protocol.h, "Traversal jobs"): the jobs of the
     * staged and the running batch (slot k holds job k; the slots are
     * base.jobs_max, fitted to the budget by graph_in). */
    mkrt__device_job *staged_jobs[MKRT_MK_JOBS_MAX], *running_jobs[MKRT_MK_JOBS_MAX];
    uint32_t staged_njobs, running_njobs;
    struct megakernel *next_abandoned;
} megakernel;

/* How long the host waits for a running kernel to leave the device: one
 * watchdog period (the batch it runs was given that long), or
 * MKRT__MK_HALT_NS without a watchdog. */
static uint64_t leave_wait_ns(const mkrt__state *sg)
{
    return sg->cfg->watchdog_ms ? (uint64_t)sg->cfg->watchdog_ms * 1000000u : MKRT__MK_HALT_NS;
}

static mkrt_status start_sim(mkrt__state *sg, uint32_t workers, megakernel *m, mkrt_error *err)
{
    uint32_t blocks = workers * 2; /* grid-stride "blocks" of the simulated kernel */
    mkrt__mk_sim *sim = &m->u.sim;
    mkrt_status st = mkrt__mk_sim_start(sim, 1, (uint32_t)sg->cfg->max_batch, blocks, 1,
                                        (uint64_t)sg->cfg->device_idle_us * 1000u,
                                        (uint64_t)sg->cfg->device_resident_us * 1000u, err);
    if (st != MKRT_OK)
        return st;
    /* Map the runtime's cells and log for the device: the loop uses what
     * the control block points to. The runtime's APPEND log has the
     * device's layout (ops/builtin_ops.h, mkrt__ops_append_word). */
    sim->ctl->cells = (uint64_t)(uintptr_t)sg->cells;
    sim->ctl->cell_count = sg->cfg->cells;
    sim->ctl->append_log = (uint64_t)(uintptr_t)sg->append_log;
    sim->ctl->append_capacity = sg->cfg->append_log_capacity;
    sim->ctl->append_limit = 0; /* set by each doorbell */
    m->base.width = blocks;
    m->base.key = mkrt_device_key_cpu(); /* the simulator is host threads */
    m->dev = &mkrt__mk_sim_device;
    m->ctx = sim;
    mkrt__mk_host_init(&m->host, sim->ctl, m->dev->protocol, sim, sim->capacity);
    m->host.halt_ns = leave_wait_ns(sg);
    return MKRT_OK;
}

static mkrt_status start_cuda(mkrt__state *sg, megakernel *m, void *const bufs[MKRT__MK_BATCH_BUFS],
                              size_t buf_bytes, mkrt_error *err)
{
    _Static_assert(sizeof(*sg->append_log) == 2 * sizeof(uint32_t), "log entries are pairs");
    mkrt__cuda_engine_config c = {
        .cells = sg->cells,
        .cell_count = sg->cfg->cells,
        .append_log = (uint32_t *)(uintptr_t)sg->append_log,
        .append_capacity = sg->cfg->append_log_capacity,
        .capacity = (uint32_t)sg->cfg->max_batch,
        .max_blocks = sg->cfg->cuda_max_blocks,
        .user_ptx = sg->cfg->cuda_user_ptx,
        .user_ptx_size = sg->cfg->cuda_user_ptx_size,
        .idle_ns = (uint64_t)sg->cfg->device_idle_us * 1000u,
        .resident_ns = (uint64_t)sg->cfg->device_resident_us * 1000u,
        .device_state = sg->cfg->cuda_device_state != 0,
        .blocks_per_sm = sg->cfg->cuda_blocks_per_sm,
    };
    _Static_assert(MKRT__MK_BATCH_BUFS <= MKRT__CUDA_DMA_RANGES, "every batch buffer has a DMA range");
    for (int i = 0; bufs != NULL && i < MKRT__MK_BATCH_BUFS; i++)
        c.dma[i] = (mkrt__cuda_host_range){bufs[i], bufs[i] != NULL ? buf_bytes : 0};
    mkrt__cuda_engine *e = &m->u.cuda;
    mkrt_status st = mkrt__cuda_engine_start(e, &c, err);
    if (st != MKRT_OK)
        return st;
    m->user_ops = e->user_ops;
    m->base.width = e->blocks;
    m->base.key = mkrt_device_key_from_caps((uint32_t)e->cu.cc_major, (uint32_t)e->cu.cc_minor, 32u,
                                            e->cu.cooperative != 0, MKRT__CUDA_BLOCK_THREADS);
    m->dev = e->device_state ? &mkrt__cuda_state_device : &mkrt__cuda_device;
    m->ctx = e;
    mkrt__mk_host_init(&m->host, e->ctl, m->dev->protocol, e, e->capacity);
    m->host.halt_ns = leave_wait_ns(sg);
    return MKRT_OK;
}

/* Built-in ops; RELAX when the graph is on the device (the batch is then a
 * RELAX job of the device's traversal engine, protocol.h "RELAX batches");
 * user ops only those the linked PTX
 * defines. Not the host's frontier rounds (the plan stage keeps those on
 * the CPU pool): a frontier that began there is finished there. */
static bool mk_accepts(const mkrt__backend *be, const mkrt_item *items, size_t n)
{
    const megakernel *m = (const megakernel *)be;
    for (size_t i = 0; i < n; i++) {
        uint32_t op = items[i].op;
        if ((op == MKRT_OP_RELAX && !m->graph_on) ||
            (mkrt__ops_is_user(op) && !(m->user_ops && m->state->ops[op].device)))
            return false;
    }
    return true;
}

/* A round of traversal jobs (the plan stage routed it here: it fits the
 * slots, and the source takes one only while no batch runs, so no job
 * batch is in flight): each job's first values into its slot, then the
 * records. */
static mkrt_status prepare_jobs(megakernel *m, mkrt__batch *b, mkrt_error *err)
{
    mkrt__mk_job recs[MKRT_MK_JOBS_MAX];
    const uint32_t n = (uint32_t)b->exec_n;
    if (n > m->base.jobs_max)
        return mkrt__error_set(err, MKRT_EINVAL, "megakernel: a round of %u traversal jobs, but %u slots. Fix: a "
                                                 "bug in the plan stage.", n, m->base.jobs_max);
    for (uint32_t k = 0; k < n; k++) {
        mkrt__device_job *j = b->source->job(b->source->ctx, &b->exec[k]);
        if (j == NULL)
            return mkrt__error_set(err, MKRT_EINVAL, "megakernel: item %u of a job round is not a traversal job. "
                                                     "Fix: a bug in the source.", k);
        mkrt__mk_job_record(j, &recs[k]);
        mkrt_status st = m->dev->job_in(m->ctx, k, j->values, j->value_bytes, j->aux, j->aux_bytes, &recs[k], err);
        if (st != MKRT_OK)
            return st;
        j->done = false;
        m->staged_jobs[k] = j;
    }
    m->staged_njobs = n;
    return mkrt__mk_stage_jobs(&m->host, recs, n, &m->staged_seq, err);
}

static mkrt_status mk_prepare(mkrt__backend *be, mkrt__batch *b, mkrt_error *err)
{
    megakernel *m = (megakernel *)be;
    m->staged_njobs = 0;
    if (b->source->made && b->source->job != NULL && b->exec_n > 0)
        return prepare_jobs(m, b, err);
    return mkrt__mk_stage(&m->host, b->exec, (uint32_t)b->exec_n, b->layer_offsets,
                          b->plan.participants, (uint32_t)b->layers, &m->staged_seq, err);
}

/* A finished job batch: each job's values back from its slot and what
 * the device did (the record) into the source's job. */
static mkrt_status finish_jobs(megakernel *m, uint64_t seq, mkrt_error *err)
{
    for (uint32_t k = 0; k < m->running_njobs; k++) {
        mkrt__device_job *j = m->running_jobs[k];
        mkrt_status st = m->dev->job_out(m->ctx, k, j->values, j->value_bytes, j->aux, j->aux_bytes, err);
        if (st != MKRT_OK)
            return st;
        mkrt__mk_job_result(&m->host.ctl->jobs[seq & 1][k], j);
    }
    return MKRT_OK;
}

static mkrt_status mk_launch(mkrt__backend *be, mkrt__batch *b, uint64_t append_limit, mkrt_error *err)
{
    megakernel *m = (megakernel *)be;
    m->running = b; /* staged by prepare; wait gives it the device's results */
    m->running_njobs = m->staged_njobs;
    memcpy(m->running_jobs, m->staged_jobs, sizeof m->running_jobs);
    /* relaxed: the runtime's append_len is dispatcher-owned between
     * batches; the device's copy is published to it by the doorbell's
     * release in mkrt__mk_ring, and the previous batch is done, so the
     * device is not claiming positions now. */
    atomic_store_explicit(&m->host.ctl->append_len,
                          atomic_load_explicit(&m->state->append_len, memory_order_relaxed),
                          memory_order_relaxed);
    m->host.ctl->append_limit = append_limit;
    mkrt_status st = mkrt__mk_ring(&m->host, err);
    if (st != MKRT_OK)
        return st;
    m->running_seq = m->staged_seq;
    m->staged_seq = 0;
    return MKRT_OK;
}

static mkrt_status mk_wait(mkrt__backend *be, uint64_t timeout_ns, const uint32_t **fails,
                           uint32_t *nfails, mkrt_error *err)
{
    megakernel *m = (megakernel *)be;
    mkrt_status st = mkrt__mk_wait(&m->host, m->running_seq, timeout_ns, err);
    if (st == MKRT_OK && m->running_njobs != 0)
        st = finish_jobs(m, m->running_seq, err);
    for (uint32_t k = 0; st != MKRT_OK && k < m->running_njobs; k++) {
        /* The device failed the round: its traversals run again where the
         * plan sends them next (the CPU pool; plan/source.h, job). */
        m->running_jobs[k]->status = MKRT_EDEVICE;
        m->running_jobs[k]->done = true;
    }
    m->running_njobs = 0;
    *nfails = st == MKRT_OK ? mkrt__mk_failures(&m->host, m->running_seq, fails) : 0;
    uint64_t edges = 0, changed = 0, levels = 0;
    if (st == MKRT_OK)
        mkrt__mk_result(&m->host, m->running_seq, &edges, &changed, &levels);
    if (m->running != NULL) { /* the traversal's edge items and levels (complete.c counts them) */
        m->running->device_edges = edges;
        m->running->device_levels = levels;
    }
    if (changed != 0)
        /* relaxed: a statistic, as the CPU pool's (ops/op_exec.c). */
        atomic_fetch_add_explicit(&m->state->changed, changed, memory_order_relaxed);
    m->running = NULL;
    m->running_seq = 0;
    /* The device's codes as mkrt_status (protocol.h: a user op's value
     * that is not one is MKRT_EDEVICE); the list is host memory this
     * backend owns until its next stage. */
    uint32_t *list = (uint32_t *)(uintptr_t)*fails;
    for (uint32_t i = 0; i < *nfails; i++)
        list[2 * i + 1] = (uint32_t)mkrt__fail_status(list[2 * i + 1]);
    if (st == MKRT_OK)
        /* relaxed (both): the device's length was acquired with done by
         * mkrt__mk_wait; the runtime's is dispatcher-owned between batches. */
        atomic_store_explicit(&m->state->append_len,
                              atomic_load_explicit(&m->host.ctl->append_len, memory_order_relaxed),
                              memory_order_relaxed);
    return st;
}

/* Devices whose GPU kernel would not stop: kept for the life of the
 * process (a hung kernel may still touch their memory), and reachable from
 * here so that leak checkers see them as kept, not lost. */
static megakernel *_Atomic abandoned;

static bool mk_stop(mkrt__backend *be, uint64_t timeout_ns)
{
    megakernel *m = (megakernel *)be;
    if (m->dev->stop(m->ctx, timeout_ns)) {
        mkrt__free(m, sizeof *m);
        return true;
    }
    /* relaxed: only the list's reachability matters, nobody walks it. */
    m->next_abandoned = atomic_exchange_explicit(&abandoned, m, memory_order_relaxed);
    return false;
}

static void mk_describe(const mkrt__backend *be, char *buf, size_t len)
{
    const megakernel *m = (const megakernel *)be;
    if (len == 0)
        return;
    m->dev->describe(m->ctx, buf, len);
    size_t at = strlen(buf);
    snprintf(buf + at, len - at, "%s", m->graph_note);
}

/* The device's resident bytes into the state, for the split and admission. */
static void update_resident(megakernel *m)
{
    uint64_t resident = 0, budget = 0;
    m->dev->memory(m->ctx, &resident, &budget);
    /* relaxed: a size, read as a number (state.h). */
    atomic_store_explicit(&m->state->device_resident, resident, memory_order_relaxed);
}

/* Bytes the device holds for graph g: the CSR and the RELAX job's
 * bitmaps (protocol.h, "RELAX batches"). */
static uint64_t graph_device_bytes(const mkrt_graph *g)
{
    const uint64_t v = g->vertices, edges = g->offsets[v];
    return (v + 1) * sizeof(uint64_t) + edges * sizeof(uint32_t) * (g->weights != NULL ? 2 : 1) +
           mkrt__mk_job_bits_bytes(g->vertices);
}

/* The registered graph to the device (backend.h). Called by
 * mkrt_graph_register before any batch: the dispatcher is not using the
 * device. A graph that does not fit the device memory budget beside what
 * is resident is refused before anything is allocated (the CPU pool then
 * runs its traversals), with the numbers. */
static mkrt_status mk_graph_in(mkrt__backend *be, const mkrt_graph *g, mkrt_error *err)
{
    megakernel *m = (megakernel *)be;
    const uint64_t budget = m->state->cfg->device_memory_budget;
    /* What stays resident once the graph before is gone (relaxed: as in
     * update_resident). */
    const uint64_t now = atomic_load_explicit(&m->state->device_resident, memory_order_relaxed);
    const uint64_t resident = now > m->graph_bytes ? now - m->graph_bytes : 0;
    const uint64_t need = graph_device_bytes(g);
    /* The public traversals' job slots (protocol.h, "Traversal jobs"):
     * MKRT_MK_JOBS_MAX, or as many as the budget leaves beside the graph
     * (the traversals then run that many at a time, the others waiting
     * for a slot: the plan in pieces); none: they run on the CPU pool. */
    const uint64_t slot = mkrt__mk_job_slot_bytes(g->vertices);
    uint32_t jobs = MKRT_MK_JOBS_MAX;
    if (budget != 0) {
        const uint64_t left = resident + need < budget ? budget - resident - need : 0;
        jobs = left / slot < MKRT_MK_JOBS_MAX ? (uint32_t)(left / slot) : MKRT_MK_JOBS_MAX;
    }
    m->base.jobs_max = 0;
    if (budget != 0 && (resident >= budget || need > budget - resident)) {
        mkrt_status st = mkrt__error_set(
            err, MKRT_EBUDGET,
            "graph of %u vertices, %llu edges needs %llu device bytes beside %llu resident: over the "
            "%llu-byte budget (%s). Fix: a smaller graph, a larger device_memory_budget, or free device memory",
            g->vertices, (unsigned long long)g->offsets[g->vertices], (unsigned long long)need,
            (unsigned long long)resident, (unsigned long long)budget,
            m->state->budget_from_device ? "device's free memory less reserve" : "configured");
        snprintf(m->graph_note, sizeof m->graph_note, "; the graph is not on the device, RELAX runs on "
                 "the CPU pool (%s)", err != NULL ? err->message : "over the device memory budget");
        m->graph_on = false;
        return st;
    }
    m->graph_on = false;
    /* How long a running kernel may take to leave the GPU first. */
    mkrt_status st = m->dev->graph_in(m->ctx, g->vertices, g->offsets, g->targets, g->weights, jobs,
                                      leave_wait_ns(m->state), err);
    update_resident(m);
    m->graph_bytes = st == MKRT_OK ? need + (uint64_t)jobs * slot : 0;
    if (st != MKRT_OK) {
        snprintf(m->graph_note, sizeof m->graph_note, "; the graph is not on the device, RELAX runs on "
                 "the CPU pool (%s)", err != NULL ? err->message : "copy failed");
        return st;
    }
    m->graph_on = true;
    m->base.jobs_max = jobs;
    int at = snprintf(m->graph_note, sizeof m->graph_note, "; graph of %u vertices and %llu edges on the device: "
                      "RELAX traversals run there", g->vertices, (unsigned long long)g->offsets[g->vertices]);
    if (at > 0 && (size_t)at < sizeof m->graph_note) {
        if (jobs != 0)
            snprintf(m->graph_note + at, sizeof m->graph_note - (size_t)at, ", and public traversals, %u at once "
                     "(resident: %llu bytes of graph and RELAX bitmaps, %u job slots of %llu)", jobs,
                     (unsigned long long)need, jobs, (unsigned long long)slot);
        else
            snprintf(m->graph_note + at, sizeof m->graph_note - (size_t)at, "; public traversals run on the CPU "
                     "pool: one needs %llu device bytes beside the graph's %llu and %llu resident, over the "
                     "%llu-byte budget. Fix: a larger device_memory_budget or a smaller graph",
                     (unsigned long long)slot, (unsigned long long)need, (unsigned long long)resident,
                     (unsigned long long)budget);
    }
    return MKRT_OK;
}

/* Device-resident state (a device with state operations: CUDA with
 * cuda_device_state): the device's explicit copies (backend.h). */
static mkrt_status mk_state_in(mkrt__backend *be, mkrt_error *err)
{
    const megakernel *m = (const megakernel *)be;
    return m->dev->state_in(m->ctx, err);
}

static mkrt_status mk_state_out(mkrt__backend *be, mkrt_error *err)
{
    const megakernel *m = (const megakernel *)be;
    return m->dev->state_out(m->ctx, err);
}

static mkrt_status mk_cells_read(mkrt__backend *be, uint32_t first, size_t count, uint64_t *out,
                                 mkrt_error *err)
{
    const megakernel *m = (const megakernel *)be;
    return m->dev->cells_read(m->ctx, first, count, out, err);
}

static mkrt_status mk_cell_write(mkrt__backend *be, uint32_t handle, uint64_t value, mkrt_error *err)
{
    const megakernel *m = (const megakernel *)be;
    return m->dev->cell_write(m->ctx, handle, value, err);
}

static mkrt_status mk_log_read(mkrt__backend *be, uint64_t from, size_t n, uint64_t *out, mkrt_error *err)
{
    const megakernel *m = (const megakernel *)be;
    return m->dev->log_read(m->ctx, from, n, out, err);
}

static const mkrt__backend_ops megakernel_ops = {
    .accepts = mk_accepts,
    .prepare = mk_prepare,
    .launch = mk_launch,
    .wait = mk_wait,
    .stop = mk_stop,
    .describe = mk_describe,
    .graph_in = mk_graph_in,
};

static const mkrt__backend_ops megakernel_state_ops = {
    .accepts = mk_accepts,
    .prepare = mk_prepare,
    .launch = mk_launch,
    .wait = mk_wait,
    .stop = mk_stop,
    .describe = mk_describe,
    .graph_in = mk_graph_in,
    .state_in = mk_state_in,
    .state_out = mk_state_out,
    .cells_read = mk_cells_read,
    .cell_write = mk_cell_write,
    .log_read = mk_log_read,
};

mkrt_status mkrt__megakernel_start(mkrt__state *sg, uint32_t workers, mkrt_backend_kind kind,
                                   void *const bufs[MKRT__MK_BATCH_BUFS], size_t buf_bytes, mkrt__backend **out,
                                   mkrt_error *err)
{
    megakernel *m = mkrt__alloc_zeroed(sizeof *m, alignof(megakernel));
    if (m == NULL)
        return mkrt__error_set(err, MKRT_ENOMEM, "megakernel backend: out of memory. Fix: free memory.");
    m->state = sg;
    m->base.is_cpu_pool = false; /* a device */
    /* The one place that tells the devices apart: which one to start. */
    mkrt_status st = kind == MKRT_BACKEND_CUDA ? start_cuda(sg, m, bufs, buf_bytes, err) : start_sim(sg, workers, m, err);
    if (st != MKRT_OK) {
        mkrt__free(m, sizeof *m);
        return st;
    }
    uint64_t resident = 0;
    m->dev->memory(m->ctx, &resident, &m->base.memory_budget);
    update_resident(m);
    m->base.name = m->dev->name;
    m->base.ops = m->dev->state_in != NULL ? &megakernel_state_ops : &megakernel_ops;
    *out = &m->base;
    return MKRT_OK;
}

#ifdef MKRT_TEST_HOOKS
void mkrt__megakernel_inject_hang(mkrt__backend *be, uint64_t batches_from_now, uint32_t layer, uint64_t ns)
{
    megakernel *m = (megakernel *)be;
    if (m->dev->inject_hang != NULL)
        m->dev->inject_hang(m->ctx, m->host.staged + batches_from_now, layer, ns);
}

uint64_t mkrt__megakernel_progress(const mkrt__backend *be, uint32_t block)
{
    const megakernel *m = (const megakernel *)be;
    if (block >= m->base.width || block >= MKRT_MK_MAX_BLOCKS)
        return 0;
    uint64_t copied[8];
    if (m->dev->state_in != NULL && m->host.ops.read_progress != NULL) /* in device memory: a copy */
        return block < 8 && m->host.ops.read_progress(m->ctx, copied, block + 1) == MKRT_OK
                   ? copied[block]
                   : 0;
    /* acquire: pairs with the device loop's release of its progress word. */
    return atomic_load_explicit(&m->host.ctl->progress[block], memory_order_acquire);
}

uint32_t mkrt__megakernel_last_jobs(const mkrt__backend *be, mkrt__mk_job *job)
{
    const megakernel *m = (const megakernel *)be;
    /* acquire: pairs with the device's release of done; the records and
     * the descriptor of that batch were written before it. */
    const uint64_t done = atomic_load_explicit(&m->host.ctl->done, memory_order_acquire);
    const uint32_t n = done != 0 ? m->host.ctl->desc[done & 1].njobs : 0;
    *job = n != 0 ? m->host.ctl->jobs[done & 1][0] : (mkrt__mk_job){0};
    return n;
}

void mkrt__megakernel_level_nap(mkrt__backend *be, uint64_t ns)
{
    megakernel *m = (megakernel *)be;
    if (m->dev->level_nap != NULL)
        m->dev->level_nap(m->ctx, ns);
}
#endif
