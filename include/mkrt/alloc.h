/* SPDX-License-Identifier: BSD-2-Clause */
/* mkrt/alloc.h - the allocator every mkrt object allocates through.
 *
 * By default mkrt uses aligned_alloc/free. A program may install its own
 * allocator once, before it creates any mkrt object (for example to count
 * allocations, to inject failures, or to place memory on huge pages).
 *
 * Contract:
 *   - alloc(size, align, ctx) returns memory aligned to `align` (a power of
 *     two, at least sizeof(void *)) or NULL; mkrt turns NULL into MKRT_ENOMEM.
 *   - free(ptr, size, ctx) receives the same size that alloc was asked for.
 *   - Both may be called from any mkrt thread at any time: they must be
 *     thread-safe.
 *   - mkrt_allocator_set(NULL) restores the default. Changing the allocator
 *     while mkrt objects exist is undefined: objects are freed through the
 *     allocator that is current at the time.
 */
#ifndef MKRT_ALLOC_H
#define MKRT_ALLOC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mkrt_allocator {
    void *(*alloc)(size_t size, size_t align, void *ctx);
    void (*free)(void *ptr, size_t size, void *ctx);
    void *ctx;
} mkrt_allocator;

/* Installs `a` (copied) as the process-wide allocator; NULL restores the
 * default, and so does an allocator whose alloc or free is NULL. Not
 * thread-safe against concurrent mkrt allocations. */
void mkrt_allocator_set(const mkrt_allocator *a);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_ALLOC_H */
