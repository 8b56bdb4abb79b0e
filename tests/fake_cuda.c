/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/fake_cuda.c - see fake_cuda.h. */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "fake_cuda.h"
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
