/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/publish.h
 * @brief Producers: opening one, publishing items, fences and waits on them.
 *
 * Each producer owns a lock-free ring; its items are drained in publish
 * order (the ordering contract is in mkrt/runtime.h's overview).
 */
#ifndef MKRT_PUBLISH_H
#define MKRT_PUBLISH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkrt/config.h"
#include "mkrt/item.h"
#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Opens a producer: a ring of its own to publish into.
 * @param rt The runtime.
 * @param err Filled on failure; may be NULL.
 * A closed producer keeps its slot until the runtime retired it (once its
 * items completed): when every slot is taken and some are held by closed
 * producers, the call waits for them (up to 2 s) instead of refusing, so
 * an open right after a close gets the slot.
 *
 * @return The producer (close it with mkrt_producer_close()), or NULL with
 *         err set: ::MKRT_EINVAL when rt is NULL, ::MKRT_EAGAIN when
 *         max_producers are open (or closed ones did not retire within
 *         2 s), ::MKRT_ECLOSED when the runtime is shutting down,
 *         ::MKRT_ENOMEM when memory is short.
 * @par Thread safety
 * Any thread. The producer then belongs to one thread at a time.
 */
mkrt_producer *mkrt_producer_open(mkrt_runtime *rt, mkrt_error *err);
/** @brief A producer's latency class (mkrt_producer_set_class()). */
typedef enum mkrt_class {
    /** The default: drained when no interactive work waits, or when it
     *  has waited too long (32 batches in a row, or
     *  mkrt_config::class_max_age_us). */
    MKRT_CLASS_BULK = 0,
    /** Drained first: a batch takes interactive items (and the items they
     *  emitted) only, ahead of every bulk item and bulk emission waiting. */
    MKRT_CLASS_INTERACTIVE = 1
} mkrt_class;

/**
 * @brief Marks a producer interactive or bulk (every producer opens bulk).
 *
 * While interactive work waits (items in an interactive producer's ring,
 * or items emitted by interactive work), the drain builds batches of
 * interactive work only: interactive items overtake a backlog of bulk
 * items. Items an op emits inherit the class of the item that emitted
 * them (each class has its own emission queue of
 * mkrt_config::emit_capacity items). Bulk work ages so that it is never
 * starved: each batch that passes waiting bulk work over is a requeue
 * (counted in mkrt_stats::plan_counts[::MKRT_PLAN_N_CLASS_REQUEUES]);
 * after 32 such batches in a row, or once bulk work has waited
 * mkrt_config::class_max_age_us (measured from the first batch that
 * passed it over), the next batch is a bulk one (an aged promotion).
 * While an interactive producer is open, no bulk batch is prepared behind
 * a running batch, and a bulk batch takes only the items that run in
 * about mkrt_config::class_slice_us (at the measured cost of the bulk
 * batches before), so interactive work waits for about that long at most.
 * mkrt_plan_explain() shows each batch's class, why, and the bulk work's
 * age and measured wait. The ordering contract holds: one producer's
 * items are drained in publish order whatever its class, also across a
 * change of class. With ::MKRT_PLAN_DRAIN off (mkrt_config::plan_off)
 * classes are ignored (every batch is bulk).
 *
 * A change applies from the next drain: items already in the ring are
 * drained under the new class.
 *
 * @param p The producer.
 * @param klass ::MKRT_CLASS_BULK or ::MKRT_CLASS_INTERACTIVE.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK Set.
 * @retval MKRT_EINVAL p is NULL or klass is not a class.
 * @retval MKRT_ECLOSED mkrt_destroy began; nothing changed.
 * @retval MKRT_ENOMEM The first interactive producer of a runtime
 *         allocates the interactive emission queue, and could not.
 * @return The status, as listed.
 * @par Thread safety
 * The producer's owning thread, as mkrt_publish().
 */
mkrt_status mkrt_producer_set_class(mkrt_producer *p, mkrt_class klass, mkrt_error *err);

/**
 * @brief Closes a producer.
 *
 * Everything it published stays queued and runs; the handle is gone (the
 * runtime retires it once its items are drained).
 *
 * @param p The producer; NULL is ignored.
 * @par Thread safety
 * The producer's owning thread; may race mkrt_destroy() from another
 * thread, also after it returned (the handle is then freed here).
 */
void mkrt_producer_close(mkrt_producer *p);

/**
 * @brief Publishes all n items, waiting for ring space up to timeout_ns.
 *
 * Items are copied, and drained in publish order.
 *
 * @param p The producer.
 * @param items The items; may be NULL when n is 0.
 * @param n Number of items.
 * @param timeout_ns Relative timeout; 0 tries once,
 *        ::MKRT_TIMEOUT_INFINITE waits for ever.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK All n items were published.
 * @retval MKRT_ETIMEDOUT The ring stayed full; a prefix was published
 *         (mkrt_publish_some() tells how long).
 * @retval MKRT_ECLOSED mkrt_destroy() began; a prefix may have been
 *         published.
 * @retval MKRT_EINVAL p is NULL, or items is NULL with n > 0.
 * @return The status, as listed.
 * @par Thread safety
 * The producer's owning thread; other producers publish concurrently.
 */
mkrt_status mkrt_publish(mkrt_producer *p, const mkrt_item *items, size_t n, uint64_t timeout_ns,
                         mkrt_error *err);
/**
 * @brief mkrt_publish(), telling how many items were published.
 * @param p The producer.
 * @param items The items; may be NULL when n is 0.
 * @param n Number of items.
 * @param timeout_ns Relative timeout; 0 tries once,
 *        ::MKRT_TIMEOUT_INFINITE waits for ever.
 * @param[out] published Items published (a prefix of items), whatever the
 *        result; may be NULL.
 * @param err Filled on failure; may be NULL.
 * @retval MKRT_OK All n items were published.
 * @retval MKRT_ETIMEDOUT The ring stayed full; `*published` < n.
 * @retval MKRT_ECLOSED mkrt_destroy() began; `*published` items went in.
 * @retval MKRT_EINVAL p is NULL, or items is NULL with n > 0.
 * @return The status, as listed.
 * @par Thread safety
 * The producer's owning thread.
 */
mkrt_status mkrt_publish_some(mkrt_producer *p, const mkrt_item *items, size_t n,
                              uint64_t timeout_ns, size_t *published, mkrt_error *err);
/**
 * @brief Publishes what fits without blocking.
 * @param p The producer.
 * @param items The items.
 * @param n Number of items.
 * @return How many of items[0..n) were accepted (a prefix): 0 when the
 *         ring is full, the runtime is closing, or an argument is bad.
 * @par Thread safety
 * The producer's owning thread.
 */
size_t mkrt_try_publish(mkrt_producer *p, const mkrt_item *items, size_t n);

/**
 * @brief A ticket covering everything this producer published so far.
 * @param p The producer.
 * @param[out] ticket The ticket: the number of items p has published.
 * @retval MKRT_OK `*ticket` is set.
 * @retval MKRT_EINVAL p or ticket is NULL.
 * @retval MKRT_ECLOSED mkrt_destroy() has returned.
 * @return The status, as listed.
 * @par Thread safety
 * The producer's owning thread.
 */
mkrt_status mkrt_fence(mkrt_producer *p, uint64_t *ticket);
/**
 * @brief Waits until every item covered by a ticket completed.
 *
 * Completed means ran, was pruned or failed. After ::MKRT_OK the cells
 * those items wrote can be read (mkrt_cell_read()). On the CPU backend,
 * while the dispatcher is idle the waiting thread runs the pending batches
 * itself (the same stages, in the same order: ordering is unchanged)
 * instead of sleeping until the dispatcher wakes.
 *
 * Deadline: the call returns by timeout_ns, or, when it is running an op
 * itself at that moment, as soon as that op returns (an op is never
 * interrupted; the overrun is at most one op's duration, or one chunk of
 * up to 256 edges of a graph traversal's expanding op). Whatever it has
 * not run by then (the rest of a batch, a batch drained meanwhile) is left
 * to the dispatcher and the workers, and runs exactly once, in order.
 *
 * @param p The producer that issued the ticket.
 * @param ticket From mkrt_fence().
 * @param timeout_ns Relative timeout; 0 checks once,
 *        ::MKRT_TIMEOUT_INFINITE waits for ever.
 * @retval MKRT_OK Everything the ticket covers completed.
 * @retval MKRT_ETIMEDOUT Not yet.
 * @retval MKRT_EINVAL At once, for a NULL producer or a ticket this
 *         producer never issued (above everything it has published).
 * @retval MKRT_ECLOSED The runtime stopped before the ticket completed.
 * @return The status, as listed.
 * @par Thread safety
 * The producer's owning thread; may overlap mkrt_destroy().
 */
mkrt_status mkrt_wait(mkrt_producer *p, uint64_t ticket, uint64_t timeout_ns);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_PUBLISH_H */
