/* SPDX-License-Identifier: BSD-2-Clause */
/* src/backend/mk_sim.h - a host thread that plays the megakernel over the
 * real control block layout, for testing the host protocol without a GPU.
 * It runs the device loop of mk_loop.h (the kernel's loop in C). User ops
 * are unknown to it (the runtime keeps them on the CPU in this mode).
 * Fault injection: hang in a given batch after a given layer. */
#ifndef MKRT_BACKEND_MK_SIM_H
#define MKRT_BACKEND_MK_SIM_H

#include <stdatomic.h>
#include <stdbool.h>

#include "cuda/mk_device.h"
#include "backend/mk_host.h"
#include "base/thread.h"

typedef struct mkrt__mk_sim {
    mkrt__mk_control *ctl;
    uint64_t *cells;            /* its own "device" memory; the loop uses what
                                 * the control block points to (which may be
                                 * someone else's, as in the runtime) */
    uint32_t *append_log;       /* pairs; likewise */
    mkrt_item *buffers[2];      /* staged items */
    uint32_t *offsets[2];       /* staged layer offsets */
    uint32_t *fails[2];         /* failure lists, (index, code) pairs */
    uint32_t capacity;          /* items per buffer */
    uint32_t cell_count;
    uint64_t append_capacity;
    size_t log_bytes;          /* allocation size of append_log */
    uint32_t blocks;            /* simulated grid size */
#ifdef MKRT_TEST_HOOKS
    /* Test hooks (mk_loop.h's hooks): the loop hangs in batch hang_batch
     * (0: never) once it reaches layer hang_after_layer, for hang_ns (0:
     * until shutdown), and naps level_nap_ns at each traversal level. */
    _Atomic uint64_t hang_batch;
    _Atomic uint32_t hang_after_layer;
    _Atomic uint64_t level_nap_ns;
    _Atomic uint64_t hang_ns;
#endif
    void *relax_bits;                  /* the RELAX job's bitmaps (protocol.h, "RELAX batches") */
    size_t relax_bits_bytes;
    void *job_bits;                    /* the job slots' bitmaps (protocol.h, "Traversal jobs") */
    size_t job_bits_bytes;
    uint32_t jobs;                     /* job slots */
    mkrt__thread thread;
    bool running; /* thread started and not yet joined */
    /* The loop's thread (mk_sim.c): ALIVE while it runs the loop or
     * decides whether to leave, QUEUED when a relaunch waits for it (a
     * launch queued behind a kernel that is still running). */
    _Atomic uint32_t launch;
} mkrt__mk_sim;

/* Allocates the control block (as cuMemHostAlloc would), the device
 * arrays, and starts the loop, which leaves after idle_ns without a
 * doorbell, or after resident_ns at a batch boundary (0: never), and is
 * relaunched by the host (mkrt__mk_sim_ops.relaunch). */
mkrt_status mkrt__mk_sim_start(mkrt__mk_sim *s, uint32_t cells, uint32_t capacity, uint32_t blocks,
                               uint64_t append_capacity, uint64_t idle_ns, uint64_t resident_ns,
                               mkrt_error *err);
/* The registered graph for the loop (host memory is the sim's device
 * memory: the arrays are borrowed), the RELAX job's zeroed bitmaps and
 * the bitmaps of `jobs` job slots, replacing the ones before. Call while
 * no batch runs. */
mkrt_status mkrt__mk_sim_graph(mkrt__mk_sim *s, uint32_t vertices, const uint64_t *offsets, const uint32_t *targets,
                               const uint32_t *weights, uint32_t jobs, mkrt_error *err);
/* The device operations for mkrt__mk_host (ctx = the sim). */
extern const mkrt__mk_device_ops mkrt__mk_sim_ops;
/* Sets shutdown, joins the loop (bounded: a hung sim is told to give up)
 * and frees everything. */
void mkrt__mk_sim_stop(mkrt__mk_sim *s);
/* The simulated device behind the megakernel backend (mk_device.h; ctx =
 * a started sim): the state stays in the runtime's host arrays. */
extern const mkrt__mk_device mkrt__mk_sim_device;

#endif
