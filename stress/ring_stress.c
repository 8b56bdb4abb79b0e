/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/ring_stress.c - exactly-once and ordering under contention.
 *
 * Phase 1: one producer and one consumer on an mkrt_spsc_ring.
 * Phase 2: P producers and C consumers on an mkrt_mpmc_ring.
 * Each phase runs for half of --seconds. Producers push items that encode
 * (producer, sequence) with a checksum in random bursts, mixing push and
 * push_wait, yielding at random to shake interleavings (2 cores, more
 * threads). Consumers pop random bursts and record every item in a bitmap
 * with an atomic fetch-or: a bit already set is a double delivery. At the end
 * the producers stop, the ring is closed, the consumers drain until
 * MKRT_ECLOSED, and every bit 0..pushed-1 of every producer must be set.
 * Per-producer order is checked in every consumer (each consumer sees a
 * producer's items in increasing sequence; the single SPSC consumer sees
 * every sequence number in turn).
 *
 * Prints one "SUMMARY" line per phase (and, on a terminal, a progress line
 * every --progress seconds); exits non-zero on any violation.
 *
 *   ring_stress [--seconds N] [--producers P] [--consumers C] [--capacity POW2]
 *               [--progress S] [--help]
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "base/thread.h"
#include "mkrt/ring.h"
#include "stress_util.h"

#define MAX_THREADS 16
#define MAX_PER_PRODUCER ((uint64_t)1 << 24) /* a round ends when a producer reaches it */

/* For the progress line: the phase running, when it started, and its
 * rounds and pops so far. */
static _Atomic(const char *) progress_phase = "spsc";
static _Atomic uint64_t progress_popped, progress_rounds, progress_phase_t0;

typedef struct shared {
    bool mpmc;
    void *ring;
    uint64_t deadline;
    unsigned producers;
    _Atomic uint64_t *bitmap[MAX_THREADS];
    _Atomic uint64_t pushed[MAX_THREADS];
    _Atomic uint64_t popped;
    _Atomic uint64_t errors;
} shared;

typedef struct worker {
    shared *sh;
    unsigned id;
    unsigned seed;
} worker;

static mkrt_item make_item(unsigned p, uint64_t seq)
{
    mkrt_item it = {p, (uint32_t)seq, (uint32_t)(seq >> 32), (uint32_t)(seq * 2654435761u) ^ p};
    return it;
}

static size_t do_push(shared *sh, const mkrt_item *b, size_t n, bool wait)
{
    size_t done = 0;
    if (sh->mpmc) {
        if (wait)
            mkrt_mpmc_ring_push_wait(sh->ring, b, n, 50000000, &done);
        else
            done = mkrt_mpmc_ring_push(sh->ring, b, n);
    } else {
        if (wait)
            mkrt_spsc_ring_push_wait(sh->ring, b, n, 50000000, &done);
        else
            done = mkrt_spsc_ring_push(sh->ring, b, n);
    }
    return done;
}

static mkrt_status do_pop(shared *sh, mkrt_item *b, size_t n, size_t *done)
{
    return sh->mpmc ? mkrt_mpmc_ring_pop_wait(sh->ring, b, n, 20000000, done)
                    : mkrt_spsc_ring_pop_wait(sh->ring, b, n, 20000000, done);
}

static int producer(void *p)
{
    worker *w = p;
    shared *sh = w->sh;
    mkrt_item buf[64];
    uint64_t next = 0;
    while (stress_now_ns() < sh->deadline && next < MAX_PER_PRODUCER - 64) {
        size_t n = 1 + (size_t)(rand_r(&w->seed) % 64);
        for (size_t i = 0; i < n; i++)
            buf[i] = make_item(w->id, next + i);
        size_t done = do_push(sh, buf, n, rand_r(&w->seed) % 4 == 0);
        next += done;
        /* relaxed: a progress counter read after join. */
        atomic_store_explicit(&sh->pushed[w->id], next, memory_order_relaxed);
        if (rand_r(&w->seed) % 64 == 0)
            sched_yield();
    }
    return 0;
}

static void fail(shared *sh, const char *what, const mkrt_item *it)
{
    if (atomic_fetch_add(&sh->errors, 1) < 10)
        fprintf(stderr, "ring_stress: %s: op=%u in=%u out=%u param=%u\n", what, it->op, it->in,
                it->out, it->param);
}

static int consumer(void *p)
{
    worker *w = p;
    shared *sh = w->sh;
    mkrt_item buf[64];
    uint64_t last[MAX_THREADS];
    bool seen[MAX_THREADS] = {false};
    for (;;) {
        size_t done = 0;
        mkrt_status st = do_pop(sh, buf, 1 + (size_t)(rand_r(&w->seed) % 64), &done);
        for (size_t i = 0; i < done; i++) {
            const mkrt_item *it = &buf[i];
            unsigned prod = it->op;
            uint64_t seq = (uint64_t)it->in | ((uint64_t)it->out << 32);
            if (prod >= sh->producers || seq >= MAX_PER_PRODUCER) {
                fail(sh, "foreign item", it);
                continue;
            }
            if (it->param != ((uint32_t)(seq * 2654435761u) ^ prod))
                fail(sh, "torn item", it);
            if (seen[prod] && (sh->mpmc ? seq <= last[prod] : seq != last[prod] + 1))
                fail(sh, "per-producer order broken", it);
            if (!sh->mpmc && !seen[prod] && seq != 0)
                fail(sh, "first item is not sequence 0", it);
            seen[prod] = true;
            last[prod] = seq;
            uint64_t bit = (uint64_t)1 << (seq % 64);
            if (atomic_fetch_or_explicit(&sh->bitmap[prod][seq / 64], bit, memory_order_relaxed) & bit)
                fail(sh, "delivered twice", it);
        }
        atomic_fetch_add_explicit(&sh->popped, done, memory_order_relaxed);
        /* relaxed: a progress figure, read only for display. */
        atomic_fetch_add_explicit(&progress_popped, done, memory_order_relaxed);
        if (st == MKRT_ECLOSED)
            break;
        if (rand_r(&w->seed) % 64 == 0)
            sched_yield();
    }
    return 0;
}

typedef struct totals {
    uint64_t pushed, popped, missing, errors, left, rounds;
} totals;

/* One round: a fresh ring, producers until `deadline` or MAX_PER_PRODUCER. */
static int run_round(bool mpmc, unsigned producers, unsigned consumers, unsigned capacity,
                     uint64_t deadline, totals *tot)
{
    shared sh = {.mpmc = mpmc, .producers = producers, .deadline = deadline};
    mkrt_error err;
    sh.ring = mpmc ? (void *)mkrt_mpmc_ring_create(capacity, &err)
                   : (void *)mkrt_spsc_ring_create(capacity, &err);
    if (sh.ring == NULL) {
        fprintf(stderr, "ring_stress: %s\n", err.message);
        return 1;
    }
    for (unsigned p = 0; p < producers; p++) {
        sh.bitmap[p] = calloc(MAX_PER_PRODUCER / 64, sizeof(uint64_t));
        if (sh.bitmap[p] == NULL) {
            fprintf(stderr, "ring_stress: out of memory for the bitmap\n");
            return 1;
        }
    }
    mkrt__thread pt[MAX_THREADS], ct[MAX_THREADS];
    worker pw[MAX_THREADS], cw[MAX_THREADS];
    for (unsigned c = 0; c < consumers; c++) {
        cw[c] = (worker){&sh, c, 1000u + c};
        mkrt__thread_start(&ct[c], consumer, &cw[c]);
    }
    for (unsigned p = 0; p < producers; p++) {
        pw[p] = (worker){&sh, p, 1u + p};
        mkrt__thread_start(&pt[p], producer, &pw[p]);
    }
    for (unsigned p = 0; p < producers; p++)
        mkrt__thread_join(pt[p]);
    if (mpmc)
        mkrt_mpmc_ring_close(sh.ring);
    else
        mkrt_spsc_ring_close(sh.ring);
    for (unsigned c = 0; c < consumers; c++)
        mkrt__thread_join(ct[c]);

    uint64_t pushed = 0, missing = 0;
    for (unsigned p = 0; p < producers; p++) {
        uint64_t n = atomic_load(&sh.pushed[p]);
        pushed += n;
        for (uint64_t s = 0; s < n; s++)
            if (!(atomic_load_explicit(&sh.bitmap[p][s / 64], memory_order_relaxed) >> (s % 64) & 1))
                missing++;
        free(sh.bitmap[p]);
    }
    uint64_t popped = atomic_load(&sh.popped);
    uint64_t errors = atomic_load(&sh.errors);
    size_t left = mpmc ? mkrt_mpmc_ring_size(sh.ring) : mkrt_spsc_ring_size(sh.ring);
    if (mpmc)
        mkrt_mpmc_ring_destroy(sh.ring);
    else
        mkrt_spsc_ring_destroy(sh.ring);
    tot->pushed += pushed;
    tot->popped += popped;
    tot->missing += missing;
    tot->errors += errors;
    tot->left += left;
    tot->rounds++;
    atomic_fetch_add(&progress_rounds, 1);
    return errors == 0 && missing == 0 && popped == pushed && left == 0 ? 0 : 1;
}

static int run_phase(bool mpmc, unsigned producers, unsigned consumers, unsigned capacity,
                     double seconds)
{
    totals tot = {0};
    uint64_t t0 = stress_now_ns();
    atomic_store(&progress_phase, mpmc ? "mpmc" : "spsc");
    atomic_store(&progress_popped, 0);
    atomic_store(&progress_rounds, 0);
    atomic_store(&progress_phase_t0, t0);
    uint64_t deadline = t0 + (uint64_t)(seconds * 1e9);
    int rc = 0;
    do
        rc |= run_round(mpmc, producers, consumers, capacity, deadline, &tot);
    while (rc == 0 && stress_now_ns() < deadline);
    double elapsed = (double)(stress_now_ns() - t0) / 1e9;
    printf("SUMMARY ring_stress %-4s producers %u consumers %u capacity %u seconds %.1f rounds %llu "
           "pushed %llu popped %llu missing %llu errors %llu left %llu rate %.1fM/s %s\n",
           mpmc ? "mpmc" : "spsc", producers, consumers, capacity, elapsed,
           (unsigned long long)tot.rounds, (unsigned long long)tot.pushed,
           (unsigned long long)tot.popped, (unsigned long long)tot.missing,
           (unsigned long long)tot.errors, (unsigned long long)tot.left,
           (double)tot.popped / elapsed / 1e6, rc == 0 ? "PASS" : "FAIL");
    fflush(stdout);
    return rc;
}

static void progress(void *ctx, double elapsed)
{
    (void)ctx;
    /* relaxed: display only. */
    uint64_t popped = atomic_load_explicit(&progress_popped, memory_order_relaxed);
    double in_phase = (double)(stress_now_ns() - atomic_load(&progress_phase_t0)) / 1e9;
    printf("ring_stress: %5.1fs phase %s (%.1fs) rounds %llu popped %llu rate %.1fM/s\n", elapsed,
           atomic_load(&progress_phase), in_phase, (unsigned long long)atomic_load(&progress_rounds),
           (unsigned long long)popped, in_phase > 0 ? (double)popped / in_phase / 1e6 : 0.0);
}

int main(int argc, char **argv)
{
    unsigned vals[] = {3, 4, 2, 256, 5};
    const stress_opt opts[] = {
        {"seconds", "run for N seconds (half SPSC, half MPMC)", &vals[0]},
        {"producers", "MPMC producers, 1..16", &vals[1]},
        {"consumers", "MPMC consumers, 1..16", &vals[2]},
        {"capacity", "ring capacity, a power of two", &vals[3]},
        {"progress", "progress line every N seconds on a terminal, 0: none", &vals[4]},
        {NULL, NULL, NULL}};
    stress_getopt(argc, argv, "Exactly-once and ordering of the SPSC and MPMC rings under contention.",
                  opts);
    if (vals[1] < 1 || vals[1] > MAX_THREADS || vals[2] < 1 || vals[2] > MAX_THREADS) {
        fprintf(stderr, "ring_stress: producers and consumers must be 1..%d\n", MAX_THREADS);
        return 2;
    }
    double half = vals[0] < 2 ? 1.0 : vals[0] / 2.0;
    stress_progress pg;
    stress_progress_start(&pg, vals[4], progress, NULL);
    int rc = run_phase(false, 1, 1, vals[3], half);
    rc |= run_phase(true, vals[1], vals[2], vals[3], half);
    stress_progress_stop(&pg);
    return rc;
}
