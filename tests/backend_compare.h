/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/backend_compare.h - one seeded workload run on two backends and
 * compared (cells, APPEND logs, failures by status): the CUDA engine on
 * the stand-in driver (test_cuda_engine) and on a real GPU (cuda_*).
 * User ops 16..18 have CPU functions here and device twins in
 * tests/cuda/user_ops.cu (and in the stand-in driver):
 *   16  cells[out] = cells[in] * 3 + param
 *   17  param == 0: fails with MKRT_EINVAL; else cells[out] ^= param
 *   18  never returns on the device (a hung op); a no-op on the CPU
 *   19  takes param ms on the device (a slow op), then cells[out] =
 *       cells[in] + 1; on the CPU at once */
#ifndef MKRT_TESTS_BACKEND_COMPARE_H
#define MKRT_TESTS_BACKEND_COMPARE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "mkrt/runtime.h"

#define BC_SEC 5000000000ull
#define BC_CELLS 512
#define BC_LOG_CAP 30000

typedef struct bc_failures {
    _Atomic uint64_t n;
    _Atomic uint64_t by_status[16]; /* by -status */
    mkrt_status last;
} bc_failures;

/* mkrt_config.cuda_device_state of the runtimes bc_start creates (0). */
extern uint32_t bc_device_state;

void bc_on_error(void *ctx, const mkrt_item *item, mkrt_status why, const char *message);
/* A runtime on `kind` with BC_CELLS cells, failures counted in f, ops
 * 16..19 registered (device ops); NULL and err when create fails. */
mkrt_runtime *bc_start(mkrt_backend_kind kind, bc_failures *f, uint32_t watchdog_ms, const char *ptx,
                       mkrt_error *err);
/* `rounds` deterministic batches of random NOP/STORE/ADD/APPEND/16/17
 * items (bad handles and undefined ops now and then; every 16th round
 * 5000 items, past
 * the zero-copy size); then the cells and the logs of handles 0..15. */
void bc_workload(mkrt_runtime *rt, int rounds, unsigned seed, uint64_t *cells_out, uint32_t *log_out,
                 size_t *log_n);
/* One workload run, kept for comparison. */
typedef struct bc_run {
    uint64_t cells[BC_CELLS];
    uint32_t log[16 * BC_LOG_CAP];
    size_t log_n;
    bc_failures f;
    mkrt_stats stats;          /* read before destroy (backend_detail is not kept) */
    char describe[512];        /* mkrt_backend_describe before destroy */
    mkrt_status destroyed;     /* what mkrt_destroy returned */
} bc_run;

/* Starts `kind`, runs bc_workload, records and destroys. False (and err)
 * when the runtime cannot be created. */
bool bc_run_workload(mkrt_backend_kind kind, const char *ptx, int rounds, unsigned seed, bc_run *r,
                     mkrt_error *err);
/* TAP checks that dev left what cpu left: cells, APPEND logs in order,
 * failures by status, executed counts. */
void bc_check_same(const bc_run *cpu, const bc_run *dev, const char *what);

/* Publishes items[0..n) as one batch (the dispatcher held while they go
 * in) and drains; returns the drain's status. */
mkrt_status bc_one_batch(mkrt_runtime *rt, mkrt_producer *p, const mkrt_item *items, size_t n);

/* TAP checks of a slow device op (user op 19, op_ms long) under a
 * watchdog of watchdog_ms < op_ms, on `kind` with `ptx`: its batch fails
 * with MKRT_ETIMEDOUT, the device is stopped before the CPU takes the
 * cells (describe says so), a CPU STORE published after the trip is
 * still there past the op's end, and destroy succeeds. */
void bc_check_slow_op(mkrt_backend_kind kind, const char *ptx, uint32_t watchdog_ms, uint32_t op_ms,
                      const char *what);

/* The whole file, NUL-terminated (malloc), or NULL. */
char *bc_read_file(const char *path, size_t *n);

#endif
