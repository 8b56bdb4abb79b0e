/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/item.h
 * @brief The 16-byte work item.
 *
 * An item names an operation (`op`), the handle it reads (`in`), the handle
 * it writes (`out`) and the operation's argument (`param`). Items are plain
 * values: every API that takes items copies them, and the caller keeps
 * ownership of its arrays.
 */
#ifndef MKRT_ITEM_H
#define MKRT_ITEM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief One unit of work: 16 bytes, 4-byte aligned.
 *
 * The runtime (mkrt/runtime.h) orders items by the handles they read and
 * write; the rings, dedupe and layering treat items as opaque values apart
 * from those fields.
 */
typedef struct mkrt_item {
    uint32_t op;    /**< Operation: a built-in MKRT_OP_* or a registered user op. */
    uint32_t in;    /**< Handle (cell index) the item reads. */
    uint32_t out;   /**< Handle (cell index) the item writes. */
    uint32_t param; /**< The operation's argument. */
} mkrt_item;

#ifdef __cplusplus
static_assert(sizeof(mkrt_item) == 16, "mkrt_item must be exactly 16 bytes");
#else
_Static_assert(sizeof(mkrt_item) == 16, "mkrt_item must be exactly 16 bytes");
_Static_assert(_Alignof(mkrt_item) == 4, "mkrt_item must have 4-byte alignment");
#endif

#ifdef __cplusplus
}
#endif
#endif /* MKRT_ITEM_H */
