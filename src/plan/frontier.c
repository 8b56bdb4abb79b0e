/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/frontier.c - frontier memory planning over barrier groups. */
#include "plan/barrier_internal.h"
#include "base/error_internal.h"
#include "mkrt/frontier.h"
#include "plan/split.h"

static mkrt_status overflow(mkrt_error *err, const char *field)
{
    return mkrt__error_set(err, MKRT_EOVERFLOW,
                           "megakernel frontier memory planner overflowed while accumulating %s. "
                           "Fix: shard the frontier wave group or split the fused phase.",
                           field);
}

static mkrt_status over_budget(mkrt_error *err, uint64_t required, uint64_t budget,
                               const char *field)
{
    return mkrt__error_set(err, MKRT_EBUDGET,
                           "megakernel frontier memory planner requires %llu bytes for %s but "
                           "budget allows %llu. Fix: shard the graph or the frontier waves or raise the "
                           "explicit megakernel budget.",
                           (unsigned long long)required, field, (unsigned long long)budget);
}

static int add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

mkrt_status mkrt_frontier_fused_wave_bytes(const mkrt_frontier_wave *w, uint64_t *bytes,
                                           mkrt_error *err)
{
    uint64_t scaled, sum;
    if (w == NULL || bytes == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_frontier_fused_wave_bytes got a NULL %s. Fix: pass a wave "
                               "and a result pointer.",
                               w == NULL ? "wave" : "result pointer");
    if (__builtin_mul_overflow(w->scratch_bytes, (uint64_t)MKRT_FUSED_SCRATCH_MULTIPLIER, &scaled))
        return overflow(err, "fused wave scratch bytes");
    if (!add_u64(w->frontier_bytes, scaled, &sum) || !add_u64(sum, w->output_bytes, &sum))
        return overflow(err, "fused wave bytes");
    *bytes = sum;
    return MKRT_OK;
}

/* The greedy split of groups of waves (order, group by group at
 * group_offsets) into chunks whose fused bytes fit the budget less the
 * resident bytes: the wave order stays; only the group boundaries
 * multiply, so they go to split_offsets. Then the peaks. */
static mkrt_status split_groups(mkrt_barrier_scratch *s, const mkrt_frontier_wave *waves, size_t wave_count,
                                const size_t *order, const size_t *group_offsets, size_t group_count,
                                uint64_t resident_graph_bytes, uint64_t budget_bytes, uint64_t readback_bytes,
                                mkrt_frontier_plan *plan, mkrt_error *err)
{
    mkrt_status st;
    if (resident_graph_bytes > budget_bytes)
        return over_budget(err, resident_graph_bytes, budget_bytes, "resident graph bytes");
    uint64_t group_budget = budget_bytes - resident_graph_bytes;
    size_t *split = s->split_offsets;
    size_t groups = 0;
    split[0] = 0;
    for (size_t g = 0; g < group_count; g++) {
        uint64_t cur = 0;
        size_t start = group_offsets[g];
        for (size_t k = start; k < group_offsets[g + 1]; k++) {
            uint64_t wb, combined;
            if ((st = mkrt_frontier_fused_wave_bytes(&waves[order[k]], &wb, err)) != MKRT_OK)
                return st;
            /* Overflow is checked before the split decision, as the
             * reference does. A wave larger than the budget on its own is
             * refused wherever it sits: first in its group or first in a
             * chunk the split opened (the reference checked only the
             * former and returned peaks above the budget). */
            if (!add_u64(cur, wb, &combined))
                return overflow(err, "barrier group fused wave budget bytes");
            if (wb > group_budget)
                return over_budget(err, wb, group_budget, "single fused frontier wave bytes");
            if (k > start && combined > group_budget) {
                split[++groups] = k;
                start = k;
                cur = 0;
            }
            if (!add_u64(cur, wb, &cur))
                return overflow(err, "barrier group fused wave budget bytes");
        }
        if (group_offsets[g + 1] > group_offsets[g])
            split[++groups] = group_offsets[g + 1];
    }

    mkrt_frontier_plan p = {0};
    p.barriers = (mkrt_barrier_plan){wave_count, groups, groups ? groups - 1 : 0, split, order};
    for (size_t g = 0; g < groups; g++) {
        uint64_t f = 0, sc = 0, o = 0;
        for (size_t k = split[g]; k < split[g + 1]; k++) {
            const mkrt_frontier_wave *w = &waves[order[k]];
            if (!add_u64(f, w->frontier_bytes, &f))
                return overflow(err, "frontier wave bytes");
            if (!add_u64(sc, w->scratch_bytes, &sc))
                return overflow(err, "scratch wave bytes");
            if (!add_u64(o, w->output_bytes, &o))
                return overflow(err, "output wave bytes");
        }
        size_t width = split[g + 1] - split[g];
        p.max_group_width = width > p.max_group_width ? width : p.max_group_width;
        p.peak_frontier_bytes = f > p.peak_frontier_bytes ? f : p.peak_frontier_bytes;
        p.peak_scratch_bytes = sc > p.peak_scratch_bytes ? sc : p.peak_scratch_bytes;
        p.peak_output_bytes = o > p.peak_output_bytes ? o : p.peak_output_bytes;
    }
    p.amortized_readback_bytes =
        readback_bytes > p.peak_output_bytes ? readback_bytes : p.peak_output_bytes;
    *plan = p;
    return MKRT_OK;
}

mkrt_status mkrt_plan_frontier_memory(mkrt_barrier_scratch *s, const mkrt_frontier_wave *waves,
                                      size_t wave_count, const mkrt_wave_dep *deps,
                                      size_t dep_count, uint64_t resident_graph_bytes,
                                      uint64_t budget_bytes, uint64_t readback_bytes,
                                      mkrt_frontier_plan *plan, mkrt_error *err)
{
    if (s == NULL || plan == NULL || (wave_count > 0 && waves == NULL))
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_plan_frontier_memory got a NULL scratch, plan or wave array "
                               "(%zu waves). Fix: pass valid pointers.",
                               wave_count);
    mkrt_barrier_plan kahn;
    mkrt_status st = mkrt_plan_barriers(s, wave_count, deps, dep_count, &kahn, err);
    if (st != MKRT_OK)
        return st;
    return split_groups(s, waves, wave_count, kahn.waves, kahn.group_offsets, kahn.group_count,
                        resident_graph_bytes, budget_bytes, readback_bytes, plan, err);
}

mkrt_status mkrt__plan_split_layer(mkrt_barrier_scratch *s, const mkrt_frontier_wave *waves, size_t wave_count,
                                   uint64_t resident_bytes, uint64_t budget_bytes, mkrt_frontier_plan *plan,
                                   mkrt_error *err)
{
    if (wave_count > s->wave_cap)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "a layer of %zu waves exceeds the split's scratch of %zu. Fix: size "
                               "the scratch for max_batch.",
                               wave_count, s->wave_cap);
    /* One group, the waves in their order: a layer's items are
     * conflict-free, so nothing orders them (no barrier to plan). */
    for (size_t k = 0; k < wave_count; k++)
        s->order[k] = k;
    s->group_offsets[0] = 0;
    s->group_offsets[1] = wave_count;
    return split_groups(s, waves, wave_count, s->order, s->group_offsets, wave_count > 0 ? 1 : 0, resident_bytes,
                        budget_bytes, 0, plan, err);
}

