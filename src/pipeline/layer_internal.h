/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/layer_internal.h - mkrt_layer_batch with commuting items:
 * key(item) names the item's commuting group (0: none). Items of one
 * group that write one handle, with no other access to it between them in
 * drain order, may share a layer (their op updates the handle
 * atomically); an item whose in equals its out must not be given a group
 * unless its op does not read in. mkrt_layer_batch is this with no key. */
#ifndef MKRT_PIPELINE_LAYER_INTERNAL_H
#define MKRT_PIPELINE_LAYER_INTERNAL_H

#include <stdint.h>

#include "mkrt/layer.h"

typedef uint32_t (*mkrt__commute_key_fn)(const mkrt_item *item, void *ctx);

mkrt_status mkrt__layer_batch_commuting(mkrt_layer_scratch *s, const mkrt_item *items, size_t n,
                                        mkrt__commute_key_fn key, void *key_ctx,
                                        mkrt_layer_plan *plan, mkrt_error *err);

#endif
