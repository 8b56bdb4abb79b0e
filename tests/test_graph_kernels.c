/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_graph_kernels.c - the graph kit's second half: the uniform
 * random family, GAPBS edge lists written and read back (and bad lists
 * refused with the line, never a crash), the CC and PageRank checks
 * (union-find partition, L1 distance) rejecting wrong answers, and all
 * four kernels of mkrt's engine (examples/graph500/traverse_mkrt.c) at a
 * small scale on the CPU pool and on MKRT_BACKEND_SIM, each validated. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../examples/graph500/graph500.h"
#include "edge_degrees.h"
#include "tap.h"

#define SCALE 10
#define EF 16

extern const traverse_ops traverse_mkrt_sim_ops; /* traverse_mkrt.c */

static char why[512];
static char dir[64];

static void test_urand(void)
{
    g500_edge_list a, b;
    ok(g500_generate_urand(SCALE, EF, 3, &a, why, sizeof why) == 0, "urand generates");
    ok(g500_generate_urand(SCALE, EF, 3, &b, why, sizeof why) == 0, "and again");
    is(a.edges, (uint64_t)EF << SCALE, "edgefactor * 2^scale tuples");
    ok(memcmp(a.edge, b.edge, a.edges * sizeof *a.edge) == 0, "the same seed gives the same list");
    edge_degrees d = edge_degrees_of(&a);
    uint32_t *deg = d.deg, max = d.max, isolated = d.isolated;
    ok(deg != NULL && d.in_range, "every endpoint is a vertex");
    /* Binomial degrees around 2 * EF: no hubs, (almost) nobody alone. */
    ok(max < 3 * 2 * EF, "uniform: the largest degree %u is under 3x the mean %d", max, 2 * EF);
    ok(isolated < a.vertices / 100, "uniform: %u of %u vertices isolated", isolated, a.vertices);
    free(deg);
    g500_edge_list_free(&a);
    g500_edge_list_free(&b);
    g500_family f;
    ok(g500_family_parse("urand", &f, why, sizeof why) == 0 && f == G500_URAND, "'urand' parses");
    ok(g500_family_parse("kron", &f, why, sizeof why) == 0 && f == G500_KRON, "'kron' parses");
    ok(g500_family_parse("rmat", &f, why, sizeof why) == -1, "'rmat' is refused");
    like(why, "Fix:", "with a fix: %s", why);
    ok(g500_generate_urand(0, EF, 1, &a, why, sizeof why) == -1 && a.edge == NULL,
       "urand scale 0 is refused");
}

/* Writes text to dir/name; returns the path (static buffer). */
static const char *file_with(const char *name, const char *text)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        bail_out("cannot write %s", path);
    fputs(text, f);
    fclose(f);
    return path;
}

static bool same_csr(const g500_csr *a, const g500_csr *b)
{
    if (a->vertices != b->vertices || a->offsets[a->vertices] != b->offsets[b->vertices])
        return false;
    return memcmp(a->offsets, b->offsets, (a->vertices + 1) * sizeof *a->offsets) == 0 &&
           memcmp(a->targets, b->targets, a->offsets[a->vertices] * sizeof *a->targets) == 0;
}

static void test_edge_lists(const g500_graph *gr)
{
    char path[128];
    snprintf(path, sizeof path, "%s/g.el", dir);
    ok(g500_write_el(&gr->csr, path, 0, why, sizeof why) == 0, "writes the .el");
    g500_edge_list back;
    g500_graph again;
    ok(g500_read_el(path, gr->csr.vertices, &back, why, sizeof why) == 0, "reads it back");
    ok(g500_csr_build(&back, &again, why, sizeof why) == 0 && same_csr(&gr->csr, &again.csr),
       "the same undirected graph comes back");
    g500_graph_free(&again);
    g500_edge_list_free(&back);
    snprintf(path, sizeof path, "%s/g.wel", dir);
    ok(g500_write_el(&gr->csr, path, 1, why, sizeof why) == 0, "writes the .wel");
    ok(g500_read_el(path, 0, &back, why, sizeof why) == 0, "reads it with weights, count from ids");
    is(back.vertices, gr->csr.vertices, "the vertex count GAPBS would take (largest id + 1)");
    g500_edge_list_free(&back);

    /* Vertex 3 of 4 has no edge: the file ends with the self loop "3 3"
     * so that GAPBS counts 4 vertices. */
    static const uint64_t off[] = {0, 1, 2, 2, 2};
    static const uint32_t tgt[] = {1, 0};
    g500_csr small = {4, off, tgt, NULL};
    snprintf(path, sizeof path, "%s/s.el", dir);
    ok(g500_write_el(&small, path, 0, why, sizeof why) == 0, "writes a graph with isolated vertices");
    FILE *f = fopen(path, "r");
    char text[64] = "";
    size_t n = f != NULL ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = '\0';
    if (f != NULL)
        fclose(f);
    is_str(text, "0 1\n3 3\n", "each edge once, then the vertex count's self loop");

    static const struct {
        const char *text, *needle, *what;
    } bad[] = {
        {"0 1\n1 2\n3\n", "line 3", "a truncated line (one id)"},
        {"0 1\n1 9\n", "vertex id 9 is out of range", "an id out of range"},
        {"0 1\n1 x\n", "line 2", "a field that is not a number"},
        {"0 1\n-1 2\n", "line 2", "a negative id"},
        {"0 99999999999999999999999\n", "out of range", "an id that overflows"},
        {"0 1 2 3\n", "line 1", "four fields"},
        {"# nothing\n\n", "no edges", "no edges"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *p = file_with("bad.el", bad[i].text);
        ok(g500_read_el(p, 4, &back, why, sizeof why) == -1 && back.edge == NULL,
           "refused: %s", bad[i].what);
        like(why, bad[i].needle, "  says where: %s", why);
        like(why, "Fix:", "  and how to fix it");
    }
    ok(g500_read_el(file_with("ok.el", "# c\n0 1\n\n2 3 7\r\n"), 4, &back, why, sizeof why) == 0 &&
           back.edges == 2 && back.edge[1].u == 2 && back.edge[1].v == 3,
       "comments, blank lines, weights and CRLF are read");
    g500_edge_list_free(&back);
    snprintf(path, sizeof path, "%s/missing.el", dir);
    ok(g500_read_el(path, 0, &back, why, sizeof why) == -1, "a missing file is refused");
    like(why, "cannot read", "with the reason: %s", why);
}

static void test_checks(const g500_graph *gr)
{
    const g500_csr *g = &gr->csr;
    const uint32_t n = g->vertices;
    uint32_t *comp = malloc(n * sizeof *comp), comps = 0;
    g500_union_find(g, comp);
    ok(g500_validate_cc(g, comp, &comps, why, sizeof why) == 0, "union-find's labels pass");
    ok(comps > 1 && comps < n, "%u components", comps);
    uint32_t iso = UINT32_MAX, hub = 0;
    for (uint32_t v = 0; v < n; v++) {
        if (g->offsets[v + 1] == g->offsets[v] && iso == UINT32_MAX)
            iso = v;
        if (g->offsets[v + 1] - g->offsets[v] > g->offsets[hub + 1] - g->offsets[hub])
            hub = v;
    }
    uint32_t keep = comp[iso];
    comp[iso] = comp[hub]; /* an isolated vertex joins the giant component */
    ok(g500_validate_cc(g, comp, NULL, why, sizeof why) == 1, "two components merged: refused");
    like(why, "merged", "%s", why);
    comp[iso] = keep;
    uint32_t nb = g->targets[g->offsets[hub]];
    keep = comp[nb];
    comp[nb] = iso; /* a neighbour of the hub leaves for another label */
    ok(g500_validate_cc(g, comp, NULL, why, sizeof why) == 1, "one component split: refused");
    comp[nb] = n;
    ok(g500_validate_cc(g, comp, NULL, why, sizeof why) == 1, "a label out of range: refused");
    comp[nb] = keep;
    ok(g500_validate_cc(g, comp, NULL, why, sizeof why) == 0, "restored: passes");
    free(comp);

    double *ref = malloc(n * sizeof *ref), *s = malloc(n * sizeof *s);
    uint32_t iters = 0;
    traverse_engine *e = traverse_reference_ops.open(g, 0, why, sizeof why);
    ok(e != NULL && traverse_reference_ops.pr(e, ref, &iters, why, sizeof why) == 0,
       "reference PageRank runs");
    ok(iters > 1 && iters <= TRAVERSE_PR_MAX_ITERS, "in %u iterations", iters);
    double sum = 0;
    for (uint32_t v = 0; v < n; v++)
        sum += ref[v];
    ok(sum > 0.5 && sum <= 1.0 + 1e-9, "the scores sum to %.4f (mass lost at isolated vertices)",
       sum);
    traverse_reference_ops.close(e);
    memcpy(s, ref, n * sizeof *s);
    double l1 = -1;
    ok(g500_validate_pr(n, s, ref, TRAVERSE_PR_TOLERANCE, &l1, why, sizeof why) == 0 && l1 == 0,
       "the reference passes against itself");
    double *fp = malloc(n * sizeof *fp);
    ok(g500_pagerank_fixed_point(g, 1e-9, fp, why, sizeof why) == 0, "the fixed point");
    ok(g500_validate_pr(n, ref, fp, TRAVERSE_PR_CHECK_L1(TRAVERSE_PR_TOLERANCE), &l1, why, sizeof why) == 0 && l1 > 0,
       "the reference's Jacobi iterate (tolerance %g) is within %.3g of it (%.2g)", TRAVERSE_PR_TOLERANCE,
       TRAVERSE_PR_CHECK_L1(TRAVERSE_PR_TOLERANCE), l1);
    free(fp);
    s[hub] += 2 * TRAVERSE_PR_TOLERANCE;
    ok(g500_validate_pr(n, s, ref, TRAVERSE_PR_TOLERANCE, &l1, why, sizeof why) == 1,
       "a score off by twice the tolerance: refused");
    like(why, "L1 distance", "%s", why);
    s[hub] = NAN;
    ok(g500_validate_pr(n, s, ref, TRAVERSE_PR_TOLERANCE, NULL, why, sizeof why) == 1,
       "a NaN score: refused");
    free(ref);
    free(s);
}

/* All four kernels of one engine against the reference. */
static void kernels_on(const traverse_ops *ops, const g500_graph *gr, const char *family)
{
    const g500_csr *g = &gr->csr;
    const uint32_t n = g->vertices;
    traverse_engine *e = ops->open(g, 2, why, sizeof why);
    traverse_engine *r = traverse_reference_ops.open(g, 0, why, sizeof why);
    if (!ok(e != NULL && r != NULL, "%s opens on %s", ops->name, family)) {
        diag("%s", why);
        return;
    }
    uint32_t *parent = malloc(n * sizeof *parent), *level = malloc(n * sizeof *level);
    uint32_t *ref_level = malloc(n * sizeof *ref_level), *comp = malloc(n * sizeof *comp);
    uint64_t *dist = malloc(n * sizeof *dist), *ref_dist = malloc(n * sizeof *ref_dist);
    double *score = malloc(n * sizeof *score), *ref_score = malloc(n * sizeof *ref_score);
    uint32_t roots[3];
    ok(g500_sample_roots(g, 5, 3, roots, why, sizeof why) == 0, "three roots");
    for (int i = 0; i < 3; i++) {
        traverse_reference_ops.bfs(r, roots[i], parent, why, sizeof why);
        g500_validate_bfs(g, roots[i], parent, ref_level, why, sizeof why);
        ok(ops->bfs(e, roots[i], parent, why, sizeof why) == 0 &&
               g500_validate_bfs(g, roots[i], parent, level, why, sizeof why) == 0 &&
               memcmp(level, ref_level, n * sizeof *level) == 0,
           "%s %s: BFS from %u valid, the reference's levels", ops->name, family, roots[i]);
        traverse_reference_ops.sssp(r, roots[i], ref_dist, why, sizeof why);
        ok(ops->sssp(e, roots[i], dist, why, sizeof why) == 0 &&
               g500_validate_sssp(g, roots[i], dist, why, sizeof why) == 0 &&
               memcmp(dist, ref_dist, n * sizeof *dist) == 0,
           "%s %s: SSSP from %u valid, the reference's distances", ops->name, family, roots[i]);
    }
    for (int t = 0; t < 2; t++) { /* twice: the engine resets its state */
        uint32_t comps = 0;
        ok(ops->cc(e, comp, why, sizeof why) == 0 &&
               g500_validate_cc(g, comp, &comps, why, sizeof why) == 0,
           "%s %s: CC is union-find's partition (%u components)", ops->name, family, comps);
        uint32_t it = 0;
        double l1 = -1;
        const double bound = TRAVERSE_PR_CHECK_L1(TRAVERSE_PR_TOLERANCE);
        g500_pagerank_fixed_point(g, TRAVERSE_PR_FIXED_L1, ref_score, why, sizeof why);
        const bool pr_ok = ops->pr(e, score, &it, why, sizeof why) == 0 &&
                           g500_validate_pr(n, score, ref_score, bound, &l1, why, sizeof why) == 0;
        ok(pr_ok,
           "%s %s: PageRank within %.3g L1 of the fixed point (%.2g; %u iterations)", ops->name, family,
           bound, l1, it);
    }
    traverse_counters c = {0};
    if (ops->counters != NULL)
        ops->counters(e, &c);
    ok(c.iterations > 0 && c.edges_examined == g->offsets[n] * c.iterations,
       "%s: PageRank's counters: %u iterations, every edge once per iteration", ops->name,
       c.iterations);
    free(parent);
    free(level);
    free(ref_level);
    free(comp);
    free(dist);
    free(ref_dist);
    free(score);
    free(ref_score);
    ops->close(e);
    traverse_reference_ops.close(r);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/mkrt-kernels-XXXXXX");
    if (mkdtemp(dir) == NULL)
        bail_out("no temporary folder");
    test_urand();
    g500_edge_list el;
    g500_graph g;
    if (g500_generate(SCALE, EF, 1, &el, why, sizeof why) != 0 ||
        g500_csr_build(&el, &g, why, sizeof why) != 0)
        bail_out("cannot build the scale %d graph: %s", SCALE, why);
    test_edge_lists(&g);
    test_checks(&g);
    kernels_on(&traverse_mkrt_ops, &g, "kron");
    kernels_on(&traverse_mkrt_sim_ops, &g, "kron");
    g500_graph_free(&g);
    g500_edge_list_free(&el);
    if (g500_generate_urand(SCALE, EF, 1, &el, why, sizeof why) != 0 ||
        g500_csr_build(&el, &g, why, sizeof why) != 0)
        bail_out("cannot build the urand graph: %s", why);
    kernels_on(&traverse_mkrt_ops, &g, "urand");
    kernels_on(&traverse_mkrt_sim_ops, &g, "urand");
    g500_graph_free(&g);
    g500_edge_list_free(&el);
    static const char *const files[] = {"g.el", "g.wel", "s.el", "bad.el", "ok.el"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
    return done_testing();
}
