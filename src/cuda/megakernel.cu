/* SPDX-License-Identifier: BSD-2-Clause */
// src/cuda/megakernel.cu - the persistent cooperative megakernel.
//
// Launched with blocks per SM x SMs blocks (the occupancy API's maximum,
// or mkrt_config.cuda_blocks_per_sm). Thread 0 of block 0 polls the
// doorbell (system-scope acquire, __nanosleep backoff, every spin
// re-checks the shutdown flag). A batch whose every layer fits one block
// runs in block 0 alone with block-local barriers while the other blocks
// stay parked in the grid barrier; a wide batch is broadcast through the
// grid barrier, every block runs each layer's items grid-stride, records
// its progress word, and the grid synchronises between layers. The plan says
// how many blocks take part in each layer and which layer boundaries need
// the grid-wide barrier (protocol.h, mkrt__mk_layer_blocks). Completion is a
// system-scope release of `done` that the host reads with acquire. The
// kernel leaves the GPU after idle_ns without a doorbell (and after
// resident_ns at a batch boundary) and the host relaunches it (protocol.h).
// A batch with RELAX items and the graph on the device runs its traversal
// after its layers, level after level with a grid barrier between levels
// (protocol.h, "Traversals on the device"; mk_loop.h is its C twin).
// Release builds only (-O3); a -G build is slow but follows the same
// bounded protocol.
//
// Built twice: whole-program (user ops are unknown ops; the host never
// sends them), and with -rdc -DMKRT_MK_USER_OPS=1, where user ops call the
// extern mkrt_user_op that the host links in from the user's PTX with
// cuLinkCreate / cuLinkAddData / cuLinkComplete.
#include <cooperative_groups.h>
#include <cuda/atomic>

#include "cuda/protocol.h"

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
        ns = ns < 2048 ? ns * 2 : ns;
        if (ctl->idle_ns != 0 && now_ns() - idle_since >= ctl->idle_ns && park(ctl, last, false))
            return 0;
    }
    return bell;
}

// Block blockIdx.x's progress word (thread 0): (layer << 32) | items.
__device__ void record_progress(mkrt__mk_control *ctl, uint32_t l, uint32_t ran)
{
    if (threadIdx.x == 0 && ctl->progress_dev != 0)
        cuda::atomic_ref<uint64_t, cuda::thread_scope_device>(reinterpret_cast<uint64_t *>(ctl->progress_dev)[blockIdx.x])
            .store(((uint64_t)l << 32) | ran, cuda::memory_order_relaxed);
    else if (threadIdx.x == 0)
        cuda::atomic_ref<uint64_t, cuda::thread_scope_system>(ctl->progress[blockIdx.x])
            .store(((uint64_t)l << 32) | ran, cuda::memory_order_relaxed);
}

// The graph and the frontier of a traversal, as the host put them in the
// control block (vertices 0: no graph on the device).
struct mk_graph {
    mkrt__mk_graph_view g;
    mkrt__mk_frontier_view f;
    uint32_t cap;
    bool on;
};

__device__ mk_graph graph_of(const mkrt__mk_control *ctl)
{
    mk_graph m;
    m.on = ctl->vertices != 0 && ctl->frontier != 0;
    m.g.offsets = reinterpret_cast<const uint64_t *>(ctl->graph_offsets);
    m.g.targets = reinterpret_cast<const uint32_t *>(ctl->graph_targets);
    m.g.weights = reinterpret_cast<const uint32_t *>(ctl->graph_weights);
    m.g.vertices = ctl->vertices;
    m.f = mkrt__mk_frontier_at(reinterpret_cast<void *>(ctl->frontier), ctl->vertices);
    m.cap = ctl->frontier_cap;
    return m;
}

// Adds a thread's counts to the batch's device counters (once per layer
// or traversal, only when it has something to add).
__device__ void add_counts(const mkrt__mk_control *ctl, uint64_t edges, uint64_t changed)
{
    mkrt__mk_counters *c = reinterpret_cast<mkrt__mk_counters *>(ctl->counters);
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
// the traversal's first level (parity 0, len[0]).
__device__ void run_layer(mkrt__mk_control *ctl, mkrt__mk_desc *d, uint64_t seq, uint32_t l, uint32_t part,
                          const mk_graph &gr)
{
    if (blockIdx.x >= part)
        return;
    uint64_t *cells = reinterpret_cast<uint64_t *>(ctl->cells);
    uint32_t *append_log = reinterpret_cast<uint32_t *>(ctl->append_log);
    const uint32_t cell_count = ctl->cell_count;
    const mk_item *items = reinterpret_cast<const mk_item *>(d->items);
    const uint32_t *off = reinterpret_cast<const uint32_t *>(d->layer_offsets);
    uint32_t ran = 0;
    uint64_t changed = 0;
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
                    mkrt__mk_frontier_mark(&gr.f, gr.g.offsets, gr.g.vertices, 0, 0, gr.cap, it.out);
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
                reinterpret_cast<unsigned long long *>(append_log)[mkrt__ops_append_slot(at, ctl->append_capacity)] =
                    mkrt__ops_append_word(it.out, it.param);
            else
                list_failure(ctl, d, seq, (uint32_t)k, MKRT_MK_FAIL_OVERFLOW);
        }
        if (e != MKRT_MK_ERR_NONE)
            report_error(ctl, e, (uint32_t)k, seq);
        ran++;
    }
    add_counts(ctl, 0, changed);
    record_progress(ctl, l, ran);
}

// The traversal after a batch's layers (protocol.h, "Traversals on the
// device"), by the whole grid: each warp takes a vertex of the level (or a
// word of its bitset when the queue overflowed) and its lanes share the
// vertex's edges; a grid barrier ends each level. Words other blocks wrote
// in the level before are read past L1 (__ldcg, volatile, atomics).
__device__ uint32_t traverse(mkrt__mk_control *ctl, mkrt__mk_desc *d, cg::grid_group &grid, const mk_graph &gr)
{
    uint64_t *cells = reinterpret_cast<uint64_t *>(ctl->cells);
    const mkrt__mk_frontier_view &f = gr.f;
    const uint64_t words = mkrt__mk_frontier_words(gr.g.vertices);
    const uint32_t lane = threadIdx.x & 31u;
    const uint64_t warp = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const uint64_t warps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    uint64_t edges = 0, changed = 0;
    cuda::atomic_ref<uint64_t, cuda::thread_scope_system> run(ctl->levels_run);
    const uint64_t run0 = grid.thread_rank() == 0 ? run.load(cuda::memory_order_relaxed) : 0; // one read over the bus
    uint32_t level = 1;
    for (;; level++) {
        const uint32_t cur = (level - 1) & 1u, nxt = level & 1u;
        const uint64_t n = *reinterpret_cast<volatile uint64_t *>(&f.len[(level - 1) % 3]);
        if (n == 0)
            break;
        if (grid.thread_rank() == 0) // read two levels ago; appended to at the next one
            f.len[(level + 1) % 3] = 0;
        uint32_t ran = 0;
        if (n <= gr.cap) {
            for (uint64_t i = warp; i < n; i += warps, ran++) {
                const uint32_t v = __ldcg(&f.queue[2 * i + cur]);
                if (lane == 0)
                    atomicAnd(reinterpret_cast<unsigned long long *>(mkrt__mk_frontier_word(&f, cur, v / 64)),
                              ~(1ull << (v % 64)));
                const uint64_t base = *reinterpret_cast<volatile uint64_t *>(&cells[v]);
                mkrt__mk_expand(&gr.g, cells, &f, nxt, level % 3, gr.cap, v, base, lane, 32, &edges, &changed);
            }
        } else {
            for (uint64_t w = warp; w < words; w += warps) {
                unsigned long long mask = 0;
                if (lane == 0)
                    mask = atomicExch(reinterpret_cast<unsigned long long *>(mkrt__mk_frontier_word(&f, cur, w)), 0ull);
                mask = __shfl_sync(0xffffffffu, mask, 0);
                for (; mask != 0; mask &= mask - 1, ran++) {
                    const uint32_t v = (uint32_t)(w * 64 + (uint64_t)(__ffsll((long long)mask) - 1));
                    const uint64_t base = *reinterpret_cast<volatile uint64_t *>(&cells[v]);
                    mkrt__mk_expand(&gr.g, cells, &f, nxt, level % 3, gr.cap, v, base, lane, 32, &edges, &changed);
                }
            }
        }
        record_progress(ctl, d->layers + level - 1, ran);
        grid.sync();
        if (grid.thread_rank() == 0) // the watchdog's sign of life (protocol.h)
            run.store(run0 + level, cuda::memory_order_relaxed);
    }
    add_counts(ctl, edges, changed);
    grid.sync(); // the counts are in before the batch's result is taken
    return level - 1;
}

// One thread: the batch's counts into result[] (zeroing the counters and
// the frontier's lengths for the next batch), before done.
__device__ void take_result(mkrt__mk_control *ctl, uint64_t seq, uint32_t levels)
{
    mkrt__mk_counters *c = reinterpret_cast<mkrt__mk_counters *>(ctl->counters);
    const bool traversed = levels != 0;
    ctl->result[seq & 1].levels = levels;
    ctl->result[seq & 1].edges =
        c != nullptr ? atomicExch(reinterpret_cast<unsigned long long *>(&c->edges), 0ull) : 0;
    ctl->result[seq & 1].changed =
        c != nullptr ? atomicExch(reinterpret_cast<unsigned long long *>(&c->changed), 0ull) : 0;
    if (traversed) {
        const mkrt__mk_frontier_view f = mkrt__mk_frontier_at(reinterpret_cast<void *>(ctl->frontier), ctl->vertices);
        for (int i = 0; i < 3; i++)
            f.len[i] = 0;
    }
}

// One thread publishes the batch done (after the barrier that ends it).
__device__ void publish_done(mkrt__mk_control *ctl, uint64_t seq)
{
    __threadfence_system();
    store_release(&ctl->done, seq);
}

extern "C" __global__ void __launch_bounds__(256) mkrt_megakernel(mkrt__mk_control *ctl)
{
    cg::grid_group grid = cg::this_grid();
    __shared__ uint64_t s_bell;
    void *const desc_dev = reinterpret_cast<void *>(ctl->desc_dev);
    uint64_t last = load_acquire(&ctl->done);
    const uint64_t launched = grid.thread_rank() == 0 ? now_ns() : 0;
    for (;;) {
        if (blockIdx.x == 0) {
            // Block 0 runs the batches whose every layer fits one block (the
            // plan says so: desc.one_block) by itself, with block-local
            // barriers; the other blocks stay parked in the grid barrier below
            // (a word in device memory) until a wide batch comes, or leaving.
            for (;;) {
                if (threadIdx.x == 0)
                    s_bell = poll(ctl, last, launched);
                __syncthreads();
                const uint64_t bell = s_bell;
                bool narrow = bell != 0;
                for (uint64_t seq = last + 1; narrow && seq <= bell; seq++)
                    narrow = mkrt__mk_desc_of(ctl, seq, desc_dev)->one_block != 0;
                __syncthreads(); // every thread read s_bell before thread 0 writes it again
                if (!narrow) {
                    if (threadIdx.x == 0) {
                        g_last = last;
                        g_bell = bell;
                    }
                    break;
                }
                const mk_graph gr = graph_of(ctl);
                for (uint64_t seq = last + 1; seq <= bell; seq++) {
                    mkrt__mk_desc *d = mkrt__mk_desc_of(ctl, seq, desc_dev);
                    for (uint32_t l = 0; l < d->layers; l++) {
                        run_layer(ctl, d, seq, l, 1, gr);
                        __syncthreads();
                    }
                    if (threadIdx.x == 0) { // one_block: never a traversal
                        take_result(ctl, seq, 0);
                        publish_done(ctl, seq);
                    }
                }
                last = bell;
            }
        }
        grid.sync();
        const uint64_t bell = *(volatile uint64_t *)&g_bell;
        if (bell == 0)
            return;
        last = *(volatile uint64_t *)&g_last; // block 0 ran the narrow batches up to it
        const mk_graph gr = graph_of(ctl);
        for (uint64_t seq = last + 1; seq <= bell; seq++) {
            mkrt__mk_desc *d = mkrt__mk_desc_of(ctl, seq, desc_dev);
            const uint32_t layers = d->layers;
            const uint32_t *lb = reinterpret_cast<const uint32_t *>(d->layer_blocks);
            for (uint32_t l = 0; l < layers; l++) {
                // The plan's blocks for this layer (the others skip it).
                run_layer(ctl, d, seq, l, mkrt__mk_layer_blocks(lb, l, gridDim.x), gr);
                // The plan's barrier: grid-wide, or block-local where block 0
                // alone runs this layer and the next. Every block takes the
                // same decision from the same plan, so grid.sync stays uniform.
                if (l + 1 == layers || mkrt__mk_grid_barrier_after(lb, l, layers, gridDim.x))
                    grid.sync();
                else
                    __syncthreads();
            }
            // The traversal: every block takes the same decision (the
            // descriptor), so its grid barriers stay uniform.
            const uint32_t levels = d->traverse && gr.on ? traverse(ctl, d, grid, gr) : 0;
            if (grid.thread_rank() == 0) {
                take_result(ctl, seq, levels);
                publish_done(ctl, seq);
            }
        }
        last = bell;
    }
}
