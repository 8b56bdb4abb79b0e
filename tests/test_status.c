/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/test_status.c - status names, descriptions and error records. */
#include <string.h>

#include "../base/error_internal.h"
#include "mkrt/item.h"
#include "mkrt/status.h"
#include "tap.h"

int main(void)
{
    static const struct { mkrt_status s; const char *name; } names[] = {
        {MKRT_OK, "MKRT_OK"},           {MKRT_EAGAIN, "MKRT_EAGAIN"},
        {MKRT_EINVAL, "MKRT_EINVAL"},   {MKRT_ENOMEM, "MKRT_ENOMEM"},
        {MKRT_EOVERFLOW, "MKRT_EOVERFLOW"}, {MKRT_ECLOSED, "MKRT_ECLOSED"},
        {MKRT_ETIMEDOUT, "MKRT_ETIMEDOUT"}, {MKRT_ECYCLE, "MKRT_ECYCLE"},
        {MKRT_EBUDGET, "MKRT_EBUDGET"}, {MKRT_EDEVICE, "MKRT_EDEVICE"},
        {MKRT_ENOTSUP, "MKRT_ENOTSUP"}, {MKRT_ESTATE, "MKRT_ESTATE"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        is_str(mkrt_status_name(names[i].s), names[i].name, "name of %d", (int)names[i].s);
        ok(strlen(mkrt_status_describe(names[i].s)) > 0, "%s has a description", names[i].name);
        if (names[i].s != MKRT_OK)
            ok(names[i].s < 0, "%s is negative", names[i].name);
    }
    is_str(mkrt_status_name((mkrt_status)-999), "MKRT_UNKNOWN_STATUS", "unknown status has a name");
    is_str(mkrt_status_describe((mkrt_status)12345), "unknown status", "unknown status is described");

    mkrt_error err;
    mkrt_error_clear(&err);
    is(err.status, MKRT_OK, "cleared error is OK");
    is_str(err.message, "", "cleared error has an empty message");
    is(mkrt__error_set(&err, MKRT_EINVAL, "thing %d failed. Fix: do %s.", 7, "x"), MKRT_EINVAL,
       "error_set returns the status");
    is(err.status, MKRT_EINVAL, "error_set stores the status");
    is_str(err.message, "thing 7 failed. Fix: do x.", "error_set formats the message");
    is(mkrt__error_set(NULL, MKRT_ENOMEM, "ignored"), MKRT_ENOMEM, "NULL err is allowed");
    char longmsg[1000];
    memset(longmsg, 'a', sizeof longmsg - 1);
    longmsg[sizeof longmsg - 1] = '\0';
    mkrt__error_set(&err, MKRT_EOVERFLOW, "%s", longmsg);
    is(strlen(err.message), MKRT_ERROR_MESSAGE_MAX - 1, "a long message is cut to the buffer");
    ok(strcmp(err.message + MKRT_ERROR_MESSAGE_MAX - 4, "...") == 0, "... and ends in ...");
    mkrt_error_clear(NULL);
    is(mkrt__error_reason_len("thing 7 failed (x). Fix: do x."), (int)strlen("thing 7 failed (x)"),
       "the reason of a message stops before its Fix and its full stop");
    is(mkrt__error_reason_len("no fix here"), (int)strlen("no fix here"), "a message without a Fix is all reason");
    is(mkrt__error_reason_len(""), 0, "an empty message has an empty reason");
    ok(sizeof(mkrt_item) == 16, "mkrt_item is 16 bytes");
    return done_testing();
}
