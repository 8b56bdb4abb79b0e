/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/tests/test_mpi_stats.c - libmkrt_mpi's traffic counters (bytes and
 * messages per destination and class) and its receive hook
 * (mkrt_mpi_config::deliver), at any number of ranks (TAP on rank 0). */
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "mkrt/mkrt.h"
#include "mkrt_mpi/mkrt_mpi.h"
#include "mpi_tap.h"



#define H 1000u

/* ---- bytes and messages: per destination, per class, both ends ------- */
static void test_bytes(void)
{
    mkrt_runtime *rt = new_runtime(H);
    mkrt_mpi_config c = mkrt_mpi_config_default();
    c.handles = H;
    c.batch_items = 16;
    c.buffers = 2;
    mkrt_mpi *m = new_layer(rt, c);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item items[H];
    for (uint32_t h = 0; h < H; h++)
        items[h] = (mkrt_item){MKRT_OP_ACC, h, h, 1};
    int ok = mkrt_mpi_publish(m, p, items, H, MKRT_TIMEOUT_INFINITE, NULL, NULL) == MKRT_OK &&
             mkrt_mpi_quiesce(m, MKRT_TIMEOUT_INFINITE) == MKRT_OK;
    mkrt_mpi_stats s;
    mkrt_mpi_stats_read(m, &s);
    uint64_t peer_bytes = 0, peer_msgs = 0;
    for (int r = 0; r < ranks; r++) {
        uint64_t b = 1, n = 1;
        ok &= mkrt_mpi_peer_sent(m, r, &b, &n) == MKRT_OK;
        if (r == rank)
            ok &= b == 0 && n == 0; /* nothing goes to oneself through MPI */
        peer_bytes += b;
        peer_msgs += n;
    }
    uint64_t sums[4] = {s.bytes_sent, s.bytes_received, s.messages_sent, s.messages_received};
    mkrt_mpi_allreduce_sum(m, sums, 4);
    check(m, ok && s.bytes_sent == s.forwarded * sizeof(mkrt_item),
          "bytes_sent = 16 bytes per forwarded item");
    check(m, sums[0] == sums[1] && sums[2] == sums[3],
          "bytes and messages received over the ranks = those sent");
    check(m, peer_bytes == s.bytes_sent && peer_msgs == s.messages_sent,
          "mkrt_mpi_peer_sent over the destinations sums to the totals");
    /* mpirun on one machine: every rank is on this node. */
    check(m, s.bytes_sent_node == s.bytes_sent && s.messages_sent_node == s.messages_sent,
          "one machine: all bytes are within the node");
    check(m, (ranks == 1 || s.messages_sent >= (s.forwarded + c.batch_items - 1) / c.batch_items) &&
                 s.delivered == 0, "messages hold at most batch_items items; no hook, nothing delivered");
    uint64_t b = 0;
    mkrt_error e = {0};
    int bad = mkrt_mpi_peer_sent(m, ranks, &b, NULL) == MKRT_EINVAL &&
              mkrt_mpi_peer_sent(m, -1, NULL, NULL) == MKRT_EINVAL &&
              mkrt_mpi_peer_sent(NULL, 0, &b, NULL) == MKRT_EINVAL &&
              mkrt_mpi_error_last(&e) == MKRT_OK && e.status == MKRT_EINVAL;
    check(m, bad, "mkrt_mpi_peer_sent refuses a NULL layer and a rank outside 0..ranks-1");
    mkrt_producer_close(p);
    check(NULL, mkrt_mpi_destroy(m, NULL) == MKRT_OK, "destroy");
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
}

/* ---- the receive hook: applies param-1 batches, declines the others --- */
static _Atomic uint64_t hooked[H];
static atomic_uint_fast64_t hook_calls;

static bool hook(void *user, int src, const mkrt_item *items, size_t n)
{
    (void)src;
    if (user != (void *)hooked)
        return false;
    for (size_t i = 0; i < n; i++)
        if (items[i].param != 1)
            return false; /* declined: no effect, the layer publishes them */
    for (size_t i = 0; i < n; i++)
        atomic_fetch_add_explicit(&hooked[items[i].out], 1, memory_order_relaxed); /* read after quiescence */
    atomic_fetch_add_explicit(&hook_calls, 1, memory_order_relaxed);
    return true;
}

static void test_hook(void)
{
    mkrt_runtime *rt = new_runtime(H);
    mkrt_mpi_config c = mkrt_mpi_config_default();
    c.handles = H;
    c.batch_items = 16;
    c.buffers = 2;
    c.deliver = hook;
    c.deliver_user = hooked;
    mkrt_mpi *m = new_layer(rt, c);
    mkrt_producer *p = mkrt_producer_open(rt, NULL);
    mkrt_item items[H];
    /* First all param-1 items (the hook takes them), quiesce, then all
     * param-2 items (declined: they run in the owner's runtime). */
    uint64_t remote = 0;
    for (uint32_t h = 0; h < H; h++) {
        items[h] = (mkrt_item){MKRT_OP_ACC, h, h, 1};
        remote += mkrt_mpi_owner(m, h) != rank;
    }
    int ok = mkrt_mpi_publish(m, p, items, H, MKRT_TIMEOUT_INFINITE, NULL, NULL) == MKRT_OK &&
             mkrt_mpi_quiesce(m, MKRT_TIMEOUT_INFINITE) == MKRT_OK;
    for (uint32_t h = 0; h < H; h++)
        items[h].param = 2;
    ok &= mkrt_mpi_publish(m, p, items, H, MKRT_TIMEOUT_INFINITE, NULL, NULL) == MKRT_OK &&
          mkrt_mpi_quiesce(m, MKRT_TIMEOUT_INFINITE) == MKRT_OK;
    uint64_t cells[H];
    mkrt_cells_read(rt, 0, H, cells);
    /* Owned cell h: 1 from this rank's own param-1 item, 2 per rank for
     * the param-2 items (this rank's and the declined ones); hooked[h]:
     * one per other rank's param-1 item. */
    int right = 1;
    for (uint32_t h = 0; h < H; h++) {
        if (mkrt_mpi_owner(m, h) != rank)
            continue;
        uint64_t hk = atomic_load_explicit(&hooked[h], memory_order_relaxed);
        if (cells[h] != 1 + 2 * (uint64_t)ranks || hk != (uint64_t)ranks - 1)
            right = 0;
    }
    mkrt_mpi_stats s;
    mkrt_mpi_stats_read(m, &s);
    uint64_t sums[2] = {s.delivered, remote};
    mkrt_mpi_allreduce_sum(m, sums, 2);
    check(m, ok && right, "the hook applied the batches it took; declined batches ran in the runtime");
    check(m, sums[0] == sums[1], "delivered over the ranks = the param-1 items sent to other ranks");
    check(m, ranks > 1 || atomic_load_explicit(&hook_calls, memory_order_relaxed) == 0,
          "one rank: the hook is never called");
    mkrt_producer_close(p);
    check(NULL, mkrt_mpi_destroy(m, NULL) == MKRT_OK, "destroy with a hook");
    mkrt_destroy(rt, MKRT_TIMEOUT_INFINITE, NULL);
}

int main(void)
{
    tap_start();
    test_bytes();
    test_hook();
    return tap_finish();
}
