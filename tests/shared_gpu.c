/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/shared_gpu.c - see shared_gpu.h. */
#include <dlfcn.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/cuda/driver_api.h"
#include "base/thread.h"
#include "mkrt/runtime.h"
#include "shared_gpu.h"
#include "tap.h"

#define SEC 5000000000ull

const char sg_app_ptx[] =
    ".version 7.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    ".visible .entry fake_app_kernel(.param .u64 out, .param .u64 value)\n"
    "{\n"
    "  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u64 %rd2, [value];\n"
    "  cvta.to.global.u64 %rd3, %rd1;\n"
    "  st.global.u64 [%rd3], %rd2;\n"
    "  ret;\n"
    "}\n";

/* What the application calls, straight from the driver. */
typedef struct app_api {
    CUresult (*retain)(CUcontext *ctx, CUdevice d);
    CUresult (*release)(CUdevice d);
    CUresult (*set_current)(CUcontext ctx);
    CUresult (*mem_alloc)(CUdeviceptr *p, size_t bytes);
    CUresult (*mem_free)(CUdeviceptr p);
    CUresult (*module_load)(CUmodule *m, const void *image);
    CUresult (*module_unload)(CUmodule m);
    CUresult (*get_function)(CUfunction *f, CUmodule m, const char *name);
    CUresult (*stream_create)(CUstream *s, unsigned flags);
    CUresult (*stream_destroy)(CUstream s);
    CUresult (*stream_sync)(CUstream s);
    CUresult (*launch)(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                       unsigned bz, unsigned smem, CUstream s, void **params, void **extra);
    CUresult (*dtoh)(void *dst, CUdeviceptr src, size_t bytes);
    CUresult (*ctx_sync)(void);
} app_api;

static app_api app;

static int resolve(const char *driver)
{
    void *lib = dlopen(driver, RTLD_NOW | RTLD_LOCAL); /* the handle mkrt holds: one driver */
    mkrt_cuGetProcAddress_fn gpa = lib ? (mkrt_cuGetProcAddress_fn)dlsym(lib, "cuGetProcAddress_v2") : NULL;
    if (gpa == NULL)
        return 0;
    static const struct { const char *name; size_t at; } fns[] = {
        {"cuDevicePrimaryCtxRetain", offsetof(app_api, retain)},
        {"cuDevicePrimaryCtxRelease", offsetof(app_api, release)},
        {"cuCtxSetCurrent", offsetof(app_api, set_current)},
        {"cuMemAlloc", offsetof(app_api, mem_alloc)},
        {"cuMemFree", offsetof(app_api, mem_free)},
        {"cuModuleLoadData", offsetof(app_api, module_load)},
        {"cuModuleUnload", offsetof(app_api, module_unload)},
        {"cuModuleGetFunction", offsetof(app_api, get_function)},
        {"cuStreamCreate", offsetof(app_api, stream_create)},
        {"cuStreamDestroy", offsetof(app_api, stream_destroy)},
        {"cuStreamSynchronize", offsetof(app_api, stream_sync)},
        {"cuLaunchKernel", offsetof(app_api, launch)},
        {"cuMemcpyDtoH", offsetof(app_api, dtoh)},
        {"cuCtxSynchronize", offsetof(app_api, ctx_sync)},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        void *fn = NULL;
        int status = 0;
        if (gpa(fns[i].name, &fn, MKRT_CUDA_ABI_VERSION, 0, &status) != 0 || fn == NULL)
            return 0;
        memcpy((char *)&app + fns[i].at, &fn, sizeof fn);
    }
    return 1;
}

/* The application's CUDA work in the primary context mkrt shares: an
 * allocation, a module load, its own kernel on its own stream, a
 * synchronous copy back, a context-wide synchronisation, and the frees.
 * Returns the first failing step, or NULL. */
static const char *app_work(unsigned long long value)
{
    CUcontext ctx = NULL;
    CUdeviceptr d = 0;
    CUmodule m = NULL;
    CUfunction f = NULL;
    CUstream s = NULL;
    unsigned long long got = 0;
    if (app.retain(&ctx, 0) != 0 || app.set_current(ctx) != 0)
        return "cuDevicePrimaryCtxRetain";
    const char *failed = NULL;
    if (app.mem_alloc(&d, sizeof got) != 0)
        failed = "cuMemAlloc";
    else if (app.module_load(&m, sg_app_ptx) != 0)
        failed = "cuModuleLoadData";
    else if (app.get_function(&f, m, "fake_app_kernel") != 0)
        failed = "cuModuleGetFunction";
    else if (app.stream_create(&s, MKRT_CU_STREAM_NON_BLOCKING) != 0)
        failed = "cuStreamCreate";
    else {
        void *params[] = {&d, &value};
        if (app.launch(f, 1, 1, 1, 1, 1, 1, 0, s, params, NULL) != 0)
            failed = "cuLaunchKernel";
        else if (app.stream_sync(s) != 0)
            failed = "cuStreamSynchronize";
        else if (app.dtoh(&got, d, sizeof got) != 0 || got != value)
            failed = "cuMemcpyDtoH (the kernel's store)";
        else if (app.ctx_sync() != 0)
            failed = "cuCtxSynchronize";
    }
    if (s != NULL)
        app.stream_destroy(s);
    if (m != NULL)
        app.module_unload(m);
    if (d != 0)
        app.mem_free(d);
    app.release(0);
    return failed;
}

static mkrt_runtime *cuda_runtime(uint32_t idle_us, uint32_t resident_us, uint32_t watchdog_ms, mkrt_error *err)
{
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CUDA;
    c.cells = 256;
    c.append_log_capacity = 1024;
    c.max_batch = 4096;
    c.workers = 1;
    c.watchdog_ms = watchdog_ms;
    c.device_idle_us = idle_us;
    c.device_resident_us = resident_us;
    /* These batches are tiny: ROUTE would keep them on the CPU pool, and
     * what is tested is the megakernel holding the GPU. */
    c.plan_off = MKRT_PLAN_ROUTE;
    mkrt_runtime *rt = NULL;
    return mkrt_create(&c, &rt, err) == MKRT_OK ? rt : NULL;
}

/* One batch: cell[h] = k, cell[h + 1] = k + 1 (a two-layer chain); true
 * when both read back after the wait. */
static int one_batch(mkrt_runtime *rt, mkrt_producer *p, uint32_t h, uint32_t k)
{
    mkrt_item it[] = {{MKRT_OP_STORE, 0, h, k}, {MKRT_OP_ADD, h, h + 1, 1}};
    uint64_t ticket = 0, v[2] = {0, 0};
    return mkrt_publish(p, it, 2, SEC, NULL) == MKRT_OK && mkrt_fence(p, &ticket) == MKRT_OK &&
           mkrt_wait(p, ticket, SEC) == MKRT_OK && mkrt_cells_read(rt, h, 2, v) == MKRT_OK && v[0] == k &&
           v[1] == k + 1u;
}

typedef struct worker {
    mkrt_runtime *rt;
    uint32_t rounds;      /* 0: until stop */
    _Atomic int *stop;
    _Atomic uint32_t done; /* read by the main thread while the worker runs */
    uint32_t bad;
} worker;

static int work(void *p)
{
    worker *w = p;
    mkrt_producer *pr = mkrt_producer_open(w->rt, NULL);
    for (uint32_t k = 1; pr != NULL && (w->rounds ? k <= w->rounds : !atomic_load(w->stop)); k++) {
        w->bad += !one_batch(w->rt, pr, (k % 100) * 2, k);
        w->done++;
    }
    mkrt_producer_close(pr);
    return 0;
}

static int on_cuda(mkrt_runtime *rt)
{
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    return strcmp(s.backend, "cuda") == 0 && s.device_failures == 0;
}

/* Stand-in only: a megakernel that never leaves blocks the application's
 * synchronising call, as on a real GPU; the stand-in aborts after its
 * timeout instead of hanging (in a child, so this process carries on). */
static void resident_for_good_blocks(const char *driver)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("FAKE_CUDA_SYNC_TIMEOUT_MS", "300", 1);
        mkrt_error err;
        mkrt_runtime *rt = cuda_runtime(0, 0, 5000, &err);
        mkrt_producer *p = rt ? mkrt_producer_open(rt, NULL) : NULL;
        if (p == NULL || !one_batch(rt, p, 0, 1) || !resolve(driver))
            _exit(3);
        app_work(5); /* blocks behind the resident kernel */
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
       "stand-in: with device_idle_us = device_resident_us = 0 the application's synchronising call "
       "blocks behind the resident megakernel (the stand-in aborts after 300 ms; a GPU hangs)");
}

void sg_run_all(const char *driver, unsigned long long (*waited)(void))
{
    mkrt_error err;
    if (waited != NULL)
        resident_for_good_blocks(driver);
    mkrt_runtime *a = cuda_runtime(1000, 10000, 5000, &err);
    if (a == NULL)
        plan_skip_all(err.message);
    if (!resolve(driver))
        bail_out("the CUDA driver %s lacks an entry point the application needs", driver);

    /* Two runtimes at once, both busy. */
    mkrt_runtime *b = cuda_runtime(1000, 10000, 5000, &err);
    ok(b != NULL, "a second CUDA runtime starts while the first is alive (%s)", b ? "started" : err.message);
    if (b == NULL)
        bail_out("second runtime: %s", err.message);
    _Atomic int stop = 0;
    worker wa = {a, 300, &stop, 0, 0}, wb = {b, 300, &stop, 0, 0};
    mkrt__thread ta, tb;
    mkrt__thread_start(&ta, work, &wa);
    mkrt__thread_start(&tb, work, &wb);
    mkrt__thread_join(ta);
    mkrt__thread_join(tb);
    ok(atomic_load(&wa.done) == 300 && atomic_load(&wb.done) == 300 && wa.bad == 0 && wb.bad == 0,
       "both runtimes ran 300 batches each at the same time, every result right (%u and %u wrong)", wa.bad,
       wb.bad);
    ok(on_cuda(a) && on_cuda(b), "... both on the GPU, without a device failure");
    is(mkrt_destroy(b, SEC, NULL), MKRT_OK, "the second runtime is destroyed while the first lives");

    /* The application beside an idle runtime. */
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
    const char *failed = app_work(0x1234);
    ok(failed == NULL, "beside an idle runtime the application allocates, loads a module, runs its kernel, "
                       "copies back and synchronises (%s)", failed ? failed : "all done");
    mkrt_producer *p = mkrt_producer_open(a, NULL);
    ok(one_batch(a, p, 10, 77) && on_cuda(a), "... and the runtime's next batch runs on the GPU again");

    /* ... and beside a busy one. */
    unsigned long long before = waited ? waited() : 0;
    worker busy = {a, 0, &stop, 0, 0};
    mkrt__thread tbusy;
    mkrt__thread_start(&tbusy, work, &busy);
    /* The runtime is busy once its first batch completed: the application's
     * work below must overlap batches, not run before the first one (on a
     * loaded machine the worker may not have been scheduled yet). Bounded:
     * 30 s, then the check below fails naming 0 batches. */
    for (int i = 0; i < 30000 && atomic_load(&busy.done) == 0; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    int app_ok = 1;
    for (int i = 0; i < 3; i++) {
        failed = app_work(100u + (unsigned)i);
        app_ok &= failed == NULL;
    }
    atomic_store(&stop, 1);
    mkrt__thread_join(tbusy);
    ok(app_ok, "beside a busy runtime the application's CUDA work completes, 3 times (%s)",
       failed ? failed : "all done");
    const uint32_t busy_done = atomic_load(&busy.done);
    ok(busy_done > 0 && busy.bad == 0 && on_cuda(a), "... while the runtime ran %u batches on the GPU, all right",
       busy_done);
    if (waited != NULL)
        ok(waited() > before, "stand-in: the application's synchronising calls did wait for the megakernel "
                              "(%llu waits), which left the GPU at a batch boundary",
           waited() - before);

    /* Idle exits are not hangs: a short watchdog and a short idle period. */
    mkrt_producer_close(p);
    is(mkrt_destroy(a, SEC, NULL), MKRT_OK, "the first runtime is destroyed");
    mkrt_runtime *c = cuda_runtime(200, 500, 100, &err);
    if (c == NULL)
        bail_out("third runtime: %s", err.message);
    p = mkrt_producer_open(c, NULL);
    int good = 1;
    for (uint32_t k = 1; k <= 20; k++) {
        good &= one_batch(c, p, 20, k);
        struct timespec nap = {0, 3000000}; /* longer than the idle period */
        nanosleep(&nap, NULL);
    }
    for (uint32_t k = 1; k <= 300; k++)
        good &= one_batch(c, p, 40, k);
    ok(good && on_cuda(c), "with a 100 ms watchdog, 20 batches each after the megakernel left the GPU idle, "
                           "and 300 back to back across its resident_us exits, all ran on the GPU");
    mkrt_producer_close(p);
    is(mkrt_destroy(c, SEC, NULL), MKRT_OK, "... and the runtime is destroyed");
}
