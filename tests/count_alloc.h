/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/count_alloc.h - a counting (and optionally failing) mkrt_allocator. */
#ifndef MKRT_TESTS_COUNT_ALLOC_H
#define MKRT_TESTS_COUNT_ALLOC_H

#include <stddef.h>
#include <stdint.h>

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

#endif
