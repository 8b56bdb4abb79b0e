/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/graph_bench.c - Graph500-style BFS and SSSP, side by side in one
 * run: mkrt's CPU pool (examples/graph500/traverse_mkrt.c), SuiteSparse:
 * GraphBLAS and igraph (bench/graph/, each where installed), and the
 * sequential reference, on the same Kronecker graph and the same roots.
 *
 * The reference runs first and its results are kept; every engine's every
 * result is then checked by the Graph500 rules and against them (equal
 * BFS levels, equal distances). A failed check prints why and makes the
 * run exit 1 without writing a report. Each root is searched once per
 * engine and algorithm (Graph500's protocol); TEPS per root is edges in
 * the component / seconds, summarised by the harmonic mean.
 *
 *   graph_bench [--quick] [--out FILE.md] [--csv FILE.csv]
 *               [--scale N] [--edgefactor N] [--roots N] [--threads N]
 *
 * Defaults: scale 18 (12 with --quick), edge factor 16, 16 roots (4 with
 * --quick), threads = the CPUs online, for mkrt and GraphBLAS alike
 * (igraph and the reference are sequential). */
#include <inttypes.h>

#include "bench_util.h"
#include "graph/peers.h"
#include "mkrt/runtime.h"
#include "../examples/graph500/graph500.h"

#define MAX_ENGINES 4

typedef struct gopts {
    bench_opts b;
    uint32_t scale, edgefactor, roots;
    unsigned threads;
} gopts;

static bool arg_u32(int argc, char **argv, int *i, const char *name, uint32_t lo, uint32_t hi,
                    uint32_t *out)
{
    if (strcmp(argv[*i], name) != 0 || *i + 1 >= argc)
        return false;
    char *end;
    unsigned long v = strtoul(argv[*i + 1], &end, 10);
    if (*end != '\0' || argv[*i + 1][0] == '-' || v < lo || v > hi)
        return false;
    *out = (uint32_t)v;
    ++*i;
    return true;
}

static void parse(int argc, char **argv, gopts *o)
{
    bench_opts_init(&o->b, argc, argv);
    uint32_t scale = 0, roots = 0, threads = 0;
    o->edgefactor = 16;
    for (int i = 1; i < argc; i++) {
        if (bench_common_arg(argc, argv, &i, &o->b) ||
            arg_u32(argc, argv, &i, "--scale", 1, G500_MAX_SCALE, &scale) ||
            arg_u32(argc, argv, &i, "--edgefactor", 1, 1u << 16, &o->edgefactor) ||
            arg_u32(argc, argv, &i, "--roots", 1, 1024, &roots) ||
            arg_u32(argc, argv, &i, "--threads", 1, 4096, &threads))
            continue;
        fprintf(stderr,
                "usage: %s " BENCH_USAGE " [--scale N] [--edgefactor N] [--roots N] [--threads N]\n",
                argv[0]);
        exit(2);
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    o->scale = scale ? scale : o->b.quick ? 12 : 18;
    o->roots = roots ? roots : o->b.quick ? 4 : 16;
    o->threads = threads ? threads : cpus > 0 ? (unsigned)cpus : 1;
}

/* The graph, the roots and the reference's results for every root. */
typedef struct world {
    g500_edge_list el;
    g500_graph graph;
    uint32_t *roots;
    uint32_t **levels;  /* per root */
    uint64_t **dists;   /* per root */
    uint64_t *edges;    /* per root: edges in the component */
    uint32_t *parent, *level;
    uint64_t *dist;
} world;

/* One engine's figures. */
typedef struct figures {
    const char *name;
    unsigned threads;
    double bfs_hmean, sssp_hmean;
    double bfs_s, sssp_s; /* total seconds over the roots */
} figures;

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "graph_bench: out of memory for %zu bytes\n", n);
        exit(1);
    }
    return p;
}

static void build_world(const gopts *o, world *w)
{
    char why[512];
    double t0 = g500_seconds();
    if (g500_generate(o->scale, o->edgefactor, 1, &w->el, why, sizeof why) != 0 ||
        g500_csr_build(&w->el, &w->graph, why, sizeof why) != 0) {
        fprintf(stderr, "graph_bench: %s\n", why);
        exit(1);
    }
    const g500_csr *g = &w->graph.csr;
    printf("graph: scale %u, edge factor %u: %u vertices, %" PRIu64 " undirected edges (built in "
           "%.2f s)\n",
           o->scale, o->edgefactor, g->vertices, g->offsets[g->vertices] / 2,
           g500_seconds() - t0);
    size_t n = g->vertices;
    w->roots = xmalloc(o->roots * sizeof *w->roots);
    w->levels = xmalloc(o->roots * sizeof *w->levels);
    w->dists = xmalloc(o->roots * sizeof *w->dists);
    w->edges = xmalloc(o->roots * sizeof *w->edges);
    w->parent = xmalloc(n * sizeof *w->parent);
    w->level = xmalloc(n * sizeof *w->level);
    w->dist = xmalloc(n * sizeof *w->dist);
    if (g500_sample_roots(g, 1, o->roots, w->roots, why, sizeof why) != 0) {
        fprintf(stderr, "graph_bench: %s\n", why);
        exit(1);
    }
    for (uint32_t i = 0; i < o->roots; i++) {
        w->levels[i] = xmalloc(n * sizeof **w->levels);
        w->dists[i] = xmalloc(n * sizeof **w->dists);
    }
}

static void free_world(const gopts *o, world *w)
{
    for (uint32_t i = 0; i < o->roots; i++) {
        free(w->levels[i]);
        free(w->dists[i]);
    }
    free(w->levels);
    free(w->dists);
    free(w->edges);
    free(w->roots);
    free(w->parent);
    free(w->level);
    free(w->dist);
    g500_graph_free(&w->graph);
    g500_edge_list_free(&w->el);
}

/* Checks the result in w->parent / w->dist for root i; the reference
 * (is_ref) stores its levels and distances instead of comparing. */
static int check_bfs(world *w, uint32_t i, bool is_ref, char *why, size_t why_len)
{
    const g500_csr *g = &w->graph.csr;
    uint32_t *lv = is_ref ? w->levels[i] : w->level;
    if (g500_validate_bfs(g, w->roots[i], w->parent, lv, why, why_len) != 0)
        return -1;
    if (is_ref) {
        w->edges[i] = g500_component_edges(&w->el, w->parent);
        return 0;
    }
    for (uint32_t v = 0; v < g->vertices; v++)
        if (lv[v] != w->levels[i][v]) {
            snprintf(why, why_len, "BFS from %u: level of vertex %u is %u, the reference's %u",
                     w->roots[i], v, lv[v], w->levels[i][v]);
            return -1;
        }
    return 0;
}

static int check_sssp(world *w, uint32_t i, bool is_ref, char *why, size_t why_len)
{
    const g500_csr *g = &w->graph.csr;
    if (g500_validate_sssp(g, w->roots[i], w->dist, why, why_len) != 0)
        return -1;
    if (is_ref) {
        memcpy(w->dists[i], w->dist, g->vertices * sizeof *w->dist);
        return 0;
    }
    for (uint32_t v = 0; v < g->vertices; v++)
        if (w->dist[v] != w->dists[i][v]) {
            snprintf(why, why_len,
                     "SSSP from %u: dist[%u] is %" PRIu64 ", the reference's %" PRIu64,
                     w->roots[i], v, w->dist[v], w->dists[i][v]);
            return -1;
        }
    return 0;
}

/* Runs one engine over every root. Returns 0, or -1 after printing why. */
static int run_engine(const gopts *o, world *w, const traverse_ops *ops, unsigned threads,
                      bool is_ref, figures *fig)
{
    char why[512];
    const g500_csr *g = &w->graph.csr;
    double t0 = g500_seconds();
    traverse_engine *e = ops->open(g, threads, why, sizeof why);
    if (e == NULL) {
        fprintf(stderr, "graph_bench: FAILED: %s did not open: %s\n", ops->name, why);
        return -1;
    }
    printf("%s: set up in %.2f s (not timed)\n", ops->name, g500_seconds() - t0);
    double *bt = xmalloc(o->roots * sizeof *bt), *st = xmalloc(o->roots * sizeof *st);
    *fig = (figures){ops->name, threads, 0, 0, 0, 0};
    int rc = 0;
    for (uint32_t i = 0; i < o->roots && rc == 0; i++) {
        double a = g500_seconds();
        rc = ops->bfs(e, w->roots[i], w->parent, why, sizeof why);
        double b = g500_seconds();
        rc = rc != 0 ? rc : check_bfs(w, i, is_ref, why, sizeof why);
        double c = g500_seconds();
        if (rc == 0)
            rc = ops->sssp(e, w->roots[i], w->dist, why, sizeof why);
        double d = g500_seconds();
        rc = rc != 0 ? rc : check_sssp(w, i, is_ref, why, sizeof why);
        if (rc != 0)
            break;
        bt[i] = (double)w->edges[i] / (b - a > 0 ? b - a : 1e-9);
        st[i] = (double)w->edges[i] / (d - c > 0 ? d - c : 1e-9);
        fig->bfs_s += b - a;
        fig->sssp_s += d - c;
    }
    ops->close(e);
    if (rc != 0) {
        fprintf(stderr, "graph_bench: FAILED: %s gave a wrong result: %s\n", ops->name, why);
    } else {
        fig->bfs_hmean = g500_teps_summary(bt, o->roots).harmonic_mean;
        fig->sssp_hmean = g500_teps_summary(st, o->roots).harmonic_mean;
        printf("%s: BFS %.1f MTEPS, SSSP %.1f MTEPS (harmonic means over %u roots; %.2f s + "
               "%.2f s), every result valid\n",
               ops->name, fig->bfs_hmean / 1e6, fig->sssp_hmean / 1e6, o->roots, fig->bfs_s,
               fig->sssp_s);
    }
    fflush(stdout);
    free(bt);
    free(st);
    return rc != 0 ? -1 : 0;
}

/* Why there is no GPU row, into buf: mkrt's CUDA backend is asked for a
 * runtime; where that fails its message says why (no driver, no device). */
static void gpu_note(char *buf, size_t len)
{
    mkrt_config cfg = mkrt_config_default();
    cfg.backend = MKRT_BACKEND_CUDA;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&cfg, &rt, &err) != MKRT_OK) {
        snprintf(buf, len,
                 "No GPU figure is recorded: no GPU was available where this ran (mkrt's CUDA "
                 "backend said: %s). The CUDA row needs a real GPU.",
                 err.message);
        return;
    }
    mkrt_destroy(rt, UINT64_MAX, NULL);
    snprintf(buf, len,
             "No GPU figure is recorded: a GPU is present, but this benchmark runs mkrt's CPU "
             "engine only (traverse_mkrt_ops).");
}

/* mkrt's figure over the peer's, or 0 where either is missing. */
static double ratio(double mkrt, double peer)
{
    return mkrt > 0 && peer > 0 ? mkrt / peer : 0;
}

static const figures *find(const figures *f, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(f[i].name, name) == 0)
            return &f[i];
    return NULL;
}

#define EMIT(...) (len += (size_t)snprintf(report + len, sizeof report - len, __VA_ARGS__))

int main(int argc, char **argv)
{
    gopts o;
    parse(argc, argv, &o);
    char machine[256], skipped[256] = "";
    bench_machine(machine, sizeof machine);
    printf("graph_bench: scale %u, edge factor %u, %u roots, %u threads for mkrt and GraphBLAS; "
           "%s\n",
           o.scale, o.edgefactor, o.roots, o.threads, machine);
    struct {
        const traverse_ops *ops;
        unsigned threads;
    } engines[MAX_ENGINES];
    int ne = 0;
    engines[ne++].ops = &traverse_reference_ops; /* first: the others are compared with it */
    engines[0].threads = 1;
    engines[ne].ops = &traverse_mkrt_ops;
    engines[ne++].threads = o.threads;
#ifdef HAVE_GRAPHBLAS
    engines[ne].ops = &traverse_graphblas_ops;
    engines[ne++].threads = o.threads;
#else
    printf("skipped: GraphBLAS not installed (make bench-deps installs libgraphblas-dev)\n");
    strcat(skipped, " GraphBLAS (not installed)");
#endif
#ifdef HAVE_IGRAPH
    engines[ne].ops = &traverse_igraph_ops;
    engines[ne++].threads = 1;
#else
    printf("skipped: igraph not installed (make bench-deps installs libigraph-dev)\n");
    strcat(skipped, " igraph (not installed)");
#endif
    world w;
    memset(&w, 0, sizeof w);
    build_world(&o, &w);
    figures fig[MAX_ENGINES];
    int failed = 0;
    for (int i = 0; i < ne; i++)
        failed |= run_engine(&o, &w, engines[i].ops, engines[i].threads, i == 0, &fig[i]) != 0;
    free_world(&o, &w);
    if (failed) {
        fprintf(stderr, "graph_bench: FAILED: an engine gave a wrong result (above); nothing "
                        "recorded\n");
        return 1;
    }

    char report[8192];
    size_t len = 0;
    const figures *m = &fig[1];
    EMIT("| engine | threads | BFS MTEPS | mkrt BFS / engine | SSSP MTEPS | mkrt SSSP / engine "
         "|\n|---|---|---|---|---|---|\n");
    bench_csv csv;
    if (bench_csv_open(&csv, o.b.csv, "graph") != 0)
        return 1;
    for (int i = 1; i <= ne; i++) {
        const figures *f = &fig[i % ne]; /* mkrt first, the reference last */
        EMIT("| %s | %u | %.1f | %.2fx | %.1f | %.2fx |\n", f->name, f->threads, f->bfs_hmean / 1e6,
             ratio(m->bfs_hmean, f->bfs_hmean), f->sssp_hmean / 1e6,
             ratio(m->sssp_hmean, f->sssp_hmean));
        bench_csv_rowp(&csv, "BFS", o.scale, f->name, f->bfs_hmean / 1e6, "MTEPS");
        bench_csv_rowp(&csv, "SSSP", o.scale, f->name, f->sssp_hmean / 1e6, "MTEPS");
    }
    if (bench_csv_close(&csv) != 0)
        return 1;
    const figures *gb = find(fig, ne, "graphblas"), *ig = find(fig, ne, "igraph");
    double rg = gb ? ratio(m->bfs_hmean, gb->bfs_hmean) : 0;
    double ri = ig ? ratio(m->bfs_hmean, ig->bfs_hmean) : 0;
    EMIT("\n| target (issue 14, CPU, scale 18) | value | met |\n|---|---|---|\n");
    if (gb)
        EMIT("| mkrt BFS >= 1.0x GraphBLAS | %.2fx | %s |\n", rg,
             o.scale != 18 ? "not at scale 18" : rg >= 1.0 ? "yes" : "NO");
    else
        EMIT("| mkrt BFS >= 1.0x GraphBLAS | not run | GraphBLAS not installed |\n");
    if (ig)
        EMIT("| mkrt BFS >= 3x igraph | %.2fx | %s |\n", ri,
             o.scale != 18 ? "not at scale 18" : ri >= 3.0 ? "yes" : "NO");
    else
        EMIT("| mkrt BFS >= 3x igraph | not run | igraph not installed |\n");
    EMIT("| H100: >= 2 GTEPS at scale 22, frontier on the device | no figure | not measured "
         "(below) |\n");
    char note[1024];
    gpu_note(note, sizeof note);
    EMIT("\n%s%s%s\n", note, skipped[0] ? " Skipped:" : "", skipped);
    printf("\n%s", report);

    char setup[2048];
    snprintf(setup, sizeof setup,
             "Graph500 Kronecker graph (A=%.2f B=%.2f C=%.2f, vertex ids permuted, seed 1), scale "
             "%u, edge factor %u; %u random roots of degree > 0, each searched once per engine "
             "(BFS, then SSSP over weights 1..255); TEPS = input edge tuples in the root's "
             "component / seconds, harmonic mean over the roots (Graph500's statistic). Every "
             "result was checked by the Graph500 rules and against the sequential reference. "
             "mkrt and GraphBLAS ran %u threads (GxB_NTHREADS); igraph and the reference are "
             "sequential. mkrt BFS: one seed item and mkrt_quiesce; a commuting user op "
             "lowering a packed (depth, parent) cell, registered with pulls, so the runtime "
             "runs the large levels bottom-up (direction-optimizing, Beamer's alpha 14 and "
             "beta 24); SSSP: RELAX, its levels in distance buckets (mean weight / mean "
             "degree wide). GraphBLAS BFS: q<!struct(p)> = q any.secondi A per level; SSSP: "
             "min-plus Bellman-Ford from the changed vertices until no change.",
             G500_A, G500_B, G500_C, o.scale, o.edgefactor, o.roots, o.threads);
    if (bench_write_report(&o.b, "make bench RECORD=1",
                           "Graph500 BFS and SSSP: mkrt vs GraphBLAS and igraph", machine, setup,
                           report) != 0)
        return 1;
    return 0;
}
