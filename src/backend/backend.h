/* SPDX-License-Identifier: BSD-2-Clause */
/* src/backend/backend.h - the one interface through which a batch runs.
 *
 * Two implementations: the CPU worker pool (backend/cpu_pool.c) and the
 * megakernel host (backend/megakernel_backend.c), under which the
 * simulated device and the GPU are two devices. The dispatcher knows only
 * this interface; the plan stage picks the backend (plan.backend) and
 * says how it runs the batch, and the backend obeys the plan.
 *
 * Per batch, from the dispatcher thread only:
 *   prepare  while the previous batch still runs (a device copies it);
 *   launch   once the previous batch completed; APPENDs may claim log
 *            positions below append_limit;
 *   wait     until the batch is done or timeout_ns passed: MKRT_OK with
 *            the failure list, (index into b->exec, mkrt_status as
 *            uint32_t) pairs, valid until the next launch; an error means
 *            the backend failed for good (some items may have run).
 * A backend that failed is never fed again; the plan stage routes to the
 * next backend that accepts the batch (the CPU pool accepts every batch).
 */
#ifndef MKRT_BACKEND_BACKEND_H
#define MKRT_BACKEND_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/spin_wait.h"
#include "base/waitq.h"
#include "mkrt/plan_cache.h"
#include "mkrt/status.h"
#include "plan/batch.h"

typedef struct mkrt__backend mkrt__backend;
struct mkrt_graph;

typedef struct mkrt__backend_ops {
    /* Whether it can run every item of b[0..kept) (the ops it knows). */
    bool (*accepts)(const mkrt__backend *be, const mkrt_item *items, size_t n);
    mkrt_status (*prepare)(mkrt__backend *be, mkrt__batch *b, mkrt_error *err);
    mkrt_status (*launch)(mkrt__backend *be, mkrt__batch *b, uint64_t append_limit, mkrt_error *err);
    mkrt_status (*wait)(mkrt__backend *be, uint64_t timeout_ns, const uint32_t **fails,
                        uint32_t *nfails, mkrt_error *err);
    /* May be NULL (then wait is the only way to know). Whether the
     * launched batch is done, waiting for it at most until `until`
     * (CLOCK_MONOTONIC ns, UINT64_MAX: no limit); false leaves it running
     * (wait is still to be called). For a helper with a deadline. */
    bool (*settle)(mkrt__backend *be, uint64_t until);
    /* Stops and frees it. False when a device would not stop: the memory
     * it maps (cells, log) must then be kept. */
    bool (*stop)(mkrt__backend *be, uint64_t timeout_ns);
    void (*describe)(const mkrt__backend *be, char *buf, size_t len);
    /* May be NULL (the CPU pool reads the runtime's graph). The registered
     * graph (runtime/graph.c), before any batch ran: the device gets its
     * copy and a frontier, and runs traversals itself. An error leaves the
     * graph off the device (the backend then refuses RELAX); the runtime
     * goes on without it. */
    mkrt_status (*graph_in)(mkrt__backend *be, const struct mkrt_graph *g, mkrt_error *err);
    /* Device-resident state: the cells and the APPEND log in the device's
     * memory. All NULL for a backend that runs on the runtime's host arrays
     * (the CPU pool, the simulated device, a GPU with host-mapped state).
     * Called with the runtime's state_lock held (pipeline/dispatch.h), no
     * batch of this backend in flight for state_in/state_out:
     *   state_in    copies the host arrays in; the device holds the state;
     *   state_out   copies the device's state back into the host arrays;
     *   cells_read, cell_write, log_read (ring positions from .. from+n-1,
     *               as 64-bit words): the application's accesses while the
     *               device holds the state, each an explicit copy (a batch
     *               may run meanwhile). */
    mkrt_status (*state_in)(mkrt__backend *be, mkrt_error *err);
    mkrt_status (*state_out)(mkrt__backend *be, mkrt_error *err);
    mkrt_status (*cells_read)(mkrt__backend *be, uint32_t first, size_t count, uint64_t *out,
                              mkrt_error *err);
    mkrt_status (*cell_write)(mkrt__backend *be, uint32_t handle, uint64_t value, mkrt_error *err);
    mkrt_status (*log_read)(mkrt__backend *be, uint64_t from, size_t n, uint64_t *out, mkrt_error *err);
    /* May be NULL (the CPU pool's only). A planning task on the backend's
     * executors while it runs no batch (the dedupe stage's split
     * levelling, pipeline/prune.c): fn(ctx, e) runs on executor 0 (the
     * caller, the token's holder) and at most once on each pool thread e
     * (1 .. executors - 1) that arrives while the caller's fn runs (so
     * fn must claim its work: a thread may come late or never), and the
     * call returns after every fn that started returned, their writes
     * visible to the caller; it never waits for a thread to wake. False,
     * without running fn: a batch is in flight, or the backend has one
     * executor. */
    bool (*run_task)(mkrt__backend *be, void (*fn)(void *ctx, uint32_t executor), void *ctx);
    /* Executors run_task runs fn on (0 without run_task). */
    uint32_t (*executors)(const mkrt__backend *be);
    /* May be NULL (the CPU pool's only; call it only on a pool started
     * with a roam, see mkrt__roam: a runtime without a device). The
     * dispatcher thread, while it does not hold the
     * dispatch token, is a member of the pool: it runs its share of every
     * batch another thread launches. serve runs that member's loop on the
     * calling thread (the dispatcher thread, always the same one) until
     * leave(ctx) says it wants the token and the roam's take got it; it
     * spins for its work with *spin up to cap_ns (base/spin_wait.h), then
     * sleeps on the roam's waitq. On return the caller holds the token. */
    void (*serve)(mkrt__backend *be, int (*leave)(void *ctx), void *ctx, mkrt__spin_budget *spin,
                  uint64_t cap_ns);
} mkrt__backend_ops;

/* The dispatch token's hooks, for a CPU pool whose threads take it
 * (pipeline/dispatcher.c fills them; a runtime without a device passes
 * them to mkrt__cpu_pool_start). A pool thread with nothing of a batch to
 * run asks want and, when it says so, take; holding the token it calls
 * run, which dispatches what is pending and gives the token back. All
 * three are called without any lock of the pool. */
typedef struct mkrt__roam {
    mkrt__waitq *wq; /* the pool's members sleep here: publishes wake it */
    /* Set by the pool while the dispatcher thread spins in serve (it will
     * see work itself: a publish need not wake the members asleep in wq),
     * cleared before it sleeps. */
    _Atomic bool *spinning;
    int (*want)(void *ctx);  /* any thread: the token is free and work waits (a hint) */
    bool (*take)(void *ctx); /* takes the token; false: another thread has it */
    /* The token's holder: dispatches, then gives it back. false: this
     * thread cannot dispatch (no thread slot, or no memory for its
     * scratch): it gave the token back at once and asks no more. */
    bool (*run)(void *ctx);
    void *ctx;
} mkrt__roam;

struct mkrt__backend {
    const mkrt__backend_ops *ops;
    const char *name;  /* "cpu", "sim", "cuda": mkrt_stats.backend */
    uint32_t width;    /* workers or blocks that can take part in a layer */
    /* What the device can do (the plan's device key, plan_cache.h): the
     * CPU key for the pool and the simulator, the GPU's compute
     * capability, cooperative launch and block size for CUDA. */
    mkrt_device_key key;
    bool failed;       /* dispatcher-only: never fed again */
    /* The one place that says which backend is the CPU pool (set by
     * mkrt__cpu_pool_create, constant after): it accepts every batch,
     * never fails, and is every runtime's last resort. The others are
     * devices (the megakernel: SIM or CUDA). */
    bool is_cpu_pool;
    /* A device's default memory budget (mkrt_config.device_memory_budget
     * when the user leaves it 0): what the device reported usable for
     * the runtime at start, its resident bytes included; 0: unknown (the
     * CPU pool, the simulated device). */
    uint64_t memory_budget;
    /* Traversal jobs one batch of it may hold (plan/source.h, job): the
     * device's job slots, fitted to the memory budget at graph_in; 0: it
     * runs none (no graph on it, or the CPU pool). Dispatcher-only after
     * graph_in (which runs under the state lock, no batch in flight). */
    uint32_t jobs_max;
};

/* A runtime's backends, bes[0..n) in order of preference, hold exactly
 * one CPU pool and at most one device. */
static inline mkrt__backend *mkrt__backends_cpu_pool(mkrt__backend *const *bes, uint32_t n)
{
    mkrt__backend *pool = NULL;
    for (uint32_t i = 0; i < n && pool == NULL; i++)
        if (bes[i]->is_cpu_pool)
            pool = bes[i];
    return pool;
}

/* The device among them, or NULL (a CPU-only runtime). */
static inline mkrt__backend *mkrt__backends_device(mkrt__backend *const *bes, uint32_t n)
{
    mkrt__backend *dev = NULL;
    for (uint32_t i = 0; i < n && dev == NULL; i++)
        if (!bes[i]->is_cpu_pool)
            dev = bes[i];
    return dev;
}

#endif
