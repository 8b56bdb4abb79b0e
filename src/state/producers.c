/* SPDX-License-Identifier: BSD-2-Clause */
/* src/state/producers.c - freeing a producer: by the dispatcher when it
 * retires a closed one (pipeline/drain.c), by mkrt_destroy, or by its
 * owner after an orphaning (runtime/producer.c). */
#include "state/producers.h"

void mkrt__producer_free(mkrt_producer *p)
{
    mkrt_spsc_ring_destroy(p->ring);
    mkrt_spsc_ring_destroy(p->stamps);
    mkrt__free(p, sizeof *p);
}
