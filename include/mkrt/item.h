/* SPDX-License-Identifier: BSD-2-Clause */
/* mkrt/item.h - the 16-byte work item.
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

typedef struct mkrt_item {
    uint32_t op;
    uint32_t in;
    uint32_t out;
    uint32_t param;
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
