/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/fakes/fake_libcuda.c - a stand-in libcuda.so.1 (tests only).
 *
 * FAKE_CUDA_MODE selects the loader's failure paths:
 *   stub      cuInit returns CUDA_ERROR_STUB_LIBRARY (34)
 *   nodevice  cuInit returns CUDA_ERROR_NO_DEVICE (100)
 *   old       cuDriverGetVersion reports 11080
 *   nocoop    the device lacks cooperative launch
 *   display   the device has a kernel run-time limit
 *   missing   cuLaunchCooperativeKernel cannot be resolved
 * and the device paths ("ok", the default, is a healthy "Fake GPU"):
 *   ok        device memory (cuMemAlloc) is host memory behind a tagged
 *             address the host cannot dereference; host-mapped memory is
 *             the host pointer; async copies run when their stream is
 *             synchronised or queried; synchronising calls wait while any
 *             kernel runs (see sync_gate); launches queue on their stream
 *             (see launch_thread), and the cooperative launch starts a thread that
 *             runs the megakernel's loop in C (src/backend/mk_loop.h) over
 *             the control block it was given: the real host engine
 *             (cuda_engine.c) and the real dispatcher drive it unchanged.
 *   fault     as ok, but the "kernel" dies in batch FAKE_CUDA_FAULT_BATCH
 *             (default 3) and the stream reports CUDA_ERROR_ILLEGAL_ADDRESS
 *   toolarge  the cooperative launch fails with 720 (grid too large)
 * FAKE_CUDA_LEVEL_NAP_US makes each traversal level of the "kernel" take
 * at least that long; FAKE_CUDA_MAX_ALLOC (bytes) fails every larger
 * cuMemAlloc with CUDA_ERROR_OUT_OF_MEMORY.
 * Linking: cuLinkAddData records whether the PTX defines mkrt_user_op;
 * cuLinkComplete fails with a JIT log when it does not, else returns a
 * "linked module" whose kernel runs these user ops (the tests' CPU ops and
 * tests/cuda/user_ops.cu define the same):
 *   16  cells[out] = cells[in] * 3 + param
 *   17  param == 0: fails with MKRT_EINVAL; else cells[out] ^= param
 *   18  never returns (a hung op), whatever the shutdown flag says
 * fake_cuda_live() returns how many allocations, registrations, streams,
 * modules and context references are outstanding, for teardown tests. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../src/backend/mk_loop.h"
#include "base/thread.h"

enum { OK = 0, E_INVALID_VALUE = 1, E_STUB = 34, E_NO_DEVICE = 100, E_INVALID_IMAGE = 200,
       E_NOT_FOUND = 500, E_NOT_READY = 600, E_ILLEGAL_ADDRESS = 700, E_TOO_LARGE = 720,
       E_NOT_SUPPORTED = 801 };

#define SMS 132
#define PER_SM 2
#define FATBIN_MAGIC 0xBA55ED50u

static const char linked_image[] = "FAKE-LINKED-MEGAKERNEL";

static const char *mode(void)
{
    const char *m = getenv("FAKE_CUDA_MODE");
    return m ? m : "ok";
}

static int is(const char *m)
{
    return strcmp(mode(), m) == 0;
}

static _Atomic int live; /* outstanding resources */
static void sync_gate(const char *what);

int fake_cuda_live(void);
int fake_cuda_live(void)
{
    return atomic_load(&live);
}

static int fake_init(unsigned flags)
{
    (void)flags;
    return is("stub") ? E_STUB : is("nodevice") ? E_NO_DEVICE : OK;
}

static int fake_version(int *v)
{
    *v = is("old") ? 11080 : 12080;
    return OK;
}

static const char *names[][3] = {
    {"34", "CUDA_ERROR_STUB_LIBRARY", "stub library"},
    {"100", "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {"200", "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {"500", "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {"600", "CUDA_ERROR_NOT_READY", "device not ready"},
    {"700", "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {"720", "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", "too many blocks in cooperative launch"},
};

static int fake_error(int e, const char **s, int which)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (atoi(names[i][0]) == e) {
            *s = names[i][which];
            return OK;
        }
    *s = which == 1 ? "CUDA_ERROR_UNKNOWN" : "unknown error";
    return OK;
}

static int fake_error_name(int e, const char **s)
{
    return fake_error(e, s, 1);
}

static int fake_error_string(int e, const char **s)
{
    return fake_error(e, s, 2);
}

static int fake_count(int *n)
{
    *n = 1;
    return OK;
}

static int fake_get(int *d, int ordinal)
{
    *d = ordinal;
    return OK;
}

static int fake_attr(int *v, int attr, int d)
{
    (void)d;
    switch (attr) {
    case 16: *v = SMS; break;
    case 17: *v = is("display"); break;
    case 19: *v = 1; break;
    case 75: *v = 9; break;
    case 76: *v = 0; break;
    case 95: *v = is("nocoop") ? 0 : 1; break;
    default: *v = 0; break;
    }
    return OK;
}

static int fake_name(char *name, int len, int d)
{
    (void)d;
    strncpy(name, "Fake GPU", (size_t)len);
    return OK;
}

/* Contexts: one primary context; "current" is per thread. */
static int primary_ctx;
static _Thread_local void *current;

/* A sticky error (a faulted kernel) poisons the context: copies, stream
 * synchronisations and launches fail until the last reference to the
 * primary context is released (the next retain makes a fresh one). */
static _Atomic int sticky;
static _Atomic int ctx_refs;

static int fake_retain(void **ctx, int dev)
{
    (void)dev;
    *ctx = &primary_ctx;
    atomic_fetch_add(&ctx_refs, 1);
    atomic_fetch_add(&live, 1);
    return OK;
}

static int fake_release(int dev)
{
    (void)dev;
    if (atomic_fetch_sub(&ctx_refs, 1) == 1)
        atomic_store(&sticky, 0);
    atomic_fetch_sub(&live, 1);
    return OK;
}

static int fake_set_current(void *ctx)
{
    current = ctx;
    return OK;
}

static int fake_get_current(void **ctx)
{
    *ctx = current;
    return OK;
}

/* Modules: the embedded fatbin, or the result of a link. */
typedef struct fake_module {
    int linked; /* runs the user ops */
} fake_module;

static int fake_module_load(void **m, const void *image)
{
    sync_gate("cuModuleLoadData");
    uint32_t magic;
    memcpy(&magic, image, sizeof magic);
    int linked = memcmp(image, linked_image, sizeof linked_image) == 0;
    /* or the application's PTX (tests/shared_gpu.c) */
    if (magic != FATBIN_MAGIC && !linked && strstr(image, ".entry fake_app_kernel") == NULL)
        return E_INVALID_IMAGE;
    fake_module *fm = calloc(1, sizeof *fm);
    fm->linked = linked;
    *m = fm;
    atomic_fetch_add(&live, 1);
    return OK;
}

static int fake_module_unload(void *m)
{
    sync_gate("cuModuleUnload");
    free(m);
    atomic_fetch_sub(&live, 1);
    return OK;
}

static int app_kernel_marker; /* the function handle of "fake_app_kernel" */

static int fake_get_function(void **f, void *m, const char *name)
{
    if (strcmp(name, "fake_app_kernel") == 0) {
        *f = &app_kernel_marker;
        return OK;
    }
    if (strcmp(name, MKRT_MK_KERNEL_SYMBOL) != 0)
        return E_NOT_FOUND;
    *f = m; /* the function knows its module */
    return OK;
}

static int fake_occupancy(int *n, void *f, int block, size_t smem)
{
    (void)f;
    (void)smem;
    *n = block <= 1024 ? PER_SM : 0;
    return OK;
}

/* Memory: host memory throughout. */
static int fake_host_alloc(void **p, size_t bytes, unsigned flags)
{
    sync_gate("cuMemHostAlloc");
    (void)flags;
    *p = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    if (*p == NULL)
        return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
    memset(*p, 0, bytes);
    atomic_fetch_add(&live, 1);
    return OK;
}

static int fake_free_host(void *p)
{
    sync_gate("cuMemFreeHost");
    free(p);
    atomic_fetch_sub(&live, 1);
    return OK;
}

static int fake_host_register(void *p, size_t bytes, unsigned flags)
{
    sync_gate("cuMemHostRegister");
    (void)flags;
    if (p == NULL || bytes == 0)
        return E_INVALID_VALUE;
    atomic_fetch_add(&live, 1);
    return OK;
}

static int fake_host_unregister(void *p)
{
    sync_gate("cuMemHostUnregister");
    (void)p;
    atomic_fetch_sub(&live, 1);
    return OK;
}

static int fake_device_pointer(unsigned long long *d, void *p, unsigned flags)
{
    (void)flags;
    *d = (unsigned long long)(uintptr_t)p;
    return OK;
}

/* Device memory (cuMemAlloc) is host memory behind a tagged address the
 * host cannot dereference (a non-canonical pointer: a missing copy
 * crashes at once); the "kernel" and the copies turn it back (fake_dev). */
#define DEV_TAG 0xDE00000000000000ull

static void *fake_dev(uint64_t a)
{
    return (void *)(uintptr_t)((a & DEV_TAG) == DEV_TAG ? a ^ DEV_TAG : a);
}

/* Every allocation stays on a list (as the driver keeps track of it), so
 * that a leak checker sees the memory of a hung kernel, which the engine
 * keeps only through tagged addresses, as reachable. */
typedef struct dev_block {
    struct dev_block *next, *prev;
    uint64_t pad[2]; /* 32 bytes: the memory after the header stays 16-byte aligned */
} dev_block;
static dev_block dev_blocks = {&dev_blocks, &dev_blocks, {0, 0}};
/* C11 has no static mutex initialiser: the first allocation makes it. */
static mkrt__mutex dev_lock;
static mkrt__once_flag dev_lock_once = MKRT__ONCE_INIT;
static void dev_lock_init(void)
{
    if (mkrt__mutex_init(&dev_lock) != 0) {
        fprintf(stderr, "fake libcuda: cannot create the device memory lock\n");
        abort();
    }
}
static void dev_lock_take(void)
{
    mkrt__call_once(&dev_lock_once, dev_lock_init);
    mkrt__mutex_lock(&dev_lock);
}

static int fake_mem_alloc(unsigned long long *d, size_t bytes)
{
    sync_gate("cuMemAlloc");
    const char *most = getenv("FAKE_CUDA_MAX_ALLOC"); /* a device short of memory */
    if (most != NULL && bytes > strtoull(most, NULL, 10))
        return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
    dev_block *b = malloc(sizeof *b + (bytes ? bytes : 1));
    if (b == NULL)
        return 2;
    memset(b + 1, 0xA5, bytes); /* what fresh device memory holds: nothing useful */
    dev_lock_take();
    b->next = dev_blocks.next;
    b->prev = &dev_blocks;
    dev_blocks.next->prev = b;
    dev_blocks.next = b;
    mkrt__mutex_unlock(&dev_lock);
    *d = (unsigned long long)(uintptr_t)(b + 1) ^ DEV_TAG;
    atomic_fetch_add(&live, 1);
    return OK;
}

static int fake_mem_free(unsigned long long d)
{
    sync_gate("cuMemFree");
    if ((d & DEV_TAG) != DEV_TAG)
        return E_INVALID_VALUE;
    dev_block *b = (dev_block *)fake_dev(d) - 1;
    dev_lock_take();
    b->prev->next = b->next;
    b->next->prev = b->prev;
    mkrt__mutex_unlock(&dev_lock);
    free(b);
    atomic_fetch_sub(&live, 1);
    return OK;
}

/* A synchronous copy on the legacy stream: waits for every kernel. */
static int fake_dtoh(void *dst, unsigned long long src, size_t bytes)
{
    sync_gate("cuMemcpyDtoH");
    memcpy(dst, fake_dev(src), bytes);
    return OK;
}

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

static void nap_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

static long sync_timeout_ms(void)
{
    const char *t = getenv("FAKE_CUDA_SYNC_TIMEOUT_MS");
    return t ? atol(t) : 20000;
}

static void sync_gate(const char *what)
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

static int fake_htod_async(unsigned long long dst, const void *src, size_t bytes, void *s)
{
    return queue_copy(s, fake_dev(dst), src, bytes);
}

static int fake_dtoh_async(void *dst, unsigned long long src, size_t bytes, void *s)
{
    return queue_copy(s, dst, fake_dev(src), bytes);
}

static void uncount(fake_launch_rec *r)
{
    if (atomic_exchange(&r->counted, 0))
        atomic_fetch_sub(&kernels_running, 1);
}

static int fake_stream_create(void **p, unsigned flags)
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

static int fake_stream_destroy(void *p)
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
static int fake_stream_sync(void *p)
{
    fake_stream *s = p;
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

static int fake_stream_query(void *p)
{
    fake_stream *s = p;
    run_copies(s);
    return atomic_load(&s->faulted) ? E_ILLEGAL_ADDRESS : atomic_load(&s->inflight) > 0 ? E_NOT_READY : OK;
}

static int fake_ctx_synchronize(void)
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

static int fake_launch_entry(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
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
static int fake_launch_kernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
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

/* Linking. */
typedef struct fake_link {
    char *errlog;
    size_t errlog_size;
    int has_megakernel, has_user_op;
} fake_link;

static int fake_link_create(unsigned n, int *opts, void **vals, void **state)
{
    fake_link *l = calloc(1, sizeof *l);
    for (unsigned i = 0; i < n; i++) {
        if (opts[i] == 5)
            l->errlog = vals[i];
        if (opts[i] == 6)
            l->errlog_size = (size_t)(uintptr_t)vals[i];
    }
    *state = l;
    atomic_fetch_add(&live, 1);
    return OK;
}

static int fake_link_add(void *state, int type, void *data, size_t size, const char *name, unsigned n,
                         int *opts, void **vals)
{
    (void)size;
    (void)name;
    (void)n;
    (void)opts;
    (void)vals;
    fake_link *l = state;
    if (type == 2) { /* fatbinary: the relocatable megakernel */
        uint32_t magic;
        memcpy(&magic, data, sizeof magic);
        if (magic != FATBIN_MAGIC)
            return E_INVALID_IMAGE;
        l->has_megakernel = 1;
    } else if (type == 1) { /* PTX */
        const char *ptx = data;
        l->has_user_op = strstr(ptx, ".func") != NULL && strstr(ptx, MKRT_MK_USER_OP_SYMBOL) != NULL;
    }
    return OK;
}

static int fake_link_complete(void *state, void **cubin, size_t *size)
{
    fake_link *l = state;
    if (!l->has_megakernel || !l->has_user_op) {
        if (l->errlog != NULL && l->errlog_size > 0)
            strncpy(l->errlog, "error   : Unresolved extern function 'mkrt_user_op'", l->errlog_size - 1);
        return E_INVALID_IMAGE;
    }
    *cubin = (void *)linked_image;
    *size = sizeof linked_image;
    return OK;
}

static int fake_link_destroy(void *state)
{
    free(state);
    atomic_fetch_sub(&live, 1);
    return OK;
}

static int fake_unsupported(void)
{
    return E_NOT_SUPPORTED;
}

int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status);

int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status)
{
    (void)version;
    (void)flags;
    static const struct { const char *name; void *fn; } table[] = {
        {"cuInit", (void *)fake_init},
        {"cuDriverGetVersion", (void *)fake_version},
        {"cuGetErrorName", (void *)fake_error_name},
        {"cuGetErrorString", (void *)fake_error_string},
        {"cuDeviceGetCount", (void *)fake_count},
        {"cuDeviceGet", (void *)fake_get},
        {"cuDeviceGetAttribute", (void *)fake_attr},
        {"cuDeviceGetName", (void *)fake_name},
        {"cuDevicePrimaryCtxRetain", (void *)fake_retain},
        {"cuDevicePrimaryCtxRelease", (void *)fake_release},
        {"cuCtxSetCurrent", (void *)fake_set_current},
        {"cuCtxGetCurrent", (void *)fake_get_current},
        {"cuModuleLoadData", (void *)fake_module_load},
        {"cuModuleUnload", (void *)fake_module_unload},
        {"cuModuleGetFunction", (void *)fake_get_function},
        {"cuOccupancyMaxActiveBlocksPerMultiprocessor", (void *)fake_occupancy},
        {"cuMemHostAlloc", (void *)fake_host_alloc},
        {"cuMemFreeHost", (void *)fake_free_host},
        {"cuMemHostRegister", (void *)fake_host_register},
        {"cuMemHostUnregister", (void *)fake_host_unregister},
        {"cuMemHostGetDevicePointer", (void *)fake_device_pointer},
        {"cuMemAlloc", (void *)fake_mem_alloc},
        {"cuMemFree", (void *)fake_mem_free},
        {"cuMemcpyHtoDAsync", (void *)fake_htod_async},
        {"cuMemcpyDtoH", (void *)fake_dtoh},
        {"cuMemcpyDtoHAsync", (void *)fake_dtoh_async},
        {"cuStreamCreate", (void *)fake_stream_create},
        {"cuStreamDestroy", (void *)fake_stream_destroy},
        {"cuStreamSynchronize", (void *)fake_stream_sync},
        {"cuStreamQuery", (void *)fake_stream_query},
        {"cuLinkCreate", (void *)fake_link_create},
        {"cuLinkAddData", (void *)fake_link_add},
        {"cuLinkComplete", (void *)fake_link_complete},
        {"cuLinkDestroy", (void *)fake_link_destroy},
        {"cuLaunchKernel", (void *)fake_launch_kernel},
        {"cuCtxSynchronize", (void *)fake_ctx_synchronize},
    };
    if (strcmp(symbol, "cuLaunchCooperativeKernel") == 0) {
        *pfn = is("missing") ? NULL : (void *)fake_launch_entry;
        *status = is("missing") ? 1 : 0; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
        return OK;
    }
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(symbol, table[i].name) == 0) {
            *pfn = table[i].fn;
            *status = 0;
            return OK;
        }
    *pfn = (void *)fake_unsupported; /* resolvable, but does nothing useful */
    *status = 0;
    return OK;
}
