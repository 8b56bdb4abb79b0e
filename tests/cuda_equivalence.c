/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/cuda_equivalence.c - on a real GPU (skipped without one): the CUDA
 * backend against the CPU backend on thousands of random batches, user
 * ops linked from PTX (tests/cuda/user_ops.cu, built by make into
 * build/cuda/user_ops.ptx; MKRT_TEST_USER_PTX names another file), and a
 * user PTX that does not link. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/runtime/test_hooks.h"
#include "backend_compare.h"
#include "fake_cuda.h"
#include "tap.h"

#define ROUNDS 2000

static char *user_ptx(void)
{
    const char *path = getenv("MKRT_TEST_USER_PTX");
    size_t n;
    char *ptx = bc_read_file(path ? path : "build/cuda/user_ops.ptx", &n);
    if (ptx == NULL)
        diag("no user-op PTX (%s): user-op batches run on the CPU", path ? path : "build/cuda/user_ops.ptx");
    return ptx;
}

static void equivalence(const char *ptx)
{
    static bc_run cpu, dev;
    mkrt_error err;
    bc_run_workload(MKRT_BACKEND_CPU, NULL, ROUNDS, 2024, &cpu, &err);
    if (!bc_run_workload(MKRT_BACKEND_CUDA, ptx, ROUNDS, 2024, &dev, &err))
        bail_out("CUDA backend: %s", err.message);
    diag("%s", dev.describe);
    bc_check_same(&cpu, &dev, "2000 random batches on the GPU");
    const mkrt_stats *sd = &dev.stats;
    ok(sd->device_failures == 0 && strcmp(sd->backend, "cuda") == 0 &&
           (ptx == NULL ? sd->device_batches > 0 : sd->device_batches == sd->batches),
       "the device ran %llu of %llu batches, no device failure", (unsigned long long)sd->device_batches,
       (unsigned long long)sd->batches);
    is(dev.destroyed, MKRT_OK, "destroy stops the megakernel");
    /* The same with the cells and the log in device memory (explicit
     * copies, the state moving home for batches the CPU runs). */
    static bc_run dev_state;
    bc_device_state = 1;
    bool started = bc_run_workload(MKRT_BACKEND_CUDA, ptx, ROUNDS, 2024, &dev_state, &err);
    bc_device_state = 0;
    if (!started)
        bail_out("CUDA backend with device state: %s", err.message);
    bc_check_same(&cpu, &dev_state, "the same batches with cuda_device_state = 1");
    ok(dev_state.stats.device_failures == 0 && strstr(dev_state.describe, "device memory") != NULL,
       "... on the GPU, cells in device memory, no device failure");
}

static void user_ops(const char *ptx)
{
    if (ptx == NULL) {
        skip(3, "no user-op PTX");
        return;
    }
    bc_failures f;
    memset(&f, 0, sizeof f);
    mkrt_error err;
    mkrt_runtime *rt = bc_start(MKRT_BACKEND_CUDA, &f, 5000, ptx, &err);
    if (rt == NULL)
        bail_out("CUDA backend with user PTX: %s", err.message);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item chain[] = {{MKRT_OP_STORE, 0, 0, 5}, {16, 0, 1, 2}, {16, 1, 2, 1}, {17, 2, 3, 0}};
    mkrt_publish(p, chain, 4, BC_SEC, NULL);
    mkrt_drain(rt, BC_SEC);
    uint64_t v1, v2;
    mkrt_cell_read(rt, 1, &v1);
    mkrt_cell_read(rt, 2, &v2);
    ok(v1 == 17 && v2 == 52, "user PTX ops run on the GPU layer by layer (5 -> 17 -> 52)");
    ok(atomic_load(&f.n) == 1 && f.last == MKRT_EINVAL, "a user op's failure reaches the error path with its status");
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(s.device_batches >= 1 && s.device_failures == 0, "... through the device's failure list; the device stays healthy");
    mkrt_producer_close(p);
    mkrt_destroy(rt, BC_SEC, NULL);
}

static void bad_ptx(void)
{
    bc_failures f;
    memset(&f, 0, sizeof f);
    mkrt_error err;
    ok(bc_start(MKRT_BACKEND_CUDA, &f, 5000, ".version 8.0\n.target sm_80\n.address_size 64\n", &err) == NULL,
       "PTX without mkrt_user_op does not link");
    like(err.message, "linking the user PTX", "... and the error says so: %.200s", err.message);
}

int main(void)
{
    cuda_real_or_skip();
    char *ptx = user_ptx();
    equivalence(ptx);
    user_ops(ptx);
    bad_ptx();
    free(ptx);
    return done_testing();
}
