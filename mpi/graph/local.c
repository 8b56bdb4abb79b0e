/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/graph/local.c - the distributed engine on one rank: the
 * runtime's own traversals (mkrt_traversal_*, mkrt/graph.h).
 *
 * With one rank every vertex is local and no arrival ever comes in, so a
 * search of the distributed engine is exactly a search of the one-process
 * engine: the runtime's direction-optimizing BFS and bucketed SSSP (its
 * frontier rounds run level after level inside the dispatcher and the
 * workers, with no host round trip or collective per level). mkrt_mpi_graph_open
 * registers the graph with the runtime (before mkrt_mpi_create opens the
 * layer's producers) and, at one rank, opens one traversal of each kind;
 * mkrt_mpi_graph_bfs and mkrt_mpi_graph_sssp then run start, wait and read, and write the
 * result where the rank-0 gather would have put it.
 * mkrt_mpi_graph_config::own_rounds keeps the engine's own rounds at one
 * rank (check-mpi runs both).
 *
 * At several ranks the public traversal API cannot run a rank's local
 * levels: a search starts from one root with every other vertex
 * unreached, it cannot be seeded with several vertices and values (the
 * arrivals of a level), and it follows every edge (no hook that hands an
 * edge into another rank's vertices to the caller instead). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpig_state.h"

mkrt_status mkrt__mpig_local_register(mkrt_mpi_graph *e, mkrt_error *err)
{
    return mkrt_graph_register(e->rt, e->g, err);
}

mkrt_status mkrt__mpig_local_open(mkrt_mpi_graph *e, mkrt_error *err)
{
    if (e->size != 1 || e->own_rounds)
        return MKRT_OK; /* the engine's own rounds */
    /* A symmetric graph: the BFS may pull its large levels. */
    mkrt_traversal_desc db = {MKRT_TRAVERSAL_BFS, e->symmetric},
                        ds = {MKRT_TRAVERSAL_SSSP, e->symmetric};
    mkrt_status st = mkrt_traversal_open(e->rt, &db, &e->bfs_t, err);
    if (st == MKRT_OK)
        st = mkrt_traversal_open(e->rt, &ds, &e->sssp_t, err);
    /* Nothing of the layer is used from here on: stop it (its progress
     * thread would wake every 200 us beside the search). */
    if (st == MKRT_OK) {
        st = mkrt_mpi_destroy(e->mpi, err);
        e->mpi = NULL;
    }
    return st;
}

/* The levels of the BFS just read (depths in e->cells): frontier and the
 * edges of its rows per depth, and the direction engine.c's rule
 * would take from those counts (the traversal's own choice is not
 * reported per level; its totals are in mkrt_traversal_stats). */
static void local_levels(mkrt_mpi_graph *e)
{
    const uint64_t *o = e->g->offsets;
    memset(e->lv, 0, sizeof e->lv);
    e->nlv = 0;
    for (uint32_t v = 0; v < e->vertices; v++) {
        if (e->cells[v] == UNREACHED)
            continue;
        const uint64_t d = e->cells[v] < MKRT_MPI_GRAPH_LEVELS ? e->cells[v] : MKRT_MPI_GRAPH_LEVELS - 1;
        e->lv[d].frontier++;
        e->lv[d].scanned += o[v + 1] - o[v];
        if (d + 1 > e->nlv)
            e->nlv = (size_t)d + 1;
    }
    uint64_t unvisited = e->owned_edges;
    int bottom_up = 0;
    for (size_t l = 0; l < e->nlv; l++) {
        unvisited -= e->lv[l].scanned;
        if (e->symmetric && (bottom_up || l > 0)) /* engine.c's levels' rule */
            bottom_up = mkrt_graph_pull_next(e->lv[l].frontier, e->lv[l].scanned, unvisited,
                                             e->vertices, bottom_up);
        e->lv[l].bottom_up = bottom_up;
    }
}

mkrt_status mkrt__mpig_local_search(mkrt_mpi_graph *e, uint32_t root, uint32_t *parent,
                                    uint64_t *dist, mkrt_mpi_graph_counts *c, mkrt_error *errp)
{
    mkrt_traversal *t = parent != NULL ? e->bfs_t : e->sssp_t;
    mkrt_error err = {0};
    mkrt_traversal_stats a, b;
    mkrt_stats s0, s1;
    mkrt_traversal_stats_read(t, &a);
    mkrt_stats_read(e->rt, &s0);
    const double t0 = mkrt__mpig_seconds();
    mkrt_status st = mkrt_traversal_start(t, root, &err);
    if (st == MKRT_OK)
        st = mkrt_traversal_wait(t, MKRT_TIMEOUT_INFINITE);
    /* The result read is timed, as graph_bfs times the one-process engine's
     * (a search there ends with the same read). */
    if (st == MKRT_OK)
        st = parent != NULL ? mkrt_traversal_parents(t, 0, e->vertices, parent, &err)
                            : mkrt_traversal_read(t, 0, e->vertices, dist, &err);
    const double seconds = mkrt__mpig_seconds() - t0;
    mkrt_traversal_stats_read(t, &b);
    mkrt_stats_read(e->rt, &s1);
    *c = (mkrt_mpi_graph_counts){.seconds = seconds,
                                 .edge_items = b.edges_examined - a.edges_examined,
                                 .failed = s1.failed - s0.failed};
    if (st != MKRT_OK || c->failed != 0)
        return mkrt__mpig_fail(errp, st != MKRT_OK ? st : MKRT_ECLOSED, "%s from %u (one rank, the "
                               "runtime's traversal): %s; %llu item(s) failed.",
                               parent != NULL ? "BFS" : "SSSP", root,
                               st != MKRT_OK ? err.message : "incomplete",
                               (unsigned long long)c->failed);
    if (parent != NULL && mkrt_traversal_read(t, 0, e->vertices, e->cells, &err) == MKRT_OK)
        local_levels(e); /* outside the timed part: the levels' table only */
    return MKRT_OK;
}
