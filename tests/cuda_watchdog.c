/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/cuda_watchdog.c - on a real GPU (skipped without one): a slow op
 * trips the watchdog, and the kernel is waited for before the CPU takes
 * over; a user op that never returns trips the watchdog, the batch goes to
 * the error path with where the blocks stopped and that the kernel did not
 * stop when asked to, the runtime carries on with the CPU, and destroy
 * reports the kernel it could not stop (the driver ends it when the
 * process exits). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/runtime/test_hooks.h"
#include "backend_compare.h"
#include "tap.h"

/* A slow op (500 ms, watchdog 300 ms): the trip waits for the kernel to
 * finish the batch and leave before the CPU takes the cells, so the
 * batch's last layer cannot land on a later STORE. Run before the hung op,
 * which leaves its kernel on the GPU. */
static void slow_op(const char *ptx)
{
    bc_failures f;
    memset(&f, 0, sizeof f);
    static mkrt_error err;
    mkrt_runtime *rt = bc_start(MKRT_BACKEND_CUDA, &f, 300, ptx, &err);
    if (rt == NULL)
        bail_out("slow op: %s", err.message);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item it[] = {{MKRT_OP_STORE, 0, 1, 5}, {19, 1, 2, 500}, {MKRT_OP_ADD, 2, 3, 1}};
    mkrt__runtime_hold(rt, true);
    mkrt_publish(p, it, 3, BC_SEC, NULL);
    mkrt__runtime_hold(rt, false);
    is(mkrt_drain(rt, BC_SEC), MKRT_OK, "a slow GPU op drains");
    ok(atomic_load(&f.n) == 3 && f.last == MKRT_ETIMEDOUT, "... its batch failed (3 items, MKRT_ETIMEDOUT)");
    like(mkrt_backend_describe(rt), "the device stopped", "... after the kernel left the GPU");
    mkrt_item after = {MKRT_OP_STORE, 0, 3, 77};
    mkrt_publish(p, &after, 1, BC_SEC, NULL);
    mkrt_drain(rt, BC_SEC);
    uint64_t v3 = 0;
    mkrt_cell_read(rt, 3, &v3);
    is((long long)v3, 77, "... and the CPU's later STORE stays (77)");
    mkrt_producer_close(p);
    is(mkrt_destroy(rt, BC_SEC, &err), MKRT_OK, "destroy after a slow op succeeds");
}

int main(void)
{
    unsetenv("MKRT_LIBCUDA");
    const char *path = getenv("MKRT_TEST_USER_PTX");
    size_t n;
    char *ptx = bc_read_file(path ? path : "build/cuda/user_ops.ptx", &n);
    bc_failures f;
    memset(&f, 0, sizeof f);
    static mkrt_error err;
    mkrt_runtime *rt = bc_start(MKRT_BACKEND_CUDA, &f, 300, ptx, &err);
    if (rt == NULL)
        plan_skip_all(err.message);
    if (ptx == NULL)
        plan_skip_all("no user-op PTX (build/cuda/user_ops.ptx): the hung op cannot be linked");
    mkrt_destroy(rt, BC_SEC, NULL); /* the GPU is usable */
    slow_op(ptx);
    memset(&f, 0, sizeof f);
    rt = bc_start(MKRT_BACKEND_CUDA, &f, 300, ptx, &err);
    if (rt == NULL)
        bail_out("hung op: %s", err.message);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item it[] = {{MKRT_OP_STORE, 0, 1, 5}, {18, 1, 2, 0}, {MKRT_OP_ADD, 2, 3, 1}};
    mkrt__runtime_hold(rt, true);
    mkrt_publish(p, it, 3, BC_SEC, NULL);
    mkrt__runtime_hold(rt, false);
    is(mkrt_drain(rt, BC_SEC), MKRT_OK, "a hung GPU op does not hang the runtime");
    ok(atomic_load(&f.n) == 3 && f.last == MKRT_ETIMEDOUT,
       "the watchdog sends the hung batch to the error path (3 items, MKRT_ETIMEDOUT)");
    matches(mkrt_backend_describe(rt), "not done after [0-9]+ ms \\(block 0 at layer",
            "describe says where the blocks stopped: %.200s", mkrt_backend_describe(rt));
    /* The failed engine asked the kernel to leave and gave it another
     * watchdog period: an op that never returns keeps it on the GPU. */
    like(mkrt_backend_describe(rt), "did not stop", "... and that the hung kernel did not stop");
    mkrt_item after[] = {{MKRT_OP_STORE, 0, 5, 40}, {MKRT_OP_ADD, 5, 6, 2}};
    mkrt_publish(p, after, 2, BC_SEC, NULL);
    mkrt_drain(rt, BC_SEC);
    uint64_t v;
    mkrt_cell_read(rt, 6, &v);
    ok(v == 42, "later batches run on the CPU (42)");
    mkrt_producer_close(p);
    is(mkrt_destroy(rt, BC_SEC, &err), MKRT_EDEVICE, "destroy reports the kernel it could not stop");
    free(ptx);
    return done_testing();
}
