/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_cuda_costs.c - the megakernel's three known costs (issue 36),
 * without a GPU: the barrier after a layer takes only the blocks of that
 * layer and the next (protocol.h's decision, shared by the kernel and its C
 * twin mk_loop.h, counted in the batch's result) on the simulated device
 * and through the stand-in driver; a large batch is copied by DMA from a
 * registered buffer, not through a host copy (and through the host copy
 * where registration fails); with the state in device memory a small
 * batch costs no copy and no stream synchronisation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/backend/mk_host.h"
#include "../src/backend/mk_sim.h"
#include "../src/cuda/cuda_engine.h"
#include "fake_cuda.h"
#include "tap.h"

#define WAIT_NS 5000000000ull
#define CELLS 1024u
#define CAP 16384u

static void (*fake_copies)(unsigned long long *registered, unsigned long long *pinned, unsigned long long *other);
static unsigned long long (*fake_syncs)(void);
static int (*fake_live)(void);

/* One batch of `layers` layers of `per` ACCs (cell j of each layer gets
 * 1), layer_blocks as given (may be NULL): staged, rung, waited for. */
static bool run_batch(mkrt__mk_host *h, mkrt_item *items, uint32_t layers, uint32_t per, const uint32_t *layer_blocks,
                      uint64_t *seq)
{
    static uint32_t off[CAP + 1];
    for (uint32_t l = 0; l <= layers; l++)
        off[l] = l * per;
    for (uint32_t l = 0; l < layers; l++)
        for (uint32_t j = 0; j < per; j++)
            items[l * per + j] = (mkrt_item){MKRT_OPS_ACC, 0, j % CELLS, 1};
    return mkrt__mk_stage(h, items, layers * per, off, layer_blocks, layers, seq, NULL) == MKRT_OK &&
           mkrt__mk_ring(h, NULL) == MKRT_OK && mkrt__mk_wait(h, *seq, WAIT_NS, NULL) == MKRT_OK;
}

/* The plan's layer blocks and the barriers they give on a grid of 16. */
static void barriers_on(const char *dev, mkrt__mk_host *h, uint64_t *cells, mkrt_item *items)
{
    static const struct {
        uint32_t layers;
        uint32_t blocks[6];
        uint32_t grid, layer;
        const char *what;
    } cases[] = {
        {6, {4, 4, 4, 16, 4, 1}, 3, 3, "4,4,4,16,4,1 blocks: layer barriers where both sides run on 4 or fewer, "
                                      "the grid barrier where a side runs on all 16, and at the end"},
        {4, {4, 4, 4, 4}, 1, 3, "four layers of 4 blocks: 3 layer barriers, one grid barrier (the batch's end)"},
        {3, {2, 1, 1}, 1, 1, "2,1,1: a layer barrier among 2 blocks, then block 0 alone (block-local)"},
        {3, {1, 1, 1}, 0, 0, "1,1,1: block 0 runs the batch alone, no grid or layer barrier"},
        {3, {0, 0, 0}, 3, 0, "every block in every layer: grid barriers throughout"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        memset(cells, 0, CELLS * sizeof *cells);
        uint64_t seq = 0;
        bool ran = run_batch(h, items, cases[c].layers, 64, cases[c].blocks, &seq);
        uint32_t grid = 99, layer = 99;
        mkrt__mk_barriers(h, seq, &grid, &layer);
        bool right = ran;
        for (uint32_t j = 0; j < 64; j++)
            right &= cells[j] == cases[c].layers;
        ok(right && grid == cases[c].grid && layer == cases[c].layer, "%s: %s (grid %u, layer %u), every item ran",
           dev, cases[c].what, grid, layer);
    }
}

/* protocol.h's decision, which the kernel and mk_loop.h both take. */
static void decision_table(void)
{
    const uint32_t lb[4] = {4, 8, 1, 1};
    uint32_t n = 0;
    int right = mkrt__mk_barrier_after(lb, 0, 4, 16, &n) == MKRT_MK_BARRIER_LAYER && n == 8;
    right &= mkrt__mk_barrier_after(lb, 1, 4, 16, &n) == MKRT_MK_BARRIER_LAYER && n == 8;
    right &= mkrt__mk_barrier_after(lb, 2, 4, 16, &n) == MKRT_MK_BARRIER_BLOCK && n == 1;
    right &= mkrt__mk_barrier_after(lb, 3, 4, 16, &n) == MKRT_MK_BARRIER_GRID && n == 16;
    right &= mkrt__mk_barrier_after(lb, 0, 4, 8, &n) == MKRT_MK_BARRIER_GRID && n == 8;
    right &= mkrt__mk_barrier_after(NULL, 0, 4, 16, &n) == MKRT_MK_BARRIER_GRID && n == 16;
    ok(right, "the barrier after a layer: among the blocks of it and the next (8 of 16), block-local for "
              "block 0 alone, grid-wide where that is every block, and after the last layer");
    static uint32_t many[MKRT_MK_LAYER_BARRIERS + 2];
    for (uint32_t l = 0; l < MKRT_MK_LAYER_BARRIERS + 2; l++)
        many[l] = 2;
    ok(mkrt__mk_barrier_after(many, MKRT_MK_LAYER_BARRIERS - 1, MKRT_MK_LAYER_BARRIERS + 2, 16, &n) ==
               MKRT_MK_BARRIER_LAYER &&
           mkrt__mk_barrier_after(many, MKRT_MK_LAYER_BARRIERS, MKRT_MK_LAYER_BARRIERS + 2, 16, &n) ==
               MKRT_MK_BARRIER_GRID,
       "a layer past the %u barrier slots takes the grid barrier", MKRT_MK_LAYER_BARRIERS);
}

static void sim_barriers(void)
{
    mkrt__mk_sim sim;
    mkrt_error err;
    if (mkrt__mk_sim_start(&sim, CELLS, CAP, 16, 16, 0, 0, &err) != MKRT_OK)
        bail_out("sim: %s", err.message);
    mkrt__mk_host h;
    mkrt__mk_host_init(&h, sim.ctl, &mkrt__mk_sim_ops, &sim, sim.capacity);
    static mkrt_item items[CAP];
    barriers_on("sim", &h, sim.cells, items);
    mkrt__mk_sim_stop(&sim);
}

static uint64_t *page_cells(void)
{
    uint64_t *c = aligned_alloc(4096, CELLS * sizeof(uint64_t));
    memset(c, 0, CELLS * sizeof(uint64_t));
    return c;
}

static mkrt__cuda_engine_config engine_config(uint64_t *cells, mkrt_item *dma, bool device_state)
{
    mkrt__cuda_engine_config c;
    memset(&c, 0, sizeof c);
    c.cells = cells;
    c.cell_count = CELLS;
    c.capacity = CAP;
    c.max_blocks = 16;
    c.device_state = device_state;
    c.dma[0] = (mkrt__cuda_host_range){dma, (size_t)CAP * sizeof(mkrt_item)};
    return c;
}

static void copies(unsigned long long v[3])
{
    fake_copies(&v[0], &v[1], &v[2]);
}

/* Large batches by DMA from the registered buffer; an unregistered one
 * through the host copy; the layer barriers through the stand-in driver. */
static void cuda_dma_and_barriers(void)
{
    uint64_t *cells = page_cells();
    mkrt_item *reg = aligned_alloc(4096, (size_t)CAP * sizeof(mkrt_item));
    mkrt_item *other = malloc((size_t)CAP * sizeof(mkrt_item));
    mkrt__cuda_engine e;
    mkrt_error err;
    mkrt__cuda_engine_config cfg = engine_config(cells, reg, false);
    if (mkrt__cuda_engine_start(&e, &cfg, &err) != MKRT_OK)
        bail_out("cuda: %s", err.message);
    mkrt__mk_host h;
    mkrt__mk_host_init(&h, e.ctl, &mkrt__cuda_engine_ops, &e, e.capacity);
    unsigned long long before[3], after[3];
    copies(before);
    uint64_t seq;
    bool ran = run_batch(&h, reg, 1, 10000, NULL, &seq);
    copies(after);
    bool right = ran;
    for (uint32_t j = 0; j < CELLS; j++)
        right &= cells[j] == 10000 / CELLS + (j < 10000 % CELLS);
    ok(right && after[0] - before[0] == 1 && after[1] - before[1] == 1 && after[2] == before[2] && e.dma_copies == 1 &&
           e.host_copies == 0,
       "cuda: a batch of 10000 items in a registered buffer is copied by DMA from it (registered %llu, pinned "
       "%llu: the layer offsets), not through the staging buffer",
       after[0] - before[0], after[1] - before[1]);
    copies(before);
    memset(cells, 0, CELLS * sizeof *cells);
    ran = run_batch(&h, other, 1, 10000, NULL, &seq);
    copies(after);
    ok(ran && cells[5] == 10 && after[0] == before[0] && after[1] - before[1] == 2 && e.host_copies == 1,
       "cuda: ... one in an unregistered buffer goes through the pinned staging buffer (a host copy)");
    copies(before);
    ran = run_batch(&h, reg, 1, 100, NULL, &seq);
    copies(after);
    ok(ran && after[0] == before[0] && after[1] == before[1] && after[2] == before[2],
       "cuda: ... a small batch is read in place, no copy");
    barriers_on("cuda (stand-in)", &h, cells, reg);
    ok(mkrt__cuda_engine_stop(&e, WAIT_NS), "cuda: stopped");

    /* A driver that will not register the batch buffers: the host copy. */
    setenv("FAKE_CUDA_REGISTER_MAX", "1", 1); /* the cells only */
    if (mkrt__cuda_engine_start(&e, &cfg, &err) != MKRT_OK)
        bail_out("cuda: %s", err.message);
    unsetenv("FAKE_CUDA_REGISTER_MAX");
    mkrt__mk_host_init(&h, e.ctl, &mkrt__cuda_engine_ops, &e, e.capacity);
    like(e.describe, "batch buffers not registered, large batches take a host copy: CUDA_ERROR_NOT_SUPPORTED",
         "cuda: registration refused: describe says large batches take a host copy, and why");
    memset(cells, 0, CELLS * sizeof *cells);
    copies(before);
    ran = run_batch(&h, reg, 1, 10000, NULL, &seq);
    copies(after);
    ok(ran && cells[5] == 10 && after[0] == before[0] && after[1] - before[1] == 2 && e.host_copies == 1 &&
           e.dma_copies == 0,
       "cuda: ... and the batch runs right through the pinned staging buffer");
    ok(mkrt__cuda_engine_stop(&e, WAIT_NS), "cuda: stopped");
    is(fake_live(), 0, "cuda: nothing left registered or allocated");
    free(cells);
    free(reg);
    free(other);
}

/* Device state: small batches cost no copy and no synchronisation. */
static void cuda_device_state(void)
{
    uint64_t *cells = page_cells();
    mkrt_item *reg = aligned_alloc(4096, (size_t)CAP * sizeof(mkrt_item));
    mkrt__cuda_engine e;
    mkrt_error err;
    mkrt__cuda_engine_config cfg = engine_config(cells, reg, true);
    if (mkrt__cuda_engine_start(&e, &cfg, &err) != MKRT_OK)
        bail_out("cuda: %s", err.message);
    mkrt__mk_host h;
    mkrt__mk_host_init(&h, e.ctl, &mkrt__cuda_engine_ops, &e, e.capacity);
    if (mkrt__cuda_engine_state_in(&e, &err) != MKRT_OK)
        bail_out("cuda: state_in: %s", err.message);
    unsigned long long before[3], after[3];
    copies(before);
    const unsigned long long syncs = fake_syncs();
    bool ran = true;
    uint64_t seq;
    for (int k = 0; k < 100; k++)
        ran &= run_batch(&h, reg, 2, 64, NULL, &seq);
    copies(after);
    const unsigned long long synced = fake_syncs() - syncs;
    ok(ran && e.ctl->desc_dev == 0 && after[0] == before[0] && after[1] == before[1] && after[2] == before[2] &&
           synced == 0,
       "cuda (device state): 100 small batches: no descriptor or item copy and no stream synchronisation "
       "(%llu copies, %llu syncs)",
       (after[0] + after[1] + after[2]) - (before[0] + before[1] + before[2]), synced);
    uint64_t got[64];
    ok(mkrt__cuda_engine_cells_read(&e, 0, 64, got, &err) == MKRT_OK && got[0] == 200 && got[63] == 200 &&
           cells[0] == 0,
       "cuda (device state): ... the cells in device memory hold every batch's work (%llu)",
       (unsigned long long)got[0]);
    ok(mkrt__cuda_engine_stop(&e, WAIT_NS), "cuda (device state): stopped");
    free(cells);
    free(reg);
}

int main(int argc, char **argv)
{
    (void)argc;
    decision_table();
    sim_barriers();
    void *lib = fake_cuda_open(argv[0]);
    *(void **)&fake_copies = fake_cuda_probe(lib, "fake_cuda_copies");
    *(void **)&fake_syncs = fake_cuda_probe(lib, "fake_cuda_syncs");
    *(void **)&fake_live = fake_cuda_probe(lib, "fake_cuda_live");
    if (!mkrt__cuda_megakernel_built()) {
        skip(16, "the megakernel was not built (no nvcc): the engine will not start");
        return done_testing();
    }
    cuda_dma_and_barriers();
    cuda_device_state();
    return done_testing();
}
