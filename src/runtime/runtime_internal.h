/* SPDX-License-Identifier: BSD-2-Clause */
/* src/runtime/runtime_internal.h - the runtime's structures, shared by the API,
 * the dispatcher and the backends. */
#ifndef MKRT_SRC_RUNTIME_INTERNAL_H
#define MKRT_SRC_RUNTIME_INTERNAL_H

#include <stdalign.h>
#include <stdatomic.h>

#include "backend/backend.h"
#include "base/alloc_internal.h"
#include "base/thread.h"
#include "base/spin_wait.h"
#include "base/waitq.h"
#include "mkrt/barrier.h"
#include "mkrt/dedupe.h"
#include "mkrt/frontier.h"
#include "mkrt/graph.h"
#include "mkrt/layer.h"
#include "mkrt/plan_cache.h"
#include "mkrt/ring.h"
#include "mkrt/runtime.h"
#include "ops/builtin_ops.h"
#include "ops/op_table.h"
#include "pipeline/batch.h"
#include "pipeline/dispatch.h"
#include "state/producers.h"
#include "state/state.h"
#include "state/stats.h"

/* The runtime composes its groups, each in the floor that owns it, as
 * io_uring's struct io_ring_ctx groups its fields by who touches them:
 *   producers  state/producers.h   the rings and the producer table
 *   state      state/state.h       cells, APPEND log, emission queue, dead letters
 *   stats      state/stats.h       the dispatcher's counters, the latency histogram
 *   dispatch   pipeline/dispatch.h the batches, stage scratch, the token, the
 *                                  backends, the graph block (ops/graph_block.h)
 *                                  and, in test builds, the test hooks
 * What stays here is the API's: the config, the op table, the dispatcher
 * thread and what describes the backends. */
struct mkrt_runtime {
    mkrt_config cfg;
    uint32_t workers;
    uint32_t cpus;   /* CPUs available to the process at create (base/cpus.h) */
    mkrt__op_entry ops[MKRT_OP_MAX]; /* written under producers_lock until frozen */
    bool ops_frozen;                 /* under producers_lock: a producer opened */
    mkrt__producers producers;
    mkrt__state state;
    mkrt__stats stats;
    mkrt__dispatch dispatch;
    mkrt__thread dispatcher;
    char backend_desc[MKRT_ERROR_MESSAGE_MAX + 288];
};

int mkrt__dispatcher_main(void *rt);
/* Writes backend_desc for a runtime with a device (mkrt__backends_device): at
 * create, and again when the device's description changes (the graph). */
void mkrt__runtime_describe_device(struct mkrt_runtime *rt);
/* Dispatcher thread: makes `to` hold the state before it runs a batch
 * (to == NULL or a backend without state_in, or failed: the host arrays).
 * Returns NULL, or the backend that failed (err says why): `to` when it
 * could not take the state in, or the device that held it when its state
 * could not be copied out (a sticky fault: the host arrays keep what the
 * last copy brought; the state moves home all the same). */
mkrt__backend *mkrt__state_move(struct mkrt_runtime *rt, mkrt__backend *to, mkrt_error *err);
/* The application's accesses to the state, where it lives (device_state
 * runtimes only; the others touch the host arrays directly). */
mkrt_status mkrt__state_cells_read(struct mkrt_runtime *rt, uint32_t first, size_t count, uint64_t *out);
mkrt_status mkrt__state_cell_write(struct mkrt_runtime *rt, uint32_t handle, uint64_t value);
/* A reader of the APPEND log's ring: between begin and end the state
 * stays where it is (state_lock, device_state runtimes only); at is the
 * device that holds it (NULL: read the host ring), words are copied from
 * it a chunk at a time. failed: a copy failed (the read returns nothing). */
typedef struct mkrt__log_reader {
    struct mkrt_runtime *rt;
    mkrt__backend *at;
    uint64_t base;   /* position of words[0] */
    size_t n;        /* words held */
    bool failed;
    uint64_t words[128];
} mkrt__log_reader;
void mkrt__state_log_begin(struct mkrt_runtime *rt, mkrt__log_reader *r);
uint64_t mkrt__state_log_word(mkrt__log_reader *r, uint64_t position);
void mkrt__state_log_end(mkrt__log_reader *r);

/* Whether emitted items wait: in the emission queue, or as frontier
 * vertices whose edges are not emitted yet (dispatcher-only). */
bool mkrt__emission_pending(mkrt_runtime *rt);

/* Runs the dispatcher's loop on the calling thread while the dispatch
 * token is free, until *counter reaches target, nothing is left to run, or
 * `until` (CLOCK_MONOTONIC ns; UINT64_MAX: none) passes: then it returns
 * after the op it runs, leaving the rest to the dispatcher and the
 * workers (pipeline/dispatcher.c). Returns whether it ran anything. */
bool mkrt__dispatch_help(mkrt_runtime *rt, _Atomic uint64_t *counter, uint64_t target, uint64_t until);

#ifdef MKRT_TEST_HOOKS
/* Test hook: hold(true) returns once the dispatcher has finished its
 * current batch and parked; items then wait in the rings. Releasing
 * restarts the round robin at slot 0, so items published during the hold
 * form one batch in slot order. Aborts ignore holds. */
void mkrt__runtime_hold(mkrt_runtime *rt, bool hold);

/* Test hook: doze(true) returns once the dispatcher thread has parked
 * between batches and given the dispatch token back; until doze(false)
 * only helping waiters (mkrt_wait, mkrt_drain) run batches. */
void mkrt__runtime_doze(mkrt_runtime *rt, bool doze);

/* Test hook (MKRT_BACKEND_SIM): the simulated device hangs in its n-th
 * batch from now, after `layer` layers. Call while the runtime is held or
 * idle, before publishing that batch. */
void mkrt__runtime_device_hang(mkrt_runtime *rt, uint64_t batches_from_now, uint32_t layer);

/* Test hook: mkrt_destroy waits, after it set closing and before it
 * closes the rings, while the flag is set. */
void mkrt__runtime_destroy_hold(mkrt_runtime *rt, bool hold);
#endif

#endif
