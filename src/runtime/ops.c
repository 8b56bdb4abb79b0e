/* SPDX-License-Identifier: BSD-2-Clause */
/* src/runtime/ops.c - mkrt_op_register: user ops, until the first
 * producer opens. */
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <unistd.h>

#include "base/cpus.h"
#include "base/error_internal.h"
#include "base/spin_wait.h"
#include "runtime/api_internal.h"
#include "queue/spsc_wait.h"
#include "backend/cpu_pool.h"
#include "backend/megakernel_backend.h"

mkrt_status mkrt_op_register(mkrt_runtime *rt, uint32_t op, const mkrt_op_desc *desc, mkrt_error *err)
{
    if (rt == NULL)
        return mkrt__error_set(err, MKRT_EINVAL, "mkrt_op_register got a NULL runtime. Fix: pass the "
                                                 "runtime from mkrt_create.");
    if (op < MKRT_OP_USER_FIRST || op >= MKRT_OP_MAX)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "op %u cannot be registered: user ops are numbered %u..%u (0..%u are "
                               "built in). Fix: pick a number in the user range.",
                               op, MKRT_OP_USER_FIRST, MKRT_OP_MAX - 1, MKRT_OP_USER_FIRST - 1);
    if (desc == NULL || desc->fn == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "op %u has no %s. Fix: pass an mkrt_op_desc with fn set.", op,
                               desc == NULL ? "descriptor (desc is NULL)" : "function (fn is NULL)");
    if (desc->pulls && !(desc->expands && desc->commutes))
        return mkrt__error_set(err, MKRT_EINVAL,
                               "op %u asks to be pulled but does not %s. Fix: set expands and "
                               "commutes with pulls, or leave pulls false.",
                               op, desc->expands ? "commute (commutes is false)" : "expand (expands is false)");
    mkrt_frontier_wave envelope = {desc->frontier_bytes, desc->scratch_bytes, desc->output_bytes};
    uint64_t fused;
    if (mkrt_frontier_fused_wave_bytes(&envelope, &fused, NULL) != MKRT_OK)
        fused = UINT64_MAX; /* never fits a budget: refused at admission */
    /* Under the lock that mkrt_producer_open freezes the table with: the
     * dispatcher reads an entry only for items of a producer opened after
     * (the slot's release store orders this write before its reads). */
    mkrt__mutex_lock(&rt->producers.producers_lock);
    if (rt->ops_frozen) {
        mkrt__mutex_unlock(&rt->producers.producers_lock);
        return mkrt__error_set(err, MKRT_EINVAL,
                               "op %u registered after the first producer was opened. Fix: register "
                               "every op right after mkrt_create.",
                               op);
    }
    uint32_t slot = rt->ops[op].fn != NULL ? rt->ops[op].expand_slot : 0;
    if (desc->expands && slot == 0) {
        slot = mkrt__graph_lane_claim(rt->graph, op);
        if (slot == 0) {
            mkrt__mutex_unlock(&rt->producers.producers_lock);
            return mkrt__error_set(err, MKRT_EINVAL,
                                   "op %u cannot expand: %u user ops already do (the most there "
                                   "may be). Fix: let one op expand and tell cases apart by param.",
                                   op, MKRT_OP_EXPANDING_MAX);
        }
    }
    rt->ops[op] = (mkrt__op_entry){desc->fn, desc->user, envelope, fused, desc->name, desc->device,
                                   desc->idempotent, desc->commutes, desc->expands ? slot : 0,
                                   desc->pulls, NULL, NULL};
    if (desc->expands)
        mkrt__graph_row_claim(rt->graph, &rt->ops[op]); /* its expansion is the engine's */
    mkrt__mutex_unlock(&rt->producers.producers_lock);
    return MKRT_OK;
}
