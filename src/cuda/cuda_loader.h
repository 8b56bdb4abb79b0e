/* SPDX-License-Identifier: BSD-2-Clause */
/* src/cuda/cuda_loader.h - opening the CUDA driver at run time.
 *
 * mkrt__cuda_load opens libcuda.so.1 (or the library named by the
 * MKRT_LIBCUDA environment variable, for tests), resolves cuGetProcAddress
 * with dlsym and every other entry point through it, checks the driver
 * version, initialises the driver, and reads device 0's attributes. Every
 * failure returns MKRT_EDEVICE with a message saying what was missing
 * (no library, a stub library, no device, an old driver, a device without
 * cooperative launch or host-mapped memory) and a Fix. */
#ifndef MKRT_BACKEND_CUDA_LOADER_H
#define MKRT_BACKEND_CUDA_LOADER_H

#include <stdbool.h>

#include "cuda/driver_api.h"
#include "mkrt/status.h"

mkrt_status mkrt__cuda_load(mkrt__cuda_api *cu, mkrt_error *err);
void mkrt__cuda_unload(mkrt__cuda_api *cu);
/* "CUDA_ERROR_X (text)" into buf, through cuGetErrorName/String when
 * loaded, by number otherwise. */
const char *mkrt__cuda_error_text(const mkrt__cuda_api *cu, CUresult e, char *buf, size_t len);
/* True for errors that poison the context for the whole process. */
bool mkrt__cuda_error_is_sticky(CUresult e);
/* True when nvcc built the megakernel into this library. */
bool mkrt__cuda_megakernel_built(void);
size_t mkrt__cuda_megakernel_fatbin_size(void);

#endif
