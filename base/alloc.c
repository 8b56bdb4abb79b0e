/* SPDX-License-Identifier: BSD-2-Clause */
/* base/alloc.c - the process-wide allocator hook. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/alloc_internal.h"
#include "mkrt/alloc.h"

#ifndef MKRT_LAYER_BUILD
static void *default_alloc(size_t size, size_t align, void *ctx)
{
    (void)ctx;
    if (align < sizeof(void *))
        align = sizeof(void *);
    /* aligned_alloc wants size to be a multiple of align. */
    size_t rounded = (size + align - 1) & ~(align - 1);
    if (rounded < size)
        return NULL;
    return aligned_alloc(align, rounded);
}

static void default_free(void *ptr, size_t size, void *ctx)
{
    (void)size;
    (void)ctx;
    free(ptr);
}

/* The allocator in use is published through an atomic pointer to an
 * immutable copy, so that library threads (liburcu's call_rcu worker frees
 * retired plans, for instance) always read a consistent triple. Copies live
 * in a small rotating pool: the contract says the allocator is set before
 * objects exist, and the pool only has to outlive stragglers of that. */
static const mkrt_allocator default_allocator = {default_alloc, default_free, NULL};
static mkrt_allocator pool[16];
static unsigned pool_next;
static _Atomic(const mkrt_allocator *) current = &default_allocator;

void mkrt_allocator_set(const mkrt_allocator *a)
{
    const mkrt_allocator *use = &default_allocator;
    if (a != NULL && a->alloc != NULL && a->free != NULL) {
        mkrt_allocator *slot = &pool[pool_next++ % 16];
        *slot = *a;
        use = slot;
    }
    /* release: pairs with the acquire load in allocator() (mkrt__alloc,
     * mkrt__free, mkrt_allocator_get), so the copy above is complete
     * before anyone calls through it. */
    atomic_store_explicit(&current, use, memory_order_release);
}

static const mkrt_allocator *allocator(void)
{
    /* acquire: pairs with the release store in mkrt_allocator_set. */
    return atomic_load_explicit(&current, memory_order_acquire);
}

const mkrt_allocator *mkrt_allocator_get(void)
{
    return allocator();
}
#else
/* The build of this file for a layer's shared library (mk/stream.mk,
 * MKRT_LAYER_BUILD): mkrt__alloc and mkrt__free, hidden in that library
 * by its version script, allocate through the allocator installed in
 * libmkrt.so, which holds the one copy of it. */
static const mkrt_allocator *allocator(void)
{
    return mkrt_allocator_get();
}
#endif

void *mkrt__alloc(size_t size, size_t align)
{
    if (size == 0)
        size = 1;
    const mkrt_allocator *a = allocator();
    return a->alloc(size, align, a->ctx);
}

void *mkrt__alloc_zeroed(size_t size, size_t align)
{
    void *p = mkrt__alloc(size, align);
    if (p != NULL)
        memset(p, 0, size == 0 ? 1 : size);
    return p;
}

void *mkrt__alloc_large(size_t size, size_t align)
{
    if (size < MKRT_HUGE_PAGE || align > MKRT_HUGE_PAGE)
        return mkrt__alloc(size, align);
    void *p = mkrt__alloc(size, MKRT_HUGE_PAGE);
    /* madvise is Linux's (C11 has no page advice). Only the whole huge
     * pages inside the block are advised: memory this block owns, also
     * from a user's allocator. A failure (no THP, memory that is not
     * an anonymous mapping) leaves 4 KiB pages: slower, not wrong. */
    if (p != NULL)
        (void)madvise(p, size & ~(MKRT_HUGE_PAGE - 1), MADV_HUGEPAGE);
    return p;
}

void *mkrt__alloc_large_zeroed(size_t size, size_t align)
{
    void *p = mkrt__alloc_large(size, align);
    if (p != NULL)
        memset(p, 0, size == 0 ? 1 : size);
    return p;
}

void mkrt__free(void *ptr, size_t size)
{
    if (ptr == NULL)
        return;
    const mkrt_allocator *a = allocator();
    a->free(ptr, size == 0 ? 1 : size, a->ctx);
}
