/* SPDX-License-Identifier: BSD-2-Clause */
/* src/plan/barrier.c - Kahn layering over a CSR wave graph. */
#include <string.h>

#include "base/alloc_internal.h"
#include "plan/barrier_internal.h"
#include "base/error_internal.h"

static const char *const wave_arrays[] = {"outgoing counts", "indegree", "outgoing offsets",
                                          "ready wave layer", "barrier groups",
                                          "independent wave group"};

static void free_waves(mkrt_barrier_scratch *s)
{
    size_t **arrays[] = {&s->outgoing_counts, &s->indegree, &s->offsets,
                         &s->order, &s->group_offsets, &s->split_offsets};
    for (size_t i = 0; i < 6; i++) {
        size_t len = s->wave_cap + (i == 0 || i == 1 || i == 3 ? 0 : 1);
        mkrt__free(*arrays[i], len * sizeof(size_t));
        *arrays[i] = NULL;
    }
    s->wave_cap = 0;
}

static mkrt_status reserve_waves(mkrt_barrier_scratch *s, size_t waves, mkrt_error *err)
{
    if (waves <= s->wave_cap && s->offsets != NULL)
        return MKRT_OK;
    size_t cap = s->wave_cap > waves ? s->wave_cap : waves;
    size_t plus_one;
    if (!mkrt__add_size(cap, 1, &plus_one) || plus_one > SIZE_MAX / sizeof(size_t))
        return mkrt__error_set(err, MKRT_EOVERFLOW,
                               "megakernel barrier planner overflowed while accumulating barrier "
                               "scratch wave offsets for %zu waves. Fix: shard the frontier wave "
                               "group before planning.",
                               waves);
    size_t *fresh[6] = {0};
    for (size_t i = 0; i < 6; i++) {
        size_t len = i == 0 || i == 1 || i == 3 ? cap : plus_one;
        fresh[i] = mkrt__alloc(len * sizeof(size_t), _Alignof(size_t));
        if (fresh[i] == NULL) {
            for (size_t j = 0; j < i; j++)
                mkrt__free(fresh[j], (j == 0 || j == 1 || j == 3 ? cap : plus_one) * sizeof(size_t));
            return mkrt__error_set(err, MKRT_ENOMEM,
                                   "megakernel barrier planner could not reserve %zu %s entries. "
                                   "Fix: shard the frontier waves before planning.",
                                   len, wave_arrays[i]);
        }
    }
    free_waves(s);
    s->outgoing_counts = fresh[0];
    s->indegree = fresh[1];
    s->offsets = fresh[2];
    s->order = fresh[3];
    s->group_offsets = fresh[4];
    s->split_offsets = fresh[5];
    s->wave_cap = cap;
    return MKRT_OK;
}

static mkrt_status reserve_deps(mkrt_barrier_scratch *s, size_t deps, mkrt_error *err)
{
    if (deps <= s->dep_cap)
        return MKRT_OK;
    if (deps > SIZE_MAX / sizeof(size_t))
        return mkrt__error_set(err, MKRT_EOVERFLOW,
                               "megakernel barrier planner overflowed sizing %zu outgoing targets. "
                               "Fix: shard the frontier waves before planning.",
                               deps);
    size_t *t = mkrt__alloc(deps * sizeof(size_t), _Alignof(size_t));
    if (t == NULL)
        return mkrt__error_set(err, MKRT_ENOMEM,
                               "megakernel barrier planner could not reserve %zu outgoing targets "
                               "entries. Fix: shard the frontier waves before planning.",
                               deps);
    mkrt__free(s->targets, s->dep_cap * sizeof(size_t));
    s->targets = t;
    s->dep_cap = deps;
    return MKRT_OK;
}

mkrt_barrier_scratch *mkrt_barrier_scratch_create(size_t wave_capacity, size_t dep_capacity,
                                                  mkrt_error *err)
{
    mkrt_barrier_scratch *s = mkrt__alloc_zeroed(sizeof *s, _Alignof(mkrt_barrier_scratch));
    if (s == NULL) {
        mkrt__error_set(err, MKRT_ENOMEM,
                        "mkrt_barrier_scratch allocation failed (%zu bytes). Fix: free memory.",
                        sizeof *s);
        return NULL;
    }
    if (reserve_waves(s, wave_capacity, err) != MKRT_OK ||
        reserve_deps(s, dep_capacity, err) != MKRT_OK) {
        mkrt_barrier_scratch_destroy(s);
        return NULL;
    }
    return s;
}

void mkrt_barrier_scratch_destroy(mkrt_barrier_scratch *s)
{
    if (s == NULL)
        return;
    free_waves(s);
    mkrt__free(s->targets, s->dep_cap * sizeof(size_t));
    mkrt__free(s, sizeof *s);
}

size_t mkrt_barrier_scratch_wave_capacity(const mkrt_barrier_scratch *s)
{
    return s == NULL ? 0 : s->wave_cap;
}

size_t mkrt_barrier_scratch_dependency_capacity(const mkrt_barrier_scratch *s)
{
    return s == NULL ? 0 : s->dep_cap;
}

static mkrt_status overflow(mkrt_error *err, const char *field)
{
    return mkrt__error_set(err, MKRT_EOVERFLOW,
                           "megakernel barrier planner overflowed while accumulating %s. Fix: "
                           "shard the frontier wave group or split the fused phase.",
                           field);
}

static mkrt_status invalid_wave(mkrt_error *err, size_t wave_count, const mkrt_wave_dep *d)
{
    return mkrt__error_set(err, MKRT_EINVAL,
                           "megakernel wave dependency %zu -> %zu names a wave outside the %zu "
                           "planned wave(s). Fix: declare every wave before depending on it.",
                           d->before, d->after, wave_count);
}

mkrt_status mkrt_plan_barriers(mkrt_barrier_scratch *s, size_t wave_count,
                               const mkrt_wave_dep *deps, size_t dep_count,
                               mkrt_barrier_plan *plan, mkrt_error *err)
{
    if (s == NULL || plan == NULL || (dep_count > 0 && deps == NULL))
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_plan_barriers got a NULL scratch, plan or dependency array "
                               "(%zu dependencies). Fix: pass valid pointers.",
                               dep_count);
    mkrt_status st = reserve_waves(s, wave_count, err);
    if (st == MKRT_OK)
        st = reserve_deps(s, dep_count, err);
    if (st != MKRT_OK)
        return st;
    if (wave_count == 0) {
        if (dep_count > 0)
            return invalid_wave(err, 0, &deps[0]);
        s->group_offsets[0] = 0;
        *plan = (mkrt_barrier_plan){0, 0, 0, s->group_offsets, s->order};
        return MKRT_OK;
    }
    if (dep_count == 0) {
        for (size_t w = 0; w < wave_count; w++)
            s->order[w] = w;
        s->group_offsets[0] = 0;
        s->group_offsets[1] = wave_count;
        *plan = (mkrt_barrier_plan){wave_count, 1, 0, s->group_offsets, s->order};
        return MKRT_OK;
    }

    size_t *outc = s->outgoing_counts, *indeg = s->indegree, *off = s->offsets;
    memset(outc, 0, wave_count * sizeof *outc);
    memset(indeg, 0, wave_count * sizeof *indeg);
    for (size_t e = 0; e < dep_count; e++) {
        const mkrt_wave_dep *d = &deps[e];
        if (d->before >= wave_count || d->after >= wave_count)
            return invalid_wave(err, wave_count, d);
        if (d->before == d->after)
            return mkrt__error_set(err, MKRT_EINVAL,
                                   "megakernel wave %zu depends on itself (dependency %zu of %zu). "
                                   "Fix: remove the self edge or split the wave into two phases.",
                                   d->before, e, dep_count);
        if (!mkrt__add_size(outc[d->before], 1, &outc[d->before]))
            return overflow(err, "outgoing dependency count");
        if (!mkrt__add_size(indeg[d->after], 1, &indeg[d->after]))
            return overflow(err, "incoming dependency count");
    }
    /* CSR rows; the counts become each row's write cursor. */
    off[0] = 0;
    for (size_t w = 0; w < wave_count; w++) {
        if (!mkrt__add_size(off[w], outc[w], &off[w + 1]))
            return overflow(err, "outgoing dependency offsets");
        outc[w] = off[w];
    }
    for (size_t e = 0; e < dep_count; e++) {
        size_t *cursor = &outc[deps[e].before];
        s->targets[*cursor] = deps[e].after;
        if (!mkrt__add_size(*cursor, 1, cursor))
            return overflow(err, "outgoing target cursor");
    }

    /* Kahn layers, with `order` as one contiguous queue: [head, layer_end)
     * is the current ready layer, [layer_end, tail) the next one. */
    size_t tail = 0, groups = 0;
    for (size_t w = 0; w < wave_count; w++)
        if (indeg[w] == 0)
            s->order[tail++] = w;
    size_t head = 0;
    s->group_offsets[0] = 0;
    while (head < tail) {
        size_t layer_end = tail;
        for (; head < layer_end; head++) {
            size_t u = s->order[head];
            for (size_t k = off[u]; k < off[u + 1]; k++) {
                size_t v = s->targets[k];
                if (--indeg[v] == 0)
                    s->order[tail++] = v;
            }
        }
        s->group_offsets[++groups] = layer_end;
    }
    if (tail != wave_count) {
        size_t left = wave_count - tail;
        return mkrt__error_set(err, MKRT_ECYCLE,
                               "megakernel wave dependency graph contains a cycle with %zu "
                               "unscheduled waves. Fix: break the cyclic dataflow edge or insert "
                               "an explicit iterative fixed-point kernel.",
                               left);
    }
    *plan = (mkrt_barrier_plan){wave_count, groups, groups - 1, s->group_offsets, s->order};
    return MKRT_OK;
}
