/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/install/layer_consumer.c - a program from outside the tree that
 * uses two layers on libmkrt, built by tests/install/check_install.sh
 * through `pkg-config mkrt-stream mkrt-planlib` (once against the shared
 * libraries, once against the static ones). It installs a counting
 * allocator in libmkrt and checks that a stream's memory goes through it
 * (libmkrt_stream.so carries its own allocation functions, which must
 * ask libmkrt for the allocator, mkrt_allocator_get) and all comes back,
 * and calls a planlib function. Prints "layer_consumer: ..." and exits 0
 * when all is well. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <mkrt/mkrt.h>
#include <mkrt_planlib/sizing.h>
#include <mkrt_stream/stream.h>

static atomic_size_t allocs, frees;

static void *count_alloc(size_t size, size_t align, void *ctx)
{
    (void)ctx;
    atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed); /* a count, read after */
    if (align < sizeof(void *))
        align = sizeof(void *);
    return aligned_alloc(align, (size + align - 1) / align * align);
}

static void count_free(void *ptr, size_t size, void *ctx)
{
    (void)size;
    (void)ctx;
    atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed); /* a count, read after */
    free(ptr);
}

int main(void)
{
    const mkrt_allocator counting = {count_alloc, count_free, NULL};
    mkrt_allocator_set(&counting);
    if (mkrt_allocator_get()->alloc != count_alloc) {
        fprintf(stderr, "layer_consumer: mkrt_allocator_get() is not the allocator just installed\n");
        return 1;
    }
    mkrt_stream_config cfg = mkrt_stream_config_default();
    cfg.vertices = 64;
    cfg.queries = 1;
    cfg.query[0].kind = MKRT_STREAM_BFS;
    cfg.query[0].source = 0;
    mkrt_stream *s = NULL;
    mkrt_error err;
    if (mkrt_stream_create(&cfg, &s, &err) != MKRT_OK) {
        fprintf(stderr, "layer_consumer: mkrt_stream_create: %s\n", err.message);
        return 1;
    }
    size_t made = atomic_load(&allocs);
    mkrt_stream_destroy(s);
    size_t a = atomic_load(&allocs), f = atomic_load(&frees);
    mkrt_allocator_set(NULL);
    if (made == 0) {
        fprintf(stderr, "layer_consumer: the stream allocated nothing through the allocator installed "
                        "in libmkrt\n");
        return 1;
    }
    if (a != f) {
        fprintf(stderr, "layer_consumer: %zu allocations but %zu frees through the installed allocator\n", a, f);
        return 1;
    }
    uint32_t wg = mkrt_sizing_workgroup_size(4, 1024);
    if (wg == 0) {
        fprintf(stderr, "layer_consumer: mkrt_sizing_workgroup_size(4, 1024) is 0\n");
        return 1;
    }
    printf("layer_consumer: a stream made %zu allocations through libmkrt's allocator, all freed; "
           "planlib workgroup %u\n", made, wg);
    return 0;
}
