/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/tests/mpi_tap.h - what the MPI layer's tests share: a TAP line for
 * a check that must hold on every rank (printed by rank 0), and the
 * runtime and layer they start (a failure to start ends the job). One copy
 * per test program; it defines the program's rank, ranks and counters. */
#ifndef MKRT_MPI_TESTS_MPI_TAP_H
#define MKRT_MPI_TESTS_MPI_TAP_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "mkrt/mkrt.h"
#include "mkrt_mpi/mkrt_mpi.h"

static int rank, ranks, tests, failed;

/* The start of a test program: MPI (serialized calls), this rank and the
 * ranks, stdout line-buffered so the ranks' lines do not interleave. */
static inline void tap_start(void)
{
    int provided = 0;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    setvbuf(stdout, NULL, _IOLBF, 0);
}

/* The end: the TAP plan (rank 0), MPI finalised; the exit status. */
static inline int tap_finish(void)
{
    if (rank == 0)
        printf("1..%d\n", tests);
    MPI_Finalize();
    return failed > 0 ? 1 : 0;
}

/* One TAP line for a check that must hold on every rank. m: the layer to
 * reduce through while one exists (only it may call MPI then), else NULL. */
static inline void check(mkrt_mpi *m, int ok, const char *name)
{
    uint64_t bad = ok ? 0 : 1;
    if (m != NULL)
        mkrt_mpi_allreduce_sum(m, &bad, 1);
    else
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    tests++;
    if (bad)
        failed++;
    if (rank == 0) {
        printf("%s %d - %s (%d ranks)", bad ? "not ok" : "ok", tests, name, ranks);
        if (bad)
            printf(": failed on %llu rank(s)", (unsigned long long)bad);
        printf("\n");
        fflush(stdout);
    }
    if (!ok)
        fprintf(stderr, "rank %d: check failed: %s\n", rank, name);
}

/* A CPU runtime of `cells` cells with small rings (receivers push back). */
static inline mkrt_runtime *new_runtime(uint32_t cells)
{
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CPU;
    c.workers = 1;
    c.cells = cells;
    c.ring_capacity = 256;
    mkrt_runtime *rt = NULL;
    if (mkrt_create(&c, &rt, NULL) != MKRT_OK) {
        fprintf(stderr, "rank %d: mkrt_create failed\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return rt;
}

static inline mkrt_mpi *new_layer(mkrt_runtime *rt, mkrt_mpi_config c)
{
    mkrt_mpi *m = NULL;
    mkrt_error err = {0};
    if (mkrt_mpi_create(&c, rt, &m, &err) != MKRT_OK) {
        fprintf(stderr, "rank %d: mkrt_mpi_create failed: %s\n", rank, err.message);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return m;
}

#endif
