/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_version.c - mkrt_version() and mkrt_version_number() agree
 * with the macros of mkrt/version.h, and the macros with each other. */
#include <stdio.h>
#include <string.h>

#include "mkrt/mkrt.h"
#include "tap.h"

#if MKRT_VERSION_NUMBER != MKRT_VERSION_MAJOR * 10000 + MKRT_VERSION_MINOR * 100 + MKRT_VERSION_PATCH
#error "MKRT_VERSION_NUMBER is not MAJOR * 10000 + MINOR * 100 + PATCH"
#endif

int main(void)
{
    char text[32];
    snprintf(text, sizeof text, "%d.%d.%d", MKRT_VERSION_MAJOR, MKRT_VERSION_MINOR,
             MKRT_VERSION_PATCH);
    is_str(MKRT_VERSION_STRING, text, "MKRT_VERSION_STRING is MAJOR.MINOR.PATCH (%s)", text);
    ok(MKRT_VERSION_MINOR >= 0 && MKRT_VERSION_MINOR < 100 && MKRT_VERSION_PATCH >= 0 &&
           MKRT_VERSION_PATCH < 100,
       "MINOR and PATCH fit their two digits of MKRT_VERSION_NUMBER");
    ok(mkrt_version() != NULL, "mkrt_version() is a string");
    is_str(mkrt_version(), MKRT_VERSION_STRING, "mkrt_version() is the headers' version");
    is(mkrt_version_number(), MKRT_VERSION_NUMBER, "mkrt_version_number() is MKRT_VERSION_NUMBER");
    unsigned major = 0, minor = 0, patch = 0;
    ok(sscanf(mkrt_version(), "%u.%u.%u", &major, &minor, &patch) == 3 &&
           mkrt_version_number() == major * 10000 + minor * 100 + patch,
       "mkrt_version_number() is the number of mkrt_version() (%u.%u.%u)", major, minor, patch);
    ok(mkrt_version() == mkrt_version(), "mkrt_version() returns one static string");
    return done_testing();
}
