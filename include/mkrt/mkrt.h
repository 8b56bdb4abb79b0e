/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/mkrt.h
 * @brief The whole public API of libmkrt, one include.
 *
 * Includes every other header of include/mkrt/, which is libmkrt's API and
 * nothing else; link with `pkg-config --libs mkrt`. The layers built on
 * it are libraries of their own, each with its headers and its .pc:
 * mkrt_stream/stream.h (mkrt-stream), mkrt_mpi/mkrt_mpi.h (mkrt-mpi),
 * mkrt_planlib/ (mkrt-planlib), and the mkrt-soak plugin ABI,
 * mkrt_soak/soak_plugin.h (mkrt-soak).
 */
#ifndef MKRT_MKRT_H
#define MKRT_MKRT_H

#include "mkrt/alloc.h"
#include "mkrt/barrier.h"
#include "mkrt/config.h"
#include "mkrt/dedupe.h"
#include "mkrt/explain.h"
#include "mkrt/frontier.h"
#include "mkrt/geometry.h"
#include "mkrt/graph.h"
#include "mkrt/item.h"
#include "mkrt/layer.h"
#include "mkrt/op.h"
#include "mkrt/plan_cache.h"
#include "mkrt/publish.h"
#include "mkrt/ring.h"
#include "mkrt/runtime.h"
#include "mkrt/stats.h"
#include "mkrt/status.h"
#include "mkrt/topology.h"
#include "mkrt/version.h"

#endif /* MKRT_MKRT_H */
