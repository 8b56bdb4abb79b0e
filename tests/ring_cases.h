/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/ring_cases.h - one body of ring tests run against both rings. */
#ifndef MKRT_TESTS_RING_CASES_H
#define MKRT_TESTS_RING_CASES_H

#include <stdbool.h>
#include "mkrt/ring.h"

typedef struct ring_ops {
    const char *name;
    bool multi; /* several producers and consumers allowed */
    void *(*create)(size_t capacity, mkrt_error *err);
    size_t (*push)(void *r, const mkrt_item *items, size_t n);
    size_t (*pop)(void *r, mkrt_item *out, size_t max);
    mkrt_status (*push_wait)(void *r, const mkrt_item *items, size_t n, uint64_t t, size_t *d);
    mkrt_status (*pop_wait)(void *r, mkrt_item *out, size_t max, uint64_t t, size_t *d);
    void (*close)(void *r);
    bool (*is_closed)(const void *r);
    size_t (*size)(const void *r);
    size_t (*capacity)(const void *r);
    void (*destroy)(void *r);
    void (*seed)(void *r, uint64_t index);
    /* Threads between prepare and finish on the ring's wait queues. */
    uint32_t (*sleepers)(const void *r);
} ring_ops;

/* Runs every shared case; returns nothing, reports through TAP. */
void run_ring_cases(const ring_ops *ops);

/* Item that encodes (producer, sequence). */
static inline mkrt_item ring_test_item(uint32_t producer, uint64_t seq)
{
    mkrt_item it = {producer, (uint32_t)seq, (uint32_t)(seq >> 32), (uint32_t)(seq * 2654435761u)};
    return it;
}
static inline uint64_t ring_test_seq(const mkrt_item *it)
{
    return (uint64_t)it->in | ((uint64_t)it->out << 32);
}
static inline bool ring_test_intact(const mkrt_item *it)
{
    return it->param == (uint32_t)(ring_test_seq(it) * 2654435761u);
}

#endif
