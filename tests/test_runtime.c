/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_runtime.c - the runtime end to end on the CPU backend (AUTO:
 * on a GPU machine, or with MKRT_LIBCUDA naming the stand-in driver as
 * `make check` also runs it, the tests that take the default backend run on
 * the CUDA megakernel). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <dirent.h>
#include <time.h>

#include "../src/runtime/test_hooks.h"
#include "base/thread.h"
#include "mkrt/runtime.h"
#include "tap.h"

#define SEC 5000000000ull

static mkrt_runtime *start(mkrt_config *c)
{
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(c, &rt, &err) != MKRT_OK)
        bail_out("mkrt_create: %s", err.message);
    return rt;
}

static uint64_t cell(mkrt_runtime *rt, uint32_t h)
{
    uint64_t v = 0;
    mkrt_cell_read(rt, h, &v);
    return v;
}

static mkrt_item it(uint32_t op, uint32_t in, uint32_t out, uint32_t param)
{
    return (mkrt_item){op, in, out, param};
}

static void config_errors(void)
{
    mkrt_config c = mkrt_config_default();
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    c.ring_capacity = 1000;
    is(mkrt_create(&c, &rt, &err), MKRT_EINVAL, "a ring capacity that is not a power of two is refused");
    like(err.message, "ring_capacity 1000", "... naming the field and value");
    like(err.message, "Fix:", "... with a Fix");
    /* CUDA requested explicitly: MKRT_EDEVICE where there is no usable GPU;
     * where there is one (or the stand-in driver), a runtime that works and
     * is destroyed here, leaving nothing on the GPU for the next test. */
    c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CUDA;
    mkrt_status cst = mkrt_create(&c, &rt, &err);
    if (cst == MKRT_OK) {
        mkrt_producer *p = mkrt_producer_open(rt, NULL);
        mkrt_item st = {MKRT_OP_STORE, 0, 3, 33};
        uint64_t ticket = 0, v = 0;
        ok(p != NULL && mkrt_publish(p, &st, 1, SEC, NULL) == MKRT_OK && mkrt_fence(p, &ticket) == MKRT_OK &&
               mkrt_wait(p, ticket, SEC) == MKRT_OK && mkrt_cell_read(rt, 3, &v) == MKRT_OK && v == 33,
           "CUDA requested explicitly starts on this machine's GPU and runs a batch (%s)",
           mkrt_backend_describe(rt));
        mkrt_producer_close(p);
        is(mkrt_destroy(rt, SEC, NULL), MKRT_OK, "... and is destroyed, leaving the GPU to the next test");
        rt = NULL;
    } else {
        is(cst, MKRT_EDEVICE, "CUDA requested explicitly without a usable GPU is MKRT_EDEVICE");
        ok(rt == NULL, "... and returns no runtime");
    }
    c = mkrt_config_default();
    c.max_batch = 0;
    is(mkrt_create(&c, &rt, &err), MKRT_EINVAL, "max_batch 0 is refused");
    ok(rt == NULL, "nothing is returned on failure");
}

static mkrt_status fail_op(const mkrt_item *item, const mkrt_op_ctx *ctx)
{
    (void)ctx;
    return item->param == 13 ? MKRT_EBUDGET : MKRT_OK;
}

static _Atomic uint64_t user_runs;
static mkrt_status count_op(const mkrt_item *item, const mkrt_op_ctx *ctx)
{
    (void)item;
    (void)ctx;
    atomic_fetch_add(&user_runs, 1);
    return MKRT_OK;
}

typedef struct failures {
    _Atomic uint64_t n;
    mkrt_status last;
    uint32_t last_op;
    char msg[200];
} failures;

static void on_error(void *ctx, const mkrt_item *item, mkrt_status why, const char *message)
{
    failures *f = ctx;
    f->last = why;
    f->last_op = item->op;
    snprintf(f->msg, sizeof f->msg, "%s", message);
    atomic_fetch_add(&f->n, 1);
}

static void ordering_across_producers(void)
{
    mkrt_config c = mkrt_config_default();
    c.workers = 2;
    mkrt_runtime *rt = start(&c);
    mkrt_producer *a = mkrt_producer_open(rt, NULL), *b = mkrt_producer_open(rt, NULL);
    mkrt_cell_write(rt, 4, 10);
    mkrt__runtime_hold(rt, true);
    /* One batch: a's items, then b's (slot order after the hold). */
    mkrt_item ia[] = {it(MKRT_OP_STORE, 0, 1, 7), it(MKRT_OP_STORE, 0, 3, 1), it(MKRT_OP_ADD, 4, 5, 0)};
    mkrt_item ib[] = {it(MKRT_OP_ADD, 1, 2, 1), it(MKRT_OP_STORE, 0, 3, 2), it(MKRT_OP_STORE, 0, 4, 99)};
    mkrt_publish(a, ia, 3, SEC, NULL);
    mkrt_publish(b, ib, 3, SEC, NULL);
    mkrt__runtime_hold(rt, false);
    is(mkrt_drain(rt, SEC), MKRT_OK, "drain returns");
    is(cell(rt, 2), 8, "RAW across producers: b's ADD reads a's STORE (8)");
    is(cell(rt, 3), 2, "WAW across producers: b's STORE lands last (2)");
    ok(cell(rt, 5) == 10 && cell(rt, 4) == 99, "WAR across producers: a's read sees 10 before b writes 99");
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(s.batches == 1 && s.layers == 2 && s.global_barriers == 1, "one batch, two layers, one barrier");
    ok(s.published == 6 && s.executed == 6 && s.pruned == 0 && s.failed == 0, "published = executed + pruned + failed");
    mkrt_producer_close(a);
    mkrt_producer_close(b);
    is(mkrt_destroy(rt, SEC, NULL), MKRT_OK, "destroy");
}

static void per_producer_order(void)
{
    mkrt_config c = mkrt_config_default();
    mkrt_runtime *rt = start(&c);
    mkrt_producer *a = mkrt_producer_open(rt, NULL), *b = mkrt_producer_open(rt, NULL);
    mkrt__runtime_hold(rt, true);
    mkrt_item buf[500];
    for (uint32_t i = 0; i < 500; i++)
        buf[i] = it(MKRT_OP_APPEND, 0, 9, i);
    mkrt_publish(a, buf, 500, SEC, NULL);
    for (uint32_t i = 0; i < 500; i++)
        buf[i] = it(MKRT_OP_APPEND, 0, 9, 1000 + i);
    mkrt_publish(b, buf, 500, SEC, NULL);
    mkrt__runtime_hold(rt, false);
    mkrt_drain(rt, SEC);
    for (uint32_t round = 0; round < 4; round++) { /* and more, racing the dispatcher */
        for (uint32_t i = 0; i < 100; i++)
            buf[i] = it(MKRT_OP_APPEND, 0, 9, (round % 2 ? 500u : 1500u) + (round / 2) * 100 + i);
        mkrt_publish(round % 2 ? a : b, buf, 100, SEC, NULL);
    }
    mkrt_drain(rt, SEC);
    uint32_t log[2000];
    size_t n = mkrt_append_log_read(rt, 9, log, 2000);
    /* a published 0..699 in order, b 1000..1699: each must appear in order. */
    int order = n == 1400;
    uint32_t next_a = 0, next_b = 1000;
    for (size_t i = 0; i < n && order; i++) {
        if (log[i] < 1000)
            order = log[i] == next_a++;
        else
            order = log[i] == next_b++;
    }
    ok(order && next_a == 700 && next_b == 1700,
       "APPEND logs keep every producer's publish order (1400 appends, two producers)");
    ok(log[0] == 0 && log[499] == 499 && log[500] == 1000, "within the held batch a's items precede b's");
    mkrt_destroy(rt, SEC, NULL);
    size_t dummy;
    ok(mkrt_publish_some(a, buf, 1, 0, &dummy, NULL) == MKRT_ECLOSED && dummy == 0,
       "a producer left open across destroy is an orphan: publish says MKRT_ECLOSED");
    uint64_t t;
    is(mkrt_fence(b, &t), MKRT_ECLOSED, "... and so does fence");
    mkrt_producer_close(a); /* orphans are freed by their owner */
    mkrt_producer_close(b);
}

static void dedupe_and_errors(void)
{
    failures f;
    memset(&f, 0, sizeof f);
    mkrt_config c = mkrt_config_default();
    c.on_error = on_error;
    c.error_ctx = &f;
    c.cells = 64;
    mkrt_runtime *rt = start(&c);
    mkrt_op_desc d = {.fn = fail_op, .name = "fail_op"};
    is(mkrt_op_register(rt, 20, &d, NULL), MKRT_OK, "a user op registers");
    mkrt_error err;
    is(mkrt_op_register(rt, MKRT_OP_STORE, &d, &err), MKRT_EINVAL, "built-in op numbers are refused");
    is(mkrt_op_register(rt, MKRT_OP_MAX, &d, &err), MKRT_EINVAL, "op numbers past the table are refused");
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    is(mkrt_op_register(rt, 21, &d, &err), MKRT_EINVAL, "registration after the first producer is refused");
    mkrt__runtime_hold(rt, true);
    mkrt_item dup[10];
    for (int i = 0; i < 10; i++)
        dup[i] = it(MKRT_OP_STORE, 0, 3, 42);
    mkrt_publish(p, dup, 10, SEC, NULL);
    mkrt__runtime_hold(rt, false);
    mkrt_drain(rt, SEC);
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(s.executed == 1 && s.pruned == 9 && cell(rt, 3) == 42, "ten exact duplicates in a batch run once, nine pruned");

    mkrt_item bad[] = {it(777, 0, 1, 0)};
    mkrt_publish(p, bad, 1, SEC, NULL);
    mkrt_drain(rt, SEC);
    ok(atomic_load(&f.n) == 1 && f.last == MKRT_ENOTSUP && f.last_op == 777, "an unknown op reaches the error callback");
    like(f.msg, "Fix: register the op", "... with a Fix message");
    mkrt_item failing[] = {it(20, 0, 1, 13), it(20, 0, 2, 1)};
    mkrt_publish(p, failing, 2, SEC, NULL);
    mkrt_drain(rt, SEC);
    ok(atomic_load(&f.n) == 2 && f.last == MKRT_EBUDGET, "a failing user op reaches the error callback with its status");
    mkrt_item range[] = {it(MKRT_OP_STORE, 0, 64, 1)};
    mkrt_publish(p, range, 1, SEC, NULL);
    mkrt_drain(rt, SEC);
    ok(atomic_load(&f.n) == 3 && f.last == MKRT_EINVAL, "a handle beyond the cells is an error, not a crash");
    mkrt_stats_read(rt, &s);
    ok(s.published == s.executed + s.pruned + s.failed && s.failed == 3,
       "published %llu = executed %llu + pruned %llu + failed %llu", (unsigned long long)s.published,
       (unsigned long long)s.executed, (unsigned long long)s.pruned, (unsigned long long)s.failed);
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);

    c = mkrt_config_default();
    rt = start(&c);
    p = mkrt_producer_open(rt, NULL);
    mkrt_item two[] = {it(500, 0, 1, 5), it(501, 0, 1, 6)};
    mkrt_publish(p, two, 2, SEC, NULL);
    mkrt_drain(rt, SEC);
    mkrt_item dead[4];
    size_t nd = mkrt_dead_letters_pop(rt, dead, 4);
    ok(nd == 2 && dead[0].op == 500 && dead[1].param == 6, "without a callback, failures go to the dead-letter ring");
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

static void backpressure_and_fences(void)
{
    mkrt_config c = mkrt_config_default();
    c.ring_capacity = 2;
    mkrt_runtime *rt = start(&c);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt__runtime_hold(rt, true);
    mkrt_item five[5];
    for (uint32_t i = 0; i < 5; i++)
        five[i] = it(MKRT_OP_ADD, 7, 7, 1 + i); /* distinct: duplicates would be pruned */
    is(mkrt_try_publish(p, five, 5), 2, "a full tiny ring accepts what fits (2 of 5)");
    size_t done = 9;
    mkrt_error err;
    is(mkrt_publish_some(p, five, 5, 20000000, &done, &err), MKRT_ETIMEDOUT, "a blocking publish times out on a held full ring");
    ok(done == 0, "... having published nothing more");
    like(err.message, "0 of 5", "... and says how many went in");
    uint64_t ticket;
    mkrt_fence(p, &ticket);
    is(ticket, 2, "the fence covers the 2 published items");
    is(mkrt_wait(p, ticket, 0), MKRT_ETIMEDOUT, "waiting with no time on an unfinished fence times out");
    mkrt__runtime_hold(rt, false);
    is(mkrt_wait(p, ticket, SEC), MKRT_OK, "the fence completes once the dispatcher runs");
    is(cell(rt, 7), 3, "... after both items ran (1 + 2)");
    mkrt_item many[1000];
    for (uint32_t i = 0; i < 1000; i++)
        many[i] = it(MKRT_OP_ADD, 7, 7, 1000 + i);
    is(mkrt_publish(p, many, 1000, SEC, NULL), MKRT_OK, "1000 items through a 2-slot ring with backpressure");
    mkrt_fence(p, &ticket);
    mkrt_wait(p, ticket, SEC);
    is(cell(rt, 7), 3 + 1000 * 1000 + 999 * 1000 / 2, "... all ran, none lost");
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(s.ring_high_water <= 2 && s.ring_high_water >= 1, "ring high-water mark is tracked (%llu)",
       (unsigned long long)s.ring_high_water);
    ok(s.latency_samples > 0 && s.latency_p50_ns <= s.latency_p99_ns && s.latency_p99_ns <= s.latency_p999_ns,
       "latency percentiles are ordered (p50 %llu ns, p99 %llu ns)", (unsigned long long)s.latency_p50_ns,
       (unsigned long long)s.latency_p99_ns);
    mkrt_producer_stats ps[4];
    ok(mkrt_stats_producers(rt, ps, 4) == 1 && ps[0].published == 1002 && ps[0].completed == 1002,
       "per-producer counts");
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

static void memory_budget(void)
{
    failures f;
    memset(&f, 0, sizeof f);
    mkrt_config c = mkrt_config_default();
    c.device_memory_budget = 100;
    c.on_error = on_error;
    c.error_ctx = &f;
    mkrt_runtime *rt = start(&c);
    mkrt_op_desc small = {.fn = count_op, .frontier_bytes = 10, .scratch_bytes = 5, .name = "small"}; /* fused 30 bytes */
    mkrt_op_desc huge = {.fn = count_op, .frontier_bytes = 200, .name = "huge"};
    mkrt_op_register(rt, 30, &small, NULL);
    mkrt_op_register(rt, 31, &huge, NULL);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt__runtime_hold(rt, true);
    mkrt_item ten[11];
    for (uint32_t i = 0; i < 10; i++)
        ten[i] = it(30, 100 + i, 200 + i, 0); /* independent */
    ten[10] = it(31, 300, 301, 0);
    mkrt_publish(p, ten, 11, SEC, NULL);
    mkrt__runtime_hold(rt, false);
    mkrt_drain(rt, SEC);
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(s.layers == 4 && atomic_load(&user_runs) == 10,
       "a layer over the memory budget is split (10 x 30 bytes in 100: 4 chunks)");
    ok(atomic_load(&f.n) == 1 && f.last == MKRT_EBUDGET && f.last_op == 31,
       "an item over the budget on its own fails with MKRT_EBUDGET");
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}

typedef struct loader {
    mkrt_runtime *rt;
    mkrt_producer *p;
    uint64_t accepted;
    uint32_t id;
} loader;

static int load_main(void *arg)
{
    loader *l = arg;
    mkrt_item buf[64];
    uint32_t seq = 0;
    for (;;) {
        for (int i = 0; i < 64; i++)
            buf[i] = it(40, l->id, l->id, seq++); /* distinct across loaders */
        size_t done = 0;
        mkrt_status st = mkrt_publish_some(l->p, buf, 64, SEC, &done, NULL);
        l->accepted += done;
        if (st == MKRT_ECLOSED)
            return 0;
    }
}

static void destroy_under_load(void)
{
    failures f;
    memset(&f, 0, sizeof f);
    atomic_store(&user_runs, 0);
    mkrt_config c = mkrt_config_default();
    c.on_error = on_error;
    c.error_ctx = &f;
    mkrt_runtime *rt = start(&c);
    mkrt_op_desc d = {.fn = count_op, .name = "count"};
    mkrt_op_register(rt, 40, &d, NULL);
    loader l[3];
    mkrt__thread th[3];
    for (int i = 0; i < 3; i++) {
        l[i] = (loader){rt, mkrt_producer_open(rt, NULL), 0, (uint32_t)i};
        mkrt__thread_start(&th[i], load_main, &l[i]);
    }
    struct timespec ts = {0, 100000000};
    nanosleep(&ts, NULL);
    is(mkrt_destroy(rt, 10 * SEC, NULL), MKRT_OK, "destroy while three producers publish");
    uint64_t accepted = 0;
    for (int i = 0; i < 3; i++) {
        mkrt__thread_join(th[i]);
        accepted += l[i].accepted;
        mkrt_producer_close(l[i].p); /* orphans after destroy: their owner frees them */
    }
    ok(accepted > 0 && accepted == atomic_load(&user_runs) + atomic_load(&f.n),
       "every accepted item ran or failed (%llu accepted, %llu ran)", (unsigned long long)accepted,
       (unsigned long long)atomic_load(&user_runs));
}

static void destroy_timeout(void)
{
    failures f;
    memset(&f, 0, sizeof f);
    mkrt_config c = mkrt_config_default();
    c.on_error = on_error;
    c.error_ctx = &f;
    mkrt_runtime *rt = start(&c);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt__runtime_hold(rt, true);
    mkrt_item five[5];
    for (uint32_t i = 0; i < 5; i++)
        five[i] = it(MKRT_OP_STORE, 0, i, i);
    mkrt_publish(p, five, 5, SEC, NULL);
    mkrt_error err;
    is(mkrt_destroy(rt, 50000000, &err), MKRT_ETIMEDOUT, "destroy that cannot finish in time says so");
    ok(atomic_load(&f.n) == 5 && f.last == MKRT_ETIMEDOUT, "... and the 5 waiting items went to the error path");
    like(err.message, "Fix:", "... with a Fix message");
    mkrt_producer_close(p);
}

/* How many of this process's threads other than the caller are not
 * sleeping in the kernel (state 'S' in /proc/self/task/TID/stat), or -1
 * when /proc cannot be read. */
static int threads_awake(void)
{
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        return -1;
    int awake = 0;
    pid_t self = (pid_t)syscall(SYS_gettid);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == self)
            continue;
        char path[300], buf[256];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue; /* the thread exited */
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        const char *close_paren = strrchr(buf, ')');
        if (close_paren != NULL && close_paren[1] == ' ' && close_paren[2] != 'S')
            awake++;
    }
    closedir(d);
    return awake;
}

static void idle_and_producers(void)
{
    mkrt_config c = mkrt_config_default();
    c.max_producers = 2;
    mkrt_runtime *rt = start(&c);
    mkrt_producer *a = mkrt_producer_open(rt, NULL), *b = mkrt_producer_open(rt, NULL);
    mkrt_error err;
    ok(mkrt_producer_open(rt, &err) == NULL && err.status == MKRT_EAGAIN, "a third producer over the limit is MKRT_EAGAIN");
    mkrt_item one = it(MKRT_OP_STORE, 0, 1, 1);
    mkrt_publish(a, &one, 1, SEC, NULL);
    mkrt_producer_close(a);
    mkrt_producer *c3 = NULL;
    for (int i = 0; i < 200 && c3 == NULL; i++) {
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
        c3 = mkrt_producer_open(rt, NULL);
    }
    ok(c3 != NULL, "a closed producer's slot is reused once its items completed");
    ok(cell(rt, 1) == 1, "... and the closed producer's item ran");
    /* An idle runtime sleeps: its threads (dispatcher, workers) settle into
     * kernel sleeps and stay there. A thread that spins would be awake at
     * nearly every look; a sanitizer's or liburcu's housekeeping thread
     * wakes now and then, so a few looks may see one awake. */
    int awake = -1;
    for (int i = 0; i < 2000 && awake != 0; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        awake = threads_awake();
    }
    int stayed = 0;
    for (int i = 0; i < 50 && awake == 0; i++) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
        stayed += threads_awake() == 0;
    }
    ok(awake == 0 && stayed >= 40, "an idle runtime's threads all sleep in the kernel, and stay asleep "
                                   "(awake %d, all asleep in %d of 50 looks)", awake, stayed);
    ok(strncmp(mkrt_backend_describe(rt), "cpu", 3) == 0 || strncmp(mkrt_backend_describe(rt), "cuda", 4) == 0,
       "the backend describes itself (the CPU, or AUTO's GPU): %s", mkrt_backend_describe(rt));
    mkrt_producer_close(b);
    mkrt_producer_close(c3);
    mkrt_destroy(rt, SEC, NULL);
    ok(mkrt_publish(NULL, &one, 1, 0, &err) == MKRT_EINVAL, "publishing through a NULL producer is MKRT_EINVAL");
}

/* mkrt_cells_read: a range after a wait sees every item, and a range that
 * does not lie below the cells is refused without writing anything. */
static void bulk_cell_reads(void)
{
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CPU;
    c.workers = 2;
    c.cells = 64;
    mkrt_runtime *rt = start(&c);
    mkrt_error err;
    mkrt_producer *p = mkrt_producer_open(rt, &err);
    mkrt_item items[64];
    for (uint32_t h = 0; h < 64; h++)
        items[h] = it(MKRT_OP_STORE, 0, h, 1000 + h);
    uint64_t ticket = 0;
    ok(mkrt_publish(p, items, 64, SEC, &err) == MKRT_OK && mkrt_fence(p, &ticket) == MKRT_OK
           && mkrt_wait(p, ticket, SEC) == MKRT_OK, "64 stores published and waited for");
    uint64_t out[66];
    for (int i = 0; i < 66; i++)
        out[i] = 7;
    ok(mkrt_cells_read(rt, 0, 64, out) == MKRT_OK, "all 64 cells read at once");
    int same = 1;
    for (uint32_t h = 0; h < 64; h++)
        same &= out[h] == 1000 + h && out[h] == cell(rt, h);
    ok(same, "each value is the store's, as mkrt_cell_read sees it");
    ok(mkrt_cells_read(rt, 60, 4, out) == MKRT_OK && out[0] == 1060 && out[3] == 1063,
       "a range ending at the last cell is read");
    out[0] = 7;
    ok(mkrt_cells_read(rt, 61, 4, out) == MKRT_EINVAL && out[0] == 7,
       "a range past the last cell is refused and writes nothing");
    ok(mkrt_cells_read(rt, 65, 0, out) == MKRT_EINVAL, "a first cell past the end is refused");
    ok(mkrt_cells_read(rt, 64, 0, NULL) == MKRT_OK, "an empty range at the end reads nothing");
    ok(mkrt_cells_read(rt, 1, SIZE_MAX, out) == MKRT_EINVAL, "a count that would wrap is refused");
    ok(mkrt_cells_read(rt, 0, 1, NULL) == MKRT_EINVAL, "a NULL out with a count is refused");
    ok(mkrt_cells_read(NULL, 0, 1, out) == MKRT_EINVAL, "a NULL runtime is refused");
    mkrt_producer_close(p);
    mkrt_destroy(rt, SEC, NULL);
}


/* While the dispatcher thread dozes (parked without its token), a thread
 * waiting in mkrt_drain or mkrt_wait runs the pending batches itself; the
 * ordering contract and per-producer order hold as they do for the
 * dispatcher (the checks of ordering_across_producers and
 * per_producer_order). */
static void helping_waits(void)
{
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CPU; /* waiters help on the CPU pool only */
    c.workers = 2;
    mkrt_runtime *rt = start(&c);
    mkrt_producer *a = mkrt_producer_open(rt, NULL), *b = mkrt_producer_open(rt, NULL);
    mkrt_cell_write(rt, 4, 10);
    mkrt__runtime_doze(rt, true);
    mkrt_item ia[] = {it(MKRT_OP_STORE, 0, 1, 7), it(MKRT_OP_STORE, 0, 3, 1), it(MKRT_OP_ADD, 4, 5, 0)};
    mkrt_item ib[] = {it(MKRT_OP_ADD, 1, 2, 1), it(MKRT_OP_STORE, 0, 3, 2), it(MKRT_OP_STORE, 0, 4, 99)};
    mkrt_publish(a, ia, 3, SEC, NULL);
    is(mkrt_drain(rt, SEC), MKRT_OK, "dispatcher dozing: mkrt_drain runs a's batch itself");
    mkrt_publish(b, ib, 3, SEC, NULL);
    uint64_t t;
    mkrt_fence(b, &t);
    is(mkrt_wait(b, t, SEC), MKRT_OK, "... and mkrt_wait runs b's");
    ok(mkrt__test_parked(rt) && mkrt__test_dozing(rt), "... while the dispatcher stayed parked");
    is(cell(rt, 2), 8, "RAW across producers: b's ADD reads a's STORE (8)");
    is(cell(rt, 3), 2, "WAW across producers: b's STORE lands last (2)");
    ok(cell(rt, 5) == 10 && cell(rt, 4) == 99, "WAR across producers: a's read sees 10 before b writes 99");
    /* Per-producer order: two producers' APPENDs, helped by one waiter. */
    mkrt_item buf[300];
    for (uint32_t i = 0; i < 300; i++)
        buf[i] = it(MKRT_OP_APPEND, 0, 9, i);
    mkrt_publish(a, buf, 300, SEC, NULL);
    for (uint32_t i = 0; i < 300; i++)
        buf[i] = it(MKRT_OP_APPEND, 0, 9, 1000 + i);
    mkrt_publish(b, buf, 300, SEC, NULL);
    is(mkrt_drain(rt, SEC), MKRT_OK, "600 APPENDs drained by the waiter");
    uint32_t log[600];
    size_t n = mkrt_append_log_read(rt, 9, log, 600);
    uint32_t next_a = 0, next_b = 1000;
    int order = n == 600;
    for (size_t i = 0; i < n && order; i++)
        order = log[i] < 1000 ? log[i] == next_a++ : log[i] == next_b++;
    ok(order && next_a == 300 && next_b == 1300, "... every producer's publish order is kept");
    mkrt_stats s;
    mkrt_stats_read(rt, &s);
    ok(s.published == 606 && s.executed == 606 && mkrt__test_parked(rt),
       "published = executed (606), the dispatcher still parked");
    /* A producer closed while only waiters dispatch: they leave freeing it
     * to the dispatcher thread (which reads the rings without the token). */
    mkrt_publish(a, ia, 1, SEC, NULL);
    mkrt_producer_close(a);
    mkrt_publish(b, ia, 1, SEC, NULL);
    mkrt_fence(b, &t);
    is(mkrt_wait(b, t, SEC), MKRT_OK, "a waiter runs a closed producer's last item with its own");
    mkrt_stats_read(rt, &s);
    ok(s.producers_open == 2 && s.executed + s.pruned == 608, "... and leaves the closed producer to the dispatcher (%u open)",
       s.producers_open);
    mkrt__runtime_doze(rt, false);
    for (int i = 0; i < 5000 && (mkrt_stats_read(rt, &s), s.producers_open) != 1; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    is(s.producers_open, 1, "awake again, the dispatcher retires it");
    mkrt_publish(b, ia, 1, SEC, NULL);
    is(mkrt_drain(rt, SEC), MKRT_OK, "... and runs batches (or a waiter does)");
    mkrt_producer_close(b);
    is(mkrt_destroy(rt, SEC, NULL), MKRT_OK, "destroy");
}

int main(void)
{
    config_errors();
    ordering_across_producers();
    per_producer_order();
    dedupe_and_errors();
    backpressure_and_fences();
    memory_budget();
    destroy_under_load();
    destroy_timeout();
    idle_and_producers();
    bulk_cell_reads();
    helping_waits();
    return done_testing();
}
