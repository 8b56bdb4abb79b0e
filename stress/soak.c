/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/soak.c - a long-running soak of the runtime, with fault injection
 * and exact accounting.
 *
 * Rounds until --seconds are up. Each round creates a runtime (backends
 * rotate CPU / SIM; SIM with a 200 ms watchdog), registers four user ops
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
 * short destroy timeout.
 * Faults: one mkrt_allocator installed at start wraps aligned_alloc/free
 * and fails with a probability raised during storm windows (MKRT_ENOMEM
 * from create/open is counted and retried, never an error); on SIM, a
 * device hang is injected now and then (mkrt__runtime_device_hang, before
 * any layer runs) and must trip the watchdog: the batch's items go to the
 * error callback, the runtime carries on on the CPU.
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
 * Between rounds (no runtime alive): the allocator's outstanding blocks
 * and bytes, the open fds and the threads return to their values after
 * the first round. RSS is sampled all along: after the warm-up (20% of the
 * run or 10 s, whichever is larger, and at least one round) it may grow by
 * max(16 MiB, 25%) at most.
 *
 * Under a sanitizer the RSS bound is reported, not judged. A main thread
 * that makes no progress for 120 s is reported as a hang (FAIL).
 *
 * A progress line every --progress seconds; a SUMMARY line with the
 * verdict at the end; exit 1 on FAIL, 2 on bad usage. Deterministic given
 * --seed except for thread timing. --sabotage plants one defect of a given
 * kind in the soak itself (a duplicated run, a lost failure report, a lost
 * log entry, an fd, thread or block leak, RSS growth), to show that the
 * checks catch it: each must end in FAIL.
 *
 *   soak [--seconds N] [--progress S] [--producers N] [--seed N]
 *        [--backend cpu|sim|both] [--no-alloc-faults] [--verbose]
 *        [--sabotage KIND] [--help]
 *
 * Threads are POSIX threads, not C11 <threads.h>: the ThreadSanitizer of
 * this toolchain (gcc 12, clang 14 with glibc 2.36) does not intercept
 * thrd_create (the new thread crashes in __tsan_func_entry) nor mtx_*
 * (glibc's internal pthread calls are invisible to it), and the soak must
 * run under `make tsan`.
 */
#include <dirent.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mkrt/alloc.h"
#include "mkrt/runtime.h"
#include "../src/runtime/runtime_internal.h" /* mkrt__runtime_hold, mkrt__runtime_device_hang */
#include "stress_util.h"

/* Under a sanitizer RSS measures its shadow memory and quarantine: the
 * growth bound is reported, not judged. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SOAK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SOAK_SANITIZED 1
#endif
#endif
#ifndef SOAK_SANITIZED
#define SOAK_SANITIZED 0
#endif

/* ---- layout ---------------------------------------------------------- */

#define MAX_PRODUCERS 16
#define SLOT_STRIDE 32                          /* cells per producer slot */
#define ACC_N 8                                 /* base + 0..7: accumulate cells */
#define MAXC_OFF 8                              /* base + 8..11: MAX cells */
#define MAXC_N 4
#define STORE_OFF 12                            /* base + 12: STORE cell */
#define APPEND_OFF 13                           /* base + 13: APPEND handle */
#define TRACKED (MAX_PRODUCERS * SLOT_STRIDE)   /* cells with shadows */
#define PROBE_CELL TRACKED                      /* the hang probe's cell */
#define CELLS 1024
#define BAD_HANDLE (CELLS + 7)
#define OP_ACC 16
#define OP_MAX 17
#define OP_FAIL 18
#define OP_SLOW 19
#define OP_UNKNOWN 999
#define CUSTOM_STATUS ((mkrt_status)-77)
#define APPEND_MAX 65536u  /* APPEND sequence numbers per slot per round (16 bits) */
#define MAX_SESSIONS 4096u /* sessions per slot per round (param bits 16..27) */
#define BATCH_MAX 64
#define SEC_NS 1000000000ull
#define LONG_NS (30 * SEC_NS) /* "forever" for waits, drains and destroys */
#define HANG_TIMEOUT_S 120    /* no progress this long: the soak reports a hang */

/* ---- options and global counters -------------------------------------- */

/* --sabotage: plant one defect of the kind the soak must catch, to show
 * that it does (each must end in FAIL). */
enum {
    SAB_NONE,
    SAB_DOUBLE_RUN,   /* the ACC op runs one item twice */
    SAB_LOST_FAILURE, /* one failure report is ignored */
    SAB_LOST_ENTRY,   /* one consumed log entry is ignored */
    SAB_LEAK_FD,      /* an fd left open after a round */
    SAB_LEAK_THREAD,  /* a thread left running after a round */
    SAB_LEAK_ALLOC,   /* a block of the mkrt allocator never freed */
    SAB_RSS,          /* 64 MiB touched and kept after the warm-up */
};
static const char *const sabotage_names[] = {"none",       "double-run",  "lost-failure", "lost-entry",
                                             "leak-fd",    "leak-thread", "leak-alloc",   "rss", NULL};

static struct {
    unsigned seconds, progress, producers;
    uint64_t seed;
    bool cpu, sim, alloc_faults, verbose;
    int sabotage;
} opt = {60, 5, 4, 1, true, true, true, false, SAB_NONE};
static _Atomic bool sabotage_done;

/* True once: the planted defect fires. */
static bool sabotage(int kind)
{
    return opt.sabotage == kind && !atomic_load(&sabotage_done) && !atomic_exchange(&sabotage_done, true);
}

static uint64_t t_start;
static _Atomic uint64_t g_items;           /* items accepted by publish calls */
static _Atomic uint64_t g_runtimes, g_rounds_done, g_race_rounds, g_sim_rounds;
static _Atomic uint64_t g_enomem_retries, g_eagain_retries, g_backpressure;
static _Atomic uint64_t g_hangs_injected, g_watchdog_trips, g_stray_trips;
static _Atomic uint64_t g_errors;
static _Atomic uint64_t g_executed, g_pruned, g_failed, g_callbacks;
static _Atomic uint64_t g_appends_consumed, g_append_overflows, g_destroy_timeouts;
static _Atomic uint64_t g_mid_checks, g_sessions;
static _Atomic uint64_t g_heartbeat_ns;     /* main thread: last sign of progress */
static _Atomic(const char *) g_phase = "start";
static _Atomic unsigned g_round_index;

/* Errors: counted, the first ones printed with the round to reproduce. */
__attribute__((format(printf, 1, 2))) static void soak_error(const char *fmt, ...);
static void soak_error(const char *fmt, ...)
{
    uint64_t n = atomic_fetch_add(&g_errors, 1);
    if (n >= 30) {
        if (n == 30)
            fprintf(stderr, "soak: further errors are counted, not printed\n");
        return;
    }
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "soak: ERROR round %u (--seed %llu): %s\n", atomic_load(&g_round_index),
            (unsigned long long)opt.seed, msg);
}

static void heartbeat(const char *phase)
{
    atomic_store(&g_phase, phase);
    atomic_store(&g_heartbeat_ns, stress_now_ns());
}

static void nap_us(unsigned us)
{
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000};
    nanosleep(&ts, NULL);
}

/* ---- deterministic random numbers (splitmix64) ------------------------ */

static uint64_t rnd_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint32_t rnd_below(uint64_t *s, uint32_t n)
{
    return (uint32_t)(rnd_next(s) % n);
}

static uint64_t rnd_seed(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t s = a ^ 0x5DEECE66Dull;
    rnd_next(&s);
    s ^= b * 0xD6E8FEB86659FD93ull;
    rnd_next(&s);
    s ^= c * 0xA0761D6478BD642Full;
    return rnd_next(&s);
}

/* ---- the allocator: aligned_alloc/free, failures on demand ------------ */

static _Atomic uint32_t g_fail_ppm;   /* failure probability, parts per million */
static _Atomic uint64_t g_alloc_calls, g_alloc_injected;
static _Atomic int64_t g_alloc_live, g_alloc_bytes;

static void *soak_alloc(size_t size, size_t align, void *ctx)
{
    (void)ctx;
    /* relaxed: a knob; a storm that starts a little late changes nothing. */
    uint32_t ppm = atomic_load_explicit(&g_fail_ppm, memory_order_relaxed);
    /* relaxed: a ticket for the failure decision, no ordering needed. */
    uint64_t n = atomic_fetch_add_explicit(&g_alloc_calls, 1, memory_order_relaxed);
    if (ppm != 0 && rnd_seed(opt.seed, n, 0xA110C) % 1000000u < ppm) {
        /* relaxed: a statistic. */
        atomic_fetch_add_explicit(&g_alloc_injected, 1, memory_order_relaxed);
        return NULL;
    }
    if (align < sizeof(void *))
        align = sizeof(void *);
    size_t rounded = (size + align - 1) & ~(align - 1);
    if (rounded < size)
        return NULL;
    void *p = aligned_alloc(align, rounded);
    if (p != NULL) {
        /* relaxed: leak tallies, read when no runtime exists (every
         * library thread joined: the joins order them). */
        atomic_fetch_add_explicit(&g_alloc_live, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&g_alloc_bytes, (int64_t)size, memory_order_relaxed);
    }
    return p;
}

static void soak_free(void *ptr, size_t size, void *ctx)
{
    (void)ctx;
    if (ptr == NULL)
        return;
    free(ptr);
    /* relaxed: as in soak_alloc. */
    atomic_fetch_sub_explicit(&g_alloc_live, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&g_alloc_bytes, (int64_t)size, memory_order_relaxed);
}

static void set_fail_ppm(uint32_t ppm)
{
    atomic_store(&g_fail_ppm, opt.alloc_faults ? ppm : 0);
}

/* ---- /proc: RSS, fds, threads ------------------------------------------ */

static pthread_mutex_t proc_lock = PTHREAD_MUTEX_INITIALIZER; /* the monitor's /proc reads open fds: not while counting them */

static uint64_t rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, resident = 0;
    if (f != NULL) {
        if (fscanf(f, "%llu %llu", &size, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory's own fd */
}

static int thread_count(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "Threads:", 8) == 0) {
            n = atoi(line + 8);
            break;
        }
    fclose(f);
    return n;
}

/* ---- per-round state ---------------------------------------------------- */

typedef struct slot_state {
    /* Written by the slot's current session thread only (sessions of a
     * slot run one after another; main joins one before starting the
     * next); read by main after the joins. */
    uint64_t pub_items;
    uint64_t pub_sum[ACC_N];      /* every accumulate item published */
    uint64_t pub_user_sum[ACC_N]; /* ... of them the user ops' */
    uint64_t pub_user_n;
    uint32_t pub_max[MAXC_N];
    uint64_t must_fail;
    uint32_t appends;    /* APPEND sequence numbers used */
    uint32_t stores;     /* STORE params used (the param is the count) */
    uint32_t last_store; /* last STORE param published */
    uint32_t sessions;
    bool unwaited; /* a session closed without waiting for its items */
} slot_state;

typedef struct cell_shadow {
    _Atomic uint64_t exec_user_sum; /* params the accumulate user ops ran */
    _Atomic uint64_t fail_all_sum;  /* params of failed accumulate items */
    _Atomic uint64_t fail_user_sum; /* ... of them the user ops' */
    _Atomic bool max_failed, store_failed;
} cell_shadow;

struct round;

typedef struct session {
    struct round *r;
    unsigned slot;
    uint32_t id;
    uint64_t rng;
    pthread_t thread;
    bool running;
    _Atomic bool finished;
    uint64_t next_start_ns;
} session;

enum { MARK_CONSUMED = 1, MARK_FAILED = 2 };

typedef struct round {
    unsigned index;
    uint64_t rng;
    mkrt_backend_kind backend;
    bool race, short_destroy, storms, hang_planned, hang_injected;
    unsigned producers;
    uint64_t t0, t_end, t_race, t_hang;
    mkrt_config cfg;
    mkrt_runtime *rt;
    /* The gate: calls that take the runtime itself (open, cell reads,
     * consume) run inside it; race rounds close it before mkrt_destroy,
     * which publish, fence, wait and close may race. */
    _Atomic int users;
    _Atomic bool gate_closed;
    _Atomic bool stop;          /* sessions: finish up */
    _Atomic bool consumer_stop;
    _Atomic bool device_phase;  /* SIM: publish built-in ops only */
    slot_state slot[MAX_PRODUCERS];
    session sess[MAX_PRODUCERS];
    cell_shadow cell[TRACKED + 1];
    _Atomic uint64_t exec_user_n, fail_user_n, callbacks, must_fail_reported, unexpected;
    _Atomic uint64_t why_timedout, why_device, why_overflow, probe_failures;
    _Atomic uint64_t append_consumed[MAX_PRODUCERS], append_failed[MAX_PRODUCERS];
    _Atomic uint8_t marks[MAX_PRODUCERS][APPEND_MAX];
    uint32_t last_seq[MAX_PRODUCERS][MAX_SESSIONS]; /* consumer-only: seq + 1 */
    uint64_t probe_published;
    uint64_t consumer_rng; /* the consumer's own */
    pthread_t consumer;
} round;

static round g_round; /* large: static, reused and cleared every round */

static mkrt_status fail_expect(uint32_t param)
{
    return param % 8 == 3 ? MKRT_EINVAL : param % 8 == 5 ? CUSTOM_STATUS : MKRT_OK;
}

static bool gate_enter(round *r)
{
    /* seq_cst (both sides): the store-load pairing with gate_close. */
    atomic_fetch_add(&r->users, 1);
    if (atomic_load(&r->gate_closed)) {
        atomic_fetch_sub(&r->users, 1);
        return false;
    }
    return true;
}

static void gate_leave(round *r)
{
    atomic_fetch_sub(&r->users, 1);
}

static void gate_close(round *r)
{
    atomic_store(&r->gate_closed, true);
    while (atomic_load(&r->users) != 0)
        nap_us(100);
}

/* ---- user ops ------------------------------------------------------------ */

static void shadow_exec(round *r, const mkrt_item *it)
{
    if (it->out < TRACKED) {
        /* relaxed: tallies read by main after mkrt_drain (its acquire of
         * the completions), mkrt_wait, or mkrt_destroy (thread joins). */
        atomic_fetch_add_explicit(&r->cell[it->out].exec_user_sum, it->param, memory_order_relaxed);
        atomic_fetch_add_explicit(&r->exec_user_n, 1, memory_order_relaxed);
    }
}

static mkrt_status op_acc(const mkrt_item *it, const mkrt_op_ctx *c)
{
    c->cells[it->out] += it->param;
    shadow_exec(c->user, it);
    if (it->op == OP_ACC && sabotage(SAB_DOUBLE_RUN)) {
        c->cells[it->out] += it->param;
        shadow_exec(c->user, it);
    }
    return MKRT_OK;
}

static mkrt_status op_max(const mkrt_item *it, const mkrt_op_ctx *c)
{
    if (c->cells[it->out] < it->param)
        c->cells[it->out] = it->param;
    return MKRT_OK;
}

static mkrt_status op_fail(const mkrt_item *it, const mkrt_op_ctx *c)
{
    mkrt_status st = fail_expect(it->param);
    if (st != MKRT_OK)
        return st; /* fails without touching the cell */
    return op_acc(it, c);
}

static mkrt_status op_slow(const mkrt_item *it, const mkrt_op_ctx *c)
{
    if (it->param % 64 == 0)
        nap_us(100 + it->param % 1024); /* now and then: 0.1 .. 1.1 ms */
    return op_acc(it, c);
}

/* ---- the error callback (dispatcher thread) ------------------------------ */

static void unexpected(round *r, const mkrt_item *it, mkrt_status why, const char *msg)
{
    atomic_fetch_add(&r->unexpected, 1);
    soak_error("unexpected failure %s (%d) of op %u in %u out %u param %u: %s", mkrt_status_name(why),
               (int)why, it->op, it->in, it->out, it->param, msg ? msg : "");
}

static void on_error(void *ctx, const mkrt_item *it, mkrt_status why, const char *msg)
{
    round *r = ctx;
    if (sabotage(SAB_LOST_FAILURE))
        return;
    atomic_fetch_add(&r->callbacks, 1);
    /* Any item may fail when destroy times out or (SIM) the device fails. */
    bool infra = why == MKRT_ETIMEDOUT || (why == MKRT_EDEVICE && r->backend == MKRT_BACKEND_SIM);
    if (why == MKRT_ETIMEDOUT)
        atomic_fetch_add(&r->why_timedout, 1);
    if (why == MKRT_EDEVICE)
        atomic_fetch_add(&r->why_device, 1);
    uint32_t out = it->out, p = it->param;
    bool tracked = out < TRACKED;
    switch (it->op) {
    case OP_ACC:
    case OP_SLOW:
    case OP_FAIL:
        if (!tracked) { /* a bad handle */
            atomic_fetch_add(&r->must_fail_reported, 1);
            if (why != MKRT_EINVAL && !infra)
                unexpected(r, it, why, msg);
            break;
        }
        /* relaxed (these three): read after the drain or the joins. */
        atomic_fetch_add_explicit(&r->cell[out].fail_all_sum, p, memory_order_relaxed);
        atomic_fetch_add_explicit(&r->cell[out].fail_user_sum, p, memory_order_relaxed);
        atomic_fetch_add_explicit(&r->fail_user_n, 1, memory_order_relaxed);
        if (it->op == OP_FAIL && fail_expect(p) != MKRT_OK) {
            atomic_fetch_add(&r->must_fail_reported, 1);
            if (why != fail_expect(p) && !infra)
                unexpected(r, it, why, msg);
        } else if (!infra) {
            unexpected(r, it, why, msg);
        }
        break;
    case MKRT_OP_ADD:
        if (out == PROBE_CELL) {
            atomic_fetch_add(&r->probe_failures, 1);
            if (!infra)
                unexpected(r, it, why, msg);
        } else if (!tracked) {
            atomic_fetch_add(&r->must_fail_reported, 1);
            if (why != MKRT_EINVAL && !infra)
                unexpected(r, it, why, msg);
        } else {
            /* relaxed: read after the drain or the joins. */
            atomic_fetch_add_explicit(&r->cell[out].fail_all_sum, p, memory_order_relaxed);
            if (!infra)
                unexpected(r, it, why, msg);
        }
        break;
    case OP_MAX:
        if (tracked)
            atomic_store(&r->cell[out].max_failed, true);
        if (!infra)
            unexpected(r, it, why, msg);
        break;
    case MKRT_OP_STORE:
        if (tracked)
            atomic_store(&r->cell[out].store_failed, true);
        if (!infra)
            unexpected(r, it, why, msg);
        break;
    case MKRT_OP_APPEND: {
        if (!tracked) {
            atomic_fetch_add(&r->must_fail_reported, 1);
            if (why != MKRT_EINVAL && !infra)
                unexpected(r, it, why, msg);
            break;
        }
        unsigned s = out / SLOT_STRIDE;
        uint32_t seq = p & 0xFFFF;
        if (why == MKRT_EOVERFLOW)
            atomic_fetch_add(&r->why_overflow, 1);
        else if (!infra)
            unexpected(r, it, why, msg);
        if (out % SLOT_STRIDE != APPEND_OFF || s >= r->producers) {
            soak_error("failed APPEND to a handle nobody appends to: out %u param %u", out, p);
            break;
        }
        atomic_fetch_add(&r->append_failed[s], 1);
        uint8_t old = atomic_fetch_or(&r->marks[s][seq], MARK_FAILED);
        if (old != 0)
            soak_error("APPEND slot %u seq %u session %u reported failed after it was %s", s, seq,
                       p >> 16, old & MARK_FAILED ? "already reported failed" : "consumed from the log");
        break;
    }
    case OP_UNKNOWN:
        atomic_fetch_add(&r->must_fail_reported, 1);
        if (why != MKRT_ENOTSUP && !infra)
            unexpected(r, it, why, msg);
        break;
    default: /* NOP */
        if (!infra)
            unexpected(r, it, why, msg);
        break;
    }
}

/* ---- the APPEND consumer ----------------------------------------------- */

static void consume_entries(round *r, const mkrt_append_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t h = e[i].handle, p = e[i].param;
        unsigned s = h / SLOT_STRIDE;
        if (h % SLOT_STRIDE != APPEND_OFF || s >= r->producers) {
            soak_error("log entry for a handle nobody appends to: handle %u param %u", h, p);
            continue;
        }
        uint32_t seq = p & 0xFFFF, sess = p >> 16;
        if (sabotage(SAB_LOST_ENTRY))
            continue;
        if (sess >= MAX_SESSIONS) {
            soak_error("log entry with a garbled param: handle %u param %u", h, p);
            continue;
        }
        uint8_t old = atomic_fetch_or(&r->marks[s][seq], MARK_CONSUMED);
        if (old != 0)
            soak_error("APPEND slot %u seq %u session %u consumed after it was %s", s, seq, sess,
                       old & MARK_CONSUMED ? "already consumed (duplicate entry)" : "reported failed");
        if (r->last_seq[s][sess] >= seq + 1)
            soak_error("APPEND slot %u session %u out of order: seq %u after %u", s, sess, seq,
                       r->last_seq[s][sess] - 1);
        else
            r->last_seq[s][sess] = seq + 1;
        atomic_fetch_add(&r->append_consumed[s], 1);
    }
    atomic_fetch_add(&g_appends_consumed, n);
}

/* mkrt_append_log_read of one slot's handle: what it lists is in the log
 * (completed, not consumed), so this thread, the only consumer, has not
 * consumed it, and it did not fail; per session in publish order. Inside
 * the gate. */
static void peek_log(round *r)
{
    unsigned s = rnd_below(&r->consumer_rng, r->producers);
    uint32_t params[64];
    size_t n = mkrt_append_log_read(r->rt, s * SLOT_STRIDE + APPEND_OFF, params, 64);
    uint32_t last_seq = 0, last_sess = UINT32_MAX;
    for (size_t i = 0; i < n && i < 64; i++) {
        uint32_t seq = params[i] & 0xFFFF, sess = params[i] >> 16;
        uint8_t m = atomic_load(&r->marks[s][seq]);
        if (sess >= MAX_SESSIONS || m != 0) {
            soak_error("mkrt_append_log_read lists slot %u seq %u session %u, which was %s", s, seq,
                       sess, sess >= MAX_SESSIONS ? "never published"
                             : m & MARK_CONSUMED ? "consumed already"
                                                 : "reported failed");
            return;
        }
        if (sess == last_sess && seq <= last_seq)
            soak_error("mkrt_append_log_read: slot %u session %u seq %u listed after %u", s, sess, seq,
                       last_seq);
        last_sess = sess;
        last_seq = seq;
    }
}

static void *consumer_main(void *arg)
{
    round *r = arg;
    mkrt_append_entry e[256];
    for (unsigned iter = 0;; iter++) {
        bool stopping = atomic_load(&r->consumer_stop);
        if (!gate_enter(r))
            return NULL;
        if (iter % 16 == 0)
            peek_log(r);
        size_t n = mkrt_append_log_consume(r->rt, e, 1 + rnd_below(&r->consumer_rng, 256));
        gate_leave(r);
        consume_entries(r, e, n);
        if (n == 0) {
            if (stopping)
                return NULL; /* stopped after the drain, and the log is empty */
            nap_us(200);
        }
    }
}

/* ---- producer sessions ------------------------------------------------- */

/* The published prefix items[0..k) into the slot's books. */
static void account(session *s, const mkrt_item *items, size_t k)
{
    slot_state *sl = &s->r->slot[s->slot];
    const uint32_t base = s->slot * SLOT_STRIDE;
    for (size_t i = 0; i < k; i++) {
        const mkrt_item *it = &items[i];
        uint32_t p = it->param;
        switch (it->op) {
        case OP_ACC:
        case OP_SLOW:
        case OP_FAIL:
            if (it->out >= CELLS) {
                sl->must_fail++;
                break;
            }
            sl->pub_sum[it->out - base] += p;
            sl->pub_user_sum[it->out - base] += p;
            sl->pub_user_n++;
            if (it->op == OP_FAIL && fail_expect(p) != MKRT_OK)
                sl->must_fail++;
            break;
        case MKRT_OP_ADD:
            if (it->out >= CELLS)
                sl->must_fail++;
            else
                sl->pub_sum[it->out - base] += p;
            break;
        case OP_MAX:
            if (p > sl->pub_max[it->out - base - MAXC_OFF])
                sl->pub_max[it->out - base - MAXC_OFF] = p;
            break;
        case MKRT_OP_APPEND:
            if (it->out >= CELLS)
                sl->must_fail++;
            else
                sl->appends = (p & 0xFFFF) + 1;
            break;
        case MKRT_OP_STORE:
            sl->last_store = p;
            sl->stores = p;
            break;
        case OP_UNKNOWN:
            sl->must_fail++;
            break;
        default:
            break;
        }
    }
    sl->pub_items += k;
    /* relaxed: a progress counter. */
    atomic_fetch_add_explicit(&g_items, k, memory_order_relaxed);
}

/* A random batch. Sequence numbers continue from what was published. */
static size_t gen_batch(session *s, mkrt_item *buf)
{
    round *r = s->r;
    slot_state *sl = &r->slot[s->slot];
    const uint32_t base = s->slot * SLOT_STRIDE;
    uint32_t next_append = sl->appends, next_store = sl->stores;
    bool dev = atomic_load(&r->device_phase);
    size_t n = 1 + rnd_below(&s->rng, BATCH_MAX);
    uint64_t *g = &s->rng;
    for (size_t i = 0; i < n; i++) {
        uint32_t k = rnd_below(g, 100);
        uint32_t acc = base + rnd_below(g, ACC_N);
        mkrt_item it;
        bool dup_ok = true;
        if (dev) /* built-in ops only, so that batches run on the device */
            k = k < 35 ? 30 : k < 60 ? 62 : k < 80 ? 78 : k < 94 ? 88 : k < 97 ? 94 : 97;
        if (k < 30) {
            it = (mkrt_item){OP_ACC, acc, acc, 1 + rnd_below(g, 1u << 16)};
        } else if (k < 40) {
            it = (mkrt_item){MKRT_OP_ADD, acc, acc, 1 + rnd_below(g, 1u << 16)};
        } else if (k < 50) {
            uint32_t m = base + MAXC_OFF + rnd_below(g, MAXC_N);
            it = (mkrt_item){OP_MAX, m, m, 1 + rnd_below(g, 1u << 24)};
        } else if (k < 58) {
            it = (mkrt_item){OP_FAIL, acc, acc, 1 + rnd_below(g, 1u << 16)};
        } else if (k < 62) {
            it = (mkrt_item){OP_SLOW, acc, acc, 1 + rnd_below(g, 1u << 16)};
        } else if (k < 78 && next_append < APPEND_MAX) {
            it = (mkrt_item){MKRT_OP_APPEND, 0, base + APPEND_OFF, s->id << 16 | next_append++};
            dup_ok = false;
        } else if (k < 88) {
            it = (mkrt_item){MKRT_OP_STORE, 0, base + STORE_OFF, ++next_store};
        } else if (k < 94) {
            it = (mkrt_item){MKRT_OP_NOP, 0, 0, rnd_below(g, 4)};
        } else if (k < 97) {
            it = (mkrt_item){OP_UNKNOWN, 0, 0, rnd_below(g, 1u << 20)};
            dup_ok = false;
        } else {
            uint32_t which = rnd_below(g, dev ? 2 : 3);
            uint32_t op = which == 0 ? MKRT_OP_ADD : which == 1 ? MKRT_OP_APPEND : OP_ACC;
            it = (mkrt_item){op, BAD_HANDLE, BAD_HANDLE, 1 + rnd_below(g, 1000)};
            dup_ok = false;
        }
        buf[i] = it;
        /* Exact duplicates in a row: pruned only for idempotent ops. */
        if (dup_ok && i + 1 < n && rnd_below(g, 6) == 0)
            buf[++i] = it;
    }
    return n;
}

static bool orphaned(mkrt_producer *p)
{
    uint64_t t;
    return mkrt_fence(p, &t) == MKRT_ECLOSED;
}

static void backoff(uint64_t *rng, unsigned tries)
{
    if (tries < 4)
        sched_yield();
    else
        nap_us(tries < 12 ? 1u << (tries - 4) : 2000u + rnd_below(rng, 1000));
}

/* Publishes buf[0..n) one way or another; false once the runtime closed. */
static bool publish_batch(session *s, mkrt_producer *p, mkrt_item *buf, size_t n)
{
    round *r = s->r;
    size_t done = 0;
    mkrt_error err;
    uint32_t how = rnd_below(&s->rng, 3);
    if (how == 0) { /* blocking with short timeouts, retried */
        while (done < n) {
            size_t k = 0;
            uint64_t timeout = (1 + rnd_below(&s->rng, 50)) * 1000000ull;
            mkrt_status st = mkrt_publish_some(p, buf + done, n - done, timeout, &k, &err);
            if (k > n - done) {
                soak_error("mkrt_publish_some says %zu of %zu published", k, n - done);
                k = 0;
            }
            account(s, buf + done, k);
            done += k;
            if (st == MKRT_OK) {
                if (done != n)
                    soak_error("mkrt_publish_some returned OK after %zu of %zu items", done, n);
                return true;
            }
            if (st == MKRT_ECLOSED)
                return false;
            if (st != MKRT_ETIMEDOUT) {
                soak_error("mkrt_publish_some: %s: %s", mkrt_status_name(st), err.message);
                return false;
            }
            atomic_fetch_add(&g_backpressure, 1);
        }
        return true;
    }
    if (how == 1) { /* non-blocking, with back-off */
        unsigned tries = 0;
        while (done < n) {
            size_t k = mkrt_try_publish(p, buf + done, n - done);
            account(s, buf + done, k);
            done += k;
            if (k > 0) {
                tries = 0;
                continue;
            }
            if (++tries == 1)
                atomic_fetch_add(&g_backpressure, 1);
            if (tries % 8 == 0 && orphaned(p))
                return false;
            backoff(&s->rng, tries);
        }
        return true;
    }
    if (!r->race) { /* mkrt_publish of the whole batch; nothing closes it */
        mkrt_status st = mkrt_publish(p, buf, n, LONG_NS, &err);
        if (st != MKRT_OK) {
            soak_error("mkrt_publish of %zu items: %s: %s (the accounting of this round is off "
                       "from here)", n, mkrt_status_name(st), err.message);
            return false;
        }
        account(s, buf, n);
        return true;
    }
    /* Race rounds: one item per mkrt_publish, so that the published prefix
     * is known when it returns MKRT_ECLOSED. */
    while (done < n) {
        mkrt_status st = mkrt_publish(p, buf + done, 1, 20000000ull, &err);
        if (st == MKRT_OK) {
            account(s, buf + done, 1);
            done++;
        } else if (st == MKRT_ECLOSED) {
            return false;
        } else if (st == MKRT_ETIMEDOUT) {
            atomic_fetch_add(&g_backpressure, 1);
        } else {
            soak_error("mkrt_publish: %s: %s", mkrt_status_name(st), err.message);
            return false;
        }
    }
    return true;
}

/* After mkrt_wait covered everything this slot published (the caller
 * knows no earlier session left items behind): the cells hold their
 * values already. Inside the gate. */
static void check_slot_cells(round *r, unsigned slot, const char *when)
{
    slot_state *sl = &r->slot[slot];
    const uint32_t base = slot * SLOT_STRIDE;
    for (unsigned i = 0; i < ACC_N; i++) {
        uint64_t v = 0, want = sl->pub_sum[i] - atomic_load(&r->cell[base + i].fail_all_sum);
        mkrt_cell_read(r->rt, base + i, &v);
        if (v != want)
            soak_error("%s: slot %u accumulate cell %u = %llu, want %llu (published %llu, failed "
                       "%llu)", when, slot, base + i, (unsigned long long)v, (unsigned long long)want,
                       (unsigned long long)sl->pub_sum[i],
                       (unsigned long long)atomic_load(&r->cell[base + i].fail_all_sum));
    }
    for (unsigned i = 0; i < MAXC_N; i++) {
        uint32_t h = base + MAXC_OFF + i;
        uint64_t v = 0;
        mkrt_cell_read(r->rt, h, &v);
        if (!atomic_load(&r->cell[h].max_failed) && v != sl->pub_max[i])
            soak_error("%s: slot %u MAX cell %u = %llu, want %u", when, slot, h, (unsigned long long)v,
                       sl->pub_max[i]);
    }
    uint64_t v = 0;
    mkrt_cell_read(r->rt, base + STORE_OFF, &v);
    if (!atomic_load(&r->cell[base + STORE_OFF].store_failed) && v != sl->last_store)
        soak_error("%s: slot %u STORE cell = %llu, want %u (the last STORE published)", when, slot,
                   (unsigned long long)v, sl->last_store);
}

typedef enum { WAIT_OK, WAIT_SKIPPED, WAIT_CLOSED, WAIT_ERROR } wait_result;

/* fence, then wait. mkrt_wait may overlap mkrt_destroy (race rounds):
 * it returns when the ticket completed or with MKRT_ECLOSED once the
 * runtime stopped. The cell check after it reads the runtime itself, so
 * it runs inside the gate (skipped once a race round closed it). */
static wait_result fence_wait(session *s, mkrt_producer *p)
{
    round *r = s->r;
    uint64_t ticket;
    mkrt_status st = mkrt_fence(p, &ticket);
    if (st == MKRT_ECLOSED)
        return WAIT_CLOSED;
    if (st != MKRT_OK) {
        soak_error("mkrt_fence: %s", mkrt_status_name(st));
        return WAIT_ERROR;
    }
    st = mkrt_wait(p, ticket, LONG_NS);
    if (st == MKRT_ECLOSED && r->race && atomic_load(&r->gate_closed))
        return WAIT_CLOSED; /* destroy began (it closes the gate first) */
    if (st != MKRT_OK) {
        soak_error("slot %u session %u: mkrt_wait for ticket %llu: %s", s->slot, s->id,
                   (unsigned long long)ticket, mkrt_status_name(st));
        return WAIT_ERROR;
    }
    if (!gate_enter(r))
        return WAIT_OK;
    if (!r->slot[s->slot].unwaited) {
        check_slot_cells(r, s->slot, "after mkrt_wait");
        atomic_fetch_add(&g_mid_checks, 1);
    }
    gate_leave(r);
    return WAIT_OK;
}

static void *session_main(void *arg)
{
    session *s = arg;
    round *r = s->r;
    slot_state *sl = &r->slot[s->slot];
    mkrt_producer *p = NULL;
    while (p == NULL && !atomic_load(&r->stop)) {
        if (!gate_enter(r))
            break;
        mkrt_error err;
        p = mkrt_producer_open(r->rt, &err);
        gate_leave(r);
        if (p != NULL)
            break;
        if (err.status == MKRT_ENOMEM)
            atomic_fetch_add(&g_enomem_retries, 1);
        else if (err.status == MKRT_EAGAIN)
            atomic_fetch_add(&g_eagain_retries, 1);
        else {
            soak_error("mkrt_producer_open: %s: %s", mkrt_status_name(err.status), err.message);
            break;
        }
        nap_us(500);
    }
    if (p == NULL) {
        atomic_store(&s->finished, true);
        return NULL;
    }
    atomic_fetch_add(&g_sessions, 1);
    mkrt_item buf[BATCH_MAX];
    unsigned batches = 5 + rnd_below(&s->rng, 200);
    unsigned check_every = 4 + rnd_below(&s->rng, 28);
    bool open = true;
    for (unsigned b = 0; b < batches && open && (r->race || !atomic_load(&r->stop)); b++) {
        size_t n = gen_batch(s, buf);
        open = publish_batch(s, p, buf, n);
        if (open && b % check_every == check_every - 1)
            open = fence_wait(s, p) != WAIT_CLOSED;
        if (rnd_below(&s->rng, 16) == 0)
            nap_us(rnd_below(&s->rng, 2000));
    }
    /* Most sessions wait for their items before closing; some close with
     * items in flight (they still run). */
    if (rnd_below(&s->rng, 8) == 0 || !open || fence_wait(s, p) != WAIT_OK)
        sl->unwaited = true;
    mkrt_producer_close(p);
    atomic_store(&s->finished, true);
    return NULL;
}

static void start_session(round *r, unsigned slot)
{
    session *s = &r->sess[slot];
    slot_state *sl = &r->slot[slot];
    if (sl->sessions >= MAX_SESSIONS)
        return;
    s->r = r;
    s->slot = slot;
    s->id = sl->sessions++;
    s->rng = rnd_seed(opt.seed, (uint64_t)r->index << 32 | slot, s->id);
    atomic_store(&s->finished, false);
    if (pthread_create(&s->thread, NULL, session_main, s) != 0) {
        soak_error("pthread_create failed for a producer session");
        sl->sessions--;
        return;
    }
    s->running = true;
}

static void join_session(session *s)
{
    if (s->running) {
        pthread_join(s->thread, NULL);
        s->running = false;
    }
}

/* ---- rounds ---------------------------------------------------------------- */

static const char *backend_name(mkrt_backend_kind k)
{
    return k == MKRT_BACKEND_SIM ? "sim" : "cpu";
}

static void plan_round(round *r, unsigned index, uint64_t t_now, uint64_t t_stop)
{
    memset(r, 0, sizeof *r);
    r->index = index;
    r->rng = rnd_seed(opt.seed, index, 0xB0B);
    r->consumer_rng = rnd_seed(opt.seed, index, 0xC0C);
    uint64_t *g = &r->rng;
    if (opt.cpu && opt.sim)
        r->backend = index % 2 ? MKRT_BACKEND_SIM : MKRT_BACKEND_CPU;
    else
        r->backend = opt.sim ? MKRT_BACKEND_SIM : MKRT_BACKEND_CPU;
    bool calm = index == 0; /* the first round sets the leak baselines */
    r->race = !calm && rnd_below(g, 100) < 35;
    r->short_destroy = r->race && rnd_below(g, 2) == 0;
    r->storms = !calm && opt.alloc_faults && rnd_below(g, 100) < 60;
    r->hang_planned = r->backend == MKRT_BACKEND_SIM && rnd_below(g, 100) < 60;
    r->producers = opt.producers;
    /* 1.5 .. 4 s, but at most an eighth of the run: short (sanitizer)
     * runs still see a few rounds of each kind. */
    uint64_t len = (1500 + rnd_below(g, 2500)) * 1000000ull;
    uint64_t cap = (uint64_t)opt.seconds * SEC_NS / 8;
    if (len > cap)
        len = cap > 300000000ull ? cap : 300000000ull;
    r->t0 = t_now;
    r->t_end = t_now + len < t_stop ? t_now + len : t_stop;
    if (r->t_end < t_now + 300000000ull)
        r->t_end = t_now + 300000000ull; /* every round runs a little */
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
    c.cells = CELLS;
    /* Mostly room enough while the consumer keeps up; now and then a tiny
     * log, so that APPENDs fail with MKRT_EOVERFLOW (and are accounted). */
    c.append_log_capacity = rnd_below(g, 6) == 0 ? 16 : (size_t)1024 << rnd_below(g, 4);
    c.on_error = on_error;
    c.error_ctx = r;
    r->cfg = c;
}

static bool create_runtime(round *r)
{
    heartbeat("create");
    /* Some storms start at create: it must fail cleanly (nothing left
     * allocated) and work on a retry. */
    bool storm = r->storms && rnd_below(&r->rng, 3) == 0;
    for (unsigned tries = 0;; tries++) {
        set_fail_ppm(storm && tries < 40 ? 20000 + rnd_below(&r->rng, 300000) : 0);
        mkrt_error err;
        mkrt_status st = mkrt_create(&r->cfg, &r->rt, &err);
        if (st == MKRT_OK)
            break;
        if (st != MKRT_ENOMEM) {
            set_fail_ppm(0);
            soak_error("mkrt_create (%s): %s: %s", backend_name(r->backend), mkrt_status_name(st),
                       err.message);
            return false;
        }
        if (r->rt != NULL)
            soak_error("mkrt_create failed but left *rt set");
        atomic_fetch_add(&g_enomem_retries, 1);
        if (tries > 1000) {
            set_fail_ppm(0);
            soak_error("mkrt_create keeps failing with MKRT_ENOMEM without injected faults");
            return false;
        }
    }
    set_fail_ppm(0);
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
    atomic_fetch_add(&g_runtimes, 1);
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
    pthread_join(r->consumer, NULL);
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
                if (v != want)
                    soak_error("after the drain: slot %u accumulate cell %u = %llu, want %llu", s,
                               base + i, (unsigned long long)v, (unsigned long long)want);
            }
            for (unsigned i = 0; i < MAXC_N; i++) {
                uint32_t h = base + MAXC_OFF + i;
                uint64_t v = 0;
                mkrt_cell_read(r->rt, h, &v);
                if (!atomic_load(&r->cell[h].max_failed) && v != r->slot[s].pub_max[i])
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
    pthread_join(r->consumer, NULL);
    mkrt_stats st;
    if (mkrt_stats_read(r->rt, &st) == MKRT_OK)
        atomic_fetch_add(&g_watchdog_trips, st.device_failures);
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
                  (r->backend == MKRT_BACKEND_SIM && strcmp(st.backend, "sim") == 0));
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
    if (r->backend == MKRT_BACKEND_SIM)
        atomic_fetch_add(&g_sim_rounds, 1);
    if (r->race)
        atomic_fetch_add(&g_race_rounds, 1);
    if (pthread_create(&r->consumer, NULL, consumer_main, r) != 0) {
        soak_error("pthread_create failed for the consumer");
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

/* ---- leak checks between rounds ------------------------------------------ */

typedef struct resources {
    int64_t blocks, bytes;
    int fds, threads;
} resources;

static resources measure(void)
{
    resources m;
    pthread_mutex_lock(&proc_lock);
    /* relaxed: every thread that allocated through the soak allocator was
     * joined (or, liburcu's worker, finished with mkrt_destroy's barrier). */
    m.blocks = atomic_load_explicit(&g_alloc_live, memory_order_relaxed);
    m.bytes = atomic_load_explicit(&g_alloc_bytes, memory_order_relaxed);
    m.fds = open_fds();
    m.threads = thread_count();
    pthread_mutex_unlock(&proc_lock);
    return m;
}

static bool same_resources(resources a, resources b)
{
    return a.blocks == b.blocks && a.bytes == b.bytes && a.fds == b.fds && a.threads == b.threads;
}

static resources baseline;
static uint64_t g_leak_rounds;

/* No runtime exists: what the runtime used is back (given a moment for
 * exiting threads to leave the thread list). */
static void check_resources(unsigned index)
{
    heartbeat("leak check");
    resources m = measure();
    if (index == 0) {
        baseline = m;
        if (m.blocks != 0 || m.bytes != 0)
            fprintf(stderr, "soak: note: %lld blocks (%lld bytes) stay allocated after the first "
                            "runtime was destroyed (kept as the baseline)\n",
                    (long long)m.blocks, (long long)m.bytes);
        return;
    }
    for (int i = 0; i < 200 && !same_resources(m, baseline); i++) {
        nap_us(10000);
        m = measure();
    }
    if (!same_resources(m, baseline)) {
        g_leak_rounds++;
        soak_error("leak after %s round: allocator blocks %lld (baseline %lld), bytes %lld (%lld), "
                   "fds %d (%d), threads %d (%d)",
                   backend_name(g_round.backend), (long long)m.blocks, (long long)baseline.blocks,
                   (long long)m.bytes, (long long)baseline.bytes, m.fds, baseline.fds, m.threads,
                   baseline.threads);
    }
}

/* ---- the monitor: RSS, progress, hang detection --------------------------- */

static _Atomic bool g_monitor_stop;
static uint64_t g_rss_warm, g_rss_max_after, g_rss_max, g_warm_at_ns;
static bool g_rss_checked;
static pthread_mutex_t g_rss_lock = PTHREAD_MUTEX_INITIALIZER;

static void print_summary_and_exit_on_hang(const char *why);

static void progress_line(uint64_t now)
{
    double el = (double)(now - t_start) / 1e9;
    pthread_mutex_lock(&proc_lock);
    uint64_t rss = rss_bytes();
    int fds = open_fds(), threads = thread_count();
    pthread_mutex_unlock(&proc_lock);
    uint64_t items = atomic_load(&g_items);
    printf("soak: %6.1fs rounds %llu items %llu rate %.0fk/s rss %.1fMiB fds %d threads %d "
           "runtimes %llu alloc_faults %llu enomem_retries %llu hangs %llu watchdog_trips %llu "
           "errors %llu\n",
           el, (unsigned long long)atomic_load(&g_rounds_done), (unsigned long long)items,
           el > 0 ? (double)items / el / 1e3 : 0.0, (double)rss / 1048576.0, fds, threads,
           (unsigned long long)atomic_load(&g_runtimes),
           (unsigned long long)atomic_load(&g_alloc_injected),
           (unsigned long long)atomic_load(&g_enomem_retries),
           (unsigned long long)atomic_load(&g_hangs_injected),
           (unsigned long long)atomic_load(&g_watchdog_trips),
           (unsigned long long)atomic_load(&g_errors));
    fflush(stdout);
}

static void *monitor_main(void *arg)
{
    (void)arg;
    uint64_t next_progress = t_start + (uint64_t)opt.progress * SEC_NS;
    uint64_t last_items = 0, last_change = stress_now_ns();
    while (!atomic_load(&g_monitor_stop)) {
        nap_us(100000);
        uint64_t now = stress_now_ns();
        pthread_mutex_lock(&proc_lock);
        uint64_t rss = rss_bytes();
        pthread_mutex_unlock(&proc_lock);
        pthread_mutex_lock(&g_rss_lock);
        if (rss > g_rss_max)
            g_rss_max = rss;
        if (g_rss_warm == 0 && now >= g_warm_at_ns && atomic_load(&g_rounds_done) >= 1) {
            g_rss_warm = rss;
            g_rss_checked = true;
        } else if (g_rss_warm != 0 && sabotage(SAB_RSS)) {
            static char *hog;
            hog = malloc(64u << 20);
            if (hog != NULL)
                memset(hog, 1, 64u << 20);
        }
        if (g_rss_warm != 0 && rss > g_rss_max_after)
            g_rss_max_after = rss;
        pthread_mutex_unlock(&g_rss_lock);
        if (opt.progress != 0 && now >= next_progress) {
            progress_line(now);
            next_progress += (uint64_t)opt.progress * SEC_NS;
        }
        uint64_t items = atomic_load(&g_items);
        if (items != last_items) {
            last_items = items;
            last_change = now;
        }
        uint64_t hb = atomic_load(&g_heartbeat_ns);
        uint64_t alive = hb > last_change ? hb : last_change;
        if (now > alive && now - alive > (uint64_t)HANG_TIMEOUT_S * SEC_NS) {
            char why[200];
            snprintf(why, sizeof why, "no progress for %d s (main thread in \"%s\", round %u)",
                     HANG_TIMEOUT_S, atomic_load(&g_phase), atomic_load(&g_round_index));
            print_summary_and_exit_on_hang(why);
        }
    }
    return NULL;
}

/* ---- main ------------------------------------------------------------------ */

static void *idle_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&g_monitor_stop))
        nap_us(10000);
    return NULL;
}

static void plant_leaks(void)
{
    static pthread_t leaked;
    if (sabotage(SAB_LEAK_FD))
        (void)fopen("/dev/null", "r");
    if (sabotage(SAB_LEAK_THREAD)) {
        if (pthread_create(&leaked, NULL, idle_thread, NULL) == 0)
            pthread_detach(leaked);
    }
    if (sabotage(SAB_LEAK_ALLOC))
        (void)soak_alloc(64, 64, NULL);
}

static uint64_t rss_bound(uint64_t warm)
{
    uint64_t slack = warm / 4 > (16ull << 20) ? warm / 4 : 16ull << 20;
    return warm + slack;
}

static bool summary(const char *extra)
{
    double el = (double)(stress_now_ns() - t_start) / 1e9;
    pthread_mutex_lock(&g_rss_lock);
    uint64_t warm = g_rss_warm, max_after = g_rss_max_after, max_all = g_rss_max;
    bool checked = g_rss_checked;
    pthread_mutex_unlock(&g_rss_lock);
    pthread_mutex_lock(&proc_lock);
    uint64_t final_rss = rss_bytes();
    pthread_mutex_unlock(&proc_lock);
    bool rss_ok = true;
    if (checked) {
        uint64_t bound = rss_bound(warm);
        rss_ok = max_after <= bound && final_rss <= bound;
        printf("soak: rss after warm-up (%.1f s) %.1f MiB; bound warm + max(16 MiB, 25%%) = %.1f MiB; "
               "max after warm-up %.1f MiB; final %.1f MiB: %s\n",
               (double)(g_warm_at_ns - t_start) / 1e9, (double)warm / 1048576.0,
               (double)bound / 1048576.0, (double)max_after / 1048576.0,
               (double)final_rss / 1048576.0,
               rss_ok         ? "ok"
               : SOAK_SANITIZED ? "beyond the bound, not judged under a sanitizer"
                                : "GROWTH BEYOND THE BOUND");
        if (!rss_ok && !SOAK_SANITIZED)
            atomic_fetch_add(&g_errors, 1);
    } else {
        printf("soak: rss growth not checked: the run ended before the warm-up point (%.1f s and one "
               "full round); max rss %.1f MiB\n",
               (double)(g_warm_at_ns - t_start) / 1e9, (double)max_all / 1048576.0);
    }
    uint64_t errors = atomic_load(&g_errors);
    uint64_t items = atomic_load(&g_items);
    bool pass = errors == 0 && extra == NULL;
    if (opt.sabotage != SAB_NONE)
        printf("soak: sabotage %s planted: %s\n", sabotage_names[opt.sabotage],
               atomic_load(&sabotage_done) ? "yes" : "no (the run was too short)");
    printf("SUMMARY soak seconds %.1f seed %llu producers %u rounds %llu (sim %llu race %llu) runtimes %llu "
           "sessions %llu items %llu rate %.2fM/s drained_executed %llu drained_pruned %llu "
           "drained_failed %llu callbacks %llu appends_consumed %llu append_overflows %llu mid_checks %llu backpressure %llu "
           "alloc_faults %llu enomem_retries %llu eagain_retries %llu hangs_injected %llu "
           "watchdog_trips %llu stray_trips %llu destroy_timeouts %llu leak_rounds %llu "
           "rss_max %.1fMiB errors %llu verdict %s\n",
           el, (unsigned long long)opt.seed, opt.producers,
           (unsigned long long)atomic_load(&g_rounds_done), (unsigned long long)atomic_load(&g_sim_rounds),
           (unsigned long long)atomic_load(&g_race_rounds), (unsigned long long)atomic_load(&g_runtimes),
           (unsigned long long)atomic_load(&g_sessions), (unsigned long long)items,
           el > 0 ? (double)items / el / 1e6 : 0.0, (unsigned long long)atomic_load(&g_executed),
           (unsigned long long)atomic_load(&g_pruned), (unsigned long long)atomic_load(&g_failed),
           (unsigned long long)atomic_load(&g_callbacks),
           (unsigned long long)atomic_load(&g_appends_consumed),
           (unsigned long long)atomic_load(&g_append_overflows),
           (unsigned long long)atomic_load(&g_mid_checks), (unsigned long long)atomic_load(&g_backpressure),
           (unsigned long long)atomic_load(&g_alloc_injected),
           (unsigned long long)atomic_load(&g_enomem_retries),
           (unsigned long long)atomic_load(&g_eagain_retries),
           (unsigned long long)atomic_load(&g_hangs_injected),
           (unsigned long long)atomic_load(&g_watchdog_trips),
           (unsigned long long)atomic_load(&g_stray_trips),
           (unsigned long long)atomic_load(&g_destroy_timeouts), (unsigned long long)g_leak_rounds,
           (double)max_all / 1048576.0, (unsigned long long)errors, pass ? "PASS" : "FAIL");
    if (extra != NULL)
        printf("soak: FAIL: %s\n", extra);
    fflush(stdout);
    return pass;
}

static void print_summary_and_exit_on_hang(const char *why)
{
    fprintf(stderr, "soak: ERROR: %s\n", why);
    summary(why);
    _Exit(1);
}

static void usage(FILE *f, const char *argv0)
{
    fprintf(f,
            "usage: %s [options]\n"
            "  --seconds N         run for N seconds (default 60)\n"
            "  --progress S        a progress line every S seconds, 0: none (default 5)\n"
            "  --producers N       producer slots, 1..%d (default 4)\n"
            "  --seed N            random seed; the run is repeatable but for thread timing (default 1)\n"
            "  --backend B         cpu, sim or both (default both: rounds alternate)\n"
            "  --no-alloc-faults   no injected allocation failures\n"
            "  --verbose           one line per round\n"
            "  --sabotage KIND     test the soak itself: plant one defect it must report (FAIL):\n"
            "                      double-run, lost-failure, lost-entry, leak-fd, leak-thread,\n"
            "                      leak-alloc, rss\n"
            "  --help              this text\n",
            argv0, MAX_PRODUCERS);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"seconds", required_argument, NULL, 's'},  {"progress", required_argument, NULL, 'p'},
        {"producers", required_argument, NULL, 'P'}, {"seed", required_argument, NULL, 'S'},
        {"backend", required_argument, NULL, 'b'},  {"no-alloc-faults", no_argument, NULL, 'n'},
        {"verbose", no_argument, NULL, 'v'},        {"help", no_argument, NULL, 'h'},
        {"sabotage", required_argument, NULL, 'X'}, {NULL, 0, NULL, 0}};
    int c;
    unsigned long long v;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 's':
        case 'p':
        case 'P':
        case 'S':
            if (!stress_parse_ull(optarg, &v)) {
                fprintf(stderr, "%s: --%s needs a number, got '%s'\n", argv[0],
                        c == 's' ? "seconds" : c == 'p' ? "progress" : c == 'P' ? "producers" : "seed",
                        optarg);
                return 2;
            }
            if (c == 's')
                opt.seconds = (unsigned)v;
            else if (c == 'p')
                opt.progress = (unsigned)v;
            else if (c == 'P')
                opt.producers = (unsigned)v;
            else
                opt.seed = v;
            break;
        case 'b':
            opt.cpu = strcmp(optarg, "cpu") == 0 || strcmp(optarg, "both") == 0;
            opt.sim = strcmp(optarg, "sim") == 0 || strcmp(optarg, "both") == 0;
            if (!opt.cpu && !opt.sim) {
                fprintf(stderr, "%s: --backend is cpu, sim or both, not '%s'\n", argv[0], optarg);
                return 2;
            }
            break;
        case 'n':
            opt.alloc_faults = false;
            break;
        case 'v':
            opt.verbose = true;
            break;
        case 'X':
            opt.sabotage = -1;
            for (int k = 0; sabotage_names[k] != NULL; k++)
                if (strcmp(optarg, sabotage_names[k]) == 0)
                    opt.sabotage = k;
            if (opt.sabotage < 0) {
                fprintf(stderr, "%s: unknown --sabotage '%s'\n", argv[0], optarg);
                return 2;
            }
            break;
        case 'h':
            usage(stdout, argv[0]);
            return 0;
        default:
            usage(stderr, argv[0]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
        usage(stderr, argv[0]);
        return 2;
    }
    if (opt.producers < 1 || opt.producers > MAX_PRODUCERS || opt.seconds < 1) {
        fprintf(stderr, "%s: --producers must be 1..%d and --seconds at least 1\n", argv[0],
                MAX_PRODUCERS);
        return 2;
    }
    /* The one allocator, before any mkrt object exists. */
    static const mkrt_allocator alloc = {soak_alloc, soak_free, NULL};
    mkrt_allocator_set(&alloc);
    t_start = stress_now_ns();
    uint64_t t_stop = t_start + (uint64_t)opt.seconds * SEC_NS;
    uint64_t warm_s = opt.seconds / 5 > 10 ? opt.seconds / 5 : 10;
    g_warm_at_ns = t_start + warm_s * SEC_NS;
    printf("soak: %u s, seed %llu, %u producer slots, backend %s, allocation faults %s, progress every "
           "%u s; rss bound: warm-up at %llu s (and after one round), then warm + max(16 MiB, 25%%)\n",
           opt.seconds, (unsigned long long)opt.seed, opt.producers,
           opt.cpu && opt.sim ? "cpu+sim" : opt.cpu ? "cpu" : "sim", opt.alloc_faults ? "on" : "off",
           opt.progress, (unsigned long long)warm_s);
    fflush(stdout);
    heartbeat("start");
    pthread_t mon;
    if (pthread_create(&mon, NULL, monitor_main, NULL) != 0) {
        fprintf(stderr, "soak: no monitor thread\n");
        return 1;
    }
    for (unsigned index = 0;; index++) {
        uint64_t now = stress_now_ns();
        if (index > 0 && now >= t_stop)
            break;
        atomic_store(&g_round_index, index);
        round *r = &g_round;
        plan_round(r, index, now, t_stop);
        run_round(r);
        if (index == 2)
            plant_leaks();
        atomic_fetch_add(&g_rounds_done, 1);
        check_resources(index);
        if (atomic_load(&g_errors) > 100)
            break; /* plenty to look at */
    }
    atomic_store(&g_monitor_stop, true);
    pthread_join(mon, NULL);
    return summary(NULL) ? 0 : 1;
}
