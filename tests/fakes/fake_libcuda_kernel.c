/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/fakes/fake_libcuda_kernel.c - the stand-in libcuda.so.1's "kernel"
 * side (tests only; the modes are described in fake_libcuda.c): the gate
 * synchronising calls wait at while kernels run, streams, async copies,
 * and launches, whose threads run the megakernel's loop in C. Built into
 * the same shared object as fake_libcuda.c. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../src/backend/mk_loop.h"
#include "base/thread.h"
#include "fake_libcuda.h"

/* Kernels in flight in the process (launched, not finished, not faulted):
 * a synchronising call waits for none to be left, as the real driver's
 * module loads, allocations and cuCtxSynchronize do; launches wait while a
 * synchronising call is pending (the context's lock). A real driver waits
 * for ever behind a persistent kernel; this one gives up after
 * FAKE_CUDA_SYNC_TIMEOUT_MS (default 20000) and aborts the process loudly,
 * so a test fails instead of hanging. */
static _Atomic int kernels_running;
static _Atomic int syncs_pending;
static _Atomic uint64_t syncs_done; /* synchronising calls that waited and got through */

int fake_cuda_kernels_running(void);
int fake_cuda_kernels_running(void)
{
    return atomic_load(&kernels_running);
}

void nap_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

static long sync_timeout_ms(void)
{
    const char *t = getenv("FAKE_CUDA_SYNC_TIMEOUT_MS");
    return t ? atol(t) : 20000;
}

void sync_gate(const char *what)
{
    atomic_fetch_add(&syncs_pending, 1);
    long waited_us = 0, limit_us = sync_timeout_ms() * 1000;
    int had_to_wait = 0;
    while (atomic_load(&kernels_running) > 0) {
        had_to_wait = 1;
        if (waited_us >= limit_us) {
            fprintf(stderr, "fake libcuda: %s blocked for %ld ms behind %d running kernel(s): on a real "
                            "GPU this call hangs for as long as they run. Aborting.\n",
                    what, waited_us / 1000, atomic_load(&kernels_running));
            abort();
        }
        nap_us(100);
        waited_us += 100;
    }
    if (had_to_wait)
        atomic_fetch_add(&syncs_done, 1);
    atomic_fetch_sub(&syncs_pending, 1);
}

/* How many synchronising calls had to wait for a kernel to leave. */
unsigned long long fake_cuda_syncs_waited(void);
unsigned long long fake_cuda_syncs_waited(void)
{
    return (unsigned long long)atomic_load(&syncs_done);
}

/* Streams: a launch is a thread that first waits for the stream's previous
 * launch to finish (stream order), then runs; the kernel's stream reports
 * on it. */
typedef struct fake_stream fake_stream;
typedef struct fake_launch_rec {
    mkrt__thread thread;
    struct fake_launch_rec *prev; /* joined by this one's thread; freed with the stream */
    fake_stream *s;
    mkrt__mk_control *ctl;        /* the megakernel's control block, or NULL */
    mkrt__mk_loop_hooks hooks;
    unsigned long long app_out;  /* the application kernel: *app_out = app_value */
    unsigned long long app_value;
    _Atomic int counted;         /* 1 while in kernels_running */
} fake_launch_rec;

struct fake_stream {
    fake_launch_rec *last;       /* latest launch, joined at destroy; ->prev: the earlier ones */
    _Atomic int inflight;        /* launched, not finished */
    _Atomic int faulted;
    _Atomic(fake_launch_rec *) current; /* running now */
    mkrt__thread watch;
    int watching;
    _Atomic int closing;
    mkrt__mutex copy_lock;   /* the copies queued on the stream */
    struct fake_copy *copies, **copies_tail;
};

/* Async copies complete on their stream, not at the call: they are done
 * when the stream is synchronised or queried, so a missing
 * synchronisation leaves the destination stale. */
typedef struct fake_copy {
    void *dst;
    const void *src;
    size_t bytes;
    struct fake_copy *next;
} fake_copy;

static void run_copies(fake_stream *s)
{
    mkrt__mutex_lock(&s->copy_lock);
    for (fake_copy *c = s->copies, *next; c != NULL; c = next) {
        next = c->next;
        if ((uintptr_t)c->src % 8 == 0 && c->bytes % 8 == 0) {
            /* The copy engine reads words, beside a kernel that may write
             * them (the watchdog's copy of a hung kernel's progress words).
             * acquire: as the host's loads of mapped progress words pair
             * with the loop's release stores (mk_host.c, describe_progress):
             * a hung block's work before its last record is visible to the
             * copies that bring the state home after it. */
            for (size_t i = 0; i < c->bytes / 8; i++) {
                uint64_t w = atomic_load_explicit((_Atomic uint64_t *)c->src + i, memory_order_acquire);
                memcpy((char *)c->dst + 8 * i, &w, 8);
            }
        } else {
            memcpy(c->dst, c->src, c->bytes);
        }
        free(c);
    }
    s->copies = NULL;
    s->copies_tail = &s->copies;
    mkrt__mutex_unlock(&s->copy_lock);
}

static int queue_copy(void *stream, void *dst, const void *src, size_t bytes)
{
    fake_stream *s = stream;
    if (atomic_load(&sticky))
        return E_ILLEGAL_ADDRESS;
    if (s == NULL) {
        fprintf(stderr, "fake libcuda: an async copy on the legacy default stream, which waits for "
                        "every kernel: mkrt must use its own non-blocking streams. Aborting.\n");
        abort();
    }
    fake_copy *c = calloc(1, sizeof *c);
    if (c == NULL)
        return 2;
    *c = (fake_copy){dst, src, bytes, NULL};
    mkrt__mutex_lock(&s->copy_lock);
    *s->copies_tail = c;
    s->copies_tail = &c->next;
    mkrt__mutex_unlock(&s->copy_lock);
    return OK;
}

/* Host-to-device copies by where their source lies (fake_host_kind), and
 * stream synchronisations: what the tests of the copy paths count. */
static _Atomic unsigned long long htod_by_kind[3];
static _Atomic unsigned long long stream_syncs;

void fake_cuda_copies(unsigned long long *registered, unsigned long long *pinned, unsigned long long *other);
void fake_cuda_copies(unsigned long long *registered, unsigned long long *pinned, unsigned long long *other)
{
    *registered = atomic_load(&htod_by_kind[1]);
    *pinned = atomic_load(&htod_by_kind[2]);
    *other = atomic_load(&htod_by_kind[0]);
}

unsigned long long fake_cuda_syncs(void);
unsigned long long fake_cuda_syncs(void)
{
    return atomic_load(&stream_syncs);
}

int fake_htod_async(unsigned long long dst, const void *src, size_t bytes, void *s)
{
    atomic_fetch_add(&htod_by_kind[fake_host_kind(src)], 1);
    return queue_copy(s, fake_dev(dst), src, bytes);
}

int fake_dtoh_async(void *dst, unsigned long long src, size_t bytes, void *s)
{
    return queue_copy(s, dst, fake_dev(src), bytes);
}

static void uncount(fake_launch_rec *r)
{
    if (atomic_exchange(&r->counted, 0))
        atomic_fetch_sub(&kernels_running, 1);
}

int fake_stream_create(void **p, unsigned flags)
{
    (void)flags;
    fake_stream *s = calloc(1, sizeof(fake_stream));
    if (s == NULL)
        return 2;
    mkrt__mutex_init(&s->copy_lock);
    s->copies_tail = &s->copies;
    *p = s;
    atomic_fetch_add(&live, 1);
    return OK;
}

int fake_stream_destroy(void *p)
{
    fake_stream *s = p;
    atomic_store(&s->closing, 1);
    if (s->last != NULL)
        mkrt__thread_join(s->last->thread);
    if (s->watching)
        mkrt__thread_join(s->watch);
    for (fake_launch_rec *r = s->last, *prev; r != NULL; r = prev) {
        prev = r->prev;
        free(r);
    }
    run_copies(s);
    mkrt__mutex_destroy(&s->copy_lock);
    free(s);
    atomic_fetch_sub(&live, 1);
    return OK;
}

/* Waits for the stream's kernels (a copy stream has none: see copies). */
int fake_stream_sync(void *p)
{
    fake_stream *s = p;
    atomic_fetch_add(&stream_syncs, 1);
    run_copies(s);
    if (atomic_load(&sticky))
        return E_ILLEGAL_ADDRESS;
    long waited_us = 0, limit_us = sync_timeout_ms() * 1000;
    while (atomic_load(&s->inflight) > 0 && !atomic_load(&s->faulted)) {
        if (waited_us >= limit_us) {
            fprintf(stderr, "fake libcuda: cuStreamSynchronize blocked for %ld ms on a stream whose "
                            "kernel runs on. Aborting.\n", waited_us / 1000);
            abort();
        }
        nap_us(100);
        waited_us += 100;
    }
    return atomic_load(&s->faulted) ? E_ILLEGAL_ADDRESS : OK;
}

int fake_stream_query(void *p)
{
    fake_stream *s = p;
    run_copies(s);
    return atomic_load(&s->faulted) ? E_ILLEGAL_ADDRESS : atomic_load(&s->inflight) > 0 ? E_NOT_READY : OK;
}

int fake_ctx_synchronize(void)
{
    sync_gate("cuCtxSynchronize");
    return OK;
}

static uint32_t fake_user_op(uint32_t op, uint32_t in, uint32_t out, uint32_t param, uint64_t *cells,
                             uint32_t cell_count)
{
    if (in >= cell_count || out >= cell_count)
        return (uint32_t)-2; /* MKRT_EINVAL */
    switch (op) {
    case 16:
        cells[out] = cells[in] * 3 + param;
        return 0;
    case 17:
        if (param == 0)
            return (uint32_t)-2;
        cells[out] ^= param;
        return 0;
    case 18:
        for (;;) { /* a hung op: shutdown cannot reach it */
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    case 19: { /* a slow op: param ms, then a plain update */
        struct timespec ts = {(time_t)(param / 1000), (long)(param % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        cells[out] = cells[in] + 1;
        return 0;
    }
    default:
        return (uint32_t)-10; /* MKRT_ENOTSUP */
    }
}

static _Atomic uint64_t level_nap_ns; /* FAKE_CUDA_LEVEL_NAP_US, see fake_launch */

/* fault mode: the loop stops (as a faulting kernel does) in this batch. */
static _Atomic uint64_t fault_batch;
static _Atomic uint32_t fault_layer;

static int launch_thread(void *p)
{
    fake_launch_rec *r = p;
    fake_stream *s = r->s;
    if (r->prev != NULL) /* stream order; the record is freed with the stream (fault_watch may read it) */
        mkrt__thread_join(r->prev->thread);
    if (!atomic_load(&s->faulted)) {
        atomic_store(&s->current, r);
        if (r->ctl != NULL) {
            mkrt__mk_loop_run(r->ctl, &r->hooks);
        } else if (r->app_out != 0) { /* the application's kernel: a little work, one store */
            nap_us(200);
            unsigned long long *out = fake_dev(r->app_out);
            *out = r->app_value;
        }
        atomic_store(&s->current, NULL);
    }
    uncount(r);
    atomic_fetch_sub(&s->inflight, 1);
    return 0;
}

static int start_launch(fake_stream *s, fake_launch_rec *r)
{
    while (atomic_load(&syncs_pending) > 0) /* a synchronising call holds the context */
        nap_us(50);
    r->s = s;
    r->prev = s->last;
    atomic_store(&r->counted, 1);
    atomic_fetch_add(&kernels_running, 1);
    atomic_fetch_add(&s->inflight, 1);
    if (mkrt__thread_start(&r->thread, launch_thread, r) != 0) {
        uncount(r);
        atomic_fetch_sub(&s->inflight, 1);
        free(r);
        return 2;
    }
    s->last = r;
    return OK;
}

static int fake_launch(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                       unsigned bz, unsigned smem, void *stream, void **params)
{
    (void)gy;
    (void)gz;
    (void)by;
    (void)bz;
    (void)smem;
    if (is("toolarge") || gx > SMS * PER_SM || bx > 1024)
        return E_TOO_LARGE;
    fake_stream *s = stream;
    if (s == NULL) {
        fprintf(stderr, "fake libcuda: a launch on the legacy default stream, which synchronises "
                        "with every other stream: mkrt must use its own non-blocking streams.\n");
        abort();
    }
    if (atomic_load(&s->faulted) || atomic_load(&sticky))
        return E_ILLEGAL_ADDRESS; /* sticky */
    fake_module *m = f;
    fake_launch_rec *r = calloc(1, sizeof *r);
    if (r == NULL)
        return 2;
    unsigned long long ctl;
    memcpy(&ctl, params[0], sizeof ctl);
    r->ctl = (mkrt__mk_control *)(uintptr_t)ctl;
    r->hooks.blocks = gx;
    r->hooks.dev = fake_dev;
    r->hooks.user_op = m->linked ? fake_user_op : NULL;
    /* FAKE_CUDA_LEVEL_NAP_US: each traversal level takes at least that
     * long (a long traversal for the watchdog's tests). relaxed: read by
     * the loop, which this launch's thread start orders after the store. */
    const char *nap = getenv("FAKE_CUDA_LEVEL_NAP_US");
    atomic_store_explicit(&level_nap_ns, nap ? strtoull(nap, NULL, 10) * 1000u : 0, memory_order_relaxed);
    r->hooks.level_nap_ns = &level_nap_ns;
    if (is("fault")) {
        /* A "fault": the loop parks in that batch (the hang hook, left
         * through shutdown) and fault_watch reports the stream faulted. */
        r->hooks.hang_batch = &fault_batch;
        r->hooks.hang_after_layer = &fault_layer;
    }
    return start_launch(s, r);
}

/* In fault mode the loop parks in the faulting batch until shutdown; a
 * real faulted kernel is gone at once. Watch for that and end it. */
static int fault_watch(void *p)
{
    fake_stream *s = p;
    while (!atomic_load(&s->closing)) {
        uint64_t fb = atomic_load(&fault_batch);
        fake_launch_rec *r = atomic_load(&s->current);
        if (r != NULL && r->ctl != NULL && fb != 0 &&
            atomic_load_explicit(&r->ctl->doorbell, memory_order_acquire) >= fb) {
            atomic_store(&s->faulted, 1); /* the parked loop leaves at shutdown */
            atomic_store(&sticky, 1);
            uncount(r);
            return 0;
        }
        nap_us(200);
    }
    return 0;
}

int fake_launch_entry(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                      unsigned bz, unsigned smem, void *stream, void **params)
{
    fake_stream *s = stream;
    if (is("fault") && s != NULL && !s->watching) {
        const char *b = getenv("FAKE_CUDA_FAULT_BATCH");
        atomic_store_explicit(&fault_layer, 0, memory_order_relaxed);
        /* release: read by the loop's acquire of hang_batch. */
        atomic_store_explicit(&fault_batch, b ? strtoull(b, NULL, 10) : 3, memory_order_release);
    }
    int r = fake_launch(f, gx, gy, gz, bx, by, bz, smem, stream, params);
    if (r == OK && is("fault") && !s->watching && mkrt__thread_start(&s->watch, fault_watch, s) == 0)
        s->watching = 1;
    return r;
}

/* The application's own kernel (cuLaunchKernel of "fake_app_kernel"):
 * params {CUdeviceptr out, unsigned long long value}: stores value at out. */
int fake_launch_kernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                       unsigned bz, unsigned smem, void *stream, void **params, void **extra)
{
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)smem, (void)extra;
    if (f != (void *)&app_kernel_marker || stream == NULL)
        return E_INVALID_VALUE;
    fake_launch_rec *r = calloc(1, sizeof *r);
    if (r == NULL)
        return 2;
    memcpy(&r->app_out, params[0], sizeof r->app_out);
    memcpy(&r->app_value, params[1], sizeof r->app_value);
    return start_launch(stream, r);
}
