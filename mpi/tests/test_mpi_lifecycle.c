/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/tests/test_mpi_lifecycle.c - the layer's life in a process whose MPI
 * mkrt initialises (this program never calls MPI_Init): argument errors
 * make no MPI call; a create refused for max_producers (EAGAIN) can be
 * followed by its "Fix:" in the same process; a create can follow a
 * destroy; a second layer beside a live one is refused under
 * MPI_THREAD_SERIALIZED; a configuration that differs between the ranks is
 * refused on every rank; a rank that failed before its create joins it
 * (mkrt_mpi_create_failed) and every rank's create fails alike; after the
 * program's own MPI_Finalize a create is
 * refused with a status, and the process still exits cleanly (mkrt's
 * atexit finaliser stands back). Run under mpirun at 1 or more ranks (2
 * and more for the cross-rank parts). Rank 0 prints TAP; while MPI is up
 * each check is the conjunction over the ranks, and every rank's exit
 * status says whether its own checks held. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "mkrt/mkrt.h"
#include "mkrt_mpi/mkrt_mpi.h"

static int rank, ranks = 1, tests, failed;

/* One TAP line. how: 0 this rank only (MPI is down), 1 over the ranks
 * through MPI_COMM_WORLD (no layer runs), else through layer m. */
static void check_on(mkrt_mpi *m, int how, int ok, const char *name)
{
    uint64_t bad = ok ? 0 : 1;
    if (m != NULL)
        mkrt_mpi_allreduce_sum(m, &bad, 1);
    else if (how == 1)
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    tests++;
    if (!ok)
        failed++;
    if (rank == 0)
        printf("%s %d - %s (%d ranks)\n", bad ? "not ok" : "ok", tests, name, ranks);
    if (!ok)
        fprintf(stderr, "rank %d: check failed: %s\n", rank, name);
    fflush(stdout);
}

static void skip(const char *name, const char *why)
{
    tests++;
    if (rank == 0)
        printf("ok %d # skip %s: %s\n", tests, name, why);
}

static mkrt_runtime *new_runtime(uint32_t cells, uint32_t max_producers)
{
    mkrt_config c = mkrt_config_default();
    c.backend = MKRT_BACKEND_CPU;
    c.workers = 1;
    c.cells = cells;
    c.max_producers = max_producers;
    mkrt_runtime *rt = NULL;
    mkrt_error err = {0};
    if (mkrt_create(&c, &rt, &err) != MKRT_OK) {
        fprintf(stderr, "mkrt_create: %s\n", err.message);
        return NULL;
    }
    return rt;
}

static mkrt_mpi_config layer_config(uint32_t handles)
{
    mkrt_mpi_config c = mkrt_mpi_config_default();
    c.handles = handles;
    c.batch_items = 16;
    c.buffers = 2;
    c.wait_timeout_ms = 20000;
    return c;
}

/* Every rank ACCs 1 into every handle; each owner must end with ranks. */
static int round_trip(mkrt_mpi *m, mkrt_runtime *rt, uint32_t handles)
{
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    int ok = p != NULL;
    for (uint32_t h = 0; ok && h < handles; h++) {
        mkrt_item it = {MKRT_OP_ACC, 0, h, 1};
        ok &= mkrt_mpi_publish(m, p, &it, 1, MKRT_TIMEOUT_INFINITE, NULL, NULL) == MKRT_OK;
    }
    ok &= mkrt_mpi_quiesce(m, MKRT_TIMEOUT_INFINITE) == MKRT_OK;
    for (uint32_t h = 0; ok && h < handles; h++) {
        uint64_t v = 0;
        mkrt_cell_read(rt, h, &v);
        if (mkrt_mpi_owner(m, h) == rank && v != (uint64_t)ranks)
            ok = 0;
    }
    mkrt_producer_close(p);
    return ok;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const uint32_t H = 64;
    mkrt_runtime *rt = new_runtime(H, 1);
    if (rt == NULL)
        return 2;

    /* 1. Argument errors: refused before any MPI call (MPI stays down). */
    mkrt_mpi *m = (mkrt_mpi *)&rt;
    mkrt_error err = {0};
    mkrt_mpi_config c = layer_config(H + 1);
    int ok = mkrt_mpi_create(&c, rt, &m, &err) == MKRT_EINVAL && m == NULL &&
             strstr(err.message, "handles is 65") != NULL &&
             strstr(err.message, "64 cells") != NULL && strstr(err.message, "Fix:") != NULL;
    mkrt_error last = {0};
    ok &= mkrt_mpi_error_last(&last) == MKRT_OK && last.status == MKRT_EINVAL &&
          strcmp(last.message, err.message) == 0;
    c = layer_config(0);
    ok &= mkrt_mpi_create(&c, rt, &m, &err) == MKRT_EINVAL && strstr(err.message, "Fix:") != NULL;
    /* mkrt_mpi_create_failed's too: no configuration, no failure to agree
     * on, a field out of range. */
    ok &= mkrt_mpi_create_failed(NULL, MKRT_ENOMEM, &err) == MKRT_EINVAL && strstr(err.message, "Fix:") != NULL;
    c = layer_config(H);
    ok &= mkrt_mpi_create_failed(&c, MKRT_OK, &err) == MKRT_EINVAL && strstr(err.message, "not a failure");
    ok &= mkrt_mpi_create_failed(&c, (mkrt_status)7, &err) == MKRT_EINVAL;
    ok &= mkrt_mpi_create_failed(&c, (mkrt_status)-1000, &err) == MKRT_EINVAL;
    c.batch_items = 0;
    ok &= mkrt_mpi_create_failed(&c, MKRT_ENOMEM, &err) == MKRT_EINVAL && strstr(err.message, "batch_items");
    int up = 1;
    MPI_Initialized(&up);
    ok &= up == 0;
    const int early_ok = ok; /* reported once MPI is up */

    /* 2. Too few producers: this rank holds the runtime's only one. */
    mkrt_producer *hog = mkrt_producer_open(rt, NULL);
    c = layer_config(H);
    mkrt_status st = mkrt_mpi_create(&c, rt, &m, &err);
    MPI_Initialized(&up);
    if (!up) {
        fprintf(stderr, "rank ?: mkrt_mpi_create (%s) left MPI down\n", mkrt_status_name(st));
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    check_on(NULL, 1, early_ok,
             "argument errors (handles above the runtime's cells, handles 0) are refused with the "
             "numbers and a Fix, before any MPI call (MPI is not initialised)");
    if (ranks > 1) {
        check_on(NULL, 1, st == MKRT_EAGAIN && m == NULL && strstr(err.message, "max_producers"),
                 "mkrt_mpi_create without room for a producer per other rank: EAGAIN on every rank");
    } else {
        skip("EAGAIN for max_producers", "1 rank needs no producer");
        mkrt_mpi_destroy(m, NULL);
    }
    mkrt_producer_close(hog);
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);

    /* 3. Follow the Fix in the same process: a runtime with more producers. */
    rt = new_runtime(H, (uint32_t)ranks + 1);
    m = NULL;
    st = mkrt_mpi_create(&c, rt, &m, &err);
    if (st != MKRT_OK) {
        fprintf(stderr, "rank %d: create after the fix: %s\n", rank, err.message);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    ok = round_trip(m, rt, H);
    check_on(m, 2, ok, "after EAGAIN, raising max_producers and creating again works in the same "
                       "process (MPI stays initialised), and items reach their owners");

    /* 4. A second layer beside a live one: MPI gives SERIALIZED only. */
    mkrt_runtime *rt2 = new_runtime(H, (uint32_t)ranks + 1);
    mkrt_mpi *m2 = NULL;
    st = mkrt_mpi_create(&c, rt2, &m2, &err);
    check_on(m, 2, st == MKRT_ESTATE && m2 == NULL && strstr(err.message, "MPI_THREAD_MULTIPLE") &&
                       strstr(err.message, "Fix:"),
             "a second layer while one runs, under MPI_THREAD_SERIALIZED: ESTATE with a Fix");
    mkrt_destroy(rt2, MKRT_TIMEOUT_INFINITE, NULL);

    /* 5. Destroy, then create again over the same runtime. */
    ok = mkrt_mpi_destroy(m, NULL) == MKRT_OK;
    for (uint32_t h = 0; h < H; h++)
        mkrt_cell_write(rt, h, 0);
    m = NULL;
    ok &= mkrt_mpi_create(&c, rt, &m, &err) == MKRT_OK;
    if (!ok) {
        fprintf(stderr, "rank %d: create after destroy: %s\n", rank, err.message);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    ok &= round_trip(m, rt, H);
    check_on(m, 2, ok, "mkrt_mpi_create after mkrt_mpi_destroy in the same process works");
    mkrt_mpi_destroy(m, NULL);

    /* 6. A configuration that differs between ranks: refused everywhere. */
    if (ranks > 1) {
        mkrt_mpi_config odd = c;
        odd.batch_items = 16 + (uint32_t)rank;
        m = NULL;
        st = mkrt_mpi_create(&odd, rt, &m, &err);
        check_on(NULL, 1, st == MKRT_EINVAL && m == NULL &&
                              strstr(err.message, "batch_items differs between the ranks") &&
                              strstr(err.message, "Fix:"),
                 "a configuration that differs between ranks: EINVAL on every rank");
        if (m != NULL)
            mkrt_mpi_destroy(m, NULL);
    } else {
        skip("a configuration that differs between ranks", "needs 2 ranks");
    }
    /* 6b. The last rank failed before it could create (its runtime, say):
     * it joins the create as failed, and every rank's create fails alike,
     * the others naming it; its own message stays its own. */
    m = NULL;
    if (rank == ranks - 1) {
        err = (mkrt_error){MKRT_ENOMEM, "this rank's own message"};
        st = mkrt_mpi_create_failed(&c, MKRT_ENOMEM, &err);
        ok = st == MKRT_ENOMEM && strcmp(err.message, "this rank's own message") == 0;
    } else {
        st = mkrt_mpi_create(&c, rt, &m, &err);
        char who[64];
        snprintf(who, sizeof who, "rank %d of %d could not start its layer", ranks - 1, ranks);
        ok = st == MKRT_ENOMEM && m == NULL && strstr(err.message, who) != NULL &&
             strstr(err.message, "Fix:") != NULL;
    }
    check_on(NULL, 1, ok, "a rank that failed before its create joins it with mkrt_mpi_create_failed: every "
                          "rank's create fails with its status (ENOMEM), naming it, instead of a timeout");
    /* ...and the process can still create. */
    m = NULL;
    st = mkrt_mpi_create(&c, rt, &m, &err);
    check_on(st == MKRT_OK ? m : NULL, st == MKRT_OK ? 2 : 1, st == MKRT_OK,
             "a create after a refused one works");
    mkrt_mpi_destroy(m, NULL);

    /* 7. The program finalises MPI: a create is refused, and the atexit
     * finaliser must not finalise again (mpirun fails the job if it does). */
    int all_ok = failed == 0;
    MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Finalize();
    m = NULL;
    st = mkrt_mpi_create(&c, rt, &m, &err);
    check_on(NULL, 0, st == MKRT_ESTATE && m == NULL && strstr(err.message, "finalised") &&
                          strstr(err.message, "Fix:"),
             "mkrt_mpi_create after the program's MPI_Finalize: ESTATE (rank 0's verdict; every "
             "rank's exit status has its own)");
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
    if (rank == 0) {
        if (!all_ok)
            printf("# a check failed on another rank\n");
        printf("1..%d\n", tests);
    }
    return failed > 0 || !all_ok ? 1 : 0;
}
