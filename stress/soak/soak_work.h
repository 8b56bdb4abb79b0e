/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/soak/soak_work.h - the harness the emit, commute and plugin
 * workloads share (soak_work.c): producer threads that publish what the
 * workload generates and book what went in, storms of allocation
 * failures, mkrt_quiesce under load, and the end of a round (quiesce and
 * check, or mkrt_destroy racing the producers). */
#ifndef MKRT_SOAK_WORK_H
#define MKRT_SOAK_WORK_H

#include "soak.h"

#define WORK_BATCH 64

typedef struct work work;

typedef struct work_ops {
    /* Fills buf (at most WORK_BATCH items) for producer slot; returns n. */
    size_t (*gen)(work *w, unsigned slot, uint64_t *rng, mkrt_item *buf);
    /* items[0..n) were published by slot (called on its thread). */
    void (*book)(work *w, unsigned slot, const mkrt_item *items, size_t n);
    /* After slot's mkrt_wait returned OK: its own cells may be checked
     * (the runtime is alive; its thread); may be NULL. */
    void (*after_wait)(work *w, unsigned slot);
} work_ops;

struct work {
    soak_plan plan;
    mkrt_config cfg;
    mkrt_runtime *rt;
    const work_ops *ops;
    void *self;         /* the workload's state */
    unsigned producers; /* threads */
    _Atomic bool stop, gate_closed;
    _Atomic int users; /* threads inside calls that take the runtime */
    _Atomic uint64_t callbacks, infra_failures;
    uint64_t published[MAX_PRODUCERS]; /* per slot, its thread's; read after the join */
    mkrt__thread thread[MAX_PRODUCERS]; /* each stays here until joined */
    bool started[MAX_PRODUCERS];
    uint64_t rng[MAX_PRODUCERS];
};

/* mkrt_create with the plan's backend (cfg filled by the caller, on_error
 * and error_ctx too); false: skipped or failed (reported). */
bool work_create(work *w);
/* Starts the producers, runs until the plan's end (storms, quiesce under
 * load), then either (race) destroys the runtime under the producers and
 * joins them, returning false with w->rt NULL; or stops and joins them,
 * quiesces and returns true with the runtime alive for the checks (then
 * call work_destroy). */
bool work_run(work *w);
void work_destroy(work *w);
uint64_t work_published(const work *w);
/* A failure status any item may get from the infrastructure: a destroy
 * that timed out, a device that failed. */
bool work_infra(const work *w, mkrt_status why);

#endif
