#!/usr/bin/env bash
# doc_examples.sh: the laasctl examples of README.md, docs/*.md, the man pages and conf/, run
# against the plugin in the real OpenSM on the demo tree xgft(2;4,8;1,4) (the fabric the
# examples are written for), file by file from a fabric without tenants
# (tests/docs/doc_commands.py --live).
# An example that does not exit as its page shows (0, or the "exit N" of its comment), shown
# output the real output lacks, and laasctl(8)'s tenant show field list lacking a field of the
# real reply fail, naming FILE:LINE.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup doc_examples
# qos TRUE, as opensm.conf.snippet says: the guide's by-hand audit reads the SL2VL tables back.
QOS=1 start_demo
wait_log 'SUBNET UP' 1 45
root=$(cd "$(dirname "$0")/../.." && pwd)
LAAS_DOC_PRELOAD="$UMAD2SIM" LAAS_AUDIT="$LAAS_AUDIT" \
  python3 "$root/tests/docs/doc_commands.py" --root "$root" --bin laasctl="$LAASCTL" \
  --bin laas-audit="$LAAS_AUDIT" --bin laas-sl2vl-dump="$LAAS_SL2VL_DUMP" \
  --live "$WORK/laas.sock" --state-dir "$WORK/state" \
  --partitions "$WORK/partitions.conf" --timeout 60 >live.out 2>&1 || {
  cat live.out
  die "a documented laasctl example failed against the live plugin"
}
cat live.out
log "PASS: $(tail -1 live.out)"
