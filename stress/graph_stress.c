/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/graph_stress.c - a streaming graph workload under load: producer
 * threads publish new SSSP sources (RELAX from a constant cell) while the
 * traversals they started run and emit their frontiers, together with
 * commuting updates (ACC on one counter per producer, OR on one shared
 * handle) and emission chains of a user op (mkrt_op_emit). Round after
 * round: publish, mkrt_quiesce, compare every distance with a sequential
 * multi-source shortest-path reference, and the counters with the
 * producers' own sums; then reset the distances for the next round.
 *
 *   graph_stress [--seconds N] [--producers P] [--vertices V] [--sim 0|1] [--help]
 *
 * Prints one SUMMARY line; exits 1 on a wrong distance, a wrong counter, a
 * failed item, or accounting that does not add up. */
#include <stdatomic.h>

#include "base/thread.h"
#include "mkrt/mkrt.h"
#include "stress_util.h"

#define MAX_PRODUCERS 8
#define OFFSETS 64 /* constant cells V .. V+63 hold 0..63: a source's start distance */
#define UNREACHED UINT64_MAX
enum { OP_CHAIN = MKRT_OP_USER_FIRST };

static mkrt_runtime *rt;
static uint32_t V;
static uint32_t h_offsets, h_acc, h_or, h_chain; /* first handle of each region */

typedef struct producer_state {
    unsigned id;
    unsigned seed;
    uint64_t *best;      /* best[v]: the smallest start distance this producer gave v (this round) */
    uint64_t acc, or_bits, chain_links, published;
    uint32_t round_items;
} producer_state;

/* A chain: one more link counted in cells[out], then itself with param - 1. */
static mkrt_status chain(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    ctx->cells[it->out] += 1;
    if (it->param == 0)
        return MKRT_OK;
    mkrt_item next = {OP_CHAIN, it->in, it->out, it->param - 1};
    return mkrt_op_emit(ctx, &next, 1);
}

static int producer_main(void *arg)
{
    producer_state *st = arg;
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    if (p == NULL)
        return 0;
    mkrt_item buf[32];
    for (uint32_t sent = 0; sent < st->round_items;) {
        size_t n = 1 + (size_t)(rand_r(&st->seed) % 32);
        for (size_t i = 0; i < n; i++) {
            unsigned r = (unsigned)rand_r(&st->seed) % 16;
            if (r < 10) { /* a new source: RELAX(offset k -> s, extra) */
                uint32_t s = (uint32_t)rand_r(&st->seed) % V, k = (uint32_t)rand_r(&st->seed) % OFFSETS,
                         extra = (uint32_t)rand_r(&st->seed) % 1000;
                buf[i] = (mkrt_item){MKRT_OP_RELAX, h_offsets + k, s, extra};
                if (k + extra < st->best[s])
                    st->best[s] = k + extra;
            } else if (r < 13) {
                uint32_t add = 1 + (uint32_t)rand_r(&st->seed) % 100;
                buf[i] = (mkrt_item){MKRT_OP_ACC, h_acc + st->id, h_acc + st->id, add};
                st->acc += add;
            } else if (r < 15) {
                uint32_t bit = (uint32_t)1 << (rand_r(&st->seed) % 32);
                buf[i] = (mkrt_item){MKRT_OP_OR, h_offsets, h_or, bit}; /* cells[h_offsets] is 0 */
                st->or_bits |= bit;
            } else {
                uint32_t len = (uint32_t)rand_r(&st->seed) % 40;
                buf[i] = (mkrt_item){OP_CHAIN, h_offsets, h_chain + st->id, len};
                st->chain_links += len + 1;
            }
        }
        if (mkrt_publish(p, buf, n, MKRT_TIMEOUT_INFINITE, NULL) != MKRT_OK)
            break;
        sent += (uint32_t)n;
        st->published += n;
    }
    mkrt_producer_close(p);
    return 0;
}

/* Multi-source shortest paths: a FIFO label-correcting pass (exact). */
static void reference(const uint64_t *off, const uint32_t *dst, const uint32_t *w, uint64_t *dist,
                      uint32_t *queue, bool *queued)
{
    size_t head = 0, tail = 0, cap = V;
    for (uint32_t v = 0; v < V; v++)
        if (dist[v] != UNREACHED) {
            queue[tail++ % cap] = v;
            queued[v] = true;
        }
    while (head != tail) {
        uint32_t u = queue[head++ % cap];
        queued[u] = false;
        for (uint64_t e = off[u]; e < off[u + 1]; e++) {
            uint64_t d = dist[u] + w[e];
            if (d < dist[dst[e]]) {
                dist[dst[e]] = d;
                if (!queued[dst[e]]) {
                    queued[dst[e]] = true;
                    queue[tail++ % cap] = dst[e];
                }
            }
        }
    }
}

int main(int argc, char **argv)
{
    unsigned vals[] = {3, 3, 20000, 0};
    const stress_opt opts[] = {{"seconds", "run for N seconds", &vals[0]},
                               {"producers", "producer threads, 1..8", &vals[1]},
                               {"vertices", "graph vertices, 16..1000000", &vals[2]},
                               {"sim", "1: the SIM backend (RELAX traversals on the device, user ops on the CPU pool)", &vals[3]},
                               {NULL, NULL, NULL}};
    stress_getopt(argc, argv,
                  "Producers publish SSSP sources and commuting updates while the traversals emit; "
                  "every round is checked against a sequential reference.",
                  opts);
    if (vals[1] < 1 || vals[1] > MAX_PRODUCERS || vals[2] < 16 || vals[2] > 1000000) {
        fprintf(stderr, "graph_stress: producers must be 1..%d and vertices 16..1000000\n", MAX_PRODUCERS);
        return 2;
    }
    V = vals[2];
    /* A random undirected graph, 4 edges per vertex each way on average. */
    unsigned seed = 12345;
    uint32_t und = V * 2;
    uint32_t *a = malloc(und * sizeof *a), *b = malloc(und * sizeof *b), *wt = malloc(und * sizeof *wt);
    uint64_t *off = calloc((size_t)V + 1, sizeof *off);
    for (uint32_t e = 0; e < und; e++) {
        a[e] = (uint32_t)rand_r(&seed) % V;
        b[e] = (uint32_t)rand_r(&seed) % V;
        wt[e] = 1 + (uint32_t)rand_r(&seed) % 255;
        off[a[e] + 1]++;
        off[b[e] + 1]++;
    }
    for (uint32_t v = 0; v < V; v++)
        off[v + 1] += off[v];
    uint32_t *dst = malloc(off[V] * sizeof *dst), *w = malloc(off[V] * sizeof *w);
    uint64_t *fill = malloc((size_t)V * sizeof *fill);
    memcpy(fill, off, (size_t)V * sizeof *fill);
    for (uint32_t e = 0; e < und; e++) {
        dst[fill[a[e]]] = b[e];
        w[fill[a[e]]++] = wt[e];
        dst[fill[b[e]]] = a[e];
        w[fill[b[e]]++] = wt[e];
    }
    free(fill);
    free(a);
    free(b);
    free(wt);

    h_offsets = V;
    h_acc = V + OFFSETS;
    h_or = h_acc + MAX_PRODUCERS;
    h_chain = h_or + 1;
    mkrt_config cfg = mkrt_config_default();
    cfg.backend = vals[3] ? MKRT_BACKEND_SIM : MKRT_BACKEND_CPU;
    cfg.cells = h_chain + MAX_PRODUCERS;
    cfg.ring_capacity = 1024;
    cfg.max_batch = 8192; /* small batches: frontiers span many */
    cfg.emit_capacity = 1u << 16;
    cfg.append_log_capacity = 0;
    mkrt_error err;
    if (mkrt_create(&cfg, &rt, &err) != MKRT_OK) {
        fprintf(stderr, "graph_stress: %s\n", err.message);
        return 1;
    }
    mkrt_graph g = {V, off, dst, w};
    mkrt_op_desc d = {.fn = chain, .name = "chain"};
    if (mkrt_graph_register(rt, &g, &err) != MKRT_OK || mkrt_op_register(rt, OP_CHAIN, &d, &err) != MKRT_OK) {
        fprintf(stderr, "graph_stress: %s\n", err.message);
        return 1;
    }
    for (uint32_t k = 0; k < OFFSETS; k++)
        mkrt_cell_write(rt, h_offsets + k, k);

    producer_state st[MAX_PRODUCERS];
    memset(st, 0, sizeof st);
    uint64_t *want = malloc((size_t)V * sizeof *want), *got = malloc((size_t)V * sizeof *got);
    uint32_t *queue = malloc((size_t)V * sizeof *queue);
    bool *queued = calloc(V, 1);
    for (unsigned i = 0; i < vals[1]; i++) {
        st[i].best = malloc((size_t)V * sizeof *st[i].best);
        st[i].id = i;
        st[i].seed = 1000 + i;
        st[i].round_items = 4000;
    }
    uint64_t t0 = stress_now_ns(), deadline = t0 + (uint64_t)vals[0] * 1000000000u;
    uint64_t rounds = 0, bad_dist = 0, bad_counters = 0, published = 0, acc[MAX_PRODUCERS] = {0}, links[MAX_PRODUCERS] = {0},
             or_bits = 0;
    bool quiet = true;
    do {
        for (uint32_t v = 0; v < V; v++)
            mkrt_cell_write(rt, v, UNREACHED); /* quiescent: nothing touches them */
        mkrt__thread th[MAX_PRODUCERS];
        for (unsigned i = 0; i < vals[1]; i++) {
            for (uint32_t v = 0; v < V; v++)
                st[i].best[v] = UNREACHED;
            mkrt__thread_start(&th[i], producer_main, &st[i]);
        }
        for (unsigned i = 0; i < vals[1]; i++)
            mkrt__thread_join(th[i]);
        quiet = mkrt_quiesce(rt, 60000000000ull) == MKRT_OK;
        if (!quiet)
            break;
        for (uint32_t v = 0; v < V; v++) {
            want[v] = UNREACHED;
            for (unsigned i = 0; i < vals[1]; i++)
                want[v] = st[i].best[v] < want[v] ? st[i].best[v] : want[v];
        }
        reference(off, dst, w, want, queue, queued);
        mkrt_cells_read(rt, 0, V, got);
        for (uint32_t v = 0; v < V; v++)
            bad_dist += got[v] != want[v];
        for (unsigned i = 0; i < vals[1]; i++) {
            acc[i] = st[i].acc;
            links[i] = st[i].chain_links;
            or_bits |= st[i].or_bits;
            uint64_t c = 0, l = 0;
            mkrt_cell_read(rt, h_acc + i, &c);
            mkrt_cell_read(rt, h_chain + i, &l);
            bad_counters += (c != acc[i]) + (l != links[i]);
        }
        uint64_t o = 0;
        mkrt_cell_read(rt, h_or, &o);
        bad_counters += o != or_bits;
        rounds++;
    } while (stress_now_ns() < deadline && bad_dist == 0 && bad_counters == 0);
    double secs = (double)(stress_now_ns() - t0) / 1e9;
    for (unsigned i = 0; i < vals[1]; i++)
        published += st[i].published;
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    bool accounted = s.published == published && s.published + s.emitted == s.executed + s.pruned + s.failed &&
                     s.failed == 0;
    bool pass = quiet && bad_dist == 0 && bad_counters == 0 && accounted && rounds > 0;
    printf("SUMMARY graph_stress producers %u vertices %u edges %llu seconds %.1f rounds %llu published %llu "
           "emitted %llu executed %llu pruned %llu failed %llu batches %llu layers %llu bad_dist %llu "
           "bad_counters %llu backend %s %s\n",
           vals[1], V, (unsigned long long)off[V], secs, (unsigned long long)rounds,
           (unsigned long long)s.published, (unsigned long long)s.emitted, (unsigned long long)s.executed,
           (unsigned long long)s.pruned, (unsigned long long)s.failed, (unsigned long long)s.batches,
           (unsigned long long)s.layers, (unsigned long long)bad_dist, (unsigned long long)bad_counters,
           s.backend, pass ? "PASS" : "FAIL");
    if (mkrt_destroy(rt, 30000000000ull, &err) != MKRT_OK) {
        fprintf(stderr, "graph_stress: destroy: %s\n", err.message);
        pass = false;
    }
    for (unsigned i = 0; i < vals[1]; i++)
        free(st[i].best);
    free(want);
    free(got);
    free(queue);
    free(queued);
    free(off);
    free(dst);
    free(w);
    return pass ? 0 : 1;
}
