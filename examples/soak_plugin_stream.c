/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/soak_plugin_stream.c - streaming graphs (include/mkrt_stream/stream.h)
 * under mkrt-soak: every fault mode, every backend (soak_plugin.h).
 *
 *   make build/examples/soak_plugin_stream.so build/bin/mkrt-soak
 *   build/bin/mkrt-soak --plugin build/examples/soak_plugin_stream.so --seconds 60
 *
 * Each round makes a fresh stream of 512 vertices with a BFS, an SSSP and
 * CC. Stream s owns the edges whose smaller endpoint is s modulo the
 * streams, and publishes insertions and deletions of them (a sixteenth of
 * them deletions of absent edges, which must fail with MKRT_ESTATE). The
 * failures allowed are the stream's own (an absent edge, a weight clash)
 * and what faults cause (no memory, no room to emit). verify() checks that
 * every query equals a from-scratch recompute of the graph as it is, and,
 * when no update failed for a fault, that the graph holds exactly the
 * edges the streams' mirrors say. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mkrt_soak/soak_plugin.h"
#include "mkrt_stream/stream.h"

#define V 512u
#define STREAMS_MAX 16

typedef struct round_state {
    mkrt_stream *s;
    unsigned streams;
    uint64_t rng[STREAMS_MAX];
    uint8_t w[V][V];          /* mirror: weight of {u, v}, u < v; 0 absent */
    uint8_t pending[V][V];    /* generated, not yet published: applied at published() */
    _Atomic uint64_t faults;  /* updates failed for memory or room: the mirror may be off */
} round_state;

static uint64_t next_rand(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void *round_begin(uint64_t seed, unsigned streams, char *msg, size_t len)
{
    round_state *r = calloc(1, sizeof *r);
    mkrt_stream_config c = mkrt_stream_config_default();
    c.vertices = V;
    c.weight_max = 9;
    c.queries = 3;
    c.query[0] = (mkrt_stream_query){MKRT_STREAM_BFS, 0};
    c.query[1] = (mkrt_stream_query){MKRT_STREAM_SSSP, 1};
    c.query[2] = (mkrt_stream_query){MKRT_STREAM_CC, 0};
    mkrt_error err;
    if (r == NULL || mkrt_stream_create(&c, &r->s, &err) != MKRT_OK) {
        snprintf(msg, len, "stream plugin: %s", r == NULL ? "no memory for the round" : err.message);
        free(r);
        return NULL;
    }
    r->streams = streams > STREAMS_MAX ? STREAMS_MAX : streams;
    for (unsigned i = 0; i < STREAMS_MAX; i++)
        r->rng[i] = (seed | 1) * 0x9e3779b97f4a7c15ULL + i;
    return r;
}

static size_t ops(void *state, mkrt_soak_plugin_op *out, size_t max)
{
    round_state *r = state;
    uint32_t nums[MKRT_STREAM_OPS];
    mkrt_op_desc descs[MKRT_STREAM_OPS];
    size_t n = mkrt_stream_ops(r->s, nums, descs, MKRT_STREAM_OPS);
    for (size_t i = 0; i < n && i < max; i++)
        out[i] = (mkrt_soak_plugin_op){nums[i], descs[i]};
    return n < max ? n : max;
}

/* The mirror follows what each stream published, in publish order; an
 * update is decided against the mirror as it will be once the earlier
 * ones are in (pending holds the weights of the batch being generated). */
static size_t generate(void *state, unsigned stream, mkrt_item *items, size_t max)
{
    round_state *r = state;
    unsigned n_streams = r->streams == 0 ? 1 : r->streams;
    size_t n = 0;
    for (; n < max; n++) {
        uint32_t u, v;
        do {
            u = (uint32_t)(next_rand(&r->rng[stream]) % V);
            v = (uint32_t)(next_rand(&r->rng[stream]) % V);
            if (u > v) {
                uint32_t t = u;
                u = v;
                v = t;
            }
        } while (u == v || u % n_streams != stream % n_streams || r->pending[u][v] != 0);
        uint8_t now = r->w[u][v];
        uint64_t pick = next_rand(&r->rng[stream]) % 16;
        if (now == 0 && pick == 0) {
            mkrt_stream_delete_item(r->s, u, v, &items[n]); /* must fail: absent */
            r->pending[u][v] = 0xff;
        } else if (now != 0) {
            mkrt_stream_delete_item(r->s, u, v, &items[n]);
            r->pending[u][v] = 0xfe; /* becomes absent */
        } else {
            uint8_t w = (uint8_t)(1 + next_rand(&r->rng[stream]) % 9);
            mkrt_stream_insert_item(r->s, u, v, w, &items[n]);
            r->pending[u][v] = w;
        }
    }
    return n;
}

static void published(void *state, unsigned stream, const mkrt_item *items, size_t n)
{
    (void)stream;
    round_state *r = state;
    (void)n;
    /* Apply the published prefix to the mirror; forget the rest. */
    for (size_t i = 0; i < n; i++) {
        uint32_t u = items[i].out, v = items[i].in;
        uint8_t p = r->pending[u][v];
        r->w[u][v] = p == 0xff ? r->w[u][v] : p == 0xfe ? 0 : p;
    }
    /* Clear every pending mark this stream left (published or not). */
    for (uint32_t u = stream % (r->streams == 0 ? 1 : r->streams); u < V; u += r->streams == 0 ? 1 : r->streams)
        memset(r->pending[u], 0, V);
}

static int failed(void *state, const mkrt_item *item, mkrt_status why)
{
    round_state *r = state;
    char buf[320];
    if (mkrt_stream_failed(r->s, item, why, buf, sizeof buf) != MKRT_OK || strstr(buf, "Fix:") == NULL)
        return 1;
    if (why == MKRT_ESTATE || why == MKRT_EINVAL)
        return 0; /* an absent edge (on purpose), a clash */
    if (why == MKRT_ENOMEM || why == MKRT_EOVERFLOW) {
        atomic_fetch_add(&r->faults, 1);
        return 0;
    }
    return 1;
}

static int verify(void *state, const uint64_t *cells, uint32_t count, char *msg, size_t len)
{
    (void)cells;
    (void)count;
    round_state *r = state;
    static uint64_t got[V], want[V];
    mkrt_stream_view view;
    mkrt_stream_view_open(r->s, &view);
    int bad = 0;
    for (uint32_t q = 0; q < 3 && !bad; q++) {
        if (mkrt_stream_view_read(&view, q, 0, V, got, NULL) != MKRT_OK ||
            mkrt_stream_recompute(r->s, q, want, NULL) != MKRT_OK) {
            snprintf(msg, len, "stream plugin: query %u could not be read or recomputed", q);
            bad = 1;
        }
        for (uint32_t v = 0; v < V && !bad; v++)
            if (got[v] != want[v]) {
                snprintf(msg, len, "stream plugin: query %u vertex %u is %llu, a recompute says %llu", q, v,
                         (unsigned long long)got[v], (unsigned long long)want[v]);
                bad = 1;
            }
    }
    mkrt_stream_view_close(&view);
    if (!bad && atomic_load(&r->faults) == 0) {
        uint64_t mirrored = 0;
        for (uint32_t u = 0; u < V; u++)
            for (uint32_t v = u + 1; v < V; v++)
                mirrored += r->w[u][v] != 0;
        mkrt_stream_stats st;
        mkrt_stream_stats_read(r->s, &st);
        if (st.edges != mirrored) {
            snprintf(msg, len, "stream plugin: the graph has %llu edges, the mirrors %llu",
                     (unsigned long long)st.edges, (unsigned long long)mirrored);
            bad = 1;
        }
    }
    return bad;
}

static void round_end(void *state)
{
    round_state *r = state;
    mkrt_stream_destroy(r->s);
    free(r);
}

const mkrt_soak_plugin mkrt_soak_plugin_v1 = {
    .version = MKRT_SOAK_PLUGIN_VERSION,
    .size = sizeof(mkrt_soak_plugin),
    .name = "stream",
    .cells = V,
    .streams = 0,
    .round_begin = round_begin,
    .ops = ops,
    .init_cells = NULL,
    .generate = generate,
    .published = published,
    .failed = failed,
    .verify = verify,
    .round_end = round_end,
};
