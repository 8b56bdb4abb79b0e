/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/src/mkrt_mpi.c - the layer's life cycle (create, destroy), routing
 * (publish, op_emit) and counters. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_internal.h"

static mkrt_status fail(mkrt_error *err, mkrt_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static mkrt_status fail(mkrt_error *err, mkrt_status st, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        err->status = st;
    }
    return st;
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

static mkrt_status check_config(const mkrt_mpi_config *c, mkrt_error *err)
{
    if (c->partition != MKRT_MPI_BLOCK && c->partition != MKRT_MPI_HASH)
        return fail(err, MKRT_EINVAL, "mkrt_mpi_config.partition is %d, not MKRT_MPI_BLOCK (0) or "
                    "MKRT_MPI_HASH (1). Fix: pick one.", (int)c->partition);
    if (c->handles == 0)
        return fail(err, MKRT_EINVAL, "mkrt_mpi_config.handles is 0. Fix: the number of global "
                    "handles to split, at most the runtime's cells.");
    if (c->batch_items == 0 || c->batch_items > MKRT_MPI_BATCH_MAX)
        return fail(err, MKRT_EINVAL, "mkrt_mpi_config.batch_items is %u, outside 1..%u. Fix: "
                    "4096 (the default).", c->batch_items, MKRT_MPI_BATCH_MAX);
    if (c->buffers == 0 || c->buffers > MKRT_MPI_BUFFERS_MAX)
        return fail(err, MKRT_EINVAL, "mkrt_mpi_config.buffers is %u, outside 1..%u. Fix: 8 (the "
                    "default).", c->buffers, MKRT_MPI_BUFFERS_MAX);
    if (c->wait_timeout_ms == 0 || c->wait_timeout_ms > MKRT_MPI_TIMEOUT_MAX ||
        c->hold_ms >= c->wait_timeout_ms)
        return fail(err, MKRT_EINVAL, "mkrt_mpi_config.wait_timeout_ms is %u and hold_ms %u: "
                    "need 1 <= wait_timeout_ms <= %u and hold_ms below it. Fix: 30000 and 0 (the "
                    "defaults).", c->wait_timeout_ms, c->hold_ms, MKRT_MPI_TIMEOUT_MAX);
    return MKRT_OK;
}

/* Frees what create made (the thread is not running). */
static void teardown(struct mkrt_mpi *m)
{
    for (int r = 0; m->out != NULL && r < m->size; r++)
        mkrt__mpi_outbox_fini(&m->out[r]);
    for (int r = 0; m->in != NULL && r < m->size; r++) {
        mkrt_producer_close(m->in[r].prod);
        free(m->in[r].items);
    }
    free(m->out);
    free(m->in);
    free(m);
}

static mkrt_status mpi_fail(mkrt_error *err, int rc, const char *call)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error %d", rc);
    return fail(err, MKRT_EDEVICE, "mkrt_mpi_create: %s failed: %s. Fix: check the MPI "
                "installation and the launcher (mpirun).", call, text);
}

mkrt_status mkrt_mpi_create(const mkrt_mpi_config *cfg, mkrt_runtime *rt, mkrt_mpi **out,
                            mkrt_error *err)
{
    if (out != NULL)
        *out = NULL;
    if (cfg == NULL || rt == NULL || out == NULL)
        return fail(err, MKRT_EINVAL, "mkrt_mpi_create: cfg, rt or out is NULL. Fix: pass a "
                    "configuration, the rank's runtime and where to put the layer.");
    mkrt_status st = check_config(cfg, err);
    if (st != MKRT_OK)
        return st;
    int inited = 0, provided = 0, owns = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
        if (rc != MPI_SUCCESS)
            return mpi_fail(err, rc, "MPI_Init_thread");
        owns = 1;
    } else {
        MPI_Query_thread(&provided);
    }
    if (provided < MPI_THREAD_SERIALIZED) {
        if (owns)
            MPI_Finalize();
        return fail(err, MKRT_ENOTSUP, "mkrt_mpi_create: MPI gives thread level %d, below "
                    "MPI_THREAD_SERIALIZED (%d). Fix: MPI_Init_thread with MPI_THREAD_SERIALIZED "
                    "or an MPI built with thread support.", provided, MPI_THREAD_SERIALIZED);
    }
    struct mkrt_mpi *m = calloc(1, sizeof *m);
    if (m == NULL)
        goto nomem_early;
    m->cfg = *cfg;
    m->rt = rt;
    m->owns_mpi = owns;
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &m->comm);
    if (rc != MPI_SUCCESS) {
        free(m);
        st = mpi_fail(err, rc, "MPI_Comm_dup");
        goto out_mpi;
    }
    /* Errors come back to the progress thread, which reports and aborts. */
    MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(m->comm, &m->rank);
    MPI_Comm_size(m->comm, &m->size);
    m->per_rank = (uint32_t)((cfg->handles + (uint64_t)m->size - 1) / (uint64_t)m->size);
    m->out = calloc((size_t)m->size, sizeof *m->out);
    m->in = calloc((size_t)m->size, sizeof *m->in);
    if (m->out == NULL || m->in == NULL)
        goto nomem;
    for (int r = 0; r < m->size; r++) {
        if (r == m->rank)
            continue;
        if (mkrt__mpi_outbox_init(&m->out[r], cfg->buffers, cfg->batch_items) != 0)
            goto nomem;
        m->in[r].items = malloc((size_t)cfg->batch_items * sizeof(mkrt_item));
        if (m->in[r].items == NULL)
            goto nomem;
        mkrt_error perr = {0};
        m->in[r].prod = mkrt_producer_open(rt, &perr);
        if (m->in[r].prod == NULL) {
            st = fail(err, perr.status, "mkrt_mpi_create: opening the producer for rank %d of %d "
                      "failed: %s (one producer per other rank is needed; Fix: raise "
                      "mkrt_config.max_producers to at least the ranks)", r, m->size, perr.message);
            goto out_free;
        }
    }
    if (pthread_mutex_init(&m->coll_lock, NULL) != 0)
        goto nomem;
    if (pthread_cond_init(&m->coll_done, NULL) != 0) {
        pthread_mutex_destroy(&m->coll_lock);
        goto nomem;
    }
    if (pthread_create(&m->thread, NULL, mkrt__mpi_progress_main, m) != 0) {
        pthread_cond_destroy(&m->coll_done);
        pthread_mutex_destroy(&m->coll_lock);
        goto nomem;
    }
    *out = m;
    return MKRT_OK;
nomem:
    st = fail(err, MKRT_ENOMEM, "mkrt_mpi_create: out of memory (or threads) for %d ranks x %u "
              "buffers of %u items. Fix: fewer or smaller buffers, or free memory.", m->size,
              cfg->buffers, cfg->batch_items);
out_free:
    MPI_Comm_free(&m->comm);
    teardown(m);
out_mpi:
    if (owns)
        MPI_Finalize();
    return st;
nomem_early:
    st = fail(err, MKRT_ENOMEM, "mkrt_mpi_create: out of memory. Fix: free memory.");
    goto out_mpi;
}

mkrt_status mkrt_mpi_destroy(mkrt_mpi *m, mkrt_error *err)
{
    if (m == NULL)
        return MKRT_OK;
    mkrt_status st = mkrt_mpi_quiesce(m, MKRT_TIMEOUT_INFINITE);
    if (st != MKRT_OK)
        fail(err, st, "mkrt_mpi_destroy: the final quiescence ended with %s; items may be left. "
             "Fix: keep the runtime open until mkrt_mpi_destroy() returns.", mkrt_status_name(st));
    atomic_store(&m->stop, 1);
    pthread_join(m->thread, NULL);
    /* The thread is gone: MPI calls are ours again (SERIALIZED). */
    MPI_Comm_free(&m->comm);
    pthread_cond_destroy(&m->coll_done);
    pthread_mutex_destroy(&m->coll_lock);
    int owns = m->owns_mpi;
    teardown(m);
    if (owns)
        MPI_Finalize();
    return st;
}

int mkrt_mpi_rank(const mkrt_mpi *m)
{
    return m == NULL ? -1 : m->rank;
}

int mkrt_mpi_size(const mkrt_mpi *m)
{
    return m == NULL ? 0 : m->size;
}

/* Items from i on with the same owner as items[i]. */
static size_t run_length(const struct mkrt_mpi *m, const mkrt_item *items, size_t i, size_t n,
                         int *owner)
{
    *owner = mkrt__mpi_owner(m, items[i].out);
    size_t j = i + 1;
    while (j < n && mkrt__mpi_owner(m, items[j].out) == *owner)
        j++;
    return j - i;
}

static uint64_t realtime_deadline(uint64_t timeout_ns)
{
    if (timeout_ns == 0)
        return 0;
    if (timeout_ns == MKRT_TIMEOUT_INFINITE)
        return UINT64_MAX;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return timeout_ns > UINT64_MAX - 1 - now ? UINT64_MAX : now + timeout_ns;
}

mkrt_status mkrt_mpi_publish(mkrt_mpi *m, mkrt_producer *p, const mkrt_item *items, size_t n,
                             uint64_t timeout_ns, size_t *published, mkrt_error *err)
{
    if (published != NULL)
        *published = 0;
    if (m == NULL || p == NULL || (items == NULL && n > 0))
        return fail(err, MKRT_EINVAL, "mkrt_mpi_publish: m or p is NULL, or items is NULL with "
                    "n = %zu. Fix: pass the layer, a producer and the items.", n);
    const uint64_t deadline = realtime_deadline(timeout_ns);
    size_t done = 0;
    mkrt_status st = MKRT_OK;
    while (done < n && st == MKRT_OK) {
        int owner;
        size_t len = run_length(m, items, done, n, &owner), k = 0;
        if (owner == m->rank) {
            st = mkrt_publish_some(p, items + done, len, timeout_ns, &k, err);
        } else {
            k = mkrt__mpi_outbox_append(m, owner, items + done, len, 0, deadline);
            if (k < len)
                st = fail(err, atomic_load(&m->stop) ? MKRT_ECLOSED : MKRT_ETIMEDOUT,
                          "mkrt_mpi_publish: the outbox to rank %d stayed full (%u buffers of %u "
                          "items); %zu of %zu items went. Fix: a longer timeout, or more buffers.",
                          owner, m->cfg.buffers, m->cfg.batch_items, done + k, n);
        }
        done += k;
    }
    if (published != NULL)
        *published = done;
    return st;
}

mkrt_status mkrt_mpi_op_emit(mkrt_mpi *m, const mkrt_op_ctx *ctx, const mkrt_item *items, size_t n,
                             size_t *emitted)
{
    if (emitted != NULL)
        *emitted = 0;
    if (m == NULL || ctx == NULL || (items == NULL && n > 0))
        return MKRT_EINVAL;
    size_t done = 0;
    while (done < n) {
        int owner;
        size_t len = run_length(m, items, done, n, &owner);
        if (owner == m->rank) {
            mkrt_status st = mkrt_op_emit(ctx, items + done, len);
            if (st != MKRT_OK)
                return st;
        } else if (mkrt__mpi_outbox_append(m, owner, items + done, len, 1, 0) != len) {
            atomic_fetch_add_explicit(&m->deferred, 1, memory_order_relaxed); /* statistic only */
            return MKRT_EAGAIN;
        }
        done += len;
        if (emitted != NULL)
            *emitted = done;
    }
    return MKRT_OK;
}

mkrt_status mkrt_mpi_stats_read(const mkrt_mpi *m, mkrt_mpi_stats *out)
{
    if (m == NULL || out == NULL)
        return MKRT_EINVAL;
    struct mkrt_mpi *w = (struct mkrt_mpi *)m; /* atomics are read only */
    out->forwarded = atomic_load(&w->sent);
    out->received = atomic_load(&w->received);
    /* Statistics: relaxed, no ordering with anything. */
    out->messages_sent = atomic_load_explicit(&w->msgs_sent, memory_order_relaxed);
    out->messages_received = atomic_load_explicit(&w->msgs_received, memory_order_relaxed);
    out->deferred = atomic_load_explicit(&w->deferred, memory_order_relaxed);
    out->publish_waits = atomic_load_explicit(&w->publish_waits, memory_order_relaxed);
    out->waves = atomic_load_explicit(&w->waves, memory_order_relaxed);
    return MKRT_OK;
}
