/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/stage_bench.c - what the dispatcher's per-item stages cost, each
 * alone, on one thread, in nanoseconds per item.
 *
 * The stages (pipeline/stages.h) that touch every item of a batch:
 *   pass    the one pass that prunes and levels (mkrt__layer_prune_levels
 *           with the built-ins' rules, as the dedupe stage calls it)
 *   place   the counting sort into layer order (mkrt__layer_count and
 *           mkrt__layer_scatter), which a batch run by one thread of the
 *           CPU pool skips
 *   exec    the CPU pool's loop over the ops (mkrt__exec_range)
 * on the workloads of bench/results/stages.md: ADD over 1024 handles with
 * in = out (runtime_bench's items; 4096 is one producer ring's batch),
 * NOP over the same handles, independent ADDs (in = out = i), and random
 * ADDs over 64K cells (conflicts). Every figure is the best of many
 * repetitions: on a shared machine the best is what the code costs, where
 * a median would be what the neighbours cost. End-to-end rates and their
 * ratios against peers are runtime_bench's and peer_bench's.
 *
 * A second table weighs the plan cache on the path (plan/shape_cache.h)
 * and SPLIT (pipeline/layer_internal.h) on the same batches: a hit's
 * lookup (ns per batch) against what it saves, ARMS's detector over the
 * batch in two arms (what a hit that says "found nothing" skips); and
 * the split levelling's parts, each alone on this thread, against the one
 * pass: with two idle executors the split's wall is its slowest part plus
 * the pool's hand-off (measured on the path, EXPLAIN and plan/decide.c).
 *
 *   stage_bench [--quick] [--out FILE.md] [--csv FILE.csv]
 */
#include <stdbool.h>

#include "bench_util.h"
#include "mkrt/layer.h"
#include "mkrt/runtime.h"
#include "ops/op_table.h"
#include "pipeline/layer_internal.h"
#include "plan/shape_cache.h"

#define CELLS 65536u

typedef struct workload {
    const char *name;
    size_t n;
    uint32_t op;
    int shape; /* 0: in = out = i % 1024; 1: in = out = i; 2: random over CELLS */
} workload;

static const workload workloads[] = {
    {"ADD, in = out, 1024 handles", 4096, MKRT_OP_ADD, 0},
    {"ADD, in = out, 1024 handles", 65536, MKRT_OP_ADD, 0},
    {"NOP, in = out, 1024 handles", 65536, MKRT_OP_NOP, 0},
    {"ADD, independent (in = out = i)", 65536, MKRT_OP_ADD, 1},
    {"ADD, random in and out over 64K cells", 65536, MKRT_OP_ADD, 2},
};
#define NWORK (sizeof workloads / sizeof workloads[0])

static uint64_t rng = 88172645463325252ull;
static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

static void build(const workload *w, mkrt_item *items)
{
    for (size_t i = 0; i < w->n; i++) {
        uint32_t in, out;
        if (w->shape == 0)
            in = out = (uint32_t)(i % 1024);
        else if (w->shape == 1)
            in = out = (uint32_t)i;
        else
            in = next_rand() % CELLS, out = next_rand() % CELLS;
        items[i] = (mkrt_item){w->op, in, out, (uint32_t)i}; /* unique params: nothing pruned */
    }
}

typedef struct costs {
    double pass, place, exec;
    size_t layers;
} costs;

static costs measure(const workload *w, int reps, mkrt_layer_scratch *s, mkrt__state *sg,
                     mkrt_item *src, mkrt_item *items, mkrt_item *out, uint32_t *offsets,
                     mkrt__fail_list *fails)
{
    build(w, src);
    /* As the dedupe stage: built-ins' rules, pruning, and the handle range
     * admission found. */
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t i = 0; i < w->n; i++) {
        uint32_t a = src[i].in < src[i].out ? src[i].in : src[i].out;
        uint32_t b = src[i].in < src[i].out ? src[i].out : src[i].in;
        lo = a < lo ? a : lo;
        hi = b > hi ? b : hi;
    }
    const mkrt__layer_rules rules = {NULL, NULL, NULL, true, true, true, lo, hi, NULL, NULL, NULL};
    costs c = {1e30, 1e30, 1e30, 0};
    for (int r = 0; r < reps; r++) {
        memcpy(items, src, w->n * sizeof *items);
        size_t kept = 0, layers = 0;
        const uint32_t *level;
        uint64_t t0 = bench_now_ns();
        mkrt__layer_prune_levels(s, items, w->n, &rules, &kept, &layers, &level, NULL);
        uint64_t t1 = bench_now_ns();
        mkrt__layer_count(s, kept, layers, offsets);
        mkrt__layer_scatter(s, items, kept, layers, out, offsets);
        uint64_t t2 = bench_now_ns();
        mkrt__exec_range(sg, items, 0, kept, fails);
        uint64_t t3 = bench_now_ns();
        c.pass = (double)(t1 - t0) < c.pass ? (double)(t1 - t0) : c.pass;
        c.place = (double)(t2 - t1) < c.place ? (double)(t2 - t1) : c.place;
        c.exec = (double)(t3 - t2) < c.exec ? (double)(t3 - t2) : c.exec;
        c.layers = layers;
    }
    c.pass /= (double)w->n;
    c.place /= (double)w->n;
    c.exec /= (double)w->n;
    return c;
}

typedef struct path_costs {
    double hit_ns, detect_ns, one_pass_ns, part_ns[2], ranges_ns[2];
    bool exact, ranges_exact;
} path_costs;

/* The plan cache's hit, ARMS's detector and SPLIT's parts on one batch
 * (ns per batch, the best of reps). */
static path_costs measure_path(const workload *w, int reps, mkrt__shape_cache *sc, mkrt_layer_scratch *whole,
                               mkrt_layer_scratch *const *parts, mkrt_dedupe_scratch *ds, mkrt_item *src,
                               mkrt_item *items, mkrt_item *out, mkrt_cross_arm_pair *pairs)
{
    build(w, src);
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t i = 0; i < w->n; i++) {
        lo = src[i].in < lo ? src[i].in : lo, lo = src[i].out < lo ? src[i].out : lo;
        hi = src[i].in > hi ? src[i].in : hi, hi = src[i].out > hi ? src[i].out : hi;
    }
    const mkrt__layer_rules rules = {NULL, NULL, NULL, true, true, true, lo, hi, NULL, NULL, NULL};
    const mkrt__shape shape = {1u << w->op, mkrt__bits(w->n), 2, mkrt__bits((uint64_t)hi - lo + 1), 0};
    const mkrt__shape_plan v = {1, 1, 1};
    mkrt__shape_cache_put(sc, &shape, &v);
    path_costs c = {1e30, 1e30, 1e30, {1e30, 1e30}, {1e30, 1e30}, true, true};
    const mkrt_item *arm[2] = {src, src + w->n / 2};
    const size_t arm_len[2] = {w->n / 2, w->n - w->n / 2};
    for (int r = 0; r < reps; r++) {
        mkrt__shape_plan got;
        uint64_t t0 = bench_now_ns();
        for (int k = 0; k < 64; k++)
            mkrt__shape_cache_get(sc, &shape, &got);
        uint64_t t1 = bench_now_ns();
        mkrt_cross_arm_report rep = {pairs, w->n, 0};
        mkrt_dedupe_cross_arm(ds, arm, arm_len, 2, &rep, NULL);
        uint64_t t2 = bench_now_ns();
        memcpy(items, src, w->n * sizeof *items);
        size_t kept, layers;
        const uint32_t *level;
        uint64_t t3 = bench_now_ns();
        mkrt__layer_prune_levels(whole, items, w->n, &rules, &kept, &layers, &level, NULL);
        uint64_t t4 = bench_now_ns();
        memcpy(items, src, w->n * sizeof *items);
        mkrt__layer_split sp;
        if (!mkrt__layer_split_begin(&sp, whole, parts, 2, items, out, w->n, &rules, false)) {
            c.exact = false;
            continue;
        }
        for (uint32_t k = 0; k < 2; k++)
            mkrt__layer_split_run(&sp, k); /* claims one part each */
        size_t skipped;
        c.exact = mkrt__layer_split_end(&sp, &kept, &layers, &skipped) && c.exact;
        c.hit_ns = (double)(t1 - t0) / 64 < c.hit_ns ? (double)(t1 - t0) / 64 : c.hit_ns;
        c.detect_ns = (double)(t2 - t1) < c.detect_ns ? (double)(t2 - t1) : c.detect_ns;
        c.one_pass_ns = (double)(t4 - t3) < c.one_pass_ns ? (double)(t4 - t3) : c.one_pass_ns;
        for (uint32_t k = 0; k < 2; k++)
            c.part_ns[k] = (double)sp.ns[k] < c.part_ns[k] ? (double)sp.ns[k] : c.part_ns[k];
        /* The same split trusting the parts' handle ranges (no claims),
         * as a shape whose last split found them disjoint runs it. */
        memcpy(items, src, w->n * sizeof *items);
        if (!mkrt__layer_split_begin(&sp, whole, parts, 2, items, out, w->n, &rules, true)) {
            c.ranges_exact = false;
            continue;
        }
        for (uint32_t k = 0; k < 2; k++)
            mkrt__layer_split_run(&sp, k);
        c.ranges_exact = mkrt__layer_split_end(&sp, &kept, &layers, &skipped) && c.ranges_exact;
        for (uint32_t k = 0; k < 2; k++)
            c.ranges_ns[k] = (double)sp.ns[k] < c.ranges_ns[k] ? (double)sp.ns[k] : c.ranges_ns[k];
    }
    return c;
}

int main(int argc, char **argv)
{
    bench_opts opt;
    bench_args(argc, argv, &opt);
    const int reps = opt.quick ? 5 : 2000;
    bench_csv csv;
    if (bench_csv_open(&csv, opt.csv, "stages") != 0)
        return 1;
    char machine[256], report[8192];
    size_t len = 0;
    bench_machine(machine, sizeof machine);
#define EMIT(...) len += (size_t)snprintf(report + len, sizeof report - len, __VA_ARGS__)
    printf("stage_bench: best of %d; %s\n", reps, machine);

    mkrt_config cfg = mkrt_config_default();
    cfg.cells = CELLS;
    cfg.backend = MKRT_BACKEND_CPU;
    /* exec runs on a state group of its own (state/state.h): the cells,
     * no user op, no graph; no runtime needed. */
    static mkrt__op_entry ops[MKRT_OP_MAX];
    mkrt__state sg = {.cfg = &cfg, .ops = ops, .graph = NULL}; /* no graph engine: no RELAX */
    sg.cells = calloc(CELLS, sizeof *sg.cells);
    const size_t cap = 65536;
    mkrt_item *src = malloc(cap * sizeof *src), *items = malloc(cap * sizeof *items),
              *out = malloc(cap * sizeof *out);
    uint32_t *offsets = malloc((cap + 1) * sizeof *offsets), *pairs = malloc(2 * cap * sizeof *pairs);
    mkrt_layer_scratch *s = mkrt_layer_scratch_create(NULL);
    if (!src || !items || !out || !offsets || !pairs || !s || !sg.cells) {
        fprintf(stderr, "stage_bench: out of memory\n");
        return 1;
    }
    mkrt__fail_list fails = {pairs, (uint32_t)cap, 0};

    EMIT("| workload | items | layers | pass (prune + level) | place (into layers) | exec | "
         "one thread (pass + exec) | shared (pass + place + exec) |\n|---|---|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < NWORK; k++) {
        const workload *w = &workloads[k];
        costs c = measure(w, reps, s, &sg, src, items, out, offsets, &fails);
        EMIT("| %s | %zu | %zu | %.2f | %.2f | %.2f | %.2f | %.2f |\n", w->name, w->n, c.layers, c.pass,
             c.place, c.exec, c.pass + c.exec, c.pass + c.place + c.exec);
        printf("%s, %zu items: pass %.2f, place %.2f, exec %.2f ns per item (%zu layers)\n", w->name, w->n,
               c.pass, c.place, c.exec, c.layers);
        char param[32];
        snprintf(param, sizeof param, "%zu", w->n);
        bench_csv_row(&csv, w->name, param, "pass", c.pass, "ns/item");
        bench_csv_row(&csv, w->name, param, "place", c.place, "ns/item");
        bench_csv_row(&csv, w->name, param, "exec", c.exec, "ns/item");
    }
    EMIT("\nThe plan cache on the path and SPLIT, ns per batch: a hit's lookup; ARMS's detector over the batch "
         "in two arms (what a hit that says it found nothing skips); the one pass; SPLIT's two parts, each "
         "alone (the split's wall on two idle executors is the slower part plus the hand-off); the same "
         "two parts trusting their handle ranges (no claim per handle: a shape whose last split found the "
         "ranges disjoint).\n\n"
         "| workload | items | hit lookup | ARMS detector | one pass | part 1 | part 2 | split exact | "
         "part 1, ranges | part 2, ranges | ranges exact |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|\n");
    {
        mkrt__shape_cache sc;
        mkrt_layer_scratch *parts[2] = {mkrt_layer_scratch_create(NULL), mkrt_layer_scratch_create(NULL)};
        mkrt_dedupe_scratch *ds = mkrt_dedupe_scratch_create(NULL);
        mkrt_cross_arm_pair *cap_pairs = malloc(cap * sizeof *cap_pairs);
        if (!mkrt__shape_cache_init(&sc, 64, NULL) || !parts[0] || !parts[1] || !ds || !cap_pairs) {
            fprintf(stderr, "stage_bench: out of memory\n");
            return 1;
        }
        for (size_t k = 1; k < NWORK; k++) {
            const workload *w = &workloads[k];
            path_costs c = measure_path(w, opt.quick ? 5 : 200, &sc, s, parts, ds, src, items, out, cap_pairs);
            EMIT("| %s | %zu | %.0f | %.0f | %.0f | %.0f | %.0f | %s | %.0f | %.0f | %s |\n", w->name, w->n, c.hit_ns,
                 c.detect_ns, c.one_pass_ns, c.part_ns[0], c.part_ns[1], c.exact ? "yes" : "no (conflict: one pass)",
                 c.ranges_ns[0], c.ranges_ns[1], c.ranges_exact ? "yes" : "no (overlap: one pass)");
            printf("%s, %zu items: hit %.0f ns, detector %.0f, one pass %.0f, parts %.0f / %.0f ns (%s)\n", w->name,
                   w->n, c.hit_ns, c.detect_ns, c.one_pass_ns, c.part_ns[0], c.part_ns[1],
                   c.exact ? "exact" : "conflict");
            char param[32];
            snprintf(param, sizeof param, "%zu", w->n);
            bench_csv_row(&csv, w->name, param, "plan cache hit", c.hit_ns, "ns/batch");
            bench_csv_row(&csv, w->name, param, "ARMS detector", c.detect_ns, "ns/batch");
            bench_csv_row(&csv, w->name, param, "one pass", c.one_pass_ns, "ns/batch");
            bench_csv_row(&csv, w->name, param, "split slower part",
                          c.part_ns[0] > c.part_ns[1] ? c.part_ns[0] : c.part_ns[1], "ns/batch");
            bench_csv_row(&csv, w->name, param, "split slower part, ranges",
                          c.ranges_ns[0] > c.ranges_ns[1] ? c.ranges_ns[0] : c.ranges_ns[1], "ns/batch");
        }
        mkrt__shape_cache_fini(&sc);
        mkrt_layer_scratch_destroy(parts[0]);
        mkrt_layer_scratch_destroy(parts[1]);
        mkrt_dedupe_scratch_destroy(ds);
        free(cap_pairs);
    }
    if (bench_csv_close(&csv) != 0)
        return 1;
    printf("\n%s", report);
    char setup[512];
    snprintf(setup, sizeof setup,
             "one thread, no producers; ns per item, the best of %d repetitions of each stage on the "
             "same batch (unique params: nothing is pruned). \"one thread\" is what a batch the CPU pool "
             "runs on the dispatching thread pays, \"shared\" one the workers share.",
             reps);
    int rc = bench_write_report(&opt, "make bench RECORD=1", "The dispatcher's per-item stages", machine,
                                setup, report);
    mkrt_layer_scratch_destroy(s);
    free(src), free(items), free(out), free(offsets), free(pairs);
    free(sg.cells);
    return rc;
}
