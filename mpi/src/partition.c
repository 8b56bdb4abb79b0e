/* SPDX-License-Identifier: BSD-2-Clause */
/* mpi/src/partition.c - which rank owns a handle (mkrt_mpi_partition). */
#include "mpi_internal.h"

/* splitmix64's finaliser: scatters the bits of consecutive handles. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

int mkrt__mpi_owner(const struct mkrt_mpi *m, uint32_t handle)
{
    if (handle >= m->cfg.handles)
        return m->rank; /* per-rank scratch */
    if (m->cfg.partition == MKRT_MPI_HASH)
        return (int)(mix64(handle) % (uint64_t)m->size);
    return (int)(handle / m->per_rank);
}

int mkrt_mpi_owner(const mkrt_mpi *m, uint32_t handle)
{
    return m == NULL ? -1 : mkrt__mpi_owner(m, handle);
}
