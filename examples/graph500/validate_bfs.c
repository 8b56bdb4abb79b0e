/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/graph500/validate_bfs.c - Graph500's rules for a BFS parent
 * array (g500_validate_bfs in graph500.h lists them).
 *
 * The levels come from the tree itself: each reached vertex's parent chain
 * is walked up to a vertex of known level (root has level 0), marking the
 * walk so a cycle shows as a vertex met twice, then numbered on a second
 * walk; every vertex is walked over once, so this is linear. One scan of
 * the edges then checks the level distances, the component, and finds a
 * graph edge for every tree edge. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph500.h"

#define IN_PROGRESS (G500_NO_LEVEL - 1)

/* Numbers the chain from v up to a vertex of known level. Returns 0, or 1
 * with the broken rule in why. */
static int level_chain(uint32_t root, const uint32_t *parent, uint32_t *level,
                       uint32_t v, char *why, size_t why_len)
{
    uint32_t x = v, steps = 0;
    while (level[x] == G500_NO_LEVEL) {
        if (parent[x] == G500_NO_PARENT) {
            snprintf(why, why_len,
                     "BFS from %u: vertex %u's parent chain reaches vertex %u, which is unreached "
                     "(no parent): the tree is not rooted at %u",
                     root, v, x, root);
            return 1;
        }
        level[x] = IN_PROGRESS;
        x = parent[x];
        steps++;
    }
    if (level[x] == IN_PROGRESS) {
        snprintf(why, why_len,
                 "BFS from %u: vertex %u's parent chain runs into a cycle at vertex %u: the parents "
                 "are not a tree",
                 root, v, x);
        return 1;
    }
    uint32_t depth = level[x] + steps;
    for (uint32_t y = v; y != x; y = parent[y])
        level[y] = depth--;
    return 0;
}

/* Levels of every reached vertex; 0, or 1 with the broken rule in why. */
static int tree_levels(const g500_csr *g, uint32_t root, const uint32_t *parent, uint32_t *level,
                       char *why, size_t why_len)
{
    const uint32_t n = g->vertices;
    for (uint32_t v = 0; v < n; v++) {
        level[v] = G500_NO_LEVEL;
        if (parent[v] != G500_NO_PARENT && parent[v] >= n) {
            snprintf(why, why_len,
                     "BFS from %u: parent[%u] = %u is not a vertex (the graph has %u)", root, v,
                     parent[v], n);
            return 1;
        }
    }
    if (parent[root] != root) {
        snprintf(why, why_len, "BFS from %u: parent[root] is %u, not the root itself", root,
                 parent[root]);
        return 1;
    }
    level[root] = 0;
    for (uint32_t v = 0; v < n; v++)
        if (parent[v] != G500_NO_PARENT && level[v] == G500_NO_LEVEL &&
            level_chain(root, parent, level, v, why, why_len) != 0)
            return 1;
    return 0;
}

/* The edge scan; tree_edge[v] is set where (parent[v], v) is a graph edge. */
static int check_edges(const g500_csr *g, uint32_t root, const uint32_t *parent,
                       const uint32_t *level, bool *tree_edge, char *why, size_t why_len)
{
    for (uint32_t u = 0; u < g->vertices; u++) {
        const uint32_t lu = level[u];
        for (uint64_t k = g->offsets[u]; k < g->offsets[u + 1]; k++) {
            const uint32_t v = g->targets[k], lv = level[v];
            if ((lu == G500_NO_LEVEL) != (lv == G500_NO_LEVEL)) {
                uint32_t in = lu == G500_NO_LEVEL ? v : u, out = lu == G500_NO_LEVEL ? u : v;
                snprintf(why, why_len,
                         "BFS from %u: edge (%u, %u) joins reached vertex %u and unreached vertex "
                         "%u: the reached vertices are not root's component",
                         root, u, v, in, out);
                return 1;
            }
            if (lu != G500_NO_LEVEL && (lu > lv + 1 || lv > lu + 1)) {
                snprintf(why, why_len,
                         "BFS from %u: edge (%u, %u) joins levels %u and %u, more than one apart: "
                         "not a breadth-first tree",
                         root, u, v, lu, lv);
                return 1;
            }
            if (parent[v] == u)
                tree_edge[v] = true;
        }
    }
    return 0;
}

int g500_validate_bfs(const g500_csr *g, uint32_t root, const uint32_t *parent, uint32_t *level,
                      char *why, size_t why_len)
{
    const uint32_t n = g->vertices;
    if (root >= n) {
        snprintf(why, why_len, "g500_validate_bfs: root %u, but the graph has %u vertices", root, n);
        return -1;
    }
    uint32_t *own = level == NULL ? malloc((size_t)n * sizeof *own) : NULL;
    bool *tree_edge = calloc(n, sizeof *tree_edge);
    uint32_t *lv = level != NULL ? level : own;
    if (lv == NULL || tree_edge == NULL) {
        free(own);
        free(tree_edge);
        snprintf(why, why_len, "g500_validate_bfs: out of memory for %u vertices", n);
        return -1;
    }
    int rc = tree_levels(g, root, parent, lv, why, why_len);
    if (rc == 0)
        rc = check_edges(g, root, parent, lv, tree_edge, why, why_len);
    for (uint32_t v = 0; rc == 0 && v < n; v++)
        if (v != root && parent[v] != G500_NO_PARENT && !tree_edge[v]) {
            snprintf(why, why_len,
                     "BFS from %u: tree edge (%u, %u) (parent[%u]) is not an edge of the graph",
                     root, parent[v], v, v);
            rc = 1;
        }
    free(own);
    free(tree_edge);
    return rc;
}
