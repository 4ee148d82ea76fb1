#!/usr/bin/env bash
# exit_codes.sh LAASCTL MANPAGE: laasctl's exit statuses are one table in the code
# (service/protocol.h kExitStatuses): `laasctl --help` prints it, and laasctl(8)'s EXIT STATUS
# must list exactly the same codes, so the page cannot drift from the program.
set -euo pipefail
laasctl=$1 page=$2
help_codes=$("$laasctl" --help | sed -n '/^Exit status:/,$p' | awk 'NR > 1 && $1 ~ /^[0-9]+$/ { print $1 }' | sort -n | tr '\n' ' ')
page_codes=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$page" | awk '$1 == ".B" && $2 ~ /^[0-9]+$/ { print $2 }' | sort -n | tr '\n' ' ')
echo "laasctl --help: $help_codes"
echo "laasctl(8):     $page_codes"
[ -n "$help_codes" ] || { echo "FAIL: --help lists no exit status"; exit 1; }
[ "$help_codes" = "$page_codes" ] || { echo "FAIL: laasctl(8) and --help list different exit statuses"; exit 1; }
echo "PASS: one table of exit statuses"
