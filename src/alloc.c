/* src/alloc.c - the process-wide allocator hook. */
#include <stdlib.h>
#include <string.h>

#include "alloc_internal.h"
#include "mkrt/alloc.h"

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

/* Written only by mkrt_allocator_set, which the contract says runs before
 * any mkrt object exists, i.e. before the threads that read it are started
 * (thread creation orders the write before their reads). */
static mkrt_allocator current = {default_alloc, default_free, NULL};

void mkrt_allocator_set(const mkrt_allocator *a)
{
    if (a == NULL || a->alloc == NULL || a->free == NULL) {
        current.alloc = default_alloc;
        current.free = default_free;
        current.ctx = NULL;
        return;
    }
    current = *a;
}

void *mkrt__alloc(size_t size, size_t align)
{
    if (size == 0)
        size = 1;
    return current.alloc(size, align, current.ctx);
}

void *mkrt__alloc_zeroed(size_t size, size_t align)
{
    void *p = mkrt__alloc(size, align);
    if (p != NULL)
        memset(p, 0, size == 0 ? 1 : size);
    return p;
}

void mkrt__free(void *ptr, size_t size)
{
    if (ptr == NULL)
        return;
    current.free(ptr, size == 0 ? 1 : size, current.ctx);
}
