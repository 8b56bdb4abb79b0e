/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/plan_bench.c - throughput of the planning core, side by side with
 * plain baselines in the same run.
 *
 *   dedupe     mkrt_dedupe_prune vs (a) copy + qsort + unique and (b) a
 *              fresh open-addressing table allocated per batch; 1M-item
 *              batches with 0%, 10% and 50% duplicates; the dense-unique
 *              path vs the hash path on 4096-item batches.
 *   layering   mkrt_layer_batch, 1M items over 64K handles.
 *   barriers   mkrt_plan_barriers, 1M waves and 4M random forward edges.
 * Steady-state allocations per call are counted through mkrt_allocator.
 *
 *   plan_bench [--quick] [--out FILE.md] [--csv FILE.csv]
 */
#include <stdatomic.h>
#include <stdbool.h>

#include "bench_util.h"
#include "mkrt/alloc.h"
#include "mkrt/barrier.h"
#include "mkrt/dedupe.h"
#include "mkrt/layer.h"

static _Atomic uint64_t alloc_calls, alloc_bytes;
static void *counting_alloc(size_t size, size_t align, void *ctx)
{
    (void)ctx;
    atomic_fetch_add(&alloc_calls, 1);
    atomic_fetch_add(&alloc_bytes, size);
    align = align < sizeof(void *) ? sizeof(void *) : align;
    return aligned_alloc(align, (size + align - 1) & ~(align - 1));
}
static void counting_free(void *p, size_t size, void *ctx)
{
    (void)size;
    (void)ctx;
    free(p);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* n items; dup_pct percent of them copies of earlier items. */
static void make_batch(mkrt_item *b, size_t n, unsigned dup_pct)
{
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && next_rand() % 100 < dup_pct)
            b[i] = b[next_rand() % i];
        else
            b[i] = (mkrt_item){(uint32_t)(next_rand() % 16), (uint32_t)next_rand(),
                               (uint32_t)next_rand(), (uint32_t)(next_rand() % 4)};
    }
}

static int cmp_item(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(mkrt_item));
}

static size_t baseline_qsort(const mkrt_item *in, size_t n, mkrt_item *tmp)
{
    memcpy(tmp, in, n * sizeof *in);
    qsort(tmp, n, sizeof *tmp, cmp_item);
    size_t w = n ? 1 : 0;
    for (size_t i = 1; i < n; i++)
        if (memcmp(&tmp[i], &tmp[w - 1], sizeof *tmp) != 0)
            tmp[w++] = tmp[i];
    return n - w;
}

/* What a user writes without mkrt: a table allocated per batch. */
static size_t baseline_fresh_table(const mkrt_item *in, size_t n, mkrt_item *out)
{
    size_t slots = 16;
    while (slots < 2 * n)
        slots *= 2;
    typedef struct { mkrt_item k; bool used; } slot;
    slot *t = calloc(slots, sizeof *t);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = ((uint64_t)in[i].op * 31 + in[i].in) * 0x9E3779B97F4A7C15ull ^
                     ((uint64_t)in[i].out << 32 | in[i].param) * 0xC2B2AE3D27D4EB4Full;
        size_t j = (size_t)(h ^ h >> 29) & (slots - 1);
        bool dup = false;
        while (t[j].used) {
            if (memcmp(&t[j].k, &in[i], sizeof in[i]) == 0) {
                dup = true;
                break;
            }
            j = (j + 1) & (slots - 1);
        }
        if (!dup) {
            t[j].used = true;
            t[j].k = in[i];
            out[w++] = in[i];
        }
    }
    free(t);
    return n - w;
}

typedef double (*timed_fn)(void *ctx); /* returns items processed */

static double rate(timed_fn f, void *ctx, int reps)
{
    double v[16];
    for (int r = 0; r < reps; r++) {
        uint64_t t0 = bench_now_ns();
        double items = f(ctx);
        v[r] = items / ((double)(bench_now_ns() - t0) / 1e9);
    }
    return bench_median(v, reps);
}

typedef struct dd_ctx {
    mkrt_dedupe_scratch *s;
    mkrt_item *batch, *out;
    size_t n;
    int loops;
    size_t pruned;
} dd_ctx;

static double run_mkrt(void *p)
{
    dd_ctx *c = p;
    for (int l = 0; l < c->loops; l++) {
        size_t kept;
        mkrt_dedupe_prune(c->s, c->batch, c->n, c->out, &kept, &c->pruned, NULL, NULL);
    }
    return (double)c->n * c->loops;
}
static double run_qsort(void *p)
{
    dd_ctx *c = p;
    for (int l = 0; l < c->loops; l++)
        c->pruned = baseline_qsort(c->batch, c->n, c->out);
    return (double)c->n * c->loops;
}
static double run_fresh(void *p)
{
    dd_ctx *c = p;
    for (int l = 0; l < c->loops; l++)
        c->pruned = baseline_fresh_table(c->batch, c->n, c->out);
    return (double)c->n * c->loops;
}

typedef struct layer_ctx {
    mkrt_layer_scratch *s;
    mkrt_item *batch;
    size_t n;
    size_t layers;
} layer_ctx;
static double run_layer(void *p)
{
    layer_ctx *c = p;
    mkrt_layer_plan plan;
    mkrt_layer_batch(c->s, c->batch, c->n, &plan, NULL);
    c->layers = plan.layer_count;
    return (double)c->n;
}

typedef struct barrier_ctx {
    mkrt_barrier_scratch *s;
    mkrt_wave_dep *deps;
    size_t waves, edges, groups;
} barrier_ctx;
static double run_barrier(void *p)
{
    barrier_ctx *c = p;
    mkrt_barrier_plan plan;
    mkrt_plan_barriers(c->s, c->waves, c->deps, c->edges, &plan, NULL);
    c->groups = plan.group_count;
    return (double)c->edges;
}

int main(int argc, char **argv)
{
    bench_opts opt;
    bench_args(argc, argv, &opt);
    const bool quick = opt.quick;
    bench_csv csv;
    if (bench_csv_open(&csv, opt.csv, "plan") != 0)
        return 1;
    mkrt_allocator counting = {counting_alloc, counting_free, NULL};
    mkrt_allocator_set(&counting);
    const int reps = quick ? 1 : 5;
    const size_t N = quick ? 1u << 18 : 1u << 20;
    char machine[256], report[8192];
    size_t len = 0;
    bench_machine(machine, sizeof machine);
#define EMIT(...) len += (size_t)snprintf(report + len, sizeof report - len, __VA_ARGS__)
    printf("plan_bench: median of %d run(s); %s\n", reps, machine);

    mkrt_item *batch = malloc(N * sizeof *batch), *outb = malloc(N * sizeof *outb);
    dd_ctx c = {mkrt_dedupe_scratch_create(NULL), batch, outb, N, 1, 0};
    EMIT("## Dedupe (%zu-item batches, M items/s)\n\n| duplicates | mkrt (reused scratch) | qsort+unique | fresh table per batch | vs qsort | vs fresh table | allocs/call |\n|---|---|---|---|---|---|---|\n", N);
    double hash_ratio_min = 1e9, hash_large = 0;
    static const unsigned dups[] = {0, 10, 50};
    for (int d = 0; d < 3; d++) {
        make_batch(batch, N, dups[d]);
        run_mkrt(&c); /* warm the scratch */
        uint64_t a0 = atomic_load(&alloc_calls);
        double m = rate(run_mkrt, &c, reps);
        double per_call = (double)(atomic_load(&alloc_calls) - a0) / reps;
        double q = rate(run_qsort, &c, reps);
        double f = rate(run_fresh, &c, reps);
        hash_ratio_min = m / q < hash_ratio_min ? m / q : hash_ratio_min;
        if (dups[d] == 0)
            hash_large = m;
        bench_csv_rowp(&csv, "dedupe", dups[d], "mkrt (reused scratch)", m / 1e6, "M items/s");
        bench_csv_rowp(&csv, "dedupe", dups[d], "qsort+unique", q / 1e6, "M items/s");
        bench_csv_rowp(&csv, "dedupe", dups[d], "fresh table per batch", f / 1e6, "M items/s");
        bench_csv_rowp(&csv, "dedupe allocations", dups[d], "mkrt (reused scratch)", per_call, "allocs/call");
        EMIT("| %u%% | %.1f | %.1f | %.1f | %.2fx | %.2fx | %.0f |\n", dups[d], m / 1e6, q / 1e6,
             f / 1e6, m / q, m / f, per_call);
    }
    /* Dense-unique vs hash path, both on 4096-item duplicate-free batches. */
    dd_ctx small = {c.s, batch, outb, 4096, quick ? 200 : 2000, 0};
    for (size_t i = 0; i < 4096; i++)
        batch[i] = (mkrt_item){1, (uint32_t)i, 1000000 + (uint32_t)i, 0};
    double dense = rate(run_mkrt, &small, reps);
    for (size_t i = 0; i < 4096; i++)
        batch[i].out = (uint32_t)(i * 2654435761u); /* spread: forces hashing */
    run_mkrt(&small);
    double hashed = rate(run_mkrt, &small, reps);
    bench_csv_rowp(&csv, "dedupe 4096-item batch", 0, "mkrt dense-unique path", dense / 1e6, "M items/s");
    bench_csv_rowp(&csv, "dedupe 4096-item batch", 0, "mkrt hash path", hashed / 1e6, "M items/s");
    EMIT("\n| 4096-item batch, no duplicates | M items/s |\n|---|---|\n| dense-unique path | %.1f |\n| hash path | %.1f |\n| dense / hash | %.2fx |\n",
         dense / 1e6, hashed / 1e6, dense / hashed);

    /* Layering. */
    for (size_t i = 0; i < N; i++)
        batch[i] = (mkrt_item){1, (uint32_t)(next_rand() % 65536), (uint32_t)(next_rand() % 65536), 0};
    layer_ctx lc = {mkrt_layer_scratch_create(NULL), batch, N, 0};
    run_layer(&lc);
    uint64_t a0 = atomic_load(&alloc_calls);
    double lr = rate(run_layer, &lc, reps);
    double l_allocs = (double)(atomic_load(&alloc_calls) - a0) / reps;

    /* Barrier planner. */
    size_t waves = quick ? 1u << 18 : 1u << 20, edges = 4 * waves;
    mkrt_wave_dep *deps = malloc(edges * sizeof *deps);
    for (size_t e = 0; e < edges; e++) {
        size_t a = (size_t)(next_rand() % (waves - 1));
        size_t span = 1 + (size_t)(next_rand() % 1024);
        size_t b = a + span < waves ? a + span : waves - 1;
        deps[e] = (mkrt_wave_dep){a, b};
    }
    barrier_ctx bc = {mkrt_barrier_scratch_create(0, 0, NULL), deps, waves, edges, 0};
    run_barrier(&bc);
    a0 = atomic_load(&alloc_calls);
    double br = rate(run_barrier, &bc, reps);
    double b_allocs = (double)(atomic_load(&alloc_calls) - a0) / reps;
    bench_csv_rowp(&csv, "layer_batch", (double)N, "mkrt", lr / 1e6, "M items/s");
    bench_csv_rowp(&csv, "layer_batch", (double)N, "mkrt", (double)lc.layers, "layers");
    bench_csv_rowp(&csv, "layer_batch", (double)N, "mkrt", l_allocs, "allocs/call");
    bench_csv_rowp(&csv, "plan_barriers", (double)edges, "mkrt", br / 1e6, "M edges/s");
    bench_csv_rowp(&csv, "plan_barriers", (double)edges, "mkrt", (double)bc.groups, "groups");
    bench_csv_rowp(&csv, "plan_barriers", (double)edges, "mkrt", b_allocs, "allocs/call");
    if (bench_csv_close(&csv) != 0)
        return 1;
    EMIT("\n## Layering and barrier planning\n\n| planner | input | throughput | layers/groups | allocs/call (steady state) |\n|---|---|---|---|---|\n"
         "| mkrt_layer_batch | %zu items, 64K handles | %.1f M items/s | %zu | %.0f |\n"
         "| mkrt_plan_barriers | %zu waves, %zu edges | %.1f M edges/s | %zu | %.0f |\n",
         N, lr / 1e6, lc.layers, l_allocs, waves, edges, br / 1e6, bc.groups, b_allocs);

    EMIT("\n## Targets\n\n| target | ratio | met |\n|---|---|---|\n");
    EMIT("| dedupe hash path >= 3x qsort baseline (worst of 0/10/50%%) | %.2fx | %s |\n", hash_ratio_min,
         hash_ratio_min >= 3 ? "yes" : "NO");
    EMIT("| dense path (4096 items) >= 5x hash path per item (%zu-item batches, 0%% dups) | %.2fx | %s |\n",
         N, dense / hash_large, dense / hash_large >= 5 ? "yes" : "NO");
    EMIT("| the same, hash path on equal 4096-item batches (table in L2) | %.2fx | %s |\n",
         dense / hashed, dense / hashed >= 5 ? "yes" : "NO");
    EMIT("| 0 allocations per call in steady state | %.0f + %.0f | %s |\n", l_allocs, b_allocs,
         l_allocs == 0 && b_allocs == 0 ? "yes" : "NO");
    printf("\n%s", report);
    char setup[512];
    snprintf(setup, sizeof setup, "median of %d runs.", reps);
    if (bench_write_report(&opt, "make bench RECORD=1", "Planning core throughput", machine, setup, report) != 0)
        return 1;
    mkrt_dedupe_scratch_destroy(c.s);
    mkrt_layer_scratch_destroy(lc.s);
    mkrt_barrier_scratch_destroy(bc.s);
    free(deps);
    free(batch);
    free(outb);
    return 0;
}
