#!/usr/bin/python3
"""A stand-in `openstack` command for testing LaaS's OpenStack scripts without a cloud.

Every command line is parsed by python-openstackclient's own argparse parser for that command
(the class its entry point names, as the real `openstack` would run it); a line it refuses
exits 2 with argparse's message. Accepted commands are applied to a recorded state (JSON file
$FAKE_OPENSTACK_STATE) with Nova's and Keystone's answers where it matters: creating an
existing aggregate, adding a host twice, removing an absent host and deleting a non-empty
aggregate fail, as the real services refuse them. Every command is appended to
$FAKE_OPENSTACK_LOG.

Loading openstackclient's command modules takes about a second per process; with
$FAKE_OPENSTACK_SOCKET set, `fake_openstack.py --serve` loads them once and answers the
`openstack` invocations (this same file, as a thin client) over that Unix socket.
"""
import contextlib
import io
import json
import os
import socket
import sys
from importlib.metadata import entry_points

GROUPS = ("openstack.compute.v2", "openstack.identity.v3")


def command_class(words):
    """The longest command name (space-separated words) with an entry point, and its class."""
    eps = {}
    for group in GROUPS:
        for ep in entry_points(group=group):
            eps.setdefault(ep.name, ep)
    for n in range(min(len(words), 4), 0, -1):
        name = "_".join(words[:n])
        if name in eps:
            return " ".join(words[:n]), eps[name].load(), words[n:]
    sys.stderr.write("openstack: '%s' is not an openstack command\n" % " ".join(words))
    sys.exit(2)


def fail(message):
    sys.stderr.write(message + "\n")
    sys.exit(1)


def main(argv):
    state_path = os.environ["FAKE_OPENSTACK_STATE"]
    with open(os.environ.get("FAKE_OPENSTACK_LOG", os.devnull), "a") as log:
        log.write(" ".join(argv) + "\n")
    name, cls, rest = command_class(argv)
    cmd = cls(None, None)
    parser = cmd.get_parser("openstack " + name)
    args = parser.parse_args(rest)  # exits 2 on anything the real client would refuse

    with open(state_path) as f:
        state = json.load(f)
    aggs = state.setdefault("aggregates", {})
    changed = False

    def show(record):
        columns = getattr(args, "columns", None) or list(record)
        fmt = getattr(args, "formatter", "table")
        if fmt == "json":
            print(json.dumps({c: record[c] for c in columns}))
        elif fmt == "value":
            for c in columns:
                v = record[c]
                print(" ".join(v) if isinstance(v, list) else v)
        else:
            for c in columns:
                print("| %s | %s |" % (c, record[c]))

    if name == "aggregate create":
        if args.name in aggs:
            fail("Conflict: Aggregate %s already exists. (HTTP 409)" % args.name)
        aggs[args.name] = {"name": args.name, "hosts": [], "properties": {}}
        changed = True
        show(aggs[args.name])
    elif name == "aggregate show":
        if args.aggregate not in aggs:
            fail("No aggregate with a name or ID of '%s' exists." % args.aggregate)
        show(aggs[args.aggregate])
    elif name == "aggregate set":
        if args.aggregate not in aggs:
            fail("No aggregate with a name or ID of '%s' exists." % args.aggregate)
        aggs[args.aggregate]["properties"].update(args.properties or {})
        changed = True
    elif name in ("aggregate add host", "aggregate remove host"):
        agg = aggs.get(args.aggregate)
        if agg is None:
            fail("No aggregate with a name or ID of '%s' exists." % args.aggregate)
        if name == "aggregate add host":
            if args.host in agg["hosts"]:
                fail("Conflict: host %s is already in aggregate. (HTTP 409)" % args.host)
            agg["hosts"].append(args.host)
        else:
            if args.host not in agg["hosts"]:
                fail("Not Found: host %s is not in aggregate. (HTTP 404)" % args.host)
            agg["hosts"].remove(args.host)
        changed = True
    elif name == "aggregate delete":
        for a in args.aggregate:
            if a not in aggs:
                fail("No aggregate with a name or ID of '%s' exists." % a)
            if aggs[a]["hosts"]:
                fail("Bad Request: Cannot remove aggregate %s: it has hosts. (HTTP 400)" % a)
            del aggs[a]
        changed = True
    elif name == "project show":
        projects = state.get("projects", {})
        if args.project not in projects:
            fail("No project with a name or ID of '%s' exists." % args.project)
        show({"id": projects[args.project], "name": args.project})
    else:
        fail("fake openstack: '%s' parses but is not simulated" % name)

    if changed:
        tmp = state_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(state, f, indent=1, sort_keys=True)
        os.replace(tmp, state_path)


def run(argv):
    """main() with its output captured: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    rc = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return rc, out.getvalue(), err.getvalue()


def recv_all(conn):
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return json.loads(data)


def serve(path):
    # Load every command module once, up front.
    for group in GROUPS:
        for ep in entry_points(group=group):
            if ep.name.startswith(("aggregate_", "project_")):
                ep.load()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(8)
    while True:
        conn, _ = server.accept()
        with conn:
            request = recv_all(conn)
            os.environ.update(request["env"])
            rc, out, err = run(request["argv"])
            conn.sendall((json.dumps({"rc": rc, "out": out, "err": err}) + "\n").encode())


def client(path, argv):
    env = {k: v for k, v in os.environ.items() if k.startswith("FAKE_OPENSTACK_")}
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    conn.sendall((json.dumps({"argv": argv, "env": env}) + "\n").encode())
    reply = recv_all(conn)
    sys.stdout.write(reply["out"])
    sys.stderr.write(reply["err"])
    sys.exit(reply["rc"])


if __name__ == "__main__":
    sock = os.environ.get("FAKE_OPENSTACK_SOCKET")
    if sys.argv[1:2] == ["--serve"]:
        serve(sock)
    elif sock and os.path.exists(sock):
        client(sock, sys.argv[1:])
    else:
        main(sys.argv[1:])
