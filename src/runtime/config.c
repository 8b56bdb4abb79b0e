/* SPDX-License-Identifier: BSD-2-Clause */
/* src/runtime/config.c - mkrt_config: the defaults and the one check of
 * every field (mkrt_create). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <unistd.h>

#include "base/cpus.h"
#include "base/error_internal.h"
#include "base/spin_wait.h"
#include "runtime/api_internal.h"
#include "queue/spsc_wait.h"
#include "backend/cpu_pool.h"
#include "backend/megakernel_backend.h"

mkrt_config mkrt_config_default(void)
{
    mkrt_config c;
    memset(&c, 0, sizeof c);
    c.backend = MKRT_BACKEND_AUTO;
    c.workers = 0;
    c.ring_capacity = 16384;
    c.max_batch = 65536;
    c.max_producers = 64;
    c.burst_per_ring = 1024;
    c.device_memory_budget = 0; /* the device's own where it reports one (lifecycle.c) */
    c.watchdog_ms = 5000;
    c.cells = 1u << 20;
    c.append_log_capacity = 1u << 20;
    c.dead_letter_capacity = 4096;
    c.device_idle_us = 1000;
    c.device_resident_us = 10000;
    c.emit_capacity = 65536;
    c.class_max_age_us = 5000;
    c.class_slice_us = 250;
    return c;
}

static bool pow2(size_t v)
{
    return v >= 2 && (v & (v - 1)) == 0;
}

/* count x size rounded up to whole pages (at least one), or false when
 * that does not fit in size_t. */
static bool page_bytes(size_t count, size_t size, size_t *out)
{
    size_t b;
    if (!mkrt__mul_size(count, size, &b) || !mkrt__add_size(b, MKRT__PAGE_BYTES - 1, &b))
        return false;
    b = b / MKRT__PAGE_BYTES * MKRT__PAGE_BYTES;
    *out = b ? b : MKRT__PAGE_BYTES;
    return true;
}

#define RANGE_FIX(field, value, lo, hi, fix)                                                     \
    mkrt__error_set(err, MKRT_EINVAL, "mkrt_config." field " %llu is outside %llu..%llu. Fix: " fix, \
                    (unsigned long long)(value), (unsigned long long)(lo), (unsigned long long)(hi))

/* MKRT_PLAN_OFF (A/B runs of any program, mkrt/explain.h): "none", "all",
 * a comma list of decision names, or a number 0..MKRT_PLAN_ALL; it
 * replaces config.plan_off. Anything else is refused. */
mkrt_status mkrt__config_plan_env(uint32_t *plan_off, mkrt_error *err)
{
    const char *v = getenv("MKRT_PLAN_OFF");
    if (v == NULL || *v == '\0')
        return MKRT_OK;
    static const char *const names[] = {"wake", "shed", "fuse", "route", "drain", "pull", "arms", "queue"};
    uint32_t off = 0;
    const char *at = v;
    if (*at >= '0' && *at <= '9') {
        char *end;
        unsigned long n = strtoul(at, &end, 10);
        if (*end == '\0' && n <= MKRT_PLAN_ALL) {
            *plan_off = (uint32_t)n;
            return MKRT_OK;
        }
        at = NULL;
    }
    while (at != NULL && *at != '\0') {
        size_t len = strcspn(at, ",");
        uint32_t bit = 0;
        if (len == 3 && strncmp(at, "all", 3) == 0)
            bit = MKRT_PLAN_ALL;
        else if (len == 4 && strncmp(at, "none", 4) == 0)
            bit = 0x80000000u; /* known, adds nothing */
        for (size_t i = 0; i < sizeof names / sizeof *names; i++)
            if (strlen(names[i]) == len && strncmp(at, names[i], len) == 0)
                bit = 1u << i;
        if (bit == 0)
            at = NULL;
        else {
            off |= bit & MKRT_PLAN_ALL;
            at += len + (at[len] == ',');
        }
    }
    if (at == NULL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "MKRT_PLAN_OFF=\"%.64s\" names no decision. Fix: unset it, or use none, all, "
                               "a comma list of wake, shed, fuse, route, drain, pull, arms and queue, or a number 0..%u.",
                               v, (unsigned)MKRT_PLAN_ALL);
    *plan_off = off;
    return MKRT_OK;
}

/* Every field against its documented range (runtime.h), and every size
 * computed from the fields with checked arithmetic. */
mkrt_status mkrt__config_check(const mkrt_config *c, size_t *cells_bytes, size_t *log_bytes,
                                mkrt_error *err)
{
    if ((unsigned)c->backend > MKRT_BACKEND_SIM)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_config.backend %d is not an mkrt_backend_kind. Fix: use "
                               "MKRT_BACKEND_AUTO.",
                               (int)c->backend);
    if (!pow2(c->ring_capacity) || c->ring_capacity > MKRT_RING_CAPACITY_MAX)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_config.ring_capacity %zu is not a power of two in 2..%zu. Fix: "
                               "use 4096 (the default) or another power of two.",
                               c->ring_capacity, (size_t)MKRT_RING_CAPACITY_MAX);
    if (c->max_batch == 0 || c->max_batch > MKRT_CONFIG_MAX_BATCH_MAX)
        return RANGE_FIX("max_batch", c->max_batch, 1, MKRT_CONFIG_MAX_BATCH_MAX,
                         "use 65536 (the default).");
    if (c->max_producers == 0 || c->max_producers > MKRT_CONFIG_PRODUCERS_MAX)
        return RANGE_FIX("max_producers", c->max_producers, 1, MKRT_CONFIG_PRODUCERS_MAX,
                         "use 64 (the default).");
    if (c->burst_per_ring == 0 || c->burst_per_ring > MKRT_CONFIG_MAX_BATCH_MAX)
        return RANGE_FIX("burst_per_ring", c->burst_per_ring, 1, MKRT_CONFIG_MAX_BATCH_MAX,
                         "use 1024 (the default); 0 would never drain a ring.");
    if (c->workers > MKRT_CONFIG_WORKERS_MAX)
        return RANGE_FIX("workers", c->workers, 0, MKRT_CONFIG_WORKERS_MAX,
                         "use 0 for one per CPU.");
    if (c->cells == 0 || c->cells > MKRT_CONFIG_CELLS_MAX)
        return RANGE_FIX("cells", c->cells, 1, MKRT_CONFIG_CELLS_MAX,
                         "give the runtime at least one cell and at most the maximum.");
    if (c->append_log_capacity > MKRT_CONFIG_APPEND_LOG_MAX)
        return RANGE_FIX("append_log_capacity", c->append_log_capacity, 0, MKRT_CONFIG_APPEND_LOG_MAX,
                         "use 1 << 20 (the default) and consume the log with "
                         "mkrt_append_log_consume as you go.");
    if (!pow2(c->dead_letter_capacity) || c->dead_letter_capacity > MKRT_CONFIG_DEAD_LETTERS_MAX)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_config.dead_letter_capacity %zu is not a power of two in 2..%zu. "
                               "Fix: use 4096 (the default).",
                               c->dead_letter_capacity, (size_t)MKRT_CONFIG_DEAD_LETTERS_MAX);
    if (c->emit_capacity > MKRT_CONFIG_EMIT_MAX)
        return RANGE_FIX("emit_capacity", c->emit_capacity, 0, MKRT_CONFIG_EMIT_MAX,
                         "use 65536 (the default), or more for ops that emit much per batch.");
    if (c->class_max_age_us > MKRT_CONFIG_CLASS_AGE_MAX)
        return RANGE_FIX("class_max_age_us", c->class_max_age_us, 0, MKRT_CONFIG_CLASS_AGE_MAX,
                         "use 5000 (the default), or 0 to bound bulk work's wait by batches only.");
    if (c->class_slice_us > MKRT_CONFIG_CLASS_AGE_MAX)
        return RANGE_FIX("class_slice_us", c->class_slice_us, 0, MKRT_CONFIG_CLASS_AGE_MAX,
                         "use 250 (the default), or 0 to cut bulk batches by max_batch only.");
    if (c->cuda_max_blocks > MKRT_CONFIG_CUDA_BLOCKS_MAX)
        return RANGE_FIX("cuda_max_blocks", c->cuda_max_blocks, 0, MKRT_CONFIG_CUDA_BLOCKS_MAX,
                         "use 0 to size the grid by occupancy.");
    if (c->cuda_blocks_per_sm > MKRT_CONFIG_CUDA_BLOCKS_MAX)
        return RANGE_FIX("cuda_blocks_per_sm", c->cuda_blocks_per_sm, 0, MKRT_CONFIG_CUDA_BLOCKS_MAX,
                         "use 0 for the occupancy API's maximum.");
    if (c->cuda_device_state > 1)
        return RANGE_FIX("cuda_device_state", c->cuda_device_state, 0, 1,
                         "use 0 (host-mapped) or 1 (device memory).");
    if (c->device_idle_us > MKRT_CONFIG_DEVICE_US_MAX)
        return RANGE_FIX("device_idle_us", c->device_idle_us, 0, MKRT_CONFIG_DEVICE_US_MAX,
                         "use 1000 (the default), or 0 to keep the megakernel resident.");
    if (c->device_resident_us > MKRT_CONFIG_DEVICE_US_MAX)
        return RANGE_FIX("device_resident_us", c->device_resident_us, 0, MKRT_CONFIG_DEVICE_US_MAX,
                         "use 10000 (the default), or 0 never to leave while busy.");
    if (c->plan_off & ~(uint32_t)MKRT_PLAN_ALL)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_config.plan_off 0x%x has bits 0x%x that name no decision. Fix: "
                               "use 0, or an OR of MKRT_PLAN_WAKE, _SHED, _FUSE, _ROUTE, _DRAIN, "
                               "_PULL, _ARMS and _QUEUE (mkrt/explain.h; MKRT_PLAN_ALL is every one).",
                               c->plan_off, c->plan_off & ~(uint32_t)MKRT_PLAN_ALL);
    if (c->cuda_user_ptx == NULL && c->cuda_user_ptx_size != 0)
        return mkrt__error_set(err, MKRT_EINVAL,
                               "mkrt_config.cuda_user_ptx_size is %zu but cuda_user_ptx is NULL. Fix: "
                               "set both, or neither.",
                               c->cuda_user_ptx_size);
    if (c->cuda_user_ptx_size > MKRT_CONFIG_CUDA_PTX_MAX)
        return RANGE_FIX("cuda_user_ptx_size", c->cuda_user_ptx_size, 0, MKRT_CONFIG_CUDA_PTX_MAX,
                         "link fewer user ops.");
    if (!page_bytes(c->cells, sizeof(uint64_t), cells_bytes) ||
        !page_bytes(c->append_log_capacity, sizeof(uint64_t), log_bytes))
        return mkrt__error_set(err, MKRT_EOVERFLOW,
                               "mkrt_config.cells %u or append_log_capacity %zu needs more bytes than "
                               "this machine can address. Fix: lower them.",
                               c->cells, c->append_log_capacity);
    return MKRT_OK;
}
