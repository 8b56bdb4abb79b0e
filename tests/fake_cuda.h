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

#endif
