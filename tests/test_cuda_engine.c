/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_cuda_engine.c - the CUDA backend's host side end to end,
 * through the stand-in driver (tests/fakes/fake_libcuda.c), whose
 * "kernel" is the megakernel's loop in C over the memory the engine
 * allocated: context, module load or PTX link, occupancy-sized launch,
 * host-mapped control block, registered cells and log, zero-copy and HtoD
 * staging, failure lists, fault and hang handling, teardown. No GPU needed;
 * tests/cuda_*.c run the same on a real GPU. */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/cuda/cuda_loader.h"
#include "../src/runtime/runtime_internal.h"
#include "mkrt/runtime.h"
#include "backend_compare.h"
#include "tap.h"

#define SEC BC_SEC
#define CELLS BC_CELLS
#define LOG_CAP BC_LOG_CAP

static const char fake_ptx[] = "// fake PTX\n.visible .func (.param .b32 r) mkrt_user_op(...)\n";

static int (*fake_live)(void);

static void same_results_as_cpu(void)
{
    static bc_run cpu, dev;
    mkrt_error err;
    bc_run_workload(MKRT_BACKEND_CPU, NULL, 240, 777, &cpu, &err);
    if (!bc_run_workload(MKRT_BACKEND_CUDA, fake_ptx, 240, 777, &dev, &err))
        bail_out("CUDA backend on the stand-in driver: %s", err.message);
    matches(dev.describe, "cuda: Fake GPU .* 264 blocks x 256 threads \\(2 per SM\\), user PTX linked",
            "the CUDA backend starts on the stand-in driver: grid from the occupancy API (%.90s)",
            dev.describe);
    bc_check_same(&cpu, &dev, "240 random batches (built-in and device user ops, zero-copy and copied)");
    ok(atomic_load(&dev.f.by_status[2]) > 0 && atomic_load(&dev.f.by_status[4]) > 0 &&
           atomic_load(&dev.f.by_status[10]) > 0,
       "... user-op failures and log overflow came back through the device's failure lists; "
       "undefined ops failed on the host (%llu MKRT_ENOTSUP)",
       (unsigned long long)atomic_load(&dev.f.by_status[10]));
    const mkrt_stats *sd = &dev.stats;
    ok(strcmp(sd->backend, "cuda") == 0 && sd->device_batches == 240 && sd->batches == 240 &&
           sd->device_failures == 0,
       "every batch ran on the device (%llu device batches)", (unsigned long long)sd->device_batches);
    is(dev.destroyed, MKRT_OK, "destroy stops the megakernel");
    is(fake_live(), 0, "... and frees every driver resource (allocations, registrations, streams, "
                       "module, context)");
}

static void start_failures(void)
{
    bc_failures f;
    memset(&f, 0, sizeof f);
    mkrt_error err;
    ok(bc_start(MKRT_BACKEND_CUDA, &f, 100, "// no ops here\n", &err) == NULL,
       "PTX without mkrt_user_op cannot start the CUDA backend");
    matches(err.message, "linking the user PTX .*cuLinkComplete.*Unresolved extern function 'mkrt_user_op'",
         "... the message names the link step and carries the JIT log");
    mkrt_runtime *rt = bc_start(MKRT_BACKEND_AUTO, &f, 100, "// no ops here\n", &err);
    ok(rt != NULL && strstr(mkrt_backend_describe(rt), "auto chose the CPU: linking the user PTX") != NULL,
       "AUTO falls back to the CPU and says why");
    mkrt_destroy(rt, SEC, NULL);
    setenv("FAKE_CUDA_MODE", "toolarge", 1);
    ok(bc_start(MKRT_BACKEND_CUDA, &f, 100, NULL, &err) == NULL, "a refused cooperative launch fails the start");
    matches(err.message, "cuLaunchCooperativeKernel.*CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE.*Fix:",
         "... with the CUDA error's name and a Fix");
    is(fake_live(), 0, "a failed start leaves nothing allocated");
    setenv("FAKE_CUDA_MODE", "display", 1);
    ok(bc_start(MKRT_BACKEND_CUDA, &f, 100, NULL, &err) == NULL && strstr(err.message, "run-time limit"),
       "a GPU with a kernel run-time limit (display watchdog) is refused");
    setenv("FAKE_CUDA_MODE", "ok", 1);
}

static void sticky_fault(void)
{
    bc_failures f;
    memset(&f, 0, sizeof f);
    mkrt_error err;
    setenv("FAKE_CUDA_MODE", "fault", 1);
    setenv("FAKE_CUDA_FAULT_BATCH", "3", 1);
    mkrt_runtime *rt = bc_start(MKRT_BACKEND_CUDA, &f, 5000, NULL, &err);
    if (rt == NULL)
        bail_out("fault mode: %s", err.message);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    for (uint32_t k = 0; k < 3; k++) {
        mkrt_item it[] = {{MKRT_OP_STORE, 0, k, 10 + k}, {MKRT_OP_ADD, k, 100 + k, 1}};
        mkrt_publish(p, it, 2, SEC, NULL);
        mkrt_drain(rt, SEC);
    }
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(atomic_load(&f.n) == 2 && f.last == MKRT_EDEVICE && s.device_failures == 1,
       "a faulted kernel sends its batch to the error path (2 items, MKRT_EDEVICE), long before the "
       "watchdog");
    matches(mkrt_backend_describe(rt), "not used again.*CUDA_ERROR_ILLEGAL_ADDRESS.*sticky",
         "describe names the sticky error and that the device is not used again");
    mkrt_item after[] = {{MKRT_OP_STORE, 0, 7, 40}, {MKRT_OP_ADD, 7, 8, 2}};
    mkrt_publish(p, after, 2, SEC, NULL);
    mkrt_drain(rt, SEC);
    uint64_t v1, v8;
    mkrt_cell_read(rt, 101, &v1);
    mkrt_cell_read(rt, 8, &v8);
    ok(v1 == 12 && v8 == 42 && strcmp((mkrt_stats_read(rt, &s), s.backend), "cpu") == 0,
       "batches before the fault ran on the device (12), later ones on the CPU (42)");
    mkrt_producer_close(p);
    is(mkrt_destroy(rt, SEC, NULL), MKRT_OK, "destroy after a fault succeeds");
    is(fake_live(), 0, "... and frees everything");
    setenv("FAKE_CUDA_MODE", "ok", 1);
}

/* Last: the hung "kernel" thread stays behind, as a hung GPU kernel would. */
static void hung_op(void)
{
    bc_failures f;
    memset(&f, 0, sizeof f);
    mkrt_error err;
    mkrt_runtime *rt = bc_start(MKRT_BACKEND_CUDA, &f, 100, fake_ptx, &err);
    if (rt == NULL)
        bail_out("hung op: %s", err.message);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item it[] = {{MKRT_OP_STORE, 0, 1, 5}, {18, 1, 2, 0}, {MKRT_OP_ADD, 2, 3, 1}};
    mkrt__runtime_hold(rt, true);
    mkrt_publish(p, it, 3, SEC, NULL);
    mkrt__runtime_hold(rt, false);
    is(mkrt_drain(rt, SEC), MKRT_OK, "a hung device op does not hang the runtime");
    ok(atomic_load(&f.n) == 3 && f.last == MKRT_ETIMEDOUT,
       "the watchdog sends the hung batch to the error path (3 items, MKRT_ETIMEDOUT)");
    matches(mkrt_backend_describe(rt), "watchdog: batch [0-9]+ not done after [0-9]+ ms \\(block 0 at layer",
         "describe says where the blocks stopped: %.140s", mkrt_backend_describe(rt));
    mkrt_producer_close(p);
    is(mkrt_destroy(rt, SEC, &err), MKRT_EDEVICE, "destroy reports a kernel that would not stop");
    matches(err.message, "did not stop .* stay allocated", "... and that its memory stays allocated");
    ok(fake_live() > 0, "the hung kernel's memory was not freed under it");
}

int main(int argc, char **argv)
{
    (void)argc;
    char self[PATH_MAX], fake[PATH_MAX + 32];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(fake, sizeof fake, "%s/libfakecuda.so", dirname(self));
    setenv("MKRT_LIBCUDA", fake, 1);
    setenv("FAKE_CUDA_MODE", "ok", 1);
    void *lib = dlopen(fake, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL || (*(void **)&fake_live = dlsym(lib, "fake_cuda_live")) == NULL)
        bail_out("stand-in driver %s: %s", fake, dlerror());
    if (!mkrt__cuda_megakernel_built()) {
        plan_skip_all("the CUDA megakernel was not built (no nvcc): the CUDA backend cannot start");
    }
    same_results_as_cpu();
    start_failures();
    sticky_fault();
    hung_op();
    return done_testing();
}
