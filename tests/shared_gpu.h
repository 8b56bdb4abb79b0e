/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/shared_gpu.h - mkrt as a good citizen on a shared GPU: two CUDA
 * runtimes alive at once, and an "application" that allocates, loads a
 * module, launches its own kernel and synchronises beside a live runtime,
 * while it is busy and while it is idle. The same checks run through the
 * stand-in driver (tests/test_cuda_shared.c, in make check) and on a real
 * GPU (tests/cuda_shared.c, skipped without one). */
#ifndef MKRT_TESTS_SHARED_GPU_H
#define MKRT_TESTS_SHARED_GPU_H

#include <stdint.h>

/* The application's kernel, as PTX the driver JIT-compiles:
 * fake_app_kernel(unsigned long long *out, unsigned long long value)
 * stores value at out (the stand-in driver runs the same). */
extern const char sg_app_ptx[];

/* The checks; `driver` is the libcuda path (the one mkrt uses, so the
 * application shares its primary context), `waited` (may be NULL) says
 * how many synchronising calls had to wait for a kernel (stand-in only). */
void sg_run_all(const char *driver, unsigned long long (*waited)(void));

#endif
