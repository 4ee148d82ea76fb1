#!/bin/bash
set -euo pipefail
# Delete the Slurm reservations of departing LaaS tenants.
scontrol delete reservation ReservationName=laas-1
