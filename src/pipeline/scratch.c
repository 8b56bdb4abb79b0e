/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/scratch.c - the dedupe scratch each dispatching thread
 * owns (pipeline/scratch.h). */
#include "base/alloc_internal.h"
#include "base/error_internal.h"
#include "pipeline/scratch.h"

mkrt__dispatch_scratch *mkrt__dispatch_scratch_create(mkrt_error *err)
{
    mkrt__dispatch_scratch *s = mkrt__alloc_zeroed(sizeof *s, _Alignof(mkrt__dispatch_scratch));
    if (s != NULL) {
        s->layering = mkrt_layer_scratch_create(err);
        s->dedupe = s->layering != NULL ? mkrt_dedupe_scratch_create(err) : NULL;
        if (s->dedupe != NULL)
            return s;
        mkrt__dispatch_scratch_destroy(s);
        return NULL;
    }
    mkrt__error_set(err, MKRT_ENOMEM, "the dispatch scratch allocation failed (%zu bytes). Fix: free memory.",
                    sizeof *s);
    return NULL;
}

static void free_arms(mkrt__dispatch_scratch *s)
{
    mkrt__free(s->pairs, s->item_cap * sizeof *s->pairs);
    mkrt__free(s->mark, s->item_cap * sizeof *s->mark);
    mkrt__free((void *)s->arm, s->arm_cap * sizeof *s->arm);
    mkrt__free(s->arm_len, s->arm_cap * sizeof *s->arm_len);
    s->pairs = NULL;
    s->mark = NULL;
    s->arm = NULL;
    s->arm_len = NULL;
    s->item_cap = s->arm_cap = 0;
}

void mkrt__dispatch_scratch_destroy(mkrt__dispatch_scratch *s)
{
    if (s == NULL)
        return;
    mkrt_layer_scratch_destroy(s->layering);
    for (size_t k = 0; k < sizeof s->split / sizeof s->split[0]; k++)
        mkrt_layer_scratch_destroy(s->split[k]);
    mkrt_dedupe_scratch_destroy(s->dedupe);
    free_arms(s);
    mkrt__free(s, sizeof *s);
}

mkrt_status mkrt__dispatch_scratch_reserve_arms(mkrt__dispatch_scratch *s, size_t items, size_t arms,
                                                mkrt_error *err)
{
    if (items <= s->item_cap && arms <= s->arm_cap)
        return MKRT_OK;
    items = items > s->item_cap ? items : s->item_cap;
    arms = arms > s->arm_cap ? arms : s->arm_cap;
    mkrt_cross_arm_pair *pairs = mkrt__alloc(items * sizeof *pairs, MKRT_CACHE_LINE);
    uint8_t *mark = mkrt__alloc_zeroed(items * sizeof *mark, MKRT_CACHE_LINE);
    const mkrt_item **arm = mkrt__alloc(arms * sizeof *arm, MKRT_CACHE_LINE);
    size_t *arm_len = mkrt__alloc(arms * sizeof *arm_len, MKRT_CACHE_LINE);
    if (pairs == NULL || mark == NULL || arm == NULL || arm_len == NULL) {
        mkrt__free(pairs, items * sizeof *pairs);
        mkrt__free(mark, items * sizeof *mark);
        mkrt__free((void *)arm, arms * sizeof *arm);
        mkrt__free(arm_len, arms * sizeof *arm_len);
        return mkrt__error_set(err, MKRT_ENOMEM,
                               "the cross-arm scratch could not grow to %zu items and %zu arms. Fix: "
                               "lower max_batch or free memory.",
                               items, arms);
    }
    free_arms(s);
    s->pairs = pairs;
    s->mark = mark;
    s->arm = arm;
    s->arm_len = arm_len;
    s->item_cap = items;
    s->arm_cap = arms;
    return MKRT_OK;
}
