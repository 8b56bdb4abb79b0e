/* SPDX-License-Identifier: BSD-2-Clause */
/* src/cuda/protocol.h - the layout shared by the host and the persistent
 * megakernel (compiled both as C11 and as CUDA C++).
 *
 * The control block lives in host-mapped pinned memory. Every word that one
 * side writes and the other polls has a 128-byte line to itself.
 *   doorbell  host -> device: sequence number of the latest staged batch
 *             (release store; the device acquires it at system scope).
 *   done      device -> host: sequence number of the latest finished batch
 *             (device release at system scope; the host acquires it).
 *   error     device -> host: first failure (MKRT_MK_ERR_*), with the item.
 *   shutdown  host -> device: leave the loop (checked by every spin).
 *   desc[2]   the two batch descriptors (double buffer: batch k uses
 *             desc[k & 1]); the host writes desc[k & 1] before ringing k.
 *             Items that fail on the device without poisoning it (a user
 *             op returning non-zero, an APPEND past the log's capacity)
 *             are listed in the descriptor's failure list: the device
 *             claims a slot with fail_count and writes (index, status),
 *             status being an mkrt_status as uint32_t; the host reads the
 *             list after `done` covers the batch.
 *   progress  per block: (layer << 32) | items run in that layer, so the
 *             host can say where a hung grid stopped.
 */
#ifndef MKRT_CUDA_PROTOCOL_H
#define MKRT_CUDA_PROTOCOL_H

#include <stdint.h>

#if defined(__CUDACC__) || defined(__cplusplus)
#define MKRT_MK_ATOMIC(T) T
#define MKRT_MK_FN __host__ __device__ static inline
#else
#include <stdatomic.h>
#define MKRT_MK_ATOMIC(T) _Atomic T
#define MKRT_MK_FN static inline
#endif

#define MKRT_MK_LINE 128
#define MKRT_MK_MAX_BLOCKS 2048

enum {
    MKRT_MK_ERR_NONE = 0,
    MKRT_MK_ERR_UNKNOWN_OP = 1,
    MKRT_MK_ERR_HANDLE = 2,
    MKRT_MK_ERR_USER_OP = 3
};

/* Failure-list status of an APPEND past the log's capacity: MKRT_EOVERFLOW. */
#define MKRT_MK_FAIL_OVERFLOW 0xFFFFFFFCu

/* The device function user PTX defines (extern "C", see megakernel.cu):
 *   unsigned mkrt_user_op(unsigned op, unsigned in, unsigned out,
 *                         unsigned param, unsigned long long *cells,
 *                         unsigned cell_count);
 * returning 0 on success or an mkrt_status (negative, as unsigned) that
 * the host reports for the item; other values are reported as
 * MKRT_EDEVICE. */
#define MKRT_MK_USER_OP_SYMBOL "mkrt_user_op"
#define MKRT_MK_KERNEL_SYMBOL "mkrt_megakernel"

typedef struct mkrt_mk_desc {
    uint64_t items;         /* device address: items in layer order */
    uint64_t layer_offsets; /* device address: uint32_t[layers + 1] */
    uint32_t count;
    uint32_t layers;
    uint64_t seq;           /* the batch this descriptor holds */
    uint64_t fails;         /* device address: uint32_t pairs (index, code) */
    MKRT_MK_ATOMIC(uint32_t) fail_count; /* slots claimed by the device (<= count) */
    uint8_t pad[MKRT_MK_LINE - 44];
} mkrt_mk_desc;

typedef struct mkrt_mk_control {
    MKRT_MK_ATOMIC(uint64_t) doorbell;
    uint8_t pad0[MKRT_MK_LINE - 8];
    MKRT_MK_ATOMIC(uint32_t) shutdown;
    uint8_t pad1[MKRT_MK_LINE - 4];
    MKRT_MK_ATOMIC(uint64_t) done;
    uint8_t pad2[MKRT_MK_LINE - 8];
    MKRT_MK_ATOMIC(uint32_t) error;
    uint32_t error_item;
    uint64_t error_seq;
    uint8_t pad3[MKRT_MK_LINE - 16];
    uint64_t cells;           /* device address of the 64-bit cells */
    uint32_t cell_count;
    uint32_t blocks;          /* grid size of the running kernel */
    /* The APPEND log: a ring of append_capacity (handle, param) pairs of
     * 32-bit words; position p lives in slot p % append_capacity. The host
     * sets append_len (next position) and append_limit (first position that
     * would overwrite an unconsumed entry) before each doorbell; a claim at
     * or past the limit is an overflow (failure list). */
    uint64_t append_log;      /* device address */
    uint64_t append_capacity;
    uint64_t append_limit;
    uint8_t pad4[MKRT_MK_LINE - 40];
    MKRT_MK_ATOMIC(uint64_t) append_len; /* positions claimed by the device */
    uint8_t pad5[MKRT_MK_LINE - 8];
    mkrt_mk_desc desc[2];
    MKRT_MK_ATOMIC(uint64_t) progress[MKRT_MK_MAX_BLOCKS];
} mkrt_mk_control;

#if !defined(__CUDACC__) && !defined(__cplusplus)
_Static_assert(sizeof(mkrt_mk_desc) == MKRT_MK_LINE, "one descriptor per line");
_Static_assert(sizeof(MKRT_MK_ATOMIC(uint64_t)) == 8, "device and host agree on word size");
#endif

/* One built-in item's effect, identical on the CPU backend, the simulated
 * device and the GPU (APPEND needs a claimed log slot and is handled by the
 * caller). Returns MKRT_MK_ERR_*. */
MKRT_MK_FN uint32_t mkrt_mk_run_builtin(uint32_t op, uint32_t in, uint32_t out, uint32_t param,
                                        uint64_t *cells, uint32_t cell_count)
{
    switch (op) {
    case 0: /* NOP */
        return MKRT_MK_ERR_NONE;
    case 1: /* STORE */
        if (out >= cell_count)
            return MKRT_MK_ERR_HANDLE;
        cells[out] = param;
        return MKRT_MK_ERR_NONE;
    case 2: /* ADD */
        if (out >= cell_count || in >= cell_count)
            return MKRT_MK_ERR_HANDLE;
        cells[out] = cells[in] + param;
        return MKRT_MK_ERR_NONE;
    default:
        return MKRT_MK_ERR_UNKNOWN_OP;
    }
}

#endif
