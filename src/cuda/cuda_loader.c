/* SPDX-License-Identifier: BSD-2-Clause */
/* src/cuda/cuda_loader.c - see cuda_loader.h. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error_internal.h"
#include "cuda/cuda_loader.h"

const char *mkrt__cuda_error_text(const mkrt__cuda_api *cu, CUresult e, char *buf, size_t len)
{
    const char *name = NULL, *text = NULL;
    if (cu != NULL && cu->cuGetErrorName != NULL)
        cu->cuGetErrorName(e, &name);
    if (cu != NULL && cu->cuGetErrorString != NULL)
        cu->cuGetErrorString(e, &text);
    if (name != NULL)
        snprintf(buf, len, "%s (%s)", name, text ? text : "no description");
    else
        snprintf(buf, len, "CUDA error %d", e);
    return buf;
}

bool mkrt__cuda_error_is_sticky(CUresult e)
{
    switch (e) {
    case MKRT_CUDA_ERROR_ILLEGAL_ADDRESS:
    case MKRT_CUDA_ERROR_LAUNCH_TIMEOUT:
    case MKRT_CUDA_ERROR_HARDWARE_STACK_ERROR:
    case MKRT_CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case MKRT_CUDA_ERROR_MISALIGNED_ADDRESS:
    case MKRT_CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case MKRT_CUDA_ERROR_INVALID_PC:
    case MKRT_CUDA_ERROR_LAUNCH_FAILED:
        return true;
    default:
        return false;
    }
}

void mkrt__cuda_unload(mkrt__cuda_api *cu)
{
    if (cu->lib != NULL)
        dlclose(cu->lib);
    memset(cu, 0, sizeof *cu);
}

typedef struct entry {
    const char *name; /* base name, as cuGetProcAddress wants it */
    size_t offset;
} entry;

#define ENTRY(f) {#f, offsetof(mkrt__cuda_api, f)}
static const entry entries[] = {
    ENTRY(cuInit),           ENTRY(cuDriverGetVersion),
    ENTRY(cuGetErrorName),   ENTRY(cuGetErrorString),
    ENTRY(cuDeviceGetCount), ENTRY(cuDeviceGet),
    ENTRY(cuDeviceGetAttribute), ENTRY(cuDeviceGetName),
    ENTRY(cuDevicePrimaryCtxRetain), ENTRY(cuDevicePrimaryCtxRelease),
    ENTRY(cuCtxSetCurrent),  ENTRY(cuCtxGetCurrent),
    ENTRY(cuModuleLoadData),
    ENTRY(cuModuleUnload),   ENTRY(cuModuleGetFunction),
    ENTRY(cuMemAlloc),       ENTRY(cuMemFree),
    ENTRY(cuMemGetInfo),
    ENTRY(cuMemHostAlloc),   ENTRY(cuMemFreeHost),
    ENTRY(cuMemHostGetDevicePointer), ENTRY(cuMemcpyHtoDAsync),
    ENTRY(cuMemcpyDtoH),     ENTRY(cuMemcpyDtoHAsync),
    ENTRY(cuStreamCreate),
    ENTRY(cuStreamDestroy),  ENTRY(cuStreamSynchronize),
    ENTRY(cuStreamQuery),    ENTRY(cuMemHostRegister),
    ENTRY(cuMemHostUnregister),
    ENTRY(cuOccupancyMaxActiveBlocksPerMultiprocessor), ENTRY(cuLaunchCooperativeKernel),
    ENTRY(cuLinkCreate),     ENTRY(cuLinkAddData),
    ENTRY(cuLinkComplete),   ENTRY(cuLinkDestroy),
};

__attribute__((format(printf, 3, 4)))
static mkrt_status fail(mkrt__cuda_api *cu, mkrt_error *err, const char *fmt, ...)
{
    char msg[MKRT_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mkrt__cuda_unload(cu);
    return mkrt__error_set(err, MKRT_EDEVICE, "%s", msg);
}

mkrt_status mkrt__cuda_load(mkrt__cuda_api *cu, mkrt_error *err)
{
    memset(cu, 0, sizeof *cu);
    const char *path = getenv("MKRT_LIBCUDA");
    if (path == NULL || path[0] == '\0')
        path = "libcuda.so.1";
    cu->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (cu->lib == NULL)
        return fail(cu, err,
                    "CUDA driver library %s could not be loaded (%s). Fix: install the NVIDIA "
                    "driver, or use the CPU backend.",
                    path, dlerror());
    mkrt_cuGetProcAddress_fn gpa = (mkrt_cuGetProcAddress_fn)dlsym(cu->lib, "cuGetProcAddress_v2");
    if (gpa == NULL)
        return fail(cu, err,
                    "CUDA driver %s has no cuGetProcAddress_v2: it predates CUDA 12. Fix: "
                    "install a driver for CUDA 12 or newer.",
                    path);
    cu->get_proc = gpa;
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        void *fn = NULL;
        int status = 0;
        CUresult r = gpa(entries[i].name, &fn, MKRT_CUDA_ABI_VERSION, 0, &status);
        if (r != MKRT_CUDA_SUCCESS || fn == NULL)
            return fail(cu, err,
                        "CUDA driver entry point %s is missing for ABI 12.0 (driver %s). Fix: "
                        "install a driver for CUDA 12 or newer.",
                        entries[i].name, path);
        memcpy((char *)cu + entries[i].offset, &fn, sizeof fn);
    }
    char buf[160];
    if (cu->cuDriverGetVersion(&cu->driver_version) != MKRT_CUDA_SUCCESS ||
        cu->driver_version < MKRT_CUDA_ABI_VERSION)
        return fail(cu, err,
                    "CUDA driver version %d is older than the %d mkrt needs (%s). Fix: update the "
                    "NVIDIA driver.",
                    cu->driver_version, MKRT_CUDA_ABI_VERSION, path);
    CUresult r = cu->cuInit(0);
    if (r == MKRT_CUDA_ERROR_STUB_LIBRARY)
        return fail(cu, err,
                    "%s is the CUDA toolkit's stub library, not a driver (%s). Fix: put the real "
                    "driver's libcuda.so.1 first on the library path, or use the CPU backend.",
                    path, mkrt__cuda_error_text(cu, r, buf, sizeof buf));
    if (r == MKRT_CUDA_ERROR_NO_DEVICE)
        return fail(cu, err, "CUDA driver %s found no device (%s). Fix: check the GPU and its "
                             "driver, or use the CPU backend.",
                    path, mkrt__cuda_error_text(cu, r, buf, sizeof buf));
    if (r != MKRT_CUDA_SUCCESS)
        return fail(cu, err, "cuInit failed in %s: %s. Fix: check the NVIDIA driver installation.",
                    path, mkrt__cuda_error_text(cu, r, buf, sizeof buf));
    if (cu->cuDeviceGetCount(&cu->device_count) != MKRT_CUDA_SUCCESS || cu->device_count < 1)
        return fail(cu, err, "CUDA driver %s reports no device. Fix: check the GPU, or use the CPU "
                             "backend.",
                    path);
    cu->cuDeviceGet(&cu->device, 0);
    cu->cuDeviceGetName(cu->name, sizeof cu->name, cu->device);
    cu->cuDeviceGetAttribute(&cu->sm_count, MKRT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cu->device);
    cu->cuDeviceGetAttribute(&cu->cc_major, MKRT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cu->device);
    cu->cuDeviceGetAttribute(&cu->cc_minor, MKRT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cu->device);
    cu->cuDeviceGetAttribute(&cu->cooperative, MKRT_CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, cu->device);
    cu->cuDeviceGetAttribute(&cu->map_host, MKRT_CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, cu->device);
    cu->cuDeviceGetAttribute(&cu->exec_timeout, MKRT_CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT, cu->device);
    if (!cu->cooperative)
        return fail(cu, err, "CUDA device 0 (%s) does not support cooperative launch. Fix: use a "
                             "device of compute capability 6.0 or newer, or the CPU backend.",
                    cu->name);
    if (!cu->map_host)
        return fail(cu, err, "CUDA device 0 (%s) cannot map host memory. Fix: use another device "
                             "or the CPU backend.",
                    cu->name);
    if (cu->exec_timeout)
        return fail(cu, err, "CUDA device 0 (%s) has a kernel run-time limit (it drives a display), "
                             "which would kill the persistent megakernel. Fix: use a compute-only "
                             "GPU, or the CPU backend.",
                    cu->name);
    return MKRT_OK;
}

extern const unsigned char mkrt__megakernel_fatbin[];
extern const size_t mkrt__megakernel_fatbin_size;

bool mkrt__cuda_megakernel_built(void)
{
    return mkrt__megakernel_fatbin_size > 0;
}

size_t mkrt__cuda_megakernel_fatbin_size(void)
{
    return mkrt__megakernel_fatbin_size;
}
