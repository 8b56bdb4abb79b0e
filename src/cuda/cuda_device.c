/* SPDX-License-Identifier: BSD-2-Clause */
/* src/cuda/cuda_device.c - the CUDA engine (cuda_engine.h) behind the
 * megakernel device interface (mk_device.h): each entry calls the
 * engine's function of the same job. */
#include <stdio.h>

#include "cuda/cuda_device.h"
#include "cuda/cuda_engine.h"

static bool cuda_stop(void *ctx, uint64_t timeout_ns)
{
    return mkrt__cuda_engine_stop(ctx, timeout_ns);
}

static void cuda_describe(const void *ctx, char *buf, size_t len)
{
    snprintf(buf, len, "cuda: %s", ((const mkrt__cuda_engine *)ctx)->describe);
}

static mkrt_status cuda_graph_in(void *ctx, uint32_t vertices, const uint64_t *offsets, const uint32_t *targets,
                                 const uint32_t *weights, uint32_t jobs, uint64_t timeout_ns, mkrt_error *err)
{
    return mkrt__cuda_engine_graph(ctx, vertices, offsets, targets, weights, jobs, timeout_ns, err);
}

static mkrt_status cuda_job_in(void *ctx, uint32_t slot, void *values, size_t vbytes, void *aux, size_t abytes,
                               mkrt__mk_job *out, mkrt_error *err)
{
    return mkrt__cuda_engine_job_in(ctx, slot, values, vbytes, aux, abytes, out, err);
}

static mkrt_status cuda_job_out(void *ctx, uint32_t slot, void *values, size_t vbytes, void *aux, size_t abytes,
                                mkrt_error *err)
{
    return mkrt__cuda_engine_job_out(ctx, slot, values, vbytes, aux, abytes, err);
}

static void cuda_memory(const void *ctx, uint64_t *resident, uint64_t *budget)
{
    const mkrt__cuda_engine *e = ctx;
    *resident = mkrt__cuda_engine_resident(e);
    *budget = e->memory_budget;
}

static mkrt_status cuda_state_in(void *ctx, mkrt_error *err)
{
    return mkrt__cuda_engine_state_in(ctx, err);
}

static mkrt_status cuda_state_out(void *ctx, mkrt_error *err)
{
    return mkrt__cuda_engine_state_out(ctx, err);
}

static mkrt_status cuda_cells_read(void *ctx, uint32_t first, size_t count, uint64_t *out, mkrt_error *err)
{
    return mkrt__cuda_engine_cells_read(ctx, first, count, out, err);
}

static mkrt_status cuda_cell_write(void *ctx, uint32_t handle, uint64_t value, mkrt_error *err)
{
    return mkrt__cuda_engine_cell_write(ctx, handle, value, err);
}

static mkrt_status cuda_log_read(void *ctx, uint64_t from, size_t n, uint64_t *out, mkrt_error *err)
{
    return mkrt__cuda_engine_log_read(ctx, from, n, out, err);
}

/* No test hooks: an injected hang and level naps have no effect on a GPU. */
const mkrt__mk_device mkrt__cuda_device = {
    .name = "cuda",
    .protocol = &mkrt__cuda_engine_ops,
    .stop = cuda_stop,
    .describe = cuda_describe,
    .graph_in = cuda_graph_in,
    .job_in = cuda_job_in,
    .job_out = cuda_job_out,
    .memory = cuda_memory,
};

const mkrt__mk_device mkrt__cuda_state_device = {
    .name = "cuda",
    .protocol = &mkrt__cuda_engine_ops,
    .stop = cuda_stop,
    .describe = cuda_describe,
    .graph_in = cuda_graph_in,
    .job_in = cuda_job_in,
    .job_out = cuda_job_out,
    .memory = cuda_memory,
    .state_in = cuda_state_in,
    .state_out = cuda_state_out,
    .cells_read = cuda_cells_read,
    .cell_write = cuda_cell_write,
    .log_read = cuda_log_read,
};
