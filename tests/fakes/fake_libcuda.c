/* tests/fakes/fake_libcuda.c - a stand-in libcuda.so.1 for the loader's
 * failure paths. FAKE_CUDA_MODE selects the behaviour:
 *   ok        a healthy "Fake GPU" (sm_90, 132 SMs, cooperative launch)
 *   stub      cuInit returns CUDA_ERROR_STUB_LIBRARY (34)
 *   nodevice  cuInit returns CUDA_ERROR_NO_DEVICE (100)
 *   old       cuDriverGetVersion reports 11080
 *   nocoop    the device lacks cooperative launch
 *   missing   cuLaunchCooperativeKernel cannot be resolved */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *mode(void)
{
    const char *m = getenv("FAKE_CUDA_MODE");
    return m ? m : "ok";
}

static int is(const char *m)
{
    return strcmp(mode(), m) == 0;
}

static int fake_init(unsigned flags)
{
    (void)flags;
    return is("stub") ? 34 : is("nodevice") ? 100 : 0;
}

static int fake_version(int *v)
{
    *v = is("old") ? 11080 : 12080;
    return 0;
}

static int fake_error_name(int e, const char **s)
{
    *s = e == 34 ? "CUDA_ERROR_STUB_LIBRARY" : e == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN";
    return 0;
}

static int fake_error_string(int e, const char **s)
{
    *s = e == 34 ? "stub library" : e == 100 ? "no CUDA-capable device is detected" : "unknown error";
    return 0;
}

static int fake_count(int *n)
{
    *n = 1;
    return 0;
}

static int fake_get(int *d, int ordinal)
{
    *d = ordinal;
    return 0;
}

static int fake_attr(int *v, int attr, int d)
{
    (void)d;
    switch (attr) {
    case 16: *v = 132; break;
    case 19: *v = 1; break;
    case 75: *v = 9; break;
    case 76: *v = 0; break;
    case 95: *v = is("nocoop") ? 0 : 1; break;
    default: *v = 0; break;
    }
    return 0;
}

static int fake_name(char *name, int len, int d)
{
    (void)d;
    strncpy(name, "Fake GPU", (size_t)len);
    return 0;
}

static int fake_unsupported(void)
{
    return 801; /* CUDA_ERROR_NOT_SUPPORTED: nothing here runs kernels */
}

int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status);

int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status)
{
    (void)version;
    (void)flags;
    static const struct { const char *name; void *fn; } table[] = {
        {"cuInit", (void *)fake_init},
        {"cuDriverGetVersion", (void *)fake_version},
        {"cuGetErrorName", (void *)fake_error_name},
        {"cuGetErrorString", (void *)fake_error_string},
        {"cuDeviceGetCount", (void *)fake_count},
        {"cuDeviceGet", (void *)fake_get},
        {"cuDeviceGetAttribute", (void *)fake_attr},
        {"cuDeviceGetName", (void *)fake_name},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(symbol, table[i].name) == 0) {
            *pfn = table[i].fn;
            *status = 0;
            return 0;
        }
    if (is("missing") && strcmp(symbol, "cuLaunchCooperativeKernel") == 0) {
        *pfn = NULL;
        *status = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
        return 0;
    }
    *pfn = (void *)fake_unsupported; /* resolvable, but does nothing useful */
    *status = 0;
    return 0;
}
