/* SPDX-License-Identifier: BSD-2-Clause */
/* src/backend/cpu_levels.c - the CPU pool's runs of levels: a traversal
 * run level after level inside the pool's loop, by a team of the
 * threads that joined it. */
#include "backend/pool_state.h"

/* Runs of levels (batch.h, levels; plan/source.h, part and next_level).
 * A made source's run of several levels runs inside the workers' loop,
 * the way the device kernel runs a traversal: every participant claims
 * parts of the open level from the source until none is left, then
 * arrives at the barrier; its last arriver (any of them) asks the
 * dispatcher's rule whether other work waits (b->yield, DRAIN) and lets
 * the source end the level and open the next (next_level), then releases
 * the others into it, or out of the run. A level transition is one
 * barrier: no wake-up of the dispatcher, no pass of its stages. */

/* A run of levels has a team: the threads that entered it. The holder
 * that launches it is in it from the launch (a helper with a deadline
 * leaves at the first level's end past it); a pool thread, or the
 * token's next holder, joins with one CAS on `entry` while a level is
 * open (its entered count; the low bits count the level's arrivals), at
 * whatever level that is, and stays to the run's end. A level's barrier
 * waits for the team only, never for a pool thread that has not come
 * (asleep, or waiting for a CPU beside the application's threads): the
 * arrival that makes arrived equal entered also closes the level in the
 * same CAS, so no thread joins while its last arriver moves the source
 * to the next level. That arriver moves `generation`, then reopens the
 * word with no arrivals (the team goes on whole into the next level) or
 * marks it ENDED. In that order: a thread that joins the reopened level
 * (its CAS reads the reopened word) then reads the moved generation when
 * it arrives; with the word stored first, a joiner could arrive with the
 * generation of the level before, take the move for its own level's end
 * and run its parts again beside the last arriver's move to the next
 * level (TSan saw that race on x.pull, round.c). A waiter therefore waits
 * for the generation to move and then for the word to leave the closed
 * level (level_over), and a joiner that finds the level closed waits for
 * the word to change (word_moved). A waiter reads whether it goes on from
 * the word, not from a field a later run rewrites: the run is over when
 * the word is ENDED or names a later launch. The last arriver of the
 * last level completes the batch: no one reads it after arriving there,
 * and no one enters an ended run.
 *
 * A level barrier's waiter waits for threads it knows run (the team's
 * others), so where the CPUs hold every executor it spins the
 * pool's whole cap every time, then sleeps: no adaptive budget. One
 * (spin_wait.h) halves on every spin that runs out, and the last
 * arriver's row of levels run alone makes the wait outlast it on purpose:
 * after a few such rows the waiters of the next wide levels slept at
 * once, each woken by a futex call (bench/results/megakernel.md: 550 ->
 * 2200 calls a run). The spin yields between slices of
 * LEVEL_SPIN_SLICE_NS: where the machine is busier than the affinity mask
 * says, the thread it waits for may be waiting for this CPU, and a spin
 * that kept it would lose its whole time slice (measured at a load of 7
 * on 2 CPUs: graph_bench's BFS and SSSP 1.1-2x slower without the yields,
 * bench/results/megakernel.md). Where the
 * CPUs do not hold every executor the cap is 0: no spin. */
#define LEVEL_SPIN_SLICE_NS 20000u

static bool level_spin(mkrt__cpu_pool *pool, mkrt__wait_check check, void *c)
{
    for (uint64_t spun = 0; spun < pool->spin_cap_ns; spun += LEVEL_SPIN_SLICE_NS) {
        if (mkrt__spin_for(check, c, LEVEL_SPIN_SLICE_NS))
            return true;
        mkrt__thread_yield();
    }
    return check(c) != 0;
}

static void level_wait(mkrt__cpu_pool *pool, mkrt__wait_check check, void *c)
{
    if (!level_spin(pool, check, c))
        mkrt__spin_then_sleep(&pool->barrier_wq, check, c, NULL);
}

/* Whether the run of levels launched as `launch` goes on, by its word. */
static bool level_goes_on(uint64_t w, uint32_t launch)
{
    return (uint32_t)(w >> 32) == launch && (w & MKRT__CPU_ENTRY_ENDED) == 0;
}

/* A team member that arrived at a level, not last: the generation it
 * read before arriving, and the run's launch. */
typedef struct level_check {
    mkrt__cpu_gen_check gen;
    uint32_t launch;
} level_check;

/* The member's level is over: the generation moved, and the word left
 * the closed level (reopened, ENDED, or a later launch). The word is
 * stored right after the generation (see above), and the next level
 * cannot close without this member's arrival. */
static int level_over(void *p)
{
    const level_check *c = p;
    if (!mkrt__cpu_generation_moved((void *)&c->gen))
        return 0;
    /* relaxed: the generation's acquire ordered the last arriver's
     * writes of the level; the word is only looked at. */
    const uint64_t w = atomic_load_explicit(&c->gen.pool->entry, memory_order_relaxed);
    return !level_goes_on(w, c->launch) || (w & MKRT__CPU_ENTRY_OPEN) != 0;
}

/* A joiner that found the level closed: the word it read. */
typedef struct word_check {
    mkrt__cpu_pool *pool;
    uint64_t word;
} word_check;

/* The word changed: a closed level's word changes only when its last
 * arriver reopens it or marks it ENDED, or a later launch replaces it. */
static int word_moved(void *p)
{
    const word_check *c = p;
    /* relaxed: the joiner's CAS (acquire) re-reads it. */
    return atomic_load_explicit(&c->pool->entry, memory_order_relaxed) != c->word;
}

/* A thread joins the run of levels launched as `launch` (true), or finds
 * it over (false: it never reads the batch). A level that is closed (its
 * last arriver opens the next) is waited for, until `until` (UINT64_MAX:
 * none; false once it passed). */
bool mkrt__cpu_levels_join(mkrt__cpu_pool *pool, uint32_t launch, uint64_t until)
{
    if (until != UINT64_MAX && mkrt__now_ns() >= until)
        return false; /* it would leave at the level's end */
    for (;;) {
        /* relaxed: the CAS re-checks it. */
        uint64_t w = atomic_load_explicit(&pool->entry, memory_order_relaxed);
        while (level_goes_on(w, launch) && (w & MKRT__CPU_ENTRY_OPEN) != 0)
            /* acquire on success: pairs with the release store that
             * opened the level (publish, or the last arriver's reopen):
             * the batch and the source's level. relaxed on failure: w is
             * only looked at again. */
            if (atomic_compare_exchange_weak_explicit(&pool->entry, &w, w + MKRT__CPU_ENTRY_ONE, memory_order_acquire,
                                                      memory_order_relaxed))
                return true;
        if (!level_goes_on(w, launch))
            return false;
        word_check c = {pool, w};
        struct timespec ts;
        const struct timespec *deadline = mkrt__cpu_deadline(until, &ts);
        if (deadline == NULL)
            level_wait(pool, word_moved, &c);
        else if (mkrt__spin_then_sleep(&pool->barrier_wq, word_moved, &c, deadline) == 0)
            return false;
    }
}

/* The parts of the open level this thread takes, until none is left;
 * returns how many it ran (units, mkrt_stats.units_run). */
static uint64_t run_parts(mkrt__cpu_pool *pool, mkrt__batch *b)
{
    const mkrt__source *s = b->source;
    uint64_t n = 0;
#ifdef MKRT_TEST_HOOKS
    atomic_fetch_add(&pool->in_parts, 1); /* seq_cst: a test's check, nothing rides on it */
#endif
    while (s->part(s->ctx, &b->exec[0], &pool->fails))
        n++;
#ifdef MKRT_TEST_HOOKS
    atomic_fetch_sub(&pool->in_parts, 1);
#endif
    return n;
}

/* The level's end: the source moves to the next level (next_level). The
 * test build checks the barrier's promise first: no thread is inside
 * the level's parts now (mkrt__cpu_pool_level_overlaps). */
static bool end_level(mkrt__cpu_pool *pool, mkrt__batch *b, bool *alone)
{
#ifdef MKRT_TEST_HOOKS
    if (atomic_load(&pool->in_parts) != 0)
        atomic_fetch_add(&pool->level_overlaps, 1);
#else
    (void)pool;
#endif
    const mkrt__source *s = b->source;
    return s->next_level(s->ctx, &b->exec[0], b->yield != NULL && b->yield(b->yield_ctx), alone);
}

/* Test build: the last arriver's pause between the generation and the
 * word (mkrt__cpu_pool_reopen_gap), which widens the window a joiner of
 * the reopened level would race in. */
static void reopen_gap(mkrt__cpu_pool *pool)
{
#ifdef MKRT_TEST_HOOKS
    /* relaxed: set by the test between runs, or at any time; a late look
     * is harmless. */
    const uint64_t ns = atomic_load_explicit(&pool->reopen_gap_ns, memory_order_relaxed);
    if (ns != 0) {
        const uint64_t until = mkrt__now_ns() + ns;
        while (mkrt__now_ns() < until)
            mkrt__thread_yield();
    }
#else
    (void)pool;
#endif
}

/* The barrier after a level, over the run's team (solo: this thread is
 * the pool's only executor, and nothing is counted), where this thread
 * ran `ran` parts of the level (planning: as the token's holder); returns
 * whether this thread goes on in the run. A member past its deadline (`until`) leaves
 * the team instead of arriving: it waits for no one, and if its leaving
 * ends the level it does the last arriver's part first. A run whose team
 * is empty waits for the next thread to join (the token's next holder). */
static bool level_barrier(mkrt__cpu_pool *pool, mkrt__batch *b, uint64_t ran, bool planning, bool solo,
                          uint64_t until)
{
    /* Counted before arriving: the last arriver may end the traversal. */
    mkrt__cpu_units_add(pool, ran, planning);
    /* acquire: as in cpu_pool.c's barrier(): see the generation before
     * arriving, so that a fast member already past it is not taken for
     * the next level's. */
    level_check c = {{pool, atomic_load_explicit(&pool->generation, memory_order_acquire)}, 0};
    uint64_t w = 0;
    bool leave = false;
    if (!solo) {
        /* relaxed: the CAS re-checks it. */
        w = atomic_load_explicit(&pool->entry, memory_order_relaxed);
        const uint32_t launch = (uint32_t)(w >> 32);
        leave = until != UINT64_MAX && mkrt__now_ns() >= until;
        uint64_t next;
        do {
            next = leave ? w - MKRT__CPU_ENTRY_ONE : w + 1;
            if (mkrt__cpu_entry_finished(next) == mkrt__cpu_entry_entered(next))
                next &= ~MKRT__CPU_ENTRY_OPEN; /* the last arrival closes the level */
            /* acq_rel: the release half publishes this thread's parts to
             * the last arriver; the acquire half gives the last arriver
             * everyone's (their arrivals head the sequence it reads). */
        } while (!atomic_compare_exchange_weak_explicit(&pool->entry, &w, next, memory_order_acq_rel,
                                                        memory_order_relaxed));
        if ((next & MKRT__CPU_ENTRY_OPEN) != 0) {
            if (leave)
                return false;
            c.launch = launch;
            level_wait(pool, level_over, &c);
            /* relaxed: level_over saw the last arriver's word (the
             * generation's acquire ordered its writes of the level). */
            return level_goes_on(atomic_load_explicit(&pool->entry, memory_order_relaxed), launch);
        }
        w = next;
    }
    bool alone = false;
    bool go = end_level(pool, b, &alone);
    /* A level too small to share runs here, the others left waiting. */
    while (go && alone && !solo && mkrt__cpu_entry_entered(w) > 1) {
        mkrt__cpu_units_add(pool, run_parts(pool, b), planning);
        go = end_level(pool, b, &alone);
    }
    if (solo)
        return go;
    /* The generation first, then the word (see above: a joiner of the
     * reopened level must read the moved generation).
     * release: pairs with the acquire loads in mkrt__cpu_generation_moved. */
    atomic_store_explicit(&pool->generation, c.gen.gen + 1, memory_order_release);
    reopen_gap(pool);
    /* release: pairs with a joiner's acquire CAS (the next level's state
     * the source wrote, and the generation). The word is closed and every
     * member arrived: no other thread writes it now. */
    const uint64_t reopened = (w & ~MKRT__CPU_ENTRY_FINISHED_MASK) | MKRT__CPU_ENTRY_OPEN;
    atomic_store_explicit(&pool->entry, go ? reopened : w | MKRT__CPU_ENTRY_ENDED, memory_order_release);
    mkrt__waitq_notify(&pool->barrier_wq);
    if (!go)
        mkrt__cpu_batch_complete(pool); /* every member arrived: none reads the batch again */
    return go && !leave;
}

/* One member of a run of levels' team, until the run ends or, past
 * `until` (UINT64_MAX: none), it leaves at a level's end. */
void mkrt__cpu_levels_run(mkrt__cpu_pool *pool, mkrt__batch *b, uint64_t until, bool planning)
{
    while (level_barrier(pool, b, run_parts(pool, b), planning, false, until))
        ;
}

/* A run of levels on this thread alone (a pool of one executor), before
 * `until` (UINT64_MAX: none): it looks at the clock between parts and,
 * once it passed, stops there; the source's cursors keep where the rest
 * begins (cpu_settle or cpu_wait runs it). Returns whether the run ended. */
bool mkrt__cpu_levels_run_alone(mkrt__cpu_pool *pool, mkrt__batch *b, uint64_t until, bool planning)
{
    const mkrt__source *s = b->source;
    uint64_t ran = 0;
    for (;;) {
        if (until != UINT64_MAX && mkrt__now_ns() >= until) {
            mkrt__cpu_units_add(pool, ran, planning);
            return false;
        }
        if (s->part(s->ctx, &b->exec[0], &pool->fails)) {
            ran++;
            continue;
        }
        if (!level_barrier(pool, b, ran, planning, true, UINT64_MAX))
            return true;
        ran = 0;
    }
}
