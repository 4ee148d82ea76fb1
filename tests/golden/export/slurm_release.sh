#!/bin/bash
# Delete the Slurm reservations of departing LaaS tenants (generated; safe to run again).
set -euo pipefail

# reservation_exists NAME: true when Slurm has a reservation of exactly this name.
reservation_exists() {
  scontrol -o show reservation "$1" 2>/dev/null | grep -q "^ReservationName=$1 "
}
if reservation_exists laas-1; then scontrol delete ReservationName=laas-1; fi
