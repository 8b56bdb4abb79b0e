/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/fake_cuda.c - see fake_cuda.h. */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "fake_cuda.h"
#include "mkrt/mkrt.h"
#include "tap.h"

void *fake_cuda_open(const char *argv0)
{
    char self[PATH_MAX], fake[PATH_MAX + 32];
    snprintf(self, sizeof self, "%s", argv0);
    snprintf(fake, sizeof fake, "%s/libfakecuda.so", dirname(self));
    setenv("MKRT_LIBCUDA", fake, 1);
    setenv("FAKE_CUDA_MODE", "ok", 1);
    void *lib = dlopen(fake, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL)
        bail_out("stand-in driver %s: %s", fake, dlerror());
    return lib;
}

void *fake_cuda_probe(void *lib, const char *name)
{
    void *fn = dlsym(lib, name);
    if (fn == NULL)
        bail_out("the stand-in driver has no %s: %s", name, dlerror());
    return fn;
}

void cuda_real_or_skip(void)
{
    unsetenv("MKRT_LIBCUDA");
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CUDA;
    c.cells = 16;
    mkrt_runtime *rt;
    static mkrt_error err;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK)
        plan_skip_all(err.message);
    mkrt_destroy(rt, 10000000000ull, NULL);
}

void fake_cuda_set_memory(unsigned long long total, unsigned long long others)
{
    char v[32];
    snprintf(v, sizeof v, "%llu", total);
    setenv("FAKE_CUDA_MEM_TOTAL", v, 1);
    snprintf(v, sizeof v, "%llu", others);
    setenv("FAKE_CUDA_MEM_OTHERS", v, 1);
}
