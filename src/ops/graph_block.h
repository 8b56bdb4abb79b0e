/* SPDX-License-Identifier: BSD-2-Clause */
/* src/ops/graph_block.h - the registered graph and its traversal state
 * (RELAX's and the expanding ops' frontiers, the expansion cursor, the
 * distance buckets), one block: the ops set frontier bits (op_exec.c),
 * the dispatcher's drain takes them (pipeline/drain.c). It lives in the
 * dispatch group (pipeline/dispatch.h, graph_state); the ops reach it
 * through the state group (state/state.h, graph_state). */
#ifndef MKRT_OPS_GRAPH_BLOCK_H
#define MKRT_OPS_GRAPH_BLOCK_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/alloc_internal.h"
#include "mkrt/graph.h"
#include "ops/op_table.h"

struct mkrt__graph_block {
    /* The registered graph (vertices 0: none) and RELAX's frontier: one bit
     * per vertex whose edges wait to be emitted, set by the ops, taken by
     * the dispatcher (pipeline/drain.c) with the expansion cursor below. */
    mkrt_graph graph;  /* frontier: one bitset per expanding op (slot) */
    uint64_t bucket_width; /* RELAX's distance buckets (pipeline/drain.c), set at registration */
    uint64_t bucket_min;   /* ... used by levels of this many vertices or more (tests lower it) */
    /* Two frontiers of frontier_words words (MKRT__EXPAND_SLOTS bitsets of
     * slot_words each): the ops set bits in frontier_w (the next level),
     * the dispatcher's rounds take them from frontier_r (this level); it
     * swaps them when frontier_r is used up and no batch runs, so a level
     * ends before the next begins (pipeline/drain.c). */
    _Atomic uint64_t *frontier;  /* both, 2 x frontier_words */
    _Atomic uint64_t *frontier_w, *frontier_r;
    /* Per slot (slot_words each; after the two frontiers): the vertices
     * that joined a pulling op's frontier since it last ran empty (settled,
     * see mkrt_op_desc.pulls). Written by the dispatcher between batches
     * (no batch runs), read by the pulled rounds' workers. */
    _Atomic uint64_t *visited;
    /* RELAX's vertices deferred to a later distance bucket (slot_words,
     * after visited; pipeline/drain.c): kept out of the levels until the
     * frontier runs empty or the bucket moves. Dispatcher-only (relaxed
     * accesses, no other thread touches them). */
    _Atomic uint64_t *far;
    size_t frontier_words, slot_words;
    uint32_t slot_op[MKRT__EXPAND_SLOTS]; /* the op whose items a slot's edges become */
    uint32_t slots_used;                  /* slot 0 is RELAX's; user ops take 1.. */
    alignas(MKRT_CACHE_LINE) _Atomic bool frontier_any; /* a bit may be set */
    uint32_t expand_chunk;  /* edges per chunk item: min(MKRT__EXPAND_CHUNK_MAX, max_batch) */
    struct {
        bool after_round;   /* the last batch drained was a frontier round */
        bool scanning;      /* taking words from `word` on */
        size_t word;        /* next word to look at */
        uint64_t mask;      /* taken bits of word - 1, not yet expanded */
        uint32_t v;         /* the vertex being expanded */
        uint64_t edge, end; /* its edges still to emit (chunk aligned from offsets[v]) */
        uint32_t pull_on;   /* slots whose level runs pulled (bit per slot) */
        uint32_t pull_slot; /* pulled rounds: the slot and word to take next */
        size_t pull_word;
        bool pull_pending;  /* pulled chunks of the level remain to be taken */
        bool visited_dirty; /* a visited bit may be set */
        uint64_t visited_edges[MKRT__EXPAND_SLOTS]; /* edges of the settled vertices */
        uint64_t bound;     /* RELAX's level expands vertices below it (0: no bucket yet) */
        uint64_t far_n;     /* vertices in far (none while bound is 0) */
        uint64_t far_min;   /* a lower bound of their distances (while far_n != 0) */
    } expand;               /* dispatcher-only */
    /* Edges a pulled round ran (workers add per range; the dispatcher takes
     * it after the round's completion). */
    alignas(MKRT_CACHE_LINE) _Atomic uint64_t pulled;
};

/* Words of the graph's frontier allocation (runtime/graph.c): the two
 * frontiers and visited (frontier_words each), then far (slot_words). */
static inline size_t mkrt__frontier_alloc_words(const struct mkrt__graph_block *g)
{
    return 3 * g->frontier_words + g->slot_words;
}

#endif
