/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/graph/concurrent.c - graph_bench --concurrent N: N BFS (then N
 * SSSP) searches from N roots in one runtime, each a traversal of its own
 * (mkrt_traversal_open), run one after another from one thread and then
 * all at once from N threads; every result checked against the
 * reference's. Reports both wall times per batch of N searches. */
#include <pthread.h>

#include "bench_graph.h"
#include "mkrt/mkrt.h"

#define CONC_MAX 64u
#define CONC_REPS 3u

typedef struct conc_job {
    mkrt_traversal *t;
    uint32_t root;
    int rc;
} conc_job;

static void *conc_search(void *arg)
{
    conc_job *j = arg;
    j->rc = mkrt_traversal_start(j->t, j->root, NULL) == MKRT_OK &&
                    mkrt_traversal_wait(j->t, MKRT_TIMEOUT_INFINITE) == MKRT_OK
                ? 0
                : -1;
    return NULL;
}

/* Every traversal's values against the reference's levels or distances. */
static int conc_check(mkrt_traversal *const *t, uint32_t n, const g500_csr *g, const uint32_t *const *levels,
                      const uint64_t *const *dists, uint32_t nroots, bool bfs, uint64_t *buf)
{
    for (uint32_t i = 0; i < n; i++) {
        if (mkrt_traversal_read(t[i], 0, g->vertices, buf, NULL) != MKRT_OK)
            return -1;
        for (uint32_t v = 0; v < g->vertices; v++) {
            uint64_t want = bfs ? (levels[i % nroots][v] == G500_NO_LEVEL ? UINT64_MAX : levels[i % nroots][v])
                                : dists[i % nroots][v];
            if (buf[v] != want) {
                fprintf(stderr, "graph_bench: concurrent %s %u: vertex %u is %llu, the reference's %llu\n",
                        bfs ? "bfs" : "sssp", i, v, (unsigned long long)buf[v], (unsigned long long)want);
                return -1;
            }
        }
    }
    return 0;
}

int bench_concurrent(const gopts *o, g500_family f, const g500_csr *g, const uint32_t *roots,
                     const uint32_t *const *levels, const uint64_t *const *dists, results *res)
{
    const uint32_t n = o->concurrent < CONC_MAX ? o->concurrent : CONC_MAX;
    mkrt_config c = mkrt_config_default();
    c.workers = o->threads;
    c.cells = g->vertices;
    c.append_log_capacity = 0;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    mkrt_graph graph = {g->vertices, g->offsets, g->targets, g->weights};
    if (mkrt_create(&c, &rt, &err) != MKRT_OK || mkrt_graph_register(rt, &graph, &err) != MKRT_OK) {
        fprintf(stderr, "graph_bench: concurrent: %s\n", err.message);
        if (rt != NULL)
            mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
        return -1;
    }
    uint64_t *buf = malloc((size_t)g->vertices * sizeof *buf);
    int rc = buf == NULL ? -1 : 0;
    for (int k = K_BFS; k <= K_SSSP && rc == 0; k++) {
        if (!(o->kernels & 1u << k))
            continue; /* the reference's answers are there for the kernels run */
        mkrt_traversal *t[CONC_MAX];
        conc_job jobs[CONC_MAX];
        pthread_t th[CONC_MAX];
        bool started[CONC_MAX] = {false};
        mkrt_traversal_desc d = {k == K_BFS ? MKRT_TRAVERSAL_BFS : MKRT_TRAVERSAL_SSSP, true};
        uint32_t opened = 0;
        for (; opened < n; opened++)
            if (mkrt_traversal_open(rt, &d, &t[opened], &err) != MKRT_OK) {
                fprintf(stderr, "graph_bench: concurrent: %s\n", err.message);
                rc = -1;
                break;
            }
        double seq = 0, conc = 0;
        mkrt_stats s0, s1;
        mkrt_stats_read(rt, &s0);
        for (uint32_t rep = 0; rep < CONC_REPS && rc == 0; rep++) {
            double t0 = g500_seconds();
            for (uint32_t i = 0; i < n && rc == 0; i++) {
                jobs[i] = (conc_job){t[i], roots[i % o->roots], 0};
                conc_search(&jobs[i]);
                rc = jobs[i].rc;
            }
            seq += g500_seconds() - t0;
            if (rc == 0)
                rc = conc_check(t, n, g, levels, dists, o->roots, k == K_BFS, buf);
            t0 = g500_seconds();
            for (uint32_t i = 0; i < n && rc == 0; i++) {
                jobs[i] = (conc_job){t[i], roots[i % o->roots], 0};
                started[i] = pthread_create(&th[i], NULL, conc_search, &jobs[i]) == 0;
                if (!started[i])
                    rc = -1;
            }
            for (uint32_t i = 0; i < n; i++)
                if (started[i]) {
                    pthread_join(th[i], NULL);
                    started[i] = false;
                    rc |= jobs[i].rc;
                }
            conc += g500_seconds() - t0;
            if (rc == 0)
                rc = conc_check(t, n, g, levels, dists, o->roots, k == K_BFS, buf);
        }
        mkrt_stats_read(rt, &s1);
        for (uint32_t i = 0; i < opened; i++)
            mkrt_traversal_close(t[i], NULL);
        if (rc != 0) {
            fprintf(stderr, "graph_bench: FAILED: concurrent %s searches\n", kernel_name[k]);
            break;
        }
        if (res->nconc < CONC_ROWS_MAX) {
            conc_row *r = &res->conc[res->nconc++];
            r->family = f;
            r->kernel = k;
            r->searches = n;
            r->seq_seconds = seq / CONC_REPS;
            r->conc_seconds = conc / CONC_REPS;
            r->levels_pushed = s1.levels_pushed - s0.levels_pushed;
            r->levels_pulled = s1.levels_pulled - s0.levels_pulled;
            r->edges = s1.edges_examined - s0.edges_examined;
        }
        printf("mkrt %s x%u: one after another %.3f ms, all at once from %u threads %.3f ms (%.2fx); "
               "levels pushed %llu, pulled %llu; every result valid\n",
               kernel_name[k], n, seq / CONC_REPS * 1e3, n, conc / CONC_REPS * 1e3, seq / conc,
               (unsigned long long)(s1.levels_pushed - s0.levels_pushed),
               (unsigned long long)(s1.levels_pulled - s0.levels_pulled));
    }
    free(buf);
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
    return rc;
}
