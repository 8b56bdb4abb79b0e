/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/soak/soak_env.c - what every workload of mkrt-soak uses: errors,
 * the failing allocator, /proc readings, the round plan (backend, length,
 * faults), creating runtimes and opening producers through injected
 * failures, the exactly-once accounting check, the live runtime the
 * interval sampler reads, and the leak check between rounds. */
#include <dirent.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "soak.h"

/* ---- errors and progress ------------------------------------------------- */

/* Errors: counted (in all and for the workload main runs), the first ones
 * printed with the round and seed to reproduce. */
void soak_error(const char *fmt, ...)
{
    uint64_t n = atomic_fetch_add(&g_errors, 1);
    int w = atomic_load(&g_workload);
    if (w >= 0 && w < W_COUNT)
        atomic_fetch_add(&g_wstats[w].errors, 1);
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
    fprintf(stderr, "soak: ERROR %s round %u (--seed %llu): %s\n",
            w >= 0 && w < W_COUNT ? soak_workload_names[w] : "-", atomic_load(&g_round_index),
            (unsigned long long)opt.seed, msg);
}

void heartbeat(const char *phase)
{
    atomic_store(&g_phase, phase);
    atomic_store(&g_heartbeat_ns, stress_now_ns());
}

void nap_us(unsigned us)
{
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000};
    nanosleep(&ts, NULL);
}

static _Atomic uint32_t g_fail_ppm;     /* failure probability, parts per million */
_Atomic uint64_t g_alloc_calls, g_alloc_injected;
_Atomic int64_t g_alloc_live, g_alloc_bytes;

void *soak_alloc(size_t size, size_t align, void *ctx)
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

void soak_free(void *ptr, size_t size, void *ctx)
{
    (void)ctx;
    if (ptr == NULL)
        return;
    free(ptr);
    /* relaxed: as in soak_alloc. */
    atomic_fetch_sub_explicit(&g_alloc_live, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&g_alloc_bytes, (int64_t)size, memory_order_relaxed);
}

void set_fail_ppm(uint32_t ppm)
{
    atomic_store(&g_fail_ppm, (opt.faults & F_ALLOC) ? ppm : 0);
}

/* ---- /proc: RSS, fds, threads ------------------------------------------ */

/* proc_lock: the monitor's /proc reads open fds, not while counting them.
 * live_lock: the live runtime and the retired rounds' totals. C11 has no
 * static mutex initialiser: the first lock of either makes both, once. */
static mkrt__mutex proc_lock, live_lock;
static mkrt__once_flag locks_once = MKRT__ONCE_INIT;

static void locks_init(void)
{
    if (mkrt__mutex_init(&proc_lock) != 0 || mkrt__mutex_init(&live_lock) != 0) {
        fprintf(stderr, "soak: cannot create the /proc and live-runtime locks\n");
        abort();
    }
}

void proc_lock_take(void)
{
    mkrt__call_once(&locks_once, locks_init);
    mkrt__mutex_lock(&proc_lock);
}

void proc_lock_give(void)
{
    mkrt__mutex_unlock(&proc_lock);
}

static void live_lock_take(void)
{
    mkrt__call_once(&locks_once, locks_init);
    mkrt__mutex_lock(&live_lock);
}

uint64_t rss_bytes(void)
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

int open_fds(void)
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

int thread_count(void)
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

/* ---- the round plan --------------------------------------------------------- */

const char *backend_name(mkrt_backend_kind k)
{
    return k == MKRT_BACKEND_SIM ? "sim" : k == MKRT_BACKEND_CUDA ? "cuda" : "cpu";
}

/* Backends rotate over the rounds of a workload among those --backend
 * names (CUDA: the stand-in driver); the first round (index 0) is calm: it
 * sets the leak baselines. Faults per --faults: 35% of the rounds race
 * mkrt_destroy, 60% have allocation storms. 1.5 .. 4 s, at most an eighth
 * of the run, at least 0.3 s. */
void soak_plan_round(soak_plan *p, unsigned index, uint64_t t_now, uint64_t t_stop)
{
    memset(p, 0, sizeof *p);
    p->index = index;
    p->rng = rnd_seed(opt.seed, index, 0xB0B);
    uint64_t *g = &p->rng;
    mkrt_backend_kind kinds[3];
    unsigned nk = 0;
    if (opt.backends & B_CPU)
        kinds[nk++] = MKRT_BACKEND_CPU;
    if (opt.backends & B_SIM)
        kinds[nk++] = MKRT_BACKEND_SIM;
    if (opt.backends & B_CUDA)
        kinds[nk++] = MKRT_BACKEND_CUDA;
    /* Each workload in turn sees every backend: the workloads take turns
     * round by round, the backend moves on after a full turn. */
    unsigned nw = (unsigned)__builtin_popcount(opt.workloads);
    p->backend = kinds[(index / nw) % nk];
    atomic_store(&g_round_backend, (int)p->backend);
    p->calm = index == 0;
    p->race = !p->calm && (opt.faults & F_RACE) && rnd_below(g, 100) < 35;
    p->storms = !p->calm && (opt.faults & F_ALLOC) && rnd_below(g, 100) < 60;
    atomic_store(&g_round_race, p->race);
    uint64_t len = (1500 + rnd_below(g, 2500)) * 1000000ull;
    uint64_t cap = (uint64_t)opt.seconds * SEC_NS / 8;
    if (len > cap)
        len = cap > 300000000ull ? cap : 300000000ull;
    p->t0 = t_now;
    p->t_end = t_now + len < t_stop ? t_now + len : t_stop;
    if (p->t_end < t_now + 300000000ull)
        p->t_end = t_now + 300000000ull; /* every round runs a little */
}

/* The stand-in driver next to the program (build/bin/../tests), or
 * --libcuda. */
static const char *libcuda_path(void)
{
    static char path[PATH_MAX];
    if (opt.libcuda != NULL)
        return opt.libcuda;
    if (path[0] == '\0') {
        char self[PATH_MAX - 64];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0)
            return NULL;
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash != NULL)
            *slash = '\0';
        snprintf(path, sizeof path, "%s/../tests/libfakecuda.so", self);
    }
    return path;
}

void soak_cuda_env(bool fault, uint64_t *rng)
{
    const char *lib = libcuda_path();
    if (lib != NULL)
        setenv("MKRT_LIBCUDA", lib, 1);
    setenv("FAKE_CUDA_MODE", fault ? "fault" : "ok", 1);
    char b[32];
    snprintf(b, sizeof b, "%u", 2 + rnd_below(rng, 40));
    setenv("FAKE_CUDA_FAULT_BATCH", b, 1);
}

mkrt_runtime *soak_create(const soak_plan *p, const mkrt_config *c, bool *skip)
{
    heartbeat("create");
    *skip = false;
    uint64_t rng = p->rng ^ 0xC4EA7E;
    bool storm = p->storms && rnd_below(&rng, 3) == 0; /* a storm at create */
    mkrt_runtime *rt = NULL;
    for (unsigned tries = 0;; tries++) {
        set_fail_ppm(storm && tries < 40 ? 20000 + rnd_below(&rng, 300000) : 0);
        mkrt_error err;
        mkrt_status st = mkrt_create(c, &rt, &err);
        if (st == MKRT_OK)
            break;
        /* No device (or none that works) once no fault is injected: the
         * storm's retries stop after 40 tries, so an EDEVICE after them is
         * the device's own answer, not an injected failure. */
        bool injecting = storm && tries < 40;
        if (st == MKRT_EDEVICE && c->backend == MKRT_BACKEND_CUDA && !injecting) {
            set_fail_ppm(0);
            int w = atomic_load(&g_workload);
            atomic_fetch_add(&g_wstats[w].skipped, 1);
            snprintf(g_wstats[w].skip_why, sizeof g_wstats[w].skip_why, "cuda: %.150s", err.message);
            *skip = true;
            return NULL;
        }
        if (st != MKRT_ENOMEM && !(st == MKRT_EDEVICE && injecting)) {
            set_fail_ppm(0);
            soak_error("mkrt_create (%s): %s: %s", backend_name(c->backend), mkrt_status_name(st),
                       err.message);
            return NULL;
        }
        if (rt != NULL)
            soak_error("mkrt_create failed but left *rt set");
        atomic_fetch_add(&g_enomem_retries, 1);
        if (tries > 1000) {
            set_fail_ppm(0);
            soak_error("mkrt_create (%s) keeps failing with %s without injected faults: %s",
                       backend_name(c->backend), mkrt_status_name(st), err.message);
            return NULL;
        }
    }
    set_fail_ppm(0);
    atomic_fetch_add(&g_runtimes, 1);
    if (c->backend == MKRT_BACKEND_SIM)
        atomic_fetch_add(&g_sim_rounds, 1);
    if (c->backend == MKRT_BACKEND_CUDA)
        atomic_fetch_add(&g_cuda_rounds, 1);
    return rt;
}

mkrt_producer *soak_open(mkrt_runtime *rt, _Atomic bool *stop)
{
    while (stop == NULL || !atomic_load(stop)) {
        mkrt_error err;
        mkrt_producer *p = mkrt_producer_open(rt, &err);
        if (p != NULL) {
            atomic_fetch_add(&g_sessions, 1);
            return p;
        }
        if (!soak_open_retry(&err))
            return NULL;
        nap_us(500);
    }
    return NULL;
}

bool soak_open_retry(const mkrt_error *err)
{
    if (err->status == MKRT_ENOMEM)
        atomic_fetch_add(&g_enomem_retries, 1);
    else if (err->status == MKRT_EAGAIN)
        atomic_fetch_add(&g_eagain_retries, 1);
    else {
        soak_error("mkrt_producer_open: %s: %s", mkrt_status_name(err->status), err->message);
        return false;
    }
    return true;
}

bool soak_publish_all(mkrt_producer *p, const mkrt_item *it, size_t n, bool race)
{
    size_t done = 0;
    while (done < n) {
        size_t k = 0;
        mkrt_error err;
        mkrt_status st = mkrt_publish_some(p, it + done, n - done, 50000000ull, &k, &err);
        done += k;
        /* relaxed: a progress counter. */
        atomic_fetch_add_explicit(&g_items, k, memory_order_relaxed);
        if (st == MKRT_OK)
            return true;
        if (st == MKRT_ETIMEDOUT) {
            atomic_fetch_add(&g_backpressure, 1);
            continue;
        }
        if (st != MKRT_ECLOSED || !race)
            soak_error("mkrt_publish_some: %s: %s", mkrt_status_name(st), err.message);
        return false;
    }
    return true;
}

/* ---- exactly-once accounting and the live runtime --------------------------- */

static mkrt_runtime *live_rt;
static uint64_t base_executed, base_failed, base_pruned; /* under live_lock */

bool soak_check_accounting(mkrt_runtime *rt, const char *what, uint64_t want_published,
                           uint64_t callbacks, mkrt_stats *out)
{
    mkrt_stats st;
    if (mkrt_stats_read(rt, &st) != MKRT_OK) {
        soak_error("%s: mkrt_stats_read failed", what);
        return false;
    }
    if (out != NULL)
        *out = st;
    bool ok = true;
    if (st.published != want_published) {
        soak_error("%s: stats.published %llu, but the producers published %llu", what,
                   (unsigned long long)st.published, (unsigned long long)want_published);
        ok = false;
    }
    if (st.published + st.emitted != st.executed + st.pruned + st.failed) {
        soak_error("%s: published %llu + emitted %llu != executed %llu + pruned %llu + failed %llu",
                   what, (unsigned long long)st.published, (unsigned long long)st.emitted,
                   (unsigned long long)st.executed, (unsigned long long)st.pruned,
                   (unsigned long long)st.failed);
        ok = false;
    }
    if (st.failed != callbacks) {
        soak_error("%s: stats.failed %llu, but the error callback ran %llu times", what,
                   (unsigned long long)st.failed, (unsigned long long)callbacks);
        ok = false;
    }
    atomic_fetch_add(&g_executed, st.executed);
    atomic_fetch_add(&g_pruned, st.pruned);
    atomic_fetch_add(&g_failed, st.failed);
    atomic_fetch_add(&g_emitted, st.emitted);
    return ok;
}

void soak_live_set(mkrt_runtime *rt)
{
    live_lock_take();
    live_rt = rt;
    mkrt__mutex_unlock(&live_lock);
}

void soak_live_retire(void)
{
    live_lock_take();
    mkrt_stats st;
    if (live_rt != NULL && mkrt_stats_read(live_rt, &st) == MKRT_OK) {
        base_executed += st.executed;
        base_failed += st.failed;
        base_pruned += st.pruned;
    }
    live_rt = NULL;
    mkrt__mutex_unlock(&live_lock);
}

void soak_live_totals(uint64_t *executed, uint64_t *failed, uint64_t *pruned)
{
    live_lock_take();
    mkrt_stats st;
    memset(&st, 0, sizeof st);
    if (live_rt != NULL && mkrt_stats_read(live_rt, &st) != MKRT_OK)
        memset(&st, 0, sizeof st);
    *executed = base_executed + st.executed;
    *failed = base_failed + st.failed;
    *pruned = base_pruned + st.pruned;
    mkrt__mutex_unlock(&live_lock);
}

/* ---- leak checks between rounds ------------------------------------------ */

typedef struct resources {
    int64_t blocks, bytes;
    int fds, threads;
} resources;

static resources measure(void)
{
    resources m;
    proc_lock_take();
    /* relaxed: every library thread has been joined (mkrt_destroy). */
    m.blocks = atomic_load_explicit(&g_alloc_live, memory_order_relaxed);
    m.bytes = atomic_load_explicit(&g_alloc_bytes, memory_order_relaxed);
    m.fds = open_fds();
    m.threads = thread_count();
    proc_lock_give();
    return m;
}

static bool same_resources(resources a, resources b)
{
    return a.blocks == b.blocks && a.bytes == b.bytes && a.fds == b.fds && a.threads == b.threads;
}

static resources baseline;
static bool have_baseline;
uint64_t g_leak_rounds;

/* No runtime exists: what the runtime used is back (given a moment for
 * exiting threads to leave the thread list). The baseline is taken after
 * the first round; a CUDA round that loaded the stand-in driver keeps it
 * loaded (dlopen once per process), so the baseline is taken again after
 * the first CUDA round. */
void check_resources(unsigned index)
{
    heartbeat("leak check");
    static bool cuda_seen;
    resources m = measure();
    bool first_cuda = !cuda_seen && atomic_load(&g_cuda_rounds) > 0;
    if (!have_baseline || first_cuda) {
        cuda_seen = cuda_seen || first_cuda;
        nap_us(20000);
        baseline = measure();
        have_baseline = true;
        if (index == 0 && (baseline.blocks != 0 || baseline.bytes != 0))
            fprintf(stderr, "soak: note: %lld blocks (%lld bytes) stay allocated after the first "
                            "runtime was destroyed (kept as the baseline)\n",
                    (long long)baseline.blocks, (long long)baseline.bytes);
        return;
    }
    for (int i = 0; i < 200 && !same_resources(m, baseline); i++) {
        nap_us(10000);
        m = measure();
    }
    if (!same_resources(m, baseline)) {
        g_leak_rounds++;
        soak_error("leak after round %u: allocator blocks %lld (baseline %lld), bytes %lld (%lld), "
                   "fds %d (%d), threads %d (%d)",
                   index, (long long)m.blocks, (long long)baseline.blocks, (long long)m.bytes,
                   (long long)baseline.bytes, m.fds, baseline.fds, m.threads, baseline.threads);
        baseline = m; /* report each leak once */
    }
}
