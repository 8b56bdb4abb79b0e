/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/runtime.h
 * @brief The runtime: producers -> dispatcher -> megakernel.
 *
 * Producer threads publish items into their own lock-free rings. One
 * dispatcher thread drains the rings round robin (at most burst_per_ring
 * items per ring per pass, so no producer starves another), forms a batch,
 * drops exact duplicates, layers the batch by the handles its items read
 * and write, splits layers that exceed the device memory budget, looks the
 * batch's shape up in the plan cache, and launches it on the backend: a
 * persistent pool of worker threads (CPU, the default) that runs the batch
 * layer by layer with a barrier between layers. Batch k+1 is drained and
 * planned while batch k runs.
 *
 * Ordering contract (within a batch, items in drain order):
 * - B runs after A when B.in == A.out, B.out == A.out, or B.out == A.in.
 * - A producer's items are drained in publish order.
 * - Batches run in order: batch k completes before batch k+1 starts.
 * - Results are those of running the admitted items one after another in
 *   drain order. Dedupe never changes them: an exact duplicate (same op,
 *   in, out, param) of an earlier item of the batch is pruned only when the
 *   op is idempotent for it (::mkrt_op_desc::idempotent; built-ins: NOP and
 *   STORE always, ADD, MIN, RELAX and OR when in != out, APPEND and ACC
 *   never) and no item between the
 *   two writes (has as out) the duplicate's in or out handle.
 *
 * Emitted items (mkrt_op_emit(), and the edges ::MKRT_OP_RELAX emits):
 * - An emitted item runs after the item that emitted it has run: it goes
 *   into a later batch, never the emitter's (batches run in order). Items
 *   one op emits are drained in emission order, and before items of their
 *   latency class that are emitted later (an emitted item has the class of
 *   the item that emitted it, mkrt_producer_set_class(); interactive
 *   emissions may overtake bulk ones); the ordering contract above then applies to them within
 *   their batch as to published items (drained before the producers'
 *   items of that batch), and dedupe prunes their exact duplicates (a
 *   frontier visits a vertex once per batch).
 * - Which later batch is not specified: emissions of one level may share
 *   a batch with those of the next when a level exceeds max_batch. Ops
 *   that need no order among themselves (mkrt_op_desc::commutes, and the
 *   update built-ins MIN, RELAX, OR and ACC) give the same result in any
 *   such order.
 * - Edges of a frontier (::MKRT_OP_RELAX, mkrt_op_emit_edges()) coalesce:
 *   a vertex marked several times before its edges are emitted has them
 *   emitted once. They run level by level: the vertices marked while a
 *   level runs form the next level, which starts once the level's last
 *   round completed. A level runs as frontier rounds: batches of their own
 *   of up to max_batch edge items, all in one layer, each reading its
 *   in cell (the frontier vertex) when it runs, while others of the round
 *   may lower that cell (a vertex lowered so is in the frontier again).
 *   The ops are monotone (a minimum), so the fixpoint that mkrt_quiesce()
 *   waits for is the same as in any sequential order; the cells between
 *   rounds are upper bounds of it.
 * - mkrt_drain() waits for published items only; mkrt_quiesce() also for
 *   everything they emit, transitively.
 *
 * Commuting items: items of one update op (MIN and RELAX together, OR,
 * ACC, or a user op registered with mkrt_op_desc::commutes) that write the
 * same handle and do not read it run in one layer, concurrently and
 * atomically, when no other item touches that handle between them in
 * drain order; results are those of any sequential order of them.
 *
 * Accounting: published + emitted = executed + pruned + failed, always,
 * once quiescent: every item is counted exactly once. When the device faults or
 * its watchdog trips, every admitted item of that batch is reported failed
 * (::MKRT_EDEVICE or ::MKRT_ETIMEDOUT; items refused at admission keep
 * their own status), including items the device ran before it failed: the
 * cells that batch writes are then undefined, and its APPENDs are dropped.
 * The device is stopped before the CPU pool takes over: a batch still
 * running (slow, not hung) gets another watchdog_ms to end, and no later
 * batch's cells see its writes; a device that does not stop in that time
 * (an op that never returns) is reported by mkrt_backend_describe() ("did
 * not stop"), and may still write that batch's cells.
 *
 * Nothing is dropped silently: an item that cannot run (unknown op, handle
 * out of range, a failing user op, over the memory budget, or left when
 * destroy times out) goes to the error callback, or to the dead-letter ring
 * when there is no callback, and is counted as failed. Items are checked
 * (op known, handles below mkrt_config::cells: STORE, APPEND and ACC out,
 * ADD, MIN, RELAX and OR in and out, user ops in and out; a registered
 * graph for RELAX; room in the APPEND log) before dedupe and
 * layering, the same way on every backend, so a bad item never reaches an
 * op and never adds a layer.
 *
 * Bad arguments (NULL pointers, out-of-range numbers) to any call return
 * ::MKRT_EINVAL (or 0 / NULL where the call returns a count or a handle);
 * nothing aborts. (mkrt_destroy() of NULL is a no-op that returns
 * ::MKRT_OK.)
 *
 * Threads: a producer handle belongs to one thread at a time. Everything
 * else may be called from any thread. Stats can be read at any time.
 */
#ifndef MKRT_RUNTIME_H
#define MKRT_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/config.h"
#include "mkrt/item.h"
#include "mkrt/op.h"
#include "mkrt/publish.h"
#include "mkrt/stats.h"
#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Creates a runtime: starts the dispatcher and the backend.
 * @param cfg The configuration (copied); NULL: the defaults.
 * @param[out] rt The runtime (NULL on failure). Destroy it with
 *        mkrt_destroy().
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK `*rt` is running.
 * @retval MKRT_EINVAL rt is NULL, or a config field is outside its range
 *         (the message names the field, the value, the range and a fix).
 * @retval MKRT_EOVERFLOW cells or append_log_capacity need more bytes than
 *         the machine can address.
 * @retval MKRT_ENOMEM Memory or a thread could not be had; nothing is left
 *         allocated.
 * @retval MKRT_EDEVICE CUDA was requested but is not usable (AUTO falls
 *         back to the CPU instead).
 * @return The status, as listed (SIM may also report the simulated
 *         device's own ::MKRT_ENOMEM or ::MKRT_EOVERFLOW).
 * @par Thread safety
 * Any thread.
 */
mkrt_status mkrt_create(const mkrt_config *cfg, mkrt_runtime **rt, mkrt_error *err);

/**
 * @brief Stops intake, runs everything published, and frees the runtime.
 *
 * Later publishes get ::MKRT_ECLOSED. Everything already published runs;
 * then every thread is joined and everything freed. If that takes longer
 * than timeout_ns, whatever has not started running goes to the error
 * path with ::MKRT_ETIMEDOUT (the batch in progress still finishes).
 *
 * @param rt The runtime; NULL is a no-op that returns ::MKRT_OK.
 * @param timeout_ns Relative timeout for the drain; ::MKRT_TIMEOUT_INFINITE
 *        waits for ever.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Everything ran (or failed on the error path) and the
 *         runtime is gone.
 * @retval MKRT_ETIMEDOUT The drain timed out; the runtime is still gone.
 * @retval MKRT_EDEVICE The CUDA megakernel did not stop (an op that never
 *         returns): the runtime is gone but its cells and the device's
 *         memory stay allocated.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread, once. Producer threads may be inside mkrt_publish()
 * meanwhile (they get ::MKRT_ECLOSED); producers left open stay valid as
 * handles whose publish, fence and wait return ::MKRT_ECLOSED, and are
 * freed by mkrt_producer_close() (which may also race mkrt_destroy()).
 * mkrt_wait() may overlap it (returning when its ticket completed, or
 * ::MKRT_ECLOSED); calls that take the runtime itself (mkrt_drain(),
 * stats, cells, the log, mkrt_producer_open()) must not overlap it or
 * follow it.
 */
mkrt_status mkrt_destroy(mkrt_runtime *rt, uint64_t timeout_ns, mkrt_error *err);

/**
 * @brief Registers a user op.
 *
 * Registering the same number again replaces it. Only before the first
 * producer is opened successfully (a failed mkrt_producer_open() leaves no
 * trace); the op table is frozen after that.
 *
 * @param rt The runtime.
 * @param op Op number, MKRT_OP_USER_FIRST..MKRT_OP_MAX-1.
 * @param desc The op (copied; desc->name and desc->user must outlive the
 *        runtime).
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Registered.
 * @retval MKRT_EINVAL rt or desc is NULL, op is built in or out of range,
 *         desc->fn is NULL, or a producer was already opened.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread; serialised with mkrt_producer_open().
 */
mkrt_status mkrt_op_register(mkrt_runtime *rt, uint32_t op, const mkrt_op_desc *desc,
                             mkrt_error *err);

/**
 * @brief Waits until everything published (by any producer) before the call has completed.
 *
 * Like mkrt_wait(), it runs pending batches itself on the CPU backend
 * while the dispatcher is idle, and keeps its deadline as mkrt_wait()
 * does (at worst one op of a batch it runs itself past timeout_ns; the
 * rest is left to the dispatcher). "Published before the call" is meant as
 * for mkrt_quiesce(): the item's publish call returned before this call
 * began. Items other threads publish meanwhile may or may not be waited
 * for; their completion never stands in for an older item's.
 *
 * @param rt The runtime.
 * @param timeout_ns Relative timeout; 0 checks once,
 *        ::MKRT_TIMEOUT_INFINITE waits for ever.
 * @retval MKRT_OK Everything published before the call completed.
 * @retval MKRT_ETIMEDOUT Not yet.
 * @retval MKRT_EINVAL rt is NULL.
 * @retval MKRT_ECLOSED The runtime stopped first.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread, not overlapping mkrt_destroy(); never from an op or the
 * error callback.
 */
mkrt_status mkrt_drain(mkrt_runtime *rt, uint64_t timeout_ns);
/**
 * @brief Waits until everything published before the call, and all it emitted, transitively, completed.
 *
 * Unlike mkrt_drain(), this also waits for the items that ops emitted
 * (mkrt_op_emit(), ::MKRT_OP_RELAX), the items those emitted, and so on.
 * After ::MKRT_OK every cell holds the result of everything published
 * before the call and of all it emitted (and of whatever ran meanwhile);
 * read them with mkrt_cells_read().
 *
 * It waits for a snapshot, not for a moment when the runtime is idle, so
 * it ends under any concurrent load (liveness): other producers may keep
 * publishing items that emit, and the call still returns once the
 * snapshot's work is done. To that end, while the call waits and work
 * that descends from the snapshot is still pending, the runtime takes no
 * new items from the producers' rings (they wait there, as under
 * backpressure; publishing goes on into the rings), so that work cannot
 * grow with the new load; it ends because emission chains end (a chain
 * that waits for other items to be taken in first, such as an op that
 * re-emits itself until some later item ran, makes the call time out). Emitted work is attributed to the
 * oldest batch it may descend from, so the call may also wait for some
 * items published after it began, never for an unbounded amount.
 * Deadline and helping as for mkrt_drain(): at worst one op past
 * timeout_ns.
 *
 * "Published before the call" means: the item's mkrt_publish(),
 * mkrt_publish_some() or mkrt_try_publish() call put it in its producer's
 * ring and returned, and that return happens before this call begins (the
 * same thread published it, or the publishing thread's return was followed
 * by a synchronization with this thread: a mutex, a join, an atomic
 * release/acquire). Such items run, and everything they emit, transitively,
 * before ::MKRT_OK, whatever other producers publish concurrently. Items
 * published concurrently with the call (their publish call has not
 * returned when it begins) may or may not be waited for; a snapshot whose
 * items emit for ever (a cycle of emissions) never completes (the call then
 * times out).
 *
 * @param rt The runtime.
 * @param timeout_ns Relative timeout; 0 checks once,
 *        ::MKRT_TIMEOUT_INFINITE waits for ever.
 * @retval MKRT_OK Quiescent.
 * @retval MKRT_ETIMEDOUT Not yet.
 * @retval MKRT_EINVAL rt is NULL.
 * @retval MKRT_ECLOSED The runtime stopped first.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread, not overlapping mkrt_destroy(); never from an op or the
 * error callback.
 */
mkrt_status mkrt_quiesce(mkrt_runtime *rt, uint64_t timeout_ns);

/**
 * @brief Reads a cell.
 *
 * The value is consistent after mkrt_drain() or mkrt_wait() returned for
 * the items that wrote it.
 *
 * @param rt The runtime.
 * @param handle Cell index, below mkrt_config::cells.
 * @param[out] value The cell's value.
 * @retval MKRT_OK `*value` is set.
 * @retval MKRT_EINVAL rt or value is NULL, or handle >= cells.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread, before mkrt_destroy().
 */
mkrt_status mkrt_cell_read(mkrt_runtime *rt, uint32_t handle, uint64_t *value);
/**
 * @brief Reads cells first .. first + count - 1 into out, in one call.
 *
 * The same contract as mkrt_cell_read(): once mkrt_wait() has returned for
 * a ticket (or mkrt_drain() has returned), the values include the effects
 * of every item that ticket covers; cells that items still in flight touch
 * may hold any value they pass through. On a device backend this is one
 * bulk copy, so prefer it to a loop of mkrt_cell_read().
 *
 * @param rt The runtime.
 * @param first First cell index.
 * @param count How many cells; 0 reads nothing and succeeds.
 * @param[out] out Room for count values.
 * @retval MKRT_OK out[0 .. count-1] are set.
 * @retval MKRT_EINVAL rt is NULL, out is NULL with count > 0, or the range
 *         does not lie below mkrt_config::cells (nothing is written).
 * @return The status, as listed.
 * @par Thread safety
 * Any thread, before mkrt_destroy().
 */
mkrt_status mkrt_cells_read(mkrt_runtime *rt, uint32_t first, size_t count, uint64_t *out);
/**
 * @brief Writes a cell.
 *
 * Write a cell only while no published item that touches it may still
 * run.
 *
 * @param rt The runtime.
 * @param handle Cell index, below mkrt_config::cells.
 * @param value The value.
 * @retval MKRT_OK Written.
 * @retval MKRT_EINVAL rt is NULL, or handle >= cells.
 * @return The status, as listed.
 * @par Thread safety
 * Any thread, before mkrt_destroy(); not concurrently with items or other
 * writers of the same cell.
 */
mkrt_status mkrt_cell_write(mkrt_runtime *rt, uint32_t handle, uint64_t value);

/**
 * @brief One entry of the APPEND log: (handle, param) of an APPEND that ran.
 *
 * The APPEND log is one ring of entries for all handles, in the order the
 * APPENDs ran (APPENDs to one handle run in drain order), of
 * append_log_capacity entries. An entry is visible once the batch that
 * appended it has completed (never half written). Entries stay until
 * consumed; an APPEND that finds the log full fails with ::MKRT_EOVERFLOW
 * (error path), so consume as you go in a long-running program. Readers
 * and consumers may run on any threads, concurrently with everything else.
 */
typedef struct mkrt_append_entry {
    uint32_t handle, param;
    /** @var handle
     *  @brief The APPEND's out handle. */
    /** @var param
     *  @brief The APPEND's param. */
} mkrt_append_entry;
/**
 * @brief The params APPENDed to a handle that are in the log, oldest first.
 *
 * Only completed, not yet consumed entries; nothing is removed.
 *
 * @param rt The runtime.
 * @param handle The handle.
 * @param[out] out Room for max params.
 * @param max Most params to write.
 * @return How many such entries there are (at most max are written); 0 for
 *         a NULL rt, or a NULL out with max > 0.
 * @par Thread safety
 * Any thread, concurrently with everything but mkrt_destroy().
 */
size_t mkrt_append_log_read(mkrt_runtime *rt, uint32_t handle, uint32_t *out, size_t max);
/**
 * @brief Takes the oldest completed entries out of the log and frees their room.
 *
 * All handles, log order. Concurrent consumers each get distinct entries,
 * together every entry exactly once.
 *
 * @param rt The runtime.
 * @param[out] out Room for max entries.
 * @param max Most entries to take.
 * @return How many entries were taken; 0 for a NULL rt, or a NULL out with
 *         max > 0.
 * @par Thread safety
 * Any thread, concurrently with everything but mkrt_destroy().
 */
size_t mkrt_append_log_consume(mkrt_runtime *rt, mkrt_append_entry *out, size_t max);

/**
 * @brief Takes failed items kept when there is no error callback.
 *
 * The dead-letter ring holds dead_letter_capacity items; failures beyond
 * that are counted in mkrt_stats::dead_letters_dropped.
 *
 * @param rt The runtime.
 * @param[out] out Room for max items.
 * @param max Most items to take.
 * @return How many items were taken, oldest first; 0 for a NULL rt, or a
 *         NULL out with max > 0.
 * @par Thread safety
 * Any thread, concurrently with everything but mkrt_destroy().
 */
size_t mkrt_dead_letters_pop(mkrt_runtime *rt, mkrt_item *out, size_t max);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_RUNTIME_H */
