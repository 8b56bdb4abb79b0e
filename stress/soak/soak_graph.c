/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/soak/soak_graph.c - the graph workload of mkrt-soak.
 *
 * Each round builds a random symmetric weighted graph (500..2000
 * vertices, average degree 2..10, weights 1..16, rows sorted by target),
 * registers it (mkrt_graph_register, through allocation storms) and a
 * BFS op VISIT (expands, commutes, idempotent, pulls: it lowers
 * cells[v] to (depth(u) + 1) << 32 | u with mkrt_op_cell_min and emits
 * v's edges when it did), then runs traversals one after another until
 * the round ends: SSSP with the built-in RELAX from RELAX(zero -> root),
 * or BFS from VISIT(root, SEED), each one published item and a wait for
 * mkrt_quiesce. Every result is compared with the host's Dijkstra or BFS:
 * each distance, each BFS depth and parent (the smallest vertex at the
 * depth before). Exactly once: no item fails, and published + emitted =
 * executed + pruned + failed at the end. A race round destroys the
 * runtime while a traversal's emissions are in flight. The latency
 * recorded is a traversal's, publish to quiescence. */
#include <stdlib.h>
#include <string.h>

#include "soak.h"
#include "mkrt/graph.h"

#define OP_VISIT 16
#define SEED UINT32_MAX
#define UNREACHED UINT64_MAX

typedef struct gstate {
    uint32_t n;
    uint64_t *off;
    uint32_t *tgt, *wt;
    uint64_t *want, *got;
    _Atomic uint64_t callbacks;
    mkrt_backend_kind backend;
} gstate;

static gstate gs;

static mkrt_status visit(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    if (it->param == SEED)
        return mkrt_op_emit_edges(ctx, it->out);
    uint64_t from = mkrt_op_cell_load(ctx, it->in);
    if (from == UNREACHED)
        return MKRT_OK;
    uint64_t depth = (from >> 32) + 1;
    if (mkrt_op_cell_min(ctx, it->out, depth << 32 | it->in))
        return mkrt_op_emit_edges(ctx, it->out);
    return MKRT_OK;
}

static void graph_on_error(void *ctx, const mkrt_item *it, mkrt_status why, const char *msg)
{
    gstate *g = ctx;
    atomic_fetch_add(&g->callbacks, 1);
    if (why != MKRT_ETIMEDOUT)
        soak_error("graph: item op %u in %u out %u failed: %s: %s", it->op, it->in, it->out,
                   mkrt_status_name(why), msg ? msg : "");
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* A random symmetric graph in CSR, rows sorted by target, no self loops;
 * the weight of u -> v equals that of v -> u. */
static bool build_graph(uint64_t *rng)
{
    uint32_t n = 500 + rnd_below(rng, 1500), deg = 1 + rnd_below(rng, 5);
    size_t m = (size_t)n * deg; /* undirected edges */
    uint32_t *eu = malloc(m * sizeof *eu), *ev = malloc(m * sizeof *ev), *ew = malloc(m * sizeof *ew);
    uint64_t *cnt = calloc(n + 1, sizeof *cnt);
    gs.off = calloc(n + 1, sizeof *gs.off);
    gs.tgt = malloc(2 * m * sizeof *gs.tgt);
    gs.wt = malloc(2 * m * sizeof *gs.wt);
    gs.want = malloc((size_t)n * sizeof *gs.want);
    gs.got = malloc((size_t)(n + 1) * sizeof *gs.got);
    bool ok = eu && ev && ew && cnt && gs.off && gs.tgt && gs.wt && gs.want && gs.got;
    size_t k = 0;
    for (size_t i = 0; ok && i < m; i++) {
        uint32_t u = rnd_below(rng, n), v = rnd_below(rng, n);
        if (u == v)
            continue;
        eu[k] = u;
        ev[k] = v;
        ew[k++] = 1 + rnd_below(rng, 16);
        cnt[u]++;
        cnt[v]++;
    }
    if (ok) {
        for (uint32_t v = 0; v < n; v++)
            gs.off[v + 1] = gs.off[v] + cnt[v];
        memset(cnt, 0, (n + 1) * sizeof *cnt);
        /* Pairs (target, weight) packed in a u64 per row slot, sorted by target. */
        uint64_t *pairs = malloc(2 * k * sizeof *pairs + 1);
        ok = pairs != NULL;
        for (size_t i = 0; ok && i < k; i++) {
            pairs[gs.off[eu[i]] + cnt[eu[i]]++] = (uint64_t)ev[i] << 32 | ew[i];
            pairs[gs.off[ev[i]] + cnt[ev[i]]++] = (uint64_t)eu[i] << 32 | ew[i];
        }
        for (uint32_t v = 0; ok && v < n; v++) {
            size_t a = gs.off[v], b = gs.off[v + 1];
            /* sort by target (high half); equal targets: any weight order */
            for (size_t i = a; i < b; i++)
                gs.tgt[i] = (uint32_t)(pairs[i] >> 32);
            (void)cmp_u32;
            for (size_t i = a + 1; i < b; i++) { /* insertion sort: rows are short */
                uint64_t x = pairs[i];
                size_t j = i;
                while (j > a && pairs[j - 1] > x) {
                    pairs[j] = pairs[j - 1];
                    j--;
                }
                pairs[j] = x;
            }
            for (size_t i = a; i < b; i++) {
                gs.tgt[i] = (uint32_t)(pairs[i] >> 32);
                gs.wt[i] = (uint32_t)pairs[i];
            }
        }
        free(pairs);
    }
    gs.n = n;
    free(eu);
    free(ev);
    free(ew);
    free(cnt);
    return ok;
}

static void free_graph(void)
{
    free(gs.off);
    free(gs.tgt);
    free(gs.wt);
    free(gs.want);
    free(gs.got);
    gs.off = NULL;
    gs.tgt = gs.wt = NULL;
    gs.want = gs.got = NULL;
}

/* Dijkstra with a binary heap of (dist << 32 | vertex) (dist < 2^32 here). */
static void host_sssp(uint32_t root)
{
    uint32_t n = gs.n;
    size_t cap = gs.off[n] + 2, len = 0;
    uint64_t *heap = malloc(cap * sizeof *heap);
    for (uint32_t v = 0; v < n; v++)
        gs.want[v] = UNREACHED;
    if (heap == NULL)
        return;
    gs.want[root] = 0;
    heap[len++] = (uint64_t)root;
    while (len > 0) {
        uint64_t top = heap[0];
        heap[0] = heap[--len];
        for (size_t i = 0;;) { /* sift down */
            size_t l = 2 * i + 1, r = l + 1, s = i;
            if (l < len && heap[l] < heap[s])
                s = l;
            if (r < len && heap[r] < heap[s])
                s = r;
            if (s == i)
                break;
            uint64_t t = heap[i];
            heap[i] = heap[s];
            heap[s] = t;
            i = s;
        }
        uint32_t u = (uint32_t)top;
        uint64_t d = top >> 32;
        if (d != gs.want[u])
            continue;
        for (uint64_t e = gs.off[u]; e < gs.off[u + 1]; e++) {
            uint32_t v = gs.tgt[e];
            uint64_t nd = d + gs.wt[e];
            if (nd < gs.want[v] && len < cap) {
                gs.want[v] = nd;
                size_t i = len++;
                heap[i] = nd << 32 | v;
                while (i > 0 && heap[(i - 1) / 2] > heap[i]) { /* sift up */
                    uint64_t t = heap[i];
                    heap[i] = heap[(i - 1) / 2];
                    heap[(i - 1) / 2] = t;
                    i = (i - 1) / 2;
                }
            }
        }
    }
    free(heap);
}

/* BFS levels; each vertex's cell: depth << 32 | smallest parent at depth - 1
 * (the root: its own number, depth 0). */
static void host_bfs(uint32_t root)
{
    uint32_t n = gs.n, *q = malloc((size_t)n * sizeof *q), head = 0, tail = 0;
    for (uint32_t v = 0; v < n; v++)
        gs.want[v] = UNREACHED;
    if (q == NULL)
        return;
    gs.want[root] = root;
    q[tail++] = root;
    while (head < tail) {
        uint32_t u = q[head++];
        uint64_t d = (gs.want[u] >> 32) + 1;
        for (uint64_t e = gs.off[u]; e < gs.off[u + 1]; e++) {
            uint32_t v = gs.tgt[e];
            uint64_t cand = d << 32 | u;
            if (gs.want[v] == UNREACHED)
                q[tail++] = v;
            if (cand < gs.want[v] && v != root)
                gs.want[v] = cand;
        }
    }
    free(q);
}

/* One traversal; false once the runtime is gone (race) or broke. */
static bool traverse(mkrt_runtime *rt, mkrt_producer *p, uint64_t *rng, bool race_now)
{
    uint32_t n = gs.n, root = rnd_below(rng, n);
    bool bfs = rnd_below(rng, 2) == 0;
    heartbeat("graph: reset");
    for (uint32_t v = 0; v < n; v++)
        mkrt_cell_write(rt, v, UNREACHED);
    mkrt_cell_write(rt, n, 0);
    if (bfs)
        mkrt_cell_write(rt, root, root);
    mkrt_item seed = bfs ? (mkrt_item){OP_VISIT, root, root, SEED} : (mkrt_item){MKRT_OP_RELAX, n, root, 0};
    uint64_t t0 = stress_now_ns();
    mkrt_error err;
    mkrt_status st = mkrt_publish(p, &seed, 1, LONG_NS, &err);
    if (st != MKRT_OK) {
        soak_error("graph: publish the seed: %s", err.message);
        return false;
    }
    atomic_fetch_add(&g_items, 1);
    if (race_now)
        return true; /* the caller destroys the runtime now */
    heartbeat("graph: quiesce");
    st = mkrt_quiesce(rt, LONG_NS);
    atomic_fetch_add(&g_quiesce_calls, 1);
    if (st != MKRT_OK) {
        soak_error("graph: mkrt_quiesce after a %s from %u: %s", bfs ? "BFS" : "SSSP", root,
                   mkrt_status_name(st));
        return false;
    }
    soak_latency_record(stress_now_ns() - t0);
    atomic_fetch_add(&g_traversals, 1);
    mkrt_cells_read(rt, 0, n, gs.got);
    heartbeat("graph: check");
    if (bfs)
        host_bfs(root);
    else
        host_sssp(root);
    if (sabotage(SAB_WRONG_DIST))
        gs.want[root == 0 ? 1 : 0] += 1;
    uint32_t bad = 0;
    for (uint32_t v = 0; v < n; v++)
        if (gs.got[v] != gs.want[v] && bad++ < 3)
            soak_error("graph: %s from %u on %s (%u vertices): vertex %u = %llu, the host says %llu%s",
                       bfs ? "BFS" : "SSSP", root, backend_name(gs.backend), n, v,
                       (unsigned long long)gs.got[v], (unsigned long long)gs.want[v],
                       bfs ? " (depth << 32 | smallest parent)" : "");
    return bad == 0;
}

void graph_round(unsigned index, uint64_t now, uint64_t t_stop)
{
    soak_plan plan;
    soak_plan_round(&plan, index, now, t_stop);
    memset(&gs, 0, sizeof gs);
    gs.backend = plan.backend;
    uint64_t *rng = &plan.rng;
    if (!build_graph(rng)) {
        soak_error("graph: out of memory building a graph");
        free_graph();
        return;
    }
    if (plan.backend == MKRT_BACKEND_CUDA)
        soak_cuda_env(false, rng);
    mkrt_config c = mkrt_config_default();
    c.backend = plan.backend;
    c.workers = 1 + rnd_below(rng, 3);
    c.cells = gs.n + 1;
    c.watchdog_ms = 2000;
    c.append_log_capacity = 0;
    c.max_batch = (size_t)64 << rnd_below(rng, 5);
    c.on_error = graph_on_error;
    c.error_ctx = &gs;
    bool skip;
    mkrt_runtime *rt = soak_create(&plan, &c, &skip);
    if (rt == NULL) {
        free_graph();
        return;
    }
    soak_live_set(rt);
    mkrt_graph g = {gs.n, gs.off, gs.tgt, gs.wt};
    mkrt_error err;
    mkrt_status st;
    set_fail_ppm(plan.storms ? 100000 : 0); /* registration through a storm */
    while ((st = mkrt_graph_register(rt, &g, &err)) == MKRT_ENOMEM)
        atomic_fetch_add(&g_enomem_retries, 1);
    set_fail_ppm(0);
    mkrt_op_desc d = {.fn = visit, .name = "visit", .idempotent = true, .commutes = true, .expands = true,
                      .pulls = true};
    if (st != MKRT_OK || mkrt_op_register(rt, OP_VISIT, &d, &err) != MKRT_OK) {
        soak_error("graph: register the graph or VISIT: %s", err.message);
        soak_live_retire();
        mkrt_destroy(rt, LONG_NS, NULL);
        free_graph();
        return;
    }
    mkrt_producer *p = soak_open(rt, NULL);
    uint64_t t_race = plan.race ? plan.t0 + (plan.t_end - plan.t0) * (30 + rnd_below(rng, 60)) / 100 : UINT64_MAX;
    bool alive = p != NULL, raced = false;
    while (alive && stress_now_ns() < plan.t_end) {
        bool race_now = stress_now_ns() >= t_race;
        alive = traverse(rt, p, rng, race_now);
        if (race_now) {
            raced = true;
            break;
        }
    }
    if (raced) {
        atomic_fetch_add(&g_race_rounds, 1);
        heartbeat("graph: race destroy");
        soak_live_retire();
        uint64_t timeout = rnd_below(rng, 2) ? LONG_NS : rnd_below(rng, 2000000);
        st = mkrt_destroy(rt, timeout, &err);
        if (st == MKRT_ETIMEDOUT && timeout != LONG_NS)
            atomic_fetch_add(&g_destroy_timeouts, 1);
        else if (st != MKRT_OK)
            soak_error("graph: mkrt_destroy during a traversal: %s: %s", mkrt_status_name(st), err.message);
        mkrt_producer_close(p);
    } else {
        if (p != NULL) {
            mkrt_stats s;
            if (mkrt_quiesce(rt, LONG_NS) != MKRT_OK)
                soak_error("graph: mkrt_quiesce at the end of the round failed");
            mkrt_producer_stats ps;
            uint64_t pub = mkrt_stats_producers(rt, &ps, 1) == 1 ? ps.published : 0;
            soak_check_accounting(rt, "graph", pub, atomic_load(&gs.callbacks), &s);
            mkrt_producer_close(p);
        }
        soak_live_retire();
        heartbeat("graph: destroy");
        if ((st = mkrt_destroy(rt, LONG_NS, &err)) != MKRT_OK)
            soak_error("graph: mkrt_destroy: %s: %s", mkrt_status_name(st), err.message);
    }
    atomic_fetch_add(&g_callbacks, atomic_load(&gs.callbacks));
    if (opt.verbose)
        printf("round %u graph %s%s: %u vertices %llu edges\n", index, backend_name(plan.backend),
               raced ? " race" : "", gs.n, (unsigned long long)gs.off[gs.n]);
    free_graph();
}
