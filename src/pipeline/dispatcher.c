/* SPDX-License-Identifier: BSD-2-Clause */
/* src/pipeline/dispatcher.c - the dispatcher thread: the double-buffered
 * loop that moves batches down the stages (pipeline/stages.h) and through
 * the backend interface (backend/backend.h). Batch k+1 is drained,
 * admitted, deduped, layered, split, planned and prepared while batch k
 * runs; k is then waited for and completed, and k+1 launched. The loop
 * knows no backend by name: the plan says which one runs a batch. */
#include <stdio.h>

#include "base/rcu.h"
#include "base/spin_wait.h"
#include "pipeline/stages.h"
#include "pipeline/dispatch.h"

/* The test hooks the dispatcher obeys (pipeline/test_hooks.h, runtime/test_hooks.h); false in the
 * library as shipped. acquire: pairs with the release stores in
 * runtime/test_hooks.c. */
#ifdef MKRT_TEST_HOOKS
static bool test_held(mkrt__dispatch *dp)
{
    return atomic_load_explicit(&dp->hooks.held, memory_order_acquire);
}
static bool test_dozing(mkrt__dispatch *dp)
{
    return atomic_load_explicit(&dp->hooks.dozing, memory_order_acquire);
}
static bool test_deaf(mkrt__dispatch *dp)
{
    return atomic_load_explicit(&dp->hooks.deaf, memory_order_acquire);
}
#else
static inline bool test_held(mkrt__dispatch *dp)
{
    (void)dp;
    return false;
}
static inline bool test_dozing(mkrt__dispatch *dp)
{
    (void)dp;
    return false;
}
static inline bool test_deaf(mkrt__dispatch *dp)
{
    (void)dp;
    return false;
}
#endif

/* The backend failed for good: it is not fed again, and the runtime says
 * what runs batches now. */
static void backend_failed(mkrt__dispatch *dp, mkrt__backend *be, const mkrt_error *err)
{
    if (be->failed)
        return;
    be->failed = true;
    mkrt__stat_add(&dp->stats->device_failures, 1);
    /* A failed device's state comes home now, so that reads see it; after
     * a sticky fault it cannot, and the host keeps its last copy. */
    mkrt_error why;
    bool lost = mkrt__state_move(dp, NULL, &why) != NULL || dp->state_lost;
    char now[64];
    mkrt__backend *next = mkrt__backends_cpu_pool(dp->backends, dp->nbackends);
    next->ops->describe(next, now, sizeof now);
    /* A long message is cut: the reason of the failure comes last. */
    int at = snprintf(dp->backend_failure, sizeof dp->backend_failure,
                      "%s (%s failed and is not used again%s: ", now, be->name,
                      lost ? "; its cells and APPEND log since their last copy to the host are lost" : "");
    if (at > 0 && (size_t)at < sizeof dp->backend_failure)
        snprintf(dp->backend_failure + at, sizeof dp->backend_failure - (size_t)at, "%.*s)",
                 (int)(sizeof dp->backend_failure - (size_t)at - 2), err->message);
    /* release: pairs with the acquire in mkrt_backend_describe. */
    atomic_store_explicit(&dp->backend_failed, true, memory_order_release);
}

/* Plans b and prepares it on the planned backend (while the batch before
 * may still run); a backend that cannot prepare fails, and b is planned
 * again for the next one (the CPU pool always prepares). */
static void plan_and_prepare(mkrt__dispatch *dp, mkrt__batch *b)
{
    for (;;) {
        mkrt__stage_own_levels(dp, b);
        mkrt__stage_plan(dp, b);
        mkrt__stage_place(dp, b);
        mkrt__backend *be = dp->backends[b->plan.backend];
        mkrt_error err;
        if (be->ops->prepare(be, b, &err) == MKRT_OK)
            return;
        backend_failed(dp, be, &err); /* nothing of b ran there */
    }
}

/* A made source's items (plan/source.h) are all admitted, distinct
 * and commuting: one layer. */
static void admit_made(mkrt__batch *b)
{
    b->failed_n = 0;
    b->refused = 0;
    b->appends = 0;
    b->user_ops = 0;
    b->handle_lo = 0;
    b->handle_hi = 0;
    b->admitted = b->kept = b->exec_n = b->n;
    b->exec = b->items;
    b->layered = true;
    b->layers = 1;
    b->layer_offsets[0] = 0;
    b->layer_offsets[1] = (uint32_t)b->n;
    b->plan.split_layers = 0;
    b->plan.peak_frontier_bytes = b->plan.peak_scratch_bytes = b->plan.peak_output_bytes = 0;
}

/* Stages admit .. place, and the backend's prepare. */
static void prepare_batch(mkrt__dispatch *dp, mkrt__batch *b, uint64_t running_appends)
{
    if (b->source->made) {
        admit_made(b);
    } else {
        mkrt__stage_admit(dp, b, running_appends);
        mkrt__stage_dedupe(dp, b);
        mkrt__stage_layer_split(dp, b);
    }
    if (b->exec_n > 0)
        plan_and_prepare(dp, b);
}

static bool sources_want(mkrt__dispatch *dp);
static void await_token(mkrt__dispatch *dp, int (*leave)(void *dp));

/* DRAIN at a level boundary (plan/decide.h): whether a run of levels
 * (batch.h, levels) yields to the dispatcher. Any thread, without the
 * token: it reads only counters and hints. Producers' items published
 * and not completed wait in a ring or in a drained batch (the run of
 * levels is the only batch running); a made source wants a look (a
 * traversal started); a quiesce or shutdown waits. acquire (all): pairs
 * with the release stores of the publishers, mkrt_quiesce and
 * mkrt_destroy; relaxed (completed_total): the token holder's count, a
 * hint here (a stale value only yields once more). */
static bool levels_yield(void *p)
{
    mkrt__dispatch *dp = p;
    const bool items = atomic_load_explicit(&dp->producers->published_total, memory_order_acquire) !=
                       atomic_load_explicit(&dp->completed_total, memory_order_relaxed);
    const bool quiesce = atomic_load_explicit(&dp->quiescing, memory_order_acquire) != 0 ||
                         atomic_load_explicit(&dp->producers->closing, memory_order_acquire) ||
                         atomic_load_explicit(&dp->aborting, memory_order_acquire);
    return mkrt__decide_level_yield(items, sources_want(dp), quiesce, !(dp->planner.off & MKRT_PLAN_DRAIN));
}

/* Launches b on its planned backend. A backend that failed since b was
 * planned (the batch before failed on it), or that cannot launch, is
 * passed over: b is planned and prepared again for the next one. until:
 * the launching helper's deadline (b->until, see batch.h). */
static void launch_batch(mkrt__dispatch *dp, mkrt__batch *b, uint64_t until)
{
    b->until = until;
    b->yield = levels_yield;
    b->yield_ctx = dp;
    /* The batch's ops may emit into the free part of its class's
     * emission queue (state/state.h). */
    mkrt__emit_open(dp->state, b->klass);
    for (;;) {
        mkrt__backend *be = dp->backends[b->plan.backend];
        if (!be->failed) {
            mkrt_error err;
            /* acquire: pairs with the release CAS in mkrt_append_log_consume
             * (a backend may reuse the slots a consumer freed). */
            uint64_t limit = atomic_load_explicit(&dp->state->append_consumed, memory_order_acquire) +
                             dp->cfg->append_log_capacity;
            /* The state moves to the backend that runs b (device_state). */
            mkrt__backend *bad = mkrt__state_move(dp, be, &err);
            if (bad != NULL)
                backend_failed(dp, bad, &err);
            b->launched_ns = mkrt__now_ns();
            if (bad != be && be->ops->launch(be, b, limit, &err) == MKRT_OK) {
                dp->batch_running = true;
                /* The CPU pool ran a one-participant batch inside launch. */
                if (be->is_cpu_pool && b->plan.workers == 1 && !b->levels)
                    mkrt__plan_measured(&dp->planner, b, true, mkrt__now_ns() - b->launched_ns);
                return;
            }
            if (bad != be)
                backend_failed(dp, be, &err);
        }
        plan_and_prepare(dp, b);
    }
}

/* Waits for the batch in flight (if any) and completes it. A backend that
 * fails or trips the watchdog fails every item of its batch (some may
 * have run; none is lost) and is not used again. */
static void finish_running(mkrt__dispatch *dp, mkrt__batch **running)
{
    mkrt__batch *b = *running;
    if (b == NULL)
        return;
    mkrt__backend *be = dp->backends[b->plan.backend];
    uint64_t limit = dp->cfg->watchdog_ms ? (uint64_t)dp->cfg->watchdog_ms * 1000000u : MKRT_TIMEOUT_INFINITE;
    const uint32_t *fails;
    uint32_t nfails;
    mkrt_error err;
    const uint64_t t0 = mkrt__now_ns();
    mkrt_status st = be->ops->wait(be, limit, &fails, &nfails, &err);
    mkrt__plan_waited(&dp->planner, mkrt__now_ns() - t0); /* ARMS's slack */
    /* What the batch emitted can now be drained (state/state.h). */
    mkrt__stat_add(&dp->state->emitted_total, mkrt__emit_close(dp->state));
    if (st == MKRT_OK) {
        mkrt__stage_take_failures(dp, b, fails, nfails);
        if (!be->is_cpu_pool)
            mkrt__stat_add(&dp->stats->device_batches, 1);
    } else {
        mkrt__stage_fail_all(b, st);
        backend_failed(dp, be, &err);
    }
    /* A run of levels is not a sample of the batch costs (its width is
     * the pool's, its length the source's). */
    if (st == MKRT_OK && !b->levels && !(be->is_cpu_pool && b->plan.workers == 1))
        mkrt__plan_measured(&dp->planner, b, be->is_cpu_pool, mkrt__now_ns() - b->launched_ns);
    mkrt__plan_explain_batch(&dp->planner, b);
    mkrt__stage_complete(dp, b);
    *running = NULL;
    dp->batch_running = false;
}

/* ---- the dispatch token ---------------------------------------------
 * One thread at a time runs the loop's stages and owns the dispatcher-only
 * state (the batches, the stage scratch, the backends' calls): the holder
 * of dp->dispatch_token. The dispatcher thread holds it while it works and
 * gives it back only when it goes to sleep with nothing in flight
 * (dp->running == NULL); a thread waiting in mkrt_wait or mkrt_drain may
 * then take it and run the pending batches itself (mkrt__dispatch_help)
 * instead of sleeping until the dispatcher wakes: one CPU and no wake-up on
 * the round trip. A helper keeps to its caller's deadline: what it has not
 * finished by then (a batch running on the workers, the rest of a batch it
 * ran on its own thread, a batch drained and prepared) it leaves in
 * dp->running and dp->drained, and the dispatcher, woken by batch_left,
 * takes them over. The stages are the same whoever runs them, in the same
 * order, so the ordering contract and per-producer order do not depend on
 * which thread dispatches. */

/* The token's values: free, held by the dispatcher thread or a waiter
 * that helps, held by a pool thread (a roam, see below). */
enum { TOKEN_FREE, TOKEN_HELD, TOKEN_POOL };

static bool token_take_as(mkrt__dispatch *dp, uint32_t holder)
{
    uint32_t free_token = TOKEN_FREE;
    /* acquire: pairs with the release store in token_give: the previous
     * holder's writes to dispatcher-only state happen before ours. */
    return atomic_compare_exchange_strong_explicit(&dp->dispatch_token, &free_token, holder,
                                                   memory_order_acquire, memory_order_relaxed);
}

static bool token_take(mkrt__dispatch *dp)
{
    return token_take_as(dp, TOKEN_HELD);
}

static int work_or_leave(void *p);

/* worth of token_give's wake-up: work waits, or the dispatcher thread
 * has another reason to take the token: work_or_leave's reasons, read
 * from counters and flags only. The giver may be any thread, and only
 * the dispatcher thread may read the rings without the token (a closed
 * producer it retires is freed under it: mkrt__rings_empty here was a
 * use after free under TSan); the closed producers it must retire are
 * counted instead. acquire (published_total, the flags): pairs with the
 * publishers' and mkrt_destroy's release stores, and token_give's;
 * relaxed (completed_total, closed_unretired): hints, read after the
 * notify's fence. */
static bool give_worth(const void *p)
{
    mkrt__dispatch *dp = (mkrt__dispatch *)p;
    return atomic_load_explicit(&dp->producers->published_total, memory_order_acquire) !=
               atomic_load_explicit(&dp->completed_total, memory_order_relaxed) ||
           atomic_load_explicit(&dp->producers->closed_unretired, memory_order_relaxed) != 0 ||
           atomic_load_explicit(&dp->emission_left, memory_order_acquire) ||
           atomic_load_explicit(&dp->batch_left, memory_order_acquire) || sources_want(dp) || test_held(dp) ||
           test_dozing(dp) || atomic_load_explicit(&dp->producers->closing, memory_order_acquire) ||
           atomic_load_explicit(&dp->aborting, memory_order_acquire);
}

/* The token is free (what a taker needs to know is published with it). */
static void token_release(mkrt__dispatch *dp)
{
    /* release: pairs with the acquire in work_or_leave (the idle
     * dispatcher, without the token, wakes for work a helper left). */
    atomic_store_explicit(&dp->emission_left, mkrt__emission_pending(dp), memory_order_release);
    /* release: pairs with the acquire in work_or_leave, as above. */
    atomic_store_explicit(&dp->batch_left, dp->running != NULL || dp->drained != NULL, memory_order_release);
    /* release: pairs with the acquire CAS in token_take. */
    atomic_store_explicit(&dp->dispatch_token, TOKEN_FREE, memory_order_release);
}

static void token_give(mkrt__dispatch *dp)
{
    token_release(dp);
    /* The threads asleep for the token (the dispatcher thread; with a
     * roam, the pool's members) wake only if there is something to take
     * it for: otherwise the next publish wakes them (token_free_worth),
     * and a give after every batch of a round trip cost a futex call
     * each (runtime_bench p99 3-7 -> 27-37 us). The look runs after
     * notify_if's fence, which pairs with a publisher's: either it sees
     * the items, or the publisher sees the token free. */
    mkrt__waitq_notify_if(&dp->work_wq, give_worth, dp);
}

/* The dispatcher thread spins as the pool's member 0 and will take the
 * work it sees (not while a test keeps it deaf). relaxed: a hint, see
 * token_free_worth. */
static bool dispatcher_looks(mkrt__dispatch *dp)
{
    return atomic_load_explicit(&dp->serve_spinning, memory_order_relaxed) && !test_deaf(dp);
}

/* worth (base/waitq.h) of a publish's wake-up: the token is free, and
 * the dispatcher thread does not spin for it. While a thread holds it,
 * that thread drains what was published (it gives the token back only
 * after a drain that found nothing, and its give wakes the waitq where
 * work waits), and a spinning dispatcher thread sees the items itself;
 * so a publish does not wake the threads asleep there: with a roam those
 * are the pool's members, and a wake-up per publish cost the publisher a
 * futex call each and put a third spinner on two CPUs (runtime_bench's
 * single-item round trip p99: 3-7 us before the roam, 10-45 us with).
 * relaxed (both): read after notify_if's barrier, which pairs with the
 * giver's (token_give: its store, then the fence, then its look at the
 * rings) and with the fence of the dispatcher thread's arming (it clears
 * serve_spinning before it prepares to sleep, cpu_pool.c member_loop). */
static bool token_free_worth(const void *p)
{
    mkrt__dispatch *dp = (mkrt__dispatch *)p;
    return atomic_load_explicit(&dp->dispatch_token, memory_order_relaxed) == TOKEN_FREE && !dispatcher_looks(dp);
}

void mkrt__dispatch_notify_work(mkrt__dispatch *dp)
{
    mkrt__waitq_notify_if(&dp->work_wq, token_free_worth, dp);
}

static int token_taken(void *p)
{
    return token_take(p);
}

/* The dispatcher thread keeps looking (for work when idle, for the token
 * while a waiter helps) for up to MKRT__SPIN_BUDGET_NS, adapting, before
 * it sleeps: a producer that publishes to a sleeping dispatcher, or a
 * helper that gives the token back to one, pays a futex wake
 * (base/spin_wait.h has the measurements). Returns check's last value. */
static int dispatcher_spin(mkrt__dispatch *dp, mkrt__spin_budget *b, mkrt__wait_check check)
{
    return mkrt__spin_adaptive(b, check, dp, dp->cpus < 2 ? 0 : MKRT__SPIN_BUDGET_NS);
}

/* The dispatcher thread takes the token back (a helper gives it soon: it
 * runs at most the batches pending when it took it, and what follows). */
static void token_wait(mkrt__dispatch *dp)
{
    if (!dispatcher_spin(dp, &dp->token_spin, token_taken))
        mkrt__spin_then_sleep(&dp->work_wq, token_taken, dp, NULL);
}

/* The batch to launch next: the one drained earlier and left prepared (a
 * helper that ran out of time leaves it, dp->drained), or the free batch,
 * drained and prepared now. Returns its items (0: nothing to run). */
static size_t drain_next(mkrt__dispatch *dp, bool aborting)
{
    if (dp->drained != NULL)
        return dp->drained->n;
    mkrt__batch *b = &dp->batch[dp->cur];
    size_t n = aborting ? 0 : mkrt__stage_drain(dp, b);
    if (n > 0) {
        dp->drained = b;
        prepare_batch(dp, b, dp->running != NULL ? dp->running->appends : 0);
    }
    return n;
}

/* Finishes the running batch, then launches the drained one (if any).
 * until: a helper's deadline for the launch (UINT64_MAX: none). */
static void finish_and_launch(mkrt__dispatch *dp, uint64_t until)
{
    finish_running(dp, &dp->running);
    mkrt__batch *b = dp->drained;
    if (b == NULL)
        return;
    if (b->exec_n == 0) {
        mkrt__stage_complete(dp, b); /* everything pruned or refused */
        dp->drained = NULL;
        return;
    }
    launch_batch(dp, b, until);
    dp->drained = NULL;
    dp->running = b;
    dp->cur ^= 1;
}

/* One pass of the loop: drain into the free batch and prepare it, finish
 * the running one, launch the new one. Returns the items drained. */
static size_t dispatch_step(mkrt__dispatch *dp, bool aborting)
{
    size_t n = drain_next(dp, aborting);
    finish_and_launch(dp, UINT64_MAX);
    return n;
}

/* Whether the running batch is done by `until` (a helper's deadline); the
 * backend's wait then returns at once. A backend that cannot tell waits
 * in its wait (helpers run only on the CPU pool, which can). */
static bool settled(mkrt__dispatch *dp, uint64_t until)
{
    mkrt__backend *be = dp->backends[dp->running->plan.backend];
    return be->ops->settle == NULL || be->ops->settle(be, until);
}

/* The calling waiter's scratch in this runtime: its thread slot's (base/
 * rcu.h, taken by mkrt__rcu_thread_enter), made on first use; NULL when
 * it has no slot or memory. Token holder only. */
static mkrt__dispatch_scratch *helper_scratch(mkrt__dispatch *dp)
{
    int slot = mkrt__thread_slot();
    if (slot < 0)
        return NULL;
    if (dp->helper_scratch[slot] == NULL)
        dp->helper_scratch[slot] = mkrt__dispatch_scratch_create(NULL);
    return dp->helper_scratch[slot];
}

/* Shutdown or a test's hold: the token's holder that is not the
 * dispatcher thread stops between batches and gives it back. acquire:
 * pairs with the release stores of closing and aborting in mkrt_destroy. */
static bool leave_to_dispatcher(mkrt__dispatch *dp)
{
    return test_held(dp) || atomic_load_explicit(&dp->producers->closing, memory_order_acquire) ||
           atomic_load_explicit(&dp->aborting, memory_order_acquire);
}

/* A thread other than the dispatcher thread holds the token (a helping
 * waiter, or a pool thread, mkrt__dispatch_roam) and runs the
 * dispatcher's steps with its own scratch `mine` until *counter reaches
 * target (counter NULL: until nothing is pending), `until` passes, or
 * leave_to_dispatcher; then gives the token back. Returns whether it ran
 * anything. */
static bool run_held(mkrt__dispatch *dp, mkrt__dispatch_scratch *mine, _Atomic uint64_t *counter, uint64_t target,
                     uint64_t until)
{
    dp->scratch = mine;
    dp->helping = true; /* closed producers are the dispatcher thread's to free */
    bool ran = false;
    /* The same steps as the dispatcher's, with the caller's deadline: a
     * batch still running at the deadline is left running (the backend's
     * workers finish it), a batch drained meanwhile is left prepared
     * (dp->drained), and the batch launched here runs on this thread only
     * until the deadline, its rest on the workers (cpu_pool.c). The
     * dispatcher takes over what is left (batch_left, token_give), in the
     * same order: nothing is run twice or skipped. acquire: pairs with the
     * release stores of completion (complete.c). */
    while ((counter == NULL || atomic_load_explicit(counter, memory_order_acquire) < target) &&
           !leave_to_dispatcher(dp)) {
        size_t n = drain_next(dp, false);
        if (dp->running != NULL && !settled(dp, until))
            break; /* past the deadline */
        finish_and_launch(dp, until);
        if (n == 0)
            break; /* nothing pending: what it waits for is not published yet */
        ran = true;
        if (until != UINT64_MAX && mkrt__now_ns() >= until)
            break;
    }
    /* A batch it launched is finished here if it is done by the deadline
     * (so a helper whose items completed leaves nothing behind). */
    if (dp->running != NULL && dp->drained == NULL && settled(dp, until))
        finish_running(dp, &dp->running);
    dp->helping = false;
    dp->scratch = dp->own_scratch;
    token_give(dp); /* and wakes the dispatcher if it waits: it retires what was closed */
    return ran;
}

bool mkrt__dispatch_help(mkrt__dispatch *dp, _Atomic uint64_t *counter, uint64_t target, uint64_t until)
{
    /* Only the CPU pool: a device backend's calls belong to the thread
     * that set up its context. Not while a test holds the dispatcher, nor
     * once shutdown began (the dispatcher finishes alone), nor past the
     * caller's deadline. relaxed on the token: a hint before the CAS that
     * decides. */
    if (!dp->cpu_only || atomic_load_explicit(&dp->dispatch_token, memory_order_relaxed) != TOKEN_FREE ||
        leave_to_dispatcher(dp) || (until != UINT64_MAX && mkrt__now_ns() >= until) || !token_take(dp))
        return false;
    /* The plan stage reads the plan cache as an RCU reader: register this
     * thread with liburcu now (once per thread; undone at its exit). */
    mkrt__rcu_thread_enter();
    /* This thread's own dedupe scratch (pipeline/scratch.h), by its slot,
     * made at its first help: without one (no slot, or out of memory) it
     * does not help, and the dispatcher does the work. */
    mkrt__dispatch_scratch *mine = helper_scratch(dp);
    if (mine == NULL) {
        token_give(dp);
        return false;
    }
    return run_held(dp, mine, counter, target, until);
}

/* ---- the token taken by a pool thread (backend.h, mkrt__roam) --------
 * In a runtime without a device the CPU pool's threads are the token's
 * other takers: one with nothing of a batch to run (between batches, or
 * spinning for the next launch) that finds the token free and work
 * waiting takes it and runs the dispatcher's steps itself, as a helping
 * waiter does but without a deadline, until nothing is pending; its
 * launches run on the other members of the pool, the dispatcher thread
 * among them (it serves as one while it does not hold the token,
 * await_token). So the thread that is free plans: no wake-up of a
 * sleeping dispatcher on the way from a publish to a launch, and never a
 * thread asleep while another plans what it could run. */

/* Any pool thread, without the token: the token is free, the dispatcher
 * thread does not spin for work (it takes what it sees: two takers
 * racing for each item cost the round trip its tail), and items wait
 * in the rings, emitted work or a batch a helper left waits, or a made
 * source wants a look. Not during shutdown or a test's hold or doze (the
 * dispatcher thread, or a waiter, acts then). relaxed (token): a hint
 * before the CAS that decides. acquire: pairs with the publishers'
 * release of published_total and token_give's release stores. relaxed
 * (completed_total): the holder's count, a hint (with the token free,
 * items published and not completed wait in a ring). */
static int roam_want(void *p)
{
    mkrt__dispatch *dp = p;
    if (atomic_load_explicit(&dp->dispatch_token, memory_order_relaxed) != TOKEN_FREE || dispatcher_looks(dp) ||
        leave_to_dispatcher(dp) || test_dozing(dp))
        return 0;
    return atomic_load_explicit(&dp->producers->published_total, memory_order_acquire) !=
               atomic_load_explicit(&dp->completed_total, memory_order_relaxed) ||
           atomic_load_explicit(&dp->emission_left, memory_order_acquire) ||
           atomic_load_explicit(&dp->batch_left, memory_order_acquire) || sources_want(dp);
}

static bool roam_take(void *p)
{
    return token_take_as(p, TOKEN_POOL);
}

/* A pool thread holds the token: it dispatches with its own scratch (by
 * its thread slot, as a helper's) until nothing is pending. Without a
 * slot or memory for the scratch it gives the token back and says so
 * (false): it then asks no more, and the dispatcher thread or another
 * pool thread dispatches. */
static bool roam_run(void *p)
{
    mkrt__dispatch *dp = p;
    mkrt__rcu_thread_enter(); /* the plan cache's reads (as in mkrt__dispatch_help) */
    mkrt__dispatch_scratch *mine = helper_scratch(dp);
    if (mine == NULL) {
        token_give(dp);
        return false;
    }
#ifdef MKRT_TEST_HOOKS
    /* relaxed: a test's count, read after the items completed (their
     * completion's release/acquire orders it). */
    atomic_fetch_add_explicit(&dp->hooks.roams, 1, memory_order_relaxed);
#endif
    (void)run_held(dp, mine, NULL, 0, UINT64_MAX);
    return true;
}

const mkrt__roam *mkrt__dispatch_roam(mkrt__dispatch *dp)
{
    dp->roam = (mkrt__roam){&dp->work_wq, &dp->serve_spinning, roam_want, roam_take, roam_run, dp};
    return &dp->roam;
}

#ifdef MKRT_TEST_HOOKS
static int released_or_aborting(void *p)
{
    mkrt__dispatch *dp = p;
    return !test_held(dp) || atomic_load_explicit(&dp->aborting, memory_order_acquire);
}

/* release: pairs with the acquire load of parked in the hook's setter
 * (runtime/test_hooks.c), which then reads what the batches before the
 * park wrote (stats, last_plan). */
static void set_parked(mkrt__dispatch *dp, bool parked)
{
    atomic_store_explicit(&dp->hooks.parked, parked, memory_order_release);
}

/* Test hook: park between batches while held (see runtime/test_hooks.h). */
static void park_while_held(mkrt__dispatch *dp)
{
    if (released_or_aborting(dp))
        return;
    finish_running(dp, &dp->running);
    set_parked(dp, true);
    mkrt__waitq_notify(&dp->done_wq);
    mkrt__spin_then_sleep(&dp->work_wq, released_or_aborting, dp, NULL);
    set_parked(dp, false);
    dp->rr = 0;
}

static int awake_or_aborting(void *p)
{
    mkrt__dispatch *dp = p;
    return !test_dozing(dp) || atomic_load_explicit(&dp->aborting, memory_order_acquire);
}

/* Test hook: park without the token while dozing (runtime/test_hooks.h). */
static void doze_while_asked(mkrt__dispatch *dp)
{
    if (awake_or_aborting(dp))
        return;
    finish_running(dp, &dp->running);
    token_give(dp);
    set_parked(dp, true);
    mkrt__waitq_notify(&dp->done_wq);
    await_token(dp, awake_or_aborting);
    set_parked(dp, false);
}
#endif

/* Any thread: a made source has work the dispatcher has not seen. */
static bool sources_want(mkrt__dispatch *dp)
{
    for (uint32_t i = 0; i < dp->nsources; i++)
        if (dp->sources[i]->wants != NULL && dp->sources[i]->wants(dp->sources[i]->ctx))
            return true;
    return false;
}

#ifdef MKRT_TEST_HOOKS
bool mkrt__dispatch_token_held(mkrt__dispatch *dp)
{
    /* relaxed: a test's poll; the token's own release and acquire order
     * what it guards. */
    return atomic_load_explicit(&dp->dispatch_token, memory_order_relaxed) == TOKEN_HELD;
}

/* Test hook: while deaf, the dispatcher thread gives the token back at
 * the next batch boundary and waits as a member (await_token's check
 * keeps it from taking the token again, but to shut down). */
static void give_while_deaf(mkrt__dispatch *dp)
{
    if (!test_deaf(dp) || !dp->cpu_only || atomic_load_explicit(&dp->producers->closing, memory_order_acquire) ||
        atomic_load_explicit(&dp->aborting, memory_order_acquire))
        return;
    finish_running(dp, &dp->running);
    token_give(dp);
    await_token(dp, work_or_leave);
}
#endif

static int work_or_leave(void *p)
{
    mkrt__dispatch *dp = p;
    /* acquire: pairs with the release stores of closing and aborting, and
     * of emission_left and batch_left in token_give. Not mkrt__emission_pending: the
     * caller does not hold the token (a helper may be changing that state). */
    return !mkrt__rings_empty(dp) || sources_want(dp) ||
           atomic_load_explicit(&dp->emission_left, memory_order_acquire) ||
           atomic_load_explicit(&dp->batch_left, memory_order_acquire) ||
           test_held(dp) || test_dozing(dp) ||
           atomic_load_explicit(&dp->producers->closing, memory_order_acquire) ||
           atomic_load_explicit(&dp->aborting, memory_order_acquire);
}

/* What the dispatcher thread waits for before it takes the token back,
 * with the token free. */
typedef struct token_check {
    mkrt__dispatch *dp;
    int (*leave)(void *dp); /* NULL: nothing more */
} token_check;

/* Work waits, and the token is free or held by a waiter that helps (it
 * gives it back within its round trip). Not while a pool thread holds
 * it: the dispatcher thread then spins for that thread's launches, and
 * sleeps once its budget ran out. A spin that ended because a helping
 * waiter took the token first does not run out (its budget would halve,
 * and every later round trip pay for the sleep and the wake-up: the p99
 * went from 3-5 to 10-60 us). The CAS decides. relaxed (token): a hint.
 * A deaf dispatcher (test hook) takes it only to shut down. */
static int wanted(void *p)
{
    const token_check *c = p;
    return atomic_load_explicit(&c->dp->dispatch_token, memory_order_relaxed) != TOKEN_POOL &&
           (c->leave == NULL ||
            ((!test_deaf(c->dp) || atomic_load_explicit(&c->dp->producers->closing, memory_order_acquire) ||
              atomic_load_explicit(&c->dp->aborting, memory_order_acquire)) &&
             c->leave(c->dp)));
}

/* The dispatcher thread, without the token, waits until leave(dp) (NULL:
 * at once) and takes it back. In a runtime whose pool's threads take the
 * token (a roam), it waits as a member of the pool (backend.h, serve):
 * it runs its share of what the token's holder of the moment launches. */
static void await_token(mkrt__dispatch *dp, int (*leave)(void *dp))
{
    mkrt__backend *pool = mkrt__backends_cpu_pool(dp->backends, dp->nbackends);
    if (dp->cpu_only && pool->ops->serve != NULL) { /* cpu_only: the pool has our roam (lifecycle.c) */
        token_check c = {dp, leave};
        pool->ops->serve(pool, wanted, &c, &dp->idle_spin, dp->cpus < 2 ? 0 : MKRT__SPIN_BUDGET_NS);
        return;
    }
    if (leave != NULL && !dispatcher_spin(dp, &dp->idle_spin, leave))
        mkrt__spin_then_sleep(&dp->work_wq, leave, dp, NULL);
    token_wait(dp);
}

/* The dispatcher thread gives the token back, idle. Where it then spins
 * as the pool's member 0 (a roam, 2 CPUs or more), it looks at the work
 * itself: it says it spins before the token is free, so that neither a
 * publish in between (token_free_worth) nor the give wakes the pool's
 * members, which on the way from one single-item round trip to the next
 * cost a futex call each and a third thread on two CPUs (runtime_bench's
 * p99 3-5 -> 10-13 us, about 5,000 futex calls per 20,000 round trips
 * against 40 before the roam). relaxed (the flag): the token's release
 * store below orders it before the token is seen free; member_loop
 * clears it before it prepares to sleep, and then looks again. */
static void idle_give(mkrt__dispatch *dp)
{
    const mkrt__backend *pool = mkrt__backends_cpu_pool(dp->backends, dp->nbackends);
    if (dp->cpu_only && pool->ops->serve != NULL && dp->cpus >= 2) {
        atomic_store_explicit(&dp->serve_spinning, true, memory_order_relaxed);
        token_release(dp);
        return;
    }
    token_give(dp);
}

int mkrt__dispatcher_main(void *arg)
{
    mkrt__dispatch *dp = arg;
    await_token(dp, NULL);
    for (;;) {
#ifdef MKRT_TEST_HOOKS
        park_while_held(dp);
        doze_while_asked(dp);
        give_while_deaf(dp);
#endif
        bool aborting = atomic_load_explicit(&dp->aborting, memory_order_acquire);
        if (dispatch_step(dp, aborting) > 0)
            continue;
        if (aborting) {
            mkrt__stage_fail_remaining(dp, &dp->batch[dp->cur]);
            break;
        }
        /* acquire: pairs with the release stores of closing and sealed in
         * mkrt_destroy (sealed: no publish is inside, and their pushes are
         * visible to the ring loads below). */
        bool closing = atomic_load_explicit(&dp->producers->closing, memory_order_acquire);
        bool sealed = atomic_load_explicit(&dp->producers->sealed, memory_order_acquire);
        bool pending = mkrt__emission_pending(dp);
        /* relaxed: emitted_total is this thread's. */
        if (sealed && !pending &&
            mkrt__load_relaxed(&dp->completed_total) ==
                atomic_load_explicit(&dp->producers->published_total, memory_order_acquire) &&
            mkrt__load_relaxed(&dp->state->emitted_done) == mkrt__load_relaxed(&dp->state->emitted_total) &&
            mkrt__rings_empty(dp))
            break;
        if (pending)
            continue;
        if (!closing) {
            /* Idle, nothing in flight: a waiter or a pool thread may
             * dispatch meanwhile. */
            idle_give(dp);
            await_token(dp, work_or_leave);
        } else {
            /* closing with items still in flight elsewhere: nap briefly */
            struct timespec ts;
            uint32_t e = mkrt__waitq_prepare(&dp->work_wq);
            if (mkrt__rings_empty(dp))
                mkrt__waitq_sleep(&dp->work_wq, e, mkrt__deadline(1000000, &ts));
            mkrt__waitq_finish(&dp->work_wq);
        }
    }
    /* The token stays taken: no waiter dispatches after the dispatcher
     * stopped. release: pairs with the acquire in mkrt_destroy. */
    atomic_store_explicit(&dp->stopped, true, memory_order_release);
    mkrt__waitq_notify(&dp->done_wq);
    return 0;
}
