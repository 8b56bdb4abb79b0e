/* SPDX-License-Identifier: BSD-2-Clause */
// tests/cuda/user_ops.cu - device user ops for the GPU tests, compiled to
// PTX (nvcc -rdc=true -ptx) and linked into the megakernel at mkrt_create
// through mkrt_config.cuda_user_ptx. The tests register CPU functions with
// the same effects (and so does the stand-in driver, tests/fakes):
//   16  cells[out] = cells[in] * 3 + param
//   17  param == 0: fails with MKRT_EINVAL; else cells[out] ^= param
//   18  never returns (a hung op, for the watchdog test)
//   19  takes param ms, then cells[out] = cells[in] + 1 (a slow op)
// Returns 0, or a negative mkrt_status as unsigned.

#define MKRT_EINVAL_U 0xFFFFFFFEu  // (unsigned)MKRT_EINVAL
#define MKRT_ENOTSUP_U 0xFFFFFFF6u // (unsigned)MKRT_ENOTSUP

extern "C" __device__ unsigned mkrt_user_op(unsigned op, unsigned in, unsigned out, unsigned param,
                                            unsigned long long *cells, unsigned cell_count)
{
    if (in >= cell_count || out >= cell_count)
        return MKRT_EINVAL_U;
    switch (op) {
    case 16:
        cells[out] = cells[in] * 3ull + param;
        return 0;
    case 17:
        if (param == 0)
            return MKRT_EINVAL_U;
        cells[out] ^= param;
        return 0;
    case 18:
        // volatile: the loop must not be optimised away; the cell never
        // takes this value in the tests.
        while (((volatile unsigned long long *)cells)[in] != 0xFEEDFACECAFEBEEFull)
            __nanosleep(1000);
        return 0;
    case 19: {
        unsigned long long t0, t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
        do {
            __nanosleep(100000);
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        } while (t - t0 < (unsigned long long)param * 1000000ull);
        cells[out] = cells[in] + 1;
        return 0;
    }
    default:
        return MKRT_ENOTSUP_U;
    }
}
