/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/ring_bench.c - items/s through mkrt's rings and their peers.
 *
 * Producers move 16-byte items to one consumer in bursts of 1, 8 and 64;
 * the consumer drains up to 64 items per call, as mkrt's dispatcher does. Every contestant runs the same harness:
 * try-push / try-pop in a loop, pause on failure, yield after a while (the
 * machine has 2 cores and 2P1C oversubscribes it). Each case runs `reps`
 * times; the median is reported. Peers:
 *   rte_ring  DPDK's ring, _elem burst API, 16-byte elements, rte_ring_init
 *             on our own memory (no EAL), SP/SC and MP/MC modes
 *   ck_ring   Concurrency Kit, typed ring, SPSC and MPMC (no burst API:
 *             one call per item)
 *   wfcqueue  liburcu's wait-free concurrent queue (MPSC; nodes from a
 *             preallocated pool, dequeue one at a time)
 *   mutex     a mutex ring with burst copies
 *
 *   ring_bench [--quick] [--out FILE.md] [--csv FILE.csv]
 */
#include <ck_ring.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <stdatomic.h>
#include <stdbool.h>
#define _LGPL_SOURCE
#include <urcu/wfcqueue.h>

#include "base/thread.h"
#include "bench_util.h"
#include "mkrt/ring.h"

#define RING_CAP 4096
#define MAX_PRODUCERS 2
/* The consumer drains like mkrt's dispatcher: up to 64 items per call. */
#define CONSUMER_BURST 64

/* ---- contestants ------------------------------------------------------ */

typedef struct contestant {
    const char *name;
    const char *mode; /* "spsc" or "mpmc" */
    bool multi_producer;
    void *(*make)(void);
    void (*drop)(void *);
    size_t (*push)(void *, const mkrt_item *, size_t);
    size_t (*pop)(void *, mkrt_item *, size_t);
} contestant;

static void *mk_spsc(void) { return mkrt_spsc_ring_create(RING_CAP, NULL); }
static void dr_spsc(void *r) { mkrt_spsc_ring_destroy(r); }
static size_t pu_spsc(void *r, const mkrt_item *i, size_t n) { return mkrt_spsc_ring_push(r, i, n); }
static size_t po_spsc(void *r, mkrt_item *o, size_t n) { return mkrt_spsc_ring_pop(r, o, n); }
static void *mk_mpmc(void) { return mkrt_mpmc_ring_create(RING_CAP, NULL); }
static void dr_mpmc(void *r) { mkrt_mpmc_ring_destroy(r); }
static size_t pu_mpmc(void *r, const mkrt_item *i, size_t n) { return mkrt_mpmc_ring_push(r, i, n); }
static size_t po_mpmc(void *r, mkrt_item *o, size_t n) { return mkrt_mpmc_ring_pop(r, o, n); }

static void *mk_rte(unsigned flags)
{
    ssize_t sz = rte_ring_get_memsize_elem(sizeof(mkrt_item), RING_CAP);
    struct rte_ring *r = aligned_alloc(128, ((size_t)sz + 127) & ~(size_t)127);
    if (r == NULL || rte_ring_init(r, "bench", RING_CAP, flags) != 0) {
        fprintf(stderr, "ring_bench: rte_ring_init failed\n");
        exit(1);
    }
    return r;
}
static void *mk_rte_sp(void) { return mk_rte(RING_F_SP_ENQ | RING_F_SC_DEQ); }
static void *mk_rte_mp(void) { return mk_rte(0); }
static void dr_free(void *r) { free(r); }
static size_t pu_rte_sp(void *r, const mkrt_item *i, size_t n)
{
    return rte_ring_sp_enqueue_burst_elem(r, i, sizeof *i, (unsigned)n, NULL);
}
static size_t po_rte_sc(void *r, mkrt_item *o, size_t n)
{
    return rte_ring_sc_dequeue_burst_elem(r, o, sizeof *o, (unsigned)n, NULL);
}
static size_t pu_rte_mp(void *r, const mkrt_item *i, size_t n)
{
    return rte_ring_mp_enqueue_burst_elem(r, i, sizeof *i, (unsigned)n, NULL);
}
static size_t po_rte_mc(void *r, mkrt_item *o, size_t n)
{
    return rte_ring_mc_dequeue_burst_elem(r, o, sizeof *o, (unsigned)n, NULL);
}

struct ck_item { uint32_t op, in, out, param; };
CK_RING_PROTOTYPE(item, ck_item)
typedef struct ck_box {
    struct ck_ring ring;
    struct ck_item *buf;
} ck_box;
static void *mk_ck(void)
{
    ck_box *b = aligned_alloc(64, sizeof(ck_box) + 64);
    b->buf = aligned_alloc(64, RING_CAP * sizeof(struct ck_item));
    ck_ring_init(&b->ring, RING_CAP);
    return b;
}
static void dr_ck(void *p)
{
    ck_box *b = p;
    free(b->buf);
    free(b);
}
static size_t pu_ck_sp(void *p, const mkrt_item *i, size_t n)
{
    ck_box *b = p;
    size_t k = 0;
    while (k < n && ck_ring_enqueue_spsc_item(&b->ring, b->buf, (struct ck_item *)&i[k]))
        k++;
    return k;
}
static size_t po_ck_sc(void *p, mkrt_item *o, size_t n)
{
    ck_box *b = p;
    size_t k = 0;
    while (k < n && ck_ring_dequeue_spsc_item(&b->ring, b->buf, (struct ck_item *)&o[k]))
        k++;
    return k;
}
static size_t pu_ck_mp(void *p, const mkrt_item *i, size_t n)
{
    ck_box *b = p;
    size_t k = 0;
    while (k < n && ck_ring_enqueue_mpmc_item(&b->ring, b->buf, (struct ck_item *)&i[k]))
        k++;
    return k;
}
static size_t po_ck_mc(void *p, mkrt_item *o, size_t n)
{
    ck_box *b = p;
    size_t k = 0;
    while (k < n && ck_ring_dequeue_mpmc_item(&b->ring, b->buf, (struct ck_item *)&o[k]))
        k++;
    return k;
}

/* wfcqueue: nodes come from a per-producer pool of RING_CAP nodes, so the
 * queue is bounded like the rings: a producer may run at most RING_CAP
 * nodes ahead of what the consumer has returned. */
typedef struct wfc_node {
    struct cds_wfcq_node node;
    mkrt_item item;
} wfc_node;
typedef struct wfc_box {
    struct cds_wfcq_head head;
    struct cds_wfcq_tail tail;
    wfc_node *pool[MAX_PRODUCERS];
    _Atomic uint64_t sent[MAX_PRODUCERS] __attribute__((aligned(64)));
    _Atomic uint64_t returned[MAX_PRODUCERS] __attribute__((aligned(64)));
    uint64_t consumer_count[MAX_PRODUCERS];
} wfc_box;
static void *mk_wfc(void)
{
    wfc_box *b = aligned_alloc(64, (sizeof(wfc_box) + 63) & ~(size_t)63);
    memset(b, 0, sizeof *b);
    cds_wfcq_init(&b->head, &b->tail);
    for (int p = 0; p < MAX_PRODUCERS; p++)
        b->pool[p] = calloc(RING_CAP, sizeof(wfc_node));
    return b;
}
static void dr_wfc(void *p)
{
    wfc_box *b = p;
    for (int i = 0; i < MAX_PRODUCERS; i++)
        free(b->pool[i]);
    cds_wfcq_destroy(&b->head, &b->tail);
    free(b);
}
static size_t pu_wfc(void *p, const mkrt_item *items, size_t n)
{
    wfc_box *b = p;
    uint32_t who = items[0].op; /* the harness puts the producer id in op */
    /* relaxed: only this producer writes sent[who]. */
    uint64_t sent = atomic_load_explicit(&b->sent[who], memory_order_relaxed);
    /* acquire: pairs with the consumer's release of returned[]. */
    uint64_t back = atomic_load_explicit(&b->returned[who], memory_order_acquire);
    size_t room = RING_CAP - (size_t)(sent - back);
    size_t k = n < room ? n : room;
    for (size_t i = 0; i < k; i++) {
        wfc_node *nd = &b->pool[who][(sent + i) % RING_CAP];
        cds_wfcq_node_init(&nd->node);
        nd->item = items[i];
        cds_wfcq_enqueue(&b->head, &b->tail, &nd->node);
    }
    atomic_store_explicit(&b->sent[who], sent + k, memory_order_relaxed);
    return k;
}
static size_t po_wfc(void *p, mkrt_item *out, size_t n)
{
    wfc_box *b = p;
    size_t k = 0;
    while (k < n) {
        struct cds_wfcq_node *nd = __cds_wfcq_dequeue_blocking(&b->head, &b->tail);
        if (nd == NULL)
            break;
        wfc_node *w = caa_container_of(nd, wfc_node, node);
        out[k++] = w->item;
        uint32_t who = w->item.op;
        if (++b->consumer_count[who] % 64 == 0)
            atomic_store_explicit(&b->returned[who], b->consumer_count[who], memory_order_release);
    }
    return k;
}

typedef struct mutex_ring {
    mkrt__mutex lock;
    uint64_t head, tail;
    mkrt_item slots[RING_CAP];
} mutex_ring;
static void *mk_mutex(void)
{
    mutex_ring *m = calloc(1, sizeof *m);
    mkrt__mutex_init(&m->lock);
    return m;
}
static void dr_mutex(void *p)
{
    mutex_ring *m = p;
    mkrt__mutex_destroy(&m->lock);
    free(m);
}
static size_t pu_mutex(void *p, const mkrt_item *items, size_t n)
{
    mutex_ring *m = p;
    mkrt__mutex_lock(&m->lock);
    size_t room = RING_CAP - (size_t)(m->head - m->tail), k = n < room ? n : room;
    for (size_t i = 0; i < k; i++)
        m->slots[(m->head + i) % RING_CAP] = items[i];
    m->head += k;
    mkrt__mutex_unlock(&m->lock);
    return k;
}
static size_t po_mutex(void *p, mkrt_item *out, size_t n)
{
    mutex_ring *m = p;
    mkrt__mutex_lock(&m->lock);
    size_t have = (size_t)(m->head - m->tail), k = n < have ? n : have;
    for (size_t i = 0; i < k; i++)
        out[i] = m->slots[(m->tail + i) % RING_CAP];
    m->tail += k;
    mkrt__mutex_unlock(&m->lock);
    return k;
}

static const contestant contestants[] = {
    {"mkrt_spsc", "spsc", false, mk_spsc, dr_spsc, pu_spsc, po_spsc},
    {"rte_ring SP/SC", "spsc", false, mk_rte_sp, dr_free, pu_rte_sp, po_rte_sc},
    {"ck_ring SPSC", "spsc", false, mk_ck, dr_ck, pu_ck_sp, po_ck_sc},
    {"mkrt_mpmc", "mpmc", true, mk_mpmc, dr_mpmc, pu_mpmc, po_mpmc},
    {"rte_ring MP/MC", "mpmc", true, mk_rte_mp, dr_free, pu_rte_mp, po_rte_mc},
    {"ck_ring MPMC", "mpmc", true, mk_ck, dr_ck, pu_ck_mp, po_ck_mc},
    {"wfcqueue", "mpsc", true, mk_wfc, dr_wfc, pu_wfc, po_wfc},
    {"mutex ring", "mpmc", true, mk_mutex, dr_mutex, pu_mutex, po_mutex},
};
#define N_CONTESTANTS (sizeof contestants / sizeof contestants[0])

/* ---- harness ---------------------------------------------------------- */

typedef struct run_ctx {
    const contestant *c;
    void *ring;
    size_t burst;
    uint64_t per_producer;
    unsigned producers;
    _Atomic unsigned ready;
    _Atomic bool go;
} run_ctx;

typedef struct prod_arg {
    run_ctx *ctx;
    uint32_t id;
} prod_arg;

static void wait_go(run_ctx *x)
{
    atomic_fetch_add(&x->ready, 1);
    while (!atomic_load_explicit(&x->go, memory_order_acquire))
        ;
}

static void backoff(unsigned *fails)
{
    if (++*fails < 256) {
        __builtin_ia32_pause();
    } else {
        *fails = 0;
        sched_yield();
    }
}

static int producer_main(void *p)
{
    prod_arg *a = p;
    run_ctx *x = a->ctx;
    if (x->producers == 1)
        bench_pin(0);
    mkrt_item buf[64];
    for (size_t i = 0; i < 64; i++)
        buf[i] = (mkrt_item){a->id, 0, 0, 0};
    wait_go(x);
    uint64_t left = x->per_producer;
    unsigned fails = 0;
    while (left > 0) {
        size_t n = left < x->burst ? (size_t)left : x->burst;
        buf[0].param = (uint32_t)left;
        size_t k = x->c->push(x->ring, buf, n);
        if (k == 0) {
            backoff(&fails);
            continue;
        }
        fails = 0;
        left -= k;
    }
    return 0;
}

/* Returns items per second for one run. */
static double run_once(const contestant *c, unsigned producers, size_t burst, uint64_t total)
{
    run_ctx x = {.c = c, .ring = c->make(), .burst = burst, .producers = producers,
                 .per_producer = total / producers};
    mkrt__thread th[MAX_PRODUCERS];
    prod_arg args[MAX_PRODUCERS];
    for (unsigned p = 0; p < producers; p++) {
        args[p] = (prod_arg){&x, p};
        mkrt__thread_start(&th[p], producer_main, &args[p]);
    }
    bench_pin(producers == 1 ? 1 : -1);
    while (atomic_load(&x.ready) < producers)
        ;
    mkrt_item buf[64];
    uint64_t want = x.per_producer * producers, got = 0;
    unsigned fails = 0;
    uint64_t t0 = bench_now_ns();
    atomic_store_explicit(&x.go, true, memory_order_release);
    while (got < want) {
        size_t k = c->pop(x.ring, buf, CONSUMER_BURST);
        if (k == 0) {
            backoff(&fails);
            continue;
        }
        fails = 0;
        got += k;
    }
    uint64_t t1 = bench_now_ns();
    for (unsigned p = 0; p < producers; p++)
        mkrt__thread_join(th[p]);
    c->drop(x.ring);
    bench_pin(-1); /* unpin the main thread for the next case */
    return (double)want / ((double)(t1 - t0) / 1e9);
}

typedef struct result {
    unsigned producers;
    size_t burst;
    double mps[N_CONTESTANTS]; /* M items/s, 0 = not run */
} result;

static double find(const result *r, const char *name)
{
    for (size_t i = 0; i < N_CONTESTANTS; i++)
        if (strcmp(contestants[i].name, name) == 0)
            return r->mps[i];
    return 0;
}

int main(int argc, char **argv)
{
    bench_opts opt;
    bench_args(argc, argv, &opt);
    const bool quick = opt.quick;
    const int reps = quick ? 1 : 5;
    static const struct { unsigned producers; size_t burst; } cases[] = {
        {1, 1}, {1, 8}, {1, 64}, {2, 1}, {2, 8}, {2, 64}};
    result res[sizeof cases / sizeof cases[0]];
    char machine[256];
    bench_machine(machine, sizeof machine);
    printf("ring_bench: 16-byte items, ring capacity %d, median of %d run(s); %s\n", RING_CAP,
           reps, machine);
    printf("%-4s %-5s %-16s %10s\n", "P:C", "burst", "ring", "M items/s");
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        result *r = &res[ci];
        r->producers = cases[ci].producers;
        r->burst = cases[ci].burst;
        uint64_t total = (uint64_t)(quick ? 1 : 2) << (cases[ci].burst == 1 ? 21 : 23);
        for (size_t k = 0; k < N_CONTESTANTS; k++) {
            const contestant *c = &contestants[k];
            r->mps[k] = 0;
            if (r->producers > 1 && !c->multi_producer)
                continue;
            double v[8];
            for (int i = 0; i < reps; i++)
                v[i] = run_once(c, r->producers, r->burst, total);
            r->mps[k] = bench_median(v, reps) / 1e6;
            printf("%u:1  %-5zu %-16s %10.1f\n", r->producers, r->burst, c->name, r->mps[k]);
            fflush(stdout);
        }
    }

    /* Ratios and targets. */
    char report[8192];
    size_t len = 0;
#define EMIT(...) len += (size_t)snprintf(report + len, sizeof report - len, __VA_ARGS__)
    EMIT("| P:C | burst |");
    for (size_t k = 0; k < N_CONTESTANTS; k++)
        EMIT(" %s |", contestants[k].name);
    EMIT("\n|---|---|");
    for (size_t k = 0; k < N_CONTESTANTS; k++)
        EMIT("---|");
    EMIT("\n");
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        EMIT("| %u:1 | %zu |", res[ci].producers, res[ci].burst);
        for (size_t k = 0; k < N_CONTESTANTS; k++) {
            if (res[ci].mps[k] > 0)
                EMIT(" %.1f |", res[ci].mps[k]);
            else
                EMIT(" - |");
        }
        EMIT("\n");
    }
    EMIT("\nM items/s, median of %d runs.\n\n| target | ratio | met |\n|---|---|---|\n", reps);
#define TARGET(desc, num, den, want)                                                         \
    do {                                                                                     \
        double ratio_ = (den) > 0 ? (num) / (den) : 0;                                       \
        bool met_ = ratio_ >= (want);                                                        \
        EMIT("| %s >= %.1fx | %.2fx | %s |\n", desc, want, ratio_, met_ ? "yes" : "NO");     \
    } while (0)
    TARGET("1:1 burst 1: mkrt_spsc / ck_ring SPSC", find(&res[0], "mkrt_spsc"),
           find(&res[0], "ck_ring SPSC"), 1.0);
    TARGET("1:1 burst 8: mkrt_spsc / rte_ring SP/SC", find(&res[1], "mkrt_spsc"),
           find(&res[1], "rte_ring SP/SC"), 1.0);
    TARGET("1:1 burst 64: mkrt_spsc / rte_ring SP/SC", find(&res[2], "mkrt_spsc"),
           find(&res[2], "rte_ring SP/SC"), 1.0);
    TARGET("1:1 burst 8: mkrt_mpmc / rte_ring MP/MC", find(&res[1], "mkrt_mpmc"),
           find(&res[1], "rte_ring MP/MC"), 1.0);
    TARGET("1:1 burst 64: mkrt_mpmc / rte_ring MP/MC", find(&res[2], "mkrt_mpmc"),
           find(&res[2], "rte_ring MP/MC"), 1.0);
    TARGET("2:1 burst 1: mkrt_mpmc / mutex ring", find(&res[3], "mkrt_mpmc"),
           find(&res[3], "mutex ring"), 2.0);
    TARGET("2:1 burst 8: mkrt_mpmc / rte_ring MP/MC", find(&res[4], "mkrt_mpmc"),
           find(&res[4], "rte_ring MP/MC"), 1.0);
    TARGET("2:1 burst 64: mkrt_mpmc / rte_ring MP/MC", find(&res[5], "mkrt_mpmc"),
           find(&res[5], "rte_ring MP/MC"), 1.0);
    TARGET("1:1 burst 1: mkrt_spsc / wfcqueue", find(&res[0], "mkrt_spsc"),
           find(&res[0], "wfcqueue"), 1.0);
    printf("\n%s", report);
    char setup[512];
    snprintf(setup, sizeof setup, "producers push 16-byte items in the burst size shown; one consumer pops up to 64 per call (as the dispatcher drains); ring capacity %d; producer and consumer pinned to CPUs 0 and 1 in 1:1 cases, unpinned (3 threads on 2 CPUs) in 2:1 cases.", RING_CAP);
    bench_csv csv;
    if (bench_csv_open(&csv, opt.csv, "ring") != 0)
        return 1;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (size_t k = 0; k < N_CONTESTANTS; k++)
            if (res[ci].mps[k] > 0)
                bench_csv_rowp(&csv, res[ci].producers == 1 ? "1P1C" : "2P1C", (double)res[ci].burst,
                               contestants[k].name, res[ci].mps[k], "M items/s");
    if (bench_csv_close(&csv) != 0)
        return 1;
    if (bench_write_report(&opt, "make bench RECORD=1", "Ring throughput: mkrt vs DPDK rte_ring, ck_ring, liburcu wfcqueue, mutex ring", machine, setup, report) != 0)
        return 1;
    return 0;
}
