/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/src/lifecycle.c - the layer's life cycle: the configuration and its
 * checks, MPI's state in the process, mkrt_mpi_create() and
 * mkrt_mpi_destroy().
 *
 * MPI can be initialised once per process and never again after
 * MPI_Finalize, so a create that fails, and a destroy, leave MPI
 * initialised: the process can always create again. When
 * mkrt_mpi_create() initialised MPI, an atexit handler finalises it when
 * the process ends (unless the program did, or a layer still runs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_internal.h"

/* Guards the counts below and every create's and destroy's MPI calls
 * outside the progress threads. C11 has no static mutex initialiser:
 * state_lock_get() initialises it once. */
static mkrt__mutex state_lock;
static mkrt__once_flag state_lock_once = MKRT__ONCE_INIT;
static int state_lock_ok; /* written once under call_once, read after it */
static int mpi_ours;    /* mkrt_mpi_create() initialised MPI (atexit finalises it) */
static int live_layers; /* created and not destroyed */
static int mpi_level;   /* MPI's thread level, read when no layer ran */

static void state_lock_init(void)
{
    state_lock_ok = mkrt__mutex_init(&state_lock) == 0;
}

/* The state lock, or NULL when it could not be initialised (create then
 * refuses; destroy and the atexit handler only run after a create that
 * got it). */
static mkrt__mutex *state_lock_get(void)
{
    mkrt__call_once(&state_lock_once, state_lock_init);
    return state_lock_ok ? &state_lock : NULL;
}

mkrt_mpi_config mkrt_mpi_config_default(void)
{
    return (mkrt_mpi_config){.partition = MKRT_MPI_BLOCK,
                             .handles = 0,
                             .batch_items = 4096,
                             .buffers = 8,
                             .wait_timeout_ms = 30000,
                             .hold_ms = 0};
}

bool mkrt_mpi_launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMI_SIZE") != NULL ||
           getenv("PMIX_RANK") != NULL;
}

/* rt's mkrt_config::cells, found with mkrt_cell_read() (which refuses a
 * handle at or above it), given that cell `above` is refused. */
static uint32_t runtime_cells(mkrt_runtime *rt, uint32_t above)
{
    uint32_t lo = 0, hi = above;
    uint64_t v;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (mkrt_cell_read(rt, mid, &v) == MKRT_OK)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static mkrt_status check_config(const mkrt_mpi_config *c, mkrt_runtime *rt, mkrt_error *err)
{
    if (c->partition != MKRT_MPI_BLOCK && c->partition != MKRT_MPI_HASH)
        return mkrt__mpi_fail(err, MKRT_EINVAL, "mkrt_mpi_create: mkrt_mpi_config.partition is %d, "
                              "not MKRT_MPI_BLOCK (0) or MKRT_MPI_HASH (1). Fix: pick one.",
                              (int)c->partition);
    if (c->handles == 0)
        return mkrt__mpi_fail(err, MKRT_EINVAL, "mkrt_mpi_create: mkrt_mpi_config.handles is 0. "
                              "Fix: the number of global handles to split, at most the runtime's "
                              "cells.");
    uint64_t v;
    if (rt != NULL && mkrt_cell_read(rt, c->handles - 1, &v) != MKRT_OK)
        return mkrt__mpi_fail(err, MKRT_EINVAL, "mkrt_mpi_create: mkrt_mpi_config.handles is %u, "
                              "above the runtime's %u cells (handles must be in 1..cells). Fix: "
                              "handles at most %u, or a runtime with mkrt_config.cells >= %u.",
                              c->handles, runtime_cells(rt, c->handles - 1),
                              runtime_cells(rt, c->handles - 1), c->handles);
    if (c->batch_items == 0 || c->batch_items > MKRT_MPI_BATCH_MAX)
        return mkrt__mpi_fail(err, MKRT_EINVAL, "mkrt_mpi_create: mkrt_mpi_config.batch_items is "
                              "%u, outside 1..%u. Fix: 4096 (the default).", c->batch_items,
                              MKRT_MPI_BATCH_MAX);
    if (c->buffers == 0 || c->buffers > MKRT_MPI_BUFFERS_MAX)
        return mkrt__mpi_fail(err, MKRT_EINVAL, "mkrt_mpi_create: mkrt_mpi_config.buffers is %u, "
                              "outside 1..%u. Fix: 8 (the default).", c->buffers,
                              MKRT_MPI_BUFFERS_MAX);
    if (c->wait_timeout_ms == 0 || c->wait_timeout_ms > MKRT_MPI_TIMEOUT_MAX ||
        c->hold_ms >= c->wait_timeout_ms)
        return mkrt__mpi_fail(err, MKRT_EINVAL, "mkrt_mpi_create: mkrt_mpi_config.wait_timeout_ms "
                              "is %u and hold_ms %u: need 1 <= wait_timeout_ms <= %u and hold_ms "
                              "below it. Fix: 30000 and 0 (the defaults).", c->wait_timeout_ms,
                              c->hold_ms, MKRT_MPI_TIMEOUT_MAX);
    return MKRT_OK;
}

static mkrt_status mpi_fail(mkrt_error *err, int rc, const char *call)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error %d", rc);
    return mkrt__mpi_fail(err, MKRT_EDEVICE, "mkrt_mpi_create: %s failed: %s. Fix: check the MPI "
                          "installation and the launcher (mpirun).", call, text);
}

/* Registered by a create that held state_lock (so it exists). */
static void finalize_at_exit(void)
{
    mkrt__mutex_lock(&state_lock);
    int fin = 1;
    MPI_Finalized(&fin);
    /* A layer still running: its progress thread may be in MPI. */
    if (mpi_ours && !fin && live_layers == 0)
        MPI_Finalize();
    mkrt__mutex_unlock(&state_lock);
}

/* MPI usable for one more layer (state_lock held): initialised here when
 * the program has not, at MPI_THREAD_SERIALIZED at least, and not in use
 * by another layer unless MPI gives MPI_THREAD_MULTIPLE. */
static mkrt_status mpi_ready(mkrt_error *err)
{
    if (live_layers > 0) {
        /* MPI is up and a progress thread may be in it: no MPI call here
         * unless MPI allows concurrent ones (the level read before). */
        if (mpi_level >= MPI_THREAD_MULTIPLE)
            return MKRT_OK;
        return mkrt__mpi_fail(err, MKRT_ESTATE, "mkrt_mpi_create: %d layer(s) already run on this "
                              "rank and MPI gives thread level %d, below MPI_THREAD_MULTIPLE (%d): "
                              "two progress threads would call MPI at once. Fix: mkrt_mpi_destroy() "
                              "the other layer first, or initialise MPI with MPI_THREAD_MULTIPLE.",
                              live_layers, mpi_level, MPI_THREAD_MULTIPLE);
    }
    int fin = 0, inited = 0, provided = 0;
    MPI_Finalized(&fin);
    if (fin)
        return mkrt__mpi_fail(err, MKRT_ESTATE, "mkrt_mpi_create: MPI was finalised "
                              "(MPI_Finalize), and cannot be initialised again. Fix: create every "
                              "layer before MPI_Finalize.");
    MPI_Initialized(&inited);
    if (!inited) {
        int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
        if (rc != MPI_SUCCESS)
            return mpi_fail(err, rc, "MPI_Init_thread");
        if (atexit(finalize_at_exit) != 0)
            return mkrt__mpi_fail(err, MKRT_ENOMEM, "mkrt_mpi_create: atexit() has no room for "
                                  "the handler that finalises MPI. Fix: initialise MPI yourself "
                                  "(MPI_Init_thread, MPI_THREAD_SERIALIZED) and finalise it.");
        mpi_ours = 1;
    } else {
        MPI_Query_thread(&provided);
    }
    mpi_level = provided;
    if (provided < MPI_THREAD_SERIALIZED)
        return mkrt__mpi_fail(err, MKRT_ENOTSUP, "mkrt_mpi_create: MPI gives thread level %d, "
                              "below MPI_THREAD_SERIALIZED (%d). Fix: MPI_Init_thread with "
                              "MPI_THREAD_SERIALIZED or an MPI built with thread support.",
                              provided, MPI_THREAD_SERIALIZED);
    return MKRT_OK;
}

/* Waits for a request of create's, bounded by wait_timeout_ms (a rank that
 * never comes ends the job rather than hang it). */
static int wait_bounded(struct mkrt_mpi *m, MPI_Request *req, const char *what)
{
    const double t0 = mkrt__mpi_now();
    for (;;) {
        int flag = 0, rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        if (mkrt__mpi_now() - t0 > m->cfg.wait_timeout_ms * 1e-3)
            mkrt__mpi_fatal(m, "mkrt_mpi_create (%s) waited %u ms for the other ranks (a rank "
                               "had its arguments refused, failed before, or never called it). "
                               "Fix: call mkrt_mpi_create on every rank with the same "
                               "configuration; see the other ranks' errors",
                            what, m->cfg.wait_timeout_ms);
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

/* Frees what create made (the thread is not running); m itself too
 * where own (not create's stand-in). */
static void teardown(struct mkrt_mpi *m, bool own)
{
    for (int r = 0; m->out != NULL && r < m->size; r++)
        mkrt__mpi_outbox_fini(&m->out[r]);
    for (int r = 0; m->in != NULL && r < m->size; r++) {
        mkrt_producer_close(m->in[r].prod);
        mkrt__free(m->in[r].items, (size_t)m->cfg.batch_items * sizeof(mkrt_item));
    }
    mkrt__free(m->out, (size_t)m->size * sizeof *m->out);
    mkrt__free(m->in, (size_t)m->size * sizeof *m->in);
    mkrt__free(m->same_node, (size_t)m->size);
    mkrt__free(m->node_hash, (size_t)m->size * sizeof *m->node_hash);
    if (own)
        mkrt__free(m, sizeof *m);
}

/* This rank's part: buffers, one producer per other rank, the lock. */
static mkrt_status open_local(struct mkrt_mpi *m, mkrt_error *err)
{
    const mkrt_mpi_config *cfg = &m->cfg;
    m->out = mkrt__alloc_zeroed((size_t)m->size * sizeof *m->out, MKRT_CACHE_LINE);
    m->in = mkrt__alloc_zeroed((size_t)m->size * sizeof *m->in, MKRT_CACHE_LINE);
    m->same_node = mkrt__alloc_zeroed((size_t)m->size, MKRT_CACHE_LINE);
    /* find_node's buffer, here so that a rank refused it fails the
     * create on every rank (agree) instead of leaving them in its allgather. */
    m->node_hash = mkrt__alloc((size_t)m->size * sizeof *m->node_hash, MKRT_CACHE_LINE);
    if (m->out == NULL || m->in == NULL || m->same_node == NULL || m->node_hash == NULL)
        goto nomem;
    for (int r = 0; r < m->size; r++) {
        if (r == m->rank)
            continue;
        if (mkrt__mpi_outbox_init(&m->out[r], cfg->buffers, cfg->batch_items) != 0)
            goto nomem;
        m->in[r].items = mkrt__alloc((size_t)cfg->batch_items * sizeof(mkrt_item), MKRT_CACHE_LINE);
        if (m->in[r].items == NULL)
            goto nomem;
        mkrt_error perr = {0};
        m->in[r].prod = mkrt_producer_open(m->rt, &perr);
        if (m->in[r].prod == NULL && perr.status == MKRT_ENOMEM)
            return mkrt__mpi_fail(err, MKRT_ENOMEM, "mkrt_mpi_create: out of memory opening the "
                                  "producer for rank %d of %d: %s", r, m->size, perr.message);
        if (m->in[r].prod == NULL)
            return mkrt__mpi_fail(err, perr.status, "mkrt_mpi_create: opening the producer for "
                                  "rank %d of %d failed: %s (one producer per other rank is "
                                  "needed; Fix: raise mkrt_config.max_producers to at least the "
                                  "ranks)", r, m->size, perr.message);
    }
    return MKRT_OK;
nomem:
    return mkrt__mpi_fail(err, MKRT_ENOMEM, "mkrt_mpi_create: out of memory for %d ranks x %u "
                          "buffers of %u items. Fix: fewer or smaller buffers, or free memory.",
                          m->size, cfg->buffers, cfg->batch_items);
}

/* Every rank learns whether any rank failed its local part, and whether
 * all passed the same configuration. */
#define NFIELDS 6
static mkrt_status agree(struct mkrt_mpi *m, mkrt_status local, mkrt_error *err)
{
    static const char *const names[NFIELDS] = {"partition", "handles", "batch_items", "buffers",
                                               "wait_timeout_ms", "hold_ms"};
    const uint64_t f[NFIELDS] = {(uint64_t)m->cfg.partition, m->cfg.handles, m->cfg.batch_items,
                                 m->cfg.buffers, m->cfg.wait_timeout_ms, m->cfg.hold_ms};
    /* Maxima: the failure (negated status, the rank + 1), then each field
     * and its complement (so its minimum). */
    uint64_t v[2 + 2 * NFIELDS];
    v[0] = local != MKRT_OK ? (uint64_t)(-(int64_t)local) : 0;
    v[1] = local != MKRT_OK ? (uint64_t)m->rank + 1 : 0;
    for (int i = 0; i < NFIELDS; i++) {
        v[2 + 2 * i] = f[i];
        v[3 + 2 * i] = UINT64_MAX - f[i];
    }
    MPI_Request req;
    int rc = MPI_Iallreduce(MPI_IN_PLACE, v, 2 + 2 * NFIELDS, MPI_UINT64_T, MPI_MAX, m->comm, &req);
    if (rc == MPI_SUCCESS)
        rc = wait_bounded(m, &req, "MPI_Iallreduce");
    if (rc != MPI_SUCCESS)
        return mpi_fail(err, rc, "MPI_Iallreduce");
    if (local != MKRT_OK)
        return local; /* its own message is in err */
    if (v[0] != 0) {
        mkrt_status st = (mkrt_status)(-(int64_t)v[0]);
        return mkrt__mpi_fail(err, st, "mkrt_mpi_create: rank %llu of %d could not start its "
                              "layer (%s), so no rank does. Fix: see that rank's message.",
                              (unsigned long long)(v[1] - 1), m->size, mkrt_status_name(st));
    }
    for (int i = 0; i < NFIELDS; i++)
        if (v[2 + 2 * i] != UINT64_MAX - v[3 + 2 * i])
            return mkrt__mpi_fail(err, MKRT_EINVAL, "mkrt_mpi_create: mkrt_mpi_config.%s differs "
                                  "between the ranks (from %llu to %llu; this rank: %llu). Fix: "
                                  "pass the same configuration on every rank.", names[i],
                                  (unsigned long long)(UINT64_MAX - v[3 + 2 * i]),
                                  (unsigned long long)v[2 + 2 * i], (unsigned long long)f[i]);
    return MKRT_OK;
}

/* Which ranks share this rank's node (same MPI processor name), for the
 * per-class byte counters: an allgather of a hash of the name (FNV-1a; a
 * collision only files a remote rank's bytes under this node). */
static mkrt_status find_node(struct mkrt_mpi *m, mkrt_error *err)
{
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    uint64_t h = 1469598103934665603u;
    if (MPI_Get_processor_name(name, &len) == MPI_SUCCESS)
        for (int i = 0; i < len; i++)
            h = (h ^ (unsigned char)name[i]) * 1099511628211u;
    uint64_t *all = m->node_hash;
    MPI_Request req;
    int rc = MPI_Iallgather(&h, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, m->comm, &req);
    if (rc == MPI_SUCCESS)
        rc = wait_bounded(m, &req, "MPI_Iallgather");
    if (rc == MPI_SUCCESS)
        for (int r = 0; r < m->size; r++)
            m->same_node[r] = all[r] == h;
    return rc == MPI_SUCCESS ? MKRT_OK : mpi_fail(err, rc, "MPI_Iallgather");
}

/* mkrt_mpi_create, and mkrt_mpi_create_failed where failed is not
 * MKRT_OK (rt NULL, err holding the caller's message): a rank that failed
 * before, or is refused memory for the layer, still joins the collectives
 * below on a stand-in, so that every rank fails the create alike (agree)
 * instead of leaving the others waiting in MPI_Comm_idup. */
static mkrt_status create(const mkrt_mpi_config *cfg, mkrt_runtime *rt, mkrt_mpi **out, mkrt_status failed,
                          mkrt_error *err)
{
    /* Argument errors are found before any MPI call, on this rank alone. */
    mkrt_status st = check_config(cfg, rt, err);
    if (st != MKRT_OK)
        return st;
    mkrt__mutex *lock = state_lock_get();
    if (lock == NULL)
        return mkrt__mpi_fail(err, MKRT_ENOMEM, "mkrt_mpi_create: initialising libmkrt_mpi's "
                              "state mutex (mtx_init) failed. Fix: free memory.");
    mkrt__mutex_lock(lock);
    st = mpi_ready(err);
    if (st != MKRT_OK)
        goto out_unlock;
    struct mkrt_mpi stand_in;
    struct mkrt_mpi *m = failed == MKRT_OK ? mkrt__alloc_zeroed(sizeof *m, MKRT_CACHE_LINE) : NULL;
    const bool refused = m == NULL;
    if (refused) {
        memset(&stand_in, 0, sizeof stand_in);
        m = &stand_in;
    }
    m->cfg = *cfg;
    m->rt = rt;
    m->fault = mkrt__mpi_test_fault;
    MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m->size);
    MPI_Request req;
    int rc = MPI_Comm_idup(MPI_COMM_WORLD, &m->comm, &req);
    if (rc == MPI_SUCCESS)
        rc = wait_bounded(m, &req, "MPI_Comm_idup");
    if (rc != MPI_SUCCESS) {
        if (!refused)
            mkrt__free(m, sizeof *m);
        st = mpi_fail(err, rc, "MPI_Comm_idup");
        goto out_unlock;
    }
    /* Errors come back to the progress thread, which reports and aborts. */
    MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
    m->per_rank = (uint32_t)((cfg->handles + (uint64_t)m->size - 1) / (uint64_t)m->size);
    if (failed == MKRT_OK)
        failed = refused ? mkrt__mpi_fail(err, MKRT_ENOMEM, "mkrt_mpi_create: out of memory for the layer "
                                          "(%zu bytes). Fix: free memory.", sizeof *m)
                         : open_local(m, err);
    st = agree(m, failed, err);
    if (st == MKRT_OK)
        st = find_node(m, err); /* every rank got here: the allgather is joined */
    if (st != MKRT_OK)
        goto out_free;
    if (mkrt__mutex_init(&m->coll_lock) != 0)
        goto nomem;
    if (mkrt__mutex_init(&m->mpi_lock) != 0) {
        mkrt__mutex_destroy(&m->coll_lock);
        goto nomem;
    }
    if (mkrt__thread_start(&m->thread, mkrt__mpi_progress_main, m) != 0) {
        mkrt__mutex_destroy(&m->mpi_lock);
        mkrt__mutex_destroy(&m->coll_lock);
        goto nomem;
    }
    live_layers++;
    mkrt__mutex_unlock(&state_lock);
    *out = m;
    return MKRT_OK;
nomem:
    st = mkrt__mpi_fail(err, MKRT_ENOMEM, "mkrt_mpi_create: no memory or thread for the progress "
                        "thread. Fix: free memory, or fewer threads.");
out_free:
    MPI_Comm_free(&m->comm);
    teardown(m, !refused);
out_unlock:
    mkrt__mutex_unlock(&state_lock);
    return st;
}

mkrt_status mkrt_mpi_create(const mkrt_mpi_config *cfg, mkrt_runtime *rt, mkrt_mpi **out,
                            mkrt_error *err)
{
    if (out != NULL)
        *out = NULL;
    if (cfg == NULL || rt == NULL || out == NULL)
        return mkrt__mpi_fail(err, MKRT_EINVAL, "mkrt_mpi_create: %s is NULL. Fix: pass a "
                              "configuration, the rank's runtime and where to put the layer.",
                              cfg == NULL ? "cfg" : rt == NULL ? "rt" : "out");
    return create(cfg, rt, out, MKRT_OK, err);
}

mkrt_status mkrt_mpi_create_failed(const mkrt_mpi_config *cfg, mkrt_status why, mkrt_error *err)
{
    if (cfg == NULL || why >= MKRT_OK || strcmp(mkrt_status_name(why), "MKRT_UNKNOWN_STATUS") == 0)
        return mkrt__mpi_fail(err, MKRT_EINVAL, "mkrt_mpi_create_failed: %s (status %d). Fix: pass the "
                              "configuration the other ranks pass to mkrt_mpi_create and this rank's "
                              "failure, an MKRT_E* status.", cfg == NULL ? "cfg is NULL" : "not a failure",
                              (int)why);
    mkrt_mpi *unused = NULL;
    /* The caller's message stays in err; mine gets the join's own failure
     * (its arguments, MPI), if any. */
    mkrt_error mine = {MKRT_OK, ""};
    const mkrt_status st = create(cfg, NULL, &unused, why, &mine);
    if (mine.status != MKRT_OK && err != NULL)
        *err = mine;
    return st;
}

mkrt_status mkrt_mpi_destroy(mkrt_mpi *m, mkrt_error *err)
{
    if (m == NULL)
        return MKRT_OK;
    mkrt_status st = mkrt_mpi_quiesce(m, MKRT_TIMEOUT_INFINITE);
    if (st != MKRT_OK)
        mkrt__mpi_fail(err, st, "mkrt_mpi_destroy: the final quiescence ended with %s; items may "
                       "be left. Fix: keep the runtime open until mkrt_mpi_destroy() returns.",
                       mkrt_status_name(st));
    atomic_store(&m->stop, 1);
    mkrt__thread_join(m->thread);
    /* The thread is gone: MPI calls are ours again (SERIALIZED). m's
     * create initialised state_lock. */
    mkrt__mutex_lock(&state_lock);
    MPI_Comm_free(&m->comm);
    mkrt__mutex_destroy(&m->mpi_lock);
    mkrt__mutex_destroy(&m->coll_lock);
    teardown(m, true);
    live_layers--;
    mkrt__mutex_unlock(&state_lock);
    return st;
}
