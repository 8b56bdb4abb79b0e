/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/graph500/reference.c - the sequential reference engine every
 * other engine's output is compared with: BFS with a FIFO queue, SSSP by
 * Dijkstra with an indexed binary heap (decrease-key, so the heap never
 * holds more than the vertices), connected components by union-find
 * (g500_union_find), PageRank by power iteration in double precision.
 * All memory is taken in open. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph500.h"

#define NOT_IN_HEAP UINT32_MAX

struct traverse_engine {
    const g500_csr *g;
    uint32_t *queue; /* BFS FIFO; the heap's vertices in SSSP */
    uint32_t *pos;   /* vertex -> heap slot, or NOT_IN_HEAP */
    double *contrib; /* PageRank: score / degree of the previous iteration */
};

static traverse_engine *ref_open(const g500_csr *g, unsigned threads, char *why, size_t why_len)
{
    (void)threads; /* sequential by definition */
    traverse_engine *e = malloc(sizeof *e);
    uint32_t *queue = malloc(((size_t)g->vertices + 1) * sizeof *queue);
    uint32_t *pos = malloc(((size_t)g->vertices + 1) * sizeof *pos);
    double *contrib = malloc(((size_t)g->vertices + 1) * sizeof *contrib);
    if (e == NULL || queue == NULL || pos == NULL || contrib == NULL) {
        free(e);
        free(queue);
        free(pos);
        free(contrib);
        snprintf(why, why_len, "reference engine: out of memory for %u vertices", g->vertices);
        return NULL;
    }
    *e = (traverse_engine){g, queue, pos, contrib};
    return e;
}

static int check_root(const traverse_engine *e, uint32_t root, char *why, size_t why_len)
{
    if (root < e->g->vertices)
        return 0;
    snprintf(why, why_len, "reference engine: root %u, but the graph has %u vertices. Fix: a root "
             "below the vertex count", root, e->g->vertices);
    return -1;
}

static int ref_bfs(traverse_engine *e, uint32_t root, uint32_t *parent, char *why, size_t why_len)
{
    if (check_root(e, root, why, why_len) != 0)
        return -1;
    const g500_csr *g = e->g;
    for (uint32_t v = 0; v < g->vertices; v++)
        parent[v] = G500_NO_PARENT;
    uint32_t head = 0, tail = 0;
    parent[root] = root;
    e->queue[tail++] = root;
    while (head < tail) {
        const uint32_t u = e->queue[head++];
        for (uint64_t k = g->offsets[u]; k < g->offsets[u + 1]; k++) {
            const uint32_t v = g->targets[k];
            if (parent[v] == G500_NO_PARENT) {
                parent[v] = u;
                e->queue[tail++] = v;
            }
        }
    }
    return 0;
}

/* ---- the indexed heap, keyed by dist[] ------------------------------- */

typedef struct heap {
    uint32_t *v;   /* slots */
    uint32_t *pos; /* vertex -> slot */
    const uint64_t *key;
    uint32_t n;
} heap;

static void heap_place(heap *h, uint32_t slot, uint32_t v)
{
    h->v[slot] = v;
    h->pos[v] = slot;
}

static void heap_up(heap *h, uint32_t slot)
{
    const uint32_t v = h->v[slot];
    while (slot > 0) {
        const uint32_t up = (slot - 1) / 2;
        if (h->key[h->v[up]] <= h->key[v])
            break;
        heap_place(h, slot, h->v[up]);
        slot = up;
    }
    heap_place(h, slot, v);
}

static void heap_down(heap *h, uint32_t slot)
{
    const uint32_t v = h->v[slot];
    for (;;) {
        uint32_t c = 2 * slot + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->key[h->v[c + 1]] < h->key[h->v[c]])
            c++;
        if (h->key[v] <= h->key[h->v[c]])
            break;
        heap_place(h, slot, h->v[c]);
        slot = c;
    }
    heap_place(h, slot, v);
}

static uint32_t heap_pop(heap *h)
{
    const uint32_t top = h->v[0];
    h->pos[top] = NOT_IN_HEAP;
    if (--h->n > 0) {
        h->v[0] = h->v[h->n];
        heap_down(h, 0);
    }
    return top;
}

/* dist[v] was just lowered: v enters the heap or moves up in it. */
static void heap_lowered(heap *h, uint32_t v)
{
    if (h->pos[v] == NOT_IN_HEAP) {
        h->v[h->n] = v;
        heap_up(h, h->n++);
    } else {
        heap_up(h, h->pos[v]);
    }
}

static int ref_sssp(traverse_engine *e, uint32_t root, uint64_t *dist, char *why, size_t why_len)
{
    if (check_root(e, root, why, why_len) != 0)
        return -1;
    const g500_csr *g = e->g;
    for (uint32_t v = 0; v < g->vertices; v++) {
        dist[v] = G500_INF;
        e->pos[v] = NOT_IN_HEAP;
    }
    heap h = {e->queue, e->pos, dist, 0};
    dist[root] = 0;
    heap_lowered(&h, root);
    while (h.n > 0) {
        const uint32_t u = heap_pop(&h);
        const uint64_t du = dist[u];
        for (uint64_t k = g->offsets[u]; k < g->offsets[u + 1]; k++) {
            const uint32_t v = g->targets[k];
            const uint64_t d = du + (g->weights != NULL ? g->weights[k] : 1u);
            if (d < dist[v]) {
                dist[v] = d;
                heap_lowered(&h, v);
            }
        }
    }
    return 0;
}

static int ref_cc(traverse_engine *e, uint32_t *comp, char *why, size_t why_len)
{
    (void)why;
    (void)why_len;
    g500_union_find(e->g, comp);
    return 0;
}

static int ref_pr(traverse_engine *e, double *score, uint32_t *iterations, char *why, size_t why_len)
{
    (void)why;
    (void)why_len;
    const g500_csr *g = e->g;
    const uint32_t n = g->vertices;
    const double base = (1.0 - TRAVERSE_PR_DAMPING) / n;
    for (uint32_t v = 0; v < n; v++)
        score[v] = 1.0 / n;
    uint32_t it = 0;
    while (it < TRAVERSE_PR_MAX_ITERS) {
        it++;
        for (uint32_t v = 0; v < n; v++) {
            uint64_t deg = g->offsets[v + 1] - g->offsets[v];
            e->contrib[v] = deg > 0 ? score[v] / (double)deg : 0.0;
        }
        double change = 0;
        for (uint32_t v = 0; v < n; v++) {
            double sum = 0;
            for (uint64_t k = g->offsets[v]; k < g->offsets[v + 1]; k++)
                sum += e->contrib[g->targets[k]];
            double next = base + TRAVERSE_PR_DAMPING * sum;
            change += fabs(next - score[v]);
            score[v] = next;
        }
        if (change < TRAVERSE_PR_TOLERANCE)
            break;
    }
    *iterations = it;
    return 0;
}

static void ref_close(traverse_engine *e)
{
    if (e == NULL)
        return;
    free(e->queue);
    free(e->pos);
    free(e->contrib);
    free(e);
}

const traverse_ops traverse_reference_ops = {"reference", ref_open, ref_bfs, ref_sssp, ref_close,
                                             ref_cc, ref_pr, NULL};
