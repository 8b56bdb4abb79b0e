/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_cuda_engine.c - the CUDA backend's host side end to end,
 * through the stand-in driver (tests/fakes/fake_libcuda.c), whose
 * "kernel" is the megakernel's loop in C over the memory the engine
 * allocated: context, module load or PTX link, occupancy-sized launch,
 * host-mapped control block, registered cells and log, zero-copy and HtoD
 * staging, failure lists, fault and hang handling, teardown. No GPU needed;
 * tests/cuda_*.c run the same on a real GPU. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/cuda/cuda_loader.h"
#include "../src/runtime/test_hooks.h"
#include "mkrt/runtime.h"
#include "backend_compare.h"
#include "fake_cuda.h"
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
    static bc_run dev_state;
    bc_device_state = 1;
    if (!bc_run_workload(MKRT_BACKEND_CUDA, fake_ptx, 240, 777, &dev_state, &err))
        bail_out("CUDA backend with device state: %s", err.message);
    bc_device_state = 0;
    bc_check_same(&cpu, &dev_state, "the same 240 batches with the cells and the log in device memory");
    is(dev.destroyed, MKRT_OK, "destroy stops the megakernel");
    is(fake_live(), 0, "... and frees every driver resource (allocations, registrations, streams, "
                       "module, context)");
}

/* cuda_device_state = 1: the cells and the log live in the stand-in's
 * device memory (addresses the host cannot dereference, copies that
 * complete on their stream), reads and writes are explicit copies, and a
 * CPU-only op moves the state home and back. Same results as the CPU. */
static mkrt_status op_cpu_only(const mkrt_item *item, const mkrt_op_ctx *ctx)
{
    ctx->cells[item->out] = ctx->cells[item->in] * 5 + item->param;
    return MKRT_OK;
}

typedef struct state_run {
    uint64_t cells[CELLS];
    mkrt_append_entry log[4096];
    size_t log_n;
    uint64_t cell_seen, host_array; /* a device-written cell: read through the API, and in the host array */
    char describe[400];
} state_run;

static void state_workload(mkrt_backend_kind kind, state_run *out)
{
    bc_failures f;
    memset(&f, 0, sizeof f);
    mkrt_error err;
    bc_device_state = 1;
    mkrt_runtime *rt = bc_start(kind, &f, 5000, NULL, &err);
    bc_device_state = 0;
    if (rt == NULL)
        bail_out("device state: %s", err.message);
    mkrt_op_desc d19 = {.fn = op_cpu_only, .name = "cpu_only"};
    mkrt_op_register(rt, 19, &d19, NULL);
    snprintf(out->describe, sizeof out->describe, "%s", mkrt_backend_describe(rt));
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    uint64_t ticket;
    unsigned seed = 99;
    for (uint32_t round = 0; round < 60; round++) {
        mkrt_item b[64];
        size_t n = 0;
        for (uint32_t i = 0; i < 40; i++) {
            uint32_t in = (uint32_t)rand_r(&seed) % 64, o = (uint32_t)rand_r(&seed) % 64;
            uint32_t op = round % 3 == 2 && i % 5 == 0 ? 19 : (uint32_t)rand_r(&seed) % 4; /* NOP STORE ADD APPEND */
            b[n++] = (mkrt_item){op, in, o, (uint32_t)rand_r(&seed) % 1000};
        }
        mkrt_publish(p, b, n, SEC, NULL);
        mkrt_fence(p, &ticket);
        mkrt_wait(p, ticket, SEC);
        if (round % 7 == 3)
            mkrt_cell_write(rt, 70 + round % 5, round * 11u); /* no item touches 70..74 */
        if (round % 10 == 9)
            out->log_n += mkrt_append_log_consume(rt, out->log + out->log_n, 4096 - out->log_n);
    }
    mkrt_item last = {MKRT_OP_STORE, 0, 100, 4242};
    mkrt_publish(p, &last, 1, SEC, NULL);
    mkrt_fence(p, &ticket);
    mkrt_wait(p, ticket, SEC);
    mkrt_cell_read(rt, 100, &out->cell_seen);
    out->host_array = mkrt__test_cells(rt)[100];
    mkrt_cells_read(rt, 0, CELLS, out->cells);
    out->log_n += mkrt_append_log_consume(rt, out->log + out->log_n, 4096 - out->log_n);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

static void device_state(void)
{
    static state_run cpu, dev;
    state_workload(MKRT_BACKEND_CPU, &cpu);
    state_workload(MKRT_BACKEND_CUDA, &dev);
    like(dev.describe, "cells and log in device memory", "cuda_device_state = 1 puts the cells and the log in "
                                                         "device memory");
    ok(dev.cell_seen == 4242 && dev.host_array != 4242,
       "a cell the device wrote reads back through an explicit copy; the host array does not have it "
       "(%llu)", (unsigned long long)dev.host_array);
    ok(memcmp(cpu.cells, dev.cells, sizeof cpu.cells) == 0,
       "60 batches, a third with a CPU-only op (the state moves home and back), host cell writes "
       "between: the same cells as the CPU");
    /* Per handle, in order (entries of different handles in one layer
     * may interleave either way). */
    int same_log = cpu.log_n == dev.log_n && cpu.log_n > 0;
    for (uint32_t h = 0; h < 64 && same_log; h++) {
        size_t i = 0, j = 0;
        for (;;) {
            while (i < cpu.log_n && cpu.log[i].handle != h)
                i++;
            while (j < dev.log_n && dev.log[j].handle != h)
                j++;
            if (i == cpu.log_n || j == dev.log_n) {
                same_log &= i == cpu.log_n && j == dev.log_n;
                break;
            }
            same_log &= cpu.log[i++].param == dev.log[j++].param;
        }
    }
    ok(same_log, "... and the same APPEND log, handle by handle, consumed in pieces (%zu entries)", dev.log_n);
    is(fake_live(), 0, "... and destroy frees the device state");
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

static void sticky_fault(uint32_t device_state)
{
    bc_failures f;
    memset(&f, 0, sizeof f);
    mkrt_error err;
    setenv("FAKE_CUDA_MODE", "fault", 1);
    setenv("FAKE_CUDA_FAULT_BATCH", "3", 1);
    bc_device_state = device_state;
    mkrt_runtime *rt = bc_start(MKRT_BACKEND_CUDA, &f, 5000, NULL, &err);
    bc_device_state = 0;
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
    if (device_state) {
        /* The device's memory went with the context: the cells fall back to
         * the host's last copy (taken when the device took the state). */
        ok(v1 == 0 && v8 == 42 && strcmp((mkrt_stats_read(rt, &s), s.backend), "cpu") == 0,
           "device state: the cells the device wrote before the fault are lost with its memory (0), "
           "later batches run on the CPU (42)");
        like(mkrt_backend_describe(rt), "cells and APPEND log since their last copy to the host are lost",
             "... and describe says so");
    } else {
        ok(v1 == 12 && v8 == 42 && strcmp((mkrt_stats_read(rt, &s), s.backend), "cpu") == 0,
           "batches before the fault ran on the device (12), later ones on the CPU (42)");
    }
    mkrt_producer_close(p);
    is(mkrt_destroy(rt, SEC, NULL), MKRT_OK, "destroy after a fault succeeds");
    is(fake_live(), 0, "... and frees everything");
    setenv("FAKE_CUDA_MODE", "ok", 1);
}

/* With the state in device memory: the watchdog copies the progress words
 * out (on its own stream, beside the hung kernel), the cells come home by
 * a copy too, and the CPU carries on from them. In a child: the hung
 * kernel stays behind. Exit status: 0, or the first check that failed. */
static void hung_op_device_state(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        bc_failures f;
        memset(&f, 0, sizeof f);
        mkrt_error err;
        bc_device_state = 1;
        mkrt_runtime *rt = bc_start(MKRT_BACKEND_CUDA, &f, 100, fake_ptx, &err);
        if (rt == NULL)
            _exit(10);
        mkrt_producer *p = mkrt_producer_open(rt, NULL);
        mkrt_item it[] = {{MKRT_OP_STORE, 0, 1, 5}, {18, 1, 2, 0}, {MKRT_OP_ADD, 2, 3, 1}};
        bc_one_batch(rt, p, it, 3);
        if (atomic_load(&f.n) != 3 || f.last != MKRT_ETIMEDOUT)
            _exit(11);
        if (strstr(mkrt_backend_describe(rt), "(block 0 at layer 0 after 1 items") == NULL)
            _exit(12);
        uint64_t v1 = 0, v7 = 0;
        mkrt_item after = {MKRT_OP_ADD, 1, 7, 35};
        mkrt_publish(p, &after, 1, SEC, NULL);
        mkrt_drain(rt, SEC);
        mkrt_cell_read(rt, 1, &v1);
        mkrt_cell_read(rt, 7, &v7);
        _exit(v1 == 5 && v7 == 40 ? 0 : 13);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    is(WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status), 0,
       "device state: a hung op trips the watchdog, which copies the progress words out (block 0 at "
       "layer 0 after 1 items); the cells come home by a copy beside the hung kernel and the CPU "
       "carries on from them (5 + 35 = 40)");
}

/* A slow op, not a hung one: the watchdog trips while the kernel still
 * runs the batch. The failed engine waits for the kernel's stream to end
 * before the CPU takes the cells, so the batch's last layer (ADD into 3,
 * after the slow op) cannot land on the CPU's later STORE. */
static void slow_op(void)
{
    bc_check_slow_op(MKRT_BACKEND_CUDA, fake_ptx, 200, 300, "stand-in driver");
    is(fake_live(), 0, "... and frees everything");
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
    is(bc_one_batch(rt, p, it, 3), MKRT_OK, "a hung device op does not hang the runtime");
    ok(atomic_load(&f.n) == 3 && f.last == MKRT_ETIMEDOUT,
       "the watchdog sends the hung batch to the error path (3 items, MKRT_ETIMEDOUT)");
    matches(mkrt_backend_describe(rt), "watchdog: batch [0-9]+ not done after [0-9]+ ms \\(block 0 at layer",
         "describe says where the blocks stopped: %.140s", mkrt_backend_describe(rt));
    like(mkrt_backend_describe(rt), "the device did not stop",
         "... and that the kernel, asked to leave, did not within another watchdog period");
    mkrt_producer_close(p);
    is(mkrt_destroy(rt, SEC, &err), MKRT_EDEVICE, "destroy reports a kernel that would not stop");
    matches(err.message, "did not stop .* stay allocated", "... and that its memory stays allocated");
    ok(fake_live() > 0, "the hung kernel's memory was not freed under it");
}

int main(int argc, char **argv)
{
    (void)argc;
    *(void **)&fake_live = fake_cuda_probe(fake_cuda_open(argv[0]), "fake_cuda_live");
    if (!mkrt__cuda_megakernel_built()) {
        plan_skip_all("the CUDA megakernel was not built (no nvcc): the CUDA backend cannot start");
    }
    hung_op_device_state(); /* first: forks while this process has one thread */
    same_results_as_cpu();
    device_state();
    start_failures();
    sticky_fault(0);
    sticky_fault(1);
    slow_op();
    hung_op();
    return done_testing();
}
