/* SPDX-License-Identifier: BSD-2-Clause */
/* src/backend/mk_loop.h - the megakernel's device loop written in C, run
 * by a host thread that plays the device: the simulated device (mk_sim.c)
 * and the stand-in driver of the tests (tests/fakes/fake_libcuda.c) both
 * use it, so the host protocol is tested against one loop that mirrors
 * src/cuda/megakernel.cu step for step:
 *   wait for the doorbell (a spin that re-checks shutdown and backs off),
 *   run each layer's items "grid-stride" over the blocks the plan gives
 *   that layer (desc.layer_blocks; at most `blocks`; a desc.one_block batch
 *   is then block 0's alone, which the kernel runs without waking the
 *   other blocks: the same items in the same order of layers),
 *   write each block's progress word, take the barrier the plan gives each
 *   layer boundary (mkrt__mk_barrier_after: block-local, among the blocks
 *   of the two layers only, or grid-wide; the blocks run one after another
 *   here, so the barrier is the order, and the loop counts each kind into
 *   the batch's result as the kernel does), run the batch's traversal jobs
 *   (protocol.h, "Traversal jobs": the public traversals of a job batch,
 *   or the RELAX job of a batch with RELAX items, "RELAX batches", whose
 *   first level the layers marked) with mk_trav.h, publish the batch's
 *   result and done with release,
 *   leave the "GPU" after ctl->idle_ns without a doorbell or ctl->resident_ns
 *   of residence (protocol.h, "Leaving the GPU"); the host relaunches it.
 * A built-in op that cannot run (the host validates, so this is a bug) sets
 * the error word and stops the loop, as the kernel's report does; a failing
 * user op or an APPEND past the log's capacity goes to the descriptor's
 * failure list (see protocol.h) and the batch carries on.
 * Header-only (static functions) so that the test driver, a separate
 * shared object, can compile it without linking the library. */
#ifndef MKRT_BACKEND_MK_LOOP_H
#define MKRT_BACKEND_MK_LOOP_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "backend/mk_trav.h"
#include "cuda/protocol.h"
#include "mkrt/item.h"

/* A user op as the device runs it: 0, or an mkrt_status as uint32_t. */
typedef uint32_t (*mkrt__mk_user_op_fn)(uint32_t op, uint32_t in, uint32_t out, uint32_t param,
                                        uint64_t *cells, uint32_t cell_count);

typedef struct mkrt__mk_loop_hooks {
    uint32_t blocks;                   /* simulated grid size (>= 1) */
    mkrt__mk_user_op_fn user_op;       /* NULL: user ops are unknown ops */
    _Atomic uint64_t *hang_batch;      /* fault injection, may be NULL: hang in */
    _Atomic uint32_t *hang_after_layer;/* this batch once this layer is reached */
    /* May be NULL (device addresses are host pointers). The stand-in
     * driver's device memory: a device address the host cannot
     * dereference, turned into the memory behind it as the GPU would. */
    void *(*dev)(uint64_t addr);
    /* May be NULL. Test hook: each traversal level takes at least this
     * long (a long traversal for the watchdog's tests). */
    _Atomic uint64_t *level_nap_ns;
    /* May be NULL (0). The injected hang's length: 0, a hung op (until
     * shutdown, and the batch is given up); else a slow op, which takes
     * this long without looking at shutdown and then lets the batch carry
     * on (a device that is slow, not hung). */
    _Atomic uint64_t *hang_ns;
} mkrt__mk_loop_hooks;

/* One batch as the loop runs it: the graph and the RELAX job's bitmaps
 * when the device has them, the vertices its layers marked for the RELAX
 * job's first level (and their words' range), and what the batch did (protocol.h, result[]). */
typedef struct mkrt__mk_loop_batch {
    mkrt__mk_graph_view g;
    mkrt__bitmap *relax_bits;
    int has_graph;
    uint64_t marked;
    uint64_t edges, changed, levels;
    uint32_t grid_barriers, layer_barriers;
    mkrt__bitmap relax_range[2]; /* the words of F[0] the layers marked (protocol.h, mkrt__mk_range_note) */
} mkrt__mk_loop_batch;

/* The memory at device address a. */
static inline void *mkrt__mk_loop_at(const mkrt__mk_loop_hooks *h, uint64_t a)
{
    return h->dev != NULL && a != 0 ? h->dev(a) : (void *)(uintptr_t)a;
}

static inline int mkrt__mk_loop_shutting_down(mkrt__mk_control *ctl)
{
    /* acquire: pairs with the host's release store in mkrt__mk_shutdown. */
    return atomic_load_explicit(&ctl->shutdown, memory_order_acquire) != 0;
}

static inline void mkrt__mk_loop_nap(long ns)
{
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

static inline uint64_t mkrt__mk_loop_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* the kernel's %globaltimer */
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The kernel's side of the parking handshake (protocol.h). Idle (busy ==
 * 0): leaves only when no doorbell came after parking; returns whether it
 * leaves. seq_cst (store, then load of another word): pairs with the
 * host's seq_cst doorbell store and load of parked in mkrt__mk_ring; in
 * the single total order one of the two loads sees the other's store (the
 * kernel adds a system-scope fence between them, over the bus). */
static inline int mkrt__mk_loop_park(mkrt__mk_control *ctl, uint64_t last, int busy)
{
    atomic_store(&ctl->parked, 1);
    if (busy)
        return 1;
    if (atomic_load(&ctl->doorbell) == last)
        return 1;
    atomic_store(&ctl->parked, 0); /* a batch came: run it (the host may launch a spare) */
    return 0;
}

static inline void mkrt__mk_loop_fail(const mkrt__mk_loop_hooks *h, mkrt__mk_control *ctl, mkrt__mk_desc *d,
                                      uint64_t seq, uint32_t index, uint32_t status)
{
    /* relaxed: the slot claim; the host reads the list after its acquire
     * of done, which the release of done below orders after these writes. */
    uint32_t at = atomic_fetch_add_explicit(&ctl->fail_count[seq & 1], 1, memory_order_relaxed);
    if (at < d->count) {
        uint32_t *list = (uint32_t *)mkrt__mk_loop_at(h, d->fails);
        list[2 * at] = index;
        list[2 * at + 1] = status;
    }
}

/* Runs item k of a batch; returns a fatal MKRT_MK_ERR_* or NONE. The
 * semantics are ops/builtin_ops.h's; the claims are this loop's. */
static inline uint32_t mkrt__mk_loop_item(mkrt__mk_control *ctl, mkrt__mk_desc *d, uint64_t seq, uint32_t k,
                                          const mkrt__mk_loop_hooks *h, mkrt__mk_loop_batch *bt)
{
    const mkrt_item *it = &((const mkrt_item *)mkrt__mk_loop_at(h, d->items))[k];
    uint64_t *cells = (uint64_t *)mkrt__mk_loop_at(h, ctl->cells);
    if (it->op >= MKRT_OPS_MIN && it->op <= MKRT_OPS_ACC) { /* the update ops, counted */
        uint32_t e = mkrt__ops_builtin_check(it->op, it->in, it->out, ctl->cell_count);
        if (e == MKRT_MK_ERR_NONE && it->op == MKRT_OPS_RELAX && !bt->has_graph)
            e = MKRT_MK_ERR_UNKNOWN_OP; /* the host sends RELAX only with the graph here */
        if (e != MKRT_MK_ERR_NONE)
            return e;
        if (mkrt__ops_run_update(it->op, it->in, it->out, it->param, cells)) {
            bt->changed++;
            if (it->op == MKRT_OPS_RELAX) /* the RELAX job's first level: its F[0] */
                bt->marked += (uint64_t)mkrt__mk_relax_mark(&bt->g, bt->relax_bits, bt->relax_range, it->out);
        }
        return MKRT_MK_ERR_NONE;
    }
    if (mkrt__ops_is_user(it->op)) {
        if (h->user_op == NULL)
            return MKRT_MK_ERR_UNKNOWN_OP;
        uint32_t r = h->user_op(it->op, it->in, it->out, it->param, cells, ctl->cell_count);
        if (r != 0)
            mkrt__mk_loop_fail(h, ctl, d, seq, k, r);
        return MKRT_MK_ERR_NONE;
    }
    if (it->op != MKRT_OPS_APPEND)
        return mkrt__ops_run_builtin(it->op, it->in, it->out, it->param, cells, ctl->cell_count);
    uint32_t e = mkrt__ops_builtin_check(it->op, it->in, it->out, ctl->cell_count);
    if (e != MKRT_MK_ERR_NONE)
        return e;
    /* relaxed: a slot claim; the entry is published with done. */
    uint64_t at = atomic_fetch_add_explicit(&ctl->append_len, 1, memory_order_relaxed);
    if (at >= ctl->append_limit) {
        mkrt__mk_loop_fail(h, ctl, d, seq, k, MKRT_MK_FAIL_OVERFLOW);
        return MKRT_MK_ERR_NONE;
    }
    /* One 64-bit word stored with release: the host's log readers load
     * slots with relaxed loads and an acquire fence (see
     * mkrt_append_log_read). */
    _Atomic uint64_t *log = (_Atomic uint64_t *)mkrt__mk_loop_at(h, ctl->append_log);
    atomic_store_explicit(&log[mkrt__ops_append_slot(at, ctl->append_capacity)],
                          mkrt__ops_append_word(it->out, it->param), memory_order_release);
    return MKRT_MK_ERR_NONE;
}

/* The injected hang (fault injection), at layer l of batch seq (a
 * traversal's levels count as layers after the batch's own): returns 1
 * once shutdown released a hung op; 0 when there is none, or after a
 * slow op (hooks.hang_ns), which fires once. */
static inline int mkrt__mk_loop_hang(mkrt__mk_control *ctl, const mkrt__mk_loop_hooks *h, uint64_t seq, uint32_t l,
                                     _Atomic uint64_t *progress)
{
    /* acquire: pairs with the release store of the injector. */
    if (h->hang_batch == NULL || seq != atomic_load_explicit(h->hang_batch, memory_order_acquire) ||
        l < atomic_load_explicit(h->hang_after_layer, memory_order_relaxed))
        return 0;
    /* release: the layers run so far are published with block 0's
     * progress record (kept as it is), which the watchdog reads with
     * acquire. relaxed: this thread wrote it last. */
    atomic_store_explicit(&progress[0], atomic_load_explicit(&progress[0], memory_order_relaxed),
                          memory_order_release);
    /* relaxed: a test knob, written before hang_batch's release. */
    const uint64_t slow = h->hang_ns != NULL ? atomic_load_explicit(h->hang_ns, memory_order_relaxed) : 0;
    if (slow != 0) {
        /* relaxed: only this loop reads hang_batch again, and the
         * injector does not rearm it while the batch runs. */
        atomic_store_explicit(h->hang_batch, 0, memory_order_relaxed);
        for (const uint64_t until = mkrt__mk_loop_now_ns() + slow; mkrt__mk_loop_now_ns() < until;)
            mkrt__mk_loop_nap(100000);
        return 0;
    }
    while (!mkrt__mk_loop_shutting_down(ctl)) /* a hung op */
        mkrt__mk_loop_nap(100000);
    return 1;
}

/* Before each round of a batch's traversal jobs: the injected hang (a
 * round counts as a layer after the batch's own), and from the second
 * round on the watchdog's sign of life, block 0's progress word and the
 * level nap (a test hook: each round takes at least that long). */
typedef struct mkrt__mk_loop_jobs_ctx {
    mkrt__mk_control *ctl;
    mkrt__mk_desc *d;
    uint64_t seq;
    const mkrt__mk_loop_hooks *h;
    _Atomic uint64_t *progress;
    uint64_t rounds;
} mkrt__mk_loop_jobs_ctx;

static inline int mkrt__mk_loop_jobs_pre(void *p, uint32_t round)
{
    mkrt__mk_loop_jobs_ctx *c = p;
    if (mkrt__mk_loop_hang(c->ctl, c->h, c->seq, c->d->layers + round, c->progress))
        return 1;
    c->rounds++;
    if (round != 0) {
        /* relaxed: a sign of life for the watchdog, no data with it. */
        atomic_store_explicit(&c->ctl->levels_run,
                              atomic_load_explicit(&c->ctl->levels_run, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        /* release: a diagnostic word, read by the watchdog with acquire. */
        atomic_store_explicit(&c->progress[0], (uint64_t)(c->d->layers + round) << 32, memory_order_release);
        /* relaxed: a test knob, no data with it. */
        uint64_t nap = c->h->level_nap_ns != NULL ? atomic_load_explicit(c->h->level_nap_ns, memory_order_relaxed) : 0;
        if (nap != 0)
            mkrt__mk_loop_nap((long)nap);
    }
    return 0;
}

/* A batch's traversal jobs (protocol.h, "Traversal jobs"), all at once
 * to their ends; the rounds count as the batch's levels. A RELAX job
 * (desc.relax_job: job 0) runs over the cells from the F[0] its layers
 * marked, and its edges and lowered cells count as the batch's; a public
 * job's edges are its own (its record), counted by its source. Returns 1
 * when an injected hang was released by shutdown. */
static inline int mkrt__mk_loop_jobs(mkrt__mk_control *ctl, mkrt__mk_desc *d, uint64_t seq,
                                     const mkrt__mk_loop_hooks *h, mkrt__mk_loop_batch *bt,
                                     _Atomic uint64_t *progress, uint32_t blocks)
{
    mkrt__mk_trav ts[MKRT_MK_JOBS_MAX];
    const uint32_t n = d->njobs < MKRT_MK_JOBS_MAX ? d->njobs : MKRT_MK_JOBS_MAX;
    for (uint32_t i = 0; i < n; i++) {
        mkrt__mk_job *j = &ctl->jobs[seq & 1][i];
        ts[i].job = j;
        if (j->kind == MKRT_MK_JOB_RELAX)
            mkrt__mk_trav_begin_relax(&ts[i], &bt->g, (uint64_t *)mkrt__mk_loop_at(h, ctl->cells), bt->relax_bits,
                                      bt->relax_range, i == 0 && d->relax_job ? bt->marked : 0);
        else
            mkrt__mk_trav_begin(&ts[i], &bt->g, (uint64_t *)mkrt__mk_loop_at(h, j->values),
                                mkrt__mk_loop_at(h, j->aux), mkrt__mk_loop_at(h, j->bits));
    }
    mkrt__mk_loop_jobs_ctx c = {ctl, d, seq, h, progress, 0};
    if (mkrt__mk_trav_run(ts, n, &bt->g, blocks, mkrt__mk_loop_jobs_pre, &c))
        return 1;
    bt->levels += c.rounds;
    for (uint32_t i = 0; i < n; i++)
        if (ts[i].job->kind == MKRT_MK_JOB_RELAX) {
            bt->edges += ts[i].job->edges;
            bt->changed += ts[i].changed;
        }
    return 0;
}

/* Returns when the host asks for shutdown, after a fatal error, or when an
 * injected hang is released by shutdown. */
static inline void mkrt__mk_loop_run(mkrt__mk_control *ctl, const mkrt__mk_loop_hooks *h)
{
    const uint32_t blocks = h->blocks ? h->blocks : 1;
    /* relaxed: the host wrote done before starting the loop. */
    uint64_t last = atomic_load_explicit(&ctl->done, memory_order_relaxed);
    const uint64_t launched = mkrt__mk_loop_now_ns();
    for (;;) {
        uint64_t bell;
        unsigned spins = 0;
        uint64_t idle_since = mkrt__mk_loop_now_ns();
        /* Resident long enough while busy: leave at this batch boundary. */
        if (ctl->resident_ns != 0 && idle_since - launched >= ctl->resident_ns &&
            mkrt__mk_loop_park(ctl, last, 1))
            return;
        /* acquire: pairs with the host's release of the doorbell; the
         * descriptor and the staged items are visible after it. */
        while ((bell = atomic_load_explicit(&ctl->doorbell, memory_order_acquire)) == last) {
            if (mkrt__mk_loop_shutting_down(ctl))
                return;
            /* seq_cst: the host asked it to leave (evict), then parks as
             * when idle (the handshake's loads and stores are seq_cst). */
            if (atomic_load(&ctl->evict) != 0 && mkrt__mk_loop_park(ctl, last, 0))
                return;
            if (++spins > 256) {
                mkrt__mk_loop_nap(10000); /* the kernel's __nanosleep backoff */
                if (ctl->idle_ns != 0 && mkrt__mk_loop_now_ns() - idle_since >= ctl->idle_ns &&
                    mkrt__mk_loop_park(ctl, last, 0))
                    return;
            }
        }
        for (uint64_t seq = last + 1; seq <= bell; seq++) {
            mkrt__mk_desc *d = mkrt__mk_desc_of(ctl, seq, mkrt__mk_loop_at(h, ctl->desc_dev));
            _Atomic uint64_t *progress =
                ctl->progress_dev != 0 ? (_Atomic uint64_t *)mkrt__mk_loop_at(h, ctl->progress_dev) : ctl->progress;
            const uint32_t *off = (const uint32_t *)mkrt__mk_loop_at(h, d->layer_offsets);
            const uint32_t *lb = (const uint32_t *)mkrt__mk_loop_at(h, d->layer_blocks);
            mkrt__mk_loop_batch bt = {{0, 0, 0, 0}, 0, 0, 0, 0, 0, 0, 0, 0, {0, 0}};
            if (ctl->vertices != 0 && ctl->relax_bits != 0) {
                bt.has_graph = 1;
                bt.g.offsets = (const uint64_t *)mkrt__mk_loop_at(h, ctl->graph_offsets);
                bt.g.targets = (const uint32_t *)mkrt__mk_loop_at(h, ctl->graph_targets);
                bt.g.weights = (const uint32_t *)mkrt__mk_loop_at(h, ctl->graph_weights);
                bt.g.vertices = ctl->vertices;
                bt.relax_bits = (mkrt__bitmap *)mkrt__mk_loop_at(h, ctl->relax_bits);
            }
            for (uint32_t l = 0; l < d->layers; l++) {
                if (mkrt__mk_loop_hang(ctl, h, seq, l, progress))
                    return;
                /* The plan's blocks for this layer; the others skip it
                 * (and their progress words keep their last layer). */
                const uint32_t part = mkrt__mk_layer_blocks(lb, l, blocks);
                for (uint32_t b = 0; b < part; b++) {
                    uint32_t ran = 0;
                    for (uint32_t k = off[l] + b; k < off[l + 1]; k += part) {
                        uint32_t e = mkrt__mk_loop_item(ctl, d, seq, k, h, &bt);
                        if (e != MKRT_MK_ERR_NONE) {
                            ctl->error_item = k;
                            ctl->error_seq = seq;
                            /* release: pairs with the host's acquire of error. */
                            atomic_store_explicit(&ctl->error, e, memory_order_release);
                            return;
                        }
                        ran++;
                    }
                    /* release: a diagnostic word, read by the watchdog
                     * with acquire (see mkrt__mk_loop_run's hang). */
                    atomic_store_explicit(&progress[b], (uint64_t)l << 32 | ran,
                                          memory_order_release);
                }
                /* The barrier the kernel takes after this layer (a one_block
                 * batch takes block-local ones only, as block 0 alone runs it). */
                uint32_t n;
                const uint32_t kind = d->one_block ? MKRT_MK_BARRIER_BLOCK : mkrt__mk_barrier_after(lb, l, d->layers, blocks, &n);
                bt.grid_barriers += kind == MKRT_MK_BARRIER_GRID;
                bt.layer_barriers += kind == MKRT_MK_BARRIER_LAYER;
            }
            if (d->njobs != 0 && bt.has_graph && mkrt__mk_loop_jobs(ctl, d, seq, h, &bt, progress, blocks))
                return;
            ctl->result[seq & 1].edges = bt.edges;
            ctl->result[seq & 1].changed = bt.changed;
            ctl->result[seq & 1].levels = bt.levels;
            ctl->result[seq & 1].grid_barriers = bt.grid_barriers;
            ctl->result[seq & 1].layer_barriers = bt.layer_barriers;
            /* release: pairs with the host's acquire of done; cell writes,
             * log entries, failure lists and results of the batch come
             * with it. */
            atomic_store_explicit(&ctl->done, seq, memory_order_release);
        }
        last = bell;
    }
}

#endif
