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
 * Device memory is modelled: FAKE_CUDA_MEM_TOTAL bytes (default 16 GiB),
 * of which FAKE_CUDA_MEM_OTHERS (default 0) are held by other processes;
 * cuMemAlloc draws the rest down and fails with CUDA_ERROR_OUT_OF_MEMORY
 * (2) past it, cuMemFree gives back, and cuMemGetInfo reports both.
 * FAKE_CUDA_REGISTER_MAX=n: registrations (cuMemHostRegister) after the
 * n-th fail with CUDA_ERROR_NOT_SUPPORTED (801), as on a system that
 * cannot pin more. fake_cuda_copies(&registered, &pinned, &other) counts
 * the host-to-device copies by where their source lies: registered
 * memory, cuMemHostAlloc memory, anything else; fake_cuda_syncs() the
 * stream synchronisations.
 * Linking: cuLinkAddData records whether the PTX defines mkrt_user_op;
 * cuLinkComplete fails with a JIT log when it does not, else returns a
 * "linked module" whose kernel runs these user ops (the tests' CPU ops and
 * tests/cuda/user_ops.cu define the same):
 *   16  cells[out] = cells[in] * 3 + param
 *   17  param == 0: fails with MKRT_EINVAL; else cells[out] ^= param
 *   18  never returns (a hung op), whatever the shutdown flag says
 * fake_cuda_live() returns how many allocations, registrations, streams,
 * modules and context references are outstanding, for teardown tests.
 *
 * Two files, one shared object (mk/tests.mk): this one is the driver's
 * entry point, devices, contexts, modules, memory and linking;
 * fake_libcuda_kernel.c the "kernel": the synchronisation gate, streams,
 * async copies and launches. fake_libcuda.h holds what they share. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../src/backend/mk_loop.h"
#include "base/thread.h"
#include "fake_libcuda.h"

#define FATBIN_MAGIC 0xBA55ED50u

static const char linked_image[] = "FAKE-LINKED-MEGAKERNEL";

static const char *mode(void)
{
    const char *m = getenv("FAKE_CUDA_MODE");
    return m ? m : "ok";
}

int is(const char *m)
{
    return strcmp(mode(), m) == 0;
}

_Atomic int live; /* outstanding resources */

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
    {"2", "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {"34", "CUDA_ERROR_STUB_LIBRARY", "stub library"},
    {"100", "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {"200", "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {"500", "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {"600", "CUDA_ERROR_NOT_READY", "device not ready"},
    {"700", "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {"720", "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", "too many blocks in cooperative launch"},
    {"801", "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
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
_Atomic int sticky;
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

/* Modules: the embedded fatbin, or the result of a link (fake_module). */

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

int app_kernel_marker; /* the function handle of "fake_app_kernel" */

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
/* Host ranges the driver knows, pinned (cuMemHostAlloc) or registered
 * (cuMemHostRegister), so that a copy's source can be told apart. */
#define HOST_RANGES 64
static struct { _Atomic(uintptr_t) at; _Atomic size_t bytes; _Atomic int registered; } ranges[HOST_RANGES];
static _Atomic int registrations;

static void range_add(void *p, size_t bytes, int registered)
{
    for (int i = 0; i < HOST_RANGES; i++) {
        uintptr_t none = 0;
        if (atomic_compare_exchange_strong(&ranges[i].at, &none, (uintptr_t)p)) {
            atomic_store(&ranges[i].bytes, bytes);
            atomic_store(&ranges[i].registered, registered);
            return;
        }
    }
}

static void range_remove(void *p)
{
    for (int i = 0; i < HOST_RANGES; i++)
        if (atomic_load(&ranges[i].at) == (uintptr_t)p) {
            atomic_store(&ranges[i].bytes, 0);
            atomic_store(&ranges[i].at, 0);
            return;
        }
}

/* 1: src lies in registered memory, 2: in pinned memory, 0: elsewhere. */
int fake_host_kind(const void *src)
{
    uintptr_t a = (uintptr_t)src;
    for (int i = 0; i < HOST_RANGES; i++) {
        uintptr_t at = atomic_load(&ranges[i].at);
        if (at != 0 && a >= at && a < at + atomic_load(&ranges[i].bytes))
            return atomic_load(&ranges[i].registered) ? 1 : 2;
    }
    return 0;
}

static int fake_host_alloc(void **p, size_t bytes, unsigned flags)
{
    sync_gate("cuMemHostAlloc");
    (void)flags;
    *p = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    if (*p == NULL)
        return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
    memset(*p, 0, bytes);
    range_add(*p, bytes, 0);
    atomic_fetch_add(&live, 1);
    return OK;
}

static int fake_free_host(void *p)
{
    sync_gate("cuMemFreeHost");
    range_remove(p);
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
    const char *most = getenv("FAKE_CUDA_REGISTER_MAX");
    if (most != NULL && atomic_load(&registrations) >= atoi(most))
        return E_NOT_SUPPORTED;
    atomic_fetch_add(&registrations, 1);
    range_add(p, bytes, 1);
    atomic_fetch_add(&live, 1);
    return OK;
}

static int fake_host_unregister(void *p)
{
    sync_gate("cuMemHostUnregister");
    range_remove(p);
    atomic_fetch_sub(&registrations, 1);
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

void *fake_dev(uint64_t a)
{
    return (void *)(uintptr_t)((a & DEV_TAG) == DEV_TAG ? a ^ DEV_TAG : a);
}

/* Every allocation stays on a list (as the driver keeps track of it), so
 * that a leak checker sees the memory of a hung kernel, which the engine
 * keeps only through tagged addresses, as reachable. */
typedef struct dev_block {
    struct dev_block *next, *prev;
    uint64_t bytes;  /* drawn from the modelled memory */
    uint64_t pad;    /* 32 bytes: the memory after the header stays 16-byte aligned */
} dev_block;
static dev_block dev_blocks = {&dev_blocks, &dev_blocks, 0, 0};
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

/* The modelled device memory: total, held by others, drawn by cuMemAlloc. */
static _Atomic uint64_t mem_used;

static uint64_t env_bytes(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    return v != NULL && *v != '\0' ? strtoull(v, NULL, 10) : dflt;
}

static uint64_t mem_total(void)
{
    return env_bytes("FAKE_CUDA_MEM_TOTAL", 16ull << 30);
}

/* What the other processes leave this one. */
static uint64_t mem_ours(void)
{
    uint64_t total = mem_total(), others = env_bytes("FAKE_CUDA_MEM_OTHERS", 0);
    return others < total ? total - others : 0;
}

static uint64_t mem_free(void)
{
    uint64_t ours = mem_ours(), used = atomic_load(&mem_used);
    return used < ours ? ours - used : 0;
}

static int fake_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    *free_bytes = (size_t)mem_free();
    *total_bytes = (size_t)mem_total();
    return OK;
}

static int fake_mem_alloc(unsigned long long *d, size_t bytes)
{
    sync_gate("cuMemAlloc");
    const char *most = getenv("FAKE_CUDA_MAX_ALLOC"); /* a device short of memory */
    if (most != NULL && bytes > strtoull(most, NULL, 10))
        return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
    /* Claim the bytes from the modelled memory, or fail as the driver does. */
    const uint64_t ours = mem_ours();
    for (uint64_t used = atomic_load(&mem_used);;) {
        if (used > ours || bytes > ours - used)
            return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
        if (atomic_compare_exchange_weak(&mem_used, &used, used + bytes))
            break;
    }
    dev_block *b = malloc(sizeof *b + (bytes ? bytes : 1));
    if (b == NULL) {
        atomic_fetch_sub(&mem_used, bytes);
        return 2;
    }
    b->bytes = bytes;
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
    atomic_fetch_sub(&mem_used, b->bytes);
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
        {"cuMemGetInfo", (void *)fake_mem_info},
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
