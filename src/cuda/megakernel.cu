/* SPDX-License-Identifier: BSD-2-Clause */
// src/cuda/megakernel.cu - the persistent cooperative megakernel.
//
// Launched with blocks per SM x SMs blocks (the occupancy API's maximum,
// or mkrt_config.cuda_blocks_per_sm). Thread 0 of block 0 polls the
// doorbell (system-scope acquire, __nanosleep backoff, every spin
// re-checks the shutdown flag). A batch whose every layer fits one block
// runs in block 0 alone with block-local barriers while the other blocks
// wait for an epoch word in device memory with a backoff (g_epoch); a wide
// batch's range is published with it, every block runs each layer's items
// grid-stride, records
// its progress word, and the blocks synchronise between layers. The plan
// says how many blocks take part in each layer (protocol.h,
// mkrt__mk_layer_blocks), and the barrier after a layer takes only the
// blocks of that layer and the next (mkrt__mk_barrier_after: block-local,
// a layer barrier among those blocks, or the grid barrier where they are
// all of them); the batch ends with a grid barrier. Completion is a
// system-scope release of `done` that the host reads with acquire. The
// kernel leaves the GPU after idle_ns without a doorbell (and after
// resident_ns at a batch boundary) and the host relaunches it (protocol.h).
// After its layers a batch runs its traversal jobs whole, all at once, one
// round of levels per grid barrier (protocol.h, "Traversal jobs";
// backend/mk_trav.h is its C twin): a job batch's public traversals (BFS,
// SSSP, CC, PageRank), or the RELAX job of a batch with RELAX items and
// the graph on the device, whose first level its layers marked (protocol.h,
// "RELAX batches"; mk_loop.h is the loop's C twin).
// Release builds only (-O3); a -G build is slow but follows the same
// bounded protocol.
//
// Built twice: whole-program (user ops are unknown ops; the host never
// sends them), and with -rdc -DMKRT_MK_USER_OPS=1, where user ops call the
// extern mkrt_user_op that the host links in from the user's PTX with
// cuLinkCreate / cuLinkAddData / cuLinkComplete.
#include <cooperative_groups.h>
#include <cuda/atomic>

#include "base/bitmap.h"
#include "cuda/protocol.h"
#include "ops/pull_rule.h"

#ifndef MKRT_MK_USER_OPS
#define MKRT_MK_USER_OPS 0
#endif

namespace cg = cooperative_groups;

struct mk_item {
    uint32_t op, in, out, param;
};

#if MKRT_MK_USER_OPS
extern "C" __device__ unsigned mkrt_user_op(unsigned op, unsigned in, unsigned out, unsigned param,
                                            unsigned long long *cells, unsigned cell_count);
#endif

// The batch range (g_last, g_bell] published by the poller, read by every
// block after grid.sync(). g_last too: block 0 alone ran the narrow batches
// before it, and a block that started the range from its own stale `last`
// would run batches twice and call grid.sync() more often than block 0,
// which desynchronises the grid barrier (the others then wait in it forever).
__device__ uint64_t g_bell, g_last;
// Bumped by block 0 (thread 0) after it wrote g_last and g_bell: the other
// blocks wait for it with a backoff instead of spinning in grid.sync(). A
// grid barrier's 500-odd spinning blocks hammer one L2 line, and measured
// on an H100 that made block 0's narrow batches 3-7x slower (cuda_bench's
// sweep: 16 one-item layers took 32 us at 1 block per SM, 224 us at 4).
// Monotonic across launches: each block reads it before the launch's first
// grid.sync, and block 0 bumps it only after.
__device__ unsigned g_epoch;

// What a kernel instance reads once, at its start: the host changes none of
// it while the kernel is on the GPU (protocol.h). In shared memory, so that
// no layer pays a read over the bus for it.
struct mk_env {
    void *desc_dev; // 0: the descriptors in the control block
    uint64_t *cells;
    uint32_t *append_log;
    uint64_t append_capacity;
    uint64_t *progress_dev; // 0: the mapped progress words
    mkrt__mk_counters *counters;
    uint32_t cell_count;
};

// The batch being run, in shared memory: its descriptor, and its layer
// offsets and blocks when it has at most MK_SHARED_LAYERS layers (read
// once, in parallel, instead of twice per layer over the bus).
#define MK_SHARED_LAYERS 256u
struct mk_batch {
    mkrt__mk_desc d;
    uint32_t off[MK_SHARED_LAYERS + 1];
    uint32_t lb[MK_SHARED_LAYERS];
    uint32_t *offp;     // off, or the descriptor's offsets in global memory
    uint32_t *lbp;      // lb, the descriptor's blocks, or null (all blocks)
};

// Block 0's copy, in device memory, of a wide range's batches for the
// other blocks: the descriptor with its offsets and blocks pointing at the
// arrays beside it (when they fit). Only block 0 reads host memory for
// control: hundreds of blocks each reading the same words over the bus
// cost tens of microseconds per batch (measured on the H100).
struct mk_mirror {
    mkrt__mk_desc d;
    uint32_t off[MK_SHARED_LAYERS + 1];
    uint32_t lb[MK_SHARED_LAYERS];
};
__device__ mk_mirror g_mirror[2]; // [seq & 1]

template <typename T> __device__ __forceinline__ T load_acquire(T *p)
{
    return cuda::atomic_ref<T, cuda::thread_scope_system>(*p).load(cuda::memory_order_acquire);
}

template <typename T> __device__ __forceinline__ void store_release(T *p, T v)
{
    cuda::atomic_ref<T, cuda::thread_scope_system>(*p).store(v, cuda::memory_order_release);
}

__device__ __forceinline__ uint64_t now_ns()
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// The kernel's side of the parking handshake (protocol.h, "Leaving the
// GPU"): store parked, fence, reload the doorbell (idle) or leave (busy).
__device__ bool park(mkrt__mk_control *ctl, uint64_t last, bool busy)
{
    cuda::atomic_ref<uint32_t, cuda::thread_scope_system> parked(ctl->parked);
    parked.store(1u, cuda::memory_order_seq_cst);
    if (busy)
        return true;
    cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_system);
    if (cuda::atomic_ref<uint64_t, cuda::thread_scope_system>(ctl->doorbell).load(
            cuda::memory_order_seq_cst) == last)
        return true;
    parked.store(0u, cuda::memory_order_relaxed); // a batch came: run it
    return false;
}

__device__ void report_error(mkrt__mk_control *ctl, uint32_t code, uint32_t item, uint64_t seq)
{
    uint32_t expected = 0;
    cuda::atomic_ref<uint32_t, cuda::thread_scope_system> err(ctl->error);
    if (err.compare_exchange_strong(expected, code, cuda::memory_order_relaxed)) {
        ctl->error_item = item;
        ctl->error_seq = seq;
        __threadfence_system();
    }
}

// A non-fatal item failure: claim a slot in the batch's list.
__device__ void list_failure(mkrt__mk_control *ctl, mkrt__mk_desc *d, uint64_t seq, uint32_t index,
                             uint32_t status)
{
    unsigned at = atomicAdd_system(reinterpret_cast<unsigned *>(&ctl->fail_count[seq & 1]), 1u);
    if (at < d->count) {
        uint32_t *list = reinterpret_cast<uint32_t *>(d->fails);
        list[2 * at] = index;
        list[2 * at + 1] = status;
    }
}

// Thread 0 of block 0, the only thread that polls host memory: waits for a
// doorbell past `last`. 0: leave (shutdown, idle for idle_ns, or resident
// for resident_ns at this batch boundary).
__device__ uint64_t poll(mkrt__mk_control *ctl, uint64_t last, uint64_t launched)
{
    unsigned ns = 32;
    const uint64_t idle_since = now_ns();
    if (ctl->resident_ns != 0 && idle_since - launched >= ctl->resident_ns && park(ctl, last, true))
        return 0;
    uint64_t bell;
    while ((bell = load_acquire(&ctl->doorbell)) == last) {
        if (load_acquire(&ctl->shutdown))
            return 0;
        // The host asked it to leave (evict): park as when idle.
        if (cuda::atomic_ref<uint32_t, cuda::thread_scope_system>(ctl->evict).load(cuda::memory_order_seq_cst) != 0 &&
            park(ctl, last, false))
            return 0;
        __nanosleep(ns);
        ns = ns < 256 ? ns * 2 : ns; // a read over the bus takes about 1 us anyway
        if (ctl->idle_ns != 0 && now_ns() - idle_since >= ctl->idle_ns && park(ctl, last, false))
            return 0;
    }
    return bell;
}

// Block blockIdx.x's progress word (thread 0): (layer << 32) | items.
__device__ void record_progress(mkrt__mk_control *ctl, const mk_env &env, uint32_t l, uint32_t ran)
{
    if (threadIdx.x == 0 && env.progress_dev != nullptr)
        cuda::atomic_ref<uint64_t, cuda::thread_scope_device>(env.progress_dev[blockIdx.x])
            .store(((uint64_t)l << 32) | ran, cuda::memory_order_relaxed);
    else if (threadIdx.x == 0)
        cuda::atomic_ref<uint64_t, cuda::thread_scope_system>(ctl->progress[blockIdx.x])
            .store(((uint64_t)l << 32) | ran, cuda::memory_order_relaxed);
}

// The graph and the RELAX job's bitmaps, as the host put them in the
// control block (vertices 0: no graph on the device).
struct mk_graph {
    mkrt__mk_graph_view g;
    mkrt__bitmap *relax_bits; // F0 | F1 | F2 | (visited, unused), protocol.h "RELAX batches"
    bool on;
};

__device__ mk_graph graph_of(const mkrt__mk_control *ctl)
{
    mk_graph m;
    m.on = ctl->vertices != 0 && ctl->relax_bits != 0;
    m.g.offsets = reinterpret_cast<const uint64_t *>(ctl->graph_offsets);
    m.g.targets = reinterpret_cast<const uint32_t *>(ctl->graph_targets);
    m.g.weights = reinterpret_cast<const uint32_t *>(ctl->graph_weights);
    m.g.vertices = ctl->vertices;
    m.relax_bits = reinterpret_cast<mkrt__bitmap *>(ctl->relax_bits);
    return m;
}

// The vertices a batch's layers marked in the RELAX job's F[0] (its first
// level's, none: no level), read and zeroed by run_jobs after the
// layers' barrier.
__device__ unsigned long long g_relax_marked;

// The layer barriers (protocol.h, mkrt__mk_barrier_after): slot l's
// arrivals and generation, each slot used at most once per batch, and the
// batch's closing grid barrier orders one batch's uses before the next's.
// The last of the n blocks to arrive zeroes the count, then bumps the
// generation the others wait on. Measured before it (bench/results/h100.md):
// a whole-grid barrier after a layer four blocks ran cost every one of the
// 528 blocks a trip through grid.sync().
struct mk_layer_bar {
    unsigned count;
    unsigned gen;
};
__device__ mk_layer_bar g_layer_bar[MKRT_MK_LAYER_BARRIERS];

// Blocks [0, n) wait for each other after layer l (the caller is one of
// them). Ordered as cooperative groups' grid barrier is: the block's
// writes, __syncthreads, a device fence and the arrival by thread 0; the
// wait, a fence, __syncthreads.
__device__ void layer_barrier(uint32_t l, uint32_t n)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> count(g_layer_bar[l].count);
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> gen(g_layer_bar[l].gen);
        // relaxed: stable until this barrier completes, which needs our arrival.
        const unsigned g = gen.load(cuda::memory_order_relaxed);
        __threadfence();
        // acq_rel: pairs with the other arrivals, so the last one's release
        // of gen carries every block's layer.
        if (count.fetch_add(1u, cuda::memory_order_acq_rel) == n - 1) {
            count.store(0u, cuda::memory_order_relaxed); // before the release below: the next batch's use
            gen.store(g + 1u, cuda::memory_order_release);
        } else {
            // acquire: pairs with the last arrival's release of gen.
            while (gen.load(cuda::memory_order_acquire) == g)
                __nanosleep(32);
        }
        __threadfence();
    }
    __syncthreads();
}

// Set by block 0 at the kernel's start, read by every block after the
// first grid barrier (device memory, not the control block over the bus).
__device__ mk_env g_env;
__device__ mk_graph g_graph;

// Adds a thread's counts to the batch's device counters (once per layer
// or traversal, only when it has something to add).
__device__ void add_counts(const mk_env &env, uint64_t edges, uint64_t changed)
{
    mkrt__mk_counters *c = env.counters;
    if (c == nullptr)
        return;
    if (edges != 0)
        atomicAdd(reinterpret_cast<unsigned long long *>(&c->edges), (unsigned long long)edges);
    if (changed != 0)
        atomicAdd(reinterpret_cast<unsigned long long *>(&c->changed), (unsigned long long)changed);
}

// Layer l of batch seq over blocks [0, part), grid-stride; records the
// block's progress (in device memory when the host put it there, read by
// the watchdog's copy only when it needs it; else mapped). An update op
// that changes its cell is counted; a RELAX that does marks its out for
// the RELAX job's first level (its F[0], g_relax_marked).
__device__ void run_layer(mkrt__mk_control *ctl, const mk_env &env, mk_batch *b, uint64_t seq, uint32_t l,
                          uint32_t part, const mk_graph &gr)
{
    if (blockIdx.x >= part)
        return;
    mkrt__mk_desc *d = &b->d;
    uint64_t *cells = env.cells;
    uint32_t *append_log = env.append_log;
    const uint32_t cell_count = env.cell_count;
    const mk_item *items = reinterpret_cast<const mk_item *>(d->items);
    const uint32_t *off = b->offp;
    uint32_t ran = 0;
    uint64_t changed = 0, marked = 0;
    const uint64_t stride = (uint64_t)part * blockDim.x;
    for (uint64_t k = off[l] + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < off[l + 1]; k += stride) {
        const mk_item it = items[k];
        uint32_t e = MKRT_MK_ERR_NONE;
        if (it.op >= MKRT_OPS_MIN && it.op <= MKRT_OPS_ACC) {
            e = mkrt__ops_builtin_check(it.op, it.in, it.out, cell_count);
            if (e == MKRT_MK_ERR_NONE && it.op == MKRT_OPS_RELAX && !gr.on)
                e = MKRT_MK_ERR_UNKNOWN_OP; // the host sends RELAX only with the graph here
            if (e == MKRT_MK_ERR_NONE && mkrt__ops_run_update(it.op, it.in, it.out, it.param, cells)) {
                changed++;
                if (it.op == MKRT_OPS_RELAX)
                    marked += mkrt__mk_relax_mark(&gr.g, gr.relax_bits, it.out);
            }
        } else if (mkrt__ops_is_user(it.op)) {
#if MKRT_MK_USER_OPS
            unsigned r = mkrt_user_op(it.op, it.in, it.out, it.param, reinterpret_cast<unsigned long long *>(cells),
                                      cell_count);
            if (r != 0)
                list_failure(ctl, d, seq, (uint32_t)k, r);
#else
            e = MKRT_MK_ERR_UNKNOWN_OP;
#endif
        } else if (it.op != MKRT_OPS_APPEND) {
            e = mkrt__ops_run_builtin(it.op, it.in, it.out, it.param, cells, cell_count);
        } else if ((e = mkrt__ops_builtin_check(it.op, it.in, it.out, cell_count)) == MKRT_MK_ERR_NONE) {
            unsigned long long at = atomicAdd_system(reinterpret_cast<unsigned long long *>(&ctl->append_len), 1ull);
            if (at < ctl->append_limit)
                reinterpret_cast<unsigned long long *>(append_log)[mkrt__ops_append_slot(at, env.append_capacity)] =
                    mkrt__ops_append_word(it.out, it.param);
            else
                list_failure(ctl, d, seq, (uint32_t)k, MKRT_MK_FAIL_OVERFLOW);
        }
        if (e != MKRT_MK_ERR_NONE)
            report_error(ctl, e, (uint32_t)k, seq);
        ran++;
    }
    add_counts(env, 0, changed);
    if (marked != 0)
        atomicAdd(&g_relax_marked, (unsigned long long)marked);
    record_progress(ctl, env, l, ran);
}

// ---- Traversal jobs (protocol.h, "Traversal jobs"; backend/mk_trav.h is
// the same loop in C, which the simulated device and the stand-in driver
// run). Each warp takes words of a level's bitmaps grid-stride, its lanes
// sharing each vertex's edges (job_level); the grid
// barrier ends a round, in which every live job ran one level. The counts
// a level takes (its next frontier's vertices and edges, PageRank's L1
// change) go to rotating slots in device memory (level l adds to slot l %
// 3 and zeroes slot (l + 1) % 3, read two levels ago), and after the
// barrier thread 0 reads them and takes the decision (BFS's direction by
// ops/pull_rule.h, the job's end) into the jobs' state, which every thread
// reads after a second barrier, so the grid stays uniform.
struct mk_job_counts {
    unsigned long long nf[3], mf[3];
    double change[3];
    unsigned long long edges, changed; // changed: a RELAX job's lowered cells
};
__device__ mk_job_counts g_job_counts[MKRT_MK_JOBS_MAX];

// A job's state (g_job_run: thread 0 writes it, every thread reads it).
struct mk_job_run {
    uint32_t kind, root, level, iterations, max_iterations;
    bool live, pull, pulls;
    uint64_t nf, mf, unsettled, pushed, pulled;
    double damping, tolerance;
    uint64_t *values;
    unsigned *labels, *contrib;
    double *score;
    mkrt__bitmap *bits; // F0 | F1 | F2 | visited, words each
};

__device__ __forceinline__ uint64_t mk_deg(const mkrt__mk_graph_view &g, uint32_t v)
{
    return g.offsets[v + 1] - g.offsets[v];
}

// One level of job j: each warp takes words grid-stride (lane 0 takes or
// reads the word, the warp shares it), and for each of the word's
// vertices its 32 lanes share the vertex's edges (a hub's edges are not
// one thread's). A pulled
// BFS vertex looks at 32 edges at a time and takes the first neighbour
// in the frontier (a ballot); PageRank's gather is a warp sum. Adds the
// level's counts.
__device__ __noinline__ void job_level(const mk_job_run &j, mk_job_counts *c, const mkrt__mk_graph_view &g,
                                       uint64_t words, uint64_t tid, uint64_t nthreads)
{
    const uint32_t lane = (uint32_t)(tid & 31u);
    const uint64_t warp = tid >> 5, warps = nthreads >> 5;
    mkrt__bitmap *cur = j.bits + (j.level % 3) * words, *nxt = j.bits + ((j.level + 1) % 3) * words;
    mkrt__bitmap *clear = j.bits + ((j.level + 2) % 3) * words, *visited = j.bits + 3 * words;
    unsigned long long nf = 0, mf = 0, edges = 0, changed = 0;
    double change = 0;
    const uint64_t depth = (uint64_t)(j.level + 1) << 32;
    for (uint64_t w = warp; w < words; w += warps) {
        unsigned long long mask = 0;
        if (lane == 0) {
            mkrt__bitmap_word_set(clear, w, 0); // read last level, marked next level
            if (j.kind == MKRT_MK_JOB_BFS && j.pull) {
                mask = ~mkrt__bitmap_word(visited, w); // the unvisited: this warp owns word w of visited
                if (w == words - 1 && g.vertices % 64 != 0)
                    mask &= (1ull << (g.vertices % 64)) - 1;
            } else if (j.kind <= MKRT_MK_JOB_SSSP || j.kind == MKRT_MK_JOB_RELAX) {
                mask = mkrt__bitmap_take(cur, w);
            } else { // CC, PageRank: every vertex of the word
                const uint64_t left = (uint64_t)g.vertices - w * 64;
                mask = left >= 64 ? ~0ull : (1ull << left) - 1;
            }
        }
        mask = __shfl_sync(0xffffffffu, mask, 0);
        for (; mask != 0; mask &= mask - 1) {
            const uint32_t v = (uint32_t)(w * 64 + mkrt__bitmap_lowest(mask));
            const uint64_t lo = g.offsets[v], hi = g.offsets[v + 1];
            if (j.kind == MKRT_MK_JOB_BFS && !j.pull) {
                for (uint64_t e = lo + lane; e < hi; e += 32, edges++) {
                    const uint32_t u = g.targets[e];
                    if (mkrt__bitmap_set_new(visited, u)) {
                        j.values[u] = depth | v;
                        mkrt__bitmap_set(nxt, u);
                        nf++;
                        mf += mk_deg(g, u);
                    }
                }
            } else if (j.kind == MKRT_MK_JOB_BFS) { // pulled: v unvisited, its first neighbour in the frontier
                for (uint64_t base = lo; base < hi; base += 32) {
                    const uint64_t e = base + lane;
                    const bool in = e < hi && mkrt__bitmap_test(cur, g.targets[e]);
                    const unsigned hit = __ballot_sync(0xffffffffu, in);
                    if (hit == 0) {
                        if (lane == 0)
                            edges += hi - base < 32 ? hi - base : 32;
                        continue;
                    }
                    const uint32_t first = (uint32_t)__ffs((int)hit) - 1;
                    if (lane == first) {
                        j.values[v] = depth | g.targets[e];
                        mkrt__bitmap_set(visited, v);
                        mkrt__bitmap_set(nxt, v);
                        nf++;
                        mf += hi - lo;
                    }
                    if (lane == 0)
                        edges += first + 1;
                    break;
                }
            } else if (j.kind == MKRT_MK_JOB_SSSP || j.kind == MKRT_MK_JOB_RELAX) {
                // RELAX: the same over the cells, each lowering counted, a
                // lowered target marked only when it has edges.
                const bool relax = j.kind == MKRT_MK_JOB_RELAX;
                const uint64_t d = *reinterpret_cast<volatile uint64_t *>(&j.values[v]);
                for (uint64_t e = lo + lane; e < hi; e += 32, edges++) {
                    const uint32_t u = g.targets[e];
                    if (!mkrt__ops_atomic_min(&j.values[u], mkrt__ops_add_sat(d, g.weights != 0 ? g.weights[e] : 1)))
                        continue;
                    changed += relax;
                    nf += relax ? mkrt__mk_relax_mark(&g, nxt, u) : mkrt__bitmap_set_new(nxt, u);
                }
            } else if (j.kind == MKRT_MK_JOB_CC) {
                for (uint64_t e = lo + lane; e < hi; e += 32, edges++) {
                    const uint32_t u = g.targets[e];
                    const unsigned lv = __ldcg(&j.labels[v]), lu = __ldcg(&j.labels[u]);
                    if (lu < lv)
                        nf += atomicMin(&j.labels[v], lu) > lu;
                    else if (lv < lu)
                        nf += atomicMin(&j.labels[u], lv) > lv;
                }
            } else { // PageRank
                double sum = 0;
                for (uint64_t e = lo + lane; e < hi; e += 32, edges++)
                    sum += __uint_as_float(__ldcg(&j.contrib[g.targets[e]]));
                for (int o = 16; o > 0; o >>= 1)
                    sum += __shfl_down_sync(0xffffffffu, sum, o);
                if (lane == 0) {
                    const double now = (1.0 - j.damping) / g.vertices + j.damping * sum;
                    change += fabs(now - j.score[v]);
                    j.score[v] = now;
                    __stcg(&j.contrib[v], __float_as_uint(hi > lo ? (float)(now / (double)(hi - lo)) : 0.0f));
                }
            }
        }
    }
    const uint32_t s = j.level % 3;
    if (nf != 0)
        atomicAdd(&c->nf[s], nf);
    if (mf != 0)
        atomicAdd(&c->mf[s], mf);
    if (edges != 0)
        atomicAdd(&c->edges, edges);
    if (changed != 0)
        atomicAdd(&c->changed, changed);
    if (change != 0)
        atomicAdd(&c->change[s], change);
    if (tid == 0) { // read two levels ago, added to at the next one
        c->nf[(j.level + 1) % 3] = c->mf[(j.level + 1) % 3] = 0;
        c->change[(j.level + 1) % 3] = 0;
    }
}

// The job's next level from its counts (thread 0, between the round's barriers).
__device__ void job_next(mk_job_run &j, mk_job_counts *c, uint32_t vertices)
{
    const uint32_t s = j.level % 3;
    const uint64_t nf = *reinterpret_cast<volatile unsigned long long *>(&c->nf[s]);
    const uint64_t mf = *reinterpret_cast<volatile unsigned long long *>(&c->mf[s]);
    if (j.pull)
        j.pulled++;
    else
        j.pushed++;
    j.level++;
    if (j.kind == MKRT_MK_JOB_PR) {
        j.iterations++;
        j.live = *reinterpret_cast<volatile double *>(&c->change[s]) >= j.tolerance && j.iterations < j.max_iterations;
    } else if (j.kind == MKRT_MK_JOB_BFS) {
        j.unsettled -= mf < j.unsettled ? mf : j.unsettled;
        j.pull = j.pulls && mkrt__ops_pull_rule(nf, mf, j.unsettled, vertices, j.pull);
        j.live = nf != 0;
    } else {
        j.live = nf != 0;
    }
}

// The jobs' state, kept by thread 0 between the round's two barriers and
// read by every thread after the second (past L1: another block wrote it).
__device__ mk_job_run g_job_run[MKRT_MK_JOBS_MAX];

__device__ __forceinline__ mk_job_run load_run(uint32_t i)
{
    mk_job_run j;
    const unsigned long long *src = reinterpret_cast<const unsigned long long *>(&g_job_run[i]);
    unsigned long long *dst = reinterpret_cast<unsigned long long *>(&j);
    for (uint32_t k = 0; k < sizeof j / 8; k++)
        dst[k] = __ldcg(src + k);
    return j;
}

// A batch's traversal jobs, by the whole grid; returns the rounds run. A
// RELAX job (relax: job 0) runs over the cells from the F[0] the layers
// marked (its other bitmaps are clear: nothing to clear or seed), live
// when they marked a vertex; its edges and lowered cells go to the
// batch's counters (result[]), a public job's into its record only.
__device__ __noinline__ uint32_t run_jobs(mkrt__mk_control *ctl, const mk_env &env, uint64_t seq, uint32_t layers,
                                          uint32_t njobs, bool relax, cg::grid_group &grid, const mk_graph &gr)
{
    const mkrt__mk_graph_view &g = gr.g;
    const uint64_t words = mkrt__mk_frontier_words(g.vertices);
    const uint64_t tid = grid.thread_rank(), nthreads = grid.size();
    mkrt__mk_job *rec = ctl->jobs[seq & 1];
    const uint32_t n = njobs < MKRT_MK_JOBS_MAX ? njobs : MKRT_MK_JOBS_MAX;
    if (tid == 0)
        for (uint32_t i = 0; i < n; i++) { // the records, host-mapped: read once
            mk_job_run &j = g_job_run[i];
            j.kind = rec[i].kind;
            j.root = rec[i].root;
            j.pulls = rec[i].pulls != 0;
            j.max_iterations = rec[i].max_iterations;
            j.damping = rec[i].damping;
            j.tolerance = rec[i].tolerance;
            const bool rx = j.kind == MKRT_MK_JOB_RELAX;
            j.values = rx ? env.cells : reinterpret_cast<uint64_t *>(rec[i].values);
            j.labels = reinterpret_cast<unsigned *>(rec[i].values);
            j.score = reinterpret_cast<double *>(rec[i].values);
            j.contrib = reinterpret_cast<unsigned *>(rec[i].aux);
            j.bits = rx ? gr.relax_bits : reinterpret_cast<mkrt__bitmap *>(rec[i].bits);
            j.level = j.iterations = 0;
            // The layers' marks: their closing grid barrier ordered the adds
            // before this read (volatile: past L1); zeroed for the next batch.
            j.live = !rx || (i == 0 && relax && *reinterpret_cast<volatile unsigned long long *>(&g_relax_marked) != 0);
            if (rx)
                g_relax_marked = 0;
            j.pull = false;
            j.pushed = j.pulled = 0;
            j.nf = 1;
            j.mf = j.kind <= MKRT_MK_JOB_SSSP ? mk_deg(g, j.root) : 0;
            j.unsettled = g.offsets[g.vertices] - j.mf;
            g_job_counts[i] = mk_job_counts{};
        }
    grid.sync();
    for (uint32_t i = 0; i < n; i++) { // every bitmap clear (a RELAX job's are, but for its F[0])
        const mk_job_run j = load_run(i);
        for (uint64_t w = tid; j.kind != MKRT_MK_JOB_RELAX && w < 4 * words; w += nthreads)
            mkrt__bitmap_word_set(j.bits, w, 0);
    }
    grid.sync();
    if (tid == 0)
        for (uint32_t i = 0; i < n; i++)
            if (g_job_run[i].kind <= MKRT_MK_JOB_SSSP) { // the root in F[0] and visited
                mkrt__bitmap_set(g_job_run[i].bits, g_job_run[i].root);
                mkrt__bitmap_set(g_job_run[i].bits + 3 * words, g_job_run[i].root);
            }
    grid.sync();
    cuda::atomic_ref<uint64_t, cuda::thread_scope_system> run(ctl->levels_run);
    const uint64_t run0 = tid == 0 ? run.load(cuda::memory_order_relaxed) : 0;
    uint32_t round = 0;
    for (;; round++) {
        bool live = false;
        for (uint32_t i = 0; i < n; i++)
            live |= __ldcg(reinterpret_cast<const unsigned char *>(&g_job_run[i].live)) != 0;
        if (!live)
            break;
        for (uint32_t i = 0; i < n; i++) {
            mk_job_run j = load_run(i);
            if (j.live)
                job_level(j, &g_job_counts[i], g, words, tid, nthreads);
        }
        record_progress(ctl, env, layers + round, 0);
        grid.sync();
        if (tid == 0) {
            for (uint32_t i = 0; i < n; i++)
                if (g_job_run[i].live)
                    job_next(g_job_run[i], &g_job_counts[i], g.vertices);
            run.store(run0 + round + 1, cuda::memory_order_relaxed); // the watchdog's sign of life (protocol.h)
        }
        grid.sync(); // the next state is in before any thread reads it
    }
    if (tid == 0)
        for (uint32_t i = 0; i < n; i++) { // the results into the records, before done
            rec[i].levels_pushed = g_job_run[i].pushed;
            rec[i].levels_pulled = g_job_run[i].pulled;
            rec[i].edges = g_job_counts[i].edges;
            rec[i].iterations = g_job_run[i].iterations;
            if (g_job_run[i].kind == MKRT_MK_JOB_RELAX)
                add_counts(env, g_job_counts[i].edges, g_job_counts[i].changed);
        }
    return round;
}

// One thread: the batch's counts into result[] (zeroing the counters for
// the next batch), before done; grid and layer:
// the barriers after its layers (protocol.h, result[]).
__device__ void take_result(mkrt__mk_control *ctl, const mk_env &env, uint64_t seq, uint32_t levels,
                            uint32_t grid_n, uint32_t layer_n)
{
    mkrt__mk_counters *c = env.counters;
    ctl->result[seq & 1].levels = levels;
    ctl->result[seq & 1].grid_barriers = grid_n;
    ctl->result[seq & 1].layer_barriers = layer_n;
    ctl->result[seq & 1].edges =
        c != nullptr ? atomicExch(reinterpret_cast<unsigned long long *>(&c->edges), 0ull) : 0;
    ctl->result[seq & 1].changed =
        c != nullptr ? atomicExch(reinterpret_cast<unsigned long long *>(&c->changed), 0ull) : 0;
}

// One thread publishes the batch done (after the barrier that ends it).
__device__ void publish_done(mkrt__mk_control *ctl, uint64_t seq)
{
    __threadfence_system();
    store_release(&ctl->done, seq);
}

// The whole block: a batch's descriptor into b (16 threads, one read),
// then its layer offsets and blocks when they fit (in parallel). __ldcg:
// past L1, which may hold the buffer's previous batch.
__device__ void load_batch(const mkrt__mk_desc *desc, mk_batch *b)
{
    __syncthreads(); // every thread is done with the batch before
    const unsigned long long *src = reinterpret_cast<const unsigned long long *>(desc);
    if (threadIdx.x < sizeof(mkrt__mk_desc) / 8)
        reinterpret_cast<unsigned long long *>(&b->d)[threadIdx.x] = __ldcg(src + threadIdx.x);
    __syncthreads();
    const uint32_t layers = b->d.layers;
    const uint32_t *off = reinterpret_cast<const uint32_t *>(b->d.layer_offsets);
    const uint32_t *lb = reinterpret_cast<const uint32_t *>(b->d.layer_blocks);
    if (layers <= MK_SHARED_LAYERS) {
        for (uint32_t i = threadIdx.x; i <= layers; i += blockDim.x)
            b->off[i] = __ldcg(off + i);
        if (lb != nullptr)
            for (uint32_t i = threadIdx.x; i < layers; i += blockDim.x)
                b->lb[i] = __ldcg(lb + i);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        b->offp = layers <= MK_SHARED_LAYERS ? b->off : const_cast<uint32_t *>(off);
        b->lbp = lb == nullptr ? nullptr : layers <= MK_SHARED_LAYERS ? b->lb : const_cast<uint32_t *>(lb);
    }
    __syncthreads();
}

// Block 0, the whole block: batch seq (read from the host's descriptor)
// into g_mirror[seq & 1] for the other blocks. The caller releases it.
__device__ void mirror_batch(mkrt__mk_control *ctl, const mk_env &env, uint64_t seq, mk_batch *b)
{
    load_batch(mkrt__mk_desc_of(ctl, seq, env.desc_dev), b);
    mk_mirror *m = &g_mirror[seq & 1];
    const uint32_t layers = b->d.layers;
    if (layers <= MK_SHARED_LAYERS) {
        for (uint32_t i = threadIdx.x; i <= layers; i += blockDim.x)
            m->off[i] = b->off[i];
        if (b->lbp != nullptr)
            for (uint32_t i = threadIdx.x; i < layers; i += blockDim.x)
                m->lb[i] = b->lb[i];
    }
    if (threadIdx.x == 0) {
        m->d = b->d;
        if (layers <= MK_SHARED_LAYERS) {
            m->d.layer_offsets = reinterpret_cast<uint64_t>(m->off);
            m->d.layer_blocks = b->lbp != nullptr ? reinterpret_cast<uint64_t>(m->lb) : 0;
        }
    }
    __threadfence(); // each writer's part is in before thread 0's release (after a __syncthreads)
}

// At least 4 blocks of 256 threads per SM: 64 registers, as the kernel
// used before the traversal jobs (which alone would take it to 128 and
// halve the resident grid, 528 blocks on the H100 of bench/results/h100.md);
// the jobs' code spills a little instead (ptxas: 202 bytes of spill
// stores, 104 before). To be measured on the GPU both ways.
extern "C" __global__ void __launch_bounds__(256, 4) mkrt_megakernel(mkrt__mk_control *ctl)
{
    cg::grid_group grid = cg::this_grid();
    __shared__ uint64_t s_bell, s_last;
    __shared__ uint32_t s_narrow;
    __shared__ mk_env s_env;
    __shared__ mk_batch s_b;
    // Only block 0 reads the control block (host memory); the others learn
    // `last` with each range (g_last).
    uint64_t last = blockIdx.x == 0 ? load_acquire(&ctl->done) : 0;
    const uint64_t launched = grid.thread_rank() == 0 ? now_ns() : 0;
    unsigned epoch = 0; // thread 0 of each block: g_epoch as this block last saw it
    if (threadIdx.x == 0)
        epoch = cuda::atomic_ref<unsigned, cuda::thread_scope_device>(g_epoch).load(cuda::memory_order_relaxed);
    if (grid.thread_rank() == 0) { // set by the host while the kernel is off the GPU
        mk_env e;
        e.desc_dev = reinterpret_cast<void *>(ctl->desc_dev);
        e.cells = reinterpret_cast<uint64_t *>(ctl->cells);
        e.append_log = reinterpret_cast<uint32_t *>(ctl->append_log);
        e.append_capacity = ctl->append_capacity;
        e.progress_dev = reinterpret_cast<uint64_t *>(ctl->progress_dev);
        e.counters = reinterpret_cast<mkrt__mk_counters *>(ctl->counters);
        e.cell_count = ctl->cell_count;
        g_env = e;
        g_graph = graph_of(ctl);
    }
    grid.sync(); // g_env and g_graph are in; every block has its epoch before block 0 can bump it
    if (threadIdx.x == 0)
        s_env = g_env;
    const mk_graph gr = g_graph;
    __syncthreads();
    const mk_env &env = s_env;
    for (;;) {
        uint64_t bell;
        if (blockIdx.x == 0) {
            // Block 0 runs the batches whose every layer fits one block (the
            // plan says so: desc.one_block) by itself, with block-local
            // barriers; the other blocks wait for the epoch (below) until a
            // wide batch comes, or leaving.
            for (;;) {
                if (threadIdx.x == 0) {
                    const uint64_t b = poll(ctl, last, launched);
                    bool narrow = b != 0;
                    for (uint64_t seq = last + 1; narrow && seq <= b; seq++)
                        narrow = __ldcg(reinterpret_cast<const unsigned *>(&mkrt__mk_desc_of(ctl, seq, env.desc_dev)->one_block)) != 0;
                    s_bell = b;
                    s_narrow = narrow;
                }
                __syncthreads();
                bell = s_bell;
                const bool narrow = s_narrow != 0;
                if (!narrow) {
                    for (uint64_t seq = last + 1; seq <= bell; seq++)
                        mirror_batch(ctl, env, seq, &s_b);
                    __syncthreads(); // the mirror is in before thread 0's release
                    if (threadIdx.x == 0) {
                        g_last = last;
                        g_bell = bell;
                        // release: pairs with the other blocks' acquire below;
                        // g_last and g_bell are theirs to read after it.
                        cuda::atomic_ref<unsigned, cuda::thread_scope_device>(g_epoch).store(
                            ++epoch, cuda::memory_order_release);
                    }
                    break;
                }
                for (uint64_t seq = last + 1; seq <= bell; seq++) {
                    load_batch(mkrt__mk_desc_of(ctl, seq, env.desc_dev), &s_b);
                    for (uint32_t l = 0; l < s_b.d.layers; l++) {
                        run_layer(ctl, env, &s_b, seq, l, 1, gr);
                        __syncthreads();
                    }
                    if (threadIdx.x == 0) { // one_block: never a traversal, block-local barriers only
                        take_result(ctl, env, seq, 0, 0, 0);
                        publish_done(ctl, seq);
                    }
                }
                last = bell;
            }
        } else {
            if (threadIdx.x == 0) {
                cuda::atomic_ref<unsigned, cuda::thread_scope_device> ep(g_epoch);
                unsigned ns = 64;
                // acquire: pairs with block 0's release store of the epoch.
                while (ep.load(cuda::memory_order_acquire) == epoch) {
                    __nanosleep(ns);
                    ns = ns < 1024 ? ns * 2 : ns;
                }
                epoch++; // block 0 bumps once per range, and waits in the range's barriers
                s_last = *(volatile uint64_t *)&g_last;
                s_bell = *(volatile uint64_t *)&g_bell;
            }
            __syncthreads();
            bell = s_bell;
            last = s_last; // block 0 ran the narrow batches up to it
        }
        if (bell == 0)
            return;
        for (uint64_t seq = last + 1; seq <= bell; seq++) {
            load_batch(&g_mirror[seq & 1].d, &s_b); // block 0's copy (mirror_batch)
            const uint32_t layers = s_b.d.layers;
            const uint32_t *lb = s_b.lbp;
            uint32_t grid_n = 0, layer_n = 0; // the barriers taken (block 0 takes part in all)
            for (uint32_t l = 0; l < layers; l++) {
                // The plan's blocks for this layer (the others skip it).
                run_layer(ctl, env, &s_b, seq, l, mkrt__mk_layer_blocks(lb, l, gridDim.x), gr);
                // The plan's barrier (protocol.h, mkrt__mk_barrier_after):
                // every block takes the same decision from the same plan, so
                // grid.sync stays uniform and a layer barrier's blocks agree.
                uint32_t n;
                const uint32_t kind = mkrt__mk_barrier_after(lb, l, layers, gridDim.x, &n);
                // Counted as the plan gives them (protocol.h, result[]): a
                // one_block batch, run here beside wide ones, reports none.
                const uint32_t counted = s_b.d.one_block ? 0u : 1u;
                if (kind == MKRT_MK_BARRIER_GRID) {
                    grid.sync();
                    grid_n += counted;
                } else if (kind == MKRT_MK_BARRIER_LAYER) {
                    if (blockIdx.x < n)
                        layer_barrier(l, n);
                    layer_n += counted;
                } else {
                    __syncthreads();
                }
            }
            // The jobs: every block takes the same decision (the
            // descriptor), so their grid barriers stay uniform.
            const bool jobs = s_b.d.njobs != 0 && gr.on;
            if (layers == 0 && !jobs)
                grid.sync(); // at least one barrier per batch: block 0 cannot bump the epoch twice
                             // before every block took the first
            const uint32_t levels =
                jobs ? run_jobs(ctl, env, seq, layers, s_b.d.njobs, s_b.d.relax_job != 0, grid, gr) : 0;
            if (grid.thread_rank() == 0) {
                take_result(ctl, env, seq, levels, grid_n, layer_n);
                publish_done(ctl, seq);
            }
        }
        last = bell;
    }
}
