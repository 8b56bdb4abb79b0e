/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/graph500/graph500.h - the Graph500-style kit the graph example
 * (examples/graph_bfs.c), the graph benchmark (bench/graph_bench.c) and
 * tests/test_graph500_kit.c share: a Kronecker edge generator, an undirected
 * CSR builder, root sampling, the BFS and SSSP validation rules, and TEPS.
 *
 * One job per file:
 *   rng.c          the counter-based random numbers everything else draws
 *   kronecker.c    the edge list (g500_generate)
 *   csr.c          the CSR graph (g500_csr_build, g500_csr_free)
 *   roots.c        the search keys (g500_sample_roots)
 *   validate_bfs.c Graph500's BFS rules (g500_validate_bfs)
 *   validate_sssp.c the SSSP rules (g500_validate_sssp)
 *   urand.c        the uniform random edge list (g500_generate_urand)
 *   edgelist.c     GAPBS's text edge lists: write (.el/.wel) and read
 *   validate_cc.c  union-find and the components rule (g500_validate_cc)
 *   validate_pr.c  the PageRank rule (g500_validate_pr)
 *   teps.c         edges traversed and TEPS statistics
 *   reference.c    the sequential reference engine (traverse_reference_ops)
 *
 * Every function that allocates returns an error (with a message in why)
 * when an allocation fails; none aborts. None keeps global state: calls on
 * distinct objects may run concurrently. */
#ifndef MKRT_EXAMPLES_GRAPH500_H
#define MKRT_EXAMPLES_GRAPH500_H

#include <stddef.h>
#include <stdint.h>

#include "traverse.h"

/* Kronecker initiator (Graph500): a vertex pair falls in the top-left
 * quadrant with probability A, top-right B, bottom-left C, bottom-right
 * 1 - A - B - C at every one of the scale bit levels. */
#define G500_A 0.57
#define G500_B 0.19
#define G500_C 0.19

/* Largest scale the kit accepts (vertex ids are 32-bit). */
#define G500_MAX_SCALE 31

/* ---- random numbers (rng.c) ------------------------------------------ */

/** The 64-bit mix of splitmix64: a bijection that scatters its input bits
 *  (inline: the generator calls it ten times per edge at scale 20). */
static inline uint64_t g500_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    x ^= x >> 31;
    return x;
}

/** Added to a splitmix64 counter per step (2^64 / golden ratio, odd). */
#define G500_GOLDEN 0x9e3779b97f4a7c15u

/** A sequential generator (splitmix64 stream). */
typedef struct g500_rng {
    uint64_t state;
} g500_rng;

/** A stream for seed and a purpose (stream), independent of the others. */
void g500_rng_init(g500_rng *r, uint64_t seed, uint64_t stream);
/** The next 64 random bits. */
uint64_t g500_rng_next(g500_rng *r);
/** Uniform in [0, bound) (bound > 0), without modulo bias. */
uint64_t g500_rng_below(g500_rng *r, uint64_t bound);

/* ---- the edge list (kronecker.c) ------------------------------------- */

/** An undirected edge tuple as generated (u == v and repeats occur). */
typedef struct g500_edge {
    uint32_t u, v;
} g500_edge;

/** The generated edge list: edges = edgefactor << scale tuples over
 *  vertices = 1 << scale vertices, vertex ids permuted and tuples shuffled. */
typedef struct g500_edge_list {
    uint32_t scale;
    uint32_t vertices;
    uint64_t edges;
    uint64_t seed;
    g500_edge *edge; /* malloc'ed; g500_edge_list_free releases it */
} g500_edge_list;

/** Generates the Kronecker edge list for (scale 1..G500_MAX_SCALE,
 *  edgefactor >= 1, seed): the same arguments give the same list on every
 *  machine. Returns 0, or -1 with a message in why (bad arguments,
 *  allocation failure) and *out zeroed. */
int g500_generate(uint32_t scale, uint32_t edgefactor, uint64_t seed, g500_edge_list *out,
                  char *why, size_t why_len);
/** Releases the list (NULL-safe; the struct is zeroed). */
void g500_edge_list_free(g500_edge_list *el);

/** The uniform random edge list (GAPBS's -u, Erdos-Renyi style): the same
 *  shape as g500_generate's (edgefactor << scale tuples over 1 << scale
 *  vertices), each endpoint drawn uniformly; deterministic for seed.
 *  Returns 0, or -1 with a message in why and *out zeroed. */
int g500_generate_urand(uint32_t scale, uint32_t edgefactor, uint64_t seed, g500_edge_list *out,
                        char *why, size_t why_len);

/** The graph families g500_generate_family knows ("kron", "urand"). */
typedef enum g500_family { G500_KRON = 0, G500_URAND = 1 } g500_family;
/** The family named name into *out; -1 (and why says which names there
 *  are) for any other name. */
int g500_family_parse(const char *name, g500_family *out, char *why, size_t why_len);
/** "kron" or "urand". */
const char *g500_family_name(g500_family f);
/** g500_generate or g500_generate_urand, by family. */
int g500_generate_family(g500_family f, uint32_t scale, uint32_t edgefactor, uint64_t seed,
                         g500_edge_list *out, char *why, size_t why_len);

/* ---- GAPBS edge lists (edgelist.c) ----------------------------------- */

/** Writes g's undirected edges to path as GAPBS reads them: one line
 *  "u v" per edge {u, v} with u < v ("u v w" with the weight when
 *  weighted: a .wel file), read back with GAPBS's -s (symmetrize) as the
 *  same undirected graph. GAPBS takes the vertex count from the largest id
 *  in the file, so when vertex n - 1 has no edge a self loop
 *  "n-1 n-1" ends the file (GAPBS drops self loops after counting).
 *  Returns 0, or -1 with a message in why (cannot write). */
int g500_write_el(const g500_csr *g, const char *path, int weighted, char *why, size_t why_len);

/** Reads a text edge list (GAPBS's .el "u v" or .wel "u v w" lines;
 *  blank lines and lines starting with '#' skipped; weights are read and
 *  dropped: the CSR builder derives its own) into *out with seed 1.
 *  vertices: the vertex count the ids must be below (0: the largest id
 *  plus one). Returns 0, or -1 with a message in why naming the file, the
 *  line and the fix: unreadable file, a line with one id (truncated), a
 *  field that is not a decimal id, an id >= vertices (or above
 *  UINT32_MAX - 1), no edges, or out of memory; *out zeroed then. */
int g500_read_el(const char *path, uint32_t vertices, g500_edge_list *out, char *why,
                 size_t why_len);

/* ---- the CSR graph (csr.c) ------------------------------------------- */

/** A CSR graph the kit owns: the traverse.h view (csr) plus the storage. */
typedef struct g500_graph {
    g500_csr csr;        /* what engines are given */
    uint64_t *offsets;   /* vertices + 1 */
    uint32_t *targets;   /* offsets[vertices] */
    uint32_t *weights;   /* parallel to targets, each in 1..255 */
    uint64_t self_loops; /* input tuples dropped as u == v */
    uint64_t duplicates; /* undirected edges dropped as repeats */
} g500_graph;

/** Builds the undirected CSR of el: both directions of every edge, self
 *  loops dropped, repeated edges stored once (so BFS and SSSP work and
 *  every engine's matrix is the simple graph), each row sorted by target.
 *  The weight of edge {u, v} is the same in both directions and derived
 *  from (el->seed, min(u,v), max(u,v)), in 1..255. Returns 0, or -1 with a
 *  message in why (allocation failure, a tuple naming a vertex id >=
 *  el->vertices) and *g zeroed. */
int g500_csr_build(const g500_edge_list *el, g500_graph *g, char *why, size_t why_len);
/** Releases the graph (NULL-safe; the struct is zeroed). */
void g500_graph_free(g500_graph *g);
/** The weight the builder gives edge {u, v} for seed (symmetric, 1..255). */
uint32_t g500_edge_weight(uint64_t seed, uint32_t u, uint32_t v);

/* ---- search keys (roots.c) ------------------------------------------- */

/** Picks n distinct random vertices of degree > 0 (Graph500's search
 *  keys), deterministic for seed. Returns 0, or -1 with a message in why
 *  when the graph has fewer than n such vertices. */
int g500_sample_roots(const g500_csr *g, uint64_t seed, uint32_t n, uint32_t *roots, char *why,
                      size_t why_len);

/* ---- validation (validate_bfs.c, validate_sssp.c) -------------------- */

/** Unreached vertex in a level array. */
#define G500_NO_LEVEL UINT32_MAX

/** Checks a BFS parent array against Graph500's rules: parent[root] ==
 *  root; parents are in range; following parents from any reached vertex
 *  ends at root without a cycle (a tree rooted at root); every tree edge
 *  (parent[v], v) is a graph edge; the endpoints of every graph edge are at
 *  most one level apart; and the reached vertices are exactly root's
 *  component (no graph edge joins a reached and an unreached vertex).
 *  level (g->vertices entries, or NULL) receives each vertex's depth in the
 *  tree, G500_NO_LEVEL where unreached: equal to the BFS distance when the
 *  rules hold. Returns 0, 1 with the first broken rule in why, or -1 with a
 *  message in why (allocation failure, root out of range). */
int g500_validate_bfs(const g500_csr *g, uint32_t root, const uint32_t *parent, uint32_t *level,
                      char *why, size_t why_len);

/** Checks SSSP distances: dist[root] == 0; for every edge (u, v, w) with u
 *  reached, dist[v] <= dist[u] + w; every reached vertex but root has a
 *  neighbour u with dist[v] == dist[u] + w; the unreached vertices (G500_INF)
 *  are exactly those outside root's component. With weights >= 1 these
 *  make dist the shortest distances. Returns 0, 1 with the first broken
 *  rule in why, or -1 with a message in why (root out of range). */
int g500_validate_sssp(const g500_csr *g, uint32_t root, const uint64_t *dist, char *why,
                       size_t why_len);

/** Union-find over g's edges: comp[v] = the smallest vertex of v's
 *  component (comp has g->vertices entries). */
void g500_union_find(const g500_csr *g, uint32_t *comp);

/** Checks a component labelling: every label below g->vertices, and two
 *  vertices share a label exactly when union-find puts them in one
 *  component. *components receives the number of components (may be
 *  NULL). Returns 0, 1 with the first broken rule in why, or -1 with a
 *  message in why (allocation failure). */
int g500_validate_cc(const g500_csr *g, const uint32_t *comp, uint32_t *components, char *why,
                     size_t why_len);

/** Checks PageRank scores against the reference's (same damping and
 *  tolerance): the L1 distance sum |score - ref| is at most tolerance,
 *  and no score is NaN. *l1 receives the distance (may be NULL). Returns
 *  0, or 1 with the distance and the worst vertex in why. */
int g500_validate_pr(uint32_t vertices, const double *score, const double *ref, double tolerance,
                     double *l1, char *why, size_t why_len);

/** PageRank's fixed point (damping 0.85, traverse.h's formula) within
 *  max_l1 of it: Jacobi iterations (at most 5000) until d / (1 - d) times
 *  an iteration's L1 change is below max_l1. Returns 0, or -1 with why
 *  when out of memory. */
int g500_pagerank_fixed_point(const g500_csr *g, double max_l1, double *score, char *why, size_t why_len);

/** GAPBS's PageRank rule as its pr runs it, for comparing accuracy: scores
 *  from 1/n, iterated in place (each vertex's new score / degree is read
 *  by the vertices after it in the same iteration), all in float, until
 *  an iteration's L1 change is below tolerance or after max_iters; the
 *  iterations run into *iterations. Returns 0, or -1 with why when out of
 *  memory. */
int g500_pagerank_in_place(const g500_csr *g, double tolerance, uint32_t max_iters, double *score,
                           uint32_t *iterations, char *why, size_t why_len);

/* ---- TEPS (teps.c) ---------------------------------------------------- */

/** Graph500's traversed edge count: the input tuples of el (repeats and
 *  self loops included, as the specification counts them) whose endpoint
 *  u is reached (parent[u] != G500_NO_PARENT), which puts both endpoints
 *  in root's component. */
uint64_t g500_component_edges(const g500_edge_list *el, const uint32_t *parent);

/** Statistics over the per-root TEPS figures (n > 0, each > 0). */
typedef struct g500_teps_stats {
    double harmonic_mean; /* what Graph500 reports */
    double min, max;
} g500_teps_stats;

/** The statistics of teps[0..n). */
g500_teps_stats g500_teps_summary(const double *teps, size_t n);

/* ---- timing ----------------------------------------------------------- */

/** Monotonic seconds (for timing the searches). */
double g500_seconds(void);

#endif
