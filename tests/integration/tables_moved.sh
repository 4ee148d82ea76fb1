#!/usr/bin/env bash
# tables_moved.sh: a host moved while the SM was down is not given its old routes by
# tables.bin (issue 43, point 3), with the real OpenSM, ibsim and infiniband-diags. The lab
# tree pgft(2;8,4;1,4;1,2), OpenSM on comp-1 (qos TRUE), tenants a (8) and b (10).
# 1. tables.bin is written (mode 0640) once the tenants are routed.
# 2. OpenSM stopped; a host of tenant a and a host of tenant b swap LIDs (OpenSM's guid2lid
#    cache edited, as a lost cache, reassign_lids or another SM would leave them); OpenSM
#    started with a routing exception injected, so the start fails closed and gives the
#    switches the tables this SM last sent. Read back from the switches: no switch routes the
#    two moved LIDs at all (before the fix each led to the other host's port: a host of tenant
#    a reached through tenant b's routes), every other LID's entry is the good one, and the log
#    names the moved LIDs.
# 3. The injection removed: routed afresh, both hosts are reachable at their new LIDs and the
#    audit is clean.
# 4. OpenSM stopped again; the two hosts swap cables (each keeps its LID) and the start fails
#    closed again: no switch routes either LID (each led to the other's old place), every other
#    entry as sent, and (qos TRUE) the two leaf ports drop every SL both ways, so neither host
#    gets the other's first hop (before the fix 11 and 23 SL2VL rows let them through).
# 5. One more start failing closed: the tables the last one gave back were kept under its term,
#    so they are given back again, the same.
# 6. The first term's file put back: refused at a start failing closed, saying why.
# 7. A write that fails is counted (laas_tables_file_write_failures_total) and shown by status.
source "$(dirname "$0")/lib.sh"
laas_enter_namespace "$@"
laas_setup tables_moved
export SIM_HOST=comp-1 QOS=1
export LAAS_INJECT_ROUTING_FAILURE="$WORK/inject-routing-failure"
"$LAAS_TOPOGEN" "pgft(2;8,4;1,4;1,2)" -o fabric.net
start_lab_tenants
audit_layout good

# 1. The file, its mode.
for _ in $(seq 1 20); do [ -s state/tables.bin ] && break; sleep 0.5; done
[ -s state/tables.bin ] || die "no tables.bin written"
[ "$(stat -c %a state/tables.bin)" = 640 ] || die "tables.bin is mode $(stat -c %a state/tables.bin), not 0640"
[ "$(head -c 8 state/tables.bin)" = LAASTBL2 ] || die "tables.bin is not format 2"
sleep 1 # the last run's write, on the state directory's worker
cp state/tables.bin tables.bin.good

A=$(ctl --json tenant show a | jq -r '.hosts[0].name')
B=$(ctl --json tenant show b | jq -r '.hosts[0].name')
LA=$(host_lid disc.good "$A")
LB=$(host_lid disc.good "$B")
[ -n "$LA" ] && [ -n "$LB" ] && [ "$LA" != "$LB" ] || die "no LIDs for $A ($LA) and $B ($LB)"
log "tenants a and b routed; $A (tenant a) has LID $LA, $B (tenant b) LID $LB; tables.bin 0640, format 2"

# 2. The LIDs swapped while OpenSM is down, and a start that fails closed.
stop_opensm
[ -s osm.cache/guid2lid ] || die "OpenSM left no guid2lid cache"
awk -v a="$(printf '0x%04x' "$LA")" -v b="$(printf '0x%04x' "$LB")" '
  NF == 3 && tolower($2) == a { print $1, b, b; next }
  NF == 3 && tolower($2) == b { print $1, a, a; next }
  { print }' osm.cache/guid2lid >guid2lid.swapped
[ "$(grep -c . guid2lid.swapped)" = "$(grep -c . osm.cache/guid2lid)" ] || die "guid2lid edit lost lines"
cmp -s guid2lid.swapped osm.cache/guid2lid && die "guid2lid: the two LIDs were not found"
cp guid2lid.swapped osm.cache/guid2lid
touch "$LAAS_INJECT_ROUTING_FAILURE"
applied=$(count_log 'laas: forwarding tables applied')
start_opensm
wait_log 'laas: forwarding tables applied' $((applied + 1)) 45
sleep 1
grep -q 'get the tables this SM last sent them' osm.log ||
  die "the start did not give the switches the tables last sent: $(grep -E 'failing closed|keep the forwarding' osm.log | tail -2)"
sim ibnetdiscover >disc.moved 2>/dev/null || die "ibnetdiscover failed"
[ "$(host_lid disc.moved "$A")" = "$LB" ] && [ "$(host_lid disc.moved "$B")" = "$LA" ] ||
  die "the LIDs did not move: $A $(host_lid disc.moved "$A"), $B $(host_lid disc.moved "$B")"
sim dump_fts >lfts.moved 2>/dev/null || die "dump_fts failed"
printf '%s\n%s\n' "$LA" "$LB" >moved.lids
lft_entries moved.lids lfts.good >entries.moved.good
lft_entries moved.lids lfts.moved >entries.moved.now
[ -s entries.moved.good ] || die "the good tables route neither LID (nothing to check)"
if [ -s entries.moved.now ]; then
  die "$(wc -l <entries.moved.now) switch entries still route the moved LIDs $LA/$LB to the other host's old place, e.g.: $(head -2 entries.moved.now | tr '\n' ';')"
fi
# Every other LID keeps its good entry.
awk '/# lid / { for (i = 1; i < NF; i++) if ($i == "lid") print $(i + 1) }' disc.good | sort -un |
  grep -vx -e "$LA" -e "$LB" >kept.lids
lft_entries kept.lids lfts.good >entries.kept.good
lft_entries kept.lids lfts.moved >entries.kept.now
cmp -s entries.kept.good entries.kept.now ||
  die "entries of LIDs that did not move changed: $(diff entries.kept.good entries.kept.now | head -4)"
grep -q "LID(s) ($(printf '%s\n%s\n' "$LA" "$LB" | sort -n | paste -sd,)) belong to another port" osm.log ||
  die "the log does not name the moved LIDs: $(grep 'keep the forwarding' osm.log | tail -1)"
log "start failing closed: LIDs $LA and $LB moved, $(wc -l <entries.moved.good) entries of theirs left unreachable, $(wc -l <entries.kept.now) entries of $(wc -l <kept.lids) other LIDs as before"

# 3. Routed afresh once the injection is gone.
rm -f "$LAAS_INJECT_ROUTING_FAILURE"
heavy_sweep "the injected failure removed"
wait_log 'laas: recovered' 1 30
audit_layout after
lft_entries moved.lids lfts.after >entries.moved.after
[ "$(awk '$2 == sprintf("0x%04x", '"$LA"')' entries.moved.after | wc -l)" -gt 0 ] &&
  [ "$(awk '$2 == sprintf("0x%04x", '"$LB"')' entries.moved.after | wc -l)" -gt 0 ] ||
  die "the moved hosts are not routed at their new LIDs after recovery"

# 4. OpenSM stopped again; A and B swap cables (their LIDs stay theirs), and a start failing
#    closed: the LIDs of both lead to the other's old place, so no switch routes them; with
#    qos TRUE the two leaf ports drop every SL, so A does not get B's first hop.
attach() { grep -A1 -F "Hca	1 \"$1\"" fabric.net | sed -n 's/^\[1\][[:space:]]*"\([^"]*\)"\[\([0-9]*\)\].*/\1 \2/p'; }
read -r LEAF_A PORT_A <<<"$(attach "$A")"
read -r LEAF_B PORT_B <<<"$(attach "$B")"
[ -n "$PORT_A" ] && [ -n "$PORT_B" ] || die "no cabling found for $A or $B in fabric.net"
stop_opensm
console "Unlink \"$A\""
console "Unlink \"$B\""
console "Link \"$LEAF_A\"[$PORT_A] \"$B\"[1]"
console "Link \"$LEAF_B\"[$PORT_B] \"$A\"[1]"
touch "$LAAS_INJECT_ROUTING_FAILURE"
applied=$(count_log 'laas: forwarding tables applied')
start_opensm
wait_log 'laas: forwarding tables applied' $((applied + 1)) 45
sleep 1
sim ibnetdiscover >disc.recabled 2>/dev/null || die "ibnetdiscover failed"
[ "$(host_lid disc.recabled "$A")" = "$LB" ] && [ "$(host_lid disc.recabled "$B")" = "$LA" ] ||
  die "the LIDs moved with the cables: $A $(host_lid disc.recabled "$A"), $B $(host_lid disc.recabled "$B")"
sim dump_fts >lfts.recabled 2>/dev/null || die "dump_fts failed"
lft_entries moved.lids lfts.recabled >entries.recabled.now
[ ! -s entries.recabled.now ] ||
  die "$(wc -l <entries.recabled.now) switch entries still route $A and $B's LIDs to their old places: $(head -2 entries.recabled.now | tr '\n' ';')"
lft_entries kept.lids lfts.after >entries.kept.after
lft_entries kept.lids lfts.recabled >entries.kept.recabled
cmp -s entries.kept.after entries.kept.recabled ||
  die "re-cabled: entries of other LIDs changed: $(diff entries.kept.after entries.kept.recabled | head -4)"
# open_rows FILE SWITCH PORT: SL2VL rows of SWITCH (its name in DISC) from or to PORT (another
# port on the other side) that let some SL through (a VL other than 15).
open_rows() {
  local lid
  lid=$(awk -v want="\"$2\"" '/^Switch/ && index($0, "# " want " ") { for (i = 1; i < NF; i++) if ($i == "lid") { print $(i + 1); exit } }' "$4")
  [ -n "$lid" ] || die "no LID for switch $2 in $4"
  awk -v lid="$lid" -v p="$3" '/^# SL2VL table: Lid/ { on = ($NF == lid); next }
    on && /^ports:/ { line = $0; sub(/^ports: in */, "", line); inp = line + 0
      sub(/^[0-9]+, out */, "", line); outp = line + 0; sub(/^[0-9]+: *\|/, "", line)
      n = split(line, v, "|"); open = 0
      for (i = 1; i <= n; i++) { gsub(/ /, "", v[i]); if (v[i] != "" && v[i] != "15") open = 1 }
      if ((inp == p || outp == p) && inp != outp && inp != 0 && outp != 0 && open) c++ }
    END { print c + 0 }' "$1"
}
[ "$(open_rows sl2vl.after "$LEAF_B" "$PORT_B" disc.after)" -gt 0 ] ||
  die "$B's port $LEAF_B[$PORT_B] let nothing through before: nothing to check"
for try in 1 2 3 4 5; do # OpenSM sends SL2VL after the forwarding tables
  sim "$LAAS_SL2VL_DUMP" --fabric disc.recabled >sl2vl.recabled 2>sl2vl.recabled.err || die "laas-sl2vl-dump failed"
  open_a=$(open_rows sl2vl.recabled "$LEAF_B" "$PORT_B" disc.recabled)
  open_b=$(open_rows sl2vl.recabled "$LEAF_A" "$PORT_A" disc.recabled)
  [ "$open_a" = 0 ] && [ "$open_b" = 0 ] && break
  [ $try -lt 5 ] || die "SL2VL: $open_a rows let $A's packets through at $LEAF_B[$PORT_B] (B's old first hop), $open_b rows $B's at $LEAF_A[$PORT_A]"
  sleep 1
done
grep -q '2 switch port(s) where another host is cabled drop every SL' osm.log ||
  die "the log does not say the two ports drop every SL: $(grep 'keep the forwarding' osm.log | tail -1)"
log "start failing closed after $A ($LEAF_A[$PORT_A]) and $B ($LEAF_B[$PORT_B]) swapped cables: their LIDs unrouted, both ports cut in SL2VL, $(wc -l <entries.kept.recabled) other entries as before"

# 5. Restarted once more, still failing closed: the tables the last start gave back were kept
#    under its own term (not refused as older than this start's), and are given back again.
file_term() { od -An -tu8 -j8 -N8 state/tables.bin | tr -d ' '; }
for _ in $(seq 1 20); do [ "$(file_term)" = "$(jq .term state/state.json)" ] && break; sleep 0.5; done
[ "$(file_term)" = "$(jq .term state/state.json)" ] ||
  die "tables.bin is of term $(file_term), the state of term $(jq .term state/state.json): the tables given back were not kept"
stop_opensm
applied=$(count_log 'laas: forwarding tables applied')
given=$(count_log 'get the tables this SM last sent them')
start_opensm
wait_log 'laas: forwarding tables applied' $((applied + 1)) 45
sleep 1
[ "$(count_log 'get the tables this SM last sent them')" -gt "$given" ] ||
  die "a second start failing closed did not give the tables back: $(grep 'tables last sent' osm.log | tail -1)"
sim dump_fts >lfts.again 2>/dev/null || die "dump_fts failed"
cmp -s <(grep -E '^0x' lfts.recabled | sort) <(grep -E '^0x' lfts.again | sort) ||
  die "the second start gave other tables: $(diff <(grep -E '^0x' lfts.recabled | sort) <(grep -E '^0x' lfts.again | sort) | head -4)"
log "a second start failing closed gives back the same tables (tables.bin kept under term $(file_term))"

# 6. The file of the first term put back (as a deposed master, or a backup, would leave it):
#    a start failing closed refuses it, saying why, and gives the switches nothing from it.
stop_opensm
cp tables.bin.good state/tables.bin
applied=$(count_log 'laas: forwarding tables applied')
start_opensm
wait_log 'laas: forwarding tables applied' $((applied + 1)) 45
grep -q 'tables last sent cannot be read (.*tables.bin: written in term 1, but a master held term' osm.log ||
  die "the file of term 1 was not refused: $(grep 'tables last sent' osm.log | tail -1)"
grep 'keep the forwarding tables' osm.log | tail -1 | grep >/dev/null 'with no table known are left without routes' ||
  die "the switches got tables from a refused file: $(grep 'keep the forwarding' osm.log | tail -1)"
log "a tables.bin of term 1 is refused at a start of term $(jq .term state/state.json), saying why"

# 7. A write that fails (a directory where the file goes) is counted and shown.
rm -f "$LAAS_INJECT_ROUTING_FAILURE" state/tables.bin
mkdir -p state/tables.bin/x
heavy_sweep "the injected failure removed"
for _ in $(seq 1 20); do ctl metrics | grep >/dev/null -x 'laas_tables_file_write_failures_total 1' && break; sleep 0.5; done
ctl metrics | grep >/dev/null -x 'laas_tables_file_write_failures_total 1' ||
  die "the failed write is not counted: $(ctl metrics | grep tables_file)"
ctl status | grep >/dev/null '^TABLES FILE: cannot keep the tables sent in .*tables.bin' ||
  die "status does not show the failed write: $(ctl status | head -20)"
log "a failed write of tables.bin: laas_tables_file_write_failures_total 1, status says '$(ctl status | grep '^TABLES FILE' | cut -c1-80)...'"
log "PASS tables_moved: a host whose LID moved, or that was re-cabled, while OpenSM was down gets no route and no first hop from tables.bin; every other entry as sent; routed afresh once OpenSM can route"
