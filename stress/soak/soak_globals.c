/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/soak/soak_globals.c - the options and counters of a soak run
 * (soak.h), shared by mkrt-soak (soak_main.c) and mkrt-soak-mpi
 * (mpi/soak_mpi.c). */
#include "soak.h"

const char *const soak_workload_names[W_COUNT] = {"classic", "emit", "commute", "graph", "plugin", "mpi"};
const char *const sabotage_names[] = {"none",     "double-run", "lost-failure", "lost-entry", "leak-fd",
                                      "leak-thread", "leak-alloc", "rss",       "rss-drift",  "wrong-dist",
                                      NULL};

soak_options opt = {.seconds = 60,
                    .warmup = -1,
                    .interval = 5,
                    .producers = 4,
                    .seed = 1,
                    .workloads = (1u << W_CLASSIC) | (1u << W_EMIT) | (1u << W_COMMUTE) | (1u << W_GRAPH),
                    .faults = F_ALL,
                    .backends = B_CPU | B_SIM | B_CUDA,
                    .sabotage = SAB_NONE};
static _Atomic bool sabotage_done;

bool sabotage(int kind)
{
    return opt.sabotage == kind && !atomic_load(&sabotage_done) && !atomic_exchange(&sabotage_done, true);
}

bool sabotage_fired(void)
{
    return atomic_load(&sabotage_done);
}

uint64_t t_start;
_Atomic uint64_t g_items;
_Atomic uint64_t g_runtimes, g_rounds_done, g_race_rounds, g_sim_rounds, g_cuda_rounds;
_Atomic uint64_t g_enomem_retries, g_eagain_retries, g_backpressure;
_Atomic uint64_t g_hangs_injected, g_watchdog_trips, g_stray_trips, g_device_faults;
_Atomic uint64_t g_errors;
_Atomic uint64_t g_executed, g_pruned, g_failed, g_callbacks, g_emitted;
_Atomic uint64_t g_appends_consumed, g_append_overflows, g_destroy_timeouts;
_Atomic uint64_t g_mid_checks, g_sessions;
_Atomic uint64_t g_quiesce_calls, g_quiesce_timeouts, g_traversals;
_Atomic unsigned g_round_index;
_Atomic int g_workload = -1;
_Atomic uint64_t g_heartbeat_ns;
_Atomic(const char *) g_phase = "start";
soak_wstats g_wstats[W_COUNT];

