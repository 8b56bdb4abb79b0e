/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/count_alloc.c - see count_alloc.h. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "count_alloc.h"
#include "mkrt/alloc.h"

static _Atomic uint64_t calls, bytes, budget = UINT64_MAX;
static _Atomic uint64_t frees, freed_bytes, failures;
static _Atomic uint64_t requests, fail_at = UINT64_MAX;

static void *counting_alloc(size_t size, size_t align, void *ctx)
{
    (void)ctx;
    if (atomic_fetch_add(&requests, 1) == atomic_load(&fail_at)) {
        atomic_fetch_add(&failures, 1);
        return NULL;
    }
    uint64_t left = atomic_load(&budget);
    if (left == 0) {
        atomic_fetch_add(&failures, 1);
        return NULL;
    }
    if (left != UINT64_MAX)
        atomic_fetch_sub(&budget, 1);
    atomic_fetch_add(&calls, 1);
    atomic_fetch_add(&bytes, size);
    if (align < sizeof(void *))
        align = sizeof(void *);
    return aligned_alloc(align, (size + align - 1) & ~(align - 1));
}

static void counting_free(void *p, size_t size, void *ctx)
{
    (void)ctx;
    atomic_fetch_add(&frees, 1);
    atomic_fetch_add(&freed_bytes, size);
    free(p);
}

void count_alloc_install(void)
{
    mkrt_allocator a = {counting_alloc, counting_free, NULL};
    mkrt_allocator_set(&a);
    count_alloc_reset();
}

void count_alloc_uninstall(void)
{
    mkrt_allocator_set(NULL);
}

uint64_t count_alloc_calls(void) { return atomic_load(&calls); }
uint64_t count_alloc_bytes(void) { return atomic_load(&bytes); }
uint64_t count_alloc_frees(void) { return atomic_load(&frees); }
uint64_t count_alloc_freed_bytes(void) { return atomic_load(&freed_bytes); }
uint64_t count_alloc_failures(void) { return atomic_load(&failures); }

void count_alloc_reset(void)
{
    atomic_store(&calls, 0);
    atomic_store(&bytes, 0);
    atomic_store(&budget, UINT64_MAX);
    atomic_store(&frees, 0);
    atomic_store(&freed_bytes, 0);
    atomic_store(&failures, 0);
    atomic_store(&fail_at, UINT64_MAX);
    atomic_store(&requests, 0);
}

void count_alloc_fail_after(uint64_t n)
{
    atomic_store(&budget, n);
}

void count_alloc_fail_nth(uint64_t k)
{
    atomic_store(&fail_at, UINT64_MAX);
    atomic_store(&requests, 0);
    atomic_store(&fail_at, k);
}

bool count_alloc_balanced(void)
{
    return count_alloc_calls() == count_alloc_frees() && count_alloc_bytes() == count_alloc_freed_bytes();
}

bool count_alloc_failed(mkrt_status st, const mkrt_error *err, bool closed_too, const char *what, uint64_t k,
                        unsigned *refused, unsigned *bad)
{
    if (st == MKRT_OK)
        return false;
    if ((st == MKRT_ENOMEM || (closed_too && st == MKRT_ECLOSED)) && err->status == st &&
        strstr(err->message, "Fix:") != NULL) {
        ++*refused;
        return true;
    }
    ++*bad;
    printf("# allocation %llu refused: %s gave %s: %s\n", (unsigned long long)k, what, mkrt_status_name(st),
           err->message);
    fflush(stdout);
    return true;
}

uint64_t count_alloc_sweep(void (*session)(void *ctx, uint64_t k), void *ctx, bool after, uint64_t max,
                           unsigned *leaks)
{
    uint64_t k = 0;
    for (; k < max; k++) {
        count_alloc_reset();
        if (after)
            count_alloc_fail_after(k);
        else
            count_alloc_fail_nth(k);
        session(ctx, k);
        if (!count_alloc_balanced()) {
            ++*leaks;
            printf("# allocation %llu refused: %llu allocations (%llu bytes), %llu frees (%llu bytes)\n",
                   (unsigned long long)k, (unsigned long long)count_alloc_calls(),
                   (unsigned long long)count_alloc_bytes(), (unsigned long long)count_alloc_frees(),
                   (unsigned long long)count_alloc_freed_bytes());
            fflush(stdout);
        }
        if (count_alloc_failures() == 0)
            break;
    }
    count_alloc_reset();
    return k;
}
