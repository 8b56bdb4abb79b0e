/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/tests/test_mpi_fault.c - a rank that fails must end the job, not hang
 * it. mpi/tests/check_mpi.sh runs it under `timeout` and checks that the
 * job ended with an error and the message:
 *
 *   test_mpi_fault kill   rank 1 kills itself (SIGKILL) while the others
 *                         forward items to it and wait for quiescence
 *   test_mpi_fault stall  rank 1 stays alive but never joins the
 *                         quiescence: the others' waves time out
 *                         (wait_timeout_ms 1500) and abort the job with
 *                         mkrt_mpi's message
 *   test_mpi_fault mpierr-send  rank 1's progress thread gets an error from
 *                         MPI_Isend (the layer's test hook passes MPI an
 *                         invalid tag): the MPI-error path, which must end
 *                         the job with a message naming the rank, the call
 *                         and MPI's words
 *   test_mpi_fault mpierr-coll  the same from MPI_Iallreduce (an invalid
 *                         count) in the quiescence wave
 *
 * Exits 0 only if the job unexpectedly completes (which the script fails). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mkrt/mkrt.h"
#include "mkrt_mpi/mkrt_mpi.h"

/* mpi/src/mpi_internal.h's test hook (the static library has it). */
extern int mkrt__mpi_test_fault;

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "stall";
    int kill_mode = strcmp(mode, "kill") == 0;
    int fault = strcmp(mode, "mpierr-send") == 0 ? 1 : strcmp(mode, "mpierr-coll") == 0 ? 2 : 0;
    mkrt_config rc = mkrt_config_default();
    rc.backend = MKRT_BACKEND_CPU;
    rc.workers = 1;
    rc.cells = 4096;
    mkrt_runtime *rt = NULL;
    if (mkrt_create(&rc, &rt, NULL) != MKRT_OK)
        return 2;
    mkrt_mpi_config c = mkrt_mpi_config_default();
    c.handles = 4096;
    c.wait_timeout_ms = 1500;
    c.batch_items = 16;
    c.buffers = 2;
    mkrt_mpi *m = NULL;
    mkrt_error err = {0};
    /* The rank before MPI is up: what the launcher set (Open MPI, PMIx, PMI). */
    const char *rank_env = getenv("OMPI_COMM_WORLD_RANK");
    if (rank_env == NULL)
        rank_env = getenv("PMIX_RANK");
    if (rank_env == NULL)
        rank_env = getenv("PMI_RANK");
    if (fault != 0 && rank_env != NULL && strcmp(rank_env, "1") == 0)
        mkrt__mpi_test_fault = fault; /* MM_FAULT_SEND or MM_FAULT_COLL */
    if (mkrt_mpi_create(&c, rt, &m, &err) != MKRT_OK) {
        fprintf(stderr, "mkrt_mpi_create: %s\n", err.message);
        return 2;
    }
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    const int rank = mkrt_mpi_rank(m);
    if (rank == 1 && fault == 0) {
        if (kill_mode)
            raise(SIGKILL);
        struct timespec ts = {30, 0};
        nanosleep(&ts, NULL); /* alive, silent */
    }
    for (uint32_t i = 0; i < 100000; i++) {
        mkrt_item it = {MKRT_OP_ACC, 0, i % 4096, 1};
        if (mkrt_mpi_publish(m, p, &it, 1, 5000000000u, NULL, &err) != MKRT_OK) {
            fprintf(stderr, "rank %d: publish: %s\n", rank, err.message);
            break;
        }
    }
    mkrt_mpi_quiesce(m, MKRT_TIMEOUT_INFINITE);
    printf("rank %d: quiescence returned although rank 1 %s\n", rank,
           kill_mode ? "died" : fault ? "had an MPI error" : "never joined");
    mkrt_producer_close(p);
    mkrt_mpi_destroy(m, NULL);
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
    return 0;
}
