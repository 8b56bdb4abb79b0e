/* SPDX-License-Identifier: BSD-2-Clause */
/* src/ops/builtin_ops.h - the built-in ops, written once for every
 * backend: the CPU pool (ops/op_exec.c), the simulated device
 * (backend/mk_loop.h) and the GPU (cuda/megakernel.cu) all call these.
 * Compiled as C11 and as CUDA C++ (host and device functions).
 *
 *   NOP     nothing
 *   STORE   cells[out] = param
 *   ADD     cells[out] = cells[in] + param
 *   APPEND  one entry (out, param) at the next position of the APPEND log;
 *           claiming the position is the backend's atomic (C11 or CUDA),
 *           the slot and the word are the rules below
 *   16..    user ops (the op table; on the device, the linked user PTX)
 *
 * Handles are checked here too: the host admits only valid items (the
 * admission stage), so a handle error on a backend is a bug that the
 * device reports as MKRT_MK_ERR_HANDLE instead of writing out of range. */
#ifndef MKRT_OPS_BUILTIN_OPS_H
#define MKRT_OPS_BUILTIN_OPS_H

#include <stdint.h>

#if defined(__CUDACC__)
#define MKRT_OPS_FN __host__ __device__ static inline
#else
#define MKRT_OPS_FN static inline
#endif

/* The op codes; the same numbers as MKRT_OP_* in mkrt/item.h. */
enum {
    MKRT_OPS_NOP = 0,
    MKRT_OPS_STORE = 1,
    MKRT_OPS_ADD = 2,
    MKRT_OPS_APPEND = 3,
    MKRT_OPS_USER_FIRST = 16 /* MKRT_OP_USER_BASE */
};

/* What a backend reports for an item it cannot run (the device's error
 * word; see cuda/protocol.h). */
enum {
    MKRT_MK_ERR_NONE = 0,
    MKRT_MK_ERR_UNKNOWN_OP = 1,
    MKRT_MK_ERR_HANDLE = 2,
    MKRT_MK_ERR_USER_OP = 3
};

MKRT_OPS_FN int mkrt_ops_is_user(uint32_t op)
{
    return op >= MKRT_OPS_USER_FIRST;
}

/* The handle rule of the built-ins: MKRT_MK_ERR_NONE, _HANDLE (a handle at
 * or above cell_count), or _UNKNOWN_OP (4..15, and user ops, which have
 * their own rule in the op table). */
MKRT_OPS_FN uint32_t mkrt_ops_builtin_check(uint32_t op, uint32_t in, uint32_t out,
                                            uint32_t cell_count)
{
    switch (op) {
    case MKRT_OPS_NOP:
        return MKRT_MK_ERR_NONE;
    case MKRT_OPS_STORE:
    case MKRT_OPS_APPEND:
        return out < cell_count ? MKRT_MK_ERR_NONE : MKRT_MK_ERR_HANDLE;
    case MKRT_OPS_ADD:
        return out < cell_count && in < cell_count ? MKRT_MK_ERR_NONE : MKRT_MK_ERR_HANDLE;
    default:
        return MKRT_MK_ERR_UNKNOWN_OP;
    }
}

/* Whether an exact duplicate of a built-in item is redundant (dedupe may
 * prune it): NOP and STORE yes; ADD only when it does not read what it
 * writes; APPEND never (every APPEND is an entry). */
MKRT_OPS_FN int mkrt_ops_builtin_idempotent(uint32_t op, uint32_t in, uint32_t out)
{
    return op == MKRT_OPS_NOP || op == MKRT_OPS_STORE || (op == MKRT_OPS_ADD && in != out);
}

/* Runs NOP, STORE or ADD on the cells; returns MKRT_MK_ERR_*. APPEND and
 * user ops are the caller's (they need a log claim, or the op table). */
MKRT_OPS_FN uint32_t mkrt_ops_run_builtin(uint32_t op, uint32_t in, uint32_t out, uint32_t param,
                                          uint64_t *cells, uint32_t cell_count)
{
    uint32_t e = op == MKRT_OPS_APPEND ? MKRT_MK_ERR_UNKNOWN_OP
                                       : mkrt_ops_builtin_check(op, in, out, cell_count);
    if (e != MKRT_MK_ERR_NONE)
        return e;
    if (op == MKRT_OPS_STORE)
        cells[out] = param;
    else if (op == MKRT_OPS_ADD)
        cells[out] = cells[in] + param;
    return MKRT_MK_ERR_NONE;
}

/* An APPEND log entry as one 64-bit word: handle in the low half, param in
 * the high half (a (handle, param) pair of 32-bit words on a little-endian
 * machine). Position p of the log lives in slot p % capacity. */
MKRT_OPS_FN uint64_t mkrt_ops_append_word(uint32_t handle, uint32_t param)
{
    return (uint64_t)param << 32 | handle;
}

MKRT_OPS_FN uint64_t mkrt_ops_append_slot(uint64_t position, uint64_t capacity)
{
    return position % capacity;
}

#endif
