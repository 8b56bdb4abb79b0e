/* SPDX-License-Identifier: BSD-2-Clause */
/* examples/minimal.c - the README's minimal program, kept compiling: a
 * store, an add that reads it, and a counter bumped three times in one
 * batch (an item that reads and writes the same cell accumulates, so its
 * copies are not duplicates to prune: every one runs). */
#include <stdio.h>

#include "mkrt/mkrt.h"

int main(void)
{
    mkrt_runtime *rt;
    mkrt_error err;
    /* defaults: AUTO (the GPU when one is usable, else the CPU workers) */
    if (mkrt_create(NULL, &rt, &err) != MKRT_OK) {
        fprintf(stderr, "minimal: %s\n", err.message);
        return 1;
    }
    mkrt_producer *p = mkrt_producer_open(rt, &err); /* one per publishing thread */
    if (p == NULL) {
        fprintf(stderr, "minimal: %s\n", err.message);
        return 1;
    }
    mkrt_item items[] = {
        {MKRT_OP_STORE, 0, 1, 41}, /* cell 1 = 41 */
        {MKRT_OP_ADD, 1, 2, 1},    /* cell 2 = cell 1 + 1 */
        {MKRT_OP_ADD, 3, 3, 1},    /* cell 3 += 1, three times: */
        {MKRT_OP_ADD, 3, 3, 1},    /* all three run (not idempotent) */
        {MKRT_OP_ADD, 3, 3, 1},
    };
    if (mkrt_publish(p, items, 5, MKRT_TIMEOUT_INFINITE, &err) != MKRT_OK) {
        fprintf(stderr, "minimal: %s\n", err.message);
        return 1;
    }
    uint64_t ticket, value = 0, count = 0;
    mkrt_fence(p, &ticket);
    mkrt_wait(p, ticket, MKRT_TIMEOUT_INFINITE);
    mkrt_cell_read(rt, 2, &value);
    mkrt_cell_read(rt, 3, &count);
    printf("cell 2 = %llu, cell 3 = %llu\n", (unsigned long long)value, (unsigned long long)count);
    mkrt_producer_close(p);
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
    return value == 42 && count == 3 ? 0 : 1;
}
