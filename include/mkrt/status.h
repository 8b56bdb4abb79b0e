/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mkrt/status.h
 * @brief Status codes and the error record filled by fallible calls.
 *
 * Contract:
 *   - Every fallible call returns an ::mkrt_status: ::MKRT_OK (0) on
 *     success, a negative named failure otherwise. No call aborts or prints
 *     on bad input or allocation failure.
 *   - Where a call takes an `mkrt_error *err`, it may be NULL. When it is
 *     not and the call fails, `err->status` holds the returned status and
 *     `err->message` a sentence in three parts: what failed, the numbers
 *     involved, and "Fix: what to do". On success err is left untouched.
 *   - mkrt_status_name() and mkrt_status_describe() are safe from any
 *     thread and return static strings (never NULL, also for unknown
 *     values).
 */
#ifndef MKRT_STATUS_H
#define MKRT_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Result of every fallible mkrt call: 0 on success, negative on failure. */
typedef enum mkrt_status {
    MKRT_OK = 0,          /**< Success. */
    MKRT_EAGAIN = -1,     /**< Would block: ring full or empty, or no free slot; try again. */
    MKRT_EINVAL = -2,     /**< An argument is out of its documented range (or NULL). */
    MKRT_ENOMEM = -3,     /**< An allocation failed; nothing was changed. */
    MKRT_EOVERFLOW = -4,  /**< Checked arithmetic on sizes or counts overflowed, or a log is full. */
    MKRT_ECLOSED = -5,    /**< The object was closed; no new work is accepted. */
    MKRT_ETIMEDOUT = -6,  /**< A deadline passed before the call could finish. */
    MKRT_ECYCLE = -7,     /**< A dependency graph contains a cycle. */
    MKRT_EBUDGET = -8,    /**< A memory plan cannot fit the device budget. */
    MKRT_EDEVICE = -9,    /**< The device or its driver failed or is missing. */
    MKRT_ENOTSUP = -10,   /**< The operation is not supported (in this build, or an unregistered op). */
    MKRT_ESTATE = -11     /**< The object is not in a state that allows this call. */
} mkrt_status;

/**
 * @brief Longest message kept in an ::mkrt_error, terminating NUL included.
 *
 * Longer messages are cut and end in "...".
 */
#define MKRT_ERROR_MESSAGE_MAX 320

/**
 * @brief What a failed call reports, when given a non-NULL `mkrt_error *`.
 *
 * Plain value owned by the caller; one record per thread (or per call) is
 * the usual pattern. Calls fill it only when they fail.
 */
typedef struct mkrt_error {
    mkrt_status status; /**< The status the failed call returned. */
    /** NUL-terminated sentence: what failed, the numbers, and "Fix: ...". */
    char message[MKRT_ERROR_MESSAGE_MAX];
} mkrt_error;

/**
 * @brief The enumerator's name as a string.
 * @param status Any value, listed or not.
 * @return A static string such as "MKRT_EAGAIN"; "MKRT_UNKNOWN_STATUS" for
 *         values not listed in ::mkrt_status. Never NULL.
 * @par Thread safety
 * Any thread, at any time.
 */
const char *mkrt_status_name(mkrt_status status);

/**
 * @brief One short lower-case phrase describing a status.
 * @param status Any value, listed or not.
 * @return A static string such as "timed out" or "closed"; "unknown status"
 *         for values not listed in ::mkrt_status. Never NULL.
 * @par Thread safety
 * Any thread, at any time.
 */
const char *mkrt_status_describe(mkrt_status status);

/**
 * @brief Resets an error record to ::MKRT_OK with an empty message.
 * @param err The record to reset; NULL is ignored.
 * @par Thread safety
 * Any thread; the record itself must not be in use by another thread.
 */
void mkrt_error_clear(mkrt_error *err);

/** @brief A timeout that never expires: wait without a deadline (every call
 * that takes a relative timeout in nanoseconds accepts it). */
#define MKRT_TIMEOUT_INFINITE UINT64_MAX

#ifdef __cplusplus
}
#endif
#endif /* MKRT_STATUS_H */
