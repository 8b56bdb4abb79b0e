# SPDX-License-Identifier: BSD-2-Clause
# tests/tap.sh - TAP for the shell tests (sourced): `ok STATUS TEXT` per
# check, `diag_file FILE` to show a file as diagnostics, `done_testing`
# last (the plan line, and the exit status: 0 when every check passed).
n=0
failed=0
ok() { # ok STATUS DESCRIPTION
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        failed=$((failed + 1))
    fi
}
diag_file() { sed 's/^/#   /' "$1"; }
done_testing() {
    echo "1..$n"
    [ "$failed" -eq 0 ]
}
