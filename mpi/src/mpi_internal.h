/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/src/mpi_internal.h - libmkrt_mpi's internals: the layer, its outboxes
 * and its progress thread.
 *
 * Threads: while the layer runs, the progress thread (sends, receives)
 * and the host thread in a collective make MPI calls, one at a time under
 * mpi_lock (mkrt_mpi_create() and mkrt_mpi_destroy() make the others,
 * before the thread starts and after it is joined: MPI_THREAD_SERIALIZED).
 * Host threads and ops append to outboxes under the outbox's mutex.
 * Threads and locks are C11 ones through base/thread.h (header-only,
 * so libmkrt_mpi needs no internal symbol of libmkrt.so; it maps them to
 * the pthread calls ThreadSanitizer intercepts in TSan builds only). */
#ifndef MKRT_MPI_INTERNAL_H
#define MKRT_MPI_INTERNAL_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/alloc_internal.h"
#include "base/thread.h"

#include "mkrt_mpi/mkrt_mpi.h"

/* MPI tag of item messages on the duplicated communicator. */
#define MM_TAG_ITEMS 1

/* The bounded send side towards one rank: `buffers` slots of batch_items
 * items used in sequence. Slot (sealed % buffers) is being filled (fill_n
 * items) while sealed - done < buffers; slots done..sealed-1 are sealed,
 * of which done..posted-1 are in flight in MPI. */
typedef struct mm_outbox {
    mkrt__mutex lock; /* guards fill_n, sealed, done, count[] */
    mkrt__cond room;  /* broadcast when a send completes (done grows) */
    uint32_t buffers, batch; /* the sizes below (init) */
    mkrt_item *items; /* buffers * batch_items */
    uint32_t *count;  /* items per sealed slot */
    uint64_t fill_n, sealed, done;
    /* Progress thread only: */
    uint64_t posted;
    MPI_Request *req;      /* per slot */
    double *sealed_at;     /* per slot: when sealed (hold_ms) */
    double oldest_post;    /* when slot `done` was posted (timeout) */
    /* Written by the progress thread, read by mkrt_mpi_peer_sent()
     * (relaxed: statistics only). */
    atomic_uint_fast64_t bytes_sent, msgs_sent;
} mm_outbox;

/* The receive side from one rank: one posted receive, then its items
 * published into the runtime through prod (may take several passes). */
typedef struct mm_inbox {
    mkrt_producer *prod;
    mkrt_item *items; /* batch_items */
    MPI_Request req;
    size_t n, off; /* received items, of which off are published */
    int posted;    /* a receive is posted */
} mm_inbox;

/* Collective kinds. */
enum { MM_COLL_NONE, MM_COLL_SUM, MM_COLL_BOR_ROOT0 };

struct mkrt_mpi {
    mkrt_mpi_config cfg;
    mkrt_runtime *rt;
    MPI_Comm comm;
    int rank, size;
    uint32_t per_rank; /* BLOCK: handles per rank */
    int fault;         /* mkrt__mpi_test_fault when created */
    mm_outbox *out;    /* size entries (own rank's unused) */
    mm_inbox *in;      /* size entries (own rank's unused) */
    mkrt__thread thread; /* stays in place until joined (TSan builds keep fn/arg in it) */
    atomic_int stop;   /* host -> progress: finish (seq_cst) */
    /* Item counts for termination detection (seq_cst: see quiesce.c). */
    atomic_uint_fast64_t sent, received;
    /* Statistics (relaxed: counters read for reports only). */
    atomic_uint_fast64_t msgs_sent, msgs_received, deferred, publish_waits, waves;
    atomic_uint_fast64_t bytes_sent, bytes_received, bytes_sent_node, msgs_sent_node, delivered;
    unsigned char *same_node; /* size entries: rank r runs on this rank's node (create) */
    uint64_t *node_hash;      /* size entries: create's scratch for every rank's node name hash */
    /* MPI calls while the progress thread runs: its passes and the host's
     * collectives take turns (a collective is then started and completed
     * by the host thread itself, with no hand-off to the progress thread). */
    mkrt__mutex mpi_lock;
    /* One collective at a time (held by the host thread making it). */
    mkrt__mutex coll_lock;
};

/* Test hook (mpi/tests/test_mpi_fault.c; libmkrt_mpi.so does not export
 * it): set before mkrt_mpi_create(), it makes that layer's progress thread
 * pass MPI an invalid argument, so that MPI itself returns an error on the
 * MPI-error path: MM_FAULT_SEND a negative tag to MPI_Isend,
 * MM_FAULT_COLL a negative count to the collectives. */
enum { MM_FAULT_NONE, MM_FAULT_SEND, MM_FAULT_COLL };
extern int mkrt__mpi_test_fault;
/* error.c: records a refusal in err (may be NULL) and in this thread's
 * last error (mkrt_mpi_error_last()); returns st. */
mkrt_status mkrt__mpi_fail(mkrt_error *err, mkrt_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* partition.c */
int mkrt__mpi_owner(const struct mkrt_mpi *m, uint32_t handle);
/* outbox.c: appends to dest's outbox, waiting for room until deadline_ns
 * (on CLOCK_MONOTONIC, mkrt__mpi_now_ns; 0 does not wait, all or nothing
 * then when all_or_nothing; UINT64_MAX waits without end).
 * Returns items appended. */
size_t mkrt__mpi_outbox_append(struct mkrt_mpi *m, int dest, const mkrt_item *items, size_t n,
                               int all_or_nothing, uint64_t deadline_ns);
int mkrt__mpi_outbox_init(mm_outbox *o, uint32_t buffers, uint32_t batch);
void mkrt__mpi_outbox_fini(mm_outbox *o);
/* progress.c */
int mkrt__mpi_progress_main(void *arg);
void mkrt__mpi_fatal(struct mkrt_mpi *m, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
double mkrt__mpi_now(void);       /* seconds on CLOCK_MONOTONIC */
uint64_t mkrt__mpi_now_ns(void);  /* nanoseconds on CLOCK_MONOTONIC */
/* progress.c: an MPI call's result; anything but success ends the job
 * with MPI's words (call with mpi_lock held, or before/after the thread). */
void mkrt__mpi_check(struct mkrt_mpi *m, int rc, const char *call, int peer);
/* collective.c: runs one collective on the calling (host) thread. */
mkrt_status mkrt__mpi_collective(struct mkrt_mpi *m, int kind, uint64_t *buf, int n,
                                 const char *what);

#endif
