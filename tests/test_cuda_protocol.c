/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_cuda_protocol.c - the megakernel protocol without a GPU: the
 * real host code (src/backend/mk_host.c) drives a host thread that plays
 * the device over the same control block and descriptor layout. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/backend/mk_host.h"
#include "../src/backend/mk_sim.h"
#include "../base/waitq.h"
#include "mkrt/layer.h"
#include "mkrt/ring.h"
#include "tap.h"

#define CELLS 256
#define CAP 4096

typedef struct staged {
    mkrt_item exec[CAP];
    uint32_t offsets[CAP + 1];
    uint32_t layers, count;
} staged;

/* Layer a batch and gather it, as the dispatcher does. */
static void prepare(mkrt_layer_scratch *ls, const mkrt_item *b, size_t n, staged *out)
{
    mkrt_layer_plan p;
    mkrt_layer_batch(ls, b, n, &p, NULL);
    for (size_t k = 0; k < n; k++)
        out->exec[k] = b[p.layer_items[k]];
    memcpy(out->offsets, p.layer_offsets, (p.layer_count + 1) * sizeof(uint32_t));
    out->layers = (uint32_t)p.layer_count;
    out->count = (uint32_t)n;
}

static void reference(uint64_t *cells, const mkrt_item *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        mkrt__ops_run_builtin(b[i].op, b[i].in, b[i].out, b[i].param, cells, CELLS);
}

static void random_batches(void)
{
    mkrt__mk_sim sim;
    mkrt__mk_sim_start(&sim, CELLS, CAP, 4, 1024, 0, 0, NULL);
    mkrt__mk_host h;
    mkrt__mk_host_init(&h, sim.ctl, &mkrt__mk_sim_ops, &sim, sim.capacity);
    mkrt_layer_scratch *ls = mkrt_layer_scratch_create(NULL);
    static uint64_t want[CELLS];
    static mkrt_item batch[CAP];
    static staged st[2];
    unsigned seed = 17;
    int bad = 0;
    uint64_t prev = 0;
    for (int r = 0; r < 2000 && !bad; r++) {
        size_t n = 1 + (size_t)(rand_r(&seed) % (r % 50 == 0 ? CAP : 200));
        for (size_t i = 0; i < n; i++)
            batch[i] = (mkrt_item){1 + (uint32_t)rand_r(&seed) % 2, (uint32_t)rand_r(&seed) % CELLS,
                                   (uint32_t)rand_r(&seed) % CELLS, (uint32_t)rand_r(&seed)};
        reference(want, batch, n);
        staged *s = &st[r & 1];
        prepare(ls, batch, n, s);
        uint64_t seq;
        /* Stage batch r while r-1 may still run: the double buffer. */
        if (mkrt__mk_stage(&h, s->exec, s->count, s->offsets, NULL, s->layers, &seq, NULL) != MKRT_OK)
            bad = 1;
        if (prev && mkrt__mk_wait(&h, prev, 5000000000ull, NULL) != MKRT_OK)
            bad = 1;
        mkrt__mk_ring(&h, NULL);
        prev = seq;
    }
    if (mkrt__mk_wait(&h, prev, 5000000000ull, NULL) != MKRT_OK)
        bad = 1;
    ok(!bad && memcmp(want, sim.cells, sizeof want) == 0,
       "2000 random batches through the host protocol give the same cells as sequential execution");
    is(atomic_load(&sim.ctl->done), 2000, "done reached the last sequence number");
    mkrt_error err;
    uint64_t seq;
    mkrt__mk_stage(&h, st[0].exec, 1, st[0].offsets, NULL, 1, &seq, NULL);
    mkrt__mk_ring(&h, NULL);
    mkrt__mk_wait(&h, seq, 5000000000ull, NULL);
    staged *s = &st[0];
    mkrt__mk_stage(&h, s->exec, 1, s->offsets, NULL, 1, &seq, NULL);
    is(mkrt__mk_stage(&h, s->exec, 1, s->offsets, NULL, 1, &seq, &err), MKRT_OK, "two batches may be staged ahead");
    is(mkrt__mk_stage(&h, s->exec, 1, s->offsets, NULL, 1, &seq, &err), MKRT_ESTATE,
       "a third would overwrite a buffer in use: refused");
    mkrt__mk_ring(&h, NULL);
    mkrt__mk_wait(&h, seq - 1, 5000000000ull, NULL);
    mkrt_layer_scratch_destroy(ls);
    mkrt__mk_sim_stop(&sim);
}

static void appends_in_order(void)
{
    mkrt__mk_sim sim;
    mkrt__mk_sim_start(&sim, CELLS, CAP, 3, 1024, 0, 0, NULL);
    mkrt__mk_host h;
    mkrt__mk_host_init(&h, sim.ctl, &mkrt__mk_sim_ops, &sim, sim.capacity);
    mkrt_layer_scratch *ls = mkrt_layer_scratch_create(NULL);
    static mkrt_item b[300];
    static staged st;
    for (uint32_t i = 0; i < 300; i++)
        b[i] = (mkrt_item){3, 0, 5 + i % 3, i};
    prepare(ls, b, 300, &st);
    uint64_t seq;
    mkrt__mk_stage(&h, st.exec, st.count, st.offsets, NULL, st.layers, &seq, NULL);
    mkrt__mk_ring(&h, NULL);
    mkrt__mk_wait(&h, seq, 5000000000ull, NULL);
    int order = atomic_load(&sim.ctl->append_len) == 300;
    uint32_t last[3] = {0, 0, 0};
    bool seen[3] = {false, false, false};
    for (uint64_t i = 0; i < 300 && order; i++) {
        uint32_t hnd = sim.append_log[2 * i] - 5, v = sim.append_log[2 * i + 1];
        order = hnd < 3 && (!seen[hnd] || v > last[hnd]);
        seen[hnd] = true;
        last[hnd] = v;
    }
    ok(order, "APPENDs to one handle land in publish order (three interleaved handles)");
    mkrt_layer_scratch_destroy(ls);
    mkrt__mk_sim_stop(&sim);
}

#define MAX_TIDS 256

/* Thread ids of this process (entries of /proc/self/task); -1 when /proc
 * cannot be read. */
static int list_threads(long *tids)
{
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL && n < MAX_TIDS;)
        if (e->d_name[0] != '.')
            tids[n++] = strtol(e->d_name, NULL, 10);
    closedir(d);
    return n;
}

static void pause_1ms(void)
{
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
}

/* A thread that is in the process now but not in before[0..n): the one a
 * just-started simulated kernel runs on; 0 when none. */
static long new_thread(const long *before, int n)
{
    long now[MAX_TIDS];
    int m = list_threads(now);
    for (int i = 0; i < m; i++) {
        bool seen = false;
        for (int j = 0; j < n && !seen; j++)
            seen = now[i] == before[j];
        if (!seen)
            return now[i];
    }
    return 0;
}

/* Whether thread `tid` is no longer in the process. */
static bool thread_gone_now(long tid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld", tid);
    DIR *d = opendir(path);
    if (d == NULL)
        return true;
    closedir(d);
    return false;
}

/* Polls (bounded: 10 s in 1 ms steps) until thread `tid` has left the
 * process: a joined thread may linger in /proc for a moment. */
static bool thread_gone(long tid)
{
    for (int i = 0; i < 10000; i++) {
        if (thread_gone_now(tid))
            return true;
        pause_1ms();
    }
    return false;
}

static void watchdog_and_errors(void)
{
    long before[MAX_TIDS];
    int n_before = list_threads(before);
    mkrt__mk_sim sim;
    mkrt__mk_sim_start(&sim, CELLS, CAP, 2, 16, 0, 0, NULL);
    long sim_tid = n_before < 0 ? 0 : new_thread(before, n_before);
    sim.hang_batch = 2;
    sim.hang_after_layer = 1;
    mkrt__mk_host h;
    mkrt__mk_host_init(&h, sim.ctl, &mkrt__mk_sim_ops, &sim, sim.capacity);
    mkrt_item chain[3] = {{1, 0, 1, 5}, {2, 1, 2, 1}, {2, 2, 3, 1}}; /* 3 layers */
    uint32_t off[4] = {0, 1, 2, 3};
    uint64_t seq;
    mkrt__mk_stage(&h, chain, 3, off, NULL, 3, &seq, NULL);
    mkrt__mk_ring(&h, NULL);
    is(mkrt__mk_wait(&h, seq, 5000000000ull, NULL), MKRT_OK, "batch 1 completes");
    mkrt__mk_stage(&h, chain, 3, off, NULL, 3, &seq, NULL);
    mkrt__mk_ring(&h, NULL);
    mkrt_error err;
    is(mkrt__mk_wait(&h, seq, 50000000, &err), MKRT_ETIMEDOUT, "a hung batch trips the watchdog");
    ok(atomic_load(&sim.ctl->done) < seq, "... and the batch really had not completed");
    like(err.message, "batch 2 not done after", "... naming the batch");
    like(err.message, "block 0 at layer 0 after 1 items", "... and where the blocks stopped");
    like(err.message, "Fix:", "... with a Fix");
    is(mkrt__mk_stage(&h, chain, 3, off, NULL, 3, &seq, &err), MKRT_EDEVICE, "a failed device is not fed again");
    like(err.message, "watchdog", "... and says why");
    if (n_before < 0) {
        mkrt__mk_sim_stop(&sim);
        skip(2, "/proc/self/task is not readable here");
    } else {
        /* The trip failed the engine, which stops the device before
         * anyone else takes its cells: shutdown frees the hung loop. */
        ok(sim_tid != 0 && thread_gone(sim_tid),
           "the tripped watchdog stopped the hung simulated kernel (its thread, tid %ld, left the process)",
           sim_tid);
        ok(!atomic_load(&sim.launch), "... and no launch of it is left running or queued");
        mkrt__mk_sim_stop(&sim);
    }

    mkrt__mk_sim_start(&sim, CELLS, CAP, 2, 16, 0, 0, NULL);
    mkrt__mk_host_init(&h, sim.ctl, &mkrt__mk_sim_ops, &sim, sim.capacity);
    /* A batch larger than a staging buffer is refused before anything is
     * copied or rung, in items and in layers. */
    static mkrt_item many[CAP + 1];
    static uint32_t many_off[CAP + 2];
    is(mkrt__mk_stage(&h, many, CAP + 1, many_off, NULL, 1, &seq, &err), MKRT_EINVAL,
       "a batch of capacity + 1 items is refused");
    like(err.message, "exceeds the 4096-item device buffer. Fix: split the batch", "... saying so, with a Fix");
    is(mkrt__mk_stage(&h, many, 1, many_off, NULL, CAP + 1, &seq, &err), MKRT_EINVAL,
       "a batch of capacity + 1 layers is refused");
    mkrt_item bad[2] = {{1, 0, 1, 5}, {77, 0, 1, 0}};
    uint32_t off2[3] = {0, 1, 2};
    mkrt__mk_stage(&h, bad, 2, off2, NULL, 2, &seq, NULL);
    mkrt__mk_ring(&h, NULL);
    is(mkrt__mk_wait(&h, seq, 5000000000ull, &err), MKRT_EDEVICE, "a device-side error becomes MKRT_EDEVICE");
    like(err.message, "error 1 (unknown op) at item 1 of batch 1", "... with the item and the batch");
    mkrt__mk_sim_stop(&sim);
}

/* The simulated kernel leaves after idle_ns without a doorbell, and after
 * resident_ns at a batch boundary while busy; the host relaunches it (the
 * parking handshake of protocol.h), and no batch is lost either way. */
static void leaving_and_relaunch(void)
{
    mkrt__mk_sim sim;
    mkrt__mk_sim_start(&sim, CELLS, CAP, 2, 16, 1000000, 0, NULL); /* idle 1 ms */
    mkrt__mk_host h;
    mkrt__mk_host_init(&h, sim.ctl, &mkrt__mk_sim_ops, &sim, sim.capacity);
    mkrt_item one[1] = {{1, 0, 5, 0}};
    uint32_t off[2] = {0, 1};
    uint64_t seq;
    int good = 1;
    for (uint32_t k = 1; k <= 10; k++) {
        one[0].param = k;
        good &= mkrt__mk_stage(&h, one, 1, off, NULL, 1, &seq, NULL) == MKRT_OK &&
                mkrt__mk_ring(&h, NULL) == MKRT_OK && mkrt__mk_wait(&h, seq, 5000000000ull, NULL) == MKRT_OK &&
                sim.cells[5] == k;
        for (int i = 0; i < 400 && atomic_load(&sim.ctl->parked) == 0; i++) {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
        good &= atomic_load(&sim.ctl->parked) == 1;
    }
    ok(good && h.relaunches >= 9, "the simulated kernel left after each idle period and each doorbell "
                                  "relaunched it (%llu relaunches), every batch right",
       (unsigned long long)h.relaunches);
    mkrt__mk_sim_stop(&sim);

    mkrt__mk_sim_start(&sim, CELLS, CAP, 2, 16, 0, 20000, NULL); /* resident 20 us */
    mkrt__mk_host_init(&h, sim.ctl, &mkrt__mk_sim_ops, &sim, sim.capacity);
    good = 1;
    for (uint32_t k = 1; k <= 2000 && good; k++) {
        one[0].param = k;
        good &= mkrt__mk_stage(&h, one, 1, off, NULL, 1, &seq, NULL) == MKRT_OK &&
                mkrt__mk_ring(&h, NULL) == MKRT_OK && mkrt__mk_wait(&h, seq, 5000000000ull, NULL) == MKRT_OK &&
                sim.cells[5] == k;
    }
    /* The plan's topology reaches the kernel: a batch whose layers all fit
     * one block is marked for block 0 alone (no grid barrier). */
    mkrt_item two[2] = {{1, 0, 6, 1}, {2, 6, 7, 1}};
    uint32_t off2[3] = {0, 1, 2}, narrow[2] = {1, 1}, wide[2] = {1, 2};
    int marks = mkrt__mk_stage(&h, two, 2, off2, narrow, 2, &seq, NULL) == MKRT_OK &&
                h.ctl->desc[seq & 1].one_block == 1 && mkrt__mk_ring(&h, NULL) == MKRT_OK &&
                mkrt__mk_wait(&h, seq, 5000000000ull, NULL) == MKRT_OK && sim.cells[7] == 2;
    marks &= mkrt__mk_stage(&h, two, 2, off2, wide, 2, &seq, NULL) == MKRT_OK && h.ctl->desc[seq & 1].one_block == 0 &&
             mkrt__mk_ring(&h, NULL) == MKRT_OK && mkrt__mk_wait(&h, seq, 5000000000ull, NULL) == MKRT_OK;
    marks &= mkrt__mk_stage(&h, two, 2, off2, NULL, 2, &seq, NULL) == MKRT_OK && h.ctl->desc[seq & 1].one_block == 0 &&
             mkrt__mk_ring(&h, NULL) == MKRT_OK && mkrt__mk_wait(&h, seq, 5000000000ull, NULL) == MKRT_OK;
    ok(marks, "a batch whose every layer the plan gives one block is marked one_block (block 0 runs it "
              "alone); one with a wider layer, or without a plan, is not");
    ok(good && h.relaunches > 0, "while busy it left at batch boundaries after resident_ns and was relaunched "
                                 "(%llu times in 2000 batches), every batch right",
       (unsigned long long)h.relaunches);
    mkrt__mk_sim_stop(&sim);
}

/* The parking handshake's window: the loop said it parked, then saw the
 * doorbell and ran on, so the host relaunches a kernel that still runs.
 * The relaunch is queued behind it (the host does not wait for the old
 * loop): a hung batch still trips the watchdog, and a queued launch runs
 * the loop again when it leaves. */
static void relaunch_while_running(void)
{
    mkrt__mk_sim sim;
    mkrt__mk_sim_start(&sim, CELLS, CAP, 2, 16, 0, 0, NULL); /* never leaves on its own */
    sim.hang_batch = 1;
    sim.hang_after_layer = 1;
    mkrt__mk_host h;
    mkrt__mk_host_init(&h, sim.ctl, &mkrt__mk_sim_ops, &sim, sim.capacity);
    mkrt_item chain[3] = {{1, 0, 1, 5}, {2, 1, 2, 1}, {2, 2, 3, 1}};
    uint32_t off[4] = {0, 1, 2, 3};
    uint64_t seq;
    mkrt__mk_stage(&h, chain, 3, off, NULL, 3, &seq, NULL);
    mkrt__mk_ring(&h, NULL);
    atomic_store(&sim.ctl->parked, 1); /* the loop's store before it saw the doorbell */
    mkrt_error err;
    is(mkrt__mk_wait(&h, seq, 50000000, &err), MKRT_ETIMEDOUT,
       "a relaunch of a loop that still runs a hung batch is queued: the watchdog trips");
    ok(h.relaunches == 1 && atomic_load(&sim.ctl->done) < seq, "... after one relaunch (%llu), the batch not done",
       (unsigned long long)h.relaunches);
    mkrt__mk_sim_stop(&sim); /* returns: shutdown ends the hung loop, and its queued launch with it */

    mkrt__mk_sim_start(&sim, CELLS, CAP, 2, 16, 1000000, 0, NULL); /* idle 1 ms */
    mkrt__mk_host_init(&h, sim.ctl, &mkrt__mk_sim_ops, &sim, sim.capacity);
    mkrt_item one[1] = {{1, 0, 5, 0}};
    uint32_t off1[2] = {0, 1};
    int good = 1;
    for (uint32_t k = 1; k <= 6; k++) {
        one[0].param = k;
        good &= mkrt__mk_stage(&h, one, 1, off1, NULL, 1, &seq, NULL) == MKRT_OK &&
                mkrt__mk_ring(&h, NULL) == MKRT_OK;
        if (k % 2)
            atomic_store(&sim.ctl->parked, 1); /* the window again: a queued launch */
        good &= mkrt__mk_wait(&h, seq, 5000000000ull, NULL) == MKRT_OK && sim.cells[5] == k;
        struct timespec ts = {0, 3000000}; /* the loop leaves after 1 ms idle; a queued launch runs it again */
        nanosleep(&ts, NULL);
    }
    ok(good && h.relaunches >= 3, "queued launches run the loop again when it leaves; every batch right "
                                  "(%llu relaunches)", (unsigned long long)h.relaunches);
    mkrt__mk_sim_stop(&sim);
}

int main(void)
{
    random_batches();
    appends_in_order();
    watchdog_and_errors();
    leaving_and_relaunch();
    relaunch_while_running();
    return done_testing();
}
