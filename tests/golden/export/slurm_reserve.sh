#!/bin/bash
set -euo pipefail
# Slurm reservations for LaaS tenants, generated.
scontrol create reservation ReservationName=laas-4 'Nodes=node[001-010]' StartTime=now Duration=infinite Users=root Flags=IGNORE_JOBS
scontrol create reservation ReservationName=laas-1 'Nodes=comp-[11-20]' StartTime=now Duration=infinite Users=root Flags=IGNORE_JOBS
