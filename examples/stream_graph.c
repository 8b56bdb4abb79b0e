/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/stream_graph.c - a graph that changes while its answers stay exact.
 *
 * A ring of 12 road junctions with travel times. We ask three standing
 * questions: hops from junction 0 (BFS), travel time from junction 0
 * (SSSP) and which junctions are still connected (CC). Then roads open and
 * close, published as items like any other mkrt work; after each
 * mkrt_quiesce the answers include every change, and a view reads them
 * consistently.
 *
 *     make build/examples/stream_graph && build/examples/stream_graph
 */
#include <stdio.h>
#include <string.h>

#include "mkrt/runtime.h"
#include "mkrt_stream/stream.h"

#define JUNCTIONS 12u

static mkrt_stream *stream; /* for the error callback */

/* Failed updates (a closed road that was never open, ...) land here. */
static void on_error(void *ctx, const mkrt_item *item, mkrt_status why, const char *message)
{
    (void)ctx;
    char buf[320];
    if (mkrt_stream_failed(stream, item, why, buf, sizeof buf) == MKRT_OK)
        printf("  refused: %s\n", buf);
    else
        printf("  refused: %s\n", message);
}

static void show(const char *when)
{
    mkrt_stream_view view;
    uint64_t hops[JUNCTIONS], time[JUNCTIONS], comp[JUNCTIONS];
    mkrt_stream_view_open(stream, &view); /* one consistent point in the stream */
    mkrt_stream_view_read(&view, 0, 0, JUNCTIONS, hops, NULL);
    mkrt_stream_view_read(&view, 1, 0, JUNCTIONS, time, NULL);
    mkrt_stream_view_read(&view, 2, 0, JUNCTIONS, comp, NULL);
    printf("%s (after %llu updates)\n  junction:", when, (unsigned long long)view.position);
    mkrt_stream_view_close(&view);
    for (uint32_t v = 0; v < JUNCTIONS; v++)
        printf(" %3u", v);
    const char *names[3] = {"hops", "time", "group"};
    const uint64_t *rows[3] = {hops, time, comp};
    for (int r = 0; r < 3; r++) {
        printf("\n  %-9s", names[r]);
        for (uint32_t v = 0; v < JUNCTIONS; v++)
            rows[r][v] == MKRT_STREAM_UNREACHED ? printf("   -") : printf(" %3llu", (unsigned long long)rows[r][v]);
    }
    printf("\n");
}

int main(void)
{
    /* 1. The stream: junctions, and the three standing questions. */
    mkrt_stream_config sc = mkrt_stream_config_default();
    sc.vertices = JUNCTIONS;
    sc.queries = 3;
    sc.query[0] = (mkrt_stream_query){MKRT_STREAM_BFS, 0};
    sc.query[1] = (mkrt_stream_query){MKRT_STREAM_SSSP, 0};
    sc.query[2] = (mkrt_stream_query){MKRT_STREAM_CC, 0};
    mkrt_error err;
    if (mkrt_stream_create(&sc, &stream, &err) != MKRT_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    /* 2. The roads we start with: a ring, 5 minutes each. */
    uint32_t from[JUNCTIONS], to[JUNCTIONS], minutes[JUNCTIONS];
    for (uint32_t v = 0; v < JUNCTIONS; v++) {
        from[v] = v;
        to[v] = (v + 1) % JUNCTIONS;
        minutes[v] = 5;
    }
    mkrt_stream_load(stream, from, to, minutes, JUNCTIONS, NULL, NULL);

    /* 3. A runtime with a cell per junction runs the stream's ops. */
    mkrt_config c = mkrt_config_default();
    c.cells = JUNCTIONS;
    c.on_error = on_error;
    mkrt_runtime *rt;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK || mkrt_stream_register(stream, rt, &err) != MKRT_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    mkrt_producer *p = mkrt_producer_open(rt, &err);
    if (p == NULL) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    show("The ring");

    /* 4. Changes are items: a bypass opens, two roads close, and one
     *    closure names a road that does not exist (it fails, alone). */
    mkrt_item u[4];
    mkrt_stream_insert_item(stream, 0, 6, 7, &u[0]); /* bypass 0-6, 7 minutes */
    mkrt_stream_delete_item(stream, 2, 3, &u[1]);    /* road 2-3 closes */
    mkrt_stream_delete_item(stream, 8, 9, &u[2]);    /* road 8-9 closes */
    mkrt_stream_delete_item(stream, 4, 10, &u[3]);   /* no such road */
    mkrt_publish(p, u, 4, MKRT_TIMEOUT_INFINITE, NULL);
    mkrt_quiesce(rt, MKRT_TIMEOUT_INFINITE); /* every change above is now in */
    show("Bypass 0-6 open, roads 2-3 and 8-9 closed");

    /* 5. Closing the bypass cuts the ring in two groups. */
    mkrt_stream_delete_item(stream, 0, 6, &u[0]);
    mkrt_publish(p, u, 1, MKRT_TIMEOUT_INFINITE, NULL);
    mkrt_quiesce(rt, MKRT_TIMEOUT_INFINITE);
    show("Bypass closed again");

    mkrt_stream_stats st;
    mkrt_stream_stats_read(stream, &st);
    printf("applied %llu inserts, %llu deletes; %llu refused; %llu values reset by deletions\n",
           (unsigned long long)st.inserted, (unsigned long long)st.deleted,
           (unsigned long long)(st.failed_absent + st.failed_invalid), (unsigned long long)st.reset);
    mkrt_producer_close(p);
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
    mkrt_stream_destroy(stream);
    return 0;
}
