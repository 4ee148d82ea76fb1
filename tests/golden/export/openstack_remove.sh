#!/bin/bash
# Remove departing LaaS tenants' host aggregates (generated; safe to run again).
set -euo pipefail

# aggregate_exists NAME
aggregate_exists() { openstack aggregate show "$1" >/dev/null 2>&1; }
# aggregate_hosts NAME: its hosts, one a line.
aggregate_hosts() {
  openstack aggregate show -f json -c hosts "$1" |
    python3 -c 'import json, sys; [print(h) for h in json.load(sys.stdin)["hosts"]]'
}
# laas_aggregate_delete NAME: empty the aggregate and delete it, if it exists.
laas_aggregate_delete() {
  local h
  aggregate_exists "$1" || return 0
  for h in $(aggregate_hosts "$1"); do
    openstack aggregate remove host "$1" "$h" >/dev/null
  done
  openstack aggregate delete "$1"
}

# tenant 1
laas_aggregate_delete laas-1
