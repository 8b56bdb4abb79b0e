/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/cuda_bench.c - the persistent megakernel against its real
 * competitors, in one run on one GPU (skipped, exit 0, without one):
 *   megakernel   stage + doorbell + wait for done (the engine the runtime
 *                uses: host-mapped control block, zero-copy reads up to
 *                4096 items, an HtoD copy above)
 *   launch       HtoD copy, then cuLaunchKernel + cuStreamSynchronize per
 *                layer (bench/cuda/layer_kernel.cu)
 *   graph        one CUDA Graph per batch shape (the copy node, then one
 *                kernel node per layer), cuGraphLaunch + synchronize
 * for NOP batches of 1, 1K and 1M items and 16-layer batches; p50 and p99
 * of the host-observed round trip, NOP items/s for 1M, and the cost of a
 * layer barrier ((16-layer p50 - 1-layer p50) / 15, 1 item per layer).
 * The megakernel occupies every SM, so it is stopped before the other two
 * run: the phases are sequential in one process. The megakernel is run
 * with the plan's blocks per layer (a block per 256 items): one-block
 * layers run in block 0 alone. A sweep follows: 1, 2 and the occupancy
 * maximum of blocks per SM, with host-mapped cells and with cells in
 * device memory (MKRT_CUDA_BLOCKS_PER_SM and MKRT_CUDA_DEVICE_STATE pick
 * the main table's megakernel).
 *   cuda_bench [--quick] [--out FILE.md] [--csv FILE.csv] [--kernel build/cuda/bench_layer.fatbin]
 * Skipped, it writes neither file. */
#include "../src/backend/mk_host.h"
#include "../src/cuda/cuda_engine.h"
#include "mkrt/runtime.h"
#include "bench_util.h"

typedef struct shape {
    const char *name;
    uint32_t layers, per_layer;
    int iters;
} shape;

typedef struct result {
    double p50, p99; /* microseconds */
} result;

/* Driver entry points only the benchmark needs. */
typedef struct bench_api {
    CUresult (*launch)(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                       unsigned bz, unsigned smem, CUstream s, void **params, void **extra);
    CUresult (*begin_capture)(CUstream s, int mode);
    CUresult (*end_capture)(CUstream s, void **graph);
    CUresult (*instantiate)(void **exec, void *graph, unsigned long long flags);
    CUresult (*graph_launch)(void *exec, CUstream s);
    CUresult (*exec_destroy)(void *exec);
    CUresult (*graph_destroy)(void *graph);
} bench_api;

static void die(const char *what, CUresult r, const mkrt__cuda_api *cu)
{
    char text[160];
    fprintf(stderr, "cuda_bench: %s failed: %s\n", what, mkrt__cuda_error_text(cu, r, text, sizeof text));
    exit(1);
}

#define CHECK(cu, call)                                                                                \
    do {                                                                                               \
        CUresult r_ = (call);                                                                          \
        if (r_ != MKRT_CUDA_SUCCESS)                                                                   \
            die(#call, r_, (cu));                                                                      \
    } while (0)

static void *resolve(const mkrt__cuda_api *cu, const char *name)
{
    void *fn = NULL;
    int status = 0;
    if (cu->get_proc(name, &fn, MKRT_CUDA_ABI_VERSION, 0, &status) != MKRT_CUDA_SUCCESS || fn == NULL) {
        fprintf(stderr, "cuda_bench: the driver lacks %s\n", name);
        exit(1);
    }
    return fn;
}

static result summarize(double *us, int n)
{
    qsort(us, (size_t)n, sizeof *us, bench_cmp_double);
    return (result){us[n / 2], us[(int)((double)n * 0.99)]};
}

/* NOP items in `layers` layers of `per_layer`. */
static void make_batch(const shape *s, mkrt_item *items, uint32_t *offsets)
{
    uint32_t n = s->layers * s->per_layer;
    for (uint32_t k = 0; k < n; k++)
        items[k] = (mkrt_item){MKRT_OP_NOP, k % 64, k % 64, k};
    for (uint32_t l = 0; l <= s->layers; l++)
        offsets[l] = l * s->per_layer;
}


/* When the megakernel does not stop: the control block as the host sees
 * it, to say where the kernel is (CUDA_BENCH_HOLD=N: then wait N seconds
 * so that cuda-gdb can attach). */
static void stuck(const mkrt__cuda_engine *e, const char *when)
{
    mkrt__mk_control *c = e->ctl;
    fprintf(stderr,
            "cuda_bench: the megakernel did not stop (%s): doorbell %llu done %llu shutdown %u evict %u "
            "parked %u error %u levels_run %llu blocks %u\n",
            when, (unsigned long long)atomic_load(&c->doorbell), (unsigned long long)atomic_load(&c->done),
            (unsigned)atomic_load(&c->shutdown), (unsigned)atomic_load(&c->evict),
            (unsigned)atomic_load(&c->parked), (unsigned)atomic_load(&c->error),
            (unsigned long long)atomic_load(&c->levels_run), e->blocks);
    for (uint32_t b = 0; b < e->blocks && b < 8; b++)
        fprintf(stderr, "  block %u progress %#llx\n", b, (unsigned long long)atomic_load(&c->progress[b]));
    const char *hold = getenv("CUDA_BENCH_HOLD");
    if (hold != NULL) {
        fprintf(stderr, "cuda_bench: HOLD pid %d for %s s\n", (int)getpid(), hold);
        sleep((unsigned)atoi(hold));
    }
}

static result bench_megakernel(mkrt__cuda_engine *e, const shape *s, mkrt_item *items, uint32_t *offsets,
                               double *us)
{
    mkrt__mk_host h;
    mkrt__mk_host_init(&h, e->ctl, &mkrt__cuda_engine_ops, e, e->capacity);
    mkrt_error err;
    uint32_t n = s->layers * s->per_layer;
    /* The plan's blocks per layer, as the runtime's planner gives them: a
     * block per 256 items (0: the whole grid); layers of one block run in
     * block 0 alone (megakernel.cu). */
    uint32_t lb[16];
    for (uint32_t l = 0; l < s->layers && l < 16; l++) {
        uint32_t want = (s->per_layer + MKRT__CUDA_BLOCK_THREADS - 1) / MKRT__CUDA_BLOCK_THREADS;
        lb[l] = want >= e->blocks ? 0 : want;
    }
    for (int i = -s->iters / 10; i < s->iters; i++) { /* warm-up first */
        uint64_t seq, t0 = bench_now_ns();
        if (mkrt__mk_stage(&h, items, n, offsets, s->layers <= 16 ? lb : NULL, s->layers, &seq, &err) != MKRT_OK ||
            mkrt__mk_ring(&h, &err) != MKRT_OK || mkrt__mk_wait(&h, seq, 5000000000u, &err) != MKRT_OK) {
            fprintf(stderr, "cuda_bench: megakernel: %s\n", err.message);
            exit(1);
        }
        if (i >= 0)
            us[i] = (double)(bench_now_ns() - t0) / 1000.0;
    }
    return summarize(us, s->iters);
}

typedef struct plain_ctx {
    mkrt__cuda_api *cu;
    bench_api *b;
    CUfunction fn;
    CUstream stream;
    CUdeviceptr items_dev, cells_dev, errors_dev;
    void *pinned;
    uint32_t cell_count, grid_max;
} plain_ctx;

static void enqueue_copy(plain_ctx *x, const shape *s)
{
    size_t bytes = (size_t)s->layers * s->per_layer * sizeof(mkrt_item);
    CHECK(x->cu, x->cu->cuMemcpyHtoDAsync(x->items_dev, x->pinned, bytes, x->stream));
}

static void enqueue_layer(plain_ctx *x, const shape *s, uint32_t l)
{
    unsigned begin = l * s->per_layer, end = begin + s->per_layer;
    unsigned grid = (s->per_layer + 255) / 256;
    grid = grid > x->grid_max ? x->grid_max : grid;
    void *params[] = {&x->items_dev, &begin, &end, &x->cells_dev, &x->cell_count, &x->errors_dev};
    CHECK(x->cu, x->b->launch(x->fn, grid, 1, 1, 256, 1, 1, 0, x->stream, params, NULL));
}

/* Enqueues the copy and one launch per layer on x->stream. */
static void enqueue_batch(plain_ctx *x, const shape *s)
{
    enqueue_copy(x, s);
    for (uint32_t l = 0; l < s->layers; l++)
        enqueue_layer(x, s, l);
}

static result bench_launch(plain_ctx *x, const shape *s, double *us)
{
    for (int i = -s->iters / 10; i < s->iters; i++) {
        uint64_t t0 = bench_now_ns();
        enqueue_copy(x, s);
        for (uint32_t l = 0; l < s->layers; l++) {
            enqueue_layer(x, s, l);
            CHECK(x->cu, x->cu->cuStreamSynchronize(x->stream));
        }
        if (i >= 0)
            us[i] = (double)(bench_now_ns() - t0) / 1000.0;
    }
    return summarize(us, s->iters);
}

static result bench_graph(plain_ctx *x, const shape *s, double *us)
{
    void *graph = NULL, *exec = NULL;
    CHECK(x->cu, x->b->begin_capture(x->stream, 2 /* CU_STREAM_CAPTURE_MODE_RELAXED */));
    enqueue_batch(x, s);
    CHECK(x->cu, x->b->end_capture(x->stream, &graph));
    CHECK(x->cu, x->b->instantiate(&exec, graph, 0));
    for (int i = -s->iters / 10; i < s->iters; i++) {
        uint64_t t0 = bench_now_ns();
        CHECK(x->cu, x->b->graph_launch(exec, x->stream));
        CHECK(x->cu, x->cu->cuStreamSynchronize(x->stream));
        if (i >= 0)
            us[i] = (double)(bench_now_ns() - t0) / 1000.0;
    }
    x->b->exec_destroy(exec);
    x->b->graph_destroy(graph);
    return summarize(us, s->iters);
}

static void *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = len > 0 ? malloc((size_t)len) : NULL;
    if (buf != NULL && fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *n = (size_t)len;
    return buf;
}

int main(int argc, char **argv)
{
    const char *kernel = "build/cuda/bench_layer.fatbin";
    bench_opts opt;
    bench_opts_init(&opt, argc, argv);
    for (int i = 1; i < argc; i++) {
        if (bench_common_arg(argc, argv, &i, &opt))
            continue;
        if (strcmp(argv[i], "--kernel") == 0 && i + 1 < argc) {
            kernel = argv[++i];
            continue;
        }
        fprintf(stderr, "usage: %s " BENCH_USAGE " [--kernel FATBIN]\n", argv[0]);
        return 2;
    }
    const bool quick = opt.quick;
    /* Shape names go into the CSV: no commas. */
    shape shapes[] = {
        {"1 item", 1, 1, 20000},
        {"1 layer x 1K items", 1, 1024, 20000},
        {"1 layer x 1M items", 1, 1u << 20, 200},
        {"16 layers x 1 item", 16, 1, 10000},
        {"16 layers x 1K items", 16, 1024, 5000},
    };
    const int nshapes = (int)(sizeof shapes / sizeof shapes[0]);
    if (quick)
        for (int i = 0; i < nshapes; i++)
            shapes[i].iters = shapes[i].iters / 20 > 10 ? shapes[i].iters / 20 : 10;
    size_t kernel_size = 0;
    void *kernel_image = read_file(kernel, &kernel_size);
    const uint32_t cap = (1u << 20) + 16, cells_n = 4096;
    uint64_t *cells = aligned_alloc(4096, cells_n * sizeof *cells);
    /* Page-aligned: the engine registers it and copies large batches from
     * it by DMA (cfg.dma), as the runtime's batch buffers. */
    mkrt_item *items = aligned_alloc(4096, ((size_t)cap * sizeof *items + 4095) / 4096 * 4096);
    uint32_t *offsets = malloc((cap + 1) * sizeof *offsets);
    double *us = malloc(20000 * sizeof *us);
    mkrt__cuda_engine e;
    mkrt_error err;
    /* The main table's megakernel: MKRT_CUDA_BLOCKS_PER_SM (0: the occupancy
     * maximum) and MKRT_CUDA_DEVICE_STATE (0: host-mapped cells, 1: device
     * memory); then the sweep of 1, 2 and the maximum blocks per SM, both
     * ways, so that a GPU run can pick. The kernel never idles out here. */
    const char *bps_env = getenv("MKRT_CUDA_BLOCKS_PER_SM"), *ds_env = getenv("MKRT_CUDA_DEVICE_STATE");
    const uint32_t main_bps = bps_env ? (uint32_t)atoi(bps_env) : 0;
    const bool main_ds = ds_env != NULL && atoi(ds_env) != 0;
    mkrt__cuda_engine_config cfg = {cells, cells_n, NULL, 0, cap, 0, NULL, 0, 0, 0, main_ds, main_bps, {{NULL, 0}}};
    cfg.dma[0] = (mkrt__cuda_host_range){items, (size_t)cap * sizeof *items};
    if (mkrt__cuda_engine_start(&e, &cfg, &err) != MKRT_OK) {
        printf("cuda_bench: skipped: %s\n", err.message);
        return 0;
    }
    if (kernel_image == NULL) {
        printf("cuda_bench: skipped: no layer kernel at %s (built by nvcc: make bench-cuda)\n", kernel);
        mkrt__cuda_engine_stop(&e, 5000000000u);
        return 0;
    }
    char gpu[sizeof e.describe];
    snprintf(gpu, sizeof gpu, "%s", e.describe);
    mkrt__cuda_api cu = e.cu; /* the entry points outlive the engine (the library stays loaded) */
    const uint32_t max_bps = e.blocks_per_sm;
    result mk[8], ln[8], gr[8];
    for (int i = 0; i < nshapes; i++) {
        make_batch(&shapes[i], items, offsets);
        mk[i] = bench_megakernel(&e, &shapes[i], items, offsets, us);
        if (getenv("CUDA_BENCH_HOLD") != NULL)
            fprintf(stderr, "cuda_bench: %s: p50 %.1f us\n", shapes[i].name, mk[i].p50);
    }
    if (!mkrt__cuda_engine_stop(&e, 5000000000u)) {
        stuck(&e, "after the main shapes");
        return 1;
    }
    /* The sweep: [device state][1, 2, max blocks per SM][shape], p50. */
    const uint32_t sweep_bps[3] = {1, 2, max_bps};
    result sw[2][3][8];
    for (int ds = 0; ds < 2; ds++)
        for (int k = 0; k < 3; k++) {
            mkrt__cuda_engine_config sc = cfg;
            sc.device_state = ds != 0;
            sc.blocks_per_sm = sweep_bps[k];
            if (mkrt__cuda_engine_start(&e, &sc, &err) != MKRT_OK) {
                fprintf(stderr, "cuda_bench: sweep: %s\n", err.message);
                return 1;
            }
            for (int i = 0; i < nshapes; i++) {
                make_batch(&shapes[i], items, offsets);
                shape quick_shape = shapes[i];
                quick_shape.iters = quick_shape.iters / 4 > 10 ? quick_shape.iters / 4 : 10;
                sw[ds][k][i] = bench_megakernel(&e, &quick_shape, items, offsets, us);
            }
            if (!mkrt__cuda_engine_stop(&e, 5000000000u)) {
                stuck(&e, "after a sweep");
                return 1;
            }
        }

    bench_api b;
    *(void **)&b.launch = resolve(&cu, "cuLaunchKernel");
    *(void **)&b.begin_capture = resolve(&cu, "cuStreamBeginCapture");
    *(void **)&b.end_capture = resolve(&cu, "cuStreamEndCapture");
    *(void **)&b.instantiate = resolve(&cu, "cuGraphInstantiateWithFlags");
    *(void **)&b.graph_launch = resolve(&cu, "cuGraphLaunch");
    *(void **)&b.exec_destroy = resolve(&cu, "cuGraphExecDestroy");
    *(void **)&b.graph_destroy = resolve(&cu, "cuGraphDestroy");
    CUcontext ctx;
    CHECK(&cu, cu.cuDevicePrimaryCtxRetain(&ctx, cu.device));
    CHECK(&cu, cu.cuCtxSetCurrent(ctx));
    CUmodule mod;
    plain_ctx x = {&cu, &b, NULL, NULL, 0, 0, 0, NULL, cells_n, (uint32_t)cu.sm_count * 8};
    CHECK(&cu, cu.cuModuleLoadData(&mod, kernel_image));
    CHECK(&cu, cu.cuModuleGetFunction(&x.fn, mod, "mkrt_bench_layer"));
    CHECK(&cu, cu.cuStreamCreate(&x.stream, MKRT_CU_STREAM_NON_BLOCKING));
    CHECK(&cu, cu.cuMemAlloc(&x.items_dev, (size_t)cap * sizeof(mkrt_item)));
    CHECK(&cu, cu.cuMemAlloc(&x.cells_dev, cells_n * sizeof(uint64_t)));
    CHECK(&cu, cu.cuMemAlloc(&x.errors_dev, sizeof(unsigned)));
    CHECK(&cu, cu.cuMemHostAlloc(&x.pinned, (size_t)cap * sizeof(mkrt_item), MKRT_CU_MEMHOSTALLOC_PORTABLE));
    for (int i = 0; i < nshapes; i++) {
        make_batch(&shapes[i], items, offsets);
        memcpy(x.pinned, items, (size_t)shapes[i].layers * shapes[i].per_layer * sizeof(mkrt_item));
        ln[i] = bench_launch(&x, &shapes[i], us);
        gr[i] = bench_graph(&x, &shapes[i], us);
    }

    char host[256], machine[2048], report[8192];
    size_t len = 0;
    bench_machine(host, sizeof host);
    snprintf(machine, sizeof machine, "GPU: %s; host: %s", gpu, host);
#define EMIT(...) len += (size_t)snprintf(report + len, sizeof report - len, __VA_ARGS__)
    EMIT("Host-observed round trip per batch, microseconds (p50 / p99).\n\n"
         "| batch | megakernel | launch + sync per layer | CUDA Graph | graph p50 / megakernel p50 |\n"
         "|---|---|---|---|---|\n");
    for (int i = 0; i < nshapes; i++)
        EMIT("| %s | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.2fx |\n", shapes[i].name, mk[i].p50,
             mk[i].p99, ln[i].p50, ln[i].p99, gr[i].p50, gr[i].p99, gr[i].p50 / mk[i].p50);
    double barrier = (mk[3].p50 - mk[0].p50) / 15.0;
    double mk_nop = (double)(1u << 20) / mk[2].p50, gr_nop = (double)(1u << 20) / gr[2].p50;
    EMIT("\nLayer barrier (megakernel, (16-layer p50 - 1-layer p50) / 15): %.2f us  \n", barrier);
    EMIT("NOP throughput, 1M-item batch incl. staging copy: megakernel %.0f M items/s, graph %.0f M items/s\n",
         mk_nop, gr_nop);
    EMIT("\nTargets (issue 12): 1-item p50 <= 7 us (%s); 16 layers x 1 item p50 <= 10 us (%s); 16 layers x "
         "1K items p50 <= 15 us (%s); both >= 2x lower than the graph (%s); barrier <= 1.5 us (%s); 1M "
         "items <= 1.1x the graph (%s).\n",
         mk[0].p50 <= 7.0 ? "met" : "missed", mk[3].p50 <= 10.0 ? "met" : "missed",
         mk[4].p50 <= 15.0 ? "met" : "missed",
         gr[3].p50 / mk[3].p50 >= 2.0 && gr[4].p50 / mk[4].p50 >= 2.0 ? "met" : "missed",
         barrier <= 1.5 ? "met" : "missed", mk[2].p50 <= 1.1 * gr[2].p50 ? "met" : "missed");
    EMIT("\nMegakernel grid sweep, p50 us (a quarter of the iterations; main table: %u blocks per SM%s, "
         "%s):\n\n| batch | 1/SM mapped | 2/SM mapped | %u/SM mapped | 1/SM device | 2/SM device | %u/SM "
         "device |\n|---|---|---|---|---|---|---|\n",
         main_bps ? main_bps : max_bps, main_bps ? "" : " (the maximum)",
         main_ds ? "cells in device memory" : "host-mapped cells", max_bps, max_bps);
    for (int i = 0; i < nshapes; i++)
        EMIT("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", shapes[i].name, sw[0][0][i].p50,
             sw[0][1][i].p50, sw[0][2][i].p50, sw[1][0][i].p50, sw[1][1][i].p50, sw[1][2][i].p50);
    printf("cuda_bench: %s\n\n%s", machine, report);

    bench_csv csv;
    if (bench_csv_open(&csv, opt.csv, "cuda") != 0)
        return 1;
    static const char *const impls[3] = {"megakernel", "launch + sync per layer", "CUDA Graph"};
    for (int pc = 0; pc < 2; pc++)
        for (int i = 0; i < nshapes; i++) {
            const result *r[3] = {&mk[i], &ln[i], &gr[i]};
            for (int k = 0; k < 3; k++)
                bench_csv_row(&csv, pc ? "round trip p99" : "round trip p50", shapes[i].name, impls[k],
                              pc ? r[k]->p99 : r[k]->p50, "us");
        }
    bench_csv_row(&csv, "layer barrier", "16 layers x 1 item", "megakernel", barrier, "us");
    bench_csv_row(&csv, "NOP throughput", shapes[2].name, "megakernel", mk_nop, "M items/s");
    bench_csv_row(&csv, "NOP throughput", shapes[2].name, "CUDA Graph", gr_nop, "M items/s");
    for (int ds = 0; ds < 2; ds++)
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < nshapes; i++) {
                char impl[64];
                snprintf(impl, sizeof impl, "megakernel %u/SM %s", sweep_bps[k], ds ? "device" : "mapped");
                bench_csv_row(&csv, "sweep p50", shapes[i].name, impl, sw[ds][k][i].p50, "us");
            }
    if (bench_csv_close(&csv) != 0)
        return 1;
    char setup[512];
    size_t sl = (size_t)snprintf(setup, sizeof setup, "round trips per batch shape after a 10%% warm-up:");
    for (int i = 0; i < nshapes && sl < sizeof setup; i++)
        sl += (size_t)snprintf(setup + sl, sizeof setup - sl, "%s %s %d", i ? ";" : "", shapes[i].name,
                               shapes[i].iters);
    if (sl < sizeof setup)
        snprintf(setup + sl, sizeof setup - sl, "; the megakernel phase runs first and is stopped, then "
                                                "launches and graphs run on the same GPU.");
    if (bench_write_report(&opt, "make bench-cuda RECORD=1", "CUDA megakernel vs launches vs CUDA Graphs",
                           machine, setup, report) != 0)
        return 1;
    return 0;
}
