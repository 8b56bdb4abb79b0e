/* examples/minimal.c - the README's minimal program, kept compiling. */
#include <stdio.h>

#include "mkrt/mkrt.h"

int main(void)
{
    mkrt_runtime *rt;
    mkrt_error err;
    if (mkrt_create(NULL, &rt, &err) != MKRT_OK) { /* defaults: CPU, one worker per core */
        fprintf(stderr, "minimal: %s\n", err.message);
        return 1;
    }
    mkrt_producer *p = mkrt_producer_open(rt, NULL); /* one per publishing thread */
    mkrt_item items[] = {{MKRT_OP_STORE, 0, 1, 41}, {MKRT_OP_ADD, 1, 2, 1}};
    mkrt_publish(p, items, 2, MKRT_TIMEOUT_INFINITE, NULL);
    uint64_t ticket, value = 0;
    mkrt_fence(p, &ticket);
    mkrt_wait(p, ticket, MKRT_TIMEOUT_INFINITE);
    mkrt_cell_read(rt, 2, &value);
    printf("cell 2 = %llu\n", (unsigned long long)value);
    mkrt_producer_close(p);
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
    return value == 42 ? 0 : 1;
}
