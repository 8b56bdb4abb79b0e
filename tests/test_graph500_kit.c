/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_graph500_kit.c - the Graph500 kit of examples/graph500/: the
 * generator is deterministic and makes the tuples it should, the CSR is
 * the symmetric simple graph of the tuples, roots are distinct vertices
 * with neighbours, the reference engine's results pass the validators,
 * and the validators reject each kind of corrupted parent array and
 * distance array. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../examples/graph500/graph500.h"
#include "edge_degrees.h"
#include "tap.h"

#define SCALE 10
#define EF 16

static char why[512];

/* A request too large to map must come back as NULL, as it does from glibc;
 * ASan and TSan would otherwise report it instead of returning NULL. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
    return "allocator_may_return_null=1";
}

/* ---- generator -------------------------------------------------------- */

static void test_generator(void)
{
    g500_edge_list a, b, c;
    if (!ok(g500_generate(SCALE, EF, 7, &a, why, sizeof why) == 0, "generate scale %d", SCALE))
        diag("%s", why);
    ok(g500_generate(SCALE, EF, 7, &b, why, sizeof why) == 0, "generate again");
    ok(g500_generate(SCALE, EF, 8, &c, why, sizeof why) == 0, "generate another seed");
    is(a.vertices, 1u << SCALE, "2^scale vertices");
    is(a.edges, (uint64_t)EF << SCALE, "edgefactor * 2^scale tuples");
    ok(memcmp(a.edge, b.edge, a.edges * sizeof *a.edge) == 0, "the same seed gives the same list");
    ok(memcmp(a.edge, c.edge, a.edges * sizeof *a.edge) != 0, "another seed gives another list");
    edge_degrees d = edge_degrees_of(&a);
    uint32_t *deg = d.deg, max = d.max, isolated = d.isolated;
    ok(deg != NULL && d.in_range, "every endpoint is a vertex");
    /* The initiator's skew: hubs far above the mean degree 2 * EF, and
     * vertices no tuple touches (a uniform generator has neither). */
    ok(max > 8 * 2 * EF, "Kronecker skew: the largest degree %u is over 8x the mean %d", max,
       2 * EF);
    ok(isolated > a.vertices / 10, "Kronecker skew: %u of %u vertices isolated", isolated,
       a.vertices);
    /* Ids permuted: the hub is not vertex 0, as it is before permutation. */
    ok(deg[0] < max, "vertex ids permuted (vertex 0 is not the hub)");
    free(deg);
    g500_edge_list_free(&a);
    g500_edge_list_free(&b);
    g500_edge_list_free(&c);

    g500_edge_list bad;
    ok(g500_generate(0, EF, 1, &bad, why, sizeof why) == -1 && bad.edge == NULL,
       "scale 0 is refused");
    like(why, "Fix:", "with a fix: %s", why);
    ok(g500_generate(G500_MAX_SCALE + 1, EF, 1, &bad, why, sizeof why) == -1, "scale 32 is refused");
    ok(g500_generate(SCALE, 0, 1, &bad, why, sizeof why) == -1, "edge factor 0 is refused");
    /* 2^47 tuples of 8 bytes: more than a 47-bit address space holds. */
    ok(g500_generate(G500_MAX_SCALE, 1u << 16, 1, &bad, why, sizeof why) == -1 && bad.edge == NULL,
       "an allocation that fails is an error, not an abort");
    like(why, "out of memory", "saying so: %s", why);
    g500_edge_list_free(NULL);
}

/* ---- CSR ---------------------------------------------------------------- */

static bool has_edge(const g500_csr *g, uint32_t u, uint32_t v, uint32_t *w)
{
    uint64_t lo = g->offsets[u], hi = g->offsets[u + 1];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (g->targets[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < g->offsets[u + 1] && g->targets[lo] == v) {
        *w = g->weights[lo];
        return true;
    }
    return false;
}

static void test_csr_small(void)
{
    g500_edge e[] = {{0, 1}, {1, 0}, {2, 2}, {1, 2}, {2, 1}, {3, 1}};
    g500_edge_list el = {2, 4, 6, 99, e};
    g500_graph g;
    if (!ok(g500_csr_build(&el, &g, why, sizeof why) == 0, "CSR of a hand-made list"))
        bail_out("%s", why);
    static const uint64_t off[] = {0, 1, 4, 5, 6};
    static const uint32_t tgt[] = {1, 0, 2, 3, 1, 1};
    ok(memcmp(g.offsets, off, sizeof off) == 0 && memcmp(g.targets, tgt, sizeof tgt) == 0,
       "rows sorted, both directions, repeats and the self loop dropped");
    is(g.self_loops, 1, "one self loop counted");
    is(g.duplicates, 2, "two repeated edges counted");
    is(g.weights[0], g500_edge_weight(99, 1, 0), "weight from the seed and the endpoints");
    is(g500_edge_weight(99, 0, 1), g500_edge_weight(99, 1, 0), "weights are symmetric");
    g500_graph_free(&g);
    g500_graph_free(NULL);

    g500_edge bad_e[] = {{0, 1}, {1, 4}};
    g500_edge_list bad = {2, 4, 2, 1, bad_e};
    ok(g500_csr_build(&bad, &g, why, sizeof why) == -1 && g.offsets == NULL,
       "a tuple naming vertex 4 of 4 is refused");
    like(why, "(1, 4)", "the message names the tuple: %s", why);
}

/* The scale 10, seed 1 graph as this kit makes it on every machine: a
 * change to the generator, the CSR builder or the weights shows here (and
 * changes every recorded figure, so it must be deliberate). */
static void test_golden(const g500_edge_list *el, const g500_graph *gr)
{
    uint64_t h = 0, wsum = 0;
    for (uint64_t i = 0; i < el->edges; i++)
        h = g500_mix64(h ^ ((uint64_t)el->edge[i].u << 32 | el->edge[i].v));
    for (uint64_t k = 0; k < gr->offsets[gr->csr.vertices]; k++)
        wsum += gr->weights[k];
    ok(h == 0xb2312003702a2296u, "scale 10 seed 1: the tuples hash to 0xb2312003702a2296");
    is(gr->offsets[gr->csr.vertices], 21318, "  21318 CSR slots");
    is(gr->self_loops, 143, "  143 self loops");
    is(gr->duplicates, 5582, "  5582 repeats");
    is(wsum, 2745198, "  weights summing to 2745198");
}

static void test_csr_generated(const g500_edge_list *el, const g500_graph *gr)
{
    const g500_csr *g = &gr->csr;
    bool symmetric = true, sorted = true, loops = false, weights = true;
    for (uint32_t u = 0; u < g->vertices; u++)
        for (uint64_t k = g->offsets[u]; k < g->offsets[u + 1]; k++) {
            uint32_t v = g->targets[k], w = 0;
            loops |= v == u;
            sorted &= k == g->offsets[u] || g->targets[k - 1] < v;
            symmetric &= has_edge(g, v, u, &w) && w == g->weights[k];
            weights &= g->weights[k] >= 1 && g->weights[k] <= 255;
        }
    ok(symmetric, "CSR symmetric: every (u, v, w) has (v, u, w)");
    ok(sorted, "rows strictly increasing (no repeats)");
    ok(!loops, "no self loops");
    ok(weights, "weights in 1..255");
    uint64_t self = 0;
    bool all_in = true;
    for (uint64_t i = 0; i < el->edges; i++) {
        uint32_t u = el->edge[i].u, v = el->edge[i].v, w;
        self += u == v;
        if (u != v)
            all_in &= has_edge(g, u, v, &w);
    }
    ok(all_in, "every generated tuple is an edge");
    is(gr->self_loops, self, "self loops counted");
    is(g->offsets[g->vertices], 2 * (el->edges - gr->self_loops - gr->duplicates),
       "2 * (tuples - self loops - repeats) slots");
}

/* ---- roots -------------------------------------------------------------- */

static void test_roots(const g500_csr *g, uint32_t *roots)
{
    uint32_t again[16];
    if (!ok(g500_sample_roots(g, 3, 16, roots, why, sizeof why) == 0, "16 roots"))
        bail_out("%s", why);
    ok(g500_sample_roots(g, 3, 16, again, why, sizeof why) == 0 &&
           memcmp(roots, again, sizeof again) == 0,
       "the same seed picks the same roots");
    bool good = true;
    for (int i = 0; i < 16; i++) {
        good &= roots[i] < g->vertices && g->offsets[roots[i] + 1] > g->offsets[roots[i]];
        for (int j = 0; j < i; j++)
            good &= roots[i] != roots[j];
    }
    ok(good, "distinct vertices with neighbours");
    uint32_t *many = malloc((size_t)g->vertices * sizeof *many);
    ok(g500_sample_roots(g, 3, g->vertices, many, why, sizeof why) == -1,
       "more roots than vertices with neighbours is refused");
    like(why, "Fix:", "with a fix: %s", why);
    free(many);
}

/* ---- the reference engine on a hand-made weighted graph ---------------- */

static void test_reference_small(void)
{
    /* Triangle 0-1 (5), 1-2 (1), 0-2 (10), and vertex 3 alone. */
    static const uint64_t off[] = {0, 2, 4, 6, 6};
    static const uint32_t tgt[] = {1, 2, 0, 2, 0, 1};
    static const uint32_t wt[] = {5, 10, 5, 1, 10, 1};
    g500_csr g = {4, off, tgt, wt};
    uint32_t parent[4];
    uint64_t dist[4];
    traverse_engine *e = traverse_reference_ops.open(&g, 0, why, sizeof why);
    ok(e != NULL, "reference engine opens");
    ok(traverse_reference_ops.bfs(e, 0, parent, why, sizeof why) == 0 && parent[0] == 0 &&
           parent[1] == 0 && parent[2] == 0 && parent[3] == G500_NO_PARENT,
       "BFS parents on the triangle");
    ok(traverse_reference_ops.sssp(e, 0, dist, why, sizeof why) == 0 && dist[0] == 0 &&
           dist[1] == 5 && dist[2] == 6 && dist[3] == G500_INF,
       "SSSP distances take the cheaper two-hop path");
    ok(g500_validate_sssp(&g, 0, dist, why, sizeof why) == 0, "and validate");
    ok(traverse_reference_ops.bfs(e, 4, parent, why, sizeof why) == -1, "root 4 of 4 is refused");
    like(why, "root 4", "with the root in the message: %s", why);
    traverse_reference_ops.close(e);
    dist[2] = 7;
    ok(g500_validate_sssp(&g, 0, dist, why, sizeof why) == 1, "dist 7 where 6 is shortest fails");
    g500_csr unweighted = {4, off, tgt, NULL};
    uint64_t hops[4] = {0, 1, 1, G500_INF};
    ok(g500_validate_sssp(&unweighted, 0, hops, why, sizeof why) == 0,
       "NULL weights count 1 per edge");
}

/* ---- validators on the generated graph ---------------------------------- */

typedef struct fixture {
    const g500_csr *g;
    uint32_t root;
    uint32_t *parent, *bad, *level;
    uint64_t *dist, *dbad;
} fixture;

static bool adjacent(const g500_csr *g, uint32_t u, uint32_t v)
{
    for (uint64_t k = g->offsets[u]; k < g->offsets[u + 1]; k++)
        if (g->targets[k] == v)
            return true;
    return false;
}

static bool has_child(const fixture *f, uint32_t v)
{
    for (uint32_t x = 0; x < f->g->vertices; x++)
        if (x != f->root && f->parent[x] == v)
            return true;
    return false;
}

/* Validates f->bad; expects rc 1 and a message matching the extended
 * regex re (where a corruption breaks several rules, the first one the
 * scan meets is reported, so re may list them). */
static void expect_bfs_reject(const fixture *f, const char *what, const char *re)
{
    int rc = g500_validate_bfs(f->g, f->root, f->bad, NULL, why, sizeof why);
    is(rc, 1, "BFS validator rejects %s", what);
    matches(why, re, "  because: %s", why);
    memcpy(f->bad, f->parent, f->g->vertices * sizeof *f->bad);
}

static void expect_sssp_reject(const fixture *f, const char *what, const char *re)
{
    int rc = g500_validate_sssp(f->g, f->root, f->dbad, why, sizeof why);
    is(rc, 1, "SSSP validator rejects %s", what);
    matches(why, re, "  because: %s", why);
    memcpy(f->dbad, f->dist, f->g->vertices * sizeof *f->dbad);
}

static void corrupt_bfs(const fixture *f)
{
    const g500_csr *g = f->g;
    const uint32_t n = g->vertices, *lv = f->level;
    uint32_t v, c, u;

    f->bad[f->root] = g->targets[g->offsets[f->root]];
    expect_bfs_reject(f, "a root that is not its own parent", "parent\\[root\\]");

    for (v = 0; v < n && !(lv[v] != G500_NO_LEVEL && lv[v] > 0 && has_child(f, v)); v++)
        ;
    for (c = 0; c < n && !(c != f->root && f->parent[c] == v); c++)
        ;
    ok(v < n && c < n, "found a vertex %u with a child %u", v, c);
    f->bad[v] = c;
    expect_bfs_reject(f, "a cycle (a vertex's parent is its child)", "cycle");

    /* A parent one level up that is not a neighbour: levels stay right. */
    bool found = false;
    for (v = 0; v < n && !found; v++) {
        if (lv[v] == G500_NO_LEVEL || lv[v] < 2)
            continue;
        for (u = 0; u < n && !found; u++)
            if (lv[u] == lv[v] - 1 && !adjacent(g, u, v)) {
                f->bad[v] = u;
                found = true;
            }
    }
    ok(found, "found a non-edge one level up");
    expect_bfs_reject(f, "a tree edge that is not a graph edge", "not an edge of the graph");

    /* A same-level neighbour as parent pushes v a level down: its old
     * parent's edge then spans two levels. */
    found = false;
    for (v = 0; v < n && !found; v++) {
        if (lv[v] == G500_NO_LEVEL || lv[v] == 0)
            continue;
        for (uint64_t k = g->offsets[v]; k < g->offsets[v + 1] && !found; k++)
            if (lv[g->targets[k]] == lv[v]) {
                f->bad[v] = g->targets[k];
                found = true;
            }
    }
    ok(found, "found a same-level neighbour");
    expect_bfs_reject(f, "a level skip", "more than one apart");

    for (v = 0; v < n && !(lv[v] != G500_NO_LEVEL && lv[v] > 0 && !has_child(f, v)); v++)
        ;
    f->bad[v] = G500_NO_PARENT;
    expect_bfs_reject(f, "a reached leaf marked unreached", "not root's component");

    for (v = 0; v < n && g->offsets[v + 1] > g->offsets[v]; v++)
        ;
    ok(v < n, "found an isolated vertex %u", v);
    f->bad[v] = f->root;
    expect_bfs_reject(f, "an isolated vertex marked reached", "not an edge of the graph");

    for (v = 0; v < n && !(lv[v] != G500_NO_LEVEL && lv[v] > 0 && has_child(f, v)); v++)
        ;
    f->bad[v] = G500_NO_PARENT;
    expect_bfs_reject(f, "an inner tree vertex marked unreached", "unreached");

    f->bad[0] = n + 5;
    expect_bfs_reject(f, "a parent that is not a vertex", "is not a vertex");

    is(g500_validate_bfs(g, n, f->parent, NULL, why, sizeof why), -1, "root out of range: -1");
}

static void corrupt_sssp(const fixture *f)
{
    const g500_csr *g = f->g;
    const uint32_t n = g->vertices;
    uint32_t v;

    f->dbad[f->root] = 1;
    expect_sssp_reject(f, "dist[root] != 0", "dist\\[root\\] is 1");

    for (v = 0; v < n && (v == f->root || f->dist[v] == G500_INF); v++)
        ;
    f->dbad[v] += 1;
    expect_sssp_reject(f, "a distance one too large", "not a shortest distance|not reached by any path");
    f->dbad[v] -= 1;
    expect_sssp_reject(f, "a distance one too small", "not a shortest distance|not reached by any path");

    f->dbad[v] = G500_INF;
    expect_sssp_reject(f, "a reached vertex marked unreached", "not root's component|not reached by any path");

    for (v = 0; v < n && g->offsets[v + 1] > g->offsets[v]; v++)
        ;
    f->dbad[v] = 5;
    expect_sssp_reject(f, "an isolated vertex given a distance", "not reached by any path");

    is(g500_validate_sssp(g, n, f->dist, why, sizeof why), -1, "root out of range: -1");
}

static void test_validators(const g500_graph *gr, const uint32_t *roots)
{
    const g500_csr *g = &gr->csr;
    const uint32_t n = g->vertices;
    fixture f = {g, roots[0], malloc(n * sizeof(uint32_t)), malloc(n * sizeof(uint32_t)),
                 malloc(n * sizeof(uint32_t)), malloc(n * sizeof(uint64_t)),
                 malloc(n * sizeof(uint64_t))};
    traverse_engine *e = traverse_reference_ops.open(g, 0, why, sizeof why);
    bool all_ok = e != NULL;
    for (int i = 0; i < 16 && all_ok; i++) {
        all_ok &= traverse_reference_ops.bfs(e, roots[i], f.parent, why, sizeof why) == 0;
        all_ok &= g500_validate_bfs(g, roots[i], f.parent, f.level, why, sizeof why) == 0;
        all_ok &= traverse_reference_ops.sssp(e, roots[i], f.dist, why, sizeof why) == 0;
        all_ok &= g500_validate_sssp(g, roots[i], f.dist, why, sizeof why) == 0;
        /* Levels are BFS distances: SSSP with unit weights gives them. */
        g500_csr unit = {g->vertices, g->offsets, g->targets, NULL};
        uint64_t *hops = f.dbad;
        traverse_engine *u = traverse_reference_ops.open(&unit, 0, why, sizeof why);
        all_ok &= u != NULL && traverse_reference_ops.sssp(u, roots[i], hops, why, sizeof why) == 0;
        for (uint32_t v = 0; all_ok && v < n; v++)
            all_ok &= hops[v] == (f.level[v] == G500_NO_LEVEL ? G500_INF : f.level[v]);
        traverse_reference_ops.close(u);
    }
    if (!ok(all_ok, "the reference's BFS and SSSP from 16 roots pass, levels = hop distances"))
        diag("%s", why);
    /* The fixture: root 0's results, copies to corrupt. */
    traverse_reference_ops.bfs(e, f.root, f.parent, why, sizeof why);
    g500_validate_bfs(g, f.root, f.parent, f.level, why, sizeof why);
    traverse_reference_ops.sssp(e, f.root, f.dist, why, sizeof why);
    memcpy(f.bad, f.parent, n * sizeof *f.bad);
    memcpy(f.dbad, f.dist, n * sizeof *f.dbad);
    corrupt_bfs(&f);
    corrupt_sssp(&f);
    uint64_t edges = g500_component_edges(&(g500_edge_list){0, 0, 0, 0, NULL}, f.parent);
    is(edges, 0, "no tuples, no traversed edges");
    traverse_reference_ops.close(e);
    free(f.parent);
    free(f.bad);
    free(f.level);
    free(f.dist);
    free(f.dbad);
}

static void test_teps(void)
{
    g500_edge e[] = {{0, 1}, {1, 1}, {2, 3}, {1, 0}};
    g500_edge_list el = {2, 4, 4, 1, e};
    uint32_t parent[] = {0, 0, G500_NO_PARENT, G500_NO_PARENT};
    is(g500_component_edges(&el, parent), 3, "tuples in the component, repeats and loops counted");
    double t[] = {1, 2, 4};
    g500_teps_stats s = g500_teps_summary(t, 3);
    ok(s.harmonic_mean > 1.7142 && s.harmonic_mean < 1.7143 && s.min == 1 && s.max == 4,
       "harmonic mean of 1, 2, 4 is 12/7");
}

int main(void)
{
    test_generator();
    test_csr_small();
    g500_edge_list el;
    g500_graph g;
    if (g500_generate(SCALE, EF, 1, &el, why, sizeof why) != 0 ||
        g500_csr_build(&el, &g, why, sizeof why) != 0)
        bail_out("cannot build the scale %d graph: %s", SCALE, why);
    test_golden(&el, &g);
    test_csr_generated(&el, &g);
    uint32_t roots[16];
    test_roots(&g.csr, roots);
    test_reference_small();
    test_validators(&g, roots);
    test_teps();
    g500_graph_free(&g);
    g500_edge_list_free(&el);
    return done_testing();
}
