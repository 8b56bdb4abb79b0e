/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/soak/soak_work.c - the harness of the emit, commute and plugin
 * workloads (soak_work.h). */
#include <string.h>

#include "soak_work.h"

bool work_infra(const work *w, mkrt_status why)
{
    return why == MKRT_ETIMEDOUT || (why == MKRT_EDEVICE && w->plan.backend != MKRT_BACKEND_CPU);
}

uint64_t work_published(const work *w)
{
    uint64_t n = 0;
    for (unsigned s = 0; s < w->producers; s++)
        n += w->published[s];
    return n;
}

bool work_create(work *w)
{
    if (w->plan.backend == MKRT_BACKEND_CUDA)
        soak_cuda_env((opt.faults & F_DEVICE) && rnd_below(&w->plan.rng, 3) == 0, &w->plan.rng);
    bool skip;
    w->rt = soak_create(&w->plan, &w->cfg, &skip);
    if (w->rt != NULL)
        soak_live_set(w->rt);
    return w->rt != NULL;
}

/* The gate: a race round closes it before mkrt_destroy; calls that take
 * the runtime itself (open, cell reads) run inside it. */
static bool gate_in(work *w)
{
    /* seq_cst (both sides): the store-load pairing with the close. */
    atomic_fetch_add(&w->users, 1);
    if (atomic_load(&w->gate_closed)) {
        atomic_fetch_sub(&w->users, 1);
        return false;
    }
    return true;
}

static void gate_out(work *w)
{
    atomic_fetch_sub(&w->users, 1);
}

typedef struct prod_arg {
    work *w;
    unsigned slot;
} prod_arg;

static prod_arg args[MAX_PRODUCERS];

static int producer_main(void *arg)
{
    prod_arg *a = arg;
    work *w = a->w;
    unsigned slot = a->slot;
    uint64_t *rng = &w->rng[slot];
    if (!gate_in(w))
        return 0;
    mkrt_producer *p = soak_open(w->rt, &w->stop);
    gate_out(w);
    if (p == NULL)
        return 0;
    mkrt_item buf[WORK_BATCH];
    uint64_t window = 0;
    for (unsigned b = 0; !atomic_load(&w->stop); b++) {
        size_t n = w->ops->gen(w, slot, rng, buf);
        if (window == 0)
            window = stress_now_ns();
        size_t done = 0;
        bool open = true;
        while (done < n) {
            size_t k = 0;
            mkrt_error err;
            mkrt_status st = mkrt_publish_some(p, buf + done, n - done, 20000000ull, &k, &err);
            if (k > 0) {
                w->ops->book(w, slot, buf + done, k);
                w->published[slot] += k;
                /* relaxed: a progress counter. */
                atomic_fetch_add_explicit(&g_items, k, memory_order_relaxed);
            }
            done += k;
            if (st == MKRT_OK)
                break;
            if (st == MKRT_ETIMEDOUT) { /* backpressure: publish the rest */
                atomic_fetch_add(&g_backpressure, 1);
                continue;
            }
            if (st != MKRT_ECLOSED || !w->plan.race)
                soak_error("mkrt_publish_some: %s: %s", mkrt_status_name(st), err.message);
            open = false;
            break;
        }
        if (!open)
            break;
        if (b % 8 == 7) {
            uint64_t t;
            mkrt_status st = mkrt_fence(p, &t);
            if (st == MKRT_OK)
                st = mkrt_wait(p, t, LONG_NS);
            if (st == MKRT_OK) {
                soak_latency_record(stress_now_ns() - window);
                window = 0;
                if (w->ops->after_wait != NULL && gate_in(w)) {
                    w->ops->after_wait(w, slot);
                    atomic_fetch_add(&g_mid_checks, 1);
                    gate_out(w);
                }
            } else if (st == MKRT_ECLOSED && w->plan.race) {
                break;
            } else {
                soak_error("slot %u: mkrt_fence/mkrt_wait: %s", slot, mkrt_status_name(st));
                break;
            }
        }
        if (rnd_below(rng, 32) == 0)
            nap_us(rnd_below(rng, 1000));
    }
    mkrt_producer_close(p);
    return 0;
}

static void join_all(work *w)
{
    atomic_store(&w->stop, true);
    for (unsigned s = 0; s < w->producers; s++)
        if (w->started[s]) {
            mkrt__thread_join(w->thread[s]);
            w->started[s] = false;
        }
}

static void quiesce_under_load(work *w)
{
    heartbeat("quiesce under load");
    uint64_t t0 = stress_now_ns();
    mkrt_status st = mkrt_quiesce(w->rt, opt.strict_quiesce ? 10 * SEC_NS : SEC_NS);
    atomic_fetch_add(&g_quiesce_calls, 1);
    if (st == MKRT_OK) {
        soak_latency_record(stress_now_ns() - t0);
    } else if (st == MKRT_ETIMEDOUT) {
        atomic_fetch_add(&g_quiesce_timeouts, 1);
        if (opt.strict_quiesce)
            soak_error("mkrt_quiesce under load did not return within 10 s (issue 22, defect 3)");
    } else {
        soak_error("mkrt_quiesce under load: %s", mkrt_status_name(st));
    }
}

bool work_run(work *w)
{
    w->producers = w->producers ? w->producers : opt.producers;
    for (unsigned s = 0; s < w->producers; s++) {
        w->rng[s] = rnd_seed(opt.seed, (uint64_t)w->plan.index << 8 | s, 0x5EED);
        args[s] = (prod_arg){w, s};
        w->started[s] = mkrt__thread_start(&w->thread[s], producer_main, &args[s]) == 0;
        if (!w->started[s])
            soak_error("cannot start a producer thread");
    }
    uint64_t span = w->plan.t_end - w->plan.t0;
    uint64_t t_race = w->plan.race ? w->plan.t0 + span * (40 + rnd_below(&w->plan.rng, 60)) / 100 : w->plan.t_end;
    uint64_t storm_from = w->plan.t0 + span * rnd_below(&w->plan.rng, 80) / 100;
    uint64_t storm_to = storm_from + (50 + rnd_below(&w->plan.rng, 350)) * 1000000ull;
    uint32_t storm_ppm = 10000u << rnd_below(&w->plan.rng, 5);
    uint64_t next_q = w->plan.t0 + (200 + rnd_below(&w->plan.rng, 600)) * 1000000ull;
    uint64_t now;
    while ((now = stress_now_ns()) < t_race) {
        heartbeat("run");
        set_fail_ppm(w->plan.storms && now >= storm_from && now < storm_to ? storm_ppm : 0);
        if (now >= next_q && !w->plan.race) {
            quiesce_under_load(w);
            next_q = stress_now_ns() + (300 + rnd_below(&w->plan.rng, 700)) * 1000000ull;
        }
        nap_us(5000);
    }
    set_fail_ppm(0);
    if (w->plan.race) {
        atomic_fetch_add(&g_race_rounds, 1);
        heartbeat("race: destroy");
        atomic_store(&w->gate_closed, true);
        while (atomic_load(&w->users) != 0)
            nap_us(100);
        soak_live_retire();
        uint64_t timeout = rnd_below(&w->plan.rng, 2) ? LONG_NS : rnd_below(&w->plan.rng, 2000000);
        mkrt_error err;
        mkrt_status ds = mkrt_destroy(w->rt, timeout, &err);
        w->rt = NULL;
        if (ds == MKRT_ETIMEDOUT && timeout != LONG_NS)
            atomic_fetch_add(&g_destroy_timeouts, 1);
        else if (ds != MKRT_OK)
            soak_error("mkrt_destroy (timeout %llu ns) under publishing producers: %s: %s",
                       (unsigned long long)timeout, mkrt_status_name(ds), err.message);
        heartbeat("race: join");
        join_all(w);
        return false;
    }
    heartbeat("stop producers");
    join_all(w);
    heartbeat("quiesce");
    uint64_t t0 = stress_now_ns();
    mkrt_status st = mkrt_quiesce(w->rt, LONG_NS);
    atomic_fetch_add(&g_quiesce_calls, 1);
    if (st != MKRT_OK) {
        soak_error("mkrt_quiesce with no producer left: %s after %.1f s", mkrt_status_name(st),
                   (double)(stress_now_ns() - t0) / 1e9);
        work_destroy(w);
        return false;
    }
    return true;
}

void work_destroy(work *w)
{
    if (w->rt == NULL)
        return;
    heartbeat("destroy");
    soak_live_retire();
    mkrt_error err;
    mkrt_status st = mkrt_destroy(w->rt, LONG_NS, &err);
    if (st != MKRT_OK)
        soak_error("mkrt_destroy after quiescence: %s: %s", mkrt_status_name(st), err.message);
    w->rt = NULL;
}
