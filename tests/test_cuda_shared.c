/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_cuda_shared.c - tests/shared_gpu.c through the stand-in
 * driver, whose synchronising calls (module loads, allocations, frees,
 * cuCtxSynchronize, synchronous copies) wait while any kernel of the
 * process runs, as a GPU's do (and abort after a timeout instead of
 * hanging). No GPU needed; tests/cuda_shared.c runs the same on one. */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "../src/cuda/cuda_loader.h"
#include "shared_gpu.h"
#include "tap.h"

int main(int argc, char **argv)
{
    (void)argc;
    char self[PATH_MAX], fake[PATH_MAX + 32];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(fake, sizeof fake, "%s/libfakecuda.so", dirname(self));
    setenv("MKRT_LIBCUDA", fake, 1);
    setenv("FAKE_CUDA_MODE", "ok", 1);
    if (!mkrt__cuda_megakernel_built())
        plan_skip_all("the CUDA megakernel was not built (no nvcc): the CUDA backend cannot start");
    void *lib = dlopen(fake, RTLD_NOW | RTLD_LOCAL);
    unsigned long long (*waited)(void) = NULL;
    if (lib == NULL || (*(void **)&waited = dlsym(lib, "fake_cuda_syncs_waited")) == NULL)
        bail_out("stand-in driver %s: %s", fake, dlerror());
    sg_run_all(fake, waited);
    return done_testing();
}
