/* SPDX-License-Identifier: BSD-2-Clause */
/* mkrt/status.h - status codes and the error record filled by fallible calls.
 *
 * Contract:
 *   - Every fallible call returns an mkrt_status: MKRT_OK (0) on success, a
 *     negative named failure otherwise. No call aborts or prints on bad input
 *     or allocation failure.
 *   - Where a call takes an `mkrt_error *err`, it may be NULL. When it is not
 *     and the call fails, err->status holds the returned status and
 *     err->message a sentence in three parts: what failed, the numbers
 *     involved, and "Fix: what to do". On success err is left untouched.
 *   - mkrt_status_name() and mkrt_status_describe() are safe from any thread
 *     and return static strings (never NULL, also for unknown values).
 */
#ifndef MKRT_STATUS_H
#define MKRT_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mkrt_status {
    MKRT_OK = 0,
    MKRT_EAGAIN = -1,     /* would block: ring full or empty, try again */
    MKRT_EINVAL = -2,     /* an argument is out of its documented range */
    MKRT_ENOMEM = -3,     /* an allocation failed; nothing was changed */
    MKRT_EOVERFLOW = -4,  /* checked arithmetic on sizes or counts overflowed */
    MKRT_ECLOSED = -5,    /* the object was closed; no new work is accepted */
    MKRT_ETIMEDOUT = -6,  /* a deadline passed before the call could finish */
    MKRT_ECYCLE = -7,     /* a dependency graph contains a cycle */
    MKRT_EBUDGET = -8,    /* a memory plan cannot fit the device budget */
    MKRT_EDEVICE = -9,    /* the device or its driver failed or is missing */
    MKRT_ENOTSUP = -10,   /* the operation is not supported in this build */
    MKRT_ESTATE = -11     /* the object is not in a state that allows this call */
} mkrt_status;

/* Longest message kept in an mkrt_error, terminating NUL included; longer
 * messages are cut at a character boundary and end in "...". */
#define MKRT_ERROR_MESSAGE_MAX 320

typedef struct mkrt_error {
    mkrt_status status;
    char message[MKRT_ERROR_MESSAGE_MAX];
} mkrt_error;

/* "MKRT_EAGAIN" and so on; "MKRT_UNKNOWN_STATUS" for values not listed. */
const char *mkrt_status_name(mkrt_status status);

/* One short lower-case phrase, e.g. "ring closed". */
const char *mkrt_status_describe(mkrt_status status);

/* Resets err to MKRT_OK with an empty message. err may be NULL. */
void mkrt_error_clear(mkrt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MKRT_STATUS_H */
