/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/count_alloc.h - a counting (and optionally failing) mkrt_allocator. */
#ifndef MKRT_TESTS_COUNT_ALLOC_H
#define MKRT_TESTS_COUNT_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/status.h"

/* Installs the counting allocator (process-wide, before creating objects). */
void count_alloc_install(void);
/* Restores mkrt's default allocator. */
void count_alloc_uninstall(void);
/* Allocations made since install (or the last reset). */
uint64_t count_alloc_calls(void);
uint64_t count_alloc_bytes(void);
/* Frees since install (or the last reset), and the bytes they returned
 * (the size mkrt passed to free, which must equal the allocated size). */
uint64_t count_alloc_frees(void);
uint64_t count_alloc_freed_bytes(void);
/* Allocation requests refused by the failure injection since the reset. */
uint64_t count_alloc_failures(void);
/* Zeroes every counter and stops any failure injection. */
void count_alloc_reset(void);
/* After `n` more successful allocations, every allocation fails; pass
 * UINT64_MAX to never fail. */
void count_alloc_fail_after(uint64_t n);
/* Only the k-th allocation request from now (0-based) fails; the ones
 * before and after it succeed. UINT64_MAX: none fails. */
void count_alloc_fail_nth(uint64_t k);

/* Every allocation since the reset was freed, with the size it was made
 * with. */
bool count_alloc_balanced(void);
/* A call's status in a sweep: false for MKRT_OK; else true, counted in
 * *refused where it failed as a refused allocation may (MKRT_ENOMEM, or
 * also MKRT_ECLOSED where closed_too: a search whose items failed; the
 * same status in *err, with a "Fix:"), else in *bad and said on stdout
 * (TAP "# ": allocation k, what was called, the status and message). */
bool count_alloc_failed(mkrt_status st, const mkrt_error *err, bool closed_too, const char *what, uint64_t k,
                        unsigned *refused, unsigned *bad);
/* The allocation sweep: for k = 0, 1, ... resets the counters, refuses
 * the k-th allocation (after: every one from the k-th on) and runs
 * session(ctx, k), which must free everything it made; until a session
 * runs with none refused or k reaches max. A session that leaves an
 * allocation unfreed (or frees another size) is said on stdout (TAP "# ")
 * and counted in *leaks. Returns the k of the clean session (max: none
 * ran clean). */
uint64_t count_alloc_sweep(void (*session)(void *ctx, uint64_t k), void *ctx, bool after, uint64_t max,
                           unsigned *leaks);

#endif
