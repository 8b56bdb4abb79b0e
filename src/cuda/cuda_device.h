/* SPDX-License-Identifier: BSD-2-Clause */
/* src/cuda/cuda_device.h - the CUDA engine as a megakernel device
 * (cuda/mk_device.h; ctx = a started mkrt__cuda_engine). */
#ifndef MKRT_CUDA_CUDA_DEVICE_H
#define MKRT_CUDA_CUDA_DEVICE_H

#include "cuda/mk_device.h"

/* Cells and APPEND log host-mapped: the device runs on the runtime's
 * arrays, no state operations. */
extern const mkrt__mk_device mkrt__cuda_device;
/* Cells and APPEND log in device memory (cuda_device_state): the state
 * operations are the engine's explicit copies. */
extern const mkrt__mk_device mkrt__cuda_state_device;

#endif
