#!/usr/bin/env python3
"""reach.py DISC LFTS: which channel-adapter ports reach which, walking the forwarding tables
read back from the switches (dump_fts) over the cabling ibnetdiscover found. Prints
"reachable R of P pairs" and one "UNREACHABLE src dst" line per pair that is not delivered.
With --pairs FILE, only the pairs listed ("name name" a line) are walked."""
import re
import sys


def read_disc(path):
    links = {}  # (node, port) -> (node, port)
    lid_of = {}  # CA name -> LID
    name_of = {}  # node id -> name
    node = None
    for line in open(path):
        m = re.match(r'^(Switch|Ca)\s+\d+\s+"([SH]-[0-9a-f]+)"\s+#\s+"([^"]*)"', line)
        if m:
            node = m.group(2)
            name_of[node] = m.group(3)
            continue
        m = re.match(r'^\[(\d+)\](?:\([0-9a-f]+\))?\s+"([SH]-[0-9a-f]+)"\[(\d+)\]', line)
        if m and node:
            links[(node, int(m.group(1)))] = (m.group(2), int(m.group(3)))
            if node.startswith("H-"):
                lm = re.search(r'#\s+lid (\d+)', line)
                if lm:
                    lid_of[name_of[node]] = int(lm.group(1))
    return links, lid_of, name_of


def read_lfts(path):
    lfts = {}  # switch id -> {lid: port}
    sw = None
    for line in open(path):
        m = re.match(r'^Unicast lids .* guid 0x([0-9a-f]+)', line)
        if m:
            sw = "S-%016x" % int(m.group(1), 16)
            lfts[sw] = {}
            continue
        m = re.match(r'^0x([0-9a-fA-F]+)\s+(\d+)', line)
        if m and sw:
            lfts[sw][int(m.group(1), 16)] = int(m.group(2))
    return lfts


def main():
    args = sys.argv[1:]
    pairs_file = None
    if "--pairs" in args:
        i = args.index("--pairs")
        pairs_file = args[i + 1]
        del args[i:i + 2]
    links, lid_of, name_of = read_disc(args[0])
    lfts = read_lfts(args[1])
    node_of = {name: n for n, name in name_of.items() if n.startswith("H-")}
    if pairs_file:
        pairs = [tuple(l.split()[:2]) for l in open(pairs_file) if l.strip()]
    else:
        cas = sorted(lid_of)
        pairs = [(a, b) for a in cas for b in cas if a != b]
    reached = 0
    for src, dst in pairs:
        here = links.get((node_of[src], 1))
        dlid = lid_of[dst]
        ok = False
        for _ in range(16):
            if here is None:
                break
            node, _port = here
            if node == node_of[dst]:
                ok = True
                break
            port = lfts.get(node, {}).get(dlid)
            if port is None or port == 255:
                break
            here = links.get((node, port))
        if ok:
            reached += 1
        else:
            print("UNREACHABLE %s %s" % (src, dst))
    print("reachable %d of %d pairs" % (reached, len(pairs)))


main()
