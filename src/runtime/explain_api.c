/* SPDX-License-Identifier: BSD-2-Clause */
/* src/runtime/explain_api.c - mkrt_plan_explain: the last batch plans
 * (plan/explain.c keeps them). */
#include "mkrt/explain.h"
#include "runtime/runtime_internal.h"

size_t mkrt_plan_explain(mkrt_runtime *rt, mkrt_plan_record *out, size_t max)
{
    if (rt == NULL || (out == NULL && max > 0))
        return 0;
    return mkrt__planner_explain_get(&rt->dispatch.planner, out, max);
}

const char *mkrt_plan_decision_name(uint32_t bit)
{
    switch (bit) {
    case MKRT_PLAN_WAKE: return "wake";
    case MKRT_PLAN_SHED: return "shed";
    case MKRT_PLAN_FUSE: return "fuse";
    case MKRT_PLAN_ROUTE: return "route";
    case MKRT_PLAN_DRAIN: return "drain";
    case MKRT_PLAN_PULL: return "pull";
    case MKRT_PLAN_ARMS: return "arms";
    default: return "unknown";
    }
}
