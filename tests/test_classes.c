/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_classes.c - latency classes (mkrt_producer_set_class, the
 * DRAIN rule's classes in src/plan/decide.c, the drain in
 * src/pipeline/drain.c):
 *   - interactive items overtake a backlog of bulk items, which keep
 *     their publish order;
 *   - work an interactive item emits inherits its class: it runs in an
 *     interactive batch, ahead of the bulk backlog;
 *   - bulk work is not starved under a continuous interactive load: it
 *     is promoted after 32 requeues in a row (class_max_age_us 0) or after
 *     class_max_age_us of measured waiting, and EXPLAIN and the stats show
 *     both;
 *   - one producer's items stay in publish order across a change of class;
 *   - while an interactive producer is open, bulk batches are cut to
 *     class_slice_us of measured run time;
 *   - with DRAIN off classes are ignored;
 *   - bad input: a NULL producer, an unknown class, class_max_age_us out
 *     of range, a producer orphaned by mkrt_destroy. */
#include <stdatomic.h>
#include <string.h>

#include "base/thread.h"
#include "mkrt/runtime.h"
#include "plan/decide.h"
#include "runtime/test_hooks.h"
#include "tap.h"

#define SEC 5000000000ull
#define OP_SEQ 16u
#define OP_SPAWN 17u
#define OP_SLOW 18u

/* Order of execution: op 16 writes the next sequence number (from 1). */
static _Atomic uint64_t seq;

static mkrt_status seq_op(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    ctx->cells[it->out] = atomic_fetch_add(&seq, 1) + 1;
    return MKRT_OK;
}

/* op 17: emits param items of op 16 writing cells in + 0 .. in + param - 1. */
static mkrt_status spawn_op(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    mkrt_item out[64];
    uint32_t n = it->param < 64 ? it->param : 64;
    for (uint32_t i = 0; i < n; i++)
        out[i] = (mkrt_item){OP_SEQ, 0, it->in + i, 0};
    return mkrt_op_emit(ctx, out, n);
}

/* op 18: as op 16, after a few microseconds of work (keeps a continuous
 * interactive load ahead of the drain). */
static mkrt_status slow_op(const mkrt_item *it, const mkrt_op_ctx *ctx)
{
    volatile uint64_t x = 0;
    for (uint32_t i = 0; i < 2000; i++)
        x += i;
    (void)x; /* a read of the volatile: the loop is the work */
    return seq_op(it, ctx);
}

static uint32_t slice_us = 250;

static mkrt_runtime *start(size_t max_batch, uint32_t max_age_us, uint32_t plan_off)
{
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CPU;
    c.workers = 1;
    c.cells = 1u << 16;
    c.max_batch = max_batch;
    c.burst_per_ring = max_batch;
    c.class_max_age_us = max_age_us;
    c.class_slice_us = slice_us;
    c.plan_off = plan_off;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&c, &rt, &err) != MKRT_OK) {
        diag("mkrt_create: %s", err.message);
        return NULL;
    }
    mkrt_op_register(rt, OP_SEQ, &(mkrt_op_desc){.fn = seq_op, .name = "seq"}, NULL);
    mkrt_op_register(rt, OP_SPAWN, &(mkrt_op_desc){.fn = spawn_op, .name = "spawn"}, NULL);
    mkrt_op_register(rt, OP_SLOW, &(mkrt_op_desc){.fn = slow_op, .name = "slow"}, NULL);
    atomic_store(&seq, 0);
    return rt;
}

static uint64_t cell(mkrt_runtime *rt, uint32_t h)
{
    uint64_t v = 0;
    mkrt_cell_read(rt, h, &v);
    return v;
}

static void publish_seq(mkrt_producer *p, uint32_t op, uint32_t first, uint32_t n)
{
    mkrt_item batch[256];
    for (uint32_t done = 0; done < n;) {
        uint32_t k = n - done < 256 ? n - done : 256;
        for (uint32_t i = 0; i < k; i++)
            batch[i] = (mkrt_item){op, 0, first + done + i, 0};
        mkrt_publish(p, batch, k, SEC, NULL);
        done += k;
    }
}

/* Cells first .. first + n - 1 hold increasing sequence numbers. */
static bool in_order(mkrt_runtime *rt, uint32_t first, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++)
        if (cell(rt, first + i) <= cell(rt, first + i - 1) || cell(rt, first + i - 1) == 0)
            return false;
    return n == 0 || cell(rt, first + n - 1) != 0;
}

static bool accounted(mkrt_runtime *rt)
{
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    return s.published + s.emitted == s.executed + s.pruned + s.failed && s.failed == 0;
}

static void interactive_overtakes_bulk(void)
{
    mkrt_runtime *rt = start(64, 5000, 0);
    mkrt_producer *bulk = mkrt_producer_open(rt, NULL);
    mkrt_producer *inter = mkrt_producer_open(rt, NULL);
    mkrt_error err;
    ok(mkrt_producer_set_class(inter, MKRT_CLASS_INTERACTIVE, &err) == MKRT_OK, "a producer is marked interactive");
    mkrt__runtime_hold(rt, true);
    publish_seq(bulk, OP_SEQ, 0, 1024);       /* 16 batches of bulk work */
    publish_seq(inter, OP_SEQ, 2000, 8);
    mkrt__runtime_hold(rt, false);
    ok(mkrt_drain(rt, SEC) == MKRT_OK, "drained");
    uint64_t worst = 0;
    for (uint32_t i = 0; i < 8; i++)
        worst = cell(rt, 2000 + i) > worst ? cell(rt, 2000 + i) : worst;
    ok(worst >= 1 && worst <= 8 + 64, "the 8 interactive items ran ahead of the bulk backlog (last at %llu of 1032)",
       (unsigned long long)worst);
    ok(in_order(rt, 0, 1024) && in_order(rt, 2000, 8), "each producer's items ran in publish order");
    mkrt_plan_record r[64];
    size_t n = mkrt_plan_explain(rt, r, 64);
    bool seen = false;
    for (size_t i = 0; i < n; i++)
        seen |= r[i].klass == MKRT_CLASS_INTERACTIVE && r[i].class_why == MKRT_PLAN_CLASS_FIRST && r[i].items == 8;
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(seen && s.plan_counts[MKRT_PLAN_N_CLASS_REQUEUES] >= 1 && s.plan_counts[MKRT_PLAN_N_INTERACTIVE] >= 1,
       "EXPLAIN shows an interactive batch ahead of waiting bulk work; stats count %llu requeue(s)",
       (unsigned long long)s.plan_counts[MKRT_PLAN_N_CLASS_REQUEUES]);
    ok(accounted(rt), "published + emitted = executed + pruned + failed");
    mkrt_producer_close(bulk);
    mkrt_producer_close(inter);
    mkrt_destroy(rt, SEC, NULL);
}

static void emitted_work_inherits(void)
{
    mkrt_runtime *rt = start(64, 5000, 0);
    mkrt_producer *bulk = mkrt_producer_open(rt, NULL);
    mkrt_producer *inter = mkrt_producer_open(rt, NULL);
    mkrt_producer_set_class(inter, MKRT_CLASS_INTERACTIVE, NULL);
    mkrt__runtime_hold(rt, true);
    /* The bulk side emits too: 8 spawns of 60 follow-ups each, then a
     * backlog of 1024 items. */
    mkrt_item sp[8];
    for (uint32_t i = 0; i < 8; i++)
        sp[i] = (mkrt_item){OP_SPAWN, 4000 + 64 * i, 3000 + i, 60};
    mkrt_publish(bulk, sp, 8, SEC, NULL);
    publish_seq(bulk, OP_SEQ, 0, 1024);
    mkrt_item one = {OP_SPAWN, 2000, 2100, 5};
    mkrt_publish(inter, &one, 1, SEC, NULL);
    mkrt__runtime_hold(rt, false);
    ok(mkrt_quiesce(rt, SEC) == MKRT_OK, "quiesced");
    uint64_t worst = 0;
    for (uint32_t i = 0; i < 5; i++)
        worst = cell(rt, 2000 + i) > worst ? cell(rt, 2000 + i) : worst;
    ok(worst >= 1 && worst <= 5 + 3 * 64, "the interactive item's 5 follow-ups ran ahead of the bulk backlog and its "
       "480 bulk follow-ups (last at %llu of %llu)", (unsigned long long)worst, (unsigned long long)atomic_load(&seq));
    mkrt_plan_record r[64];
    size_t n = mkrt_plan_explain(rt, r, 64);
    bool seen = false;
    for (size_t i = 0; i < n; i++)
        seen |= r[i].klass == MKRT_CLASS_INTERACTIVE && r[i].items == 5;
    ok(seen, "EXPLAIN: the follow-ups ran as an interactive batch");
    ok(cell(rt, 4000) != 0 && cell(rt, 4000 + 64 * 7 + 59) != 0 && accounted(rt),
       "the bulk follow-ups ran too; published + emitted = executed + pruned + failed");
    mkrt_producer_close(bulk);
    mkrt_producer_close(inter);
    mkrt_destroy(rt, SEC, NULL);
}

typedef struct load {
    mkrt_producer *p;
    _Atomic bool stop;
    _Atomic uint64_t sent;
} load;

/* A continuous interactive load: slow items, always some in the ring. */
static int interactive_load(void *arg)
{
    load *l = arg;
    mkrt_item it[4];
    while (!atomic_load(&l->stop)) {
        for (uint32_t i = 0; i < 4; i++)
            it[i] = (mkrt_item){OP_SLOW, 0, 10000 + (uint32_t)((l->sent + i) % 1000), 0};
        if (mkrt_publish(l->p, it, 4, SEC, NULL) == MKRT_OK)
            l->sent += 4;
    }
    return 0;
}

/* Bulk work completes under a continuous interactive load; why (AGED or
 * MAX_AGE) is the rule the configuration leaves. */
static void bulk_not_starved(uint32_t max_age_us, mkrt_plan_counter expect, const char *name)
{
    mkrt_runtime *rt = start(16, max_age_us, 0);
    mkrt_producer *bulk = mkrt_producer_open(rt, NULL);
    load l = {.p = mkrt_producer_open(rt, NULL)};
    mkrt_producer_set_class(l.p, MKRT_CLASS_INTERACTIVE, NULL);
    mkrt__thread th;
    bool started = mkrt__thread_start(&th, interactive_load, &l) == 0;
    /* Let the interactive load build up before the bulk work comes. */
    while (started && l.sent < 256)
        mkrt__thread_yield();
    /* EXPLAIN while the load runs: the last 64 batches, looked at each
     * 2 ms until the bulk work completed (4 s at most). A loaded machine
     * can run more than 64 batches between two looks, so the promotion's
     * record may scroll past unseen: then another round of 512 bulk items
     * comes (five rounds at most; the counters below are exact either way). */
    mkrt_plan_record r[64];
    uint32_t oldest = 0, rounds = 0;
    bool promoted = false, waited = false;
    mkrt_status w = MKRT_OK;
    while (w == MKRT_OK && rounds < 5 && !(promoted && waited)) {
        publish_seq(bulk, OP_SEQ, 512 * rounds++, 512);
        uint64_t ticket = 0;
        mkrt_fence(bulk, &ticket);
        w = MKRT_ETIMEDOUT;
        for (int tries = 0; tries < 2000 && w == MKRT_ETIMEDOUT; tries++) {
            w = mkrt_wait(bulk, ticket, SEC / 500);
            size_t n = mkrt_plan_explain(rt, r, 64);
            for (size_t i = 0; i < n; i++) {
                oldest = r[i].bulk_age > oldest ? r[i].bulk_age : oldest;
                promoted |= r[i].klass == MKRT_CLASS_BULK &&
                            r[i].class_why ==
                                (expect == MKRT_PLAN_N_CLASS_AGED ? MKRT_PLAN_CLASS_AGED : MKRT_PLAN_CLASS_MAX_AGE);
                waited |= r[i].bulk_wait_ns > 0;
            }
        }
    }
    atomic_store(&l.stop, true);
    if (started)
        mkrt__thread_join(th);
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(started && w == MKRT_OK && in_order(rt, 0, 512 * rounds),
       "%s: %u x 512 bulk items completed, in order, under a continuous interactive load (%llu interactive items)",
       name, rounds, (unsigned long long)l.sent);
    ok(s.plan_counts[expect] >= 1 && s.plan_counts[MKRT_PLAN_N_CLASS_REQUEUES] >= 1,
       "%s: %llu bulk promotion(s) by this rule, %llu requeue(s) (aged %llu, max-age %llu, held %llu)", name,
       (unsigned long long)s.plan_counts[expect], (unsigned long long)s.plan_counts[MKRT_PLAN_N_CLASS_REQUEUES],
       (unsigned long long)s.plan_counts[MKRT_PLAN_N_CLASS_AGED],
       (unsigned long long)s.plan_counts[MKRT_PLAN_N_CLASS_MAX_AGE],
       (unsigned long long)s.plan_counts[MKRT_PLAN_N_CLASS_HELD]);
    ok(oldest <= 32, "%s: no batch passed bulk work over more than 32 times in a row (most: %u)", name, oldest);
    ok(promoted && waited,
       "%s: EXPLAIN shows the promotion and the measured wait", name);
    ok(mkrt_drain(rt, SEC) == MKRT_OK && accounted(rt), "%s: published + emitted = executed + pruned + failed", name);
    mkrt_producer_close(bulk);
    mkrt_producer_close(l.p);
    mkrt_destroy(rt, SEC, NULL);
}

static void order_across_a_class_change(void)
{
    mkrt_runtime *rt = start(64, 5000, 0);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_producer *other = mkrt_producer_open(rt, NULL);
    mkrt__runtime_hold(rt, true);
    publish_seq(other, OP_SEQ, 5000, 512);
    publish_seq(p, OP_SEQ, 0, 100); /* as bulk */
    mkrt_producer_set_class(p, MKRT_CLASS_INTERACTIVE, NULL);
    publish_seq(p, OP_SEQ, 100, 100); /* as interactive */
    mkrt__runtime_hold(rt, false);
    ok(mkrt_drain(rt, SEC) == MKRT_OK && in_order(rt, 0, 200) && in_order(rt, 5000, 512),
       "a producer's items keep publish order across a change of class");
    ok(cell(rt, 199) <= 200 + 64, "... and the whole ring drained as interactive, ahead of the bulk producer (last "
       "at %llu)", (unsigned long long)cell(rt, 199));
    mkrt_producer_set_class(p, MKRT_CLASS_BULK, NULL);
    publish_seq(p, OP_SEQ, 300, 10);
    ok(mkrt_drain(rt, SEC) == MKRT_OK && in_order(rt, 300, 10) && accounted(rt), "and back to bulk");
    mkrt_producer_close(p);
    mkrt_producer_close(other);
    mkrt_destroy(rt, SEC, NULL);
}

/* While an interactive producer is open, bulk batches are cut to the
 * slice at their measured cost per item; with none open they are not. */
static void bulk_batches_cut(void)
{
    slice_us = 50;
    mkrt_runtime *rt = start(1024, 5000, 0);
    slice_us = 250;
    mkrt_producer *bulk = mkrt_producer_open(rt, NULL);
    mkrt_producer *inter = mkrt_producer_open(rt, NULL);
    publish_seq(bulk, OP_SLOW, 0, 8192); /* no interactive producer yet: batches of up to 1024 */
    mkrt_drain(rt, SEC);
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(s.plan_counts[MKRT_PLAN_N_CLASS_CUT] == 0, "no interactive producer: no bulk batch cut");
    mkrt_producer_set_class(inter, MKRT_CLASS_INTERACTIVE, NULL);
    mkrt__runtime_hold(rt, true);
    publish_seq(bulk, OP_SLOW, 0, 8192);
    mkrt__runtime_hold(rt, false);
    mkrt_drain(rt, SEC);
    mkrt_stats_read(rt, &s);
    mkrt_plan_record r[64];
    size_t n = mkrt_plan_explain(rt, r, 64), cut = 0, over = 0;
    for (size_t i = 0; i < n; i++) {
        cut += r[i].bulk_cap >= MKRT__BULK_CAP_MIN && r[i].bulk_cap < 1024;
        over += r[i].bulk_cap != 0 && r[i].items > r[i].bulk_cap;
    }
    ok(s.plan_counts[MKRT_PLAN_N_CLASS_CUT] >= 1 && cut >= 1 && over == 0,
       "an interactive producer open: %llu bulk batches cut to 50 us of measured run time (%zu of the last %zu, "
       "e.g. to %u items), none over its cut",
       (unsigned long long)s.plan_counts[MKRT_PLAN_N_CLASS_CUT], cut, n, n ? r[n - 1].bulk_cap : 0);
    ok(in_order(rt, 0, 8192) && accounted(rt), "in publish order; published + emitted = executed + pruned + failed");
    mkrt_producer_close(bulk);
    mkrt_producer_close(inter);
    mkrt_destroy(rt, SEC, NULL);
}

static void drain_off_ignores_classes(void)
{
    mkrt_runtime *rt = start(64, 5000, MKRT_PLAN_DRAIN);
    mkrt_producer *bulk = mkrt_producer_open(rt, NULL);
    mkrt_producer *inter = mkrt_producer_open(rt, NULL);
    mkrt_producer_set_class(inter, MKRT_CLASS_INTERACTIVE, NULL);
    mkrt__runtime_hold(rt, true);
    publish_seq(bulk, OP_SEQ, 0, 1024);
    publish_seq(inter, OP_SEQ, 2000, 8);
    mkrt__runtime_hold(rt, false);
    mkrt_drain(rt, SEC);
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(cell(rt, 2000) > 64 && s.plan_counts[MKRT_PLAN_N_INTERACTIVE] == 0 && accounted(rt),
       "DRAIN off: round robin, no interactive batch (the first interactive item ran %llu-th)",
       (unsigned long long)cell(rt, 2000));
    mkrt_producer_close(bulk);
    mkrt_producer_close(inter);
    mkrt_destroy(rt, SEC, NULL);
}

static void bad_input(void)
{
    mkrt_error err;
    ok(mkrt_producer_set_class(NULL, MKRT_CLASS_INTERACTIVE, &err) == MKRT_EINVAL && strstr(err.message, "NULL") &&
           strstr(err.message, "Fix:"),
       "NULL producer: %s", err.message);
    mkrt_runtime *rt = start(64, 5000, 0);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    ok(mkrt_producer_set_class(p, (mkrt_class)7, &err) == MKRT_EINVAL && strstr(err.message, "class 7") &&
           strstr(err.message, "Fix:"),
       "unknown class: %s", err.message);
    mkrt_item it = {OP_SEQ, 0, 1, 0};
    mkrt_publish(p, &it, 1, SEC, NULL);
    ok(mkrt_drain(rt, SEC) == MKRT_OK && cell(rt, 1) == 1, "the producer still works, as bulk");
    mkrt_destroy(rt, SEC, NULL);
    ok(mkrt_producer_set_class(p, MKRT_CLASS_INTERACTIVE, &err) == MKRT_ECLOSED && strstr(err.message, "mkrt_destroy"),
       "after mkrt_destroy: %s", err.message);
    mkrt_producer_close(p);
    mkrt_config c = mkrt_config_default();
    c.class_max_age_us = MKRT_CONFIG_CLASS_AGE_MAX + 1;
    rt = NULL;
    ok(mkrt_create(&c, &rt, &err) == MKRT_EINVAL && rt == NULL && strstr(err.message, "class_max_age_us") &&
           strstr(err.message, "60000001") && strstr(err.message, "Fix:"),
       "class_max_age_us out of range: %s", err.message);
}

int main(void)
{
    plan(32);
    interactive_overtakes_bulk();
    emitted_work_inherits();
    bulk_not_starved(0, MKRT_PLAN_N_CLASS_AGED, "aged");
    bulk_not_starved(1, MKRT_PLAN_N_CLASS_MAX_AGE, "max-age");
    order_across_a_class_change();
    bulk_batches_cut();
    drain_off_ignores_classes();
    bad_input();
    return done_testing();
}
