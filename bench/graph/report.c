/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/graph/report.c - bench/graph_bench.c's tables (stdout and --out)
 * and its CSV (--csv: engine,kernel,graph,scale,threads,seconds,mteps,
 * cpu_seconds,cpu_per_wall,levels,level_us,idle_per_level_us,
 * transition_share,planner_share; an empty field: not measured for that
 * engine). */
#include <inttypes.h>

#include "bench_graph.h"

/* threads 0: any. */
static const row *find(const results *res, const char *engine, int k, g500_family f, unsigned threads)
{
    for (int i = 0; i < res->n; i++)
        if (res->rows[i].kernel == k && res->rows[i].family == f &&
            (threads == 0 || res->rows[i].threads == threads) && strcmp(res->rows[i].engine, engine) == 0)
            return &res->rows[i];
    return NULL;
}

#define EMIT(...) (len += (size_t)snprintf(report + len, cap > len ? cap - len : 0, __VA_ARGS__))

/* Wall time per level beyond the level's work spread over the threads:
 * (wall - CPU / threads) / levels, seconds (an estimate: spinning counts
 * as work). */
static double idle_per_level(const row *r)
{
    if (r->cpu_seconds < 0 || r->levels <= 0)
        return 0;
    const double idle = r->seconds - r->cpu_seconds / r->threads;
    return (idle > 0 ? idle : 0) / r->levels;
}

static int write_csv(const gopts *o, const results *res)
{
    if (o->b.csv == NULL)
        return 0;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", o->b.csv);
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        perror(tmp);
        return -1;
    }
    fputs("engine,kernel,graph,scale,threads,seconds,mteps,cpu_seconds,cpu_per_wall,levels,level_us,"
          "idle_per_level_us,transition_share,planner_share\n",
          f);
    for (int i = 0; i < res->n; i++) {
        const row *r = &res->rows[i];
        fprintf(f, "%s,%s,%s,%u,%u,%.6g,%.6g,", r->engine, kernel_name[r->kernel], g500_family_name(r->family),
                o->scale, r->threads, r->seconds, r->mteps);
        if (r->cpu_seconds >= 0)
            fprintf(f, "%.6g,%.4g", r->cpu_seconds, r->cpu_seconds / (r->seconds * r->threads));
        else
            fputs(",", f);
        const bool mkrt = r->has_counters && strncmp(r->engine, "mkrt", 4) == 0;
        char planner[32] = "";
        if (r->planner_share >= 0)
            snprintf(planner, sizeof planner, "%.4g", r->planner_share);
        if (mkrt && r->level_us > 0)
            fprintf(f, ",%.4g,%.4g,%.4g,%.4g,%s\n", r->levels, r->level_us, idle_per_level(r) * 1e6,
                    r->levels * r->level_us / 1e6 / r->seconds, planner);
        else if (r->has_counters)
            fprintf(f, ",%.4g,,%.4g,,%s\n", r->levels, idle_per_level(r) * 1e6, planner);
        else
            fputs(",,,,,\n", f);
    }
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad || rename(tmp, o->b.csv) != 0) {
        perror(o->b.csv);
        return -1;
    }
    return 0;
}

int write_results(const gopts *o, const results *res, const char *machine)
{
    static char report[32768];
    const size_t cap = sizeof report;
    size_t len = 0;
    EMIT("| graph | kernel | engine | threads | ms per search or run | MTEPS | engine time / "
         "mkrt time |\n|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < res->n; i++) {
        const row *r = &res->rows[i];
        const row *m = find(res, "mkrt-cpu", r->kernel, r->family, r->engine[0] == 'r' ? 0 : r->threads);
        EMIT("| %s | %s | %s | %u | %.3f | %.1f | %.2fx |\n", g500_family_name(r->family),
             kernel_name[r->kernel], r->engine, r->threads, r->seconds * 1e3, r->mteps,
             m != NULL ? r->seconds / m->seconds : 0);
    }
    if (res->nconc > 0)
        EMIT("\nSeveral searches in one runtime (--concurrent): each a traversal of its own "
             "(mkrt_traversal_open), run one after another from one thread, then all at once "
             "from as many threads; every result checked; mean of 3 repetitions.\n\n"
             "| graph | kernel | searches | one after another, ms | at once, ms | speedup | "
             "levels pushed | levels pulled | edges examined |\n|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < res->nconc; i++) {
        const conc_row *c = &res->conc[i];
        EMIT("| %s | %s | %u | %.3f | %.3f | %.2fx | %llu | %llu | %llu |\n", g500_family_name(c->family),
             kernel_name[c->kernel], c->searches, c->seq_seconds * 1e3, c->conc_seconds * 1e3,
             c->seq_seconds / c->conc_seconds, (unsigned long long)c->levels_pushed,
             (unsigned long long)c->levels_pulled, (unsigned long long)c->edges);
    }
    EMIT("\n| target (2 CPUs, scale 18, both families) | graph | GAPBS time / mkrt time | met "
         "|\n|---|---|---|---|\n");
    for (unsigned t = 0; t < o->nthreads; t++)
    for (int f = 0; f < 2; f++)
        for (int k = 0; k < KERNELS && (o->families & (1u << f)); k++) {
            const row *m = find(res, "mkrt-cpu", k, (g500_family)f, o->thread_list[t]);
            const row *gp = find(res, "gapbs", k, (g500_family)f, o->thread_list[t]);
            if (m == NULL)
                continue;
            if (gp == NULL)
                EMIT("| mkrt %s >= 1.0x GAPBS, %u threads | %s | not run | no --gapbs |\n", kernel_name[k],
                     o->thread_list[t], g500_family_name((g500_family)f));
            else
                EMIT("| mkrt %s >= 1.0x GAPBS, %u threads | %s | %.2fx | %s |\n", kernel_name[k], o->thread_list[t],
                     g500_family_name((g500_family)f), gp->seconds / m->seconds,
                     o->scale != 18 ? "not at scale 18"
                     : gp->seconds / m->seconds >= 1.0 ? "yes" : "NO");
        }
    EMIT("\nTime and CPU per search or run: wall; CPU of all the engine's threads (getrusage RUSAGE_SELF "
         "around the call: workers, dispatcher and the waiting caller, spinning included; GAPBS: its "
         "children's CPU time, a run of 3 trials less a run of 1, halved: no load, no verification); CPU / "
         "(wall x threads) (1.0: every thread busy the whole time); levels per search (CC: phases; "
         "PageRank: iterations); a level transition of mkrt's engine measured directly (BFS along a path of "
         "4096 vertices, one vertex per level: wall / levels, median of 5, at each thread count (below); a "
         "level that small runs on one thread, no worker wakes) and the share of the wall time that many "
         "transitions take (levels x transition / wall); and the wall time per level beyond its work spread "
         "over the threads, (wall - CPU / threads) / levels (an estimate of what a level costs in wake-ups, "
         "hand-offs and imbalance; spinning counts as work, so it is a lower bound); the planner's "
         "share: of the CPU pool's units of work (items of batches, parts of a level run inside the "
         "workers; mkrt_stats.units_run), those the thread that planned them ran itself "
         "(units_by_planner; whichever thread held the planning role then). Level "
         "transition, us, at");
    for (unsigned t = 0; t < o->nthreads; t++)
        EMIT(" %u threads: %.1f%s", o->thread_list[t], res->level_us[t], t + 1 < o->nthreads ? ";" : ".\n\n");
    EMIT("| graph | kernel | engine | threads | wall ms | CPU ms | CPU / (wall x threads) | levels | "
         "transitions' share of wall | idle us per level | planner's share |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < res->n; i++) {
        const row *r = &res->rows[i];
        const bool mkrt = r->has_counters && strncmp(r->engine, "mkrt", 4) == 0;
        char cpu[64] = "-", util[32] = "-", lv[32] = "-", share[32] = "-", idle[32] = "-", planner[32] = "-";
        if (r->cpu_seconds >= 0) {
            snprintf(cpu, sizeof cpu, "%.3f", r->cpu_seconds * 1e3);
            snprintf(util, sizeof util, "%.2f", r->cpu_seconds / (r->seconds * r->threads));
        }
        if (r->has_counters) {
            snprintf(lv, sizeof lv, "%.1f", r->levels);
            snprintf(idle, sizeof idle, "%.1f", idle_per_level(r) * 1e6);
        }
        if (mkrt && r->level_us > 0)
            snprintf(share, sizeof share, "%.1f%%", 100 * r->levels * r->level_us / 1e6 / r->seconds);
        if (r->planner_share >= 0)
            snprintf(planner, sizeof planner, "%.0f%%", 100 * r->planner_share);
        EMIT("| %s | %s | %s | %u | %.3f | %s | %s | %s | %s | %s | %s |\n", g500_family_name(r->family),
             kernel_name[r->kernel], r->engine, r->threads, r->seconds * 1e3, cpu, util, lv, share, idle,
             planner);
    }
    EMIT("\nmkrt's work counters (from mkrt_stats around each call; GAPBS, GraphBLAS and igraph "
         "expose none):\n\n| graph | kernel | edges examined / edges in the component | batches "
         "per search or run | levels pushed / pulled per search | bytes touched per edge (estimate) "
         "|\n|---|---|---|---|---|---|\n");
    for (int i = 0; i < res->n; i++) {
        const row *r = &res->rows[i];
        if (r->has_counters)
            EMIT("| %s | %s | %.2f | %.1f | %.1f / %.1f | %.0f |\n", g500_family_name(r->family),
                 kernel_name[r->kernel], r->examined_per_edge, r->rounds, r->levels_pushed, r->levels_pulled,
                 r->bytes_per_edge);
    }
    EMIT("\nEdges in the component: the directed (CSR) edges of the root's component for BFS "
         "and SSSP, all of them for CC and PageRank (PageRank examines each once per iteration, "
         "so its ratio is its iteration count). Levels pushed vs pulled: per search, from "
         "mkrt_traversal_stats (BFS pulls its large levels bottom-up; SSSP never pulls); a pulled "
         "level's examined edges are those its unvisited vertices looked at. Bytes per edge: 24 per "
         "examined edge for BFS and SSSP (target and weight 8, the target's value read and written "
         "by an atomic minimum 16); CC 28 per examined edge (target, "
         "two labels and their roots, a compare-and-swap) plus 32 per vertex (2 phases and the read); "
         "PageRank 8 per edge plus 28 per vertex per iteration. Estimates from the data structures, not measured traffic.\n");
    bool accuracy = false;
    for (int i = 0; i < res->n; i++) {
        const row *r = &res->rows[i];
        if (r->pr_l1 < 0)
            continue;
        if (!accuracy)
            EMIT("\nPageRank's accuracy: each engine's L1 distance to the converged fixed point (within %.0e "
                 "of it), the worst of its runs; checked against %.3g. The reference is the Jacobi iterate "
                 "from 1/n stopped at GAPBS's rule (L1 change below %g); GAPBS's own scores are not "
                 "readable (its -a top scores are checked against the fixed point).\n\n| graph | engine | "
                 "threads | iterations | L1 to the fixed point |\n|---|---|---|---|---|\n",
                 TRAVERSE_PR_FIXED_L1, TRAVERSE_PR_CHECK_L1(TRAVERSE_PR_TOLERANCE), TRAVERSE_PR_TOLERANCE);
        accuracy = true;
        char lv[32] = "-";
        if (r->has_counters)
            snprintf(lv, sizeof lv, "%.1f", r->levels);
        EMIT("| %s | %s | %u | %s | %.3g |\n", g500_family_name(r->family), r->engine, r->threads, lv, r->pr_l1);
    }
    for (int f = 0; f < 2 && accuracy; f++)
        if (o->families & (1u << f) && res->pr_in_place_l1[f] >= 0)
            EMIT("| %s | GAPBS's rule (in place from 1/n, float; g500_pagerank_in_place) | 1 | %u | %.3g |\n",
                 g500_family_name((g500_family)f), res->pr_in_place_iters[f], res->pr_in_place_l1[f]);
    printf("\n%s", report);
    if (write_csv(o, res) != 0)
        return -1;
    char setup[3072], load_end[64];
    bench_loadavg(load_end, sizeof load_end);
    snprintf(setup, sizeof setup,
             "graphs: %s%s%s, scale %u, edge factor %u (Graph500 Kronecker A=%.2f B=%.2f C=%.2f, "
             "vertex ids permuted, or uniform random; seed 1; the simple undirected graph, "
             "weights 1..255); %u random roots of degree > 0, each searched twice in a row per engine, the first untimed (a warm-up, as GAPBS's first trial; BFS, "
             "then SSSP); CC and PageRank (damping %.2f, tolerance %g L1, at most %u iterations, "
             "as GAPBS) %u times each, each after an untimed run. Every result was checked: BFS and SSSP by the Graph500 "
             "rules and against the sequential reference, CC against union-find's partition, "
             "PageRank within %.3g L1 of the fixed point (2 d / (1 - d) times the tolerance; the fixed point "
             "converged: Jacobi iterations until within %.0e L1 of it), not of another engine's iterate (each "
             "engine's distance to it is in the table of PageRank's accuracy); GAPBS by its own -v on "
             "every trial (at the first thread count of --threads) and its -a output against the reference (same graph size, BFS tree "
             "size, SSSP reach, component count, top-5 scores). mkrt, GAPBS (OMP_NUM_THREADS) "
             "and GraphBLAS ran %u threads; igraph and the reference are sequential. GAPBS: "
             "bfs (direction-optimizing), sssp -d 2 (delta-stepping, the delta of its own "
             "benchmark for kron and urand), cc (Afforest), pr (pull), one process per root "
             "(-r root -n 2) or per CC and PageRank trial (-n 2), each run right after mkrt's "
             "run of the same root or trial (so the machine's load falls on both alike); its "
             "own per-trial times, the first trial of each process dropped as a warm-up (thread start, page "
             "faults), OpenMP waiting passively (OMP_WAIT_POLICY=passive: spinning waiters lose "
             "whole time slices on a shared 2-CPU machine). "
"mkrt: BFS and SSSP public traversals (mkrt_traversal_open: values of their own; BFS "
             "direction-optimizing, SSSP distance buckets); CC "
             "and PageRank the library's kinds (MKRT_TRAVERSAL_CC: Afforest, 2 phases over blocks of vertices; "
             "MKRT_TRAVERSAL_PAGERANK: Gauss-Seidel pull iterations in place over blocks of vertices, from a "
             "start by degree, GAPBS's stopping rule)%s. The machine has %ld CPUs (load average "
             "%s at the start, %s at the end): figures move tens of percent between runs on a "
             "shared machine; compare engines within this run only.",
             o->families & 1 ? "kron" : "", o->families == 3 ? " and " : "",
             o->families & 2 ? "urand" : "", o->scale, o->edgefactor, G500_A, G500_B, G500_C,
             o->roots, TRAVERSE_PR_DAMPING, TRAVERSE_PR_TOLERANCE, TRAVERSE_PR_MAX_ITERS,
             o->trials, TRAVERSE_PR_CHECK_L1(TRAVERSE_PR_TOLERANCE), TRAVERSE_PR_FIXED_L1, o->threads,
             o->device ? "; mkrt-cuda (--device): the same on MKRT_BACKEND_CUDA with the cells in device memory, "
                         "the four kernels as public traversals run whole on the megakernel (traversal jobs)"
                       : "",
             sysconf(_SC_NPROCESSORS_ONLN), o->load_start, load_end);
    if (bench_write_report(&o->b, "make bench RECORD=1 GAPBS=DIR",
                           "Graph kernels: mkrt vs GAPBS, GraphBLAS and igraph", machine, setup,
                           report) != 0)
        return -1;
    return 0;
}
