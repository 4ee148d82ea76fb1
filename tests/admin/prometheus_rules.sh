#!/usr/bin/env bash
# The shipped alert rules (conf/prometheus/laas-alerts.yml): valid for Prometheus
# (promtool check rules), and each alert fires on its trouble and not otherwise
# (promtool test rules laas-alerts.test.yml). Exit 77 (skip) without promtool (Debian package
# prometheus).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rules="$here/../../conf/prometheus/laas-alerts.yml"
tests="$here/laas-alerts.test.yml"
if ! command -v promtool >/dev/null 2>&1; then
  echo "SKIP: promtool not found (apt-get install prometheus)"
  exit 77
fi
promtool check rules "$rules"
# A new alert without a test case would pass unseen: every alert is named in the tests.
missing=0
while read -r alert; do
  if ! grep -q "alertname: $alert\$" "$tests"; then
    echo "FAIL: alert $alert has no test case in $(basename "$tests")"
    missing=1
  fi
done < <(sed -n 's/^ *- alert: *\([A-Za-z0-9_]*\).*/\1/p' "$rules")
[ "$missing" = 0 ]
promtool test rules "$tests"
