/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/soak/mpi/soak_mpi.c - mkrt-soak-mpi: the soak's MPI workload,
 * run under mpirun (2 or 3 ranks; any number works):
 *
 *   mpirun -np 3 build/bin/mkrt-soak-mpi --seconds 60
 *
 * Rounds until --seconds are up (rank 0 decides, every rank follows).
 * Each round every rank creates a runtime (CPU or SIM, rotating) and an
 * mkrt_mpi layer over it (libmkrt_mpi: handles split between the ranks,
 * block or hash partition, small outboxes now and then for
 * backpressure), registers HOP, and runs --producers threads that
 * publish with mkrt_mpi_publish:
 *   HOP(out, k)  cells[out] += 1 and, when k > 0, first emits HOP(f(out,
 *                k), k - 1) with mkrt_mpi_op_emit to the owner of f(out,
 *                k), mostly another rank. When the outbox is full
 *                (MKRT_EAGAIN) it emits itself again locally to retry in
 *                a later batch, up to 8 times; then, or when that emit
 *                fails (MKRT_EOVERFLOW), it fails, and the rest of its
 *                walk is lost.
 *   ACC(out, p)  the built-in, to any rank's handle.
 * Every rank books what it published as expected increments per handle
 * (a HOP's walk is deterministic) and what its error callback saw as lost
 * walks. After mkrt_mpi_quiesce: the expected and lost vectors are summed
 * over the ranks (mkrt_mpi_allreduce_sum), the cells gathered on rank 0
 * (mkrt_mpi_gather_cells), and every handle must equal expected - lost;
 * a second quiesce and gather must find the same cells (nothing ran after
 * the first returned). While a HOP runs it must be alone in its out cell
 * (op_hop counts the HOPs inside each): the layering's promise, checked
 * over the whole op, where a lost increment shows only now and then.
 * Exactly once: on every rank published + emitted = executed + pruned +
 * failed and failed = callbacks; over the ranks, forwarded = received,
 * and the runtimes' published = what the producers published + the
 * HOPs emitted to other ranks. Then mkrt_mpi_destroy and mkrt_destroy;
 * between rounds the allocator's blocks, the fds and the threads must be
 * back (soak_env.c). Allocation storms hit the producers' opens. Metrics
 * every --interval on each rank (rank 0 prints; --csv/--json files get
 * ".rankN" on rank N > 0) and drift verdicts per rank (soak_metrics.c).
 * The program initialises MPI itself (MPI_THREAD_SERIALIZED) and calls
 * MPI only between rounds, when no mkrt_mpi exists, so the layer never
 * finalises it. After each such round, a graph round: libmkrt_mpi's
 * distributed engine (mkrt_mpi/graph.h) opened on a Kronecker graph (scale
 * 9 to 11, the same on every rank) with a random partition, workers and,
 * now and then, its own rounds at one rank; BFS and SSSP from two roots,
 * each result gathered to rank 0 and checked there by the Graph500 kit's
 * validators; then closed, and the resources checked as after any round.
 * Exit 0 when every rank passed. */
#include <getopt.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "mkrt_mpi/graph.h"
#include "mkrt_mpi/mkrt_mpi.h"
#include "../../../examples/graph500/graph500.h"
#include "../soak.h"

#define H 4096u /* global handles */
#define OP_HOP 16
#define BATCH 32
#define RETRIES 8 /* a HOP whose outbox is full: retries before it fails */

typedef struct mround {
    mkrt_mpi *m;
    mkrt_runtime *rt;
    int rank;
    _Atomic bool stop;
    _Atomic uint64_t callbacks, remote_emits, eagain, unexpected;
    _Atomic uint64_t lost[H];
    _Atomic uint32_t inside[H]; /* HOPs of out h running now (op_hop's check) */
    _Atomic uint64_t overlaps;
    uint64_t expect[MAX_PRODUCERS][H]; /* per producer thread */
    uint64_t published[MAX_PRODUCERS];
    mkrt__thread thread[MAX_PRODUCERS]; /* each stays here until joined */
    bool started[MAX_PRODUCERS];
    uint64_t rng[MAX_PRODUCERS];
} mround;

static mround R;

static uint32_t next_handle(uint32_t h, uint32_t k)
{
    uint64_t x = (uint64_t)h * 0x9E3779B97F4A7C15ull + (uint64_t)k * 0xBF58476D1CE4E5B9ull + 1;
    return (uint32_t)((x ^ (x >> 29)) % H);
}

/* The walk of HOP(h, k): cells h, f(h, k), ... (k + 1 of them). */
static void walk(uint32_t h, uint32_t k, uint64_t *into, _Atomic uint64_t *into_atomic)
{
    for (uint32_t j = k;; j--) {
        if (into != NULL)
            into[h]++;
        else
            /* relaxed: read after mkrt_mpi_quiesce (its waves synchronise). */
            atomic_fetch_add_explicit(&into_atomic[h], 1, memory_order_relaxed);
        if (j == 0)
            break;
        h = next_handle(h, j);
    }
}

static mkrt_status hop_run(mround *r, const mkrt_item *it, const mkrt_op_ctx *ctx);

/* HOP: two items with one out handle never run at once (the layering and
 * the barriers keep them apart), so while one runs it is alone in its
 * out cell; a second one there is a lost increment in the making, caught
 * here over the whole op rather than the one `+= 1` (the handle check
 * below sees only the increments that were lost). seq_cst: a counter of
 * the threads inside, nothing else rides on it. */
static mkrt_status op_hop(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    mround *r = ctx->user;
    if (atomic_fetch_add(&r->inside[it->out], 1) != 0 && atomic_fetch_add(&r->overlaps, 1) < 3)
        soak_error("mpi rank %d: two HOPs of out %u ran at once (this one: in %u param %u)", r->rank, it->out,
                   it->in, it->param);
    mkrt_status st = hop_run(r, it, ctx);
    atomic_fetch_sub(&r->inside[it->out], 1);
    return st;
}

static mkrt_status hop_run(mround *r, const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    if (it->param > 0) {
        mkrt_item next = {OP_HOP, it->out, next_handle(it->out, it->param), it->param - 1};
        mkrt_status st = mkrt_mpi_op_emit(r->m, ctx, &next, 1, NULL);
        if (st == MKRT_EAGAIN) {
            /* Retry this item in a later batch, at most RETRIES times (the
             * count rides in `in`, a local scratch handle), then fail it:
             * unbounded retries kept two ranks busy re-emitting for tens
             * of seconds while their outboxes drained. */
            atomic_fetch_add(&r->eagain, 1);
            uint32_t tries = it->in >= H ? it->in - H : 0;
            if (tries >= RETRIES)
                return MKRT_EAGAIN;
            mkrt_item again = {OP_HOP, H + tries + 1, it->out, it->param};
            return mkrt_op_emit(ctx, &again, 1);
        }
        if (st != MKRT_OK)
            return st;
        if (mkrt_mpi_owner(r->m, next.out) != r->rank)
            atomic_fetch_add(&r->remote_emits, 1);
    }
    ctx->cells[it->out] += 1;
    return MKRT_OK;
}

static void on_error(void *ctx, const mkrt_item *it, mkrt_status why, const char *msg)
{
    mround *r = ctx;
    atomic_fetch_add(&r->callbacks, 1);
    if (why != MKRT_EOVERFLOW && why != MKRT_EAGAIN && !(why == MKRT_EDEVICE || why == MKRT_ETIMEDOUT)) {
        atomic_fetch_add(&r->unexpected, 1);
        soak_error("mpi rank %d: unexpected failure %s of op %u out %u param %u: %s", r->rank,
                   mkrt_status_name(why), it->op, it->out, it->param, msg ? msg : "");
    }
    if (it->op == OP_HOP && it->out < H)
        walk(it->out, it->param, NULL, r->lost);
    else if (it->op == MKRT_OP_ACC && it->out < H)
        atomic_fetch_add(&r->lost[it->out], it->param);
}

static int producer_main(void *arg)
{
    unsigned s = (unsigned)(uintptr_t)arg;
    mround *r = &R;
    mkrt_producer *p = soak_open(r->rt, &r->stop);
    if (p == NULL)
        return 0;
    uint64_t *rng = &r->rng[s];
    mkrt_item buf[BATCH];
    while (!atomic_load(&r->stop)) {
        size_t n = 1 + rnd_below(rng, BATCH);
        for (size_t i = 0; i < n; i++) {
            uint32_t h = rnd_below(rng, H);
            buf[i] = rnd_below(rng, 4) ? (mkrt_item){OP_HOP, h, h, rnd_below(rng, 24)}
                                       : (mkrt_item){MKRT_OP_ACC, h, h, 1 + rnd_below(rng, 1000)};
        }
        uint64_t t0 = stress_now_ns();
        size_t done = 0;
        while (done < n) {
            size_t k = 0;
            mkrt_error err;
            mkrt_status st = mkrt_mpi_publish(r->m, p, buf + done, n - done, 50000000ull, &k, &err);
            for (size_t i = done; i < done + k; i++) {
                if (buf[i].op == OP_HOP)
                    walk(buf[i].out, buf[i].param, r->expect[s], NULL);
                else
                    r->expect[s][buf[i].out] += buf[i].param;
            }
            done += k;
            r->published[s] += k;
            atomic_fetch_add_explicit(&g_items, k, memory_order_relaxed); /* relaxed: a counter */
            if (st == MKRT_ETIMEDOUT) {
                atomic_fetch_add(&g_backpressure, 1);
                continue;
            }
            if (st != MKRT_OK)
                soak_error("mpi rank %d: mkrt_mpi_publish: %s: %s", r->rank, mkrt_status_name(st), err.message);
            break;
        }
        uint64_t t;
        if (mkrt_fence(p, &t) == MKRT_OK && mkrt_wait(p, t, LONG_NS) == MKRT_OK)
            soak_latency_record(stress_now_ns() - t0); /* the local part of the batch */
    }
    mkrt_producer_close(p);
    return 0;
}

/* The counters of report_off's table, one row per rank (up to ROW_RANKS
 * ranks; more ranks: no table). */
enum { ROW_N = 13, ROW_RANKS = 16 };

/* The handles that are off (cell != expected - lost) on rank 0: how
 * many, above and below, the range and the sum of the differences, and
 * how many of each rank's (up to ROW_RANKS ranks). */
typedef struct off_tally {
    unsigned bad, over;
    int64_t off, least, most;
    unsigned per_owner[ROW_RANKS];
} off_tally;

static void tally_off(off_tally *t, int64_t d, int owner)
{
    if (t->bad++ == 0)
        t->least = t->most = d;
    t->off += d;
    t->over += d > 0;
    t->least = d < t->least ? d : t->least;
    t->most = d > t->most ? d : t->most;
    if (owner < ROW_RANKS)
        t->per_owner[owner]++;
}

/* Rank 0's account of a round whose handles are off: what a rerun cannot
 * show (the failure is rare), the round's configuration and every
 * rank's counters, and the handles' tally. */
static void report_off(unsigned index, int size, const mkrt_config *c, const mkrt_mpi_config *mc, const off_tally *t,
                       const uint64_t *rows)
{
    printf("round %u: %u handles off (%u above, %u below; from %+lld to %+lld), %+lld in all; %s, %u workers, "
           "%s partition, outbox %u buffers of %u items\n",
           index, t->bad, t->over, t->bad - t->over, (long long)t->least, (long long)t->most, (long long)t->off,
           backend_name(c->backend), c->workers, mc->partition ? "hash" : "block", mc->buffers, mc->batch_items);
    for (int r = 0; rows != NULL && r < size; r++) {
        const uint64_t *w = rows + (size_t)r * ROW_N;
        printf("  rank %d: published %llu emitted %llu executed %llu pruned %llu failed %llu forwarded %llu "
               "received %llu remote emits %llu outbox-full retries %llu callbacks %llu device failures %llu "
               "dead letters dropped %llu batches %llu\n", r,
               (unsigned long long)w[0], (unsigned long long)w[1], (unsigned long long)w[2],
               (unsigned long long)w[3], (unsigned long long)w[4], (unsigned long long)w[5],
               (unsigned long long)w[6], (unsigned long long)w[7], (unsigned long long)w[8],
               (unsigned long long)w[9], (unsigned long long)w[10], (unsigned long long)w[11],
               (unsigned long long)w[12]);
    }
    /* Whose handles: one rank's alone points at its runtime (a lost
     * increment), all ranks' at walks that lost their tails. */
    printf("  off handles by owner:");
    for (int r = 0; r < size && r < ROW_RANKS; r++)
        printf(" rank %d: %u", r, t->per_owner[r]);
    printf("\n");
    fflush(stdout);
}

/* One round, collective. */
static void mpi_round(unsigned index, int rank, int size, uint64_t len_ns)
{
    memset(&R, 0, sizeof R);
    R.rank = rank;
    uint64_t rng = rnd_seed(opt.seed, index, 0x4D5049); /* the same on every rank */
    mkrt_config c = mkrt_config_default();
    c.backend = (opt.backends & B_SIM) && (!(opt.backends & B_CPU) || index % 2) ? MKRT_BACKEND_SIM
                                                                                 : MKRT_BACKEND_CPU;
    c.workers = 1 + rnd_below(&rng, 2);
    c.cells = H + 16;
    c.max_producers = opt.producers + (unsigned)size + 4;
    c.append_log_capacity = 0;
    c.watchdog_ms = 2000;
    c.on_error = on_error;
    c.error_ctx = &R;
    soak_plan plan = {.index = index, .rng = rng, .backend = c.backend};
    atomic_store(&g_round_backend, (int)c.backend);
    bool skip;
    R.rt = soak_create(&plan, &c, &skip);
    mkrt_error err;
    mkrt_op_desc d = {.fn = op_hop, .user = &R, .name = "hop"};
    if (R.rt == NULL || mkrt_op_register(R.rt, OP_HOP, &d, &err) != MKRT_OK) {
        soak_error("mpi rank %d: no runtime for the round: the job cannot go on", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    mkrt_mpi_config mc = mkrt_mpi_config_default();
    mc.handles = H;
    mc.partition = rnd_below(&rng, 2) ? MKRT_MPI_HASH : MKRT_MPI_BLOCK;
    mc.batch_items = rnd_below(&rng, 3) == 0 ? 8 : 4096;
    mc.buffers = rnd_below(&rng, 3) == 0 ? 1 : 8;
    mc.wait_timeout_ms = 60000;
    heartbeat("mpi create");
    if (mkrt_mpi_create(&mc, R.rt, &R.m, &err) != MKRT_OK) {
        soak_error("mpi rank %d: mkrt_mpi_create: %s", rank, err.message);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* Every rank's R.m is set before any item exists: a rank whose create
     * returned first could otherwise send items that run here (and read
     * R.m) before this rank's create returned. */
    uint64_t one = 1;
    if (mkrt_mpi_allreduce_sum(R.m, &one, 1) != MKRT_OK || one != (uint64_t)size)
        soak_error("mpi rank %d: the barrier after mkrt_mpi_create failed", rank);
    soak_live_set(R.rt);
    unsigned np = opt.producers;
    for (unsigned s = 0; s < np; s++) {
        R.rng[s] = rnd_seed(opt.seed, (uint64_t)index << 16 | (uint64_t)rank << 8 | s, 0xABC);
        R.started[s] = mkrt__thread_start(&R.thread[s], producer_main, (void *)(uintptr_t)s) == 0;
        if (!R.started[s])
            soak_error("mpi: cannot start a producer thread");
    }
    uint64_t t0 = stress_now_ns(), storm_at = t0 + len_ns * rnd_below(&rng, 80) / 100;
    while (stress_now_ns() < t0 + len_ns) {
        heartbeat("mpi run");
        uint64_t now = stress_now_ns();
        set_fail_ppm((opt.faults & F_ALLOC) && now >= storm_at && now < storm_at + 200000000ull ? 100000 : 0);
        nap_us(5000);
    }
    set_fail_ppm(0);
    atomic_store(&R.stop, true);
    for (unsigned s = 0; s < np; s++)
        if (R.started[s])
            mkrt__thread_join(R.thread[s]);
    heartbeat("mpi quiesce");
    mkrt_status st = mkrt_mpi_quiesce(R.m, LONG_NS);
    atomic_fetch_add(&g_quiesce_calls, 1);
    if (st != MKRT_OK)
        soak_error("mpi rank %d: mkrt_mpi_quiesce: %s", rank, mkrt_status_name(st));
    if (atomic_load(&R.overlaps) > 0)
        soak_error("mpi rank %d: %llu HOPs ran while another HOP of their out handle ran (%s, %u workers)", rank,
                   (unsigned long long)atomic_load(&R.overlaps), backend_name(c.backend), c.workers);
    /* Expected - lost per handle, summed over the ranks; the cells on rank 0. */
    static uint64_t want[H], lost[H], cells[H];
    memset(want, 0, sizeof want);
    for (unsigned s = 0; s < np; s++)
        for (uint32_t h = 0; h < H; h++)
            want[h] += R.expect[s][h];
    for (uint32_t h = 0; h < H; h++)
        lost[h] = atomic_load(&R.lost[h]);
    mkrt_stats rs;
    mkrt_mpi_stats ms;
    mkrt_stats_read(R.rt, &rs);
    mkrt_mpi_stats_read(R.m, &ms);
    uint64_t pub = 0;
    for (unsigned s = 0; s < np; s++)
        pub += R.published[s];
    uint64_t sums[5] = {rs.published, pub, atomic_load(&R.remote_emits), ms.forwarded, ms.received};
    /* Every rank's counters, for rank 0's report of a handle that is off
     * (each rank fills its own row; the sum is the table). */
    static uint64_t table[ROW_RANKS * ROW_N];
    uint64_t *rows = size <= ROW_RANKS ? table : NULL; /* the same on every rank */
    if (rows != NULL) {
        memset(rows, 0, (size_t)size * ROW_N * sizeof *rows);
        uint64_t *row = rows + (size_t)rank * ROW_N;
        const uint64_t mine[ROW_N] = {rs.published, rs.emitted,    rs.executed,   rs.pruned,
                                      rs.failed,    ms.forwarded,  ms.received,   atomic_load(&R.remote_emits),
                                      atomic_load(&R.eagain), atomic_load(&R.callbacks),
                                      rs.device_failures, rs.dead_letters_dropped, rs.batches};
        memcpy(row, mine, sizeof mine);
    }
    if (mkrt_mpi_allreduce_sum(R.m, want, H) != MKRT_OK || mkrt_mpi_allreduce_sum(R.m, lost, H) != MKRT_OK ||
        mkrt_mpi_allreduce_sum(R.m, sums, 5) != MKRT_OK || mkrt_mpi_gather_cells(R.m, 0, H, cells) != MKRT_OK ||
        (rows != NULL && mkrt_mpi_allreduce_sum(R.m, rows, (size_t)size * ROW_N) != MKRT_OK))
        soak_error("mpi rank %d: the collectives of the check failed", rank);
    /* mkrt_mpi_quiesce's contract: nothing runs after it returned, so a
     * second quiesce and gather must find the same cells. */
    static uint64_t again[H];
    if (mkrt_mpi_quiesce(R.m, LONG_NS) != MKRT_OK || mkrt_mpi_gather_cells(R.m, 0, H, again) != MKRT_OK)
        soak_error("mpi rank %d: the second quiesce and gather failed", rank);
    if (rank == 0) {
        off_tally moved = {0};
        for (uint32_t h = 0; h < H; h++)
            if (again[h] != cells[h])
                tally_off(&moved, (int64_t)(again[h] - cells[h]), mkrt_mpi_owner(R.m, h));
        if (moved.bad > 0)
            soak_error("mpi: %u handles changed after mkrt_mpi_quiesce returned (from %+lld to %+lld, %+lld in all)",
                       moved.bad, (long long)moved.least, (long long)moved.most, (long long)moved.off);
    }
    if (rs.published + rs.emitted != rs.executed + rs.pruned + rs.failed || rs.failed != atomic_load(&R.callbacks))
        soak_error("mpi rank %d: published %llu + emitted %llu != executed %llu + pruned %llu + failed %llu "
                   "(callbacks %llu)", rank, (unsigned long long)rs.published, (unsigned long long)rs.emitted,
                   (unsigned long long)rs.executed, (unsigned long long)rs.pruned,
                   (unsigned long long)rs.failed, (unsigned long long)atomic_load(&R.callbacks));
    atomic_fetch_add(&g_executed, rs.executed);
    atomic_fetch_add(&g_failed, rs.failed);
    atomic_fetch_add(&g_pruned, rs.pruned);
    atomic_fetch_add(&g_emitted, rs.emitted);
    atomic_fetch_add(&g_callbacks, rs.failed);
    if (rank == 0) {
        if (sums[3] != sums[4])
            soak_error("mpi: %llu items forwarded, %llu received", (unsigned long long)sums[3],
                       (unsigned long long)sums[4]);
        if (sums[0] != sums[1] + sums[2])
            soak_error("mpi: the runtimes' published %llu != producers' %llu + HOPs emitted to other ranks %llu",
                       (unsigned long long)sums[0], (unsigned long long)sums[1], (unsigned long long)sums[2]);
        off_tally t = {0};
        for (uint32_t h = 0; h < H; h++)
            if (cells[h] != want[h] - lost[h]) {
                tally_off(&t, (int64_t)(cells[h] - (want[h] - lost[h])), mkrt_mpi_owner(R.m, h));
                if (t.bad <= 3)
                    soak_error("mpi: handle %u (rank %d's) = %llu, want %llu (published %llu, lost %llu)", h,
                               mkrt_mpi_owner(R.m, h), (unsigned long long)cells[h],
                               (unsigned long long)(want[h] - lost[h]), (unsigned long long)want[h],
                               (unsigned long long)lost[h]);
            }
        if (t.bad > 0)
            report_off(index, size, &c, &mc, &t, rows);
    }
    if (opt.verbose && rank == 0)
        printf("round %u mpi %d ranks %s %s: published %llu (runtimes %llu) forwarded %llu outbox-full retries "
               "%llu\n", index, size, backend_name(c.backend), mc.partition ? "hash" : "block",
               (unsigned long long)sums[1], (unsigned long long)sums[0], (unsigned long long)sums[3],
               (unsigned long long)atomic_load(&R.eagain));
    heartbeat("mpi destroy");
    if (mkrt_mpi_destroy(R.m, &err) != MKRT_OK)
        soak_error("mpi rank %d: mkrt_mpi_destroy: %s", rank, err.message);
    soak_live_retire();
    if (mkrt_destroy(R.rt, LONG_NS, &err) != MKRT_OK)
        soak_error("mpi rank %d: mkrt_destroy: %s", rank, err.message);
}

/* A distributed BFS and SSSP round (see the top). Every rank draws the
 * same graph and configuration; a failure to build the graph is the same
 * everywhere, a failure to open ends the job (the ranks would part). */
static void engine_round(unsigned index, int rank)
{
    uint64_t rng = rnd_seed(opt.seed, index, 0x475241); /* the same on every rank */
    const uint32_t scale = 9 + (uint32_t)rnd_below(&rng, 3);
    const uint64_t seed = rnd_below(&rng, 1000000);
    char why[512];
    g500_edge_list el = {0};
    g500_graph g = {0};
    uint32_t roots[2];
    heartbeat("graph build");
    if (g500_generate(scale, 8, seed, &el, why, sizeof why) != 0 ||
        g500_csr_build(&el, &g, why, sizeof why) != 0 ||
        g500_sample_roots(&g.csr, seed, 2, roots, why, sizeof why) != 0) {
        soak_error("mpi rank %d: graph round %u: %s", rank, index, why);
        g500_graph_free(&g);
        g500_edge_list_free(&el);
        return;
    }
    const uint32_t n = g.csr.vertices;
    mkrt_mpi_graph_config c = mkrt_mpi_graph_config_default();
    c.partition = rnd_below(&rng, 2) ? MKRT_MPI_HASH : MKRT_MPI_BLOCK;
    c.workers = 1 + (unsigned)rnd_below(&rng, 2);
    c.symmetric = true; /* the kit's CSR holds both directions */
    c.own_rounds = rnd_below(&rng, 2) != 0;
    const mkrt_graph mg = {n, g.csr.offsets, g.csr.targets, g.csr.weights};
    mkrt_mpi_graph *e = NULL;
    mkrt_error err = {0};
    uint32_t *parent = malloc(n * sizeof *parent), *level = malloc(n * sizeof *level);
    uint64_t *dist = malloc(n * sizeof *dist);
    heartbeat("graph open");
    if (parent == NULL || level == NULL || dist == NULL ||
        mkrt_mpi_graph_open(&mg, &c, &e, &err) != MKRT_OK) {
        soak_error("mpi rank %d: graph round %u: %s", rank, index,
                   e == NULL && parent != NULL && level != NULL && dist != NULL ? err.message
                                                                                : "out of memory");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < 2; i++) {
        heartbeat("graph bfs");
        if (mkrt_mpi_graph_bfs(e, roots[i], parent, NULL, &err) != MKRT_OK)
            soak_error("mpi rank %d: graph round %u: %s", rank, index, err.message);
        else if (rank == 0 && g500_validate_bfs(&g.csr, roots[i], parent, level, why, sizeof why) != 0)
            soak_error("mpi: graph round %u (scale %u, %s): BFS from %u: %s", index, scale,
                       c.partition == MKRT_MPI_HASH ? "hash" : "block", roots[i], why);
        heartbeat("graph sssp");
        if (mkrt_mpi_graph_sssp(e, roots[i], dist, NULL, &err) != MKRT_OK)
            soak_error("mpi rank %d: graph round %u: %s", rank, index, err.message);
        else if (rank == 0 && g500_validate_sssp(&g.csr, roots[i], dist, why, sizeof why) != 0)
            soak_error("mpi: graph round %u (scale %u, %s): SSSP from %u: %s", index, scale,
                       c.partition == MKRT_MPI_HASH ? "hash" : "block", roots[i], why);
    }
    if (opt.verbose && rank == 0)
        printf("round %u mpi graph: scale %u, %s, %u worker(s)%s: BFS and SSSP from 2 roots checked\n",
               index, scale, c.partition == MKRT_MPI_HASH ? "hash" : "block", c.workers,
               c.own_rounds ? ", own rounds" : "");
    heartbeat("graph close");
    mkrt_mpi_graph_close(e);
    free(parent);
    free(level);
    free(dist);
    g500_graph_free(&g);
    g500_edge_list_free(&el);
}

static char *rank_file(const char *f, int rank)
{
    if (f == NULL || rank == 0)
        return (char *)f;
    size_t n = strlen(f) + 16;
    char *s = malloc(n);
    if (s != NULL)
        snprintf(s, n, "%s.rank%d", f, rank);
    return s;
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {{"seconds", required_argument, NULL, 's'},
                                       {"interval", required_argument, NULL, 'i'},
                                       {"producers", required_argument, NULL, 'P'},
                                       {"seed", required_argument, NULL, 'S'},
                                       {"backend", required_argument, NULL, 'b'},
                                       {"no-alloc-faults", no_argument, NULL, 'n'},
                                       {"csv", required_argument, NULL, 'c'},
                                       {"json", required_argument, NULL, 'j'},
                                       {"verbose", no_argument, NULL, 'v'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
    opt.producers = 2;
    opt.workloads = 1u << W_MPI;
    opt.backends = B_CPU | B_SIM;
    int c;
    unsigned long long v = 0;
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        if ((c == 's' || c == 'i' || c == 'P' || c == 'S') && (!stress_parse_ull(optarg, &v) || v > 1000000000ull)) {
            fprintf(stderr, "%s: a number, please, not '%s'\n", argv[0], optarg);
            return 2;
        }
        switch (c) {
        case 's': opt.seconds = (unsigned)v; break;
        case 'i': opt.interval = (unsigned)v; break;
        case 'P': opt.producers = v >= 1 && v <= MAX_PRODUCERS ? (unsigned)v : 2; break;
        case 'S': opt.seed = v; break;
        case 'b':
            opt.backends = strcmp(optarg, "cpu") == 0 ? B_CPU : strcmp(optarg, "sim") == 0 ? B_SIM : B_CPU | B_SIM;
            break;
        case 'n': opt.faults &= ~(unsigned)F_ALLOC; break;
        case 'c': opt.csv = optarg; break;
        case 'j': opt.json = optarg; break;
        case 'v': opt.verbose = true; break;
        case 'h':
            printf("usage: mpirun -np 2|3 %s [--seconds N] [--interval S] [--producers N] [--seed N]\n"
                   "       [--backend cpu|sim|both] [--no-alloc-faults] [--csv F] [--json F] [--verbose]\n"
                   "mkrt-soak's MPI workload: HOP chains emitted across ranks (mkrt_mpi_op_emit) and ACC\n"
                   "items published to any rank's handles (mkrt_mpi_publish), checked per handle after\n"
                   "mkrt_mpi_quiesce; metrics and drift verdicts as mkrt-soak's (rank N > 0 writes F.rankN).\n",
                   argv[0]);
            return 0;
        default: return 2;
        }
    }
    int provided = 0, rank = 0, size = 1;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS ||
        provided < MPI_THREAD_SERIALIZED) {
        fprintf(stderr, "mkrt-soak-mpi: MPI_Init_thread did not give MPI_THREAD_SERIALIZED\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    opt.csv = rank_file(opt.csv, rank);
    opt.json = rank_file(opt.json, rank);
    g_metrics_quiet = rank != 0;
    static const mkrt_allocator alloc = {soak_alloc, soak_free, NULL};
    mkrt_allocator_set(&alloc);
    atomic_store(&g_workload, W_MPI);
    t_start = stress_now_ns();
    if (rank == 0)
        printf("soak-mpi: %u s on %d ranks, seed %llu, %u producers per rank, metrics every %u s\n", opt.seconds,
               size, (unsigned long long)opt.seed, opt.producers, opt.interval);
    fflush(stdout);
    soak_metrics_start(t_start + (uint64_t)(opt.seconds / 5 > 10 ? opt.seconds / 5 : 10) * SEC_NS);
    for (unsigned index = 0;; index++) {
        /* Rank 0 says whether and how long: every rank runs the same rounds. */
        uint64_t len = 0, now = stress_now_ns();
        if (rank == 0 && (index == 0 || now < t_start + (uint64_t)opt.seconds * SEC_NS)) {
            uint64_t r = rnd_seed(opt.seed, index, 0x7E4);
            len = (1000 + rnd_below(&r, 2000)) * 1000000ull;
        }
        MPI_Bcast(&len, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        if (len == 0)
            break;
        atomic_store(&g_round_index, index);
        soak_round_begin();
        mpi_round(index, rank, size, len);
        engine_round(index, rank);
        soak_round_end(W_MPI);
        atomic_fetch_add(&g_wstats[W_MPI].rounds, 1);
        atomic_fetch_add(&g_rounds_done, 1);
        check_resources(index);
    }
    soak_metrics_stop();
    double el = (double)(stress_now_ns() - t_start) / 1e9;
    bool pass = soak_metrics_finish(el, atomic_load(&g_errors) == 0) && atomic_load(&g_errors) == 0;
    int mine = pass ? 1 : 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    printf("SUMMARY soak-mpi rank %d of %d seconds %.1f rounds %llu items %llu executed %llu failed %llu emitted %llu "
           "alloc_faults %llu enomem_retries %llu backpressure %llu leak_rounds %llu rss_max %.1fMiB errors %llu "
           "verdict %s (all ranks: %s)\n",
           rank, size, el, (unsigned long long)atomic_load(&g_rounds_done), (unsigned long long)atomic_load(&g_items),
           (unsigned long long)atomic_load(&g_executed), (unsigned long long)atomic_load(&g_failed),
           (unsigned long long)atomic_load(&g_emitted), (unsigned long long)atomic_load(&g_alloc_injected),
           (unsigned long long)atomic_load(&g_enomem_retries), (unsigned long long)atomic_load(&g_backpressure),
           (unsigned long long)g_leak_rounds, (double)soak_metrics_rss_max() / 1048576.0,
           (unsigned long long)atomic_load(&g_errors), pass ? "PASS" : "FAIL", all ? "PASS" : "FAIL");
    fflush(stdout);
    MPI_Finalize();
    return all ? 0 : 1;
}
