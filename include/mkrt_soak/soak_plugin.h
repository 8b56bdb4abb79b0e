/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt_soak/soak_plugin.h
 * @brief Soaking your own ops with mkrt-soak: the plugin interface.
 *
 * `mkrt-soak --plugin FILE.so` loads a shared object you write and runs
 * your ops under every fault mode of the soak (allocation failure storms,
 * destroy races, the SIM device's watchdog, the CUDA stand-in driver's
 * faults), on every backend, for as long as you ask, with the soak's
 * exactly-once accounting (published + emitted = executed + pruned +
 * failed, failed = error callbacks), its leak checks, its metrics and
 * drift verdicts, and your own check of the results.
 *
 * The object exports one symbol, ::MKRT_SOAK_PLUGIN_SYMBOL, a
 * ::mkrt_soak_plugin whose version is ::MKRT_SOAK_PLUGIN_VERSION. The
 * soak then, for each round of the plugin workload:
 *   1. calls round_begin() for the round's state;
 *   2. creates a runtime with `cells` cells (on the round's backend),
 *      registers the ops that ops() lists, and sets the cells init_cells()
 *      gives;
 *   3. runs `streams` producer threads: thread s calls generate() for
 *      items, publishes them and tells published() which went in (a
 *      prefix of them when the runtime is closing); failed() hears every
 *      item the error callback gets;
 *   4. either quiesces (mkrt_quiesce) and calls verify() with all the
 *      cells, or (a race round) destroys the runtime under the producers
 *      and skips verify(); verify() is also skipped when the device failed
 *      in the round (the cells of a failed batch are undefined);
 *   5. calls round_end().
 *
 * Ops receive the mkrt_op_desc::user you set in ops(): usually the round
 * state. They may call the mkrt_op_* functions (mkrt_op_emit() and
 * friends): mkrt-soak exports the library to the plugin, so build the
 * object without linking libmkrt:
 *
 *     cc -shared -fPIC -I$(PREFIX)/include -o myops.so myops.c
 *     mkrt-soak --plugin ./myops.so --seconds 600
 *
 * examples/soak_plugin_example.c is a complete plugin. The interface is
 * versioned: a later version adds members at the end and raises
 * ::MKRT_SOAK_PLUGIN_VERSION; mkrt-soak refuses a version it does not
 * know and a `size` smaller than the version's struct.
 */
#ifndef MKRT_SOAK_PLUGIN_H
#define MKRT_SOAK_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "mkrt/item.h"
#include "mkrt/runtime.h"
#include "mkrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief The version of ::mkrt_soak_plugin this header describes. */
#define MKRT_SOAK_PLUGIN_VERSION 1
/** @brief The symbol mkrt-soak looks up (dlsym) in the plugin: a ::mkrt_soak_plugin. */
#define MKRT_SOAK_PLUGIN_SYMBOL "mkrt_soak_plugin_v1"
/** @brief Most ops one plugin registers. */
#define MKRT_SOAK_PLUGIN_OPS_MAX 64
/** @brief Most items one generate() call may return. */
#define MKRT_SOAK_PLUGIN_BATCH_MAX 64

/** @brief One op of the plugin: its number and its registration. */
typedef struct mkrt_soak_plugin_op {
    uint32_t op;       /**< Op number, ::MKRT_OP_USER_FIRST or above. */
    mkrt_op_desc desc; /**< Registered as given (mkrt_op_register()). */
} mkrt_soak_plugin_op;

/**
 * @brief What a plugin exports under ::MKRT_SOAK_PLUGIN_SYMBOL.
 *
 * Every function pointer but init_cells may not be NULL. The state is
 * the plugin's, one per round; rounds never overlap.
 */
typedef struct mkrt_soak_plugin {
    uint32_t version;  /**< ::MKRT_SOAK_PLUGIN_VERSION. */
    uint32_t size;     /**< sizeof(mkrt_soak_plugin). */
    const char *name;  /**< For messages. */
    uint32_t cells;    /**< The runtime's cells (mkrt_config::cells), 1 or more. */
    uint32_t streams;  /**< Producer threads, 1..16; 0: the soak's --producers. */
    /** Starts a round: returns its state, or NULL with a message in msg
     *  (the round is then an error). seed differs from round to round and
     *  follows mkrt-soak's --seed. */
    void *(*round_begin)(uint64_t seed, unsigned streams, char *msg, size_t len);
    /** Fills ops[0..max) with the ops to register; returns how many. */
    size_t (*ops)(void *state, mkrt_soak_plugin_op *ops, size_t max);
    /** Sets the cells' first values (they start at 0); may be NULL. */
    void (*init_cells)(void *state, uint64_t *cells, uint32_t count);
    /** Fills items[0..max) with the next items of stream s (its thread
     *  only); returns how many, 1..max. Handles below `cells`. */
    size_t (*generate)(void *state, unsigned stream, mkrt_item *items, size_t max);
    /** items[0..n) of stream s went in (its thread only). */
    void (*published)(void *state, unsigned stream, const mkrt_item *items, size_t n);
    /** An item went to the error path with why (any thread, concurrently
     *  with the rest). Returns 0 when the item may fail so, non-zero for an
     *  unexpected failure (an error of the soak). ::MKRT_ETIMEDOUT (a destroy
     *  that timed out) and ::MKRT_EDEVICE on a device are never judged. */
    int (*failed)(void *state, const mkrt_item *item, mkrt_status why);
    /** After quiescence: cells[0..count) as the runtime holds them.
     *  Returns 0 when they are right, else non-zero with the reason in msg. */
    int (*verify)(void *state, const uint64_t *cells, uint32_t count, char *msg, size_t len);
    /** Ends the round: frees the state. */
    void (*round_end)(void *state);
} mkrt_soak_plugin;

#ifdef __cplusplus
}
#endif
#endif /* MKRT_SOAK_PLUGIN_H */
