/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/stream_fixture.h - a stream loaded with the path 0-1-..-(n-1)
 * (weight 1), for the streaming tests that start from a known graph. */
#ifndef MKRT_TESTS_STREAM_FIXTURE_H
#define MKRT_TESTS_STREAM_FIXTURE_H

#include <stdlib.h>

#include "mkrt_stream/stream.h"

/* The stream of n vertices, weights up to weight_max, the nq queries q,
 * loaded with the path; NULL on any failure. */
static inline mkrt_stream *stream_fixture_path(uint32_t n, uint32_t weight_max, const mkrt_stream_query *q,
                                               uint32_t nq)
{
    mkrt_stream_config c = mkrt_stream_config_default();
    c.vertices = n;
    c.weight_max = weight_max;
    c.queries = nq;
    for (uint32_t k = 0; k < nq && k < MKRT_STREAM_QUERIES_MAX; k++)
        c.query[k] = q[k];
    mkrt_stream *s = NULL;
    uint32_t *src = malloc(n * sizeof *src), *dst = malloc(n * sizeof *dst);
    int good = src != NULL && dst != NULL && mkrt_stream_create(&c, &s, NULL) == MKRT_OK;
    for (uint32_t v = 1; good && v < n; v++)
        src[v - 1] = v - 1, dst[v - 1] = v;
    if (good && mkrt_stream_load(s, src, dst, NULL, n - 1, NULL, NULL) != MKRT_OK)
        good = 0;
    free(src);
    free(dst);
    if (!good) {
        mkrt_stream_destroy(s);
        return NULL;
    }
    return s;
}

#endif
