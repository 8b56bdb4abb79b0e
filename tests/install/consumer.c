/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/install/consumer.c - a program from outside the tree, built by
 * tests/install/check_install.sh against an installed mkrt through
 * pkg-config (once with libmkrt.so, once with libmkrt.a). It checks that
 * the library it runs with is the release its headers describe, and runs
 * a small batch on the CPU backend: cell 1 = 41, cell 2 = cell 1 + 1.
 * Prints "mkrt <version>: cell 2 = 42" and exits 0 when all is well. */
#include <stdio.h>
#include <string.h>

#include <mkrt/mkrt.h>

static int fail(const char *what, const mkrt_error *err)
{
    fprintf(stderr, "consumer: %s: %s\n", what, err != NULL ? err->message : "");
    return 1;
}

int main(void)
{
    if (strcmp(mkrt_version(), MKRT_VERSION_STRING) != 0 ||
        mkrt_version_number() != MKRT_VERSION_NUMBER) {
        fprintf(stderr, "consumer: headers %s (%d) but library %s (%u)\n", MKRT_VERSION_STRING,
                MKRT_VERSION_NUMBER, mkrt_version(), mkrt_version_number());
        return 1;
    }
    mkrt_config cfg = mkrt_config_default();
    cfg.backend = MKRT_BACKEND_CPU;
    cfg.workers = 2;
    mkrt_runtime *rt = NULL;
    mkrt_error err;
    if (mkrt_create(&cfg, &rt, &err) != MKRT_OK)
        return fail("mkrt_create", &err);
    mkrt_producer *p = mkrt_producer_open(rt, &err);
    if (p == NULL)
        return fail("mkrt_producer_open", &err);
    const mkrt_item items[] = {
        {MKRT_OP_STORE, 0, 1, 41},
        {MKRT_OP_ADD, 1, 2, 1},
    };
    uint64_t ticket = 0, value = 0;
    if (mkrt_publish(p, items, 2, MKRT_TIMEOUT_INFINITE, &err) != MKRT_OK)
        return fail("mkrt_publish", &err);
    if (mkrt_fence(p, &ticket) != MKRT_OK || mkrt_wait(p, ticket, MKRT_TIMEOUT_INFINITE) != MKRT_OK)
        return fail("mkrt_fence/mkrt_wait", NULL);
    if (mkrt_cell_read(rt, 2, &value) != MKRT_OK)
        return fail("mkrt_cell_read", NULL);
    mkrt_producer_close(p);
    if (mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, &err) != MKRT_OK)
        return fail("mkrt_destroy", &err);
    printf("mkrt %s: cell 2 = %llu\n", mkrt_version(), (unsigned long long)value);
    return value == 42 ? 0 : 1;
}
