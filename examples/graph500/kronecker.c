/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/graph500/kronecker.c - the Graph500 Kronecker edge list.
 *
 * Tuple i draws its two endpoints bit by bit: at each of the scale levels
 * one 32-bit uniform picks a quadrant of the adjacency matrix with the
 * initiator's probabilities (G500_A, G500_B, G500_C, the rest for the
 * fourth), which sets that bit of u and of v. The draws of tuple i come
 * from a counter stream keyed by (seed, i), so the list does not depend on
 * the order tuples are made in. Then, as Graph500 does so that vertex ids
 * carry no locality, the vertex ids are permuted and the tuples shuffled
 * (Fisher-Yates, streams of their own). Self loops and repeats stay: they
 * are input tuples as the specification generates them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph500.h"

enum { STREAM_EDGES = 1, STREAM_PERMUTE = 2, STREAM_SHUFFLE = 3 };

/* The initiator as 32-bit thresholds on one uniform draw. */
typedef struct initiator {
    uint32_t a, ab, abc;
} initiator;

static initiator initiator_thresholds(void)
{
    const double two32 = 4294967296.0;
    return (initiator){(uint32_t)(G500_A * two32), (uint32_t)((G500_A + G500_B) * two32),
                       (uint32_t)((G500_A + G500_B + G500_C) * two32)};
}

/* One level: sets bit `bit` of *u and *v from the draw r, without a branch
 * (the quadrant is random, so branches would mispredict half the time):
 * u's bit is set in the bottom half (r >= ab); v's in the right half, the
 * second and fourth ranges, which is what the parity of the three
 * comparisons gives. */
static inline void pick_quadrant(const initiator *t, uint32_t r, uint32_t bit, uint32_t *u,
                                 uint32_t *v)
{
    const uint32_t ge_a = r >= t->a, ge_ab = r >= t->ab, ge_abc = r >= t->abc;
    *u |= bit & (0u - ge_ab);
    *v |= bit & (0u - (ge_a ^ ge_ab ^ ge_abc));
}

static void make_tuples(g500_edge *e, uint64_t edges, uint32_t scale, uint64_t seed)
{
    const initiator t = initiator_thresholds();
    const uint64_t key = g500_mix64(seed ^ g500_mix64(STREAM_EDGES + G500_GOLDEN));
    for (uint64_t i = 0; i < edges; i++) {
        uint64_t state = g500_mix64(key + i * G500_GOLDEN);
        uint32_t u = 0, v = 0;
        for (uint32_t level = 0; level < scale; level += 2) {
            state += G500_GOLDEN;
            uint64_t r = g500_mix64(state);
            pick_quadrant(&t, (uint32_t)r, 1u << level, &u, &v);
            if (level + 1 < scale)
                pick_quadrant(&t, (uint32_t)(r >> 32), 1u << (level + 1), &u, &v);
        }
        e[i] = (g500_edge){u, v};
    }
}

/* Relabels the vertices by a random permutation of [0, vertices). */
static int permute_vertices(g500_edge *e, uint64_t edges, uint32_t vertices, uint64_t seed)
{
    uint32_t *perm = malloc((size_t)vertices * sizeof *perm);
    if (perm == NULL)
        return -1;
    for (uint32_t i = 0; i < vertices; i++)
        perm[i] = i;
    g500_rng r;
    g500_rng_init(&r, seed, STREAM_PERMUTE);
    for (uint32_t i = vertices - 1; i > 0; i--) {
        uint32_t j = (uint32_t)g500_rng_below(&r, (uint64_t)i + 1);
        uint32_t tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
    for (uint64_t i = 0; i < edges; i++)
        e[i] = (g500_edge){perm[e[i].u], perm[e[i].v]};
    free(perm);
    return 0;
}

static void shuffle_tuples(g500_edge *e, uint64_t edges, uint64_t seed)
{
    g500_rng r;
    g500_rng_init(&r, seed, STREAM_SHUFFLE);
    for (uint64_t i = edges - 1; i > 0; i--) {
        uint64_t j = g500_rng_below(&r, i + 1);
        g500_edge tmp = e[i];
        e[i] = e[j];
        e[j] = tmp;
    }
}

int g500_generate(uint32_t scale, uint32_t edgefactor, uint64_t seed, g500_edge_list *out,
                  char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    if (scale < 1 || scale > G500_MAX_SCALE || edgefactor < 1) {
        snprintf(why, why_len,
                 "g500_generate: scale %u, edge factor %u. Fix: scale 1..%d and edge factor >= 1",
                 scale, edgefactor, G500_MAX_SCALE);
        return -1;
    }
    uint32_t vertices = 1u << scale;
    uint64_t edges = (uint64_t)edgefactor << scale;
    if (edges > SIZE_MAX / sizeof(g500_edge)) {
        snprintf(why, why_len,
                 "g500_generate: %llu edge tuples do not fit in memory. Fix: a smaller scale or "
                 "edge factor",
                 (unsigned long long)edges);
        return -1;
    }
    g500_edge *e = malloc((size_t)edges * sizeof *e);
    if (e == NULL) {
        snprintf(why, why_len,
                 "g500_generate: out of memory for %llu edge tuples (%llu MiB) at scale %u. Fix: "
                 "a smaller scale or edge factor",
                 (unsigned long long)edges, (unsigned long long)(edges * sizeof *e >> 20), scale);
        return -1;
    }
    make_tuples(e, edges, scale, seed);
    if (permute_vertices(e, edges, vertices, seed) != 0) {
        free(e);
        snprintf(why, why_len,
                 "g500_generate: out of memory for the permutation of %u vertices. Fix: a smaller "
                 "scale",
                 vertices);
        return -1;
    }
    shuffle_tuples(e, edges, seed);
    *out = (g500_edge_list){scale, vertices, edges, seed, e};
    return 0;
}

void g500_edge_list_free(g500_edge_list *el)
{
    if (el == NULL)
        return;
    free(el->edge);
    memset(el, 0, sizeof *el);
}
