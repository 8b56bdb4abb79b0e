/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/fake_cuda.h - the tests' way to the stand-in driver
 * (tests/fakes/fake_libcuda.c, built beside the test binaries). */
#ifndef MKRT_TESTS_FAKE_CUDA_H
#define MKRT_TESTS_FAKE_CUDA_H

/* Points MKRT_LIBCUDA at the stand-in beside argv0 (FAKE_CUDA_MODE "ok")
 * and opens it; bails out when it cannot. */
void *fake_cuda_open(const char *argv0);
/* The stand-in's probe `name` (fake_cuda_live, ...); bails out when it
 * has none. */
void *fake_cuda_probe(void *lib, const char *name);

/* The machine's own driver (MKRT_LIBCUDA unset): returns when a CUDA
 * runtime starts there, else skips the whole test (plan_skip_all, with
 * why: the cuda_* tests on a machine without a GPU). */
void cuda_real_or_skip(void);
/* The stand-in's modelled device memory: FAKE_CUDA_MEM_TOTAL bytes, of
 * which `others` are taken by other processes (FAKE_CUDA_MEM_OTHERS). */
void fake_cuda_set_memory(unsigned long long total, unsigned long long others);

#endif
