/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/alloc.h
 * @brief The allocator every mkrt object allocates through.
 *
 * By default mkrt uses aligned_alloc/free. A program may install its own
 * allocator once, before it creates any mkrt object (for example to count
 * allocations, to inject failures, or to place memory on huge pages).
 * Allocations made inside liburcu (the plan cache's hash tables, its
 * call_rcu thread) do not go through it, nor does libmkrt_planlib's
 * per-thread launch memo, which lives as long as its thread (freed when
 * the thread exits, possibly after every mkrt object and allocator).
 *
 * Contract:
 *   - `alloc(size, align, ctx)` returns memory aligned to `align` (a power
 *     of two, at least `sizeof(void *)`) or NULL; mkrt turns NULL into
 *     ::MKRT_ENOMEM. `size` is never 0 (a request for 0 bytes asks for 1).
 *   - `free(ptr, size, ctx)` receives the same size that alloc was asked
 *     for, and is never called with NULL.
 *   - Both may be called from any mkrt thread at any time (library threads
 *     included): they must be thread-safe.
 *   - `mkrt_allocator_set(NULL)` restores the default. Changing the
 *     allocator while mkrt objects exist is undefined: objects are freed
 *     through the allocator that is current at the time.
 *   - The layers built on libmkrt (libmkrt_stream, ...) allocate through
 *     the same allocator: they ask for it with mkrt_allocator_get().
 */
#ifndef MKRT_ALLOC_H
#define MKRT_ALLOC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @brief A process-wide allocator: two functions and their context. */
typedef struct mkrt_allocator {
    /** Returns `size` bytes aligned to `align`, or NULL. Must be thread-safe. */
    void *(*alloc)(size_t size, size_t align, void *ctx);
    /** Frees `ptr`, which alloc returned for the same `size`. Must be thread-safe. */
    void (*free)(void *ptr, size_t size, void *ctx);
    void *ctx; /**< Passed unchanged to alloc and free. */
} mkrt_allocator;

/**
 * @brief Installs the process-wide allocator.
 *
 * The allocator is copied. NULL restores the default (aligned_alloc/free),
 * and so does an allocator whose alloc or free is NULL. Call it once,
 * before the first mkrt object is created (see the contract above).
 *
 * @param a The allocator to copy, or NULL for the default.
 * @par Thread safety
 * Not thread-safe against concurrent mkrt allocations: call it while no
 * other thread uses mkrt.
 */
void mkrt_allocator_set(const mkrt_allocator *a);

/**
 * @brief The allocator mkrt allocates through now.
 *
 * The default one, or the copy mkrt_allocator_set() made of the last one
 * installed; never NULL. What a library built on mkrt (a layer such as
 * libmkrt_stream) calls, so that its objects go through the allocator the
 * program installed in libmkrt.
 *
 * @return The allocator in use: read it, never free or change it. It stays
 *         valid while no more than 15 further allocators are installed.
 * @par Thread safety
 * Thread-safe.
 */
const mkrt_allocator *mkrt_allocator_get(void);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_ALLOC_H */
