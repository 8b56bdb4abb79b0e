/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/soak/soak.h - what the parts of mkrt-soak share: options, the
 * run's counters, errors, random numbers, the failing allocator, /proc
 * readings, the metrics feed and the workloads' entry points.
 *
 * mkrt-soak is a test-build program: it links libmkrt.a and uses the
 * runtime's test hooks (src/runtime/test_hooks.h: holding the
 * dispatcher, injecting a device hang). See soak_main.c for the layout of
 * a run and docs/mkrt-soak.1 for the user's view. */
#ifndef MKRT_SOAK_H
#define MKRT_SOAK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/thread.h"
#include "mkrt/alloc.h"
#include "mkrt/runtime.h"
#include "../stress_util.h"

/* Under a sanitizer RSS measures its shadow memory and quarantine: RSS
 * growth is reported, not judged. */
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

#define SEC_NS 1000000000ull
#define LONG_NS (30 * SEC_NS) /* "forever" for waits, drains and destroys */
#define HANG_TIMEOUT_S 120    /* no progress this long: the soak reports a hang */
#define MAX_PRODUCERS 16

/* ---- workloads (torture types), fault modes, backends ------------------- */

/* W_MPI: mkrt-soak-mpi only (stress/soak/mpi/soak_mpi.c). */
enum { W_CLASSIC, W_EMIT, W_COMMUTE, W_GRAPH, W_PLUGIN, W_MPI, W_COUNT };
extern const char *const soak_workload_names[W_COUNT];

enum {
    F_ALLOC = 1,  /* allocator failure storms (mkrt_allocator_set) */
    F_HANG = 2,   /* SIM device hangs that must trip the watchdog */
    F_RACE = 4,   /* mkrt_destroy while producers publish */
    F_DEVICE = 8, /* the CUDA stand-in's kernel faults in a batch */
    F_ALL = 15
};
enum { B_CPU = 1, B_SIM = 2, B_CUDA = 4 };

/* --sabotage: one defect planted in the soak itself; each must end in FAIL. */
enum {
    SAB_NONE,
    SAB_DOUBLE_RUN,   /* the ACC op runs one item twice */
    SAB_LOST_FAILURE, /* one failure report is ignored */
    SAB_LOST_ENTRY,   /* one consumed log entry is ignored */
    SAB_LEAK_FD,      /* an fd left open after a round */
    SAB_LEAK_THREAD,  /* a thread left running after a round */
    SAB_LEAK_ALLOC,   /* a block of the mkrt allocator never freed */
    SAB_RSS,          /* 64 MiB touched and kept after the warm-up */
    SAB_RSS_DRIFT,    /* 4 MiB more kept every interval: a slow leak */
    SAB_WRONG_DIST,   /* one graph distance reported one too long */
};
extern const char *const sabotage_names[];

typedef struct soak_options {
    unsigned seconds, interval, producers;
    int warmup; /* seconds; -1: a fifth of the run, at least 10 */
    uint64_t seed;
    unsigned workloads; /* bits (1 << W_*) */
    unsigned faults;    /* F_* */
    unsigned backends;  /* B_* */
    bool verbose, strict_quiesce;
    int sabotage;
    const char *csv, *json, *plugin, *libcuda;
} soak_options;
extern soak_options opt;

bool sabotage(int kind); /* true once: the planted defect fires */
bool sabotage_fired(void);

/* ---- the run's counters (relaxed unless said: statistics) --------------- */

extern uint64_t t_start;
extern _Atomic uint64_t g_items; /* items accepted by publish calls */
extern _Atomic uint64_t g_runtimes, g_rounds_done, g_race_rounds, g_sim_rounds, g_cuda_rounds;
extern _Atomic uint64_t g_enomem_retries, g_eagain_retries, g_backpressure;
extern _Atomic uint64_t g_hangs_injected, g_watchdog_trips, g_stray_trips, g_device_faults;
extern _Atomic uint64_t g_errors;
extern _Atomic uint64_t g_executed, g_pruned, g_failed, g_callbacks, g_emitted;
extern _Atomic uint64_t g_appends_consumed, g_append_overflows, g_destroy_timeouts;
extern _Atomic uint64_t g_mid_checks, g_sessions;
extern _Atomic uint64_t g_quiesce_calls, g_quiesce_timeouts, g_traversals;
extern _Atomic uint64_t g_values_unchecked; /* classic SIM rounds whose cells went undefined */
extern _Atomic unsigned g_round_index;
extern _Atomic int g_workload; /* the workload main runs now */
extern _Atomic uint64_t g_heartbeat_ns; /* main thread: last sign of progress */
extern _Atomic(const char *) g_phase;

/* Per workload: rounds run, errors, skipped rounds (a backend missing). */
typedef struct soak_wstats {
    _Atomic uint64_t rounds, errors, skipped;
    char skip_why[160]; /* main thread only */
} soak_wstats;
extern soak_wstats g_wstats[W_COUNT];

__attribute__((format(printf, 1, 2))) void soak_error(const char *fmt, ...);
void heartbeat(const char *phase);
void nap_us(unsigned us);

/* ---- deterministic random numbers (splitmix64) -------------------------- */

static inline uint64_t rnd_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint32_t rnd_below(uint64_t *s, uint32_t n)
{
    return (uint32_t)(rnd_next(s) % n);
}

static inline uint64_t rnd_seed(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t s = a ^ 0x5DEECE66Dull;
    rnd_next(&s);
    s ^= b * 0xD6E8FEB86659FD93ull;
    rnd_next(&s);
    s ^= c * 0xA0761D6478BD642Full;
    return rnd_next(&s);
}

/* ---- the allocator (soak_env.c) ------------------------------------------ */

extern _Atomic uint64_t g_alloc_calls, g_alloc_injected;
extern _Atomic int64_t g_alloc_live, g_alloc_bytes;
void *soak_alloc(size_t size, size_t align, void *ctx);
void soak_free(void *ptr, size_t size, void *ctx);
void set_fail_ppm(uint32_t ppm); /* 0 when --faults has no alloc */

/* ---- /proc (soak_env.c) ---------------------------------------------------- */

/* The /proc reads open fds: not while counting them. A mutex made once
 * (C11 has no static initialiser) on the first lock. */
void proc_lock_take(void);
void proc_lock_give(void);
uint64_t rss_bytes(void);
int open_fds(void);
int thread_count(void);

/* ---- one round of any workload (soak_env.c) ------------------------------- */

/* What every round decides the same way: backend, length, faults. */
typedef struct soak_plan {
    unsigned index;
    uint64_t rng;
    mkrt_backend_kind backend;
    bool race, storms, calm;
    uint64_t t0, t_end;
} soak_plan;

const char *backend_name(mkrt_backend_kind k);
void soak_plan_round(soak_plan *p, unsigned index, uint64_t t_now, uint64_t t_stop);
/* Sets up the CUDA stand-in (MKRT_LIBCUDA, FAKE_CUDA_MODE) for a round on
 * CUDA; no runtime may exist (the driver reads its environment). */
void soak_cuda_env(bool fault, uint64_t *rng);
/* mkrt_create, through injected ENOMEM (retried); NULL on another error
 * (reported), or with *skip set when the backend is not available. */
mkrt_runtime *soak_create(const soak_plan *p, const mkrt_config *c, bool *skip);
/* mkrt_producer_open, retrying ENOMEM and EAGAIN; NULL once *stop. */
mkrt_producer *soak_open(mkrt_runtime *rt, _Atomic bool *stop);
/* A refused mkrt_producer_open: counts an ENOMEM or EAGAIN as a retry
 * (true), reports anything else as an error (false). */
bool soak_open_retry(const mkrt_error *err);
/* Publishes all n (retrying timeouts); false on ECLOSED or an error. */
bool soak_publish_all(mkrt_producer *p, const mkrt_item *it, size_t n, bool race);
/* Exactly once, after mkrt_quiesce returned MKRT_OK: stats published =
 * want_published, published + emitted = executed + pruned + failed,
 * failed = callbacks. Adds the stats into the run's totals. */
bool soak_check_accounting(mkrt_runtime *rt, const char *what, uint64_t want_published,
                           uint64_t callbacks, mkrt_stats *out);
/* The runtime the interval sampler reads stats from (one at a time). */
void soak_live_set(mkrt_runtime *rt);
void soak_live_retire(void); /* before mkrt_destroy */
/* Executed, failed and pruned so far: retired runtimes and the live one. */
void soak_live_totals(uint64_t *executed, uint64_t *failed, uint64_t *pruned);

/* ---- metrics (soak_metrics.c) ----------------------------------------------- */

void soak_latency_record(uint64_t ns); /* any thread */
extern bool g_metrics_quiet; /* rows recorded, not printed (MPI ranks but 0) */
void soak_metrics_start(uint64_t warm_at_ns);
void soak_metrics_stop(void);
/* The drift verdicts and the files; false when a metric drifted. */
bool soak_metrics_finish(double elapsed_s, bool pass_so_far);
uint64_t soak_metrics_rss_max(void);
/* Around each round (main thread): its throughput and p99 for the drift
 * verdicts; the backend is the one the round's plan set. */
extern _Atomic int g_round_backend;
extern _Atomic bool g_round_race;
void soak_round_begin(void);
void soak_round_end(int workload);

/* ---- resources between rounds (soak_env.c) ------------------------------- */

void check_resources(unsigned index);
extern uint64_t g_leak_rounds;

/* ---- workloads ------------------------------------------------------------ */

void classic_round(unsigned index, uint64_t now, uint64_t t_stop);
void emit_round(unsigned index, uint64_t now, uint64_t t_stop);
void commute_round(unsigned index, uint64_t now, uint64_t t_stop);
void graph_round(unsigned index, uint64_t now, uint64_t t_stop);
/* The plugin (soak_plugin.c): load once at start (false: reported). */
bool plugin_load(const char *path);
void plugin_round(unsigned index, uint64_t now, uint64_t t_stop);
void plugin_unload(void);

#endif
