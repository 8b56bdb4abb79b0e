/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/mkrt.h
 * @brief The whole public API of mkrt, one include.
 *
 * Includes every other public header; link with `pkg-config --libs mkrt`.
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
#include "mkrt/soak_plugin.h"
#include "mkrt/stats.h"
#include "mkrt/stream.h"
#include "mkrt/status.h"
#include "mkrt/topology.h"
#include "mkrt/version.h"

#endif /* MKRT_MKRT_H */
