/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_runtime_regress_state.c - the runtime's regression tests for
 * what it leaves behind (the rest are in test_runtime_regress.c): the
 * APPEND log shows only completed entries and can be consumed (also
 * concurrently); dedupe never changes results (non-idempotent duplicates,
 * writes in between); batches equal a sequential reference run; allocation
 * failures are errors, never crashes. */
#include "runtime_regress.h"

/* Defect 8: readers see only completed entries. */
static int publish_block_batch(void *arg)
{
    mkrt_producer *p = arg;
    mkrt_item items[] = {{MKRT_OP_APPEND, 0, 9, 77}, {OP_BLOCK, 1, 9, 0}};
    mkrt_publish(p, items, 2, SEC, NULL);
    return 0;
}

static void test_log_completed_only(void)
{
    mkrt_config c = config(MKRT_BACKEND_CPU, NULL);
    mkrt_runtime *rt = start(&c);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    atomic_store(&block_started, 0);
    atomic_store(&block_go, 0);
    mkrt__runtime_hold(rt, true);
    publish_block_batch(p);
    mkrt__runtime_hold(rt, false);
    while (!atomic_load(&block_started))
        sched_yield();
    uint32_t out[4];
    is(mkrt_append_log_read(rt, 9, out, 4), 0,
       "the APPEND ran in layer 0 but its batch is still running: not visible");
    mkrt_append_entry e[4];
    is(mkrt_append_log_consume(rt, e, 4), 0, "nor consumable");
    atomic_store(&block_go, 1);
    uint64_t t;
    mkrt_fence(p, &t);
    mkrt_wait(p, t, SEC);
    is(mkrt_append_log_read(rt, 9, out, 4), 1, "after the batch completed: visible");
    is(out[0], 77, "with its param");
    mkrt_producer_close(p);
    stop(rt);
}

/* Defect 9: the log can be consumed, for ever, also concurrently. */
typedef struct consumer {
    mkrt_runtime *rt;
    _Atomic int *stop;
    uint64_t got, per_handle_bad;
    uint32_t next[8]; /* next param expected per handle */
} consumer;

static int consumer_main(void *arg)
{
    consumer *c = arg;
    mkrt_append_entry e[64];
    for (;;) {
        int stopping = atomic_load(c->stop);
        size_t k = mkrt_append_log_consume(c->rt, e, 64);
        for (size_t i = 0; i < k; i++) {
            uint32_t h = e[i].handle - 100;
            if (h >= 8 || e[i].param != c->next[h])
                c->per_handle_bad++;
            else
                c->next[h]++;
        }
        c->got += k;
        if (k == 0 && stopping)
            return 0;
        if (k == 0)
            sched_yield();
    }
}

static void test_log_consume(mkrt_backend_kind kind, const char *name)
{
    failures f = {0};
    mkrt_config c = config(kind, &f);
    c.append_log_capacity = 8;
    mkrt_runtime *rt = start(&c);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    int rounds_ok = 0;
    for (uint32_t r = 0; r < 50; r++) {
        mkrt_item items[5];
        for (uint32_t i = 0; i < 5; i++)
            items[i] = (mkrt_item){MKRT_OP_APPEND, 0, 3, r * 5 + i};
        run_batch(rt, p, items, 5);
        mkrt_append_entry e[8];
        size_t k = mkrt_append_log_consume(rt, e, 8);
        int good = k == 5;
        for (size_t i = 0; i < k; i++)
            good &= e[i].handle == 3 && e[i].param == r * 5 + (uint32_t)i;
        rounds_ok += good;
    }
    is(rounds_ok, 50, "%s: 250 APPENDs through an 8-entry log, consumed as they go", name);
    is(atomic_load(&f.n), 0, "%s: none overflowed", name);

    /* Concurrent: 2 producers (handles 100..103 and 104..107, params in
     * order per handle) and 2 consumers. */
    _Atomic int stopflag = 0;
    consumer cs[2];
    mkrt__thread th[2];
    for (int i = 0; i < 2; i++) {
        cs[i] = (consumer){rt, &stopflag, 0, 0, {0}};
        mkrt__thread_start(&th[i], consumer_main, &cs[i]);
    }
    mkrt_producer *q = mkrt_producer_open(rt, NULL);
    uint32_t sent[8] = {0};
    uint64_t total = 0;
    for (int round = 0; round < 400; round++) {
        for (int who = 0; who < 2; who++) {
            mkrt_item items[4];
            for (uint32_t i = 0; i < 4; i++) {
                uint32_t h = (uint32_t)who * 4 + i;
                items[i] = (mkrt_item){MKRT_OP_APPEND, 0, 100 + h, sent[h]++};
            }
            mkrt_publish(who ? q : p, items, 4, SEC, NULL);
            total += 4;
        }
        /* backpressure: wait for the consumers when the log is full-ish */
        mkrt_drain(rt, SEC);
    }
    mkrt_drain(rt, SEC);
    atomic_store(&stopflag, 1);
    for (int i = 0; i < 2; i++)
        mkrt__thread_join(th[i]);
    uint64_t overflow = failed_with(&f, MKRT_EOVERFLOW);
    is(cs[0].got + cs[1].got + overflow, total,
       "%s: every APPEND was consumed exactly once or overflowed (%llu consumed, %llu overflowed)", name,
       (unsigned long long)(cs[0].got + cs[1].got), (unsigned long long)overflow);
    accounting_ok(rt, name);
    mkrt_producer_close(q);
    mkrt_producer_close(p);
    stop(rt);
}

/* Defect 10: dedupe never changes results. */
static void test_dedupe_semantics(void)
{
    failures f = {0};
    mkrt_config c = config(MKRT_BACKEND_CPU, &f);
    mkrt_runtime *rt = start(&c);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item items[100];
    for (int i = 0; i < 100; i++)
        items[i] = (mkrt_item){MKRT_OP_ADD, 5, 5, 1};
    run_batch(rt, p, items, 100);
    is(cell(rt, 5), 100, "{ADD, 5, 5, 1} x 100 in one batch adds 100");
    for (int i = 0; i < 100; i++)
        items[i] = (mkrt_item){OP_ACC, 0, 6, 2};
    run_batch(rt, p, items, 100);
    is(cell(rt, 6), 200, "a non-idempotent user op runs every copy");
    for (int i = 0; i < 100; i++)
        items[i] = (mkrt_item){OP_MAX, 0, 7, 9};
    mkrt_stats before, after;
    mkrt_stats_read(rt, &before);
    run_batch(rt, p, items, 100);
    mkrt_stats_read(rt, &after);
    is(cell(rt, 7), 9, "an idempotent user op gives its result");
    is(after.pruned - before.pruned, 99, "and its 99 duplicates are pruned");
    mkrt_item interleaved[] = {{MKRT_OP_STORE, 0, 8, 1}, {MKRT_OP_STORE, 0, 8, 2}, {MKRT_OP_STORE, 0, 8, 1}};
    run_batch(rt, p, interleaved, 3);
    is(cell(rt, 8), 1, "STORE 1, STORE 2, STORE 1: the last write wins (the duplicate is not redundant)");
    mkrt_item reread[] = {{MKRT_OP_STORE, 0, 10, 5}, {MKRT_OP_ADD, 10, 11, 1}, {MKRT_OP_STORE, 0, 10, 7},
                          {MKRT_OP_ADD, 10, 11, 1}};
    run_batch(rt, p, reread, 4);
    is(cell(rt, 11), 8, "ADD 10->11 after its input changed runs again");
    mkrt_item appends[] = {{MKRT_OP_APPEND, 0, 12, 4}, {MKRT_OP_APPEND, 0, 12, 4}};
    run_batch(rt, p, appends, 2);
    uint32_t out[4];
    is(mkrt_append_log_read(rt, 12, out, 4), 2, "two identical APPENDs are two entries");
    accounting_ok(rt, "dedupe");
    mkrt_producer_close(p);
    stop(rt);
}

/* The ordering contract against a sequential reference: random batches of
 * built-ins and user ops with many duplicates, on CPU and SIM. */
static void reference_run(const mkrt_item *it, size_t n, uint64_t *cells)
{
    for (size_t i = 0; i < n; i++) {
        const mkrt_item *x = &it[i];
        switch (x->op) {
        case MKRT_OP_STORE: cells[x->out] = x->param; break;
        case MKRT_OP_ADD: cells[x->out] = cells[x->in] + x->param; break;
        case OP_ACC: cells[x->out] += x->param; break;
        case OP_MAX: cells[x->out] = cells[x->out] < x->param ? x->param : cells[x->out]; break;
        default: break;
        }
    }
}

static void test_sequential_reference(mkrt_backend_kind kind, const char *name)
{
    mkrt_config c = config(kind, NULL);
    mkrt_runtime *rt = start(&c);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    uint64_t ref[CELLS] = {0};
    unsigned seed = 99;
    static const uint32_t ops[] = {MKRT_OP_NOP, MKRT_OP_STORE, MKRT_OP_ADD, OP_ACC, OP_MAX};
    int equal = 0;
    uint64_t pruned = 0;
    for (int b = 0; b < 60; b++) {
        mkrt_item items[300];
        size_t n = 1 + (size_t)rand_r(&seed) % 300;
        for (size_t i = 0; i < n; i++) {
            if (i > 0 && rand_r(&seed) % 3 == 0) {
                items[i] = items[(size_t)rand_r(&seed) % i]; /* an exact duplicate */
                continue;
            }
            items[i] = (mkrt_item){ops[rand_r(&seed) % 5], (uint32_t)rand_r(&seed) % 12,
                                   (uint32_t)rand_r(&seed) % 12, (uint32_t)rand_r(&seed) % 50};
        }
        run_batch(rt, p, items, n);
        reference_run(items, n, ref);
        int same = 1;
        for (uint32_t h = 0; h < 12; h++)
            same &= cell(rt, h) == ref[h];
        equal += same;
    }
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    pruned = s.pruned;
    is(equal, 60, "%s: 60 random batches with duplicates equal the sequential reference", name);
    ok(pruned > 0, "%s: and dedupe pruned some (%llu)", name, (unsigned long long)pruned);
    accounting_ok(rt, name);
    mkrt_producer_close(p);
    stop(rt);
}

/* Allocation failure: mkrt_create fails cleanly at every allocation (ASan's
 * leak check sees anything left behind), and a running runtime whose
 * scratch cannot grow still runs batches correctly (unpruned, or one item
 * per layer). */
static void test_allocation_failures(void)
{
    int clean = 0, tried = 0;
    for (uint64_t k = 0; k < 400; k++) {
        mkrt_config c = config(MKRT_BACKEND_CPU, NULL);
        c.max_batch = 1024;
        c.cells = 1024;
        mkrt_runtime *rt = (mkrt_runtime *)1;
        mkrt_error err;
        count_alloc_fail_after(k);
        mkrt_status st = mkrt_create(&c, &rt, &err);
        count_alloc_fail_after(UINT64_MAX);
        if (st == MKRT_OK) {
            mkrt_destroy(rt, SEC, NULL);
            break;
        }
        tried++;
        clean += st == MKRT_ENOMEM && rt == NULL && strstr(err.message, "Fix:") != NULL;
    }
    ok(tried > 5, "mkrt_create met %d allocation failures", tried);
    is(clean, tried, "each one: MKRT_ENOMEM, no runtime, a Fix");

    mkrt_config c = config(MKRT_BACKEND_CPU, NULL);
    mkrt_runtime *rt = start(&c);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    uint64_t ref[CELLS] = {0};
    mkrt_item items[600];
    unsigned seed = 5;
    int equal = 0;
    for (int b = 0; b < 10; b++) {
        size_t n = 300 + (size_t)b * 30;
        for (size_t i = 0; i < n; i++)
            items[i] = (mkrt_item){MKRT_OP_ADD, (uint32_t)rand_r(&seed) % 40, (uint32_t)rand_r(&seed) % 40,
                                   (uint32_t)rand_r(&seed) % 9};
        count_alloc_fail_after(0); /* scratch growth fails while the batch is planned */
        run_batch(rt, p, items, n);
        count_alloc_fail_after(UINT64_MAX);
        reference_run(items, n, ref);
        int same = 1;
        for (uint32_t h = 0; h < 40; h++)
            same &= cell(rt, h) == ref[h];
        equal += same;
    }
    is(equal, 10, "batches planned without memory still give the sequential results");
    accounting_ok(rt, "no memory");
    mkrt_producer_close(p);
    stop(rt);
}


int main(void)
{
    count_alloc_install();
    test_log_completed_only();
    test_log_consume(MKRT_BACKEND_CPU, "cpu log");
    test_log_consume(MKRT_BACKEND_SIM, "sim log");
    test_dedupe_semantics();
    test_sequential_reference(MKRT_BACKEND_CPU, "cpu");
    test_sequential_reference(MKRT_BACKEND_SIM, "sim");
    test_allocation_failures();
    return done_testing();
}
