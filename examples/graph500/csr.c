/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/graph500/csr.c - the undirected CSR graph of an edge list.
 *
 * Two counting sorts, no comparison sort: the tuples are scattered into
 * rows (both directions, self loops dropped), which gives every row its
 * neighbours in input order; scattering those rows again, row by row in
 * vertex order, transposes the graph - the same graph, as it is symmetric -
 * with every row now sorted by target. Repeats are then adjacent and each
 * row is compacted in place. Weights come from g500_edge_weight. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph500.h"

enum { STREAM_WEIGHTS = 4 };

uint32_t g500_edge_weight(uint64_t seed, uint32_t u, uint32_t v)
{
    uint64_t lo = u < v ? u : v, hi = u < v ? v : u;
    uint64_t h = g500_mix64(g500_mix64(seed + STREAM_WEIGHTS * G500_GOLDEN) ^ (lo << 32 | hi));
    return 1u + (uint32_t)(h % 255u);
}

static int oom(char *why, size_t why_len, const char *what, uint64_t n)
{
    snprintf(why, why_len,
             "g500_csr_build: out of memory for %s (%llu entries). Fix: a smaller scale or edge "
             "factor",
             what, (unsigned long long)n);
    return -1;
}

/* offsets[v] = first slot of row v, from the degrees in offsets[v + 1]. */
static void prefix_sum(uint64_t *offsets, uint32_t vertices)
{
    offsets[0] = 0;
    for (uint32_t v = 0; v < vertices; v++)
        offsets[v + 1] += offsets[v];
}

/* Removes repeats from each sorted row, moving rows down; returns the new
 * number of slots. */
static uint64_t compact_rows(uint64_t *offsets, uint32_t *targets, uint32_t vertices)
{
    uint64_t w = 0, start = 0;
    for (uint32_t u = 0; u < vertices; u++) {
        uint64_t end = offsets[u + 1];
        offsets[u] = w;
        for (uint64_t k = start; k < end; k++)
            if (k == start || targets[k] != targets[k - 1])
                targets[w++] = targets[k];
        start = end;
    }
    offsets[vertices] = w;
    return w;
}

int g500_csr_build(const g500_edge_list *el, g500_graph *g, char *why, size_t why_len)
{
    memset(g, 0, sizeof *g);
    const uint32_t n = el->vertices;
    uint64_t *offsets = calloc((size_t)n + 1, sizeof *offsets);
    uint64_t *cursor = malloc(((size_t)n + 1) * sizeof *cursor);
    if (offsets == NULL || cursor == NULL) {
        free(offsets);
        free(cursor);
        return oom(why, why_len, "the row offsets", (uint64_t)n + 1);
    }
    uint64_t loops = 0;
    for (uint64_t i = 0; i < el->edges; i++) {
        g500_edge e = el->edge[i];
        if (e.u >= n || e.v >= n) {
            free(offsets);
            free(cursor);
            snprintf(why, why_len,
                     "g500_csr_build: edge tuple %llu is (%u, %u) but the graph has %u vertices. "
                     "Fix: build from the list g500_generate made",
                     (unsigned long long)i, e.u, e.v, n);
            return -1;
        }
        if (e.u == e.v) {
            loops++;
            continue;
        }
        offsets[e.u + 1]++;
        offsets[e.v + 1]++;
    }
    prefix_sum(offsets, n);
    const uint64_t slots = offsets[n];
    uint32_t *rows = malloc((size_t)(slots ? slots : 1) * sizeof *rows);
    uint32_t *targets = malloc((size_t)(slots ? slots : 1) * sizeof *targets);
    if (rows == NULL || targets == NULL) {
        free(offsets);
        free(cursor);
        free(rows);
        free(targets);
        return oom(why, why_len, "the neighbour lists", slots);
    }
    /* Rows in input order. */
    memcpy(cursor, offsets, ((size_t)n + 1) * sizeof *cursor);
    for (uint64_t i = 0; i < el->edges; i++) {
        g500_edge e = el->edge[i];
        if (e.u == e.v)
            continue;
        rows[cursor[e.u]++] = e.v;
        rows[cursor[e.v]++] = e.u;
    }
    /* The transpose (the same symmetric graph), rows sorted by target. */
    memcpy(cursor, offsets, ((size_t)n + 1) * sizeof *cursor);
    for (uint32_t t = 0; t < n; t++)
        for (uint64_t k = offsets[t]; k < offsets[t + 1]; k++)
            targets[cursor[rows[k]]++] = t;
    free(rows);
    free(cursor);
    const uint64_t kept = compact_rows(offsets, targets, n);
    uint32_t *shrunk = realloc(targets, (size_t)(kept ? kept : 1) * sizeof *targets);
    if (shrunk != NULL) /* else the larger block serves as well */
        targets = shrunk;
    uint32_t *weights = malloc((size_t)(kept ? kept : 1) * sizeof *weights);
    if (weights == NULL) {
        free(offsets);
        free(targets);
        return oom(why, why_len, "the weights", kept);
    }
    for (uint32_t u = 0; u < n; u++)
        for (uint64_t k = offsets[u]; k < offsets[u + 1]; k++)
            weights[k] = g500_edge_weight(el->seed, u, targets[k]);
    g->offsets = offsets;
    g->targets = targets;
    g->weights = weights;
    g->self_loops = loops;
    g->duplicates = (slots - kept) / 2;
    g->csr = (g500_csr){n, offsets, targets, weights};
    return 0;
}

void g500_graph_free(g500_graph *g)
{
    if (g == NULL)
        return;
    free(g->offsets);
    free(g->targets);
    free(g->weights);
    memset(g, 0, sizeof *g);
}
