/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_producer_slots.c - a producer slot freed by mkrt_producer_close
 * can be opened again at once: an open into a table whose only free slots
 * are held by closed producers (retired by the dispatcher once their items
 * completed) waits for the retirement instead of refusing with EAGAIN.
 * Found by libmkrt_mpi's lifecycle test: create right after destroy at 3
 * ranks failed now and then with "all 4 producer slots are in use". And
 * the drain, which looks at the slots below the highest one ever taken,
 * runs the items of producers in sparse and high slots. */
#include <stdint.h>
#include <string.h>

#include "mkrt/runtime.h"
#include "tap.h"

static mkrt_runtime *make(mkrt_backend_kind kind, uint32_t max_producers)
{
    mkrt_config c = mkrt_config_default();
    c.backend = kind;
    c.workers = 1;
    c.cells = 64;
    c.max_producers = max_producers;
    mkrt_runtime *rt = NULL;
    mkrt_error err = {0};
    if (mkrt_create(&c, &rt, &err) != MKRT_OK)
        bail_out("mkrt_create: %s", err.message);
    return rt;
}

static void test_reopen(mkrt_backend_kind kind, const char *name)
{
    enum { SLOTS = 2, ROUNDS = 300, ITEMS = 64 };
    mkrt_runtime *rt = make(kind, SLOTS);
    mkrt_producer *keep = mkrt_producer_open(rt, NULL);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    int reopened = 0, refused = 0, published = 0;
    mkrt_item items[ITEMS];
    for (int i = 0; i < ITEMS; i++)
        items[i] = (mkrt_item){MKRT_OP_ACC, 0, (uint32_t)(1 + i % 8), 1};
    for (int r = 0; r < ROUNDS && p != NULL; r++) {
        /* Items in flight when the producer closes: its slot is retired
         * only after they completed. */
        published += mkrt_publish(p, items, ITEMS, MKRT_TIMEOUT_INFINITE, NULL) == MKRT_OK;
        mkrt_producer_close(p);
        mkrt_error err = {0};
        p = mkrt_producer_open(rt, &err);
        if (p != NULL)
            reopened++;
        else {
            refused++;
            diag("%s round %d: %s", name, r, err.message);
        }
    }
    is(reopened, ROUNDS, "%s: close then open at once, %d rounds: every open got the slot back",
       name, ROUNDS);
    is(refused, 0, "%s: no open refused with EAGAIN while the closed producer retired", name);

    /* A table full of open producers still refuses, at once and with a Fix. */
    mkrt_error err = {0};
    ok(mkrt_producer_open(rt, &err) == NULL && err.status == MKRT_EAGAIN &&
           strstr(err.message, "Fix:") != NULL,
       "%s: a table full of open producers refuses with EAGAIN and a Fix", name);
    mkrt_producer_close(p);
    mkrt_producer_close(keep);
    ok(mkrt_drain(rt, MKRT_TIMEOUT_INFINITE) == MKRT_OK, "%s: drained", name);
    uint64_t sum = 0, v = 0;
    for (uint32_t h = 1; h <= 8; h++)
        sum += mkrt_cell_read(rt, h, &v) == MKRT_OK ? v : 0;
    is(sum, (uint64_t)published * ITEMS, "%s: every published item ran once (%d publishes)", name,
       published);
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
}

/* The drain looks only at the slots a producer was ever opened in (below
 * the highest one taken): a producer alone in a high slot, one that opens
 * below it later, and one that opens above the bound afterwards all have
 * their items run, by mkrt_wait, mkrt_drain and mkrt_quiesce alike. */
static void test_sparse(mkrt_backend_kind kind, const char *name)
{
    enum { OPEN = 40, ITEMS = 256 };
    mkrt_runtime *rt = make(kind, 64);
    mkrt_producer *ps[OPEN];
    for (int i = 0; i < OPEN; i++)
        ps[i] = mkrt_producer_open(rt, NULL);
    for (int i = 0; i < OPEN - 1; i++)
        mkrt_producer_close(ps[i]);
    mkrt_producer *high = ps[OPEN - 1];
    mkrt_item items[ITEMS];
    for (int i = 0; i < ITEMS; i++)
        items[i] = (mkrt_item){MKRT_OP_ACC, 0, (uint32_t)(1 + i % 8), 1};
    uint64_t t = 0;
    int good = high != NULL && mkrt_publish(high, items, ITEMS, MKRT_TIMEOUT_INFINITE, NULL) == MKRT_OK &&
               mkrt_fence(high, &t) == MKRT_OK && mkrt_wait(high, t, MKRT_TIMEOUT_INFINITE) == MKRT_OK;
    ok(good, "%s: a producer alone in slot %d, the 39 below it closed: its items run (mkrt_wait)", name, OPEN - 1);
    /* A producer below it (a retired slot), then one above every slot
     * taken so far; both publish beside the high one. */
    mkrt_producer *low = mkrt_producer_open(rt, NULL);
    mkrt_producer *fill[OPEN];
    int nfill = 0;
    while (nfill < OPEN && (fill[nfill] = mkrt_producer_open(rt, NULL)) != NULL)
        nfill++; /* up to slot OPEN and beyond */
    mkrt_producer *above = nfill > 0 ? fill[nfill - 1] : NULL;
    good = low != NULL && above != NULL;
    for (int r = 0; r < 20 && good; r++) {
        good &= mkrt_publish(low, items, ITEMS, MKRT_TIMEOUT_INFINITE, NULL) == MKRT_OK;
        good &= mkrt_publish(high, items, ITEMS, MKRT_TIMEOUT_INFINITE, NULL) == MKRT_OK;
        good &= mkrt_publish(above, items, ITEMS, MKRT_TIMEOUT_INFINITE, NULL) == MKRT_OK;
        good &= (r % 2 ? mkrt_drain(rt, MKRT_TIMEOUT_INFINITE) : mkrt_quiesce(rt, MKRT_TIMEOUT_INFINITE)) == MKRT_OK;
    }
    uint64_t sum = 0, v = 0;
    for (uint32_t h = 1; h <= 8; h++)
        sum += mkrt_cell_read(rt, h, &v) == MKRT_OK ? v : 0;
    ok(good && sum == (uint64_t)ITEMS * (1 + 3 * 20),
       "%s: producers below and above it publish beside it; mkrt_drain and mkrt_quiesce see all (%llu of %llu)",
       name, (unsigned long long)sum, (unsigned long long)ITEMS * (1 + 3 * 20));
    for (int i = 0; i < nfill; i++)
        mkrt_producer_close(fill[i]);
    mkrt_producer_close(low);
    mkrt_producer_close(high);
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
}

int main(void)
{
    test_reopen(MKRT_BACKEND_CPU, "cpu");
    test_reopen(MKRT_BACKEND_SIM, "sim");
    test_sparse(MKRT_BACKEND_CPU, "cpu");
    test_sparse(MKRT_BACKEND_SIM, "sim");
    return done_testing();
}
