/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/graph/gapbs_peer.c - the GAP Benchmark Suite as a peer of
 * bench/graph_bench.c: runs the GAPBS binaries of a folder the user built
 * (bfs, sssp, cc, pr; nothing is built here) on the kit's graph, written
 * as GAPBS's text edge lists into a temporary folder, with
 * OMP_NUM_THREADS set to the benchmark's threads, and reads back what they
 * print: the graph they built (checked equal to the kit's: vertices and
 * undirected edges), each trial's time, their own verification (-v: every
 * trial must say PASS), and their analysis (-a), checked against the
 * kit's reference: BFS tree and SSSP reach size, the component count, the
 * top PageRank scores. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../bench_util.h"
#include "peers.h"

static const char *const kernels[] = {"bfs", "sssp", "cc", "pr"};

struct gapbs_peer {
    char dir[1024];     /* the GAPBS folder */
    char tmp[64];       /* our temporary folder */
    char graph[1100];   /* -f argument for bfs, cc, pr */
    char wgraph[1100];  /* -f argument for sssp */
    int graph_needs_s;  /* the text list needs -s (a .sg is symmetric already) */
    int wgraph_needs_s; /* the same for sssp's .wel (a .wsg is symmetric already) */
    unsigned threads;
    bool no_verify;     /* runs without -v (gapbs_set_threads) */
    uint32_t vertices;
    uint64_t edges; /* undirected */
};

int gapbs_check_dir(const char *dir, char *why, size_t len)
{
    if (strchr(dir, '\'') != NULL) {
        snprintf(why, len, "--gapbs %s: a folder name with a quote is not supported. Fix: another "
                 "folder name", dir);
        return -1;
    }
    char path[1100], missing[64] = "";
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, kernels[k]);
        if (access(path, X_OK) != 0) {
            strcat(missing, " ");
            strcat(missing, kernels[k]);
        }
    }
    if (missing[0] == '\0')
        return 0;
    snprintf(why, len,
             "--gapbs %s: no GAPBS binaries%s there (GAPBS's bfs, sssp, cc and pr are needed; this "
             "benchmark builds nothing). Fix: build GAPBS (https://github.com/sbeamer/gapbs: clone "
             "it, run make in it), then --gapbs with its folder",
             dir, missing);
    return -1;
}

/* Runs cmd through the shell, output into out (NUL-terminated, truncated
 * to cap); returns the exit status, or -1. */
static int run_cmd(const char *cmd, char *out, size_t cap)
{
    FILE *p = popen(cmd, "r");
    if (p == NULL)
        return -1;
    size_t n = 0, got;
    char sink[4096];
    for (;;) { /* keep what fits, drain the rest */
        char *dst = n + 1 < cap ? out + n : sink;
        size_t room = n + 1 < cap ? cap - 1 - n : sizeof sink;
        if ((got = fread(dst, 1, room, p)) == 0)
            break;
        if (dst != sink)
            n += got;
    }
    out[n] = '\0';
    int st = pclose(p);
    return st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

gapbs_peer *gapbs_open(const char *dir, const g500_csr *g, unsigned threads, char *why, size_t len)
{
    if (gapbs_check_dir(dir, why, len) != 0)
        return NULL;
    gapbs_peer *p = calloc(1, sizeof *p);
    if (p == NULL) {
        snprintf(why, len, "gapbs: out of memory");
        return NULL;
    }
    snprintf(p->dir, sizeof p->dir, "%s", dir);
    snprintf(p->tmp, sizeof p->tmp, "/tmp/mkrt-gapbs-XXXXXX");
    if (mkdtemp(p->tmp) == NULL) {
        snprintf(why, len, "gapbs: cannot make a temporary folder: %s. Fix: a writable /tmp",
                 strerror(errno));
        free(p);
        return NULL;
    }
    p->threads = threads;
    p->vertices = g->vertices;
    p->edges = g->offsets[g->vertices] / 2;
    char el[128], wel[128], sg[128];
    snprintf(el, sizeof el, "%s/graph.el", p->tmp);
    snprintf(wel, sizeof wel, "%s/graph.wel", p->tmp);
    snprintf(sg, sizeof sg, "%s/graph.sg", p->tmp);
    if (g500_write_el(g, el, 0, why, len) != 0 || g500_write_el(g, wel, 1, why, len) != 0) {
        gapbs_close(p);
        return NULL;
    }
    /* The unweighted kernels read a serialized graph when GAPBS's converter
     * is there (it loads in milliseconds, not the text list's second). SSSP
     * reads the .wel itself: converting a weighted list is not needed. */
    snprintf(p->graph, sizeof p->graph, "%s", el);
    snprintf(p->wgraph, sizeof p->wgraph, "%s", wel);
    p->graph_needs_s = p->wgraph_needs_s = 1;
    char cmd[2600], out[4096];
    snprintf(cmd, sizeof cmd, "'%s/converter' -f '%s' -s -b '%s' 2>&1", dir, el, sg);
    char conv[1100];
    snprintf(conv, sizeof conv, "%s/converter", dir);
    if (access(conv, X_OK) == 0 && run_cmd(cmd, out, sizeof out) == 0 && access(sg, R_OK) == 0) {
        snprintf(p->graph, sizeof p->graph, "%s", sg);
        p->graph_needs_s = 0;
    }
    /* The weighted list too (-w: weighted output): SSSP's runs then load
     * in milliseconds as well (the text list takes seconds at scale 20). */
    char wsg[128];
    snprintf(wsg, sizeof wsg, "%s/graph.wsg", p->tmp);
    snprintf(cmd, sizeof cmd, "'%s/converter' -f '%s' -s -w -b '%s' 2>&1", dir, wel, wsg);
    if (access(conv, X_OK) == 0 && run_cmd(cmd, out, sizeof out) == 0 && access(wsg, R_OK) == 0) {
        snprintf(p->wgraph, sizeof p->wgraph, "%s", wsg);
        p->wgraph_needs_s = 0;
    }
    return p;
}

void gapbs_set_threads(gapbs_peer *p, unsigned threads, bool verify)
{
    p->threads = threads;
    p->no_verify = !verify;
}

void gapbs_close(gapbs_peer *p)
{
    if (p == NULL)
        return;
    static const char *const files[] = {"graph.el", "graph.wel", "graph.sg", "graph.wsg"};
    char path[128];
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", p->tmp, files[i]);
        unlink(path);
    }
    rmdir(p->tmp);
    free(p);
}

/* The number after label in out, or -1 where none. */
static double after(const char *out, const char *label)
{
    const char *s = strstr(out, label);
    return s != NULL ? strtod(s + strlen(label), NULL) : -1;
}

int gapbs_run(gapbs_peer *p, const char *kernel, uint32_t root, unsigned trials, gapbs_result *r,
              char *why, size_t len)
{
    memset(r, 0, sizeof *r);
    const int sssp = strcmp(kernel, "sssp") == 0, pr = strcmp(kernel, "pr") == 0;
    char rootarg[32] = "";
    if (root != UINT32_MAX)
        snprintf(rootarg, sizeof rootarg, " -r %u", root);
    char cmd[3000];
    /* One more trial than asked: the first of a process is a warm-up
     * (OpenMP threads start, arrays fault in) and is dropped. OpenMP
     * threads wait passively unless the caller's environment says
     * otherwise: spinning waiters on a shared 2-CPU machine lose whole
     * time slices at every barrier. */
    snprintf(cmd, sizeof cmd,
             "OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} OMP_NUM_THREADS=%u '%s/%s' -f '%s'%s "
             "-n %u%s%s%s -a 2>&1",
             p->threads, p->dir, kernel, sssp ? p->wgraph : p->graph,
             (sssp ? p->wgraph_needs_s : p->graph_needs_s) ? " -s" : "", trials + 1, rootarg, sssp ? " -d 2" : "",
             p->no_verify ? "" : " -v");
    static char out[1 << 16];
    int st = run_cmd(cmd, out, sizeof out);
    if (st != 0) {
        snprintf(why, len, "gapbs %s exited with %d: %.300s", kernel, st, out);
        return -1;
    }
    /* The graph GAPBS built is the kit's. */
    const char *gh = strstr(out, "Graph has ");
    unsigned long long nodes = 0, edges = 0;
    if (gh == NULL || sscanf(gh, "Graph has %llu nodes and %llu", &nodes, &edges) != 2 ||
        nodes != p->vertices || edges != p->edges) {
        snprintf(why, len, "gapbs %s built another graph: %llu vertices and %llu undirected "
                 "edges, the kit's %u and %" PRIu64, kernel, nodes, edges, p->vertices, p->edges);
        return -1;
    }
    unsigned passed = 0, timed = 0;
    double sum = 0;
    for (const char *s = out; (s = strstr(s, "Verification:")) != NULL; s++)
        passed += strncmp(s + 13 + strspn(s + 13, " "), "PASS", 4) == 0;
    for (const char *s = out; (s = strstr(s, "Trial Time:")) != NULL; s++)
        if (timed++ > 0) /* the warm-up is not counted */
            sum += strtod(s + 11, NULL);
    r->seconds = timed > 1 ? sum / (timed - 1) : -1;
    if ((!p->no_verify && passed != trials + 1) || timed != trials + 1 || r->seconds < 0) {
        snprintf(why, len, "gapbs %s: %u of %u trials timed, %u passed its verification (-v): "
                 "%.400s", kernel, timed, trials + 1, passed, out);
        return -1;
    }
    r->passed = passed;
    if (strcmp(kernel, "bfs") == 0)
        r->count = (uint64_t)after(out, "BFS Tree has ");
    else if (sssp)
        r->count = (uint64_t)after(out, "SSSP Tree reaches ");
    else if (!pr)
        r->count = (uint64_t)after(out, "There are ");
    else { /* the top scores: lines "vertex:score" */
        const char *s = out;
        while (r->top_n < GAPBS_TOP && (s = strchr(s, ':')) != NULL) {
            const char *line = s;
            while (line > out && line[-1] != '\n')
                line--;
            unsigned v;
            double sc;
            char tail;
            if (sscanf(line, "%u:%lf%c", &v, &sc, &tail) == 3 && tail == '\n') {
                r->top_v[r->top_n] = v;
                r->top_score[r->top_n++] = sc;
            }
            s++;
            s = strchr(s, '\n');
            if (s == NULL)
                break;
        }
    }
    return 0;
}

int gapbs_cpu(gapbs_peer *p, const char *kernel, uint32_t root, double *seconds, char *why, size_t len)
{
    const int sssp = strcmp(kernel, "sssp") == 0;
    char rootarg[32] = "";
    if (root != UINT32_MAX)
        snprintf(rootarg, sizeof rootarg, " -r %u", root);
    double cpu[2];
    static const unsigned trials[2] = {1, 3};
    for (int i = 0; i < 2; i++) {
        char cmd[3000];
        snprintf(cmd, sizeof cmd,
                 "OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} OMP_NUM_THREADS=%u '%s/%s' -f '%s'%s "
                 "-n %u%s%s 2>&1",
                 p->threads, p->dir, kernel, sssp ? p->wgraph : p->graph,
                 (sssp ? p->wgraph_needs_s : p->graph_needs_s) ? " -s" : "", trials[i], rootarg, sssp ? " -d 2" : "");
        static char out[1 << 14];
        const double c0 = bench_cpu_seconds(RUSAGE_CHILDREN);
        const int st = run_cmd(cmd, out, sizeof out);
        cpu[i] = bench_cpu_seconds(RUSAGE_CHILDREN) - c0;
        if (st != 0) {
            snprintf(why, len, "gapbs %s (CPU time run) exited with %d: %.300s", kernel, st, out);
            return -1;
        }
    }
    *seconds = (cpu[1] - cpu[0]) / (trials[1] - trials[0]);
    if (*seconds < 0)
        *seconds = 0; /* the runs' noise exceeded a trial */
    return 0;
}
