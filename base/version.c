/* SPDX-License-Identifier: BSD-2-Clause */
/* base/version.c - the library's version, fixed when it is compiled. */
#include "mkrt/version.h"

const char *mkrt_version(void)
{
    return MKRT_VERSION_STRING;
}

unsigned mkrt_version_number(void)
{
    return MKRT_VERSION_NUMBER;
}
