/* SPDX-License-Identifier: BSD-2-Clause */
/* src/ops/op_exec.c - the op rules of the runtime (see op_table.h): which
 * items may run (admission), which duplicates are redundant (dedupe), and
 * running one range of a layer on the host (the CPU pool, or the
 * dispatcher thread for a one-participant plan). Built-in semantics come
 * from ops/builtin_ops.h, shared with the device. */
#include "ops/builtin_ops.h"
#include "ops/op_table.h"
#include "ops/graph_block.h"
#include "state/state.h"

_Static_assert((int)MKRT_OPS_NOP == (int)MKRT_OP_NOP && (int)MKRT_OPS_STORE == (int)MKRT_OP_STORE &&
                   (int)MKRT_OPS_ADD == (int)MKRT_OP_ADD && (int)MKRT_OPS_APPEND == (int)MKRT_OP_APPEND &&
                   (int)MKRT_OPS_MIN == (int)MKRT_OP_MIN && (int)MKRT_OPS_RELAX == (int)MKRT_OP_RELAX &&
                   (int)MKRT_OPS_OR == (int)MKRT_OP_OR && (int)MKRT_OPS_ACC == (int)MKRT_OP_ACC &&
                   (int)MKRT_OPS_USER_FIRST == (int)MKRT_OP_USER_FIRST,
               "ops/builtin_ops.h and mkrt/item.h agree on the op codes");

mkrt_status mkrt__item_admit(const mkrt__state *sg, const mkrt_item *it)
{
    const uint32_t cells = sg->cfg->cells;
    if (!mkrt__ops_is_user(it->op)) {
        uint32_t e = mkrt__ops_builtin_check(it->op, it->in, it->out, cells);
        if (e == MKRT_MK_ERR_NONE && it->op == MKRT_OPS_RELAX && sg->graph_state->graph.vertices == 0)
            return MKRT_ENOTSUP; /* RELAX expands over the registered graph */
        return e == MKRT_MK_ERR_NONE ? MKRT_OK : e == MKRT_MK_ERR_HANDLE ? MKRT_EINVAL : MKRT_ENOTSUP;
    }
    if (it->op >= MKRT_OP_MAX || sg->ops[it->op].fn == NULL)
        return MKRT_ENOTSUP;
    /* runtime.h promises a user op cells[in] and cells[out]. */
    if (it->in >= cells || it->out >= cells)
        return MKRT_EINVAL;
    uint64_t budget = sg->cfg->device_memory_budget;
    if (budget != 0 && sg->ops[it->op].fused_bytes > budget)
        return MKRT_EBUDGET;
    return MKRT_OK;
}

bool mkrt__item_idempotent(const mkrt_item *it, void *ctx)
{
    const mkrt__state *sg = ctx;
    if (!mkrt__ops_is_user(it->op))
        return mkrt__ops_builtin_idempotent(it->op, it->in, it->out);
    return it->op < MKRT_OP_MAX && sg->ops[it->op].idempotent;
}

uint32_t mkrt__item_commute_key(const mkrt_item *it, void *ctx)
{
    const mkrt__state *sg = ctx;
    if (it->op == MKRT__OP_EXPAND)
        return MKRT__OP_EXPAND; /* a round's chunks of one vertex share its layer */
    if (!mkrt__ops_is_user(it->op))
        return mkrt__ops_builtin_commute_key(it->op, it->in, it->out);
    return it->op < MKRT_OP_MAX && sg->ops[it->op].commutes && it->in != it->out ? it->op : 0;
}

/* RELAX lowered cells[v] (slot 0), or an op emitted v's edges: v joins the next frontier, whose edges the dispatcher
 * emits (pipeline/drain.c). relaxed (both): the bit and the flag are read
 * by the dispatcher after the batch's completion (acquire), or earlier
 * with no harm: the items it makes from them run in a later batch, which
 * the launch orders after this one. */
bool mkrt__frontier_add(mkrt__state *sg, uint32_t slot, uint32_t v)
{
    if (v >= sg->graph_state->graph.vertices || sg->graph_state->graph.offsets[v] == sg->graph_state->graph.offsets[v + 1])
        return false; /* no edges */
    uint64_t bit = (uint64_t)1 << (v % 64);
    _Atomic uint64_t *word = &sg->graph_state->frontier_w[(size_t)slot * sg->graph_state->slot_words + v / 64];
    if (!(atomic_fetch_or_explicit(word, bit, memory_order_relaxed) & bit))
        atomic_store_explicit(&sg->graph_state->frontier_any, true, memory_order_relaxed);
    return true;
}

/* Edges [from, to) of a chunk item (see MKRT__OP_EXPAND). */
static void expand_range(const mkrt__state *sg, const mkrt_item *it, uint64_t *from, uint64_t *to)
{
    const uint64_t *off = sg->graph_state->graph.offsets;
    uint64_t c = it->param & ((1u << MKRT__EXPAND_CHUNK_BITS) - 1);
    *from = off[it->in] + c * sg->graph_state->expand_chunk;
    *to = off[it->in + 1] - *from < sg->graph_state->expand_chunk ? off[it->in + 1] : *from + sg->graph_state->expand_chunk;
}

bool mkrt__expand_edge_exists(const mkrt__state *sg, const mkrt_item *chunk, uint32_t j)
{
    uint64_t from, to;
    expand_range(sg, chunk, &from, &to);
    return from + j < to;
}

mkrt_item mkrt__expand_edge_item(const mkrt__state *sg, const mkrt_item *chunk, uint32_t j)
{
    uint64_t from, to;
    expand_range(sg, chunk, &from, &to);
    uint64_t e = from + j;
    return (mkrt_item){sg->graph_state->slot_op[chunk->param >> MKRT__EXPAND_CHUNK_BITS], chunk->in, sg->graph_state->graph.targets[e],
                       sg->graph_state->graph.weights ? sg->graph_state->graph.weights[e] : 1};
}

/* Prefetching the cells a range's chunks write: a cursor runs
 * EXPAND_AHEAD edges ahead of the one being run, across the chunk items
 * of the range, and touches cells[target] of each edge it passes, so
 * the random reads of a round overlap instead of queueing behind the
 * op's call (a frontier round is bound by them). */
#define EXPAND_AHEAD 16u

typedef struct expand_ahead {
    const mkrt_item *items;
    size_t k, to; /* the chunk item the cursor is in, the range's end */
    uint64_t e, end; /* the cursor's edge in it and its last + 1 */
} expand_ahead;

static bool is_pull(const mkrt_item *it)
{
    return it->op == MKRT__OP_EXPAND && (it->param & MKRT__EXPAND_PULL) == MKRT__EXPAND_PULL;
}

/* Inlined: a call per edge cost more than the prefetch saved on small graphs. */
static inline __attribute__((always_inline)) void ahead_step(const mkrt__state *sg, expand_ahead *a)
{
    while (a->e >= a->end) {
        if (++a->k >= a->to || a->items[a->k].op != MKRT__OP_EXPAND || is_pull(&a->items[a->k]))
            return;
        expand_range(sg, &a->items[a->k], &a->e, &a->end);
    }
    __builtin_prefetch(&sg->cells[sg->graph_state->graph.targets[a->e++]], 1, 3);
}

/* One chunk of a frontier round: the slot's op on each edge of the chunk.
 * RELAX reads cells[v] once, relaxed: other chunks of the round may lower
 * it meanwhile (then v is in the frontier again and expands later). */
static uint64_t expand_chunk(mkrt__state *sg, const mkrt_item *it, size_t k, mkrt__fail_list *fails,
                             expand_ahead *ahead)
{
    const mkrt_graph *g = &sg->graph_state->graph;
    uint64_t from, to, changed = 0;
    expand_range(sg, it, &from, &to);
    const uint32_t v = it->in, op = sg->graph_state->slot_op[it->param >> MKRT__EXPAND_CHUNK_BITS];
    uint64_t *cells = sg->cells;
    if (op == MKRT_OP_RELAX) {
        uint64_t base = atomic_load_explicit((_Atomic uint64_t *)&cells[v], memory_order_relaxed);
        if (base == UINT64_MAX)
            return 0;
        for (uint64_t e = from; e < to; e++) {
            ahead_step(sg, ahead);
            uint32_t w = g->targets[e];
            if (mkrt__ops_atomic_min(&cells[w], mkrt__ops_add_sat(base, g->weights ? g->weights[e] : 1))) {
                changed++;
                (void)mkrt__frontier_add(sg, 0, w);
            }
        }
        return changed;
    }
    const mkrt__op_entry *entry = &sg->ops[op];
    struct mkrt__op_run run = {sg, entry->expand_slot, false};
    mkrt_op_ctx ctx = {cells, sg->cfg->cells, entry->user, g, &run, 0};
    uint64_t outer;
    for (uint64_t e = from; e < to; e++) {
        ahead_step(sg, ahead);
        mkrt_item edge = {op, v, g->targets[e], g->weights ? g->weights[e] : 1};
        run.changed = false;
        ctx.generation = mkrt__op_begin(&outer);
        mkrt_status st = entry->fn(&edge, &ctx);
        mkrt__op_end(outer);
        changed += run.changed;
        if (st != MKRT_OK)
            mkrt__fail_list_add(fails, (uint32_t)k | (uint32_t)(e - from) << 24, (uint32_t)st);
    }
    return changed;
}

#define PULL_AHEAD 4u

static inline void pull_prefetch(const uint32_t *targets, const uint32_t *weights, const uint64_t *off, uint32_t v)
{
    __builtin_prefetch(&targets[off[v]], 0, 3);
    if (weights != NULL)
        __builtin_prefetch(&weights[off[v]], 0, 3);
}

/* One chunk of a pulled level (MKRT__EXPAND_PULL): the unsettled vertices
 * of one visited word, each pulling from its frontier neighbours until one
 * changed it. The level's frontier (frontier_r) and the visited words
 * change only between batches; relaxed loads, as the ops only set bits of
 * frontier_w meanwhile. Adds the edges it ran to *ran. */
static uint64_t pull_chunk(mkrt__state *sg, const mkrt_item *it, size_t k, mkrt__fail_list *fails,
                           uint64_t *ran)
{
    const mkrt_graph *g = &sg->graph_state->graph;
    const uint32_t slot = it->param >> MKRT__EXPAND_CHUNK_BITS, first = it->in;
    const _Atomic uint64_t *level = sg->graph_state->frontier_r + (size_t)slot * sg->graph_state->slot_words;
    const mkrt__op_entry *entry = &sg->ops[sg->graph_state->slot_op[slot]];
    /* relaxed: written by the dispatcher before the launch (see visited). */
    uint64_t todo = ~atomic_load_explicit(&sg->graph_state->visited[(size_t)slot * sg->graph_state->slot_words + first / 64],
                                          memory_order_relaxed);
    if (g->vertices - first < 64)
        todo &= ((uint64_t)1 << (g->vertices - first)) - 1;
    struct mkrt__op_run run = {sg, entry->expand_slot, false};
    mkrt_op_ctx ctx = {sg->cells, sg->cfg->cells, entry->user, g, &run, 0};
    /* Locals: the op's call would make the compiler reload them per edge. */
    const uint32_t *const targets = g->targets, *const weights = g->weights, op = sg->graph_state->slot_op[slot];
    const uint64_t *const off = g->offsets;
    uint64_t changed = 0, n = 0, outer;
    /* A cursor PULL_AHEAD open vertices ahead starts the loads of their
     * rows' first edges and weights: a pulled vertex mostly stops at one
     * of its first edges, so its weight (another array, one read per
     * vertex) is otherwise a cache miss of its own. */
    uint64_t ahead = todo;
    for (unsigned i = 0; i < PULL_AHEAD && ahead != 0; i++, ahead &= ahead - 1)
        pull_prefetch(targets, weights, off, first + (uint32_t)__builtin_ctzll(ahead));
    for (; todo != 0; todo &= todo - 1) {
        const uint32_t v = first + (uint32_t)__builtin_ctzll(todo);
        if (ahead != 0) {
            pull_prefetch(targets, weights, off, first + (uint32_t)__builtin_ctzll(ahead));
            ahead &= ahead - 1;
        }
        for (uint64_t e = off[v], end = off[v + 1]; e < end; e++) {
            const uint32_t u = targets[e];
            if (!(atomic_load_explicit(&level[u / 64], memory_order_relaxed) >> (u % 64) & 1))
                continue;
            mkrt_item edge = {op, u, v, weights ? weights[e] : 1};
            run.changed = false;
            ctx.generation = mkrt__op_begin(&outer);
            mkrt_status st = entry->fn(&edge, &ctx);
            mkrt__op_end(outer);
            n++;
            if (st != MKRT_OK) {
                mkrt__fail_list_add_edge(fails, (uint32_t)k, (uint32_t)st, e);
                break;
            }
            if (run.changed) {
                changed++;
                break;
            }
        }
    }
    *ran += n;
    return changed;
}

_Static_assert(MKRT_OPS_NOP == 0 && MKRT_OPS_STORE == 1 && MKRT_OPS_ADD == 2,
               "mkrt__exec_range's first test takes ops 0..2 as NOP, STORE and ADD");

void mkrt__exec_range(mkrt__state *sg, const mkrt_item *items, size_t from, size_t to,
                      mkrt__fail_list *fails)
{
    uint64_t *cells = sg->cells;
    const uint32_t ncells = sg->cfg->cells;
    const mkrt_graph *graph = sg->graph_state->graph.vertices ? &sg->graph_state->graph : NULL;
    uint64_t changed = 0;
    /* The cursor starts EXPAND_AHEAD edges ahead (when the range opens
     * with chunk items: a round is nothing else). */
    expand_ahead ahead = {items, from, to, 0, 0};
    uint64_t pulled = 0;
    if (from < to && items[from].op == MKRT__OP_EXPAND && !is_pull(&items[from])) {
        expand_range(sg, &items[from], &ahead.e, &ahead.end);
        for (unsigned i = 0; i < EXPAND_AHEAD; i++)
            ahead_step(sg, &ahead);
    }
    for (size_t k = from; k < to; k++) {
        const mkrt_item *it = &items[k];
        if (it->op <= MKRT_OPS_ADD) {
            /* NOP, STORE and ADD first: most items, and nothing to count
             * or claim (their handles were admitted). */
            mkrt__ops_run_admitted(it->op, it->in, it->out, it->param, cells);
        } else if (is_pull(it)) {
            changed += pull_chunk(sg, it, k, fails, &pulled);
        } else if (it->op == MKRT__OP_EXPAND) {
            changed += expand_chunk(sg, it, k, fails, &ahead);
        } else if (mkrt__ops_is_user(it->op)) {
            const mkrt__op_entry *op = &sg->ops[it->op];
            struct mkrt__op_run run = {sg, op->expand_slot, false};
            uint64_t outer;
            mkrt_op_ctx ctx = {cells, ncells, op->user, graph, &run, mkrt__op_begin(&outer)};
            mkrt_status st = op->fn(it, &ctx);
            mkrt__op_end(outer);
            changed += run.changed;
            if (st != MKRT_OK)
                mkrt__fail_list_add(fails, (uint32_t)k, (uint32_t)st);
        } else if (it->op >= MKRT_OPS_MIN && it->op <= MKRT_OPS_ACC) {
            if (mkrt__ops_run_update(it->op, it->in, it->out, it->param, cells)) { /* admitted */
                changed++;
                if (it->op == MKRT_OPS_RELAX)
                    (void)mkrt__frontier_add(sg, 0, it->out);
            }
        } else if (it->op != MKRT_OPS_APPEND) {
            (void)mkrt__ops_run_builtin(it->op, it->in, it->out, it->param, cells, ncells); /* admitted */
        } else {
            /* relaxed: claims a log position; appends to one handle are in
             * different layers, so the barrier between them already orders
             * the claims (modification order follows happens-before).
             * Admission reserved room for it: the slot is not in the log. */
            uint64_t at = atomic_fetch_add_explicit(&sg->append_len, 1, memory_order_relaxed);
            /* release: pairs with the acquire fences of the log's readers
             * (see mkrt_append_log_read). */
            atomic_store_explicit(&sg->append_log[mkrt__ops_append_slot(at, sg->cfg->append_log_capacity)],
                                  mkrt__ops_append_word(it->out, it->param), memory_order_release);
        }
    }
    if (changed != 0)
        /* relaxed: a statistic, read by stats without ordering. */
        atomic_fetch_add_explicit(&sg->changed, changed, memory_order_relaxed);
    if (pulled != 0)
        /* relaxed: read by the dispatcher after the round's completion
         * (the backend's release, its acquire). */
        atomic_fetch_add_explicit(&sg->graph_state->pulled, pulled, memory_order_relaxed);
}
