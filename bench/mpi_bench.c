/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/mpi_bench.c - libmkrt_mpi on one machine: run it under mpirun at
 * 1, 2 and 4 ranks (bench/results/mpi.md has the commands and figures).
 *
 * 1. The per-item cost of forwarding: every rank publishes --items ACC
 *    items through mkrt_mpi_publish, once all to handles it owns (local)
 *    and once all to the next rank's handles (forwarded), each timed from a
 *    global quiescence to the next on rank 0; the difference per item is
 *    what forwarding adds (outbox, MPI, the owner's producer).
 * 2. BFS and SSSP of the Kronecker graph through libmkrt_mpi's distributed
 *    engine (mkrt_mpi/graph.h)
 *    (what `graph_bfs` runs under mpirun, without its validation):
 *    harmonic-mean TEPS, the share of edge items forwarded, items per
 *    message.
 * 3. Bytes per BFS level (the first root's BFS): frontier, edges scanned,
 *    arrivals and bytes sent, summed over the ranks (docs/mpi-scaling.md
 *    checks its model against these).
 * 4. At one rank: mkrt without MPI, the one-process engine of
 *    examples/graph500/traverse_mkrt.c (1 worker, the runtime's public
 *    traversals, timed as graph_bfs times it), on the same graph and
 *    roots, each root's BFS and SSSP right after the engine's (the
 *    engine has stopped its MPI layer by then: mkrt_mpi_graph_open at one rank):
 *    the "1 rank against no MPI" ratio in one run (rows of kernel
 *    `nompi-bfs` and `nompi-sssp`).
 * Rank 0 prints one Markdown table per part.
 *
 *   mpirun -np N build/bench/mpi_bench [--scale S] [--roots R] [--items N]
 *                                      [--csv FILE] [--graph500 DIR]
 *
 * --csv FILE appends `ranks,kernel,scale,mteps` rows (header written when
 * the file is new or empty): kernel `bfs` and `sssp` for mkrt, harmonic-
 * mean MTEPS over the roots as Graph500 counts them (edges of the root's
 * component over the search's time), so runs at 1, 2 and 4 ranks collect
 * in one file.
 *
 * --graph500 DIR runs the Graph500 reference (DIR/graph500_reference_bfs_sssp,
 * else DIR/graph500_reference_bfs; DIR may also be the checkout, with the
 * binaries in DIR/src) after mkrt's run, on the same ranks, scale and edge
 * factor (16): after MPI_Finalize, rank 0 starts `mpirun -np N BINARY SCALE
 * 16` as a child (with its own environment stripped of the launcher's
 * OMPI_/PMIX_/PMI_ variables, so the child job is a new one; the other
 * ranks have exited, so the reference has the machine to itself), with
 * SKIP_VALIDATION=1 (validation is not in the timed part), parses its
 * "harmonic_mean_TEPS" lines and writes them as rows of kernel
 * `graph500-bfs` and `graph500-sssp` (same four columns). $MPIRUN, when
 * set, replaces "mpirun --oversubscribe [--allow-run-as-root]".
 *
 * Bad arguments (an unknown flag, a number out of range, a DIR without
 * the binaries, a CSV file that cannot be opened) print what is wrong and
 * exit 2 on every rank, before any MPI call.
 */
#include <errno.h>
#include <inttypes.h>
#include <spawn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../examples/graph500/graph500.h"
#include "../examples/mpi/graph_bfs_mpi.h"
#include "mkrt/mkrt.h"
#include "mkrt_mpi/mkrt_mpi.h"

/* This process's CPU seconds (all its threads). */
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double timed_once(mkrt_mpi *m, mkrt_producer *p, mkrt_item *items, uint32_t n, double *cpu)
{
    mkrt_mpi_quiesce(m, MKRT_TIMEOUT_INFINITE);
    double t0 = g500_seconds(), c0 = cpu_seconds();
    for (uint32_t at = 0; at < n; at += 1024) {
        uint32_t len = n - at < 1024 ? n - at : 1024;
        if (mkrt_mpi_publish(m, p, items + at, len, MKRT_TIMEOUT_INFINITE, NULL, NULL) != MKRT_OK) {
            fprintf(stderr, "mpi_bench: publish failed\n");
            exit(1);
        }
    }
    mkrt_mpi_quiesce(m, MKRT_TIMEOUT_INFINITE);
    *cpu = cpu_seconds() - c0;
    return g500_seconds() - t0;
}

/* The best of three runs (the first also warms the threads up). */
static double timed_publish(mkrt_mpi *m, mkrt_producer *p, mkrt_item *items, uint32_t n,
                            double *cpu)
{
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        double c = 0, t = timed_once(m, p, items, n, &c);
        if (t < best) {
            best = t;
            *cpu = c;
        }
    }
    return best;
}

/* Part 1: local against forwarded items. */
static void forwarding_cost(uint32_t n)
{
    if (n == 0)
        return; /* --items 0 skips it */
    const uint32_t per = 4096;
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CPU;
    c.workers = 1;
    c.cells = per * 64; /* enough for 64 ranks' blocks */
    mkrt_runtime *rt = NULL;
    if (mkrt_create(&c, &rt, NULL) != MKRT_OK)
        exit(1);
    mkrt_mpi_config mc = mkrt_mpi_config_default();
    mkrt_mpi *m = NULL;
    mkrt_error err = {0};
    mc.handles = c.cells; /* block partition: rank r owns cells/ranks from r*cells/ranks */
    if (mkrt_mpi_create(&mc, rt, &m, &err) != MKRT_OK) {
        fprintf(stderr, "mpi_bench: %s\n", err.message);
        exit(1);
    }
    const int rank = mkrt_mpi_rank(m), ranks = mkrt_mpi_size(m);
    const uint32_t block = c.cells / (uint32_t)ranks;
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item *items = malloc((size_t)n * sizeof *items);
    for (uint32_t i = 0; i < n; i++)
        items[i] = (mkrt_item){MKRT_OP_ACC, 0, (uint32_t)rank * block + i % per, 1};
    double cl = 0, cr = 0, tl = timed_publish(m, p, items, n, &cl);
    int next = (rank + 1) % ranks;
    for (uint32_t i = 0; i < n; i++)
        items[i].out = (uint32_t)next * block + i % per;
    mkrt_mpi_stats s0, s1;
    mkrt_mpi_stats_read(m, &s0);
    double tr = timed_publish(m, p, items, n, &cr);
    mkrt_mpi_stats_read(m, &s1);
    /* CPU nanoseconds over all ranks (summed as integers). */
    uint64_t msgs[3] = {s1.messages_sent - s0.messages_sent, (uint64_t)(cl * 1e9),
                        (uint64_t)(cr * 1e9)};
    mkrt_mpi_allreduce_sum(m, msgs, 3);
    if (rank == 0) {
        printf("| ranks | items per rank | local: ns/item (wall, per rank) | forwarded: ns/item "
               "(wall, per rank) | forwarding adds ns/item (wall) | local: CPU ns/item | forwarded: "
               "CPU ns/item | forwarding adds CPU ns/item | messages |\n"
               "|---|---|---|---|---|---|---|---|---|\n");
        char adds[32] = "(no other rank)", cadds[32] = "(no other rank)";
        const double all = (double)n * ranks; /* items executed, all ranks */
        if (ranks > 1) {
            snprintf(adds, sizeof adds, "%.0f", (tr - tl) * 1e9 / n);
            snprintf(cadds, sizeof cadds, "%.0f", ((double)msgs[2] - (double)msgs[1]) / all);
        }
        printf("| %d | %u | %.0f | %.0f | %s | %.0f | %.0f | %s | %" PRIu64 " |\n\n", ranks, n,
               tl * 1e9 / n, tr * 1e9 / n, adds, (double)msgs[1] / all, (double)msgs[2] / all,
               cadds, msgs[0]);
        fflush(stdout);
    }
    free(items);
    mkrt_producer_close(p);
    mkrt_mpi_destroy(m, NULL);
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
}


extern char **environ;

typedef struct bench_args {
    uint32_t scale, roots, items;
    const char *csv, *g500_dir;
    char g500_bin[4096];
} bench_args;

static int usage(const char *what)
{
    fprintf(stderr, "mpi_bench: %s\nusage: mpirun -np N mpi_bench [--scale 1..26] [--roots 1..64] "
                    "[--items 0..100000000] [--csv FILE] [--graph500 DIR]\n", what);
    return 2;
}

/* A decimal number in lo..hi, or -1 with a message. */
static int num_arg(const char *name, const char *v, uint64_t lo, uint64_t hi, uint32_t *out)
{
    char *end = NULL, msg[256];
    errno = 0;
    unsigned long long x = v != NULL ? strtoull(v, &end, 10) : 0;
    if (v == NULL || *v == '\0' || *v == '-' || *end != '\0' || errno != 0 || x < lo || x > hi) {
        snprintf(msg, sizeof msg, "%s takes a number in %llu..%llu, not \"%s\". Fix: e.g. %s %llu",
                 name, (unsigned long long)lo, (unsigned long long)hi, v != NULL ? v : "(nothing)",
                 name, (unsigned long long)lo);
        return usage(msg);
    }
    *out = (uint32_t)x;
    return 0;
}

/* The reference binary in dir (or dir/src): bfs_sssp first, else bfs. */
static int find_g500(bench_args *a)
{
    static const char *const subs[] = {"", "/src"};
    static const char *const bins[] = {"graph500_reference_bfs_sssp", "graph500_reference_bfs"};
    for (int s = 0; s < 2; s++)
        for (int b = 0; b < 2; b++) {
            snprintf(a->g500_bin, sizeof a->g500_bin, "%s%s/%s", a->g500_dir, subs[s], bins[b]);
            if (access(a->g500_bin, X_OK) == 0)
                return 0;
        }
    char msg[4400];
    snprintf(msg, sizeof msg, "--graph500 %s: no executable graph500_reference_bfs_sssp or "
             "graph500_reference_bfs in it or in its src/. Fix: build the reference there (see "
             "bench/results/mpi.md) or pass the folder that holds the binaries", a->g500_dir);
    return usage(msg);
}

static int parse(int argc, char **argv, bench_args *a)
{
    *a = (bench_args){.scale = 16, .roots = 8, .items = 1000000};
    for (int i = 1; i < argc; i += 2) { /* each flag takes one value */
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int rc = 0;
        if (strcmp(f, "--scale") == 0)
            rc = num_arg(f, v, 1, 26, &a->scale);
        else if (strcmp(f, "--roots") == 0)
            rc = num_arg(f, v, 1, 64, &a->roots);
        else if (strcmp(f, "--items") == 0)
            rc = num_arg(f, v, 0, 100000000, &a->items);
        else if (strcmp(f, "--csv") == 0 || strcmp(f, "--graph500") == 0) {
            if (v == NULL || *v == '\0') {
                char msg[128];
                snprintf(msg, sizeof msg, "%s needs a %s. Fix: %s %s", f,
                         f[2] == 'c' ? "file name" : "folder", f, f[2] == 'c' ? "mpi.csv" : "DIR");
                return usage(msg);
            }
            *(f[2] == 'c' ? &a->csv : &a->g500_dir) = v;
        } else {
            char msg[512];
            snprintf(msg, sizeof msg, "unknown argument \"%s\". Fix: use the flags below", f);
            return usage(msg);
        }
        if (rc != 0)
            return rc;
    }
    if (a->g500_dir != NULL && find_g500(a) != 0)
        return 2;
    if (a->csv != NULL) { /* every rank checks, so every rank exits alike */
        FILE *f = fopen(a->csv, "a");
        if (f == NULL) {
            char msg[4400];
            snprintf(msg, sizeof msg, "--csv %s: cannot open it for appending (%s). Fix: a "
                     "writable path", a->csv, strerror(errno));
            return usage(msg);
        }
        fclose(f);
    }
    return 0;
}

/* Appends one row (header first when the file is empty); rank 0 only. */
static void csv_row(const char *path, int ranks, const char *kernel, uint32_t scale, double mteps)
{
    if (path == NULL)
        return;
    FILE *f = fopen(path, "a");
    if (f == NULL) {
        fprintf(stderr, "mpi_bench: --csv %s: %s\n", path, strerror(errno));
        return;
    }
    if (ftell(f) == 0)
        fprintf(f, "ranks,kernel,scale,mteps\n");
    fprintf(f, "%d,%s,%u,%.2f\n", ranks, kernel, scale, mteps);
    fclose(f);
}

/* Rank 0, after MPI_Finalize: the reference on `ranks` ranks; prints its
 * summary lines and writes its rows. Returns 0, or 1 when it failed. */
static int run_g500(const bench_args *a, int ranks)
{
    /* The child's environment: ours without the launcher's variables. */
    size_t n = 0;
    while (environ[n] != NULL)
        n++;
    char **env = calloc(n + 2, sizeof *env);
    if (env == NULL)
        return 1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "OMPI_", 5) != 0 && strncmp(environ[i], "PMIX_", 5) != 0 &&
            strncmp(environ[i], "PMI_", 4) != 0 && strncmp(environ[i], "SKIP_VALIDATION=", 16) != 0)
            env[k++] = environ[i];
    env[k++] = "SKIP_VALIDATION=1";
    env[k] = NULL;
    char np[16], sc[16], cmd[8192];
    snprintf(np, sizeof np, "%d", ranks);
    snprintf(sc, sizeof sc, "%u", a->scale);
    const char *mpirun = getenv("MPIRUN");
    if (mpirun != NULL && *mpirun != '\0')
        snprintf(cmd, sizeof cmd, "%s -np %s '%s' %s 16", mpirun, np, a->g500_bin, sc);
    else
        snprintf(cmd, sizeof cmd, "mpirun --oversubscribe %s -np %s '%s' %s 16",
                 geteuid() == 0 ? "--allow-run-as-root" : "", np, a->g500_bin, sc);
    printf("graph500 reference: %s (SKIP_VALIDATION=1)\n", cmd);
    fflush(stdout);
    int fd[2];
    if (pipe(fd) != 0) {
        free(env);
        return 1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 2); /* its progress lines: kept for a failure */
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, "/bin/sh", &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    close(fd[1]);
    if (rc != 0) {
        close(fd[0]);
        fprintf(stderr, "mpi_bench: starting the reference failed: %s\n", strerror(rc));
        return 1;
    }
    FILE *out = fdopen(fd[0], "r");
    char line[512], last[512] = "";
    double teps[2] = {-1, -1};
    while (out != NULL && fgets(line, sizeof line, out) != NULL) {
        snprintf(last, sizeof last, "%s", line);
        const char *h = strstr(line, "harmonic_mean_TEPS:");
        if (h == NULL)
            continue;
        int sssp = strncmp(line, "sssp", 4) == 0;
        const char *p = h + strlen("harmonic_mean_TEPS:");
        while (*p == ' ' || *p == '!')
            p++;
        teps[sssp] = strtod(p, NULL);
        printf("graph500 reference: %s", line);
    }
    if (out != NULL)
        fclose(out);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || teps[0] < 0) {
        fprintf(stderr, "mpi_bench: the Graph500 reference failed (exit status %d) or printed "
                "no harmonic_mean_TEPS line; its last line: %s. Fix: run the command above by "
                "hand\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1, last);
        return 1;
    }
    char sssp[32] = "(no SSSP binary)";
    if (teps[1] >= 0)
        snprintf(sssp, sizeof sssp, "%.2f", teps[1] / 1e6);
    printf("| ranks | scale | roots | Graph500 reference BFS MTEPS (harmonic) | SSSP MTEPS "
           "(harmonic) |\n|---|---|---|---|---|\n| %d | %u | 64 | %.2f | %s |\n\n", ranks,
           a->scale, teps[0] / 1e6, sssp);
    csv_row(a->csv, ranks, "graph500-bfs", a->scale, teps[0] / 1e6);
    if (teps[1] >= 0)
        csv_row(a->csv, ranks, "graph500-sssp", a->scale, teps[1] / 1e6);
    fflush(stdout);
    return 0;
}

/* Part 4 (one rank): mkrt without MPI on the same graph and roots, each
 * root's searches right after the engine's (the load of the machine
 * changes by the second: interleaved, both sides see the same). */
typedef struct nompi {
    traverse_engine *t;
    uint32_t *parent;
    uint64_t *dist;
    double *bt, *st;
    double edges; /* the last BFS's component edges */
    int bad;
} nompi;

static void nompi_open(nompi *n, const g500_csr *g, uint32_t roots)
{
    char why[512];
    *n = (nompi){traverse_mkrt_ops.open(g, 1, why, sizeof why), malloc(g->vertices * sizeof *n->parent),
                 malloc(g->vertices * sizeof *n->dist), calloc(roots, sizeof *n->bt),
                 calloc(roots, sizeof *n->st), 0, 0};
    if (n->t == NULL)
        fprintf(stderr, "mpi_bench: one-process engine: %s\n", why);
    n->bad = n->t == NULL || n->parent == NULL || n->dist == NULL || n->bt == NULL || n->st == NULL;
}

/* Root i's BFS (first: its tree gives the edges) or SSSP, timed as
 * graph_bfs times the one-process engine. */
static void nompi_root(nompi *n, const g500_edge_list *el, uint32_t root, uint32_t i, int sssp)
{
    char why[512];
    if (n->bad)
        return;
    const double t0 = g500_seconds();
    n->bad |= sssp ? traverse_mkrt_ops.sssp(n->t, root, n->dist, why, sizeof why) != 0
                   : traverse_mkrt_ops.bfs(n->t, root, n->parent, why, sizeof why) != 0;
    const double t = g500_seconds() - t0;
    if (n->bad) {
        fprintf(stderr, "mpi_bench: one-process engine: %s\n", why);
        return;
    }
    if (!sssp)
        n->edges = (double)g500_component_edges(el, n->parent);
    (sssp ? n->st : n->bt)[i] = n->edges / (t > 0 ? t : 1e-9);
}

/* Prints the comparison and writes `nompi-bfs` / `nompi-sssp` rows. */
static void nompi_close(nompi *n, const bench_args *a, double bfs_mteps, double sssp_mteps)
{
    if (!n->bad) {
        g500_teps_stats b = g500_teps_summary(n->bt, a->roots), s = g500_teps_summary(n->st, a->roots);
        printf("| scale | roots | no MPI: BFS MTEPS (harmonic) | SSSP MTEPS | 1 rank / no MPI: BFS "
               "| SSSP |\n|---|---|---|---|---|---|\n| %u | %u | %.2f | %.2f | %.2fx | %.2fx |\n\n",
               a->scale, a->roots, b.harmonic_mean / 1e6, s.harmonic_mean / 1e6,
               bfs_mteps / (b.harmonic_mean / 1e6), sssp_mteps / (s.harmonic_mean / 1e6));
        fflush(stdout);
        csv_row(a->csv, 1, "nompi-bfs", a->scale, b.harmonic_mean / 1e6);
        csv_row(a->csv, 1, "nompi-sssp", a->scale, s.harmonic_mean / 1e6);
    }
    if (n->t != NULL)
        traverse_mkrt_ops.close(n->t);
    free(n->parent);
    free(n->dist);
    free(n->bt);
    free(n->st);
}

/* Part 3: the first root's BFS level by level. */
static void print_levels(const mkrt_mpi_graph *e, int ranks, uint32_t scale)
{
    mkrt_mpi_graph_level lv[MKRT_MPI_GRAPH_LEVELS];
    size_t n = mkrt_mpi_graph_levels(e, lv, MKRT_MPI_GRAPH_LEVELS);
    printf("| ranks | scale | level | direction | frontier | edges scanned | arrivals sent | "
           "bytes sent | messages | level ms |\n|---|---|---|---|---|---|---|---|---|---|\n");
    uint64_t tb = 0, ta = 0, te = 0;
    for (size_t i = 0; i < n; i++) {
        printf("| %d | %u | %zu | %s | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %" PRIu64
               " | %" PRIu64 " | %.2f |\n", ranks, scale, i, lv[i].bottom_up ? "bottom-up" : "top-down",
               lv[i].frontier, lv[i].scanned, lv[i].arrivals,
               lv[i].bytes, lv[i].messages, lv[i].seconds * 1e3);
        tb += lv[i].bytes;
        ta += lv[i].arrivals;
        te += lv[i].scanned;
    }
    printf("| %d | %u | all | | | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | | |\n\n", ranks, scale,
           te, ta, tb);
}

/* Part 3's model (docs/mpi-scaling.md): under the block partition of P
 * ranks, rank s sends reached vertex w (owned elsewhere) one arrival, at
 * the first top-down level where one of w's neighbours that s owns is in
 * the frontier (the sent-minimum table drops the later ones; bottom-up
 * levels send none). Counts those (w, s) pairs per level from a
 * sequential BFS of the same root; `td` has bit L set when level L ran
 * top-down (the direction depends on global counts only, so it is the
 * same at every P); level >= max adds to out[max-1]. Returns the total, 0
 * when out of memory. */
/* The rank that scans edge u -> w (at index i of u's row) in a top-down
 * level: u's owner, or for a hub (degree hub or more, hub > 0) the rank
 * whose 1/P slice of u's row holds it (the engine's delegates, mpi/graph/engine.c). */
static uint32_t edge_rank(const g500_csr *g, uint32_t u, uint32_t w, uint32_t P, uint32_t per,
                          uint32_t hub)
{
    const uint64_t o = g->offsets[u], len = g->offsets[u + 1] - o;
    if (P == 1 || hub == 0 || len < hub)
        return u / per;
    uint64_t lo = 0, hi = len; /* rows are sorted: w's position by binary search */
    while (lo < hi) {
        const uint64_t mid = (lo + hi) / 2;
        if (g->targets[o + mid] < w)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t s = lo * P / len;
    while (s + 1 < P && (s + 1) * len / P <= lo)
        s++;
    while (s > 0 && s * len / P > lo)
        s--;
    return (uint32_t)s;
}

static uint64_t model_arrivals(const g500_csr *g, uint32_t root, uint32_t P, uint64_t td,
                               uint32_t hub, uint64_t *out, size_t max)
{
    const uint32_t n = g->vertices, per = (uint32_t)(((uint64_t)n + P - 1) / P);
    uint32_t *level = malloc((size_t)n * sizeof *level), *queue = malloc((size_t)n * sizeof *queue);
    uint32_t *first = malloc((size_t)P * sizeof *first), *stamp = calloc(P, sizeof *stamp);
    uint64_t total = 0;
    if (level != NULL && queue != NULL && first != NULL && stamp != NULL) {
        for (uint32_t v = 0; v < n; v++)
            level[v] = UINT32_MAX;
        size_t head = 0, tail = 0;
        level[root] = 0;
        queue[tail++] = root;
        while (head < tail) {
            uint32_t v = queue[head++];
            for (uint64_t i = g->offsets[v]; i < g->offsets[v + 1]; i++)
                if (level[g->targets[i]] == UINT32_MAX) {
                    level[g->targets[i]] = level[v] + 1;
                    queue[tail++] = g->targets[i];
                }
        }
        for (size_t k = 0; k < max; k++)
            out[k] = 0;
        for (size_t q = 0; q < tail; q++) {
            const uint32_t w = queue[q], ow = w / per;
            for (uint64_t i = g->offsets[w]; i < g->offsets[w + 1]; i++) {
                const uint32_t u = g->targets[i];
                if (level[u] >= 64 || !(td >> level[u] & 1))
                    continue;
                const uint32_t s = edge_rank(g, u, w, P, per, hub);
                if (s == ow)
                    continue;
                if (stamp[s] != w + 1) { /* s's first neighbour of w */
                    stamp[s] = w + 1;
                    first[s] = level[u];
                } else if (level[u] < first[s]) {
                    first[s] = level[u];
                }
            }
            for (uint64_t i = g->offsets[w]; i < g->offsets[w + 1]; i++) {
                const uint32_t u = g->targets[i];
                if (level[u] >= 64 || !(td >> level[u] & 1))
                    continue;
                const uint32_t s = edge_rank(g, u, w, P, per, hub);
                if (s != ow && stamp[s] == w + 1) {
                    out[first[s] < max ? first[s] : max - 1]++;
                    stamp[s] = 0; /* count (w, s) once */
                    total++;
                }
            }
        }
    }
    free(level);
    free(queue);
    free(first);
    free(stamp);
    return total;
}

/* The engine's hub rule (mpi/graph/engine.c, pick_hubs) for P > 1, which a
 * 1-rank engine does not report: degree 512, doubled until at most 1024
 * vertices qualify. */
static uint32_t hub_degree(const g500_csr *g)
{
    for (uint32_t d = 512;; d *= 2) {
        uint32_t n = 0;
        for (uint32_t v = 0; v < g->vertices; v++)
            n += g->offsets[v + 1] - g->offsets[v] >= d;
        if (n <= 1024)
            return d;
    }
}

/* The model against the measured levels (rank 0, first root). */
static void print_model(const mkrt_mpi_graph *e, const g500_csr *g, uint32_t root, int ranks,
                        uint32_t scale, uint32_t hub)
{
    uint64_t per[MKRT_MPI_GRAPH_LEVELS], td = 0, all_td = ~0ull;
    mkrt_mpi_graph_level lv[MKRT_MPI_GRAPH_LEVELS];
    const size_t nl = mkrt_mpi_graph_levels(e, lv, MKRT_MPI_GRAPH_LEVELS);
    for (size_t l = 0; l < nl; l++)
        if (!lv[l].bottom_up)
            td |= 1ull << l;
    printf("| P (ranks, block) | scale | directions | model arrivals (all levels) | model bytes "
           "(16 per arrival) | model arrivals per level |\n|---|---|---|---|---|---|\n");
    const uint32_t ps[] = {(uint32_t)ranks, 2, 4, 64, 1024};
    for (size_t k = 0; k < 2 * sizeof ps / sizeof ps[0]; k++) {
        const uint32_t P = ps[k / 2];
        const uint64_t mask = k % 2 ? all_td : td;
        if (k / 2 > 0 && P == (uint32_t)ranks)
            continue;
        uint64_t a = model_arrivals(g, root, P, mask, mkrt_mpi_graph_hub_degree(e) ? mkrt_mpi_graph_hub_degree(e) : hub,
                                    per, MKRT_MPI_GRAPH_LEVELS);
        printf("| %u%s | %u | %s | %" PRIu64 " | %" PRIu64 " | ", P, k < 2 ? " (this run)" : "",
               scale, k % 2 ? "all top-down" : "as run", a, 16 * a);
        size_t last = 0;
        for (size_t l = 0; l < MKRT_MPI_GRAPH_LEVELS; l++)
            if (per[l] != 0)
                last = l + 1;
        for (size_t l = 0; l < last; l++)
            printf("%s%" PRIu64, l ? " / " : "", per[l]);
        printf(" |\n");
    }
    printf("\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    bench_args a;
    int rc = parse(argc, argv, &a);
    if (rc != 0)
        return rc;
    const uint32_t scale = a.scale, roots = a.roots;
    /* MPI is ours (SERIALIZED), so the two layers below can come and go. */
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    forwarding_cost(a.items);
    char why[512];
    g500_edge_list el;
    g500_graph g;
    if (g500_generate(scale, 16, 1, &el, why, sizeof why) != 0 ||
        g500_csr_build(&el, &g, why, sizeof why) != 0) {
        fprintf(stderr, "mpi_bench: %s\n", why);
        return 1;
    }
    uint32_t *rootv = malloc(roots * sizeof *rootv);
    uint32_t *parent = malloc(g.csr.vertices * sizeof *parent);
    uint64_t *dist = malloc(g.csr.vertices * sizeof *dist);
    double *bt = malloc(roots * sizeof *bt), *st = malloc(roots * sizeof *st);
    if (rootv == NULL || parent == NULL || dist == NULL || bt == NULL || st == NULL) {
        fprintf(stderr, "mpi_bench: out of memory\n");
        return 1;
    }
    if (g500_sample_roots(&g.csr, 1, roots, rootv, why, sizeof why) != 0) {
        fprintf(stderr, "mpi_bench: %s\n", why);
        return 1;
    }
    mkrt_mpi_graph_config conf = graph_bfs_mpi_config(1);
    conf.partition = MKRT_MPI_BLOCK;
    const mkrt_graph mg = graph_bfs_mpi_graph(&g.csr);
    mkrt_mpi_graph *e = NULL;
    mkrt_error err = {0};
    if (mkrt_mpi_graph_open(&mg, &conf, &e, &err) != MKRT_OK) {
        fprintf(stderr, "mpi_bench: %s\n", err.message);
        return 1;
    }
    const int rank = mkrt_mpi_graph_rank(e), ranks = mkrt_mpi_graph_size(e);
    mkrt_mpi_graph_counts tot = {0}, bfs = {0};
    int bad = 0;
    double bfs_mteps = 0, sssp_mteps = 0; /* rank 0: this run's harmonic means */
    nompi np1 = {0};
    if (ranks == 1)
        nompi_open(&np1, &g.csr, roots);
    for (uint32_t i = 0; i < roots; i++) {
        mkrt_mpi_graph_counts cb, cs;
        if (mkrt_mpi_graph_bfs(e, rootv[i], parent, &cb, &err) != MKRT_OK) {
            bad = 1;
            snprintf(why, sizeof why, "%s", err.message);
        }
        const double tb = cb.seconds;
        if (ranks == 1)
            nompi_root(&np1, &el, rootv[i], i, 0);
        if (i == 0 && rank == 0) {
            print_levels(e, ranks, scale);
            const uint32_t hd = hub_degree(&g.csr);
            uint32_t nh = 0;
            for (uint32_t v = 0; v < g.csr.vertices; v++)
                nh += g.csr.offsets[v + 1] - g.csr.offsets[v] >= hd;
            printf("hubs (delegates at 2 ranks or more): %u vertices of degree >= %u\n\n", nh, hd);
            print_model(e, &g.csr, rootv[0], ranks, scale, hd);
        }
        uint64_t edges = rank == 0 ? g500_component_edges(&el, parent) : 0;
        if (mkrt_mpi_graph_sssp(e, rootv[i], dist, &cs, &err) != MKRT_OK) {
            bad = 1;
            snprintf(why, sizeof why, "%s", err.message);
        }
        const double ts = cs.seconds;
        if (ranks == 1)
            nompi_root(&np1, &el, rootv[i], i, 1);
        bt[i] = (double)edges / (tb > 0 ? tb : 1e-9);
        st[i] = (double)edges / (ts > 0 ? ts : 1e-9);
        tot.edge_items += cb.edge_items + cs.edge_items;
        tot.forwarded += cb.forwarded + cs.forwarded;
        tot.messages += cb.messages + cs.messages;
        tot.deferred += cb.deferred + cs.deferred;
        tot.bytes += cb.bytes + cs.bytes;
        tot.bytes_node += cb.bytes_node + cs.bytes_node;
        tot.collectives += cs.collectives;
        bfs.collectives += cb.collectives;
        bfs.bytes += cb.bytes;
        bfs.bytes_node += cb.bytes_node;
        bfs.forwarded += cb.forwarded;
    }
    if (rank == 0 && !bad) {
        g500_teps_stats b = g500_teps_summary(bt, roots), s = g500_teps_summary(st, roots);
        printf("| ranks | scale | roots | BFS MTEPS (harmonic) | SSSP MTEPS (harmonic) | arrivals "
               "per edge | items per message | deferred (outbox full) | BFS bytes sent per root "
               "(of them within the node) | all bytes sent | collectives per BFS / SSSP |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|\n");
        printf("| %d | %u | %u | %.2f | %.2f | %.1f%% | %.0f | %" PRIu64 " | %" PRIu64 " (%" PRIu64
               ") | %" PRIu64 " | %.1f / %.1f |\n\n", ranks, scale, roots, b.harmonic_mean / 1e6,
               s.harmonic_mean / 1e6,
               tot.edge_items ? 100.0 * (double)tot.forwarded / (double)tot.edge_items : 0.0,
               tot.messages ? (double)tot.forwarded / (double)tot.messages : 0.0, tot.deferred,
               bfs.bytes / roots, bfs.bytes_node / roots, tot.bytes,
               (double)bfs.collectives / roots, (double)tot.collectives / roots);
        fflush(stdout);
        bfs_mteps = b.harmonic_mean / 1e6;
        sssp_mteps = s.harmonic_mean / 1e6;
        csv_row(a.csv, ranks, "bfs", scale, b.harmonic_mean / 1e6);
        csv_row(a.csv, ranks, "sssp", scale, s.harmonic_mean / 1e6);
    } else if (rank == 0) {
        fprintf(stderr, "mpi_bench: %s\n", why);
    }
    if (ranks == 1) {
        const int nbad = np1.bad;
        np1.bad |= bad; /* no comparison with a failed run */
        nompi_close(&np1, &a, bfs_mteps, sssp_mteps);
        bad |= nbad;
    }
    mkrt_mpi_graph_close(e);
    free(parent);
    free(dist);
    free(bt);
    free(st);
    MPI_Finalize();
    free(rootv);
    g500_graph_free(&g);
    g500_edge_list_free(&el);
    if (rank == 0 && !bad && a.g500_dir != NULL && run_g500(&a, ranks) != 0)
        return 1;
    return bad ? 1 : 0;
}
