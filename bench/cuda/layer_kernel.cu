/* SPDX-License-Identifier: BSD-2-Clause */
// bench/cuda/layer_kernel.cu - the per-layer kernel the CUDA benchmark
// launches (once per layer, or as one graph node per layer) to compare a
// plain launch and CUDA Graph replay with the persistent megakernel. It
// runs one layer's items grid-stride exactly as the megakernel's layer
// loop does (built-in ops on cells).
#include "../../src/cuda/protocol.h"

struct bench_item {
    unsigned op, in, out, param;
};

extern "C" __global__ void __launch_bounds__(256)
    mkrt_bench_layer(const bench_item *items, unsigned begin, unsigned end, uint64_t *cells,
                     unsigned cell_count, unsigned *errors)
{
    for (unsigned long long k = begin + blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         k < end; k += (unsigned long long)gridDim.x * blockDim.x) {
        const bench_item it = items[k];
        if (mkrt__ops_run_builtin(it.op, it.in, it.out, it.param, cells, cell_count) != MKRT_MK_ERR_NONE)
            atomicAdd(errors, 1u);
    }
}
