/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/graph_bench.c - four graph kernels side by side in one run: BFS
 * and SSSP (Graph500 rules), connected components and PageRank, on mkrt's
 * CPU pool (examples/graph500/traverse_mkrt.c), the GAP Benchmark Suite
 * (--gapbs DIR: its binaries, bench/graph/gapbs_peer.c), SuiteSparse:
 * GraphBLAS and igraph (BFS and SSSP, each where installed) and the
 * sequential reference, on the same graph, the same roots and threads.
 *
 * The reference runs first and its results are kept; every engine's every
 * result is then checked: BFS and SSSP by the Graph500 rules and against
 * the reference (equal levels, equal distances), CC against union-find's
 * partition, PageRank within 1.13e-3 L1 (2 d / (1 - d) x the tolerance
 * 1e-4) of the converged fixed point (Jacobi to within 1e-9 L1; the report
 * prints each engine's distance to it and GAPBS's rule's, emulated);
 * GAPBS by its own verification (-v) on every trial and its printed
 * analysis against the reference (tree size, reach, components, top
 * scores). A failed check prints why and makes the run exit 1 without
 * writing a report. Each root is searched once per engine (Graph500's
 * protocol); CC and PageRank run --trials times.
 *
 *   graph_bench [--quick] [--out FILE.md] [--csv FILE.csv] [--gapbs DIR]
 *               [--graph kron|urand|kron,urand] [--scale N] [--edgefactor N]
 *               [--roots N] [--trials N] [--threads N[,N...]] [--kernel LIST]
 *
 * --kernel: a comma-separated list of bfs, sssp, cc, pr (default all).
 * Defaults: graph kron, scale 18 (12 with --quick), edge factor 16, 16
 * roots and 4 trials (4 and 2 with --quick), threads = the CPUs online,
 * for mkrt, GAPBS (OMP_NUM_THREADS) and GraphBLAS alike (igraph and the
 * reference are sequential). --threads 1,2,4: mkrt and GAPBS at each count on
 * one graph (the graph, the reference and GAPBS's files made once; the
 * other engines, --concurrent and --device at the first count). Bad arguments, an unknown graph family or a
 * GAPBS folder without its binaries: a message and exit 2.
 *
 * CSV (--csv): engine,kernel,graph,scale,threads,seconds,mteps and the
 * CPU and level columns (bench/graph/report.c), one row per
 * engine, kernel and graph family; seconds is the mean per search (bfs,
 * sssp) or per run (cc, pr); mteps is the harmonic mean of the per-root
 * TEPS (bfs, sssp: input edge tuples in the root's component / seconds)
 * or the input edge tuples / seconds per run (cc, pr). */
#include <inttypes.h>

#include "bench_util.h"
#include "graph/peers.h"
#include "mkrt/runtime.h"
#include "graph/bench_graph.h"

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s " BENCH_USAGE " [--gapbs DIR] [--graph kron|urand|kron,urand] [--scale N] "
            "[--edgefactor N] [--roots N] [--trials N] [--threads N[,N...]] [--kernel bfs,sssp,cc,pr] [--concurrent N] [--device]\n",
            argv0);
    exit(2);
}

static bool arg_u32(int argc, char **argv, int *i, const char *name, uint32_t lo, uint32_t hi,
                    uint32_t *out)
{
    if (strcmp(argv[*i], name) != 0)
        return false;
    char *end;
    const char *s = *i + 1 < argc ? argv[*i + 1] : "";
    unsigned long v = strtoul(s, &end, 10);
    if (*s == '\0' || *end != '\0' || s[0] == '-' || v < lo || v > hi) {
        fprintf(stderr, "graph_bench: %s '%s': not a number in %u..%u\n", name, s, lo, hi);
        usage(argv[0]);
    }
    *out = (uint32_t)v;
    ++*i;
    return true;
}

static void parse_graphs(const char *list, gopts *o, const char *argv0)
{
    char buf[64], why[256];
    snprintf(buf, sizeof buf, "%s", list);
    o->families = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        g500_family f;
        if (g500_family_parse(t, &f, why, sizeof why) != 0) {
            fprintf(stderr, "graph_bench: --graph: %s\n", why);
            usage(argv0);
        }
        o->families |= 1u << f;
    }
    if (o->families == 0) {
        fprintf(stderr, "graph_bench: --graph '%s' names no family. Fix: kron, urand or both\n",
                list);
        usage(argv0);
    }
}

static void parse_kernels(const char *list, gopts *o, const char *argv0)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", list);
    o->kernels = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < KERNELS && strcmp(t, kernel_name[k]) != 0)
            k++;
        if (k == KERNELS) {
            fprintf(stderr, "graph_bench: --kernel: unknown kernel '%s'. Fix: bfs, sssp, cc, pr "
                            "or a comma-separated list of them\n", t);
            usage(argv0);
        }
        o->kernels |= 1u << k;
    }
    if (o->kernels == 0) {
        fprintf(stderr, "graph_bench: --kernel '%s' names no kernel. Fix: bfs, sssp, cc, pr\n",
                list);
        usage(argv0);
    }
}

/* --threads N or a list N,M,... (at most 8, each 1..4096). */
static void parse_threads(const char *list, gopts *o, const char *argv0)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", list);
    o->nthreads = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        unsigned long v = strtoul(t, &end, 10);
        if (*t == '\0' || *end != '\0' || t[0] == '-' || v < 1 || v > 4096 || o->nthreads == 8) {
            fprintf(stderr, "graph_bench: --threads '%s': '%s' is not a count in 1..4096 (at most 8 of them). "
                            "Fix: --threads 2 or --threads 1,2,4\n", list, t);
            usage(argv0);
        }
        o->thread_list[o->nthreads++] = (unsigned)v;
    }
    if (o->nthreads == 0) {
        fprintf(stderr, "graph_bench: --threads '%s' names no count. Fix: --threads 2 or --threads 1,2,4\n", list);
        usage(argv0);
    }
}

static void parse(int argc, char **argv, gopts *o)
{
    bench_opts_init(&o->b, argc, argv);
    uint32_t scale = 0, roots = 0, trials = 0;
    o->nthreads = 0;
    o->edgefactor = 16;
    o->families = 1u << G500_KRON;
    o->kernels = (1u << KERNELS) - 1;
    o->gapbs = NULL;
    o->concurrent = 0;
    o->device = false;
    for (int i = 1; i < argc; i++) {
        if (bench_common_arg(argc, argv, &i, &o->b) ||
            arg_u32(argc, argv, &i, "--scale", 1, G500_MAX_SCALE, &scale) ||
            arg_u32(argc, argv, &i, "--edgefactor", 1, 1u << 16, &o->edgefactor) ||
            arg_u32(argc, argv, &i, "--roots", 1, 1024, &roots) ||
            arg_u32(argc, argv, &i, "--trials", 1, 1024, &trials) ||
            arg_u32(argc, argv, &i, "--concurrent", 1, 64, &o->concurrent))
            continue;
        if (strcmp(argv[i], "--device") == 0) {
            o->device = true;
            continue;
        }
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            parse_threads(argv[++i], o, argv[0]);
            continue;
        }
        if (strcmp(argv[i], "--gapbs") == 0 && i + 1 < argc) {
            o->gapbs = argv[++i];
            continue;
        }
        if (strcmp(argv[i], "--kernel") == 0 && i + 1 < argc) {
            parse_kernels(argv[++i], o, argv[0]);
            continue;
        }
        if (strcmp(argv[i], "--graph") == 0 && i + 1 < argc) {
            parse_graphs(argv[++i], o, argv[0]);
            continue;
        }
        fprintf(stderr, "graph_bench: unknown or incomplete argument '%s'\n", argv[i]);
        usage(argv[0]);
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    o->scale = scale ? scale : o->b.quick ? 12 : 18;
    o->roots = roots ? roots : o->b.quick ? 4 : 16;
    o->trials = trials ? trials : o->b.quick ? 2 : 4;
    if (o->nthreads == 0)
        o->thread_list[o->nthreads++] = cpus > 0 ? (unsigned)cpus : 1;
    o->threads = o->thread_list[0];
    char why[1024];
    if (o->gapbs != NULL && gapbs_check_dir(o->gapbs, why, sizeof why) != 0) {
        fprintf(stderr, "graph_bench: %s\n", why);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    gopts o;
    parse(argc, argv, &o);
    bench_loadavg(o.load_start, sizeof o.load_start);
    char machine[512];
    bench_machine(machine, sizeof machine);
    char tl[64] = "";
    for (unsigned t = 0; t < o.nthreads; t++)
        snprintf(tl + strlen(tl), sizeof tl - strlen(tl), "%s%u", t ? "," : "", o.thread_list[t]);
    printf("graph_bench: scale %u, edge factor %u, %u roots, %u trials of CC and PageRank, %s "
           "threads for mkrt and GAPBS (GraphBLAS: %u); %s\n",
           o.scale, o.edgefactor, o.roots, o.trials, tl, o.threads, machine);
    if (o.gapbs == NULL)
        printf("skipped: GAPBS (no --gapbs DIR; build it as the README says)\n");
    results res;
    memset(&res, 0, sizeof res);
    int failed = 0;
    for (int f = 0; f < 2 && !failed; f++)
        if (o.families & (1u << f))
            failed = bench_family(&o, (g500_family)f, &res) != 0;
    if (failed) {
        fprintf(stderr, "graph_bench: FAILED: an engine gave a wrong result or did not run "
                        "(above); nothing recorded\n");
        return 1;
    }
    return write_results(&o, &res, machine) != 0;
}
