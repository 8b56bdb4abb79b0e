/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/cuda_shared.c - on a real GPU (skipped without one): two runtimes
 * at once, and the application's own CUDA work (allocation, module load,
 * kernel, synchronous copy, cuCtxSynchronize) beside a live runtime, busy
 * and idle (tests/shared_gpu.c). A regression hangs here, so run it under
 * a timeout (make check does). */
#include <stdlib.h>

#include "shared_gpu.h"
#include "tap.h"

int main(void)
{
    unsetenv("MKRT_LIBCUDA");
    sg_run_all("libcuda.so.1", NULL);
    return done_testing();
}
