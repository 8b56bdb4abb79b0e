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
 *   MIN     cells[out] = min(cells[out], cells[in] + param), saturating
 *   RELAX   MIN, and when it lowered cells[out] out's edges in the
 *           registered graph run as RELAX items: on the host as frontier
 *           rounds (ops/op_exec.c), on a device as the next level of
 *           the batch's RELAX job (cuda/protocol.h, "RELAX batches")
 *   OR      cells[out] |= cells[in] | param
 *   ACC     cells[out] += param (in not read)
 *           The update ops commute with themselves (MIN with RELAX) on
 *           out: the layering puts those on one handle into one layer,
 *           so they update cells[out] atomically (C11 atomics on the host,
 *           CUDA atomics on the device), relaxed: the layer barrier
 *           orders them against everything else.
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
#include <stdatomic.h>
#define MKRT_OPS_FN static inline
#endif

/* The op codes; the same numbers as MKRT_OP_* in mkrt/item.h. */
enum {
    MKRT_OPS_NOP = 0,
    MKRT_OPS_STORE = 1,
    MKRT_OPS_ADD = 2,
    MKRT_OPS_APPEND = 3,
    MKRT_OPS_MIN = 4,
    MKRT_OPS_RELAX = 5,
    MKRT_OPS_OR = 6,
    MKRT_OPS_ACC = 7,
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

MKRT_OPS_FN int mkrt__ops_is_user(uint32_t op)
{
    return op >= MKRT_OPS_USER_FIRST;
}

/* The handle rule of the built-ins: MKRT_MK_ERR_NONE, _HANDLE (a handle at
 * or above cell_count), or _UNKNOWN_OP (4..15, and user ops, which have
 * their own rule in the op table). */
MKRT_OPS_FN uint32_t mkrt__ops_builtin_check(uint32_t op, uint32_t in, uint32_t out,
                                            uint32_t cell_count)
{
    switch (op) {
    case MKRT_OPS_NOP:
        return MKRT_MK_ERR_NONE;
    case MKRT_OPS_STORE:
    case MKRT_OPS_APPEND:
    case MKRT_OPS_ACC:
        return out < cell_count ? MKRT_MK_ERR_NONE : MKRT_MK_ERR_HANDLE;
    case MKRT_OPS_ADD:
    case MKRT_OPS_MIN:
    case MKRT_OPS_RELAX:
    case MKRT_OPS_OR:
        return out < cell_count && in < cell_count ? MKRT_MK_ERR_NONE : MKRT_MK_ERR_HANDLE;
    default:
        return MKRT_MK_ERR_UNKNOWN_OP;
    }
}

/* Whether an exact duplicate of a built-in item is redundant (dedupe may
 * prune it): NOP and STORE yes; ADD, MIN, RELAX and OR only when they do
 * not read what they write; APPEND and ACC never (every one counts). */
MKRT_OPS_FN int mkrt__ops_builtin_idempotent(uint32_t op, uint32_t in, uint32_t out)
{
    return op == MKRT_OPS_NOP || op == MKRT_OPS_STORE ||
           ((op == MKRT_OPS_ADD || op == MKRT_OPS_MIN || op == MKRT_OPS_RELAX || op == MKRT_OPS_OR) &&
            in != out);
}

/* The commuting group of a built-in item (0: none): items of one group on
 * one out handle may share a layer. MIN and RELAX are one group (both
 * lower to a minimum). An item that reads its own out (in == out) joins
 * none, except ACC, which does not read in. */
MKRT_OPS_FN uint32_t mkrt__ops_builtin_commute_key(uint32_t op, uint32_t in, uint32_t out)
{
    if (op == MKRT_OPS_ACC)
        return MKRT_OPS_ACC;
    if (in == out)
        return 0;
    if (op == MKRT_OPS_MIN || op == MKRT_OPS_RELAX)
        return MKRT_OPS_MIN;
    return op == MKRT_OPS_OR ? MKRT_OPS_OR : 0;
}

/* a + b, saturating at UINT64_MAX (an unreached distance stays unreached). */
MKRT_OPS_FN uint64_t mkrt__ops_add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Atomically lowers *cell to v; returns 1 when it lowered it. Relaxed
 * (all three sides): items of one layer commute and no other item touches
 * the cell in that layer; the barrier between layers orders the rest. */
MKRT_OPS_FN int mkrt__ops_atomic_min(uint64_t *cell, uint64_t v)
{
#if defined(__CUDA_ARCH__)
    return atomicMin((unsigned long long *)cell, (unsigned long long)v) > v;
#elif defined(__CUDACC__)
    uint64_t cur = __atomic_load_n(cell, __ATOMIC_RELAXED);
    while (v < cur)
        if (__atomic_compare_exchange_n(cell, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return 1;
    return 0;
#else
    _Atomic uint64_t *c = (_Atomic uint64_t *)cell;
    uint64_t cur = atomic_load_explicit(c, memory_order_relaxed); /* relaxed: see above */
    while (v < cur)
        if (atomic_compare_exchange_weak_explicit(c, &cur, v, memory_order_relaxed, memory_order_relaxed))
            return 1;
    return 0;
#endif
}

/* Atomically *cell |= v; returns 1 when that set a bit. Relaxed: as
 * mkrt__ops_atomic_min. */
MKRT_OPS_FN int mkrt__ops_atomic_or(uint64_t *cell, uint64_t v)
{
#if defined(__CUDA_ARCH__)
    unsigned long long old = atomicOr((unsigned long long *)cell, (unsigned long long)v);
#elif defined(__CUDACC__)
    uint64_t old = __atomic_fetch_or(cell, v, __ATOMIC_RELAXED);
#else
    uint64_t old = atomic_fetch_or_explicit((_Atomic uint64_t *)cell, v, memory_order_relaxed);
#endif
    return (old | v) != old;
}

/* Atomically *cell += v (wrapping). Relaxed: as mkrt__ops_atomic_min. */
MKRT_OPS_FN void mkrt__ops_atomic_add(uint64_t *cell, uint64_t v)
{
#if defined(__CUDA_ARCH__)
    atomicAdd((unsigned long long *)cell, (unsigned long long)v);
#elif defined(__CUDACC__)
    __atomic_fetch_add(cell, v, __ATOMIC_RELAXED);
#else
    atomic_fetch_add_explicit((_Atomic uint64_t *)cell, v, memory_order_relaxed);
#endif
}

/* Atomically *counter += 1; returns the value before (a slot claim).
 * Relaxed: as mkrt__ops_atomic_min (the barrier after the level publishes
 * the count). */
MKRT_OPS_FN uint64_t mkrt__ops_atomic_claim(uint64_t *counter)
{
#if defined(__CUDA_ARCH__)
    return atomicAdd((unsigned long long *)counter, 1ull);
#elif defined(__CUDACC__)
    return __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
#else
    return atomic_fetch_add_explicit((_Atomic uint64_t *)counter, 1, memory_order_relaxed);
#endif
}

/* Runs an update op (MIN, RELAX's update, OR, ACC) on admitted handles;
 * returns 1 when it changed cells[out]. */
MKRT_OPS_FN int mkrt__ops_run_update(uint32_t op, uint32_t in, uint32_t out, uint32_t param,
                                    uint64_t *cells)
{
    switch (op) {
    case MKRT_OPS_MIN:
    case MKRT_OPS_RELAX:
        return mkrt__ops_atomic_min(&cells[out], mkrt__ops_add_sat(cells[in], param));
    case MKRT_OPS_OR:
        return mkrt__ops_atomic_or(&cells[out], cells[in] | param);
    case MKRT_OPS_ACC:
        mkrt__ops_atomic_add(&cells[out], param);
        return param != 0;
    default:
        return 0;
    }
}

/* Runs NOP, STORE, ADD, MIN, OR or ACC on handles already checked
 * (admitted, or mkrt__ops_builtin_check passed). */
MKRT_OPS_FN void mkrt__ops_run_admitted(uint32_t op, uint32_t in, uint32_t out, uint32_t param,
                                       uint64_t *cells)
{
    if (op == MKRT_OPS_STORE)
        cells[out] = param;
    else if (op == MKRT_OPS_ADD)
        cells[out] = cells[in] + param;
    else if (op != MKRT_OPS_NOP)
        (void)mkrt__ops_run_update(op, in, out, param, cells);
}

/* Runs NOP, STORE, ADD, MIN, OR or ACC on the cells; returns
 * MKRT_MK_ERR_*. APPEND, RELAX and user ops are the caller's (they need a
 * log claim, emission, or the op table). */
MKRT_OPS_FN uint32_t mkrt__ops_run_builtin(uint32_t op, uint32_t in, uint32_t out, uint32_t param,
                                          uint64_t *cells, uint32_t cell_count)
{
    uint32_t e = op == MKRT_OPS_APPEND || op == MKRT_OPS_RELAX
                     ? MKRT_MK_ERR_UNKNOWN_OP
                     : mkrt__ops_builtin_check(op, in, out, cell_count);
    if (e != MKRT_MK_ERR_NONE)
        return e;
    mkrt__ops_run_admitted(op, in, out, param, cells);
    return MKRT_MK_ERR_NONE;
}

/* An APPEND log entry as one 64-bit word: handle in the low half, param in
 * the high half (a (handle, param) pair of 32-bit words on a little-endian
 * machine). Position p of the log lives in slot p % capacity. */
MKRT_OPS_FN uint64_t mkrt__ops_append_word(uint32_t handle, uint32_t param)
{
    return (uint64_t)param << 32 | handle;
}

MKRT_OPS_FN uint64_t mkrt__ops_append_slot(uint64_t position, uint64_t capacity)
{
    return position % capacity;
}

#endif
