/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/version.h
 * @brief The mkrt release this header belongs to, and the release of the
 * library a program runs with.
 *
 * The macros give the version of the headers a program was compiled
 * against; mkrt_version() and mkrt_version_number() give the version of the
 * library it is running with. Comparing the two detects a program built
 * against other headers than the library it loaded.
 *
 * Versions follow MAJOR.MINOR.PATCH (see "Versioning and ABI" in the
 * README): PATCH for fixes, MINOR for compatible additions, MAJOR for
 * incompatible changes; while MAJOR is 0, a MINOR release may also be
 * incompatible, and the shared library's SONAME (libmkrt.so.0.MINOR) says
 * so. This header is the single source of the version: the Makefile reads
 * the three numbers below.
 *
 * Both functions are safe from any thread and never fail.
 */
#ifndef MKRT_VERSION_H
#define MKRT_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Major version: raised on an incompatible API or ABI change. */
#define MKRT_VERSION_MAJOR 0
/** @brief Minor version: raised on compatible additions (before 1.0: on any
 *  release that is not only fixes, compatible or not). */
#define MKRT_VERSION_MINOR 2
/** @brief Patch version: raised on releases that only fix bugs. */
#define MKRT_VERSION_PATCH 0
/** @brief The version as text, "MAJOR.MINOR.PATCH". */
#define MKRT_VERSION_STRING "0.2.0"
/** @brief The version as one number, MAJOR * 10000 + MINOR * 100 + PATCH
 *  (0.2.0 is 200), for comparisons in the preprocessor. */
#define MKRT_VERSION_NUMBER \
    (MKRT_VERSION_MAJOR * 10000 + MKRT_VERSION_MINOR * 100 + MKRT_VERSION_PATCH)

/**
 * @brief The version of the library in use, as text.
 * @return "MAJOR.MINOR.PATCH" of the library (MKRT_VERSION_STRING as it was
 *         when the library was built); a static string, never NULL.
 */
const char *mkrt_version(void);

/**
 * @brief The version of the library in use, as one number.
 * @return MKRT_VERSION_NUMBER as it was when the library was built
 *         (MAJOR * 10000 + MINOR * 100 + PATCH).
 */
unsigned mkrt_version_number(void);

#ifdef __cplusplus
}
#endif

#endif /* MKRT_VERSION_H */
