/* SPDX-License-Identifier: BSD-2-Clause */
/* src/ops/pull_rule.h - Beamer's direction-optimizing rule (Beamer,
 * Asanovic, Patterson), written once for every engine that takes it: the
 * public mkrt_graph_pull_next() (plan/decide.c: the CPU engine's PULL, the
 * MPI engine) and the device's traversal jobs (backend/mk_trav.h,
 * src/cuda/megakernel.cu). Compiled as
 * C11 and as CUDA C++ (MKRT_OPS_FN). Its constants are the public ones
 * (mkrt/graph.h, MKRT_GRAPH_PULL_ALPHA and _BETA), the one place they live.
 *
 * A level of nf vertices whose edges are mf, with `unsettled` edges of
 * vertices not yet reached, among `vertices`: a pushed level turns to
 * pulling when mf exceeds 1/ALPHA of the unsettled edges; a pulled one
 * stays pulled while the frontier holds at least 1/BETA of the vertices. */
#ifndef MKRT_OPS_PULL_RULE_H
#define MKRT_OPS_PULL_RULE_H

#include "ops/builtin_ops.h"

#include "mkrt/graph.h"

MKRT_OPS_FN int mkrt__ops_pull_rule(uint64_t nf, uint64_t mf, uint64_t unsettled, uint64_t vertices, int was)
{
    if (nf == 0)
        return 0;
    return was ? nf * MKRT_GRAPH_PULL_BETA >= vertices : mf * MKRT_GRAPH_PULL_ALPHA > unsettled;
}

#endif
