/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/graph500/validate_cc.c - connected components by union-find
 * (the reference partition) and the rule an engine's labels must keep:
 * the partition they induce is union-find's. */
#include <stdio.h>
#include <stdlib.h>

#include "graph500.h"

static uint32_t find(uint32_t *p, uint32_t v)
{
    while (p[v] != v) {
        p[v] = p[p[v]]; /* path halving */
        v = p[v];
    }
    return v;
}

void g500_union_find(const g500_csr *g, uint32_t *comp)
{
    const uint32_t n = g->vertices;
    for (uint32_t v = 0; v < n; v++)
        comp[v] = v;
    for (uint32_t u = 0; u < n; u++)
        for (uint64_t k = g->offsets[u]; k < g->offsets[u + 1]; k++) {
            uint32_t a = find(comp, u), b = find(comp, g->targets[k]);
            if (a != b) { /* the smaller root wins: roots are the smallest vertices */
                if (a < b)
                    comp[b] = a;
                else
                    comp[a] = b;
            }
        }
    for (uint32_t v = 0; v < n; v++)
        comp[v] = find(comp, v);
}

int g500_validate_cc(const g500_csr *g, const uint32_t *comp, uint32_t *components, char *why,
                     size_t why_len)
{
    const uint32_t n = g->vertices;
    uint32_t *uf = malloc((size_t)n * sizeof *uf);
    uint32_t *root_label = malloc((size_t)n * sizeof *root_label);
    uint32_t *label_root = malloc((size_t)n * sizeof *label_root);
    if (uf == NULL || root_label == NULL || label_root == NULL) {
        free(uf);
        free(root_label);
        free(label_root);
        snprintf(why, why_len, "g500_validate_cc: out of memory for %u vertices", n);
        return -1;
    }
    g500_union_find(g, uf);
    for (uint32_t v = 0; v < n; v++)
        root_label[v] = label_root[v] = UINT32_MAX;
    int rc = 0;
    uint32_t count = 0;
    for (uint32_t v = 0; v < n && rc == 0; v++) {
        const uint32_t r = uf[v], l = comp[v];
        if (l >= n) {
            snprintf(why, why_len, "CC: vertex %u has label %u, not below the %u vertices", v, l, n);
            rc = 1;
        } else if (root_label[r] == UINT32_MAX && label_root[l] != UINT32_MAX) {
            snprintf(why, why_len, "CC: label %u is on vertex %u and on a vertex of another "
                     "component (union-find root %u): two components merged", l, v, label_root[l]);
            rc = 1;
        } else if (root_label[r] == UINT32_MAX) {
            root_label[r] = l; /* the first vertex of a component names its label */
            label_root[l] = r;
            count++;
        } else if (root_label[r] != l) {
            snprintf(why, why_len,
                     "CC: vertex %u has label %u, but its component (union-find root %u) has label "
                     "%u elsewhere: one component split in two",
                     v, l, r, root_label[r]);
            rc = 1;
        }
    }
    free(uf);
    free(root_label);
    free(label_root);
    if (rc == 0 && components != NULL)
        *components = count;
    return rc;
}
