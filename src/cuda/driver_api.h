/* SPDX-License-Identifier: BSD-2-Clause */
/* src/cuda/driver_api.h - the slice of the CUDA Driver API mkrt uses,
 * declared here so that the library builds and loads without cuda.h and
 * never links libcuda: every entry point is resolved at run time through
 * cuGetProcAddress (CUDA >= 12 form) for the ABI version below. */
#ifndef MKRT_CUDA_DRIVER_API_H
#define MKRT_CUDA_DRIVER_API_H

#include <stddef.h>
#include <stdint.h>

/* Entry points are requested for this driver ABI (CUDA 12.0); older
 * drivers are refused with a message. */
#define MKRT_CUDA_ABI_VERSION 12000

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;

enum {
    MKRT_CUDA_SUCCESS = 0,
    MKRT_CUDA_ERROR_INVALID_VALUE = 1,
    MKRT_CUDA_ERROR_OUT_OF_MEMORY = 2,
    MKRT_CUDA_ERROR_NOT_INITIALIZED = 3,
    MKRT_CUDA_ERROR_STUB_LIBRARY = 34,
    MKRT_CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER = 36,
    MKRT_CUDA_ERROR_NO_DEVICE = 100,
    MKRT_CUDA_ERROR_INVALID_IMAGE = 200,
    MKRT_CUDA_ERROR_NOT_FOUND = 500,
    MKRT_CUDA_ERROR_NOT_READY = 600,
    MKRT_CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    MKRT_CUDA_ERROR_LAUNCH_TIMEOUT = 702,
    MKRT_CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
    MKRT_CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
    MKRT_CUDA_ERROR_MISALIGNED_ADDRESS = 716,
    MKRT_CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
    MKRT_CUDA_ERROR_INVALID_PC = 718,
    MKRT_CUDA_ERROR_LAUNCH_FAILED = 719,
    MKRT_CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720
};

enum {
    MKRT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    MKRT_CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT = 17,
    MKRT_CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19,
    MKRT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    MKRT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    MKRT_CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95
};

/* Flags and options, with cuda.h's values. */
enum {
    MKRT_CU_STREAM_NON_BLOCKING = 1,
    MKRT_CU_MEMHOSTALLOC_PORTABLE = 1,
    MKRT_CU_MEMHOSTALLOC_DEVICEMAP = 2,
    MKRT_CU_MEMHOSTREGISTER_PORTABLE = 1,
    MKRT_CU_MEMHOSTREGISTER_DEVICEMAP = 2,
    MKRT_CU_JIT_INFO_LOG_BUFFER = 3,
    MKRT_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    MKRT_CU_JIT_ERROR_LOG_BUFFER = 5,
    MKRT_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    MKRT_CU_JIT_INPUT_PTX = 1,
    MKRT_CU_JIT_INPUT_FATBINARY = 2
};

typedef CUresult (*mkrt_cuGetProcAddress_fn)(const char *symbol, void **pfn, int cuda_version,
                                             uint64_t flags, int *symbol_status);

/* The resolved entry points. */
typedef struct mkrt__cuda_api {
    void *lib; /* dlopen handle */
    mkrt_cuGetProcAddress_fn get_proc; /* for entry points outside this table (benchmarks) */
    CUresult (*cuInit)(unsigned flags);
    CUresult (*cuDriverGetVersion)(int *version);
    CUresult (*cuGetErrorName)(CUresult e, const char **s);
    CUresult (*cuGetErrorString)(CUresult e, const char **s);
    CUresult (*cuDeviceGetCount)(int *count);
    CUresult (*cuDeviceGet)(CUdevice *d, int ordinal);
    CUresult (*cuDeviceGetAttribute)(int *v, int attr, CUdevice d);
    CUresult (*cuDeviceGetName)(char *name, int len, CUdevice d);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice d);
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice d);
    CUresult (*cuCtxSetCurrent)(CUcontext ctx);
    CUresult (*cuCtxGetCurrent)(CUcontext *ctx);
    CUresult (*cuModuleLoadData)(CUmodule *m, const void *image);
    CUresult (*cuModuleUnload)(CUmodule m);
    CUresult (*cuModuleGetFunction)(CUfunction *f, CUmodule m, const char *name);
    CUresult (*cuMemAlloc)(CUdeviceptr *p, size_t bytes);
    CUresult (*cuMemGetInfo)(size_t *free_bytes, size_t *total_bytes);
    CUresult (*cuMemFree)(CUdeviceptr p);
    CUresult (*cuMemHostAlloc)(void **p, size_t bytes, unsigned flags);
    CUresult (*cuMemFreeHost)(void *p);
    CUresult (*cuMemHostGetDevicePointer)(CUdeviceptr *d, void *p, unsigned flags);
    CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes, CUstream s);
    CUresult (*cuMemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);
    CUresult (*cuMemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes, CUstream s);
    CUresult (*cuStreamCreate)(CUstream *s, unsigned flags);
    CUresult (*cuStreamDestroy)(CUstream s);
    CUresult (*cuStreamSynchronize)(CUstream s);
    CUresult (*cuStreamQuery)(CUstream s);
    CUresult (*cuMemHostRegister)(void *p, size_t bytes, unsigned flags); /* cuMemHostRegister_v2 */
    CUresult (*cuMemHostUnregister)(void *p);
    CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *n, CUfunction f, int block, size_t smem);
    CUresult (*cuLaunchCooperativeKernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                          unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                          CUstream s, void **params);
    CUresult (*cuLinkCreate)(unsigned n, int *opts, void **vals, void **state);
    CUresult (*cuLinkAddData)(void *state, int type, void *data, size_t size, const char *name,
                              unsigned n, int *opts, void **vals);
    CUresult (*cuLinkComplete)(void *state, void **cubin, size_t *size);
    CUresult (*cuLinkDestroy)(void *state);
    int driver_version;
    int device_count;
    CUdevice device;
    int sm_count, cc_major, cc_minor, cooperative, map_host, exec_timeout;
    char name[128];
} mkrt__cuda_api;

#endif
