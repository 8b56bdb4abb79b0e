/* SPDX-License-Identifier: BSD-2-Clause */
/* base/error.c - status names and error records. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/error_fill.h"
#include "base/error_internal.h"

const char *mkrt_status_name(mkrt_status status)
{
    switch (status) {
    case MKRT_OK: return "MKRT_OK";
    case MKRT_EAGAIN: return "MKRT_EAGAIN";
    case MKRT_EINVAL: return "MKRT_EINVAL";
    case MKRT_ENOMEM: return "MKRT_ENOMEM";
    case MKRT_EOVERFLOW: return "MKRT_EOVERFLOW";
    case MKRT_ECLOSED: return "MKRT_ECLOSED";
    case MKRT_ETIMEDOUT: return "MKRT_ETIMEDOUT";
    case MKRT_ECYCLE: return "MKRT_ECYCLE";
    case MKRT_EBUDGET: return "MKRT_EBUDGET";
    case MKRT_EDEVICE: return "MKRT_EDEVICE";
    case MKRT_ENOTSUP: return "MKRT_ENOTSUP";
    case MKRT_ESTATE: return "MKRT_ESTATE";
    }
    return "MKRT_UNKNOWN_STATUS";
}

const char *mkrt_status_describe(mkrt_status status)
{
    switch (status) {
    case MKRT_OK: return "success";
    case MKRT_EAGAIN: return "would block, try again";
    case MKRT_EINVAL: return "invalid argument";
    case MKRT_ENOMEM: return "out of memory";
    case MKRT_EOVERFLOW: return "size arithmetic overflow";
    case MKRT_ECLOSED: return "closed";
    case MKRT_ETIMEDOUT: return "timed out";
    case MKRT_ECYCLE: return "dependency cycle";
    case MKRT_EBUDGET: return "over the memory budget";
    case MKRT_EDEVICE: return "device failure";
    case MKRT_ENOTSUP: return "not supported";
    case MKRT_ESTATE: return "wrong state for this call";
    }
    return "unknown status";
}

void mkrt_error_clear(mkrt_error *err)
{
    if (err == NULL)
        return;
    err->status = MKRT_OK;
    err->message[0] = '\0';
}

mkrt_status mkrt__error_set(mkrt_error *err, mkrt_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mkrt__error_vfill(err, status, fmt, ap);
    va_end(ap);
    return status;
}

int mkrt__error_reason_len(const char *message)
{
    const char *fix = strstr(message, " Fix:");
    size_t n = fix != NULL ? (size_t)(fix - message) : strlen(message);
    while (n > 0 && (message[n - 1] == '.' || message[n - 1] == ' '))
        n--;
    return n > INT_MAX ? INT_MAX : (int)n;
}
