/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_cuda_backend.c - the CUDA loader's failure paths (through a
 * stand-in libcuda), the AUTO fallback and its reason, the explicit-CUDA
 * error, and the embedded megakernel fatbin. No GPU needed. */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/cuda/cuda_loader.h"
#include "mkrt/runtime.h"
#include "tap.h"

static char fake[PATH_MAX];

static mkrt_status load_with(const char *lib, const char *mode, mkrt__cuda_api *cu, mkrt_error *err)
{
    setenv("MKRT_LIBCUDA", lib, 1);
    setenv("FAKE_CUDA_MODE", mode, 1);
    return mkrt__cuda_load(cu, err);
}

int main(int argc, char **argv)
{
    (void)argc;
    char self[PATH_MAX];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(fake, sizeof fake, "%s/libfakecuda.so", dirname(self));
    mkrt__cuda_api cu;
    mkrt_error err;

    is(load_with("/nonexistent/libcuda.so.1", "ok", &cu, &err), MKRT_EDEVICE, "a missing driver is MKRT_EDEVICE");
    like(err.message, "could not be loaded", "... saying the library could not be loaded");
    like(err.message, "Fix:", "... with a Fix");
    is(load_with(fake, "stub", &cu, &err), MKRT_EDEVICE, "a stub library is refused");
    like(err.message, "stub library, not a driver", "... and named as a stub");
    like(err.message, "CUDA_ERROR_STUB_LIBRARY", "... with cuGetErrorName's text");
    is(load_with(fake, "nodevice", &cu, &err), MKRT_EDEVICE, "no device is refused");
    like(err.message, "found no device", "... saying so");
    is(load_with(fake, "old", &cu, &err), MKRT_EDEVICE, "an old driver is refused");
    like(err.message, "version 11080 is older than the 12000", "... with both versions");
    is(load_with(fake, "nocoop", &cu, &err), MKRT_EDEVICE, "a device without cooperative launch is refused");
    like(err.message, "cooperative launch", "... saying why");
    is(load_with(fake, "missing", &cu, &err), MKRT_EDEVICE, "a missing entry point is refused");
    like(err.message, "cuLaunchCooperativeKernel is missing", "... naming it");
    is(load_with(fake, "ok", &cu, &err), MKRT_OK, "a healthy driver loads");
    ok(strcmp(cu.name, "Fake GPU") == 0 && cu.cc_major == 9 && cu.sm_count == 132 && cu.cooperative,
       "... and reports the device (Fake GPU, sm_90, 132 SMs)");
    char buf[160];
    like(mkrt__cuda_error_text(&cu, 100, buf, sizeof buf), "CUDA_ERROR_NO_DEVICE", "error codes become names");
    mkrt__cuda_unload(&cu);
    ok(mkrt__cuda_error_is_sticky(700) && mkrt__cuda_error_is_sticky(719) && !mkrt__cuda_error_is_sticky(100),
       "illegal address and launch failure are sticky; no device is not");

    setenv("MKRT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CUDA;
    mkrt_runtime *rt = NULL;
    is(mkrt_create(&c, &rt, &err), MKRT_EDEVICE, "backend CUDA without a usable GPU is MKRT_EDEVICE");
    like(err.message, "Or use MKRT_BACKEND_AUTO", "... with a Fix and the AUTO alternative");
    like(err.message, "Fix:", "... the Fix: %s", err.message);
    c.backend = MKRT_BACKEND_AUTO;
    is(mkrt_create(&c, &rt, &err), MKRT_OK, "backend AUTO falls back to the CPU");
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(strcmp(s.backend, "cpu") == 0 && strncmp(s.backend_detail, "cpu: ", 5) == 0 &&
           strstr(s.backend_detail, "auto chose the CPU: ") != NULL,
       "... and says calmly why in stats and describe: %s", mkrt_backend_describe(rt));
    ok(strstr(mkrt_backend_describe(rt), "Fix:") == NULL,
       "... without a Fix: running on the CPU is not an error");
    mkrt_destroy(rt, 1000000000u, NULL);

    /* AUTO with the driver this machine has (none without a GPU, or no
     * megakernel without nvcc): the CPU with its reason, or the GPU; never a
     * Fix either way. */
    unsetenv("MKRT_LIBCUDA");
    unsetenv("FAKE_CUDA_MODE");
    is(mkrt_create(&c, &rt, &err), MKRT_OK, "backend AUTO starts on this machine");
    diag("AUTO here: %s", mkrt_backend_describe(rt));
    ok(strstr(mkrt_backend_describe(rt), "Fix:") == NULL, "... and its description has no Fix");
    if (strncmp(mkrt_backend_describe(rt), "cpu", 3) == 0)
        like(mkrt_backend_describe(rt), "(auto chose the CPU: ", "... on the CPU, it says why");
    else
        ok(1, "... on the GPU");
    mkrt_destroy(rt, 1000000000u, NULL);

    if (mkrt__cuda_megakernel_built()) {
        extern const unsigned char mkrt__megakernel_fatbin[];
        uint32_t magic;
        memcpy(&magic, mkrt__megakernel_fatbin, sizeof magic);
        ok(mkrt__cuda_megakernel_fatbin_size() > 1024 && magic == 0xBA55ED50u,
           "the megakernel fatbin is embedded (%zu bytes, fatbin magic)", mkrt__cuda_megakernel_fatbin_size());
    } else {
        diag("CUDA megakernel: not built (no nvcc at build time)");
        is(mkrt__cuda_megakernel_fatbin_size(), 0, "without nvcc the library reports the megakernel not built");
    }
    return done_testing();
}
