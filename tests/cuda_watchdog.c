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
    /* A slow op first: the hung op's kernel stays on the GPU. */
    bc_check_slow_op(MKRT_BACKEND_CUDA, ptx, 300, 500, "GPU");
    memset(&f, 0, sizeof f);
    rt = bc_start(MKRT_BACKEND_CUDA, &f, 300, ptx, &err);
    if (rt == NULL)
        bail_out("hung op: %s", err.message);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item it[] = {{MKRT_OP_STORE, 0, 1, 5}, {18, 1, 2, 0}, {MKRT_OP_ADD, 2, 3, 1}};
    is(bc_one_batch(rt, p, it, 3), MKRT_OK, "a hung GPU op does not hang the runtime");
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
