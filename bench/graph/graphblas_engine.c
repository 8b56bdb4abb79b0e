/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/graph/graphblas_engine.c - BFS and SSSP on SuiteSparse:GraphBLAS,
 * written the way GraphBLAS users write them.
 *
 * BFS: the standard masked vector-matrix formulation. q is the frontier
 * and p the parents found so far; each level is q<!struct(p), replace> =
 * q ANY.SECONDI A (ANY_SECONDI is the parent-computing form of ANY_PAIR:
 * a newly found vertex j gets, as its value, the index i of any frontier
 * vertex with an edge i-j), then p<struct(q)> = q.
 *
 * SSSP: Bellman-Ford in min-plus over the weighted matrix, relaxing only
 * from the vertices whose distance changed in the previous round (f), until
 * a round changes nothing: t = f MIN.PLUS W; m = t < d (or d has no entry);
 * f<m, replace> = t; d = min(d, f).
 *
 * Threads: GxB_NTHREADS (process wide) as the bench asks. The matrices are
 * imported from the CSR once, in open (not timed). */
#ifdef HAVE_GRAPHBLAS
#include <GraphBLAS.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peers.h"

struct traverse_engine {
    const g500_csr *g;
    GrB_Index n;
    GrB_Matrix A, W;          /* pattern (iso bool) and weights (UINT64) */
    GrB_Vector q, p;          /* BFS frontier and parents (INT64) */
    GrB_Vector d, f, t;       /* SSSP distances, changed set, candidates (UINT64) */
    GrB_Vector m;             /* SSSP improvement mask (BOOL) */
    GrB_Index *idx;           /* extractTuples output, n entries */
    uint64_t *val;            /* n entries (INT64 parents reuse it) */
};

static bool graphblas_ready; /* GrB_init runs once per process */

#define TRY(call)                                                                                  \
    do {                                                                                           \
        GrB_Info info_ = (call);                                                                   \
        if (info_ != GrB_SUCCESS) {                                                                \
            snprintf(why, why_len, "graphblas: %s failed (GrB_Info %d)", #call, (int)info_);      \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

/* A CSR copy GraphBLAS takes ownership of; values NULL: iso true. */
static GrB_Info import_csr(GrB_Matrix *A, const g500_csr *g, bool weighted)
{
    const GrB_Index n = g->vertices, nnz = g->offsets[n];
    GrB_Index *ap = malloc((n + 1) * sizeof *ap);
    GrB_Index *aj = malloc((nnz ? nnz : 1) * sizeof *aj);
    size_t xsize = weighted ? (nnz ? nnz : 1) * sizeof(uint64_t) : sizeof(bool);
    void *ax = malloc(xsize);
    if (ap == NULL || aj == NULL || ax == NULL) {
        free(ap);
        free(aj);
        free(ax);
        return GrB_OUT_OF_MEMORY;
    }
    for (GrB_Index v = 0; v <= n; v++)
        ap[v] = g->offsets[v];
    for (GrB_Index k = 0; k < nnz; k++)
        aj[k] = g->targets[k];
    if (weighted)
        for (GrB_Index k = 0; k < nnz; k++)
            ((uint64_t *)ax)[k] = g->weights != NULL ? g->weights[k] : 1u;
    else
        *(bool *)ax = true;
    GrB_Info info = GxB_Matrix_import_CSR(A, weighted ? GrB_UINT64 : GrB_BOOL, n, n, &ap, &aj, &ax,
                                          (n + 1) * sizeof *ap, (nnz ? nnz : 1) * sizeof *aj,
                                          xsize, !weighted, false, NULL);
    if (info != GrB_SUCCESS) {
        free(ap);
        free(aj);
        free(ax);
    }
    return info;
}

static void gb_close(traverse_engine *e)
{
    if (e == NULL)
        return;
    GrB_Matrix_free(&e->A);
    GrB_Matrix_free(&e->W);
    GrB_Vector_free(&e->q);
    GrB_Vector_free(&e->p);
    GrB_Vector_free(&e->d);
    GrB_Vector_free(&e->f);
    GrB_Vector_free(&e->t);
    GrB_Vector_free(&e->m);
    free(e->idx);
    free(e->val);
    free(e);
}

static traverse_engine *gb_open(const g500_csr *g, unsigned threads, char *why, size_t why_len)
{
    traverse_engine *e = NULL;
    if (!graphblas_ready) {
        TRY(GrB_init(GrB_NONBLOCKING));
        graphblas_ready = true;
    }
    if (threads > 0)
        TRY(GxB_Global_Option_set(GxB_NTHREADS, (int)threads));
    e = calloc(1, sizeof *e);
    if (e == NULL) {
        snprintf(why, why_len, "graphblas: out of memory");
        return NULL;
    }
    e->g = g;
    e->n = g->vertices;
    e->idx = malloc(e->n * sizeof *e->idx);
    e->val = malloc(e->n * sizeof *e->val);
    if (e->idx == NULL || e->val == NULL) {
        snprintf(why, why_len, "graphblas: out of memory for %u vertices", g->vertices);
        goto fail;
    }
    TRY(import_csr(&e->A, g, false));
    TRY(import_csr(&e->W, g, true));
    TRY(GrB_Vector_new(&e->q, GrB_INT64, e->n));
    TRY(GrB_Vector_new(&e->p, GrB_INT64, e->n));
    TRY(GrB_Vector_new(&e->d, GrB_UINT64, e->n));
    TRY(GrB_Vector_new(&e->f, GrB_UINT64, e->n));
    TRY(GrB_Vector_new(&e->t, GrB_UINT64, e->n));
    TRY(GrB_Vector_new(&e->m, GrB_BOOL, e->n));
    return e;
fail:
    gb_close(e);
    return NULL;
}

static int gb_bfs(traverse_engine *e, uint32_t root, uint32_t *parent, char *why, size_t why_len)
{
    GrB_Index nq = 1, np = e->n;
    TRY(GrB_Vector_clear(e->q));
    TRY(GrB_Vector_clear(e->p));
    TRY(GrB_Vector_setElement_INT64(e->q, (int64_t)root, root));
    TRY(GrB_Vector_setElement_INT64(e->p, (int64_t)root, root));
    while (nq > 0) {
        TRY(GrB_vxm(e->q, e->p, NULL, GxB_ANY_SECONDI_INT64, e->q, e->A, GrB_DESC_RSC));
        TRY(GrB_Vector_nvals(&nq, e->q));
        if (nq > 0)
            TRY(GrB_Vector_assign(e->p, e->q, NULL, e->q, GrB_ALL, e->n, GrB_DESC_S));
    }
    TRY(GrB_Vector_extractTuples_INT64(e->idx, (int64_t *)e->val, &np, e->p));
    for (GrB_Index v = 0; v < e->n; v++)
        parent[v] = G500_NO_PARENT;
    for (GrB_Index k = 0; k < np; k++)
        parent[e->idx[k]] = (uint32_t)((int64_t *)e->val)[k];
    return 0;
fail:
    return -1;
}

static int gb_sssp(traverse_engine *e, uint32_t root, uint64_t *dist, char *why, size_t why_len)
{
    GrB_Index nf = 1, nd = e->n;
    TRY(GrB_Vector_clear(e->d));
    TRY(GrB_Vector_clear(e->f));
    TRY(GrB_Vector_setElement_UINT64(e->d, 0, root));
    TRY(GrB_Vector_setElement_UINT64(e->f, 0, root));
    while (nf > 0) {
        TRY(GrB_vxm(e->t, NULL, NULL, GrB_MIN_PLUS_SEMIRING_UINT64, e->f, e->W, GrB_DESC_R));
        /* Where only t has an entry, m takes t's value as a bool: true, as
         * every candidate is >= 1 (weights >= 1). Where only d has one, the
         * next step finds no t entry to copy. */
        TRY(GrB_Vector_eWiseAdd_BinaryOp(e->m, NULL, NULL, GrB_LT_UINT64, e->t, e->d, NULL));
        TRY(GrB_Vector_apply(e->f, e->m, NULL, GrB_IDENTITY_UINT64, e->t, GrB_DESC_R));
        TRY(GrB_Vector_eWiseAdd_BinaryOp(e->d, NULL, NULL, GrB_MIN_UINT64, e->d, e->f, NULL));
        TRY(GrB_Vector_nvals(&nf, e->f));
    }
    TRY(GrB_Vector_extractTuples_UINT64(e->idx, e->val, &nd, e->d));
    for (GrB_Index v = 0; v < e->n; v++)
        dist[v] = G500_INF;
    for (GrB_Index k = 0; k < nd; k++)
        dist[e->idx[k]] = e->val[k];
    return 0;
fail:
    return -1;
}

const traverse_ops traverse_graphblas_ops = {"graphblas", gb_open, gb_bfs, gb_sssp, gb_close, NULL, NULL, NULL};

#else
/* Built without GraphBLAS: bench/graph_bench.c says it skipped it. */
typedef int graphblas_engine_not_built;
#endif
