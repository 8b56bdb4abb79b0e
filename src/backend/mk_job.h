/* SPDX-License-Identifier: BSD-2-Clause */
/* src/backend/mk_job.h - a traversal job between its two forms: the work
 * source's (plan/source.h, mkrt__device_job: host arrays, results) and
 * the device's record (cuda/protocol.h, mkrt__mk_job). The megakernel
 * backend fills a record for the device and takes its results back; the
 * graph engine does the same around the host's run of the loop
 * (graph/device.c). */
#ifndef MKRT_BACKEND_MK_JOB_H
#define MKRT_BACKEND_MK_JOB_H

#include <string.h>

#include "cuda/protocol.h"
#include "plan/source.h"

/* The record of job j: its kind and parameters (the arrays' device
 * addresses are the device's to fill). */
static inline void mkrt__mk_job_record(const mkrt__device_job *j, mkrt__mk_job *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->kind = j->kind;
    rec->root = j->root;
    rec->pulls = j->pulls;
    rec->max_iterations = j->max_iterations;
    rec->damping = j->damping;
    rec->tolerance = j->tolerance;
}

/* What the run did, from its record into j: done, MKRT_OK. */
static inline void mkrt__mk_job_result(const mkrt__mk_job *rec, mkrt__device_job *j)
{
    j->levels_pushed = rec->levels_pushed;
    j->levels_pulled = rec->levels_pulled;
    j->edges = rec->edges;
    j->iterations = rec->iterations;
    j->status = MKRT_OK;
    j->done = true;
}

#endif
