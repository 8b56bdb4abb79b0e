/* SPDX-License-Identifier: BSD-2-Clause */
/* src/cuda/cuda_engine.c - see cuda_engine.h. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/alloc_internal.h"
#include "base/error_internal.h"
#include "base/waitq.h"
#include "cuda/cuda_engine.h"

extern const unsigned char mkrt__megakernel_fatbin[];
extern const size_t mkrt__megakernel_fatbin_size;
extern const unsigned char mkrt__megakernel_link_fatbin[];
extern const size_t mkrt__megakernel_link_fatbin_size;

#define JIT_LOG_MAX 1536

static mkrt_status cuda_fail(const mkrt__cuda_engine *e, mkrt_error *err, const char *what, CUresult r,
                             const char *fix)
{
    char text[160];
    return mkrt__error_set(err, MKRT_EDEVICE, "CUDA %s failed on %s: %s.%s Fix: %s", what,
                           e->cu.name[0] ? e->cu.name : "device 0",
                           mkrt__cuda_error_text(&e->cu, r, text, sizeof text),
                           mkrt__cuda_error_is_sticky(r) ? " The error is sticky: the process's CUDA "
                                                           "context is lost."
                                                         : "",
                           fix);
}

/* Makes the primary context current on the calling thread (start and
 * stop run on the caller's thread, the rest on the dispatcher's). */
static CUresult bind(const mkrt__cuda_engine *e)
{
    return e->cu.cuCtxSetCurrent(e->ctx);
}

static size_t round_up(size_t v, size_t to)
{
    return (v + to - 1) / to * to;
}

uint64_t mkrt__cuda_mem_reserve(uint64_t free_bytes, uint64_t total_bytes)
{
    uint64_t r = total_bytes / 20;
    if (r < MKRT__CUDA_MEM_RESERVE_MIN)
        r = MKRT__CUDA_MEM_RESERVE_MIN;
    return r < free_bytes / 2 ? r : free_bytes / 2;
}

uint64_t mkrt__cuda_engine_resident(const mkrt__cuda_engine *e)
{
    return (e->device_state ? (uint64_t)e->cells_bytes + e->log_bytes : 0) + e->graph_bytes;
}

/* cuMemAlloc, counted in the engine's device bytes. */
static CUresult dev_alloc(mkrt__cuda_engine *e, CUdeviceptr *p, size_t bytes)
{
    CUresult r = e->cu.cuMemAlloc(p, bytes);
    if (r == MKRT_CUDA_SUCCESS)
        e->dev_bytes += bytes;
    return r;
}

/* Frees what start allocated, in reverse; safe on a partial start. */
static void release_all(mkrt__cuda_engine *e)
{
    mkrt__cuda_api *cu = &e->cu;
    if (e->ctx != NULL)
        bind(e);
    if (e->copy != NULL)
        cu->cuStreamDestroy(e->copy);
    if (e->state != NULL)
        cu->cuStreamDestroy(e->state);
    if (e->watch != NULL)
        cu->cuStreamDestroy(e->watch);
    if (e->run != NULL)
        cu->cuStreamDestroy(e->run);
    /* Device memory after the kernel's stream: nothing of it runs now. */
    if (e->progress_host != NULL)
        cu->cuMemFreeHost(e->progress_host);
    if (e->d_progress != 0)
        cu->cuMemFree(e->d_progress);
    if (e->bounce != NULL)
        cu->cuMemFreeHost(e->bounce);
    CUdeviceptr graph[6] = {e->d_counters, e->d_offsets, e->d_targets, e->d_weights, e->d_relax_bits, e->d_jobs};
    for (int i = 0; i < 6; i++)
        if (graph[i] != 0)
            cu->cuMemFree(graph[i]);
    if (e->d_log != 0)
        cu->cuMemFree(e->d_log);
    if (e->d_cells != 0)
        cu->cuMemFree(e->d_cells);
    for (int i = 0; i < 2; i++) {
        if (e->staging[i].dev != 0)
            cu->cuMemFree(e->staging[i].dev);
        if (e->staging[i].host != NULL)
            cu->cuMemFreeHost(e->staging[i].host);
    }
    for (int i = 0; i < MKRT__CUDA_DMA_RANGES; i++)
        if (e->dma_registered[i])
            cu->cuMemHostUnregister(e->dma[i].host);
    if (e->log_registered)
        cu->cuMemHostUnregister(e->append_log);
    if (e->cells_registered)
        cu->cuMemHostUnregister(e->cells);
    if (e->ctl != NULL)
        cu->cuMemFreeHost(e->ctl);
    if (e->mod != NULL)
        cu->cuModuleUnload(e->mod);
    if (e->ctx_retained)
        cu->cuDevicePrimaryCtxRelease(cu->device);
    /* The driver library stays loaded: unloading libcuda after cuInit is
     * not safe while the driver's own threads live. */
    memset(e, 0, sizeof *e);
}

/* The relocatable megakernel linked with the user's PTX. */
static mkrt_status load_linked(mkrt__cuda_engine *e, const mkrt__cuda_engine_config *cfg,
                               mkrt_error *err)
{
    mkrt__cuda_api *cu = &e->cu;
    if (mkrt__megakernel_link_fatbin_size == 0)
        return mkrt__error_set(err, MKRT_ENOTSUP,
                               "device user ops need the relocatable megakernel, which this build "
                               "lacks (no nvcc when mkrt was compiled). Fix: build mkrt with nvcc.");
    size_t n = cfg->user_ptx_size ? cfg->user_ptx_size : strlen(cfg->user_ptx);
    char *ptx = mkrt__alloc(n + 1, 16); /* the JIT wants a NUL-terminated text */
    if (ptx == NULL)
        return mkrt__error_set(err, MKRT_ENOMEM, "no memory for a copy of the %zu-byte user PTX. "
                                                 "Fix: free memory.",
                               n);
    memcpy(ptx, cfg->user_ptx, n);
    ptx[n] = '\0';
    char errlog[JIT_LOG_MAX] = "", infolog[JIT_LOG_MAX] = "";
    int opts[4] = {MKRT_CU_JIT_ERROR_LOG_BUFFER, MKRT_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                   MKRT_CU_JIT_INFO_LOG_BUFFER, MKRT_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void *vals[4] = {errlog, (void *)(uintptr_t)sizeof errlog, infolog, (void *)(uintptr_t)sizeof infolog};
    void *link = NULL, *cubin = NULL;
    size_t cubin_size = 0;
    const char *step = "cuLinkCreate";
    CUresult r = cu->cuLinkCreate(4, opts, vals, &link);
    if (r == MKRT_CUDA_SUCCESS) {
        step = "cuLinkAddData (the megakernel)";
        r = cu->cuLinkAddData(link, MKRT_CU_JIT_INPUT_FATBINARY, (void *)mkrt__megakernel_link_fatbin,
                              mkrt__megakernel_link_fatbin_size, "mkrt_megakernel", 0, NULL, NULL);
    }
    if (r == MKRT_CUDA_SUCCESS) {
        step = "cuLinkAddData (the user PTX)";
        r = cu->cuLinkAddData(link, MKRT_CU_JIT_INPUT_PTX, ptx, n + 1, "mkrt_user_ops", 0, NULL, NULL);
    }
    if (r == MKRT_CUDA_SUCCESS) {
        step = "cuLinkComplete";
        r = cu->cuLinkComplete(link, &cubin, &cubin_size);
    }
    if (r == MKRT_CUDA_SUCCESS) {
        step = "cuModuleLoadData (the linked megakernel)";
        r = cu->cuModuleLoadData(&e->mod, cubin);
    }
    mkrt_status st = MKRT_OK;
    if (r != MKRT_CUDA_SUCCESS) {
        char text[160];
        st = mkrt__error_set(err, MKRT_EDEVICE,
                             "linking the user PTX into the megakernel failed at %s: %s; JIT log: "
                             "%.160s. Fix: define extern \"C\" __device__ unsigned %s(...) as "
                             "mkrt_config.cuda_user_ptx documents (nvcc -rdc=true -ptx).",
                             step, mkrt__cuda_error_text(cu, r, text, sizeof text),
                             errlog[0] ? errlog : "(empty)", MKRT_MK_USER_OP_SYMBOL);
    }
    if (link != NULL)
        cu->cuLinkDestroy(link); /* the cubin was copied by the module load */
    mkrt__free(ptx, n + 1);
    e->user_ops = st == MKRT_OK;
    return st;
}

static mkrt_status map_host(mkrt__cuda_engine *e, void *p, size_t bytes, bool *registered,
                            CUdeviceptr *dev, mkrt_error *err)
{
    CUresult r = e->cu.cuMemHostRegister(p, bytes, MKRT_CU_MEMHOSTREGISTER_PORTABLE |
                                                       MKRT_CU_MEMHOSTREGISTER_DEVICEMAP);
    if (r != MKRT_CUDA_SUCCESS)
        return cuda_fail(e, err, "cuMemHostRegister of the cells or the APPEND log", r,
                         "lower mkrt_config.cells / append_log_capacity, or raise the locked-memory "
                         "limit (ulimit -l).");
    *registered = true;
    r = e->cu.cuMemHostGetDevicePointer(dev, p, 0);
    if (r != MKRT_CUDA_SUCCESS)
        return cuda_fail(e, err, "cuMemHostGetDevicePointer", r, "check the driver installation.");
    return MKRT_OK;
}

/* One cooperative launch on the run stream: asynchronous, queued behind an
 * instance still running there (so two never overlap). */
static mkrt_status launch(mkrt__cuda_engine *e, mkrt_error *err)
{
    void *params[] = {&e->ctl_dev};
    CUresult r = e->cu.cuLaunchCooperativeKernel(e->fn, e->blocks, 1, 1, MKRT__CUDA_BLOCK_THREADS, 1, 1,
                                                 0, e->run, params);
    if (r != MKRT_CUDA_SUCCESS)
        return cuda_fail(e, err, "cuLaunchCooperativeKernel of the megakernel", r,
                         "lower mkrt_config.cuda_max_blocks, or use the CPU backend.");
    e->launched = true;
    return MKRT_OK;
}

static mkrt_status start_on_context(mkrt__cuda_engine *e, const mkrt__cuda_engine_config *cfg,
                                    mkrt_error *err)
{
    mkrt__cuda_api *cu = &e->cu;
    CUresult r;
    mkrt_status st;
    if (cfg->user_ptx != NULL) {
        if ((st = load_linked(e, cfg, err)) != MKRT_OK)
            return st;
    } else if ((r = cu->cuModuleLoadData(&e->mod, mkrt__megakernel_fatbin)) != MKRT_CUDA_SUCCESS) {
        return cuda_fail(e, err, "cuModuleLoadData of the megakernel", r,
                         "the embedded fatbin holds sm_80 and sm_90 code and compute_90 PTX: use "
                         "a device of compute capability 8.0 or newer with a driver at least as "
                         "new as the CUDA toolkit that built mkrt, or the CPU backend.");
    }
    if ((r = cu->cuModuleGetFunction(&e->fn, e->mod, MKRT_MK_KERNEL_SYMBOL)) != MKRT_CUDA_SUCCESS)
        return cuda_fail(e, err, "cuModuleGetFunction(mkrt_megakernel)", r, "rebuild mkrt.");
    int per_sm = 0;
    r = cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, e->fn, (int)MKRT__CUDA_BLOCK_THREADS, 0);
    if (r != MKRT_CUDA_SUCCESS)
        return cuda_fail(e, err, "cuOccupancyMaxActiveBlocksPerMultiprocessor", r,
                         "check the driver installation.");
    if (per_sm < 1 || cu->sm_count < 1)
        return mkrt__error_set(err, MKRT_EDEVICE,
                               "the megakernel cannot be resident on %s (%d blocks of %u threads per "
                               "SM, %d SMs). Fix: use the CPU backend.",
                               cu->name, per_sm, MKRT__CUDA_BLOCK_THREADS, cu->sm_count);
    if (cfg->blocks_per_sm != 0 && (int)cfg->blocks_per_sm < per_sm)
        per_sm = (int)cfg->blocks_per_sm; /* the grid's size is measured, not assumed (cuda_bench) */
    uint64_t blocks = (uint64_t)per_sm * (uint64_t)cu->sm_count;
    if (cfg->max_blocks != 0 && blocks > cfg->max_blocks)
        blocks = cfg->max_blocks;
    if (blocks > MKRT_MK_MAX_BLOCKS)
        blocks = MKRT_MK_MAX_BLOCKS;
    e->blocks = (uint32_t)blocks;
    e->blocks_per_sm = (uint32_t)per_sm;

    void *p = NULL;
    r = cu->cuMemHostAlloc(&p, sizeof *e->ctl, MKRT_CU_MEMHOSTALLOC_PORTABLE | MKRT_CU_MEMHOSTALLOC_DEVICEMAP);
    if (r != MKRT_CUDA_SUCCESS)
        return cuda_fail(e, err, "cuMemHostAlloc of the control block", r, "free pinned memory.");
    e->ctl = p;
    memset(e->ctl, 0, sizeof *e->ctl);
    if ((r = cu->cuMemHostGetDevicePointer(&e->ctl_dev, e->ctl, 0)) != MKRT_CUDA_SUCCESS)
        return cuda_fail(e, err, "cuMemHostGetDevicePointer", r, "check the driver installation.");

    CUdeviceptr cells_dev = 0, log_dev = 0;
    e->cells = cfg->cells;
    e->cells_bytes = (size_t)cfg->cell_count * sizeof(uint64_t);
    if ((st = map_host(e, e->cells, e->cells_bytes, &e->cells_registered, &cells_dev, err)) != MKRT_OK)
        return st;
    if (cfg->append_log != NULL && cfg->append_capacity > 0) {
        e->append_log = cfg->append_log;
        e->log_bytes = (size_t)cfg->append_capacity * 2 * sizeof(uint32_t);
        if ((st = map_host(e, e->append_log, e->log_bytes, &e->log_registered, &log_dev, err)) != MKRT_OK)
            return st;
    }

    e->capacity = cfg->capacity;
    e->items_bytes = round_up((size_t)cfg->capacity * sizeof(mkrt_item), 256);
    /* layer offsets (capacity + 1), then the plan's blocks per layer */
    e->offsets_bytes = round_up((2 * (size_t)cfg->capacity + 1) * sizeof(uint32_t), 256);
    e->fails_bytes = (size_t)cfg->capacity * 2 * sizeof(uint32_t);
    /* What the device memory must hold before anything is allocated: a
     * start that does not fit is refused with the numbers, not failed
     * half-way by an allocation. */
    size_t mfree = 0, mtotal = 0;
    if ((r = cu->cuMemGetInfo(&mfree, &mtotal)) != MKRT_CUDA_SUCCESS)
        return cuda_fail(e, err, "cuMemGetInfo", r, "check the driver installation.");
    const uint64_t need = 2 * (uint64_t)(e->items_bytes + e->offsets_bytes) + sizeof(mkrt__mk_counters) +
                          (cfg->device_state ? (uint64_t)e->cells_bytes + e->log_bytes +
                                                   MKRT_MK_MAX_BLOCKS * sizeof(uint64_t)
                                             : 0);
    if (need > mfree)
        return mkrt__error_set(err, MKRT_EDEVICE,
                               "the megakernel needs %llu bytes of device memory (two batch buffers of "
                               "%u items%s) but %s has %llu bytes free of %llu. Fix: lower "
                               "mkrt_config.max_batch%s, free device memory, or use the CPU backend.",
                               (unsigned long long)need, cfg->capacity,
                               cfg->device_state ? ", the cells and the APPEND log" : "", cu->name,
                               (unsigned long long)mfree, (unsigned long long)mtotal,
                               cfg->device_state ? ", cells or append_log_capacity (or set cuda_device_state 0)" : "");
    for (int i = 0; i < 2; i++) {
        mkrt__cuda_staging *s = &e->staging[i];
        r = cu->cuMemHostAlloc(&s->host, e->items_bytes + e->offsets_bytes + e->fails_bytes,
                               MKRT_CU_MEMHOSTALLOC_PORTABLE | MKRT_CU_MEMHOSTALLOC_DEVICEMAP);
        if (r != MKRT_CUDA_SUCCESS)
            return cuda_fail(e, err, "cuMemHostAlloc of a staging buffer", r,
                             "lower mkrt_config.max_batch or free pinned memory.");
        if ((r = cu->cuMemHostGetDevicePointer(&s->mapped, s->host, 0)) != MKRT_CUDA_SUCCESS)
            return cuda_fail(e, err, "cuMemHostGetDevicePointer", r, "check the driver installation.");
        if ((r = dev_alloc(e, &s->dev, e->items_bytes + e->offsets_bytes)) != MKRT_CUDA_SUCCESS)
            return cuda_fail(e, err, "cuMemAlloc of a batch buffer", r,
                             "lower mkrt_config.max_batch or free device memory.");
    }
    /* The runtime's batch buffers, registered so that a large batch is
     * copied by DMA from where it is (engine_stage); a range the driver
     * will not register leaves its batches to the host copy. */
    for (int i = 0; i < MKRT__CUDA_DMA_RANGES; i++) {
        if (cfg->dma[i].host == NULL || cfg->dma[i].bytes == 0)
            continue;
        e->dma[i] = cfg->dma[i];
        r = cu->cuMemHostRegister(e->dma[i].host, e->dma[i].bytes, MKRT_CU_MEMHOSTREGISTER_PORTABLE);
        if (r == MKRT_CUDA_SUCCESS)
            e->dma_registered[i] = true;
        else if (e->dma_fail[0] == '\0')
            mkrt__cuda_error_text(cu, r, e->dma_fail, sizeof e->dma_fail);
    }
    if ((r = cu->cuStreamCreate(&e->run, MKRT_CU_STREAM_NON_BLOCKING)) != MKRT_CUDA_SUCCESS ||
        (r = cu->cuStreamCreate(&e->copy, MKRT_CU_STREAM_NON_BLOCKING)) != MKRT_CUDA_SUCCESS)
        return cuda_fail(e, err, "cuStreamCreate", r, "check the driver installation.");
    if (cfg->device_state) {
        /* The state in device memory; the host arrays stay registered (pinned)
         * for the copies that move it (state_in / state_out). */
        e->device_state = true;
        if ((r = dev_alloc(e, &e->d_cells, e->cells_bytes)) != MKRT_CUDA_SUCCESS ||
            (e->log_bytes > 0 && (r = dev_alloc(e, &e->d_log, e->log_bytes)) != MKRT_CUDA_SUCCESS))
            return cuda_fail(e, err, "cuMemAlloc of the cells and the APPEND log", r,
                             "lower mkrt_config.cells / append_log_capacity, or free device memory.");
        void *b = NULL;
        if ((r = cu->cuMemHostAlloc(&b, MKRT__CUDA_BOUNCE_WORDS * sizeof(uint64_t), MKRT_CU_MEMHOSTALLOC_PORTABLE)) !=
            MKRT_CUDA_SUCCESS)
            return cuda_fail(e, err, "cuMemHostAlloc of the read buffer", r, "free pinned memory.");
        e->bounce = b;
        if ((r = cu->cuStreamCreate(&e->state, MKRT_CU_STREAM_NON_BLOCKING)) != MKRT_CUDA_SUCCESS ||
            (r = cu->cuStreamCreate(&e->watch, MKRT_CU_STREAM_NON_BLOCKING)) != MKRT_CUDA_SUCCESS)
            return cuda_fail(e, err, "cuStreamCreate", r, "check the driver installation.");
        cells_dev = e->d_cells;
        log_dev = e->d_log;
        /* The progress words, zeroed before the launch. The descriptors
         * stay in the mapped control block: block 0 reads one line of it
         * per batch, where a copy to device memory cost a stream
         * synchronisation per batch (about 100 us on the H100). */
        const size_t pbytes = MKRT_MK_MAX_BLOCKS * sizeof(uint64_t);
        if ((r = dev_alloc(e, &e->d_progress, pbytes)) != MKRT_CUDA_SUCCESS)
            return cuda_fail(e, err, "cuMemAlloc of the progress words", r, "free device memory.");
        if ((r = cu->cuMemHostAlloc(&b, 8 * sizeof(uint64_t), MKRT_CU_MEMHOSTALLOC_PORTABLE)) != MKRT_CUDA_SUCCESS)
            return cuda_fail(e, err, "cuMemHostAlloc of the progress buffer", r, "free pinned memory.");
        e->progress_host = b;
        memset(e->bounce, 0, MKRT__CUDA_BOUNCE_WORDS * sizeof(uint64_t));
        _Static_assert(MKRT__CUDA_BOUNCE_WORDS >= MKRT_MK_MAX_BLOCKS, "the zeroes come from the bounce buffer");
        if ((r = cu->cuMemcpyHtoDAsync(e->d_progress, e->bounce, pbytes, e->state)) != MKRT_CUDA_SUCCESS ||
            (r = cu->cuStreamSynchronize(e->state)) != MKRT_CUDA_SUCCESS)
            return cuda_fail(e, err, "zeroing the progress words", r, "see the CUDA error.");
        e->ctl->desc_dev = 0;
        e->ctl->progress_dev = e->d_progress;
    }

    /* The batch counters, zeroed before the launch. */
    const mkrt__mk_counters zero = {0, 0};
    if ((r = dev_alloc(e, &e->d_counters, sizeof zero)) != MKRT_CUDA_SUCCESS ||
        (r = cu->cuMemcpyHtoDAsync(e->d_counters, &zero, sizeof zero, e->copy)) != MKRT_CUDA_SUCCESS ||
        (r = cu->cuStreamSynchronize(e->copy)) != MKRT_CUDA_SUCCESS)
        return cuda_fail(e, err, "cuMemAlloc of the batch counters", r, "free device memory.");
    e->ctl->counters = e->d_counters;
    e->ctl->cells = cells_dev;
    e->ctl->cell_count = cfg->cell_count;
    e->ctl->blocks = e->blocks;
    e->ctl->append_log = log_dev;
    e->ctl->append_capacity = log_dev != 0 ? cfg->append_capacity : 0;
    e->ctl->idle_ns = cfg->idle_ns;
    e->ctl->resident_ns = cfg->resident_ns;
    e->idle_ns = cfg->idle_ns;
    /* The budget (cuda_engine.h): what is free now, less the reserve, plus
     * what the engine already holds. Read before the launch. */
    if ((r = cu->cuMemGetInfo(&mfree, &mtotal)) != MKRT_CUDA_SUCCESS)
        return cuda_fail(e, err, "cuMemGetInfo", r, "check the driver installation.");
    e->mem_free = mfree;
    e->mem_total = mtotal;
    e->memory_budget = mfree - mkrt__cuda_mem_reserve(mfree, mtotal) + mkrt__cuda_engine_resident(e);
    if ((st = launch(e, err)) != MKRT_OK)
        return st;
    snprintf(e->describe, sizeof e->describe,
             "%.64s (sm_%d%d, %d SMs, driver %d.%d): megakernel of %u blocks x %u threads (%u per SM)%s, "
             "leaves the GPU after %llu us idle%s; %llu MiB free of %llu at start%s%.100s",
             cu->name, cu->cc_major, cu->cc_minor, cu->sm_count, cu->driver_version / 1000,
             cu->driver_version % 1000 / 10, e->blocks, MKRT__CUDA_BLOCK_THREADS, e->blocks_per_sm,
             e->user_ops ? ", user PTX linked" : "", (unsigned long long)(cfg->idle_ns / 1000),
             e->device_state ? ", cells and log in device memory" : "", (unsigned long long)(mfree >> 20),
             (unsigned long long)(mtotal >> 20),
             e->dma_fail[0] ? "; batch buffers not registered, large batches take a host copy: " : "",
             e->dma_fail);
    return MKRT_OK;
}

mkrt_status mkrt__cuda_engine_start(mkrt__cuda_engine *e, const mkrt__cuda_engine_config *cfg,
                                    mkrt_error *err)
{
    memset(e, 0, sizeof *e);
    if (!mkrt__cuda_megakernel_built())
        return mkrt__error_set(err, MKRT_EDEVICE, "the CUDA megakernel was not built (no nvcc when "
                                                 "mkrt was compiled). Fix: install the CUDA toolkit "
                                                 "and rebuild mkrt, or use the CPU backend.");
    mkrt_status st = mkrt__cuda_load(&e->cu, err);
    if (st != MKRT_OK)
        return st;
    CUresult r = e->cu.cuDevicePrimaryCtxRetain(&e->ctx, e->cu.device);
    if (r != MKRT_CUDA_SUCCESS) {
        st = cuda_fail(e, err, "cuDevicePrimaryCtxRetain", r,
                       "check that the GPU is not in exclusive-process mode held by another process.");
        release_all(e);
        return st;
    }
    e->ctx_retained = true;
    CUcontext before = NULL;
    e->cu.cuCtxGetCurrent(&before);
    CUresult (*set_current)(CUcontext) = e->cu.cuCtxSetCurrent;
    if ((r = bind(e)) != MKRT_CUDA_SUCCESS)
        st = cuda_fail(e, err, "cuCtxSetCurrent", r, "check the driver installation.");
    else
        st = start_on_context(e, cfg, err);
    if (st != MKRT_OK)
        release_all(e);
    set_current(before); /* leave the caller's thread as it was */
    return st;
}

static mkrt_status engine_stage(void *ctx, unsigned buffer, const mkrt_item *items, uint32_t count,
                                const uint32_t *offsets, const uint32_t *layer_blocks, uint32_t layers,
                                mkrt__mk_staged *out, mkrt_error *err)
{
    mkrt__cuda_engine *e = ctx;
    mkrt__cuda_staging *s = &e->staging[buffer];
    char *host = s->host;
    size_t ib = (size_t)count * sizeof *items, ob = ((size_t)layers + 1) * sizeof *offsets;
    const size_t blocks_at = ((size_t)e->capacity + 1) * sizeof *offsets;
    /* A large batch in a registered buffer goes by DMA from where it is
     * (no host copy of up to max_batch x 16 bytes); else into the pinned
     * staging buffer first. */
    const bool zero_copy = count <= MKRT__CUDA_ZERO_COPY_MAX;
    const void *dma = NULL;
    for (int i = 0; i < MKRT__CUDA_DMA_RANGES && !zero_copy && dma == NULL; i++)
        if (e->dma_registered[i] && (const char *)items >= (const char *)e->dma[i].host &&
            ib <= e->dma[i].bytes && (size_t)((const char *)items - (const char *)e->dma[i].host) <= e->dma[i].bytes - ib)
            dma = items;
    if (dma == NULL)
        memcpy(host, items, ib);
    memcpy(host + e->items_bytes, offsets, ob);
    if (layer_blocks != NULL) {
        memcpy(host + e->items_bytes + blocks_at, layer_blocks, (size_t)layers * sizeof *layer_blocks);
        ob = blocks_at + (size_t)layers * sizeof *layer_blocks; /* one copy for both */
    }
    out->fails_addr = s->mapped + e->items_bytes + e->offsets_bytes;
    out->fails = (const uint32_t *)(host + e->items_bytes + e->offsets_bytes);
    if (zero_copy) { /* read in place over the bus, with the state on either side */
        out->items_addr = s->mapped;
        out->offsets_addr = s->mapped + e->items_bytes;
        out->blocks_addr = out->offsets_addr + blocks_at;
        return MKRT_OK;
    }
    CUresult r = bind(e);
    if (r == MKRT_CUDA_SUCCESS)
        r = e->cu.cuMemcpyHtoDAsync(s->dev, dma != NULL ? dma : host, ib, e->copy);
    if (dma != NULL)
        e->dma_copies++;
    else
        e->host_copies++;
    if (r == MKRT_CUDA_SUCCESS)
        r = e->cu.cuMemcpyHtoDAsync(s->dev + e->items_bytes, host + e->items_bytes, ob, e->copy);
    if (r != MKRT_CUDA_SUCCESS)
        return cuda_fail(e, err, "cuMemcpyHtoDAsync of a batch", r, "see the CUDA error.");
    e->copy_pending = true;
    out->items_addr = s->dev;
    out->offsets_addr = s->dev + e->items_bytes;
    out->blocks_addr = out->offsets_addr + blocks_at;
    return MKRT_OK;
}

static mkrt_status engine_flush(void *ctx, mkrt_error *err)
{
    mkrt__cuda_engine *e = ctx;
    if (!e->copy_pending)
        return MKRT_OK;
    e->copy_pending = false;
    CUresult r = bind(e);
    if (r == MKRT_CUDA_SUCCESS)
        r = e->cu.cuStreamSynchronize(e->copy);
    if (r != MKRT_CUDA_SUCCESS)
        return cuda_fail(e, err, "cuStreamSynchronize of the staging copy", r, "see the CUDA error.");
    return MKRT_OK;
}

static mkrt_status engine_probe(void *ctx, mkrt_error *err)
{
    mkrt__cuda_engine *e = ctx;
    CUresult r = bind(e);
    if (r == MKRT_CUDA_SUCCESS)
        r = e->cu.cuStreamQuery(e->run);
    if (r == MKRT_CUDA_ERROR_NOT_READY)
        return MKRT_OK; /* still running, as a persistent kernel should */
    /* seq_cst: the kernel stores parked before it leaves, and the stream
     * reported it gone: it left on its own (idle or resident_ns), and
     * mk_host relaunches it; not a fault, not a hang. */
    if (r == MKRT_CUDA_SUCCESS && atomic_load(&e->ctl->parked) != 0)
        return MKRT_OK;
    if (r == MKRT_CUDA_SUCCESS)
        return mkrt__error_set(err, MKRT_EDEVICE,
                               "the megakernel on %s exited while a batch was pending. Fix: report "
                               "this as an mkrt bug.",
                               e->cu.name);
    return cuda_fail(e, err, "megakernel execution", r,
                     "look for an op that reads or writes outside its cells; the device is not used "
                     "again in this process.");
}

static mkrt_status engine_relaunch(void *ctx, mkrt_error *err)
{
    mkrt__cuda_engine *e = ctx;
    CUresult r = bind(e);
    if (r != MKRT_CUDA_SUCCESS)
        return cuda_fail(e, err, "cuCtxSetCurrent", r, "check the driver installation.");
    return launch(e, err);
}

/* The watchdog's view of the progress words in device memory: one copy on
 * its own non-blocking stream (it runs beside a hung kernel). */
static mkrt_status engine_read_progress(void *ctx, uint64_t *out, uint32_t n)
{
    mkrt__cuda_engine *e = ctx;
    if (!e->device_state || n > 8)
        return MKRT_EINVAL;
    CUresult r = bind(e);
    if (r == MKRT_CUDA_SUCCESS)
        r = e->cu.cuMemcpyDtoHAsync(e->progress_host, e->d_progress, n * sizeof *out, e->watch);
    if (r == MKRT_CUDA_SUCCESS)
        r = e->cu.cuStreamSynchronize(e->watch);
    if (r != MKRT_CUDA_SUCCESS)
        return MKRT_EDEVICE;
    memcpy(out, e->progress_host, n * sizeof *out);
    return MKRT_OK;
}

/* Waits, on a bound context, for the kernel's stream to be idle (every
 * launch on it ended; a fault ends it too): false after timeout_ns. */
static bool stream_idle(mkrt__cuda_engine *e, uint64_t timeout_ns)
{
    const uint64_t start = mkrt__now_ns();
    while (e->cu.cuStreamQuery(e->run) == MKRT_CUDA_ERROR_NOT_READY) {
        if (mkrt__now_ns() - start > timeout_ns)
            return false;
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    return true;
}

/* After shutdown (a failed engine): the kernel finishes the batch it runs
 * (its blocks leave at a batch boundary, megakernel.cu's poll) and leaves;
 * a launch queued behind it sees shutdown at once. The stream's end
 * orders the kernel's writes before the host's next reads. */
static bool engine_wait_gone(void *ctx, uint64_t timeout_ns)
{
    mkrt__cuda_engine *e = ctx;
    if (!e->launched)
        return true;
    CUcontext before = NULL;
    e->cu.cuCtxGetCurrent(&before);
    bool gone = bind(e) == MKRT_CUDA_SUCCESS && stream_idle(e, timeout_ns);
    e->cu.cuCtxSetCurrent(before);
    return gone;
}

/* No publish_desc: the descriptors are in the mapped control block, with
 * the state on either side (start_on_context). */
const mkrt__mk_device_ops mkrt__cuda_engine_ops = {engine_stage, engine_flush,        engine_probe,
                                                   engine_relaunch, NULL, engine_read_progress,
                                                   engine_wait_gone};

bool mkrt__cuda_engine_stop(mkrt__cuda_engine *e, uint64_t timeout_ns)
{
    if (e->cu.lib == NULL)
        return true; /* never started */
    CUcontext before = NULL;
    e->cu.cuCtxGetCurrent(&before);
    bind(e);
    if (e->launched) {
        /* release: pairs with the kernel's system-scope acquire of shutdown. */
        atomic_store_explicit(&e->ctl->shutdown, 1, memory_order_release);
        if (!stream_idle(e, timeout_ns)) {
            /* A hung op: the kernel cannot be stopped from here. Keep
             * everything it may touch; the context stays retained. */
            e->abandoned = true;
            e->cu.cuCtxSetCurrent(before);
            return false;
        }
    }
    mkrt__cuda_api cu = e->cu; /* release_all clears e */
    release_all(e);
    cu.cuCtxSetCurrent(before);
    return true;
}

/* Asks the kernel to leave the GPU and waits for it to be gone (protocol.h,
 * evict): parked, and its stream idle. */
static mkrt_status evict(mkrt__cuda_engine *e, uint64_t timeout_ns, mkrt_error *err)
{
    if (!e->launched)
        return MKRT_OK;
    /* seq_cst: read by the kernel's poll beside the parking handshake. */
    atomic_store(&e->ctl->evict, 1);
    uint64_t start = mkrt__now_ns();
    for (;;) {
        CUresult r = e->cu.cuStreamQuery(e->run);
        /* seq_cst: the kernel stored parked before it left. */
        if (r == MKRT_CUDA_SUCCESS && atomic_load(&e->ctl->parked) != 0)
            return MKRT_OK;
        if (r != MKRT_CUDA_ERROR_NOT_READY && r != MKRT_CUDA_SUCCESS)
            return cuda_fail(e, err, "megakernel execution (while asking it to leave the GPU)", r,
                             "see the CUDA error; the graph stays on the host.");
        if (mkrt__now_ns() - start > timeout_ns)
            return mkrt__error_set(err, MKRT_EDEVICE,
                                   "the megakernel on %s did not leave the GPU within %llu ms, so the "
                                   "graph could not be copied to the device. Fix: register the graph "
                                   "before publishing, while the runtime is idle.",
                                   e->cu.name, (unsigned long long)(timeout_ns / 1000000));
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
}

static mkrt_status graph_copy(mkrt__cuda_engine *e, CUdeviceptr *dev, const void *host, size_t bytes,
                              mkrt_error *err)
{
    CUresult r = dev_alloc(e, dev, bytes ? bytes : 8); /* cuMemAlloc refuses 0 bytes */
    if (r == MKRT_CUDA_SUCCESS && bytes > 0)
        r = e->cu.cuMemcpyHtoDAsync(*dev, host, bytes, e->copy);
    if (r != MKRT_CUDA_SUCCESS)
        return cuda_fail(e, err, "cuMemAlloc and copy of the graph", r,
                         "free device memory or use a smaller graph; it stays on the host.");
    return MKRT_OK;
}

mkrt_status mkrt__cuda_engine_graph(mkrt__cuda_engine *e, uint32_t vertices, const uint64_t *offsets,
                                    const uint32_t *targets, const uint32_t *weights, uint32_t jobs,
                                    uint64_t timeout_ns, mkrt_error *err)
{
    CUresult r = bind(e);
    if (r != MKRT_CUDA_SUCCESS)
        return cuda_fail(e, err, "cuCtxSetCurrent", r, "check the driver installation.");
    mkrt_status st = evict(e, timeout_ns, err);
    if (st == MKRT_OK) {
        /* The kernel is off the GPU: the graph before goes, the new one comes. */
        e->ctl->vertices = 0;
        e->ctl->relax_bits = 0;
        CUdeviceptr *old[5] = {&e->d_offsets, &e->d_targets, &e->d_weights, &e->d_relax_bits, &e->d_jobs};
        e->jobs = 0;
        for (int i = 0; i < 5; i++)
            if (*old[i] != 0) {
                e->cu.cuMemFree(*old[i]);
                *old[i] = 0;
            }
        e->dev_bytes -= e->graph_bytes;
        e->graph_bytes = 0;
        const uint64_t held = e->dev_bytes;
        const uint64_t edges = offsets[vertices];
        /* The RELAX job's bitmaps, zeroed (clear between batches). */
        const size_t fbytes = (size_t)mkrt__mk_job_bits_bytes(vertices);
        void *zero = mkrt__alloc_zeroed(fbytes, MKRT_CACHE_LINE);
        if (zero == NULL)
            st = mkrt__error_set(err, MKRT_ENOMEM, "no memory for the %zu-byte RELAX bitmaps of %u vertices. Fix: "
                                                   "free memory.", fbytes, vertices);
        if (st == MKRT_OK)
            st = graph_copy(e, &e->d_offsets, offsets, ((size_t)vertices + 1) * sizeof *offsets, err);
        if (st == MKRT_OK)
            st = graph_copy(e, &e->d_targets, targets, (size_t)edges * sizeof *targets, err);
        if (st == MKRT_OK && weights != NULL)
            st = graph_copy(e, &e->d_weights, weights, (size_t)edges * sizeof *weights, err);
        if (st == MKRT_OK)
            st = graph_copy(e, &e->d_relax_bits, zero, fbytes, err);
        /* The traversal jobs' slots (protocol.h, "Traversal jobs"): the
         * device clears their bitmaps and the host copies each job's first
         * values in, so nothing to copy now. */
        const size_t slot = (size_t)mkrt__mk_job_slot_bytes(vertices);
        if (st == MKRT_OK && jobs != 0 && (r = dev_alloc(e, &e->d_jobs, (size_t)jobs * slot)) != MKRT_CUDA_SUCCESS)
            st = cuda_fail(e, err, "cuMemAlloc of the traversal jobs' slots", r,
                           "free device memory or use a smaller graph; the traversals run on the host.");
        if (st == MKRT_OK && (r = e->cu.cuStreamSynchronize(e->copy)) != MKRT_CUDA_SUCCESS)
            st = cuda_fail(e, err, "cuStreamSynchronize of the graph's copies", r, "see the CUDA error.");
        mkrt__free(zero, fbytes);
        e->graph_bytes = e->dev_bytes - held; /* what this graph's arrays took (freed with the next) */
        if (st == MKRT_OK) {
            /* Read by the kernel launched by the next doorbell. */
            e->ctl->graph_offsets = e->d_offsets;
            e->ctl->graph_targets = e->d_targets;
            e->ctl->graph_weights = e->d_weights;
            e->ctl->relax_bits = e->d_relax_bits;
            e->ctl->vertices = vertices;
            e->jobs = jobs;
            e->job_slot_bytes = slot;
        }
    }
    /* relaxed: the next launch (the doorbell's relaunch) publishes it. */
    atomic_store_explicit(&e->ctl->evict, 0, memory_order_relaxed);
    return st;
}

/* A job slot: values | aux | bitmaps (mkrt__mk_job_slot_bytes). */
static CUdeviceptr slot_at(const mkrt__cuda_engine *e, uint32_t slot)
{
    return e->d_jobs + (CUdeviceptr)slot * e->job_slot_bytes;
}

static mkrt_status job_copy(mkrt__cuda_engine *e, uint32_t slot, void *values, size_t vbytes, void *aux,
                            size_t abytes, bool to_device, mkrt_error *err)
{
    if (slot >= e->jobs)
        return mkrt__error_set(err, MKRT_EINVAL, "CUDA engine: job slot %u of %u. Fix: a bug in the megakernel "
                                                 "backend.", slot, e->jobs);
    const CUdeviceptr v = slot_at(e, slot), a = v + (CUdeviceptr)e->ctl->vertices * 8u;
    CUresult r = bind(e);
    /* On the copy stream, a non-blocking one: the resident kernel is not
     * waited for (it is between batches: no job batch is in flight). */
    if (r == MKRT_CUDA_SUCCESS && vbytes > 0)
        r = to_device ? e->cu.cuMemcpyHtoDAsync(v, values, vbytes, e->copy) : e->cu.cuMemcpyDtoHAsync(values, v, vbytes, e->copy);
    if (r == MKRT_CUDA_SUCCESS && abytes > 0)
        r = to_device ? e->cu.cuMemcpyHtoDAsync(a, aux, abytes, e->copy) : e->cu.cuMemcpyDtoHAsync(aux, a, abytes, e->copy);
    if (r == MKRT_CUDA_SUCCESS)
        r = e->cu.cuStreamSynchronize(e->copy);
    if (r != MKRT_CUDA_SUCCESS)
        return cuda_fail(e, err, to_device ? "copy of a traversal's values to the device"
                                           : "copy of a traversal's values from the device",
                         r, "see the CUDA error; the traversal runs again on the host.");
    return MKRT_OK;
}

mkrt_status mkrt__cuda_engine_job_in(mkrt__cuda_engine *e, uint32_t slot, void *values, size_t vbytes, void *aux,
                                     size_t abytes, mkrt__mk_job *out, mkrt_error *err)
{
    mkrt_status st = job_copy(e, slot, values, vbytes, aux, abytes, true, err);
    if (st != MKRT_OK)
        return st;
    out->values = slot_at(e, slot);
    out->aux = out->values + (uint64_t)e->ctl->vertices * 8u;
    out->bits = out->aux + (uint64_t)e->ctl->vertices * 4u;
    return MKRT_OK;
}

mkrt_status mkrt__cuda_engine_job_out(mkrt__cuda_engine *e, uint32_t slot, void *values, size_t vbytes, void *aux,
                                      size_t abytes, mkrt_error *err)
{
    return job_copy(e, slot, values, vbytes, aux, abytes, false, err);
}

/* Device-resident state: copies on the state stream, completed before
 * returning (a copy completes on its stream, not at the call). */
static mkrt_status state_copy(mkrt__cuda_engine *e, void *host, CUdeviceptr dev, size_t bytes, bool to_device,
                              mkrt_error *err)
{
    CUresult r = bind(e);
    if (r == MKRT_CUDA_SUCCESS && bytes > 0)
        r = to_device ? e->cu.cuMemcpyHtoDAsync(dev, host, bytes, e->state)
                      : e->cu.cuMemcpyDtoHAsync(host, dev, bytes, e->state);
    if (r == MKRT_CUDA_SUCCESS)
        r = e->cu.cuStreamSynchronize(e->state);
    if (r != MKRT_CUDA_SUCCESS)
        return cuda_fail(e, err, to_device ? "copy of the cells or log to the device"
                                           : "copy of the cells or log from the device",
                         r, "see the CUDA error; the device's state since its last copy is lost.");
    return MKRT_OK;
}

mkrt_status mkrt__cuda_engine_state_in(mkrt__cuda_engine *e, mkrt_error *err)
{
    mkrt_status st = state_copy(e, e->cells, e->d_cells, e->cells_bytes, true, err);
    return st == MKRT_OK ? state_copy(e, e->append_log, e->d_log, e->log_bytes, true, err) : st;
}

mkrt_status mkrt__cuda_engine_state_out(mkrt__cuda_engine *e, mkrt_error *err)
{
    mkrt_status st = state_copy(e, e->cells, e->d_cells, e->cells_bytes, false, err);
    return st == MKRT_OK ? state_copy(e, e->append_log, e->d_log, e->log_bytes, false, err) : st;
}

mkrt_status mkrt__cuda_engine_cells_read(mkrt__cuda_engine *e, uint32_t first, size_t count, uint64_t *out,
                                         mkrt_error *err)
{
    for (size_t done = 0; done < count;) {
        size_t n = count - done < MKRT__CUDA_BOUNCE_WORDS ? count - done : MKRT__CUDA_BOUNCE_WORDS;
        mkrt_status st = state_copy(e, e->bounce, e->d_cells + ((uint64_t)first + done) * sizeof(uint64_t),
                                    n * sizeof(uint64_t), false, err);
        if (st != MKRT_OK)
            return st;
        memcpy(out + done, e->bounce, n * sizeof(uint64_t));
        done += n;
    }
    return MKRT_OK;
}

mkrt_status mkrt__cuda_engine_cell_write(mkrt__cuda_engine *e, uint32_t handle, uint64_t value,
                                         mkrt_error *err)
{
    e->bounce[0] = value;
    return state_copy(e, e->bounce, e->d_cells + (uint64_t)handle * sizeof(uint64_t), sizeof(uint64_t), true,
                      err);
}

mkrt_status mkrt__cuda_engine_log_read(mkrt__cuda_engine *e, uint64_t from, size_t n, uint64_t *out,
                                       mkrt_error *err)
{
    const uint64_t cap = e->log_bytes / sizeof(uint64_t);
    if (cap == 0 || n > MKRT__CUDA_BOUNCE_WORDS || n > cap)
        return mkrt__error_set(err, MKRT_EINVAL, "APPEND log read of %zu words (at most %u). Fix: read "
                                                 "in chunks.", n, MKRT__CUDA_BOUNCE_WORDS);
    uint64_t at = from % cap;
    size_t first = cap - at < n ? (size_t)(cap - at) : n; /* up to the ring's end, then from its start */
    mkrt_status st = state_copy(e, e->bounce, e->d_log + at * sizeof(uint64_t), first * sizeof(uint64_t), false, err);
    if (st == MKRT_OK && first < n)
        st = state_copy(e, e->bounce + first, e->d_log, (n - first) * sizeof(uint64_t), false, err);
    if (st == MKRT_OK)
        memcpy(out, e->bounce, n * sizeof(uint64_t));
    return st;
}
