/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/soak/soak_main.c - mkrt-soak: options, the round scheduler, hang
 * detection, the summary.
 *
 * A run is rounds until --seconds are up. Each round runs one workload
 * (torture type: classic, emit, commute, graph, plugin), the workloads
 * taking turns, each round on a fresh runtime whose backend rotates over
 * --backend (cpu, sim, cuda: the CUDA stand-in driver) and with the fault
 * modes --faults enables (alloc, hang, race, device). Each workload checks
 * its own results exactly (soak_env.c, the workload files); between
 * rounds, when no runtime exists, the allocator's blocks, the open fds and
 * the threads must be back to their baseline. Every --interval seconds the
 * sampler (soak_metrics.c) prints and records throughput, latency, RSS,
 * fds, threads and item counts; at the end it gives a drift verdict per
 * metric. The verdict is PASS when no workload reported an error, nothing
 * leaked and no metric drifted; exit 0, else 1 (2: bad usage).
 *
 * Threads, mutexes and condition variables are C11 <threads.h> through
 * base/thread.h (which maps them to their POSIX base only under
 * ThreadSanitizer, whose interceptors do not see glibc's C11 threads).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "soak.h"

static const char *const workload_help[W_COUNT] = {
    "producer sessions publishing user and built-in ops (ACC, MAX, FAIL, SLOW, ADD, STORE,\n"
    "                  APPEND, NOP, unknown ops, bad handles) checked against per-cell shadows;\n"
    "                  an APPEND log consumer; drains and mid-run waits",
    "emission chains: ops that mkrt_op_emit their successors (and overflow the emission\n"
    "                  queue now and then); mkrt_quiesce under load and at the end",
    "commuting ops: built-in MIN, OR, ACC and a user op registered with commutes,\n"
    "                  many producers on the same cells; mkrt_quiesce; exact min/or/sum",
    "graph traversals: mkrt_graph_register, SSSP with RELAX and BFS with an expanding\n"
    "                  user op (MIN of depth|parent), checked against Dijkstra / BFS",
    "your ops: --plugin FILE.so (include/mkrt_soak/soak_plugin.h), its generator and checks",
    "MPI at 2-3 ranks: a separate program, mpirun -np 3 mkrt-soak-mpi (built where mpicc\n"
    "                  is found; make soak runs it): hops across ranks, checked per handle"};
/* ---- hang detection ---------------------------------------------------------- */

static _Atomic bool g_monitor_stop;
static void summary_and_exit(const char *why);

static int monitor_main(void *arg)
{
    (void)arg;
    uint64_t last_items = 0, last_change = stress_now_ns();
    while (!atomic_load(&g_monitor_stop)) {
        nap_us(100000);
        uint64_t now = stress_now_ns();
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
            summary_and_exit(why);
        }
    }
    return 0;
}

/* ---- sabotage of the leak checks ------------------------------------------------ */

static int idle_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&g_monitor_stop))
        nap_us(10000);
    return 0;
}

/* The leaked thread lives until the monitor stops, past every leak check;
 * main joins it then (a thread never joined is a leak to ThreadSanitizer). */
static mkrt__thread leaked;
static bool leaked_started;

static void leak_join(void)
{
    if (leaked_started)
        mkrt__thread_join(leaked);
    leaked_started = false;
}

static void plant_leaks(void)
{
    if (sabotage(SAB_LEAK_FD))
        (void)fopen("/dev/null", "r");
    if (sabotage(SAB_LEAK_THREAD))
        leaked_started = mkrt__thread_start(&leaked, idle_thread, NULL) == 0;
    if (sabotage(SAB_LEAK_ALLOC))
        (void)soak_alloc(64, 64, NULL);
}

/* ---- the summary ------------------------------------------------------------------ */

#define U(x) ((unsigned long long)atomic_load(&(x)))

static bool summary(const char *extra)
{
    double el = (double)(stress_now_ns() - t_start) / 1e9;
    bool pass = atomic_load(&g_errors) == 0 && extra == NULL;
    printf("soak: workload verdicts:\n");
    for (int w = 0; w < W_COUNT; w++) {
        if (!(opt.workloads & (1u << w)))
            continue;
        soak_wstats *s = &g_wstats[w];
        uint64_t rounds = atomic_load(&s->rounds), errors = atomic_load(&s->errors);
        printf("soak:   %-8s rounds %llu errors %llu skipped %llu: %s\n", soak_workload_names[w],
               (unsigned long long)rounds, (unsigned long long)errors,
               (unsigned long long)atomic_load(&s->skipped),
               errors != 0 ? "FAIL" : rounds == 0 ? "NOT RUN" : "PASS");
        if (s->skip_why[0])
            printf("soak:            (skipped rounds: %s)\n", s->skip_why);
    }
    if (opt.sabotage != SAB_NONE)
        printf("soak: sabotage %s planted: %s\n", sabotage_names[opt.sabotage],
               sabotage_fired() ? "yes" : "no (the run was too short)");
    if (extra == NULL && !soak_metrics_finish(el, pass))
        pass = false;
    uint64_t items = atomic_load(&g_items);
    printf("SUMMARY soak seconds %.1f seed %llu producers %u rounds %llu (sim %llu cuda %llu race %llu) "
           "runtimes %llu sessions %llu items %llu rate %.2fM/s executed %llu pruned %llu failed %llu "
           "emitted %llu callbacks %llu appends_consumed %llu append_overflows %llu mid_checks %llu "
           "backpressure %llu alloc_faults %llu enomem_retries %llu eagain_retries %llu "
           "hangs_injected %llu watchdog_trips %llu stray_trips %llu device_faults %llu "
           "destroy_timeouts %llu quiesce_calls %llu quiesce_timeouts %llu traversals %llu values_unchecked %llu "
           "leak_rounds %llu rss_max %.1fMiB errors %llu verdict %s\n",
           el, (unsigned long long)opt.seed, opt.producers, U(g_rounds_done), U(g_sim_rounds),
           U(g_cuda_rounds), U(g_race_rounds), U(g_runtimes), U(g_sessions), (unsigned long long)items,
           el > 0 ? (double)items / el / 1e6 : 0.0, U(g_executed), U(g_pruned), U(g_failed), U(g_emitted),
           U(g_callbacks), U(g_appends_consumed), U(g_append_overflows), U(g_mid_checks),
           U(g_backpressure), U(g_alloc_injected), U(g_enomem_retries), U(g_eagain_retries),
           U(g_hangs_injected), U(g_watchdog_trips), U(g_stray_trips), U(g_device_faults),
           U(g_destroy_timeouts), U(g_quiesce_calls), U(g_quiesce_timeouts), U(g_traversals),
           U(g_values_unchecked),
           (unsigned long long)g_leak_rounds, (double)soak_metrics_rss_max() / 1048576.0, U(g_errors),
           pass ? "PASS" : "FAIL");
    if (extra != NULL)
        printf("soak: FAIL: %s\n", extra);
    fflush(stdout);
    return pass;
}

static void summary_and_exit(const char *why)
{
    fprintf(stderr, "soak: ERROR: %s\n", why);
    summary(why);
    _Exit(1);
}

/* ---- options ------------------------------------------------------------------------ */

static void usage(FILE *f, const char *argv0)
{
    fprintf(f,
            "usage: %s [options]\n"
            "Soaks the mkrt runtime (or your own ops, --plugin) for --seconds: rounds of workloads on\n"
            "fresh runtimes with faults injected, every result checked exactly, metrics every\n"
            "--interval, a drift verdict per metric at the end. Exit 0: PASS, 1: FAIL, 2: usage.\n\n"
            "  --seconds N         run for N seconds (default 60)\n"
            "  --interval S        metrics line (and CSV/JSON record) every S seconds (default 5)\n"
            "  --progress S        the same as --interval\n"
            "  --warmup S          drift is judged on the intervals after S seconds (default: a\n"
            "                      fifth of the run, at least 10 s)\n"
            "  --csv FILE          write the interval records as CSV\n"
            "  --json FILE         write the configuration, interval records, workload and drift\n"
            "                      verdicts as JSON\n"
            "  --workloads LIST    comma-separated workloads (default: all but plugin; with --plugin\n"
            "                      the plugin is added); 'all' for every one\n"
            "  --faults LIST       comma-separated fault modes, 'all' (default) or 'none'\n"
            "  --backend LIST      cpu, sim, cuda, comma-separated, or 'all' (default); rounds rotate\n"
            "                      ('both' = cpu,sim, as before)\n"
            "  --plugin FILE.so    soak your own ops (include/mkrt_soak/soak_plugin.h); adds the plugin\n"
            "                      workload\n"
            "  --libcuda FILE      the CUDA driver for cuda rounds (default: the stand-in driver\n"
            "                      next to the program, ../tests/libfakecuda.so)\n"
            "  --producers N       producer threads, 1..%d (default 4)\n"
            "  --seed N            random seed; repeatable but for thread timing (default 1)\n"
            "  --strict-quiesce    an mkrt_quiesce under load that times out (10 s) is an error\n"
            "                      (default: counted in quiesce_timeouts and reported)\n"
            "  --no-alloc-faults   the same as leaving alloc out of --faults\n"
            "  --verbose           one line per round\n"
            "  --sabotage KIND     test the soak itself: plant one defect it must report (FAIL):\n"
            "                      double-run, lost-failure, lost-entry, leak-fd, leak-thread,\n"
            "                      leak-alloc, rss, rss-drift, wrong-dist\n"
            "  --help              this text\n\n"
            "workloads (torture types):\n",
            argv0, MAX_PRODUCERS);
    for (int w = 0; w < W_COUNT; w++)
        fprintf(f, "  %-15s %s\n", soak_workload_names[w], workload_help[w]);
    fprintf(f, "\nfault modes:\n"
               "  alloc           allocation failure storms through the mkrt_allocator hook\n"
               "                  (include/mkrt/alloc.h): MKRT_ENOMEM from create, open, register\n"
               "                  is retried, never an error, and nothing leaks\n"
               "  hang            SIM rounds: an injected device hang must trip the watchdog; the\n"
               "                  batch's items are reported failed, the runtime goes on on the CPU\n"
               "  race            mkrt_destroy while producers publish, wait and close (short\n"
               "                  destroy timeouts too); what was published ran or was reported\n"
               "  device          cuda rounds: the stand-in driver's kernel faults in a random batch\n"
               "\nbackends: cpu, sim (the simulated device), cuda (the CUDA backend on --libcuda;\n"
               "skipped with the reason when it cannot start). Details: man mkrt-soak.\n");
}

/* A comma-separated list of names into bits; -1 on an unknown name. */
static long parse_list(const char *arg, const char *const *names, int n, long all)
{
    if (strcmp(arg, "all") == 0)
        return all;
    if (strcmp(arg, "none") == 0)
        return 0;
    long bits = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", arg);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < n && strcmp(t, names[k]) != 0)
            k++;
        if (k == n)
            return -1;
        bits |= 1l << k;
    }
    return bits;
}

static int parse_args(int argc, char **argv)
{
    static const char *const fault_names[] = {"alloc", "hang", "race", "device"};
    static const char *const backend_names[] = {"cpu", "sim", "cuda"};
    static const struct option longopts[] = {
        {"seconds", required_argument, NULL, 's'},   {"progress", required_argument, NULL, 'p'},
        {"interval", required_argument, NULL, 'p'},  {"producers", required_argument, NULL, 'P'},
        {"seed", required_argument, NULL, 'S'},      {"backend", required_argument, NULL, 'b'},
        {"no-alloc-faults", no_argument, NULL, 'n'}, {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},            {"sabotage", required_argument, NULL, 'X'},
        {"csv", required_argument, NULL, 'c'},       {"json", required_argument, NULL, 'j'},
        {"workloads", required_argument, NULL, 'w'}, {"faults", required_argument, NULL, 'f'},
        {"plugin", required_argument, NULL, 'L'},    {"libcuda", required_argument, NULL, 'C'},
        {"strict-quiesce", no_argument, NULL, 'q'},  {"warmup", required_argument, NULL, 'W'},
        {NULL, 0, NULL, 0}};
    int c;
    unsigned long long v;
    bool workloads_given = false;
    long bits;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'W':
            if (!stress_parse_ull(optarg, &v) || v > 1000000000ull) {
                fprintf(stderr, "%s: --warmup needs a number of seconds, got '%s'\n", argv[0], optarg);
                return 2;
            }
            opt.warmup = (int)v;
            break;
        case 's':
        case 'p':
        case 'P':
        case 'S':
            if (!stress_parse_ull(optarg, &v) || (c != 'S' && v > 1000000000ull)) {
                fprintf(stderr, "%s: --%s needs a number, got '%s'\n", argv[0],
                        c == 's' ? "seconds" : c == 'p' ? "interval" : c == 'P' ? "producers" : "seed",
                        optarg);
                return 2;
            }
            if (c == 's')
                opt.seconds = (unsigned)v;
            else if (c == 'p')
                opt.interval = (unsigned)v;
            else if (c == 'P')
                opt.producers = (unsigned)v;
            else
                opt.seed = v;
            break;
        case 'b':
            bits = strcmp(optarg, "both") == 0 ? (B_CPU | B_SIM) : parse_list(optarg, backend_names, 3, 7);
            if (bits <= 0) {
                fprintf(stderr, "%s: --backend takes cpu, sim, cuda (comma-separated) or all, not '%s'\n",
                        argv[0], optarg);
                return 2;
            }
            opt.backends = (unsigned)bits;
            break;
        case 'w':
            bits = parse_list(optarg, soak_workload_names, W_MPI, (1l << W_MPI) - 1);
            if (bits <= 0) {
                fprintf(stderr, "%s: --workloads takes classic, emit, commute, graph, plugin "
                                "(comma-separated) or all, not '%s'\n", argv[0], optarg);
                return 2;
            }
            opt.workloads = (unsigned)bits;
            workloads_given = true;
            break;
        case 'f':
            bits = parse_list(optarg, fault_names, 4, F_ALL);
            if (bits < 0) {
                fprintf(stderr, "%s: --faults takes alloc, hang, race, device (comma-separated), all "
                                "or none, not '%s'\n", argv[0], optarg);
                return 2;
            }
            opt.faults = (unsigned)bits;
            break;
        case 'n':
            opt.faults &= ~(unsigned)F_ALLOC;
            break;
        case 'v':
            opt.verbose = true;
            break;
        case 'q':
            opt.strict_quiesce = true;
            break;
        case 'c':
            opt.csv = optarg;
            break;
        case 'j':
            opt.json = optarg;
            break;
        case 'L':
            opt.plugin = optarg;
            break;
        case 'C':
            opt.libcuda = optarg;
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
            exit(0);
        default:
            usage(stderr, argv[0]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
        return 2;
    }
    if (opt.producers < 1 || opt.producers > MAX_PRODUCERS || opt.seconds < 1) {
        fprintf(stderr, "%s: --producers must be 1..%d and --seconds at least 1\n", argv[0], MAX_PRODUCERS);
        return 2;
    }
    if (opt.plugin != NULL && !workloads_given)
        opt.workloads |= 1u << W_PLUGIN;
    if ((opt.workloads & (1u << W_PLUGIN)) && opt.plugin == NULL) {
        fprintf(stderr, "%s: the plugin workload needs --plugin FILE.so\n", argv[0]);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int st = parse_args(argc, argv);
    if (st != 0)
        return st;
    /* The one allocator, before any mkrt object exists. */
    static const mkrt_allocator alloc = {soak_alloc, soak_free, NULL};
    mkrt_allocator_set(&alloc);
    if (opt.plugin != NULL && !plugin_load(opt.plugin))
        return 2;
    t_start = stress_now_ns();
    uint64_t t_stop = t_start + (uint64_t)opt.seconds * SEC_NS;
    printf("soak: %u s, seed %llu, %u producers, workloads", opt.seconds, (unsigned long long)opt.seed,
           opt.producers);
    for (int w = 0; w < W_COUNT; w++)
        if (opt.workloads & (1u << w))
            printf(" %s", soak_workload_names[w]);
    printf(", backends%s%s%s, faults%s%s%s%s%s, metrics every %u s\n", opt.backends & B_CPU ? " cpu" : "",
           opt.backends & B_SIM ? " sim" : "", opt.backends & B_CUDA ? " cuda" : "",
           opt.faults & F_ALLOC ? " alloc" : "", opt.faults & F_HANG ? " hang" : "",
           opt.faults & F_RACE ? " race" : "", opt.faults & F_DEVICE ? " device" : "",
           opt.faults == 0 ? " none" : "", opt.interval);
    fflush(stdout);
    heartbeat("start");
    mkrt__thread mon; /* stays here until joined */
    if (mkrt__thread_start(&mon, monitor_main, NULL) != 0) {
        fprintf(stderr, "soak: no monitor thread\n");
        return 1;
    }
    uint64_t warm_s = opt.warmup >= 0 ? (uint64_t)opt.warmup : opt.seconds / 5 > 10 ? opt.seconds / 5 : 10;
    soak_metrics_start(t_start + warm_s * SEC_NS);
    int order[W_COUNT], nw = 0;
    for (int w = 0; w < W_COUNT; w++)
        if (opt.workloads & (1u << w))
            order[nw++] = w;
    for (unsigned index = 0;; index++) {
        uint64_t now = stress_now_ns();
        if (index > 0 && now >= t_stop)
            break;
        atomic_store(&g_round_index, index);
        int w = order[index % (unsigned)nw];
        atomic_store(&g_workload, w);
        soak_round_begin();
        switch (w) {
        case W_CLASSIC:
            classic_round(index, now, t_stop);
            break;
        case W_EMIT:
            emit_round(index, now, t_stop);
            break;
        case W_COMMUTE:
            commute_round(index, now, t_stop);
            break;
        case W_GRAPH:
            graph_round(index, now, t_stop);
            break;
        default:
            plugin_round(index, now, t_stop);
            break;
        }
        soak_round_end(w);
        atomic_fetch_add(&g_wstats[w].rounds, 1);
        if (index == 2)
            plant_leaks();
        atomic_fetch_add(&g_rounds_done, 1);
        check_resources(index);
        if (atomic_load(&g_errors) > 100)
            break; /* plenty to look at */
    }
    atomic_store(&g_workload, -1);
    soak_metrics_stop();
    atomic_store(&g_monitor_stop, true);
    mkrt__thread_join(mon);
    leak_join();
    bool pass = summary(NULL);
    plugin_unload();
    return pass ? 0 : 1;
}
