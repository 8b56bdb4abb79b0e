/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt_mpi/mkrt_mpi.h
 * @brief mkrt across processes and nodes over MPI (libmkrt_mpi, optional).
 *
 * Each MPI rank runs one mkrt runtime and one ::mkrt_mpi on top of it.
 * The global handle space 0..mkrt_mpi_config::handles-1 is split between
 * the ranks by a partition fixed at mkrt_mpi_create() (block or hash,
 * mkrt_mpi_owner()); every rank's runtime has cells for all of them, and
 * only the owner's cell of a handle is meaningful. Handles at or above
 * mkrt_mpi_config::handles are local on every rank (per-rank scratch).
 *
 * Routing: an item goes to the owner of its out handle. mkrt_mpi_publish()
 * (host threads) and mkrt_mpi_op_emit() (inside ops) put local items into
 * the local runtime and remote ones into a bounded outbox per destination
 * rank. One progress thread per rank makes the MPI calls of the item
 * traffic (the collectives are made by the thread that calls them, one MPI
 * call at a time with the progress thread's under an internal lock): it sends full
 * outbox buffers (and a partial one whenever nothing is in flight to that
 * rank) with MPI_Isend as arrays of 16-byte items, keeps one MPI_Irecv
 * posted per source rank, and publishes what arrives into the local
 * runtime through one producer per source rank. When an outbox is full,
 * mkrt_mpi_publish() waits for room and mkrt_mpi_op_emit() returns
 * ::MKRT_EAGAIN (an op must not block: see there); a receiver whose
 * runtime is full leaves its receive unposted, so the sender's sends stall
 * and its outbox fills: backpressure, never unbounded memory.
 *
 * MPI threading: the library needs MPI_THREAD_SERIALIZED (the progress
 * thread is not the thread that initialised MPI). mkrt_mpi_create()
 * initialises MPI with it when the program has not; a program that
 * initialised MPI itself must have asked for SERIALIZED or MULTIPLE; while
 * an ::mkrt_mpi exists, the program may call MPI itself only under
 * MPI_THREAD_MULTIPLE (the library uses its own duplicate of
 * MPI_COMM_WORLD, so its messages never match the program's), and a second
 * ::mkrt_mpi may exist beside it only then too.
 *
 * MPI's life: MPI cannot be initialised again once finalised, so neither a
 * failed mkrt_mpi_create() nor mkrt_mpi_destroy() finalises it: after
 * either, the process can create a layer again (and follow a failed
 * create's "Fix:" in the same process). When mkrt_mpi_create() initialised
 * MPI, mkrt finalises it when the process exits normally (an atexit
 * handler: from the thread that calls exit() or returns from main),
 * unless the program called MPI_Finalize itself or a layer was not
 * destroyed; the program may call MPI meanwhile. When the program
 * initialised MPI, finalising it is the program's business, after its
 * last mkrt_mpi_destroy().
 *
 * Errors: every refusal is written to the call's ::mkrt_error where it
 * takes one, and always to this thread's last-error record,
 * mkrt_mpi_error_last(): that is where the calls without an ::mkrt_error
 * parameter leave their message (what failed, the numbers, "Fix: ...").
 *
 * Ordering contract across ranks (on top of mkrt/runtime.h's):
 * - Ordered: the items one thread passes to mkrt_mpi_publish() (or one op
 *   run to mkrt_mpi_op_emit()) for handles that one rank owns reach that
 *   rank's runtime in call order (one FIFO outbox per destination, MPI's
 *   non-overtaking rule, one producer per source rank there), so the
 *   runtime's per-producer, per-handle order holds for them: per producer
 *   and handle, through the owner rank.
 * - Not ordered: items from different source ranks (each source is a
 *   producer of its own at the owner); items for handles of different
 *   owners; and a thread's local items against its remote ones.
 *
 * Quiescence: mkrt_mpi_quiesce() returns when every rank's runtime is
 * quiescent and no item is in flight anywhere (in an outbox, in MPI, or
 * received and not yet published). It counts items sent and items
 * received in waves (non-blocking allreduces): the job is done when two
 * consecutive waves see every rank idle, as many items received as sent,
 * and the same counts.
 *
 * Faults: MPI errors are returned (MPI_ERRORS_RETURN on the duplicated
 * communicator), and the layer (the progress thread, or the thread in a
 * collective) ends the job with MPI_Abort and
 * a message on stderr naming the rank, the call and the error (mpirun
 * then exits with a failure; mpi/tests/test_mpi_fault.c checks it). A rank
 * that waits longer than mkrt_mpi_config::wait_timeout_ms for a peer (a
 * collective or a send that makes no progress: the peer died or hangs)
 * ends the job the same way, so no rank hangs. An item is acknowledged
 * when mkrt_mpi_publish() or mkrt_mpi_op_emit() accepted it; once
 * mkrt_mpi_destroy() returns, every acknowledged item ran (or failed on
 * its owner's error path) exactly once.
 */
#ifndef MKRT_MPI_H
#define MKRT_MPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/item.h"
#include "mkrt/ring.h"
#include "mkrt/runtime.h"
#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief How handles are split between ranks (mkrt_mpi_owner()). */
typedef enum mkrt_mpi_partition {
    /** Rank r owns the handles r*k .. r*k+k-1, k = ceil(handles / ranks). */
    MKRT_MPI_BLOCK = 0,
    /** Rank (splitmix64(handle) mod ranks) owns the handle: balanced for
     *  skewed graphs, with no locality. */
    MKRT_MPI_HASH = 1
} mkrt_mpi_partition;

/** @brief Largest mkrt_mpi_config::batch_items. */
#define MKRT_MPI_BATCH_MAX (1u << 20)
/** @brief Largest mkrt_mpi_config::buffers. */
#define MKRT_MPI_BUFFERS_MAX 1024u
/** @brief Largest mkrt_mpi_config::wait_timeout_ms (one hour). */
#define MKRT_MPI_TIMEOUT_MAX 3600000u

/**
 * @brief A receive hook: applies a batch of items that arrived from rank
 * src itself, instead of publishing them into the runtime.
 *
 * Called on the progress thread, once per received message, with the
 * message's items in order, before they reach the runtime. Return true
 * when the hook applied all n items (the layer then counts them as run:
 * mkrt_mpi_quiesce() treats them as done, so the hook must have finished
 * with them, e.g. with atomic stores into memory the program reads after
 * the quiescence); return false, with no effect, to decline: the layer
 * then publishes them into the runtime as without a hook. It must not
 * block and must not call mkrt_mpi_* functions other than
 * mkrt_mpi_rank(), mkrt_mpi_size() and mkrt_mpi_owner(). This is how a
 * program applies a remote frontier in bulk (examples/mpi/traverse_mpi.c:
 * BFS arrivals become one atomic minimum each, no runtime pipeline).
 * @param user mkrt_mpi_config::deliver_user.
 * @param src The sending rank.
 * @param items The items (valid during the call only).
 * @param n How many (at least 1).
 * @return true: applied, all of them; false: declined, none of them.
 */
typedef bool (*mkrt_mpi_deliver_fn)(void *user, int src, const mkrt_item *items, size_t n);

/**
 * @brief Configuration of the MPI layer: start from mkrt_mpi_config_default().
 * Each field: meaning (default) [accepted range]. Every rank must pass the
 * same values.
 */
typedef struct mkrt_mpi_config {
    mkrt_mpi_partition partition; /**< Partition (BLOCK) [BLOCK, HASH]. */
    /** Global handles split between the ranks (no default: 0 is refused)
     *  [1..mkrt_config::cells of the runtime]. */
    uint32_t handles;
    uint32_t batch_items; /**< Items per MPI message (4096) [1..MKRT_MPI_BATCH_MAX]. */
    uint32_t buffers;     /**< Send buffers per destination rank (8) [1..MKRT_MPI_BUFFERS_MAX]. */
    /** How long a rank waits for a peer before it ends the job (30000)
     *  [1..MKRT_MPI_TIMEOUT_MAX]: a collective not joined, or a send
     *  without progress. Must exceed the longest time a rank may spend in
     *  one op or stall its runtime. */
    uint32_t wait_timeout_ms;
    /** Test hook: the progress thread keeps every message this long
     *  before sending it (0) [0..wait_timeout_ms). */
    uint32_t hold_ms;
    /** Optional receive hook (NULL): see ::mkrt_mpi_deliver_fn. The one
     *  field that may differ between ranks (not compared). */
    mkrt_mpi_deliver_fn deliver;
    void *deliver_user; /**< Passed to deliver (NULL). */
} mkrt_mpi_config;

/** @brief Opaque MPI layer of one rank (mkrt_mpi_create()). */
typedef struct mkrt_mpi mkrt_mpi;

/** @brief Counters of one rank (mkrt_mpi_stats_read()). */
typedef struct mkrt_mpi_stats {
    uint64_t forwarded;        /**< Items queued for other ranks. */
    uint64_t received;         /**< Items from other ranks published into the runtime. */
    uint64_t messages_sent;    /**< MPI messages sent. */
    uint64_t messages_received; /**< MPI messages received. */
    uint64_t deferred;         /**< mkrt_mpi_op_emit() calls refused with ::MKRT_EAGAIN. */
    uint64_t publish_waits;    /**< Times mkrt_mpi_publish() waited for outbox room. */
    uint64_t waves;            /**< Quiescence waves this rank joined. */
    uint64_t bytes_sent;       /**< Bytes of the messages sent (all destinations). */
    uint64_t bytes_received;   /**< Bytes of the messages received. */
    /** Of bytes_sent, to ranks on this rank's node (same MPI processor
     *  name: shared memory); the rest crossed the network. */
    uint64_t bytes_sent_node;
    uint64_t messages_sent_node; /**< Of messages_sent, to ranks on this rank's node. */
    uint64_t delivered;        /**< Of received, items the receive hook applied (mkrt_mpi_config::deliver). */
} mkrt_mpi_stats;

/**
 * @brief The default configuration (the values in parentheses in ::mkrt_mpi_config).
 * @return The configuration, by value (handles is 0: set it).
 * @par Thread safety
 * Any thread.
 */
mkrt_mpi_config mkrt_mpi_config_default(void);

/**
 * @brief Whether this process was started by an MPI launcher.
 *
 * Looks for the variables mpirun/mpiexec set (OMPI_COMM_WORLD_SIZE,
 * PMI_SIZE, PMIX_RANK); calls no MPI function.
 * @return true when one is set.
 * @par Thread safety
 * Any thread.
 */
bool mkrt_mpi_launched(void);

/**
 * @brief Starts the MPI layer of this rank over runtime rt (collective).
 *
 * Initialises MPI (MPI_THREAD_SERIALIZED) unless the program did,
 * duplicates MPI_COMM_WORLD, opens one producer of rt per other rank and
 * starts the progress thread. Register rt's ops and graph first: this
 * opens producers (also when it then fails), after which rt refuses
 * registrations.
 *
 * Argument errors (::MKRT_EINVAL for NULL, a field outside its range, or
 * handles above rt's cells) are found before any MPI call, on the calling
 * rank alone, so pass the same values on every rank: a rank that returns
 * early is missed by the others, which then end the job after
 * wait_timeout_ms. Past them, the ranks agree: a configuration that
 * differs between ranks, or a failure on one rank (::MKRT_EAGAIN,
 * ::MKRT_ENOMEM), makes every rank return the same status. A failed
 * create leaves MPI initialised and nothing else behind (see "MPI's life"
 * above): create again after fixing the cause.
 *
 * @param cfg The configuration (copied); the same on every rank.
 * @param rt The rank's runtime (borrowed until mkrt_mpi_destroy()).
 * @param[out] out The layer (NULL on failure).
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Running.
 * @retval MKRT_EINVAL cfg, rt or out is NULL, a field is outside its
 *         range (the message names it and the range; handles must be at
 *         most rt's mkrt_config::cells), or a field differs between ranks.
 * @retval MKRT_ENOTSUP MPI gives less than MPI_THREAD_SERIALIZED.
 * @retval MKRT_ESTATE MPI was finalised already, or another ::mkrt_mpi
 *         runs in this process and MPI gives less than
 *         MPI_THREAD_MULTIPLE.
 * @retval MKRT_EAGAIN rt, on this rank or another, has no room for one
 *         producer per other rank (mkrt_config::max_producers).
 * @retval MKRT_ENOMEM Memory or the thread could not be had.
 * @retval MKRT_EDEVICE An MPI call failed (the message has MPI's words).
 * @return The status, as listed.
 * @par Thread safety
 * Any one thread per rank; every rank must call it.
 */
mkrt_status mkrt_mpi_create(const mkrt_mpi_config *cfg, mkrt_runtime *rt, mkrt_mpi **out,
                            mkrt_error *err);

/**
 * @brief A rank that cannot create its layer fails the create on every rank (collective).
 *
 * Call it on a rank that failed before it could call mkrt_mpi_create()
 * (its runtime could not be made, memory ran out for what the program
 * builds first), where the other ranks call mkrt_mpi_create() with the
 * same configuration. It joins the create's collectives with `why` as
 * this rank's failure, so every other rank's create returns `why` too and
 * names this rank (as when a rank's create is refused memory), instead
 * of waiting wait_timeout_ms and ending the job. Nothing is left behind
 * but MPI, initialised as by a failed create.
 *
 * Argument errors are found before any MPI call, on this rank alone, as
 * for mkrt_mpi_create() (handles is not compared with a runtime's cells:
 * this rank has none).
 *
 * @param cfg The configuration the other ranks pass to mkrt_mpi_create().
 * @param why This rank's failure: an MKRT_E* status.
 * @param err Untouched when the ranks agreed (it may hold the caller's own
 *        message); filled when this call failed otherwise (see below).
 * @retval why The ranks agreed: every rank's create failed.
 * @retval MKRT_EINVAL cfg is NULL, why is not a failure status, or a
 *         field of cfg is outside its range.
 * @retval MKRT_ENOTSUP, MKRT_ESTATE, MKRT_EDEVICE As for mkrt_mpi_create()
 *         (MPI could not be used).
 * @return The status, as listed.
 * @par Thread safety
 * Any one thread per rank, in place of that rank's mkrt_mpi_create().
 */
mkrt_status mkrt_mpi_create_failed(const mkrt_mpi_config *cfg, mkrt_status why, mkrt_error *err);

/**
 * @brief Waits for global quiescence, stops the layer and frees it (collective).
 *
 * Every acknowledged item has run on its owner when this returns. The
 * runtime stays (destroy it after). MPI stays initialised (see "MPI's
 * life" in the file overview): mkrt_mpi_create() may follow, over the same
 * runtime or another.
 * @param m The layer; NULL is a no-op returning ::MKRT_OK.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Stopped and freed.
 * @return The status, as listed (a fault ends the job instead).
 * @par Thread safety
 * One thread per rank, every rank, not overlapping any other call on m.
 */
mkrt_status mkrt_mpi_destroy(mkrt_mpi *m, mkrt_error *err);

/**
 * @brief This rank's number.
 * @param m The layer.
 * @return 0..ranks-1, or -1 for NULL.
 * @par Thread safety
 * Any thread.
 */
int mkrt_mpi_rank(const mkrt_mpi *m);
/**
 * @brief The number of ranks.
 * @param m The layer.
 * @return The ranks, or 0 for NULL.
 * @par Thread safety
 * Any thread.
 */
int mkrt_mpi_size(const mkrt_mpi *m);
/**
 * @brief The rank that owns a handle.
 * @param m The layer.
 * @param handle Any handle.
 * @return The owner's rank (this rank for a handle at or above
 *         mkrt_mpi_config::handles), or -1 for NULL.
 * @par Thread safety
 * Any thread, inside ops too.
 */
int mkrt_mpi_owner(const mkrt_mpi *m, uint32_t handle);

/**
 * @brief Publishes items, each to the owner of its out handle.
 *
 * Items are taken in order: runs of local items go to producer p
 * (mkrt_publish_some()), the others into the outbox of their owner,
 * waiting for room when it is full.
 * @param m The layer.
 * @param p A producer of the rank's runtime, owned by the calling thread.
 * @param items The items (copied); may be NULL when n is 0.
 * @param n How many.
 * @param timeout_ns Relative timeout for the whole call (0 tries once,
 *        ::MKRT_TIMEOUT_INFINITE waits for ever).
 * @param[out] published Items accepted (a prefix), whatever the result;
 *        may be NULL.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK All n accepted.
 * @retval MKRT_ETIMEDOUT A ring or an outbox stayed full; a prefix went.
 * @retval MKRT_ECLOSED The runtime or the layer is shutting down.
 * @retval MKRT_EINVAL m or p is NULL, or items is NULL with n > 0.
 * @return The status, as listed.
 * @par Thread safety
 * The producer's owning thread; other threads publish concurrently.
 */
mkrt_status mkrt_mpi_publish(mkrt_mpi *m, mkrt_producer *p, const mkrt_item *items, size_t n,
                             uint64_t timeout_ns, size_t *published, mkrt_error *err);

/**
 * @brief From a running op: emits items, each to the owner of its out handle.
 *
 * Items are taken in order, in runs of one owner: a local run goes to
 * mkrt_op_emit(), a remote run into its owner's outbox, each run all or
 * nothing. It never blocks: when an outbox lacks room it returns
 * ::MKRT_EAGAIN. The op can then emit its own item again with
 * mkrt_op_emit() to retry in a later batch (the runtime keeps running and
 * the progress thread keeps sending meanwhile), or fail.
 * @param m The layer.
 * @param ctx The context the op was called with.
 * @param items The items (copied); may be NULL when n is 0.
 * @param n How many.
 * @param[out] emitted Items emitted (a prefix), whatever the result; may
 *        be NULL.
 * @retval MKRT_OK All n emitted.
 * @retval MKRT_EAGAIN An outbox has no room for the run now.
 * @retval MKRT_EOVERFLOW The runtime's emission queue has no room
 *         (mkrt_op_emit()).
 * @retval MKRT_EINVAL m or ctx is NULL, items is NULL with n > 0, or ctx
 *         is not the context of an op running now on m's runtime (a
 *         fabricated one, a copy used after its op returned, one of
 *         another runtime): nothing is emitted, and the message (in
 *         mkrt_mpi_error_last()) says which. A context used after its op
 *         returned is recognised where mkrt_op_emit() recognises it.
 * @return The status, as listed; ::MKRT_EAGAIN and ::MKRT_EOVERFLOW are
 *         flow control and leave no message.
 * @par Thread safety
 * Inside the op the context was given to; ops on other workers emit
 * concurrently.
 */
mkrt_status mkrt_mpi_op_emit(mkrt_mpi *m, const mkrt_op_ctx *ctx, const mkrt_item *items, size_t n,
                             size_t *emitted);

/**
 * @brief Waits until every rank is quiescent and no item is in flight (collective).
 *
 * Each rank waits for its runtime (mkrt_quiesce()) in slices and joins a
 * wave after each: so a busy rank still proves it is alive. Items
 * published from host threads must be published before the call on their
 * rank. All ranks return the same status.
 * @param m The layer.
 * @param timeout_ns Relative timeout (::MKRT_TIMEOUT_INFINITE: for ever);
 *        when any rank's passes, all ranks return ::MKRT_ETIMEDOUT at the
 *        same wave.
 * @retval MKRT_OK Globally quiescent: every cell holds the result of
 *         everything published before and all it emitted, on every rank.
 * @retval MKRT_ETIMEDOUT A rank's timeout passed first.
 * @retval MKRT_ECLOSED A runtime stopped.
 * @retval MKRT_EINVAL m is NULL.
 * @return The status, as listed.
 * @par Thread safety
 * One thread per rank, every rank; not from an op.
 */
mkrt_status mkrt_mpi_quiesce(mkrt_mpi *m, uint64_t timeout_ns);

/**
 * @brief Sums values element-wise over all ranks, in place (collective).
 * @param m The layer.
 * @param values n numbers; on return, their sums over the ranks.
 * @param n How many (same on every rank).
 * @retval MKRT_OK Summed.
 * @retval MKRT_EINVAL m is NULL, values is NULL with n > 0, or n is
 *         above INT32_MAX.
 * @return The status, as listed.
 * @par Thread safety
 * One thread per rank, every rank; not from an op.
 */
mkrt_status mkrt_mpi_allreduce_sum(mkrt_mpi *m, uint64_t *values, size_t n);

/**
 * @brief Reads the cells first..first+count-1 from their owners into rank 0 (collective).
 *
 * Each rank reads its runtime's cells (quiesce first) and keeps those it
 * owns; rank 0 gets every handle's value from its owner.
 * @param m The layer.
 * @param first The first handle.
 * @param count How many (first + count at most mkrt_mpi_config::handles).
 * @param out count entries on every rank: the values on rank 0, scratch
 *        elsewhere.
 * @retval MKRT_OK Gathered.
 * @retval MKRT_EINVAL m or out is NULL, the range exceeds the handles, or
 *         count is above INT32_MAX.
 * @return The status, as listed (or a mkrt_cells_read() failure).
 * @par Thread safety
 * One thread per rank, every rank; not from an op.
 */
mkrt_status mkrt_mpi_gather_cells(mkrt_mpi *m, uint32_t first, uint32_t count, uint64_t *out);

/**
 * @brief This rank's counters.
 * @param m The layer.
 * @param[out] out The counters.
 * @retval MKRT_OK Filled.
 * @retval MKRT_EINVAL m or out is NULL.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread; each counter is read atomically, not all together.
 */
mkrt_status mkrt_mpi_stats_read(const mkrt_mpi *m, mkrt_mpi_stats *out);

/**
 * @brief Bytes and messages this rank sent to one destination rank.
 * @param m The layer.
 * @param dest The destination, 0..ranks-1 (0 for this rank itself).
 * @param[out] bytes Bytes sent to dest; may be NULL.
 * @param[out] messages Messages sent to dest; may be NULL.
 * @retval MKRT_OK Filled.
 * @retval MKRT_EINVAL m is NULL or dest is not a rank.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread; each counter is read atomically, not both together.
 */
mkrt_status mkrt_mpi_peer_sent(const mkrt_mpi *m, int dest, uint64_t *bytes, uint64_t *messages);

/**
 * @brief The error record of this thread's last refused mkrt_mpi_* call.
 *
 * Each refusal (see "Errors" in the file overview) overwrites it; a call
 * that succeeds leaves it as it was (like errno).
 * @param[out] out The record: status and message ("Fix: ..."); ::MKRT_OK
 *        and an empty message when no call on this thread was refused.
 * @retval MKRT_OK Filled.
 * @retval MKRT_EINVAL out is NULL.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread, inside ops too; each thread has its own record.
 */
mkrt_status mkrt_mpi_error_last(mkrt_error *out);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_MPI_H */
