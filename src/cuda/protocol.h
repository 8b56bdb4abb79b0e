/* SPDX-License-Identifier: BSD-2-Clause */
/* src/cuda/protocol.h - the layout shared by the host and the persistent
 * megakernel (compiled both as C11 and as CUDA C++).
 *
 * The control block lives in host-mapped pinned memory. Every word that one
 * side writes and the other polls has a 128-byte line to itself.
 *   doorbell  host -> device: sequence number of the latest staged batch
 *             (release store; the device acquires it at system scope).
 *   done      device -> host: sequence number of the latest finished batch
 *             (device release at system scope; the host acquires it).
 *   error     device -> host: first failure (MKRT_MK_ERR_*), with the item.
 *   shutdown  host -> device: leave the loop (checked by every spin); at
 *             destroy, and when the host fails the engine (it then waits
 *             for the kernel to leave before the CPU takes the cells).
 *   desc[2]   the two batch descriptors (double buffer: batch k uses
 *             desc[k & 1]); the host writes desc[k & 1] before ringing k.
 *             Items that fail on the device without poisoning it (a user
 *             op returning non-zero, an APPEND past the log's capacity)
 *             are listed in the descriptor's failure list: the device
 *             claims a slot with fail_count[k & 1] and writes (index, status),
 *             status being an mkrt_status as uint32_t; the host reads the
 *             list after `done` covers the batch.
 *   progress  per block: (layer << 32) | items run in that layer, so the
 *             host can say where a hung grid stopped.
 *   parked    device -> host: the kernel left the GPU on its own (no
 *             doorbell for idle_ns, or resident for resident_ns while
 *             busy), see "Leaving the GPU" below.
 *
 * Leaving the GPU (a good citizen on a shared device). A persistent kernel
 * that never ends blocks every synchronising driver call of the process
 * (module loads, allocations, cuCtxSynchronize), including another
 * runtime's start and the application's own CUDA work. So the kernel
 * leaves after idle_ns without a doorbell (0: never), and after
 * resident_ns of residence at a batch boundary even while busy (0:
 * never), and the host relaunches it (one launch, on the same stream, so
 * two instances never overlap). The handshake is store-fence-load on both
 * sides, all seq_cst (no atomic read-modify-write crosses the bus; the
 * kernel fences at system scope between its store and load):
 *   kernel, idle:  parked = 1; fence; reload doorbell: unchanged -> leave;
 *                  changed -> parked = 0 and run the batch.
 *   kernel, busy:  parked = 1; fence; leave (pending doorbells included).
 *   host, ring:    doorbell = seq; fence; parked == 1 -> parked = 0, launch.
 *   host, waiting: parked == 1 and the batch not done -> parked = 0, launch.
 * At least one side sees the other's store, so a rung batch always has a
 * kernel to run it; when both see each other the extra launch queues
 * behind the running kernel, finds nothing to do and leaves after idle_ns.
 * The host may also ask the kernel to leave now (evict = 1: it parks as
 * when idle, at once), so that it can make a synchronising driver call
 * (the graph's allocations and copies, mkrt_graph_register) with no
 * kernel on the GPU; it clears evict and the next doorbell relaunches.
 *
 * Traversal jobs (issue 36): the device's one traversal engine, for the
 * public traversals (mkrt_traversal_*) and a batch's RELAX items (below).
 * A batch with desc.njobs != 0 runs the jobs of ctl->jobs[seq & 1] after
 * its layers (a job batch of public traversals has no items), all of
 * them at once: round after round, every job that is not finished runs
 * one level (BFS, SSSP), sweep (CC) or iteration (PageRank) over the
 * whole grid, then a grid barrier; the device decides each next level
 * itself (BFS's direction by Beamer's rule, ops/pull_rule.h, from the
 * counts it took during the level), so the frontier never leaves the
 * device between levels. A level scans only the words of its frontier
 * that were marked (a range per frontier, raised by each mark with
 * mkrt__mk_range_note, taken and reset after the level that marked it:
 * backend/mk_trav.h; pulled BFS levels, CC and PageRank sweep every
 * word); the ranges live beside the job on the device (the kernel's
 * globals, the C loop's job state), not in its bits. A job's arrays are
 * device memory the host set
 * in its record: values (BFS: depth << 32 | parent; SSSP: distance; CC:
 * uint32 labels; PageRank: double scores), aux (PageRank: the float
 * contributions) and bits (four bitmaps of mkrt__mk_frontier_words
 * words: three rotating frontiers, visited). The host fills values and aux
 * (the run's first values) and zeroes nothing: the device clears the
 * bitmaps and seeds the root itself. The device writes the results into
 * the record (levels, edges, iterations) before done.
 *
 * RELAX batches are jobs of this engine (issue 36; before, a second level
 * loop of their own with a sparse queue, "Traversals on the device" of
 * issue 14). With the graph on the device, a batch with RELAX items has
 * one job, ctl->jobs[seq & 1][0], of kind MKRT_MK_JOB_RELAX
 * (desc.relax_job = 1, njobs = 1): its values are the cells (ctl->cells),
 * its bitmaps the RELAX job's own (ctl->relax_bits, mkrt__mk_job_bits_bytes:
 * clear between batches, so the device clears nothing), and its first
 * level is the batch's layers: a RELAX item that lowers cells[out] marks
 * out in F[0] (a vertex with edges only) and raises F[0]'s range (job
 * 0's, beside its bits), which the RELAX job takes as its first level's
 * words. Then it runs as SSSP does (an edge that lowers its target's cell marks it, when it has edges, for the
 * next level) until a level marks nothing; a batch whose RELAX items
 * lowered nothing runs no level. Its edges and the cells it lowered count
 * in the batch's result (edges, changed), its rounds in levels; the
 * record gets its levels and edges as any job's.
 */
#ifndef MKRT_CUDA_PROTOCOL_H
#define MKRT_CUDA_PROTOCOL_H

#include <stdint.h>

#if defined(__CUDACC__) || defined(__cplusplus)
#define MKRT_MK_ATOMIC(T) T
#else
#include <stdatomic.h>
#define MKRT_MK_ATOMIC(T) _Atomic T
#endif

#define MKRT_MK_LINE 128
#define MKRT_MK_MAX_BLOCKS 2048

/* MKRT_MK_ERR_* (the error word's codes) and the ops' semantics: */
#include "ops/builtin_ops.h"
/* The frontiers' bitsets are base/bitmap.h's bitmaps (C and CUDA). */
#include "base/bitmap.h"

/* Failure-list status of an APPEND past the log's capacity: MKRT_EOVERFLOW. */
#define MKRT_MK_FAIL_OVERFLOW 0xFFFFFFFCu

/* The device function user PTX defines (extern "C", see megakernel.cu):
 *   unsigned mkrt_user_op(unsigned op, unsigned in, unsigned out,
 *                         unsigned param, unsigned long long *cells,
 *                         unsigned cell_count);
 * returning 0 on success or an mkrt_status (negative, as unsigned) that
 * the host reports for the item; other values are reported as
 * MKRT_EDEVICE. */
#define MKRT_MK_USER_OP_SYMBOL "mkrt_user_op"
#define MKRT_MK_KERNEL_SYMBOL "mkrt_megakernel"

typedef struct mkrt__mk_desc {
    uint64_t items;         /* device address: items in layer order */
    uint64_t layer_offsets; /* device address: uint32_t[layers + 1] */
    uint64_t layer_blocks;  /* device address: uint32_t[layers], the plan's blocks per layer
                             * (mkrt__mk_layer_blocks) */
    uint32_t count;
    uint32_t layers;
    uint64_t seq;           /* the batch this descriptor holds */
    uint64_t fails;         /* device address: uint32_t pairs (index, code), host-mapped */
    uint32_t one_block;     /* 1: every layer runs in one block (the kernel runs the
                             * batch in block 0 alone, the others stay parked) */
    uint32_t relax_job;     /* 1: the batch has RELAX items and the graph is on the
                             * device: job 0 is its RELAX job, whose first level its
                             * layers mark ("RELAX batches" above); never one_block */
    uint32_t njobs;         /* traversal jobs of the batch: ctl->jobs[seq & 1][0 .. njobs)
                             * ("Traversal jobs" above); 0: none. Never one_block */
    uint32_t pad32;
    uint8_t pad[MKRT_MK_LINE - 64];
} mkrt__mk_desc;

/* Traversal jobs ("Traversal jobs" above). */
#define MKRT_MK_JOBS_MAX 8u
enum { MKRT_MK_JOB_BFS = 1, MKRT_MK_JOB_SSSP = 2, MKRT_MK_JOB_CC = 3, MKRT_MK_JOB_PR = 4, MKRT_MK_JOB_RELAX = 5 };
typedef struct mkrt__mk_job {
    uint32_t kind;           /* MKRT_MK_JOB_* */
    uint32_t root;           /* BFS, SSSP (RELAX: none, its first level is the layers') */
    uint32_t pulls;          /* BFS: the graph is symmetric, levels may run pulled */
    uint32_t max_iterations; /* PageRank */
    double damping, tolerance; /* PageRank */
    uint64_t values, aux, bits; /* device addresses (above) */
    /* Device -> host, written before done. */
    uint64_t levels_pushed, levels_pulled, edges;
    uint32_t iterations;
    uint32_t pad;
} mkrt__mk_job;

typedef struct mkrt__mk_control {
    MKRT_MK_ATOMIC(uint64_t) doorbell;
    uint8_t pad0[MKRT_MK_LINE - 8];
    MKRT_MK_ATOMIC(uint32_t) shutdown;
    MKRT_MK_ATOMIC(uint32_t) evict; /* host -> device: leave the GPU when idle (see above) */
    uint8_t pad1[MKRT_MK_LINE - 8];
    MKRT_MK_ATOMIC(uint64_t) done;
    uint8_t pad2[MKRT_MK_LINE - 8];
    MKRT_MK_ATOMIC(uint32_t) error;
    uint32_t error_item;
    uint64_t error_seq;
    uint8_t pad3[MKRT_MK_LINE - 16];
    uint64_t cells;           /* device address of the 64-bit cells */
    uint32_t cell_count;
    uint32_t blocks;          /* grid size of the running kernel */
    /* The APPEND log: a ring of append_capacity (handle, param) pairs of
     * 32-bit words; position p lives in slot p % append_capacity. The host
     * sets append_len (next position) and append_limit (first position that
     * would overwrite an unconsumed entry) before each doorbell; a claim at
     * or past the limit is an overflow (failure list). */
    uint64_t append_log;      /* device address */
    uint64_t append_capacity;
    uint64_t append_limit;
    uint64_t idle_ns;         /* leave after this long without a doorbell (0: never) */
    uint64_t resident_ns;     /* leave at a batch boundary after this long (0: never) */
    /* Device-resident protocol state (0: the copies in this block): the
     * two descriptors (the host copies desc[k & 1] there before ringing
     * k), and the per-block progress words (the watchdog copies them out
     * only when it needs them). */
    uint64_t desc_dev;
    uint64_t progress_dev;
    uint8_t pad4[MKRT_MK_LINE - 72];
    MKRT_MK_ATOMIC(uint64_t) append_len; /* positions claimed by the device */
    uint8_t pad5[MKRT_MK_LINE - 8];
    MKRT_MK_ATOMIC(uint32_t) parked; /* 1: the kernel left on its own (see above) */
    uint8_t pad6[MKRT_MK_LINE - 4];
    /* Failure-list slots claimed by the device in batch k: fail_count[k & 1]
     * (<= the batch's count). Host-mapped like the lists: written only when
     * an item fails, read by the host without a copy. */
    MKRT_MK_ATOMIC(uint32_t) fail_count[2];
    uint8_t pad7[MKRT_MK_LINE - 8];
    /* The registered graph on the device (vertices 0: none) and the RELAX
     * job's bitmaps (mkrt__mk_job_bits_bytes, clear between batches; see
     * "RELAX batches" above), set by the host while the kernel is off the
     * GPU. counters: device memory, mkrt__mk_counters. */
    uint64_t graph_offsets, graph_targets, graph_weights; /* device addresses; weights 0: all 1 */
    uint64_t relax_bits;
    uint64_t counters;
    uint32_t vertices;
    uint32_t pad8a;
    uint8_t pad8[MKRT_MK_LINE - 48];
    /* Device -> host: what batch k did, in result[k & 1] (written before
     * done), and the levels run by every traversal so far (written after
     * each level: the watchdog's sign of life for a long traversal). */
    struct {
        uint64_t edges;   /* edge items the RELAX job ran (each an emitted RELAX) */
        uint64_t changed; /* update items (batch and the RELAX job's edges) that changed their output */
        uint64_t levels;  /* job rounds (each after a grid barrier) */
        /* The barriers the plan gave the batch's layer boundaries
         * (mkrt__mk_barrier_after), a one_block batch none: grid-wide (the
         * one after the last layer included), and among the blocks of the
         * two layers only. */
        uint32_t grid_barriers, layer_barriers;
    } result[2];
    MKRT_MK_ATOMIC(uint64_t) levels_run;
    uint8_t pad9[MKRT_MK_LINE - 72];
    mkrt__mk_desc desc[2];
    mkrt__mk_job jobs[2][MKRT_MK_JOBS_MAX]; /* a job batch's jobs, [seq & 1] (above) */
    MKRT_MK_ATOMIC(uint64_t) progress[MKRT_MK_MAX_BLOCKS];
} mkrt__mk_control;

#if !defined(__CUDACC__) && !defined(__cplusplus)
_Static_assert(sizeof(mkrt__mk_desc) == MKRT_MK_LINE, "one descriptor per line");
_Static_assert(sizeof(mkrt__mk_job) % 8 == 0, "jobs pack without holes");
_Static_assert(sizeof(MKRT_MK_ATOMIC(uint64_t)) == 8, "device and host agree on word size");
#endif

/* Device counters of a batch (device memory), moved into result[] and
 * zeroed by one thread before done. */
typedef struct mkrt__mk_counters {
    uint64_t edges, changed;
} mkrt__mk_counters;

MKRT_OPS_FN uint64_t mkrt__mk_frontier_words(uint32_t vertices)
{
    return ((uint64_t)vertices + 63) / 64;
}

/* Bytes of a job's bitmaps (three frontiers and visited) for `vertices`. */
MKRT_OPS_FN uint64_t mkrt__mk_job_bits_bytes(uint32_t vertices)
{
    return 4 * mkrt__mk_frontier_words(vertices) * sizeof(uint64_t);
}

/* A frontier's range (the words its marks set, "Traversal jobs" above):
 * two words, r[0] = the largest ~w and r[1] the largest w + 1 over the
 * words w marked, so all-zero is the empty range and a mark raises both
 * with an atomic maximum. Kept by the device loop beside the job (the
 * kernel's device globals, mk_trav.h's job state), not in its bits. */

/* Atomically *cell = max(*cell, v), a plain load first (once a range
 * holds the words, a mark writes nothing). Relaxed: the marks of a level
 * commute; the grid barrier after it orders them before the read of the
 * range (mkrt__mk_range_take). */
MKRT_OPS_FN void mkrt__mk_atomic_max(mkrt__bitmap *cell, uint64_t v)
{
#if defined(__CUDA_ARCH__)
    if (*(volatile unsigned long long *)cell < v)
        atomicMax(cell, (unsigned long long)v);
#elif defined(__CUDACC__)
    unsigned long long cur = __atomic_load_n(cell, __ATOMIC_RELAXED);
    while (cur < v && !__atomic_compare_exchange_n(cell, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
#else
    uint64_t cur = atomic_load_explicit(cell, memory_order_relaxed);
    while (cur < v && !atomic_compare_exchange_weak_explicit(cell, &cur, v, memory_order_relaxed, memory_order_relaxed)) {
    }
#endif
}

/* Notes word w of a frontier marked in its range r. */
MKRT_OPS_FN void mkrt__mk_range_note(mkrt__bitmap *r, uint64_t w)
{
    mkrt__mk_atomic_max(&r[0], ~w);
    mkrt__mk_atomic_max(&r[1], w + 1);
}

/* Range r as words [*lo, *hi) (empty: *lo >= *hi), and reset to empty.
 * One thread, between two grid barriers: after the level that marked
 * the frontier and before any block marks it again (mk_trav.h). */
MKRT_OPS_FN void mkrt__mk_range_take(mkrt__bitmap *r, uint64_t *lo, uint64_t *hi)
{
#if defined(__CUDA_ARCH__)
    *lo = ~(uint64_t)__ldcg(&r[0]);
    *hi = (uint64_t)__ldcg(&r[1]);
    r[0] = r[1] = 0;
#elif defined(__CUDACC__)
    *lo = ~(uint64_t)__atomic_load_n(&r[0], __ATOMIC_RELAXED);
    *hi = (uint64_t)__atomic_load_n(&r[1], __ATOMIC_RELAXED);
    __atomic_store_n(&r[0], 0ull, __ATOMIC_RELAXED);
    __atomic_store_n(&r[1], 0ull, __ATOMIC_RELAXED);
#else
    /* relaxed: the barrier before this orders the marks (above). */
    *lo = ~atomic_load_explicit(&r[0], memory_order_relaxed);
    *hi = atomic_load_explicit(&r[1], memory_order_relaxed);
    atomic_store_explicit(&r[0], 0, memory_order_relaxed);
    atomic_store_explicit(&r[1], 0, memory_order_relaxed);
#endif
}

/* Device bytes of one job slot: values (8 bytes a vertex), aux (4) and
 * the bitmaps. */
MKRT_OPS_FN uint64_t mkrt__mk_job_slot_bytes(uint32_t vertices)
{
    return (uint64_t)vertices * 12u + mkrt__mk_job_bits_bytes(vertices);
}

/* The graph on the device as the traversal reads it. */
typedef struct mkrt__mk_graph_view {
    const uint64_t *offsets;
    const uint32_t *targets, *weights; /* weights may be 0: all 1 */
    uint32_t vertices;
} mkrt__mk_graph_view;

/* Marks vertex v for the next level of a RELAX job in bitmap f, its
 * word in f's range r (a vertex with edges only: one without has nothing
 * to expand, and a level of such vertices alone would be an empty one);
 * whether this set its bit. */
MKRT_OPS_FN int mkrt__mk_relax_mark(const mkrt__mk_graph_view *g, mkrt__bitmap *f, mkrt__bitmap *r, uint32_t v)
{
    if (v >= g->vertices || g->offsets[v] == g->offsets[v + 1] || !mkrt__bitmap_set_new(f, v))
        return 0;
    mkrt__mk_range_note(r, v / 64);
    return 1;
}

/* The descriptor of batch seq and block b's progress word, where they live. */
MKRT_OPS_FN mkrt__mk_desc *mkrt__mk_desc_of(mkrt__mk_control *ctl, uint64_t seq, void *desc_dev)
{
    return desc_dev != 0 ? &((mkrt__mk_desc *)desc_dev)[seq & 1] : &ctl->desc[seq & 1];
}

/* How many blocks run layer l of a batch: the plan's count (0 means all),
 * never more than the grid. Blocks at or above it skip the layer. */
MKRT_OPS_FN uint32_t mkrt__mk_layer_blocks(const uint32_t *layer_blocks, uint32_t l, uint32_t grid)
{
    uint32_t n = layer_blocks != 0 ? layer_blocks[l] : 0;
    return n == 0 || n > grid ? grid : n;
}

/* The barrier after layer l of a batch, which every block decides alike
 * from the plan. After the last layer: the grid barrier that ends the
 * batch. Else only the blocks that run layer l or layer l + 1 take part:
 * blocks [0, n), n = the larger of the two layers' blocks (*n). n == 1:
 * block 0 alone, a block-local barrier; n == grid (or a layer past the
 * MKRT_MK_LAYER_BARRIERS slots): the grid barrier; else the layer
 * barrier of slot l, among those n blocks (megakernel.cu). A block left
 * out goes on to the next layer it runs and waits at that layer's
 * barrier, which the blocks of the layer between take part in: block 0
 * runs every layer, so each barrier orders everything before it. */
#define MKRT_MK_LAYER_BARRIERS 1024u
enum { MKRT_MK_BARRIER_BLOCK = 0, MKRT_MK_BARRIER_LAYER = 1, MKRT_MK_BARRIER_GRID = 2 };
MKRT_OPS_FN uint32_t mkrt__mk_barrier_after(const uint32_t *layer_blocks, uint32_t l, uint32_t layers,
                                           uint32_t grid, uint32_t *n)
{
    if (l + 1 >= layers) {
        *n = grid;
        return MKRT_MK_BARRIER_GRID;
    }
    const uint32_t a = mkrt__mk_layer_blocks(layer_blocks, l, grid), b = mkrt__mk_layer_blocks(layer_blocks, l + 1, grid);
    *n = a > b ? a : b;
    if (*n == 1)
        return MKRT_MK_BARRIER_BLOCK;
    if (*n >= grid || l >= MKRT_MK_LAYER_BARRIERS) {
        *n = grid;
        return MKRT_MK_BARRIER_GRID;
    }
    return MKRT_MK_BARRIER_LAYER;
}

#endif
