/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/dedupe_internal.h - the skip pass of ARMS (pipeline/
 * arms.c) over a dedupe scratch's handle table (pipeline/dedupe.c). */
#ifndef MKRT_PIPELINE_DEDUPE_INTERNAL_H
#define MKRT_PIPELINE_DEDUPE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/dedupe.h"

/* Whether `late`, run right after `early` (same op, in and out; in !=
 * out; params differ), changes nothing. */
typedef bool (*mkrt__covered_fn)(const mkrt_item *early, const mkrt_item *late);

/* Walks items[0..n) in order and compacts the kept ones in place into
 * items[0..*kept). Every kept item counts as writing its out (as the
 * layering does). Item i with mark[i] != 0 is dropped when the last kept
 * writer W of its out has its op and in and another param, no kept item
 * wrote its in after W (so in != out), and covered(W, item). Everything
 * else is kept. MKRT_ENOMEM (the handle table could not grow): nothing is
 * dropped, *kept = n. */
mkrt_status mkrt__dedupe_skip_marked(mkrt_dedupe_scratch *s, mkrt_item *items, size_t n, const uint8_t *mark,
                                     mkrt__covered_fn covered, size_t *kept, mkrt_error *err);

#endif
