#!/usr/bin/python3
"""What the operator pages state as fact, checked against the code and the packages.

doc_commands.py runs the pages' commands; this checks the facts their prose states, one check
per kind of mismatch an administrator met (issue 49), each naming FILE:LINE:

- exit-codes: a sentence that gives one laasctl exit status ("exit 75") and names what one
  other status of laasctl's table stands for (`laasctl --help`, "Exit status:", from
  service/protocol.h) -- "a state directory not answering" with "exit 1" -- is wrong;
- paths: every installed path a page names (/usr/share/doc/laas/..., /etc/laas/..., the
  plugin, the man pages, the units; not /etc/laas/api/, laas-api's certificates, which the
  administrator makes) is in the Debian package's file list (debian/*.install,
  .docs, .examples, with dh_compress's rule: docs over 4 KiB gain .gz, examples do not) or the
  RPM's (%files of packaging/rpm/laas.spec); a path only one of them installs is named with
  its distribution (Debian/Ubuntu, EL) or beside the other's path, in the same paragraph;
- modes: a mode given right after a directory that tmpfiles.d creates (conf/tmpfiles.d-laas.conf)
  is that directory's mode;
- metrics: the admin guide's metrics table lists every series the service exports (string
  literals of service/*.cc), and nothing else; every series an alert rule, a page or conf/
  names is one of them; the guide's alert table lists exactly the rules of
  conf/prometheus/laas-alerts.yml; a page that says to alert on a series has a rule on it;
- state-files: every file the code keeps in the state directory ("/NAME" literals of service/
  and opensm_plugin/) and the control socket are in laasctl(8)'s FILES, and the state files in
  the guide's table of where things are;
- words: every heading `laasctl status` prints ("BLOCKED:", laasctl/service_cmds.cc) is
  explained in the guide or the glossary, each state word of laasctl's exit table ("state
  blocked") is a glossary entry, and "quarantined" (an unaccepted GUID) is never used for
  the closed free pool (a free or drained host kept apart), which the glossary separates;
- help-defaults: no --help of laasctl or laas-plan shows a flag's value as CLI11 prints a
  negatable pair ("--no-color{false}"): it reads as the default (colour follows the terminal);
- json-after: the global options are taken after the subcommand too
  (`laasctl tenant show bank --json` reaches the socket: exit 69 on a socket that is not there).

Usage: doc_facts.py --root SRC --laasctl PATH [--laas-plan PATH] [--only CHECK]...
"""
import argparse
import fnmatch
import glob
import os
import re
import subprocess
import sys

# The operator pages: what an administrator reads (architecture.md and simulation.md are the
# developers').
def operator_pages(root):
    pages = ["README.md"]
    pages += sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs/*.md"))
                    if os.path.basename(p) not in ("architecture.md", "simulation.md"))
    pages += sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs/*.[1-8]")))
    for dirpath, _, files in os.walk(os.path.join(root, "conf")):
        pages += sorted(os.path.relpath(os.path.join(dirpath, f), root) for f in files)
    return pages


def read(root, rel):
    return open(os.path.join(root, rel), encoding="utf-8", errors="replace").read()


def is_man(rel):
    return re.search(r"\.[1-8]$", rel) is not None


def paragraphs(root, rel):
    """[(first line number, text)]: Markdown and conf split at blank lines (a table row is a
    paragraph of its own), a man page at its paragraph macros; roff escapes removed."""
    out, start, buf = [], None, []
    lines = read(root, rel).split("\n")

    def flush():
        nonlocal start, buf
        if buf:
            out.append((start, "\n".join(buf)))
        start, buf = None, []

    for n, line in enumerate(lines, 1):
        if is_man(rel):
            if re.match(r"^\.(TP|PP|SH|SS|P|LP|IP|TQ)\b", line):
                flush()
                continue
            if line.startswith('.\\"'):
                continue
            line = re.sub(r"^\.(I|B|IR|BR|RB|RI|BI|IB)\s+", "", line)
            line = re.sub(r"\\f[BIRP]", "", line).replace("\\-", "-").replace("\\(aq", "'")
            if line.startswith("."):
                continue
        elif not rel.endswith(".md") and re.match(r"^\s*#\s?", line):  # a comment of conf/
            line = re.sub(r"^\s*#\s?", "", line)
            if not line.strip():
                flush()
                continue
        elif not line.strip() or line.lstrip().startswith("|"):
            flush()
            if line.strip():
                out.append((n, line))
            continue
        if start is None:
            start = n
        buf.append(line)
    flush()
    return out


def sentences(text):
    """A paragraph's sentences and list items (the unit a fact is stated in)."""
    text = re.sub(r"\n\s*[-*] ", "\n\x00", text)
    parts = re.split(r"\x00|(?<=[.;:])\s+(?=[A-Z(`*\-])|;\n", text)
    return [p.replace("\n", " ") for p in parts if p and p.strip()]


def run(argv, **kw):
    return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=30, **kw)


# ---------------------------------------------------------------------------------------------
# exit-codes

STOP = {"a", "an", "the", "or", "and", "of", "to", "its", "is", "e.g."}


def exit_table(laasctl):
    """{code: [phrases]} from `laasctl --help`: each meaning split at its commas, after the
    word before its first colon ("refused:", "try again:")."""
    text = run([laasctl, "--help"]).stdout.decode()
    table, code = {}, None
    for line in text[text.index("Exit status:"):].split("\n")[1:]:
        m = re.match(r"^\s+(\d+)\s+(.*)$", line)
        if m:
            code = int(m.group(1))
            table[code] = m.group(2)
        elif code is not None and line.strip():
            table[code] += " " + line.strip()
    phrases = {}
    for code, meaning in table.items():
        head, _, rest = meaning.partition(":")
        parts = rest.split(",") if rest and len(head.split()) <= 2 else [meaning]
        phrases[code] = [p.strip() for p in parts if p.strip()]
    return phrases


def words_of(phrase):
    return [w for w in re.findall(r"[a-z][a-z-]*", phrase.lower()) if w not in STOP]


def check_exit_codes(root, laasctl):
    failures = []
    phrases = exit_table(laasctl)
    for rel in operator_pages(root):
        for n, para in paragraphs(root, rel):
            for s in sentences(para):
                codes = {int(c) for c in re.findall(r"\bexits?\s+(?:status\s+|code\s+)?(\d+)\b", s)}
                codes = {c for c in codes if c in phrases}
                if len(codes) != 1:
                    continue
                code = codes.pop()
                said = set(re.findall(r"[a-z][a-z-]*", s.lower()))
                for other, ps in phrases.items():
                    for p in ps:
                        w = words_of(p)
                        if other != code and len(w) >= 2 and all(x in said for x in w):
                            failures.append("%s:%d: says exit %d for \"%s\", which laasctl "
                                            "answers with exit %d (%s): %s" % (
                                                rel, n, code, p, other, ", ".join(phrases[other]),
                                                s.strip()[:200]))
    return failures


# ---------------------------------------------------------------------------------------------
# paths

def tree_files(root, rel):
    """A source file or directory: [(path relative to it, size)]."""
    full = os.path.join(root, rel)
    if os.path.isfile(full):
        return [(os.path.basename(rel), os.path.getsize(full))]
    out = []
    for dirpath, _, files in os.walk(full):
        for f in files:
            p = os.path.join(dirpath, f)
            out.append((os.path.join(os.path.basename(rel), os.path.relpath(p, full)),
                        os.path.getsize(p)))
    return out


def debian_files(root):
    out = set()
    for line in read(root, "debian/laas.install").split("\n"):
        if line.strip() and not line.startswith("#"):
            path = "/" + line.split()[0].replace("${DEB_HOST_MULTIARCH}", "*")
            # dh_installman / dh_compress: man pages are compressed
            out.add(path + ".gz" if re.search(r"/man/man\d/", path) else path)
    for line in read(root, "debian/laas.docs").split("\n"):
        for name, size in tree_files(root, line.strip()) if line.strip() else []:
            # dh_compress (compat 13): usr/share/doc files over 4 KiB, not the examples
            out.add("/usr/share/doc/laas/" + name + (".gz" if size > 4096 else ""))
    for line in read(root, "debian/laas.examples").split("\n"):
        for name, _ in tree_files(root, line.strip()) if line.strip() else []:
            out.add("/usr/share/doc/laas/examples/" + name)
    out |= {"/usr/share/doc/laas/copyright", "/usr/share/doc/laas/changelog.Debian.gz"}
    return out


RPM_MACROS = {"_bindir": "/usr/bin", "_libdir": "/usr/lib64", "_sysconfdir": "/etc",
              "_tmpfilesdir": "/usr/lib/tmpfiles.d", "_sysusersdir": "/usr/lib/sysusers.d",
              "_unitdir": "/usr/lib/systemd/system", "statedir": "/var/lib/laas",
              "_mandir": "/usr/share/man", "_datadir": "/usr/share", "_docdir": "/usr/share/doc",
              "name": "laas", "_localstatedir": "/var", "_prefix": "/usr"}


def rpm_files(root):
    spec = read(root, "packaging/rpm/laas.spec")
    files = spec[spec.index("\n%files"):].split("\n%changelog")[0].split("\n")[2:]
    out = set()
    for line in files:
        line = re.sub(r"%\{(\w+)\}", lambda m: RPM_MACROS.get(m.group(1), m.group(0)), line)
        words = line.split()
        if not words:
            continue
        if words[0] in ("%doc", "%license"):
            dest = "/usr/share/doc/laas/" if words[0] == "%doc" else "/usr/share/licenses/laas/"
            for rel in words[1:]:
                out |= {dest + name for name, _ in tree_files(root, rel)}
            continue
        path = words[-1]
        if path.startswith("/"):
            out.add(path)
    return out


OWN_PATH = re.compile(r"(?<![\w.])(/(?:usr/share/doc/laas|usr/share/man/man\d/la|usr/bin/laas|"
                      r"usr/lib/<multiarch>/libosmlaas|usr/lib\w*/libosmlaas|etc/laas/|"
                      r"(?:usr/)?lib/systemd/system/laas|usr/lib/(?:tmpfiles|sysusers)\.d/laas)"
                      r"[\w./<>@*+-]*)")


def installed(path, files):
    path = path.replace("<multiarch>", "x86_64-linux-gnu").rstrip(".,;:)'`\"*")
    if path.endswith("/."):
        path = path[:-1]
    for f in files:
        if fnmatch.fnmatch(path, f) or (path.endswith("/") and f.startswith(path)) or \
                f.startswith(path.rstrip("/") + "/") or fnmatch.fnmatch(path, f + "*") and \
                f.endswith("*"):
            return True
    return False


# Where the administrator puts files no package can ship: laas-api's certificates and key.
ADMIN_MADE = ("/etc/laas/api/",)


def check_paths(root):
    failures = []
    deb, rpm = debian_files(root), rpm_files(root)
    for rel in operator_pages(root):
        for n, para in paragraphs(root, rel):
            paths = [p for p in OWN_PATH.findall(para) if not p.startswith(ADMIN_MADE)]
            where = {p: (installed(p, deb), installed(p, rpm)) for p in paths}
            for p, (in_deb, in_rpm) in where.items():
                if not in_deb and not in_rpm:
                    failures.append("%s:%d: %s is installed by neither package" % (rel, n, p))
                elif in_deb != in_rpm:
                    distro, names = ("Debian", r"\b(Debian|Ubuntu)\b") if in_deb else \
                        ("EL", r"\b(EL|RHEL|Rocky|Alma|rpm|RPM)\b")
                    other = any(q != p and where[q] == (in_rpm, in_deb) for q in where)
                    if not re.search(names, para) and not other:
                        failures.append("%s:%d: %s is where only the %s package installs it: "
                                        "say so, or give the other's path beside it" % (
                                            rel, n, p, distro))
    return failures


# ---------------------------------------------------------------------------------------------
# modes

MODE = re.compile(r"\bmode\s+(0?[0-7]{3,4})\b|\b(0?[0-7]{3,4})\b(?=[\s,]+(?:owner\s+)?root\b)")


def check_modes(root):
    failures, dirs = [], {}
    for line in read(root, "conf/tmpfiles.d-laas.conf").split("\n"):
        w = line.split()
        if len(w) >= 3 and w[0] == "d":
            dirs[w[1]] = int(w[2], 8)
    for rel in operator_pages(root):
        for n, para in paragraphs(root, rel):
            for sentence in sentences(para):
                for d, mode in dirs.items():
                    for m in re.finditer(r"(?<![\w/])%s/?(?![\w/.-])" % re.escape(d), sentence):
                        rest = sentence[m.end():]
                        nxt = re.search(r"(?<![\w.])/[a-z]", rest)  # the next path ends its text
                        rest = rest[: nxt.start()] if nxt else rest
                        given = MODE.search(rest)
                        if given and int(given.group(1) or given.group(2), 8) != mode:
                            failures.append("%s:%d: %s given mode %s; tmpfiles.d makes it %o" % (
                                rel, n, d, given.group(1) or given.group(2), mode))
    return failures


# ---------------------------------------------------------------------------------------------
# metrics

def code_metrics(root):
    out = set()
    for p in glob.glob(os.path.join(root, "service/*.cc")) + glob.glob(os.path.join(root, "sdn/*.cc")):
        if not p.endswith("_test.cc"):
            out |= set(re.findall(r'"(laas_[a-z0-9_]+)"', open(p).read()))
    return out


def guide_tables(root):
    """The admin guide's metrics table {series: line} and alert table {alert: line}."""
    metrics, alerts = {}, {}
    for n, line in enumerate(read(root, "docs/admin-guide.md").split("\n"), 1):
        if not line.startswith("| `"):
            continue
        first = line.split("|")[1]
        for name in re.findall(r"`(laas_[a-z0-9_]+)", first):
            metrics[name] = n
        for name in re.findall(r"`(LaaS[A-Za-z]+)`", first):
            alerts[name] = n
    return metrics, alerts


def check_metrics(root):
    failures = []
    emitted = code_metrics(root)
    table, alert_rows = guide_tables(root)
    rules_text = read(root, "conf/prometheus/laas-alerts.yml")
    rules = re.findall(r"^\s*- alert:\s*(\w+)", rules_text, re.M)
    exprs = {}
    for alert, expr in re.findall(r"- alert:\s*(\w+)\s*\n\s*expr:\s*(.*)", rules_text):
        exprs[alert] = set(re.findall(r"\b(laas_[a-z0-9_]+)", expr))
    for s in sorted(emitted - set(table)):
        failures.append("docs/admin-guide.md: the metrics table lacks %s (exported by service/ or sdn/)" % s)
    for s in sorted(set(table) - emitted):
        failures.append("docs/admin-guide.md:%d: %s is in the metrics table but no code exports "
                        "it" % (table[s], s))
    for alert, series in exprs.items():
        for s in sorted(series - emitted):
            failures.append("conf/prometheus/laas-alerts.yml: %s reads %s, which no code exports"
                            % (alert, s))
    for a in rules:
        if a not in alert_rows:
            failures.append("docs/admin-guide.md: the alert table lacks %s" % a)
    for a, n in alert_rows.items():
        if a not in rules:
            failures.append("docs/admin-guide.md:%d: alert %s is in no rule of laas-alerts.yml"
                            % (n, a))
    used = set().union(*exprs.values()) if exprs else set()
    for rel in operator_pages(root):
        for n, para in paragraphs(root, rel):
            for s in sentences(para):
                for name in re.findall(r"\b(laas_[a-z0-9_]+)", s):
                    # a metric-like name that no code exports: a typo or a series gone
                    if name not in emitted and re.search(r"_(total|seconds)$|laas_state_", name):
                        failures.append("%s:%d: %s is no series the service exports" % (
                            rel, n, name))
                if re.search(r"\balert on\b", s):
                    for name in re.findall(r"\b(laas_[a-z0-9_]+)", s):
                        if name not in used:
                            failures.append("%s:%d: says to alert on %s, but no rule of "
                                            "laas-alerts.yml reads it" % (rel, n, name))
    return failures


# ---------------------------------------------------------------------------------------------
# state-files

def section(text, name):
    m = re.search(r"^\.SH %s\n(.*?)(?=^\.SH )" % name, text, re.M | re.S)
    return m.group(1) if m else ""


def check_state_files(root):
    failures = []
    names = set()
    for d in ("service", "opensm_plugin"):
        for p in glob.glob(os.path.join(root, d, "*.cc")) + glob.glob(os.path.join(root, d, "*.h")):
            if not p.endswith("_test.cc"):
                names |= set(re.findall(r'"/([a-z_]+\.(?:json|bin|lock|yaml|yaml\.applied))"',
                                        open(p).read()))
    socket = re.search(r'kDefaultSocketPath = "([^"]+)"', read(root, "service/protocol.h")).group(1)
    files = section(read(root, "docs/laasctl.8"), "FILES")
    for name in sorted(names):
        if "/var/lib/laas/" + name not in files:
            failures.append("docs/laasctl.8: FILES lacks /var/lib/laas/%s (kept there by the "
                            "plugin)" % name)
    if socket not in files:
        failures.append("docs/laasctl.8: FILES lacks the control socket %s" % socket)
    row = next((l for l in read(root, "docs/admin-guide.md").split("\n")
                if l.startswith("| tenant state |")), "")
    for name in sorted(names):
        if "`%s`" % name not in row:
            failures.append("docs/admin-guide.md: the 'tenant state' row lacks `%s`" % name)
    return failures


# ---------------------------------------------------------------------------------------------
# words

def check_words(root, laasctl):
    failures = []
    guide, glossary = read(root, "docs/admin-guide.md"), read(root, "docs/glossary.md")
    code = read(root, "laasctl/service_cmds.cc")
    for heading in sorted(set(re.findall(r'cout << "([A-Z][A-Z ]+[A-Z]):', code))):
        if "`%s:`" % heading not in guide:
            failures.append("laasctl status prints '%s:', which the guide's table of what "
                            "status flags does not explain" % heading)
    entries = {e.lower() for e in re.findall(r"^\*\*([^*]+)\*\*", glossary, re.M)}
    for code_, ps in exit_table(laasctl).items():
        for p in ps:
            m = re.match(r"^state (\w+)$", p)
            if m and m.group(1) not in entries:
                failures.append("laasctl's exit %d says '%s': docs/glossary.md has no entry "
                                "**%s**" % (code_, p, m.group(1)))
    for rel in operator_pages(root):
        if rel == "docs/glossary.md":
            continue
        for n, para in paragraphs(root, rel):
            for s in sentences(para):
                if re.search(r"(free|drained) hosts? (are|is) quarantined|quarantined (like|as) "
                             r"an? (free|drained) host|(itself|themselves) quarantined", s, re.I):
                    failures.append("%s:%d: 'quarantined' used for the closed free pool (the "
                                    "glossary's 'Two kinds of keeping apart'): %s" % (
                                        rel, n, s.strip()[:160]))
    return failures


# ---------------------------------------------------------------------------------------------
# help-defaults, json-after

def help_paths(tool, path=()):
    text = run([tool] + list(path) + ["--help"]).stdout.decode()
    out = [list(path)]
    sub = re.search(r"^Subcommands?:\n((?:  .*\n?)+)", text, re.M)
    for name in re.findall(r"^  (\S+)", sub.group(1), re.M) if sub else []:
        out += help_paths(tool, path + (name,))
    return out


def check_help_defaults(tools):
    """CLI11 prints a negatable pair ("--color,!--no-color") as "--color,--no-color{false}",
    which an administrator reads as "off by default": no --help may show such a value."""
    failures = []
    for tool in tools:
        for path in help_paths(tool):
            text = run([tool] + path + ["--help"]).stdout.decode()
            for line in re.findall(r"^\s+(-\S*\{(?:true|false)\}.*)$", text, re.M):
                failures.append("%s --help: '%s' reads as a default; say the default in words" %
                                (" ".join([os.path.basename(tool)] + path), line.strip()))
    return failures


def check_json_after(laasctl):
    failures = []
    sock = "/nonexistent/doc-facts.sock"
    for argv in (["status", "--json"], ["tenant", "list", "--json"],
                 ["tenant", "show", "bank", "--json"], ["host", "list", "--json"],
                 ["tenant", "show", "bank", "--timeout", "5", "--json"]):
        p = run([laasctl, "-s", sock] + argv)
        if p.returncode != 69:
            failures.append("laasctl %s: exit %d, not 69 (the socket unreachable): %s" % (
                " ".join(argv), p.returncode, p.stderr.decode().strip()[:200]))
    return failures


CHECKS = ("exit-codes", "paths", "modes", "metrics", "state-files", "words", "help-defaults",
          "json-after")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--laasctl", required=True)
    ap.add_argument("--laas-plan")
    ap.add_argument("--only", action="append", choices=CHECKS, default=[])
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    laasctl = os.path.abspath(args.laasctl)
    checks = {
        "exit-codes": lambda: check_exit_codes(root, laasctl),
        "paths": lambda: check_paths(root),
        "modes": lambda: check_modes(root),
        "metrics": lambda: check_metrics(root),
        "state-files": lambda: check_state_files(root),
        "words": lambda: check_words(root, laasctl),
        "help-defaults": lambda: check_help_defaults(
            [laasctl] + ([os.path.abspath(args.laas_plan)] if args.laas_plan else [])),
        "json-after": lambda: check_json_after(laasctl),
    }
    failed = 0
    for name in args.only or CHECKS:
        problems = checks[name]()
        print("%-13s %s" % (name, "ok" if not problems else "%d problem(s)" % len(problems)))
        for p in problems:
            print("FAIL: %s: %s" % (name, p), file=sys.stderr)
        failed += len(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
