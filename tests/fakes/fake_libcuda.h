/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/fakes/fake_libcuda.h - what the two files of the stand-in
 * libcuda.so.1 share (fake_libcuda.c: entry point, devices, contexts,
 * modules, memory, linking; fake_libcuda_kernel.c: the synchronisation
 * gate, streams, copies, launches). Everything declared here is hidden:
 * the shared object still exports only cuGetProcAddress_v2 and the
 * fake_cuda_* probes the tests look up. */
#ifndef MKRT_TESTS_FAKE_LIBCUDA_H
#define MKRT_TESTS_FAKE_LIBCUDA_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum { OK = 0, E_INVALID_VALUE = 1, E_STUB = 34, E_NO_DEVICE = 100, E_INVALID_IMAGE = 200,
       E_NOT_FOUND = 500, E_NOT_READY = 600, E_ILLEGAL_ADDRESS = 700, E_TOO_LARGE = 720,
       E_NOT_SUPPORTED = 801 };

#define SMS 132
#define PER_SM 2

/* Modules: the embedded fatbin, or the result of a link. */
typedef struct fake_module {
    int linked; /* runs the user ops */
} fake_module;

#pragma GCC visibility push(hidden)

/* fake_libcuda.c */
int is(const char *m);                 /* FAKE_CUDA_MODE is m ("ok" by default) */
extern _Atomic int live;               /* outstanding resources (fake_cuda_live) */
extern _Atomic int sticky;             /* a fault was seen: every later call fails */
extern int app_kernel_marker;          /* the function handle of "fake_app_kernel" */
void *fake_dev(uint64_t a);            /* a device address to the host memory behind it */
int fake_host_kind(const void *src);   /* 1: registered, 2: pinned (cuMemHostAlloc), 0: other */

/* fake_libcuda_kernel.c */
void nap_us(long us);
void sync_gate(const char *what);      /* waits while kernels run (see there) */
int fake_htod_async(unsigned long long dst, const void *src, size_t bytes, void *s);
int fake_dtoh_async(void *dst, unsigned long long src, size_t bytes, void *s);
int fake_stream_create(void **p, unsigned flags);
int fake_stream_destroy(void *p);
int fake_stream_sync(void *p);
int fake_stream_query(void *p);
int fake_ctx_synchronize(void);
int fake_launch_entry(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                      unsigned bz, unsigned smem, void *stream, void **params);
int fake_launch_kernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                       unsigned bz, unsigned smem, void *stream, void **params, void **extra);

#pragma GCC visibility pop

#endif
