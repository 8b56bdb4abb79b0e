/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/soak/classic_round.c - the classic workload (today's soak, kept).
 *
 * Each round creates a runtime (the backend the plan gives: CPU, SIM with
 * a 200 ms watchdog, or CUDA on the stand-in driver), registers four user ops
 *   ACC   out += param                      (idempotent = false)
 *   MAX   out = max(out, param)             (idempotent = true)
 *   FAIL  out += param, but fails for some params (MKRT_EINVAL, or the
 *         custom status -77)                (idempotent = false)
 *   SLOW  out += param, now and then after a short sleep
 * and runs producer sessions that come and go on --producers slots: open,
 * publish random batches (mkrt_publish, mkrt_publish_some with short
 * timeouts, mkrt_try_publish with back-off) into small rings, fence, wait,
 * close. A consumer thread takes the APPEND log with
 * mkrt_append_log_consume as it goes. Some rounds end with a drain and
 * full checks; the others ("race" rounds) destroy the runtime while the
 * producers are still publishing, waiting and closing, sometimes with a
 * short destroy timeout. Faults: allocation storms (soak_env.c); on SIM a
 * device hang injected now and then (mkrt__runtime_device_hang, before any
 * layer runs) must trip the watchdog: the batch's items go to the error
 * callback, the runtime carries on on the CPU; on CUDA the stand-in's
 * kernel may fault in a random batch (FAKE_CUDA_MODE=fault), with the
 * same outcome.
 *
 * Exactly-once accounting. Each producer slot owns a block of cells:
 *   8 accumulate cells (ACC, FAIL, SLOW and built-in ADD in == out, with
 *   exact duplicates in a row, which must all run), 4 MAX cells (exact
 *   duplicates, which may be pruned), a STORE cell and an APPEND handle.
 * The error callback records every failed item (sums per cell, marks per
 * APPEND sequence number) and checks its status is one the item may get.
 * The user ops record what they ran. Checked per round:
 *   - every item that must fail (FAIL params, unknown op, bad handles)
 *     was reported; user ops ran + failed = published, per cell and in
 *     all (also in race rounds: destroy runs or fails what was published);
 *   - after a drain (not race rounds): stats published = what the soak
 *     published = executed + pruned + failed; failed = callbacks; every
 *     accumulate cell = sum of the params of its items that did not fail;
 *     MAX and STORE cells as published; each APPEND sequence number was
 *     consumed or failed exactly once (consumed per handle = appended -
 *     failed), in publish order per producer session;
 *   - after each mkrt_wait: the session's cells already hold those values;
 *   - what mkrt_append_log_read lists (read while consuming) was neither
 *     consumed nor failed, in order per session;
 *   - an injected hang trips the watchdog once; CPU runtimes never report
 *     device failures; live stats snapshots name a possible backend.
 */
#include <string.h>

#include "classic.h"
#include "../../src/runtime/test_hooks.h" /* mkrt__runtime_hold, mkrt__runtime_device_hang */

static round g_round; /* large: static, reused and cleared every round */
_Atomic uint64_t g_values_unchecked;

static void plan_round(round *r, unsigned index, uint64_t t_now, uint64_t t_stop)
{
    memset(r, 0, sizeof *r);
    soak_plan p;
    soak_plan_round(&p, index, t_now, t_stop);
    r->index = index;
    r->rng = p.rng;
    r->consumer_rng = rnd_seed(opt.seed, index, 0xC0C);
    uint64_t *g = &r->rng;
    r->backend = p.backend;
    r->calm = p.calm;
    r->race = p.race;
    r->short_destroy = r->race && rnd_below(g, 2) == 0;
    r->storms = p.storms;
    r->hang_planned = r->backend == MKRT_BACKEND_SIM && (opt.faults & F_HANG) && rnd_below(g, 100) < 60;
    r->producers = opt.producers;
    r->t0 = p.t0;
    r->t_end = p.t_end;
    r->t_race = r->t_end;
    r->t_hang = t_now + (r->t_end - t_now) * (20 + rnd_below(g, 50)) / 100;

    mkrt_config c = mkrt_config_default();
    c.backend = r->backend;
    c.workers = 1 + rnd_below(g, 3);
    c.ring_capacity = (size_t)16 << rnd_below(g, 5); /* 16 .. 256: backpressure */
    static const size_t batches[] = {8, 32, 64, 100, 256, 1024};
    c.max_batch = batches[rnd_below(g, 6)];
    uint32_t bk = rnd_below(g, 4);
    c.burst_per_ring = bk == 0 ? 1 : bk == 1 ? 8 : bk == 2 ? 64 : c.max_batch;
    if (c.burst_per_ring > c.max_batch)
        c.burst_per_ring = c.max_batch;
    /* Exactly the producers, sometimes: a closed producer keeps its slot
     * until its items completed, so a new session may get MKRT_EAGAIN. */
    c.max_producers = r->producers + (rnd_below(g, 3) == 0 ? 0 : 1 + rnd_below(g, 8));
    static const uint64_t budgets[] = {0, 0, 256, 4096};
    c.device_memory_budget = budgets[rnd_below(g, 4)];
    c.watchdog_ms = 200;
    /* A round that injects a device hang needs its probe (one built-in
     * item) to reach the device: the plan's ROUTE decision would keep such
     * a small batch on the CPU pool, and the hang would never be met. */
    if (r->hang_planned)
        c.plan_off |= MKRT_PLAN_ROUTE;
    c.cells = CELLS;
    /* Mostly room enough while the consumer keeps up; now and then a tiny
     * log, so that APPENDs fail with MKRT_EOVERFLOW (and are accounted). */
    c.append_log_capacity = rnd_below(g, 6) == 0 ? 16 : (size_t)1024 << rnd_below(g, 4);
    c.on_error = classic_on_error;
    c.error_ctx = r;
    r->cfg = c;
}

static bool create_runtime(round *r)
{
    if (r->backend == MKRT_BACKEND_CUDA)
        soak_cuda_env((opt.faults & F_DEVICE) && rnd_below(&r->rng, 2) == 0, &r->rng);
    soak_plan p = {.index = r->index, .rng = r->rng, .backend = r->backend, .storms = r->storms};
    bool skip;
    r->rt = soak_create(&p, &r->cfg, &skip);
    if (r->rt == NULL)
        return false;
    static const struct {
        uint32_t op;
        mkrt_op_fn fn;
        bool idempotent;
        const char *name;
    } ops[] = {{OP_ACC, op_acc, false, "acc"},
               {OP_MAX, op_max, true, "max"},
               {OP_FAIL, op_fail, false, "fail"},
               {OP_SLOW, op_slow, false, "slow"}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        mkrt_op_desc d = {0};
        d.fn = ops[i].fn;
        d.user = r;
        d.frontier_bytes = 16;
        d.scratch_bytes = 8;
        d.output_bytes = 16; /* 64 fused bytes: layers split under a 256-byte budget */
        d.name = ops[i].name;
        d.idempotent = ops[i].idempotent;
        mkrt_error err;
        mkrt_status st = mkrt_op_register(r->rt, ops[i].op, &d, &err);
        if (st != MKRT_OK) {
            soak_error("mkrt_op_register %u: %s: %s", ops[i].op, mkrt_status_name(st), err.message);
            mkrt_destroy(r->rt, LONG_NS, NULL);
            r->rt = NULL;
            return false;
        }
    }
    soak_live_set(r->rt);
    return true;
}

/* Storm windows: a few per storm round, 50..400 ms each. */
typedef struct storm {
    uint64_t from, to;
    uint32_t ppm;
} storm;

static size_t plan_storms(round *r, storm *st, size_t max)
{
    if (!r->storms)
        return 0;
    size_t n = 1 + rnd_below(&r->rng, (uint32_t)max);
    static const uint32_t ppms[] = {10000, 50000, 200000, 500000};
    uint64_t span = r->t_end - r->t0;
    for (size_t i = 0; i < n; i++) {
        st[i].from = r->t0 + span * rnd_below(&r->rng, 90) / 100;
        st[i].to = st[i].from + (50 + rnd_below(&r->rng, 350)) * 1000000ull;
        st[i].ppm = ppms[rnd_below(&r->rng, 4)];
    }
    return n;
}

static void inject_hang(round *r)
{
    heartbeat("inject hang");
    /* The next batch staged on the device hangs before its first layer:
     * nothing of it runs, the watchdog trips, its items fail. */
    mkrt__runtime_hold(r->rt, true);
    mkrt__runtime_device_hang(r->rt, 1, 0);
    mkrt__runtime_hold(r->rt, false);
    atomic_store(&r->device_phase, true);
    r->hang_injected = true;
    atomic_fetch_add(&g_hangs_injected, 1);
}

/* The probe: one built-in item, so that a still-pending injected hang is
 * hit (called when every session is done). */
static void run_probe(round *r)
{
    heartbeat("hang probe");
    mkrt_producer *p = NULL;
    for (unsigned tries = 0; p == NULL && tries < 10000; tries++) {
        mkrt_error err;
        p = mkrt_producer_open(r->rt, &err);
        if (p == NULL) {
            if (err.status != MKRT_ENOMEM && err.status != MKRT_EAGAIN) {
                soak_error("probe: mkrt_producer_open: %s", err.message);
                return;
            }
            nap_us(500);
        }
    }
    if (p == NULL) {
        soak_error("probe: mkrt_producer_open kept failing");
        return;
    }
    mkrt_item it = {MKRT_OP_ADD, PROBE_CELL, PROBE_CELL, 1};
    mkrt_error err;
    mkrt_status st = mkrt_publish(p, &it, 1, LONG_NS, &err);
    if (st == MKRT_OK) {
        r->probe_published = 1;
        atomic_fetch_add(&g_items, 1);
        uint64_t t;
        mkrt_fence(p, &t);
        if ((st = mkrt_wait(p, t, LONG_NS)) != MKRT_OK)
            soak_error("probe: mkrt_wait: %s", mkrt_status_name(st));
    } else {
        soak_error("probe: mkrt_publish: %s", err.message);
    }
    mkrt_producer_close(p);
}

typedef struct round_totals {
    uint64_t published, pub_user_n, must_fail;
} round_totals;

static round_totals totals(round *r)
{
    round_totals t = {r->probe_published, 0, 0};
    for (unsigned s = 0; s < r->producers; s++) {
        t.published += r->slot[s].pub_items;
        t.pub_user_n += r->slot[s].pub_user_n;
        t.must_fail += r->slot[s].must_fail;
    }
    return t;
}

/* Checks that hold in every round, once every item has ended (after a
 * drain, or after mkrt_destroy). */
static void check_common(round *r, bool drained)
{
    round_totals t = totals(r);
    uint64_t mf = atomic_load(&r->must_fail_reported);
    if (mf != t.must_fail)
        soak_error("%llu items that must fail (FAIL params, unknown op, bad handles) were published, "
                   "%llu were reported failed", (unsigned long long)t.must_fail, (unsigned long long)mf);
    uint64_t ran = atomic_load(&r->exec_user_n), failed = atomic_load(&r->fail_user_n);
    if (ran + failed != t.pub_user_n)
        soak_error("accumulate user ops: published %llu, ran %llu + failed %llu = %llu (%s)",
                   (unsigned long long)t.pub_user_n, (unsigned long long)ran,
                   (unsigned long long)failed, (unsigned long long)(ran + failed),
                   ran + failed > t.pub_user_n ? "duplicated" : "lost");
    for (unsigned s = 0; s < r->producers; s++) {
        slot_state *sl = &r->slot[s];
        const uint32_t base = s * SLOT_STRIDE;
        for (unsigned i = 0; i < ACC_N; i++) {
            cell_shadow *c = &r->cell[base + i];
            uint64_t ex = atomic_load(&c->exec_user_sum), fa = atomic_load(&c->fail_user_sum);
            if (ex + fa != sl->pub_user_sum[i])
                soak_error("slot %u cell %u: user ops published params summing to %llu, ran %llu + "
                           "failed %llu", s, base + i, (unsigned long long)sl->pub_user_sum[i],
                           (unsigned long long)ex, (unsigned long long)fa);
        }
        /* APPENDs: no sequence number beyond those published; each one
         * consumed or failed at most once (exactly once after a drain). */
        uint64_t consumed = 0, failed_n = 0, missing = 0, both = 0, phantom = 0;
        for (uint32_t q = 0; q < APPEND_MAX; q++) {
            uint8_t m = atomic_load(&r->marks[s][q]);
            if (q >= sl->appends) {
                phantom += m != 0;
                continue;
            }
            consumed += (m & MARK_CONSUMED) != 0;
            failed_n += (m & MARK_FAILED) != 0;
            missing += m == 0;
            both += m == (MARK_CONSUMED | MARK_FAILED);
        }
        if (phantom != 0 || both != 0 || (drained && missing != 0))
            soak_error("slot %u APPEND: %u published, %llu consumed, %llu failed, %llu neither, %llu "
                       "both, %llu never published", s, sl->appends, (unsigned long long)consumed,
                       (unsigned long long)failed_n, (unsigned long long)missing,
                       (unsigned long long)both, (unsigned long long)phantom);
        if (drained && atomic_load(&r->append_consumed[s]) != sl->appends - atomic_load(&r->append_failed[s]))
            soak_error("slot %u APPEND: consumed %llu entries, want published %u - failed %llu", s,
                       (unsigned long long)atomic_load(&r->append_consumed[s]), sl->appends,
                       (unsigned long long)atomic_load(&r->append_failed[s]));
    }
}

static void end_drained(round *r)
{
    heartbeat("stop sessions");
    atomic_store(&r->stop, true);
    for (unsigned s = 0; s < r->producers; s++)
        join_session(&r->sess[s]);
    set_fail_ppm(0);
    heartbeat("drain");
    mkrt_status ds = mkrt_drain(r->rt, LONG_NS);
    if (ds != MKRT_OK)
        soak_error("mkrt_drain: %s after %llu s", mkrt_status_name(ds), LONG_NS / SEC_NS);
    mkrt_stats st;
    if (r->hang_injected && ds == MKRT_OK) {
        /* Nothing is in flight now: if the hang is still pending, the
         * probe's batch is the next one staged on the device. */
        if (mkrt_stats_read(r->rt, &st) != MKRT_OK)
            soak_error("mkrt_stats_read failed");
        else if (st.device_failures == 0) {
            run_probe(r);
            if ((ds = mkrt_drain(r->rt, LONG_NS)) != MKRT_OK)
                soak_error("mkrt_drain after the probe: %s", mkrt_status_name(ds));
        }
    }
    atomic_store(&r->consumer_stop, true);
    mkrt__thread_join(r->consumer);
    heartbeat("check");
    if (mkrt_stats_read(r->rt, &st) != MKRT_OK) {
        soak_error("mkrt_stats_read failed");
        memset(&st, 0, sizeof st);
    }
    round_totals t = totals(r);
    uint64_t cb = atomic_load(&r->callbacks);
    if (st.published != t.published)
        soak_error("stats.published %llu, but the producers published %llu",
                   (unsigned long long)st.published, (unsigned long long)t.published);
    if (st.published != st.executed + st.pruned + st.failed)
        soak_error("published %llu != executed %llu + pruned %llu + failed %llu",
                   (unsigned long long)st.published, (unsigned long long)st.executed,
                   (unsigned long long)st.pruned, (unsigned long long)st.failed);
    if (st.failed != cb)
        soak_error("stats.failed %llu, but the error callback ran %llu times",
                   (unsigned long long)st.failed, (unsigned long long)cb);
    if (st.dead_letters_dropped != 0)
        soak_error("%llu dead letters dropped with an error callback installed",
                   (unsigned long long)st.dead_letters_dropped);
    check_common(r, true);
    for (unsigned s = 0; s < r->producers; s++)
        if (!r->slot[s].unwaited)
            check_slot_cells(r, s, "after the drain");
        else {
            /* Sessions overlapped: accumulate and MAX cells still hold
             * (their ops commute), the STORE cell need not. */
            const uint32_t base = s * SLOT_STRIDE;
            for (unsigned i = 0; i < ACC_N; i++) {
                uint64_t v = 0,
                         want = r->slot[s].pub_sum[i] - atomic_load(&r->cell[base + i].fail_all_sum);
                mkrt_cell_read(r->rt, base + i, &v);
                if (v != want && !cells_undefined(r))
                    soak_error("after the drain: slot %u accumulate cell %u = %llu, want %llu", s,
                               base + i, (unsigned long long)v, (unsigned long long)want);
            }
            for (unsigned i = 0; i < MAXC_N; i++) {
                uint32_t h = base + MAXC_OFF + i;
                uint64_t v = 0;
                mkrt_cell_read(r->rt, h, &v);
                if (!atomic_load(&r->cell[h].max_failed) && v != r->slot[s].pub_max[i] && !cells_undefined(r))
                    soak_error("after the drain: slot %u MAX cell %u = %llu, want %u", s, h,
                               (unsigned long long)v, r->slot[s].pub_max[i]);
            }
        }
    if (r->probe_published) {
        uint64_t v = 1;
        mkrt_cell_read(r->rt, PROBE_CELL, &v);
        if (atomic_load(&r->probe_failures) != 1 || v != 0)
            soak_error("the injected device hang did not trip the watchdog: the probe item %s",
                       v != 0 ? "ran" : "was not reported");
    }
    if (r->backend == MKRT_BACKEND_CPU && (st.device_failures != 0 || st.device_batches != 0))
        soak_error("CPU runtime reports %llu device batches, %llu device failures",
                   (unsigned long long)st.device_batches, (unsigned long long)st.device_failures);
    if (r->backend == MKRT_BACKEND_CUDA) {
        atomic_fetch_add(&g_device_faults, st.device_failures);
        if (st.device_failures > 0 && strcmp(st.backend, "cpu") != 0)
            soak_error("the CUDA device failed but stats.backend is \"%s\"", st.backend);
    }
    if (r->backend == MKRT_BACKEND_SIM) {
        if (r->hang_injected && st.device_failures != 1)
            soak_error("one device hang injected, %llu device failures",
                       (unsigned long long)st.device_failures);
        if (st.device_failures > 0 && strcmp(st.backend, "cpu") != 0)
            soak_error("the device failed but stats.backend is \"%s\"", st.backend);
        atomic_fetch_add(&g_watchdog_trips, st.device_failures);
        if (!r->hang_injected && st.device_failures > 0) {
            atomic_fetch_add(&g_stray_trips, st.device_failures);
            fprintf(stderr, "soak: warning: round %u: the device failed without an injected hang: %s\n",
                    r->index, st.backend_detail ? st.backend_detail : "");
        }
    }
    atomic_fetch_add(&g_executed, st.executed);
    atomic_fetch_add(&g_pruned, st.pruned);
    atomic_fetch_add(&g_failed, st.failed);
    if (opt.verbose)
        printf("round %u %s drained: published %llu executed %llu pruned %llu failed %llu batches %llu "
               "device_batches %llu device_failures %llu appends consumed %llu\n",
               r->index, backend_name(r->backend), (unsigned long long)st.published,
               (unsigned long long)st.executed, (unsigned long long)st.pruned,
               (unsigned long long)st.failed, (unsigned long long)st.batches,
               (unsigned long long)st.device_batches, (unsigned long long)st.device_failures,
               (unsigned long long)atomic_load(&g_appends_consumed));
    heartbeat("destroy");
    gate_close(r);
    soak_live_retire();
    mkrt_error err;
    mkrt_status st2 = mkrt_destroy(r->rt, LONG_NS, &err);
    if (st2 != MKRT_OK)
        soak_error("mkrt_destroy after a drain: %s: %s", mkrt_status_name(st2), err.message);
    r->rt = NULL;
}

static void end_race(round *r)
{
    heartbeat("race: close gate");
    gate_close(r); /* no more opens, waits, consumes; publishing goes on */
    mkrt__thread_join(r->consumer);
    mkrt_stats st;
    if (mkrt_stats_read(r->rt, &st) == MKRT_OK)
        atomic_fetch_add(r->backend == MKRT_BACKEND_CUDA ? &g_device_faults : &g_watchdog_trips,
                         st.device_failures);
    soak_live_retire();
    heartbeat("race: destroy");
    uint64_t timeout = !r->short_destroy          ? LONG_NS
                       : rnd_below(&r->rng, 2) == 0 ? 0
                                                    : rnd_below(&r->rng, 2000000);
    mkrt_error err;
    mkrt_status ds = mkrt_destroy(r->rt, timeout, &err);
    r->rt = NULL;
    if (ds == MKRT_ETIMEDOUT && r->short_destroy)
        atomic_fetch_add(&g_destroy_timeouts, 1);
    else if (ds != MKRT_OK)
        soak_error("mkrt_destroy (timeout %llu ns) under publishing producers: %s: %s",
                   (unsigned long long)timeout, mkrt_status_name(ds), err.message);
    set_fail_ppm(0);
    heartbeat("race: join");
    atomic_store(&r->stop, true);
    for (unsigned s = 0; s < r->producers; s++)
        join_session(&r->sess[s]);
    heartbeat("race: check");
    check_common(r, false);
    if (opt.verbose) {
        round_totals t = totals(r);
        printf("round %u %s race: published %llu callbacks %llu (timed out %llu) destroy(%llu ns) %s\n",
               r->index, backend_name(r->backend), (unsigned long long)t.published,
               (unsigned long long)atomic_load(&r->callbacks),
               (unsigned long long)atomic_load(&r->why_timedout), (unsigned long long)timeout,
               mkrt_status_name(ds));
    }
}

/* Live snapshots, for coverage (under the sanitizers) and their few
 * invariants. Main thread, runtime alive. */
static void snapshot(round *r)
{
    mkrt_stats st;
    mkrt_producer_stats ps[MAX_PRODUCERS + 16];
    if (mkrt_stats_read(r->rt, &st) != MKRT_OK) {
        soak_error("mkrt_stats_read failed on a live runtime");
        return;
    }
    size_t n = mkrt_stats_producers(r->rt, ps, sizeof ps / sizeof ps[0]);
    if (st.producers_open > r->cfg.max_producers || n > r->cfg.max_producers)
        soak_error("%u producers open, %zu listed, max_producers %u", st.producers_open, n,
                   r->cfg.max_producers);
    /* A CPU runtime says "cpu"; a SIM one "sim", or "cpu" once its device
     * failed (the two fields are not read as one, so no cross-check). */
    const char *d = mkrt_backend_describe(r->rt);
    bool named = st.backend != NULL &&
                 (strcmp(st.backend, "cpu") == 0 ||
                  (r->backend == MKRT_BACKEND_SIM && strcmp(st.backend, "sim") == 0) ||
                  (r->backend == MKRT_BACKEND_CUDA && strcmp(st.backend, "cuda") == 0));
    if (d == NULL || !named)
        soak_error("backend \"%s\" (%s) on a %s runtime", st.backend ? st.backend : "(null)",
                   d ? d : "(null)", backend_name(r->backend));
}

static void run_round(round *r)
{
    storm storms[3];
    size_t nstorms = plan_storms(r, storms, 3);
    if (r->race)
        r->t_race = r->t0 + (r->t_end - r->t0) * (40 + rnd_below(&r->rng, 60)) / 100;
    if (!create_runtime(r))
        return;
    if (r->race)
        atomic_fetch_add(&g_race_rounds, 1);
    if (mkrt__thread_start(&r->consumer, consumer_main, r) != 0) {
        soak_error("cannot start the consumer thread");
        soak_live_retire();
        mkrt_destroy(r->rt, LONG_NS, NULL);
        r->rt = NULL;
        return;
    }
    uint64_t now = stress_now_ns();
    for (unsigned s = 0; s < r->producers; s++)
        r->sess[s].next_start_ns = now + rnd_below(&r->rng, 20) * 1000000ull;
    uint64_t next_phase = now + (100 + rnd_below(&r->rng, 400)) * 1000000ull;
    uint64_t stop_at = r->race ? r->t_race : r->t_end;
    while ((now = stress_now_ns()) < stop_at) {
        heartbeat("run");
        for (unsigned s = 0; s < r->producers; s++) {
            session *ss = &r->sess[s];
            if (ss->running && atomic_load(&ss->finished)) {
                join_session(ss);
                /* Often at once: the closed producer may still hold its
                 * slot (MKRT_EAGAIN when max_producers are open). */
                ss->next_start_ns = now;
                if (rnd_below(&r->rng, 2))
                    ss->next_start_ns += rnd_below(&r->rng, 50) * 1000000ull;
            }
            if (!ss->running && now >= ss->next_start_ns && now + 50000000ull < stop_at)
                start_session(r, s);
        }
        uint32_t ppm = 0;
        for (size_t i = 0; i < nstorms; i++)
            if (now >= storms[i].from && now < storms[i].to)
                ppm = storms[i].ppm;
        set_fail_ppm(ppm);
        if (r->backend == MKRT_BACKEND_SIM) {
            if (r->hang_planned && !r->hang_injected && now >= r->t_hang) {
                inject_hang(r);
                next_phase = now + 300000000ull;
            } else if (now >= next_phase) {
                bool dev = !atomic_load(&r->device_phase) && rnd_below(&r->rng, 100) < 45;
                atomic_store(&r->device_phase, dev);
                next_phase = now + (150 + rnd_below(&r->rng, 350)) * 1000000ull;
            }
        }
        if (rnd_below(&r->rng, 8) == 0)
            snapshot(r);
        nap_us(5000);
    }
    if (r->race)
        end_race(r);
    else
        end_drained(r);
    set_fail_ppm(0);
    atomic_fetch_add(&g_callbacks, atomic_load(&r->callbacks));
    atomic_fetch_add(&g_append_overflows, atomic_load(&r->why_overflow));
}

void classic_round(unsigned index, uint64_t now, uint64_t t_stop)
{
    round *r = &g_round;
    plan_round(r, index, now, t_stop);
    run_round(r);
}
