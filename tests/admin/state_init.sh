#!/usr/bin/env bash
# state_init.sh LAASCTL: the HA bootstrap step of docs/ha.md, as an administrator runs it.
# `laasctl state init --config laas.yaml` on a new (empty) share writes the first, empty
# tenant state in laas.yaml's state_dir (state.json 0640; a directory it creates 2750), says
# so, and exits 0; run again, or on a directory that routed tenants (allocations.json), it
# refuses (exit 1) and writes nothing; with a laas.yaml that has problems it refuses too.
set -euo pipefail
laasctl=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
umask 022
printf 'state_dir: %s/share/laas\nstate_must_exist: true\n' "$work" >"$work/laas.yaml"
mkdir "$work/share"
"$laasctl" state init --config "$work/laas.yaml" >"$work/out" 2>&1 || fail "state init: $(cat "$work/out")"
cat "$work/out"
grep -q "wrote $work/share/laas/state.json" "$work/out" || fail "it does not say what it wrote"
[ "$(stat -c %a "$work/share/laas")" = 2750 ] || fail "state_dir mode $(stat -c %a "$work/share/laas")"
[ "$(stat -c %a "$work/share/laas/state.json")" = 640 ] || fail "state.json mode $(stat -c %a "$work/share/laas/state.json")"
grep -q '"format": "laas-state"' "$work/share/laas/state.json" || fail "not a state: $(cat "$work/share/laas/state.json")"
cp "$work/share/laas/state.json" "$work/first"
rc=0
"$laasctl" state init --config "$work/laas.yaml" >"$work/out" 2>&1 || rc=$?
[ $rc = 1 ] || fail "a second state init exits $rc"
grep -q 'exists' "$work/out" || fail "the refusal does not say why: $(cat "$work/out")"
cmp -s "$work/first" "$work/share/laas/state.json" || fail "state.json changed"
# A directory whose state.json is lost, not new: refused.
rm "$work/share/laas/state.json"
echo '{}' >"$work/share/laas/allocations.json"
rc=0
"$laasctl" state init --config "$work/laas.yaml" >"$work/out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q 'is lost, not new' "$work/out" || fail "a lost state.json was re-created (exit $rc): $(cat "$work/out")"
[ ! -e "$work/share/laas/state.json" ] || fail "state.json written over a lost one"
# laas.yaml with problems: its state_dir is not trusted.
: >"$work/empty.yaml"
rc=0
"$laasctl" state init --config "$work/empty.yaml" >"$work/out" 2>&1 || rc=$?
[ $rc = 1 ] || fail "state init with an empty laas.yaml exits $rc"
"$laasctl" --help | grep >/dev/null '^  state' || fail "laasctl --help does not list state"
"$laasctl" state init --help | grep >/dev/null -- '--config' || fail "state init --help has no --config"
echo "PASS: state init writes the first state once, refuses a second time and over a lost one"
