/* SPDX-License-Identifier: BSD-2-Clause */
/* src/runtime/runtime_internal.h - struct mkrt_runtime, for the files of
 * src/runtime/ only: no floor below includes it (each takes the group it
 * needs, see below). */
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
#include "mkrt/frontier.h"
#include "mkrt/graph.h"
#include "mkrt/layer.h"
#include "mkrt/plan_cache.h"
#include "mkrt/ring.h"
#include "mkrt/runtime.h"
#include "ops/builtin_ops.h"
#include "ops/op_table.h"
#include "plan/batch.h"
#include "pipeline/dispatch.h"
#include "state/producers.h"
#include "state/state.h"
#include "state/stats.h"
#include "runtime/test_hooks.h"

/* The runtime composes its groups, each in the floor that owns it, as
 * io_uring's struct io_ring_ctx groups its fields by who touches them:
 *   producers  state/producers.h   the rings and the producer table
 *   state      state/state.h       cells, APPEND log, emission queue, dead letters
 *   stats      state/stats.h       the dispatcher's counters, the latency histogram
 *   dispatch   pipeline/dispatch.h the batches, stage scratch, the token, the
 *                                  backends and, in test builds, the test hooks
 * The graph engine (graph/engine.h) is an object of its own, created with
 * the runtime; the state group points at it (state->graph).
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

/* Writes backend_desc for a runtime with a device (mkrt__backends_device): at
 * create, and again when the device's description changes (the graph). */
void mkrt__runtime_describe_device(struct mkrt_runtime *rt);

#endif
