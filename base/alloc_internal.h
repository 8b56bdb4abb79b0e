/* SPDX-License-Identifier: BSD-2-Clause */
/* base/alloc_internal.h - allocation through the installed mkrt_allocator. */
#ifndef MKRT_SRC_ALLOC_INTERNAL_H
#define MKRT_SRC_ALLOC_INTERNAL_H

#include <stddef.h>

/* Cache line size assumed for padding hot fields apart. 64 on x86-64 and
 * most arm64 parts; 128 would also cover adjacent-line prefetch pairs but
 * doubles the footprint of every padded struct. */
#define MKRT_CACHE_LINE 64

/* size > 0; align a power of two. Returns NULL on failure or when the
 * rounded size overflows. Memory is not zeroed. */
void *mkrt__alloc(size_t size, size_t align);
/* Same, zeroed. */
void *mkrt__alloc_zeroed(size_t size, size_t align);
/* Arrays of MKRT_HUGE_PAGE bytes and more that threads read at random
 * (a graph's rows, a traversal's values, the item table): aligned to a
 * huge page and offered to the kernel for transparent huge pages before
 * the first touch, so that a random read does not also miss the TLB.
 * Smaller sizes: aligned to align (a power of two), as mkrt__alloc.
 * Freed with mkrt__free. The advice is a hint: without THP it changes
 * nothing. */
#define MKRT_HUGE_PAGE ((size_t)2 << 20)
void *mkrt__alloc_large(size_t size, size_t align);
/* Same, zeroed. */
void *mkrt__alloc_large_zeroed(size_t size, size_t align);
/* ptr may be NULL; size must equal the size passed to mkrt__alloc. */
void mkrt__free(void *ptr, size_t size);

/* a * b into *out; returns 0 when it overflowed. */
static inline int mkrt__mul_size(size_t a, size_t b, size_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}
static inline int mkrt__add_size(size_t a, size_t b, size_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

#endif
