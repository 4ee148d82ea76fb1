#!/usr/bin/python3
"""The command examples of the documentation, run against the real command-line tools.

Every example of README.md, docs/*.md, the man pages (docs/*.[1-8]) and the shipped
configuration (conf/: comments, alert descriptions, systemd ExecStart=) that invokes one of the
project's tools is extracted with its file and line:

- examples: lines of a code block (a fenced block in Markdown, .nf/.fi or .EX/.EE in a man
  page); in a block with "$ " prompts only the prompted lines. A line is split as the shell
  would (comments, quotes, "\\" continuations, |, &&, ;), and every command of it that is one of
  the tools is checked;
- references: inline code (`laasctl ...` in Markdown, \\fBlaasctl ...\\fR, .B/.BR in a man
  page). "a|b" inside a word lists alternatives, each checked; a reference stops at its first
  placeholder (an upper-case word such as NAME, "...", "<x>", "[x]").

Checks (--parse, no fabric needed):
- an example runs: laasctl against a socket that does not exist (so a usage error, exit 2, is
  all the CLI can say about it: anything else means it parsed; the offline subcommands run for
  real on the shipped files), the other tools in a scratch directory with a time limit (a
  usage error is immediate; a run still going after the limit parsed). A usage error fails,
  naming FILE:LINE. Every other command of an example's shell line must exist (the shorthand
  "laasctl tenant list | show bank" is not a shell command);
- a reference names a subcommand that exists (its --help works) and options that subcommand
  (or the tool, before the subcommand) takes.

--live SOCKET runs the laasctl examples of each file, in order, against a running plugin (the
integration test integration.doc_examples starts one on the demo fabric), each file from a
fabric without tenants. An example the page shows succeeding must exit 0; one whose comment
gives its exit status ("# refused: no placement (exit 1)") must exit with that. Where a page
shows a command's output (the lines after a "$ " prompt, up to the next prompt), the real
output must contain each line, in order, with GUIDs, LIDs, times and durations normalised;
"..." in a shown line stands for anything. Last, laasctl(8)'s field list of `tenant show
--json` must name every field of a real reply (a tenant with Slurm and OpenStack names).

Every command line of the operator pages (README.md, docs/*.md but the developers'
architecture.md and simulation.md, the man pages) runs in CI -- the tools' lines here, a
live-script block as a whole -- or its block says, visibly, that it does not and why: its first
line is the shell comment
    # not run by the tests: REASON
(in a man page too, inside .nf/.EX). The tools' lines of such a block are parsed, not run live.
A command line of another command (systemctl, apt-get, stat, ...) in a block without it fails
--parse, naming FILE:LINE.

Markers, for examples that are deliberately not run (keep them few, each with its reason):
  Markdown:  <!-- doc-test: skip REASON -->   before a fenced block: none of its lines is run;
             <!-- doc-test: parse-only REASON --> before a fenced block: parsed, not run live.
             <!-- doc-test: synopsis REASON --> before a fenced block of usage lines with
             placeholders: only its subcommands and options are checked, as for a reference.
             <!-- doc-test: live-script REASON --> before a fenced block: its lines are checked
             one by one, and --live also runs the whole block as one bash script (the tools on
             PATH, /var/lib/laas replaced by --state-dir) that must exit 0.
  man page:  .\\" doc-test: skip REASON        before a .nf/.EX block (or the next line).
             .\\" doc-test: parse-only REASON
             .\\" doc-test: synopsis REASON
             .\\" doc-test: options-in-help REASON   anywhere in a tool's page: its options are
             not required to be listed (the page sends the reader to --help).
A marker without a reason is an error.

A tool's man page (its .TH names the tool) is checked against the tool: an unknown option exits
2 when its EXIT STATUS says 2 is bad input; and against its --help both ways: its
SYNOPSIS and the tag of every .TP/.TQ item (".BI "host drain " HOST "... \\-\\-reason " TEXT")
like a synopsis, and the page must name every subcommand and (unless options-in-help) every
option that --help lists.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

TOOLS = ("laasctl", "laas-audit", "laas-topogen", "laas-lid-order", "laas-sim", "laas-plan",
         "laas-sl2vl-dump", "laas-api", "laas-slurm")
# Commands an example may pipe into or chain with besides the tools: what a reader has on an SM
# host or a development machine.
SHELL_WORDS = {
    "bash", "sh", "cat", "cp", "mv", "rm", "grep", "sed", "awk", "jq", "head", "tail", "sort",
    "less", "tee", "echo", "diff", "wc", "cd", "xargs", "sudo", "env", "true", "false", "test",
    "systemctl", "journalctl", "chmod", "chown", "mkdir", "ls", "stat", "getfacl", "ss",
    "ibnetdiscover", "dump_fts", "smpquery", "saquery", "perfquery", "ibstat", "opensm",
    "promtool", "usermod", "groupdel", "id", "apt-get", "dnf", "rpmbuild", "dpkg-buildpackage",
    "lintian", "ctest", "cmake", "ninja", "dpkg", "systemd-tmpfiles", "systemd-sysusers",
    "systemd-analyze", "ibsim", "scontrol", "openstack", "od", "tr", "date", "mount", "umount",
    "exportfs", "drbdadm", "python3", "time", "kill", "git", "make", "timeout", "rsync",
}
NOT_RUN = re.compile(r"^\s*#\s*not run by the tests:\s*(.*?)\s*$")
# The developers' pages: their commands are the developers', run by them.
NOT_OPERATOR_PAGES = ("docs/architecture.md", "docs/simulation.md")
MARKER = re.compile(r"doc-test:\s*(skip|parse-only|synopsis|live-script)\b\s*(.*?)\s*(-->)?\s*$")
PLACEHOLDER = re.compile(r"^(\.\.\.|.*\.\.\.$|<.*|\[.*|\{.*|[A-Z][A-Z0-9_:]*[A-Z](\.\.\.)?|N|M)$")


class Example:
    def __init__(self, path, line, kind, text, mode="run"):
        self.path, self.line, self.kind, self.text, self.mode = path, line, kind, text, mode
        self.argvs = []  # each invocation of a tool: [tool, args...]
        self.others = []  # first words of the other commands on the line
        self.output = []  # the output the page shows for it: [(line, text)]
        m = re.search(r"#.*\bexits?\s+(\d+)\b", text)
        self.expect_exit = int(m.group(1)) if m else 0

    def where(self):
        return "%s:%d" % (self.path, self.line)


def tool_of(word):
    base = os.path.basename(word)
    return base if base in TOOLS else None


def split_shell(text):
    """The commands of a shell line: lists of words, split at | || && ; and &."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    commands, current, redirect = [], [], False
    for token in lexer:
        if redirect:  # the file of a redirection is no argument
            redirect = False
            continue
        if token in (">", ">>", "<", ">&", "&>", "<<", "<<<"):
            if current and current[-1].isdigit():
                current.pop()  # 2>file
            redirect = True
        elif token in ("|", "||", "&&", ";", "&", ";;", "|&"):
            if current:
                commands.append(current)
            current = []
        else:
            current.append(token)
    if current:
        commands.append(current)
    return commands


def analyse(example, errors):
    if example.mode == "synopsis":  # "a|b" lists values there, not a pipe
        words = example.text.split()
        if words and tool_of(words[0]):
            example.argvs.append([tool_of(words[0])] + words[1:])
        return
    try:
        commands = split_shell(example.text)
    except ValueError as e:
        if not tool_of(example.text.split()[0]):
            return  # prose in a block that is not shell
        errors.append("%s: not a shell command line (%s): %s" % (example.where(), e, example.text))
        return
    for words in commands:
        # "VAR=value cmd", "sudo cmd", "$ cmd" (a prompt inside a continued line)
        while words and (re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0])
                         or words[0] in ("sudo", "$", "time")):
            words = words[1:]
        if not words:
            continue
        if tool_of(words[0]):
            example.argvs.append([tool_of(words[0])] + words[1:])
        else:
            example.others.append(words[0])


# ---------------------------------------------------------------------------------------------
# Extraction

def markdown_examples(path, rel, errors):
    out = []
    lines = open(path, encoding="utf-8").read().split("\n")
    in_block, block, pending = False, [], None
    for n, line in enumerate(lines, 1):
        m = MARKER.search(line) if line.lstrip().startswith("<!--") else None
        if m and not in_block:
            if not m.group(2):
                errors.append("%s:%d: doc-test marker without a reason" % (rel, n))
            pending = m.group(1)
            continue
        if line.lstrip().startswith("```"):
            if in_block:
                pending = not_run_mode(rel, block, pending, errors)
                if pending == "live-script":
                    out.extend(block_examples(rel, block, "run"))
                    out.append(script_example(rel, block))
                else:
                    out.extend(block_examples(rel, block, pending or "run"))
                block, pending = [], None
            in_block = not in_block
            continue
        if in_block:
            block.append((n, line))
        else:
            for ref in re.finditer(r"`([^`]+)`", line):
                out.extend(reference_examples(rel, n, ref.group(1)))
    return out


def block_examples(rel, block, mode):
    """Examples of one code block [(line, text)]: joined continuations, prompts honoured."""
    prompted = any(text.lstrip().startswith("$ ") for _, text in block)
    out, i, last = [], 0, None
    while i < len(block):
        n, text = block[i]
        while text.rstrip().endswith("\\") and i + 1 < len(block):
            i += 1
            text = text.rstrip()[:-1] + " " + block[i][1].strip()
        i += 1
        stripped = text.strip()
        if prompted:
            if not stripped.startswith("$ "):
                # what the page shows the command above printing ("# ..." is a remark)
                if last is not None and stripped and not stripped.startswith("#"):
                    last.output.append((n, stripped))
                continue
            stripped = stripped[2:]
            last = None
        if not stripped or stripped.startswith("#"):
            continue
        if not re.search(r"(^|[\s/|;&(])(%s)(\s|$)" % "|".join(map(re.escape, TOOLS)), stripped):
            continue
        out.append(Example(rel, n, "example", stripped, mode))
        last = out[-1]
    return out


def command_words(text):
    """The first word of each command of a shell line (sudo, VAR=, $ dropped), or []."""
    try:
        commands = split_shell(text)
    except ValueError:
        return []
    out = []
    for words in commands:
        while words and (re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0])
                         or words[0] in ("sudo", "$", "time")):
            words = words[1:]
        if words:
            out.append(words[0])
    return out


def not_run_mode(rel, block, pending, errors):
    """A block's mode after its visible marker (first line "# not run by the tests: REASON":
    parse-only); and, in an operator page, each command line of another command than the
    tools in a block that runs as lines (not a live-script) and says nothing is an error."""
    first = next((t for _, t in block if t.strip()), "")
    m = NOT_RUN.match(first)
    if m:
        if not m.group(1):
            errors.append("%s:%d: '# not run by the tests:' without a reason" % (rel, block[0][0]))
        return pending or "parse-only"
    if pending or rel in NOT_OPERATOR_PAGES:
        return pending
    prompted = any(t.lstrip().startswith("$ ") for _, t in block)
    for n, text in block:
        text = text.strip()
        if prompted:
            if not text.startswith("$ "):
                continue
            text = text[2:]
        words = command_words(text)
        if words and not tool_of(words[0]) and (words[0] in SHELL_WORDS or words[0] == "bash"):
            errors.append("%s:%d: '%s' is not run by the tests: run it in CI, or make the "
                          "block's first line '# not run by the tests: REASON'" % (rel, n, text))
    return pending


def script_example(rel, block):
    """A whole block, run live as one bash script (its lines are also checked one by one)."""
    prompted = any(text.lstrip().startswith("$ ") for _, text in block)
    lines = [t.strip()[2:] if prompted else t for _, t in block
             if not prompted or t.strip().startswith("$ ")]
    return Example(rel, block[0][0] if block else 0, "script", "\n".join(lines) + "\n")


def reference_examples(rel, n, code):
    words = code.split()
    if not words or not tool_of(words[0]):
        return []
    # Alternatives inside a word: "drain|resume" (not a pipe: no spaces around it).
    variants = [[]]
    for w in words:
        if PLACEHOLDER.match(w) or w.startswith("$"):
            break
        if "|" in w and not w.startswith("-"):
            variants = [v + [alt] for v in variants for alt in w.split("|") if alt]
        else:
            variants = [v + [w] for v in variants]
    # a tool's bare name is a name, not a command
    return [Example(rel, n, "reference", " ".join(v)) for v in variants if len(v) > 1]


ROFF_ESCAPES = [(r"\-", "-"), (r"\(aq", "'"), (r"\(dq", '"'), (r"\e", "\\"), (r"\ ", " "),
                (r"\&", ""), (r"\(em", "--"), (r"\(en", "-")]


def unroff(text):
    text = re.sub(r"\\f[BIRP]|\\f\([A-Z]{2}", "", text)
    for a, b in ROFF_ESCAPES:
        text = text.replace(a, b)
    return text


def roff_text(line):
    """The text of a roff line: a font macro's arguments joined as it prints them."""
    m = re.match(r"^\.(B|I|BI|BR|IB|IR|RB|RI)\s+(.*)$", line)
    if not m:
        return None if line.startswith(".") else unroff(line)
    try:
        args = shlex.split(m.group(2).replace("\\-", "-"))
    except ValueError:
        return None
    joined = " ".join(args) if m.group(1) in ("B", "I") else "".join(args)
    return unroff(joined)


def man_synopses(rel, lines):
    """Usage lines of a tool's man page, checked like a synopsis: its SYNOPSIS (one per line
    that starts with the tool's name) and the tag of every .TP/.TQ item (a subcommand or an
    option, e.g. ".BI "host drain " HOST "... \\-\\-reason " TEXT")."""
    th = next((l for l in lines if l.startswith(".TH ")), "")
    tool = th.split()[1].lower() if len(th.split()) > 1 else ""
    if tool not in TOOLS:
        return []
    out, section, synopsis, after_tag = [], "", None, False
    for n, line in enumerate(lines, 1):
        if line.startswith(".SH"):
            if synopsis:
                out.append(Example(rel, synopsis[0], "example", synopsis[1], "synopsis"))
            synopsis = None
            section = line[3:].strip().strip('"').upper()
            continue
        text = roff_text(line)
        if section == "SYNOPSIS" and text is not None:
            if text.split()[:1] == [tool]:
                if synopsis:
                    out.append(Example(rel, synopsis[0], "example", synopsis[1], "synopsis"))
                synopsis = (n, text)
            elif synopsis:
                synopsis = (synopsis[0], synopsis[1] + " " + text)
            continue
        if re.match(r"^\.T[PQ]\b", line):
            after_tag = True
            continue
        if after_tag and section not in ("EXIT STATUS", "FILES", "ENVIRONMENT", "SEE ALSO"):
            if text and text.strip():
                out.append(Example(rel, n, "example", tool + " " + text.strip(), "synopsis"))
        after_tag = False
    return out


def man_examples(path, rel, errors):
    out = []
    lines = open(path, encoding="utf-8").read().split("\n")
    out.extend(man_synopses(rel, lines))
    in_block, block, pending = False, [], None
    for n, line in enumerate(lines, 1):
        if line.startswith('.\\"'):
            m = MARKER.search(line)
            if m:
                if not m.group(2):
                    errors.append("%s:%d: doc-test marker without a reason" % (rel, n))
                pending = m.group(1)
            continue
        if re.match(r"^\.(nf|EX)\b", line):
            in_block, block = True, []
            continue
        if re.match(r"^\.(fi|EE)\b", line):
            pending = not_run_mode(rel, block, pending, errors)
            out.extend(block_examples(rel, block, pending or "run"))
            in_block, pending = False, None
            continue
        if in_block:
            block.append((n, unroff(line)))
            continue
        refs = []
        m = re.match(r'^\.(B|BR)\s+(.*)$', line)
        if m and m.group(2):
            try:
                args = shlex.split(m.group(2).replace("\\-", "-"))
            except ValueError:
                args = []
            # .B: every argument bold, one phrase; .BR: the first of each alternating pair
            refs += [" ".join(args)] if m.group(1) == "B" else args[:1]
        refs += [unroff(r) for r in re.findall(r"\\fB(.*?)\\f[RP]", line)]
        for r in refs:
            r = unroff(r)
            if " " in r:
                found = reference_examples(rel, n, r)
                if pending == "skip":
                    found = []
                out.extend(found)
        if not line.startswith("."):
            pending = pending if pending and not line.strip() else None
    return out


def conf_examples(path, rel):
    """The shipped configuration files (conf/): `laasctl ...` in comments and descriptions are
    references; a command indented in a comment ("#   laasctl config check FILE") and a
    systemd unit's ExecStart= are examples."""
    out = []
    tool_re = r"(%s)" % "|".join(map(re.escape, TOOLS))
    for n, line in enumerate(open(path, encoding="utf-8", errors="replace").read().split("\n"), 1):
        m = re.match(r"^\s*#\s{2,}(\S*%s\s.*)$" % tool_re, line)
        if m and tool_of(m.group(1).split()[0]):
            out.append(Example(rel, n, "example", m.group(1).strip()))
            continue
        m = re.match(r"^Exec(Start|StartPre|StartPost|Stop)=[-@+!:]*(\S+.*)$", line)
        if m and tool_of(m.group(2).split()[0]):
            out.append(Example(rel, n, "example", m.group(2).strip()))
            continue
        for ref in re.finditer(r"`([^`]+)`", line):
            out.extend(reference_examples(rel, n, ref.group(1)))
    return out


def collect(root, errors):
    files = ["README.md"]
    docs = os.path.join(root, "docs")
    for name in sorted(os.listdir(docs)):
        if name.endswith(".md") or re.search(r"\.[1-8]$", name):
            files.append(os.path.join("docs", name))
    for base, _, names in sorted(os.walk(os.path.join(root, "conf"))):
        for name in sorted(names):
            files.append(os.path.relpath(os.path.join(base, name), root))
    examples = []
    for rel in files:
        path = os.path.join(root, rel)
        if rel.startswith("conf" + os.sep):
            found = conf_examples(path, rel)
        elif rel.endswith(".md"):
            found = markdown_examples(path, rel, errors)
        else:
            found = man_examples(path, rel, errors)
        for e in found:
            analyse(e, errors)
        examples.extend(e for e in found if e.argvs or e.kind == "script")
    return examples


# ---------------------------------------------------------------------------------------------
# Checks

def is_usage_error(tool, rc, err):
    if "Run with --help for more information" in err:
        return True
    if 100 <= rc <= 114:  # CLI11's parse errors, for the tools that let them through
        return True
    return tool == "laasctl" and rc == 2


# Files an example names on an SM host, and the shipped file that stands in for each here.
SHIPPED = {"/etc/laas/laas.yaml": "conf/laas.yaml"}
# Directories the shipped files name, kept out of the machine's own: an example such as
# `laasctl state init --config /etc/laas/laas.yaml` writes its state into scratch, never into
# /var/lib/laas (whose existence makes the package test refuse to run).
HOST_DIRS = {"/var/lib/laas": "state", "/run/opensm": "run"}


def scratch_copies(root, scratch):
    """Each shipped file copied into scratch with the host directories it names moved there
    too: {path on an SM host: the copy to use here}."""
    copies = {}
    for host_path, shipped in SHIPPED.items():
        if os.path.isabs(shipped):  # the live test's own file, used as it is
            copies[host_path] = shipped
            continue
        with open(os.path.join(root, shipped)) as f:
            text = f.read()
        for host_dir, sub in HOST_DIRS.items():
            os.makedirs(os.path.join(scratch, sub), exist_ok=True)
            text = text.replace(host_dir, os.path.join(scratch, sub))
        copy = os.path.join(scratch, "shipped", os.path.basename(shipped))
        os.makedirs(os.path.dirname(copy), exist_ok=True)
        with open(copy, "w") as f:
            f.write(text)
        copies[host_path] = copy
    return copies


def sandboxed(argv, copies, scratch):
    """argv with each file an SM host would have replaced by its scratch copy of the shipped
    one, and each output path outside the working directory (-o /etc/slurm/topology.conf)
    moved into scratch."""
    out, output_next = [], False
    for a in argv:
        if output_next and a.startswith("/"):
            a = os.path.join(scratch, os.path.basename(a))
        elif a in copies:
            a = copies[a]
        output_next = a in ("-o", "--output")
        out.append(a)
    return out


def with_socket(argv, socket):
    """laasctl argv with its socket replaced (an example's own -s too)."""
    out, skip = [argv[0], "-s", socket], False
    for i, a in enumerate(argv[1:], 1):
        if skip:
            skip = False
            continue
        if a in ("-s", "--socket"):
            skip = True
            continue
        if a.startswith("--socket="):
            continue
        out.append(a)
    return out


class Runner:
    def __init__(self, bins, root, verbose):
        self.bins, self.root, self.verbose = bins, root, verbose
        self.scratch = tempfile.mkdtemp(prefix="laas-doc-examples.")
        self.copies = scratch_copies(root, self.scratch)

    def run(self, argv, timeout, socket):
        tool = argv[0]
        argv = sandboxed(argv, self.copies, self.scratch)
        cmd = [self.bins[tool]] + argv[1:]
        env = dict(os.environ)
        if tool == "laasctl":
            cmd = [self.bins[tool]] + with_socket(argv, socket)[1:]
            env["LAAS_SOCKET"] = socket
            # the integration test's simulated HCA, for audit --from-switches's diagnostics
            if os.environ.get("LAAS_DOC_PRELOAD"):
                env["LD_PRELOAD"] = os.environ["LAAS_DOC_PRELOAD"]
        try:
            p = subprocess.run(cmd, cwd=self.scratch, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
            return (p.returncode, p.stdout.decode(errors="replace"),
                    p.stderr.decode(errors="replace"))
        except subprocess.TimeoutExpired as e:
            return None, "", (e.stderr or b"").decode(errors="replace")

    def help_text(self, argv):
        p = subprocess.run([self.bins[argv[0]]] + argv[1:] + ["--help"], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20)
        return p.returncode, p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")


def subcommand_path(runner, argv):
    """The subcommand path argv names (the tool, then each subcommand), the help text of each
    level, and a problem when a word stands where a subcommand must (the level has
    subcommands) and is none of them."""
    path, helps, problem = [argv[0]], [], None
    rc, text = runner.help_text(path)
    helps.append(text)
    after_option = False
    for w in argv[1:]:
        if w.startswith("-"):
            after_option = "=" not in w
            continue
        sub = re.search(r"^Subcommands?:\n((?:  .*\n?)+)", text, re.M)
        names = re.findall(r"^  (\S+)", sub.group(1), re.M) if sub else []
        if w in names:
            path.append(w)
            rc, text = runner.help_text(path)
            helps.append(text)
            after_option = False
            continue
        if after_option:  # an option's value
            after_option = False
            continue
        if names:
            problem = "'%s' is not a subcommand of %s (%s)" % (w, " ".join(path), ", ".join(names))
        break
    return path, helps, problem


def check_reference(runner, argv):
    """A reference: its subcommands exist, and each option is one the command takes at its
    place (or, for laasctl, one of a command above it: a global option may follow the
    subcommand)."""
    problems = []
    path, helps, problem = subcommand_path(runner, argv)
    if problem:
        problems.append(problem)
    level = 0
    for w in argv[1:]:
        if not w.startswith("-"):
            if level + 1 < len(path) and w == path[level + 1]:
                level += 1
            continue
        for opt in w.split("=", 1)[0].split("|"):
            opt = opt.rstrip(",.").strip("[]")
            if not opt.startswith("-") or opt in ("-h", "--help", "-", "--"):
                continue
            # laasctl's global options are taken after a subcommand too (CLI11 fallthrough)
            known = helps[: level + 1] if argv[0] == "laasctl" else helps[level:level + 1]
            if not any(re.search(r"(^|[\s,!])%s([\s,={]|$)" % re.escape(opt), h, re.M)
                       for h in known):
                problems.append("%s takes no option %s here" % (" ".join(path[: level + 1]), opt))
    return problems


def section_lines(lines, name):
    """The lines of a man page's section NAME (.SH NAME up to the next .SH)."""
    out, inside = [], False
    for line in lines:
        if line.startswith(".SH"):
            inside = line[3:].strip().strip('"').upper() == name
            continue
        if inside:
            out.append(line)
    return out


def help_tree(runner, path):
    """Every subcommand path under path, with its help text: [(path, help)]."""
    rc, text = runner.help_text(path)
    out = [(path, text)]
    sub = re.search(r"^Subcommands?:\n((?:  .*\n?)+)", text, re.M)
    for name in re.findall(r"^  (\S+)", sub.group(1), re.M) if sub else []:
        out.extend(help_tree(runner, path + [name]))
    return out


def man_coverage(runner, root, examples):
    """A tool's man page documents every subcommand and option its --help lists: each
    subcommand path heads a synopsis or item of the page, each long option appears in it."""
    problems = []
    docs = os.path.join(root, "docs")
    for name in sorted(os.listdir(docs)):
        if not re.search(r"\.[1-8]$", name):
            continue
        rel = os.path.join("docs", name)
        lines = open(os.path.join(docs, name), encoding="utf-8").read().split("\n")
        th = next((l for l in lines if l.startswith(".TH ")), "")
        tool = th.split()[1].lower() if len(th.split()) > 1 else ""
        if tool not in TOOLS or tool not in runner.bins:
            continue
        text = " ".join(filter(None, (roff_text(l) for l in lines)))
        # a page that sends the reader to --help for the options (.\" doc-test: options-in-help)
        options_in_help = any(re.search(r'doc-test:\s*options-in-help\s+\S', l) for l in lines
                              if l.startswith('.\\"'))
        # EXIT STATUS names 2 for bad input or usage: an option the tool does not have is that.
        exit_lines = section_lines(lines, "EXIT STATUS")
        exit_text = " ".join(filter(None, (roff_text(l) for l in exit_lines)))
        if re.search(r"(^|\D)2\b", exit_text):
            rc, _, _ = runner.run([tool, "--no-such-option-doc-test"], 20, "/nonexistent/laas.sock")
            if rc != 2:
                problems.append("%s: EXIT STATUS gives 2 for bad input, but %s "
                                "--no-such-option-doc-test exits %s" % (rel, tool, rc))
        heads = [a[1:] for e in examples if e.path == rel and e.mode == "synopsis"
                 for a in e.argvs]
        for path, help_text in help_tree(runner, [tool]):
            words = path[1:]
            if words and not any([w for w in h if not w.startswith("-")][: len(words)] == words
                                 for h in heads):
                problems.append("%s: '%s' is not documented (no item or synopsis names it)"
                                % (rel, " ".join(path)))
            if options_in_help:
                continue
            options = re.search(r"^Options:\n((?:  .*\n?)+)", help_text, re.M)
            for entry in re.findall(r"^  (-\S+)", options.group(1) if options else "", re.M):
                names = [re.sub(r"[{\[].*", "", n) for n in entry.split(",")]
                names = [n.lstrip("!") for n in names if n.lstrip("!").startswith("-")]
                if "--help" in names or any(
                        re.search(r"(^|[^\w-])%s([^\w-]|$)" % re.escape(n), text) for n in names):
                    continue
                problems.append("%s: %s's option %s is not documented" % (
                    rel, " ".join(path), ",".join(names)))
    return problems


def parse_check(runner, examples, socket):
    failures = []
    for e in examples:
        if e.mode == "skip":
            continue
        for other in e.others:
            if other not in SHELL_WORDS and not shutil.which(other) and "/" not in other:
                failures.append("%s: '%s' is not a command (in: %s)" % (e.where(), other, e.text))
        for argv in e.argvs:
            if e.kind == "reference" or e.mode == "synopsis":
                if e.mode == "synopsis":  # placeholders and "a | b" are no words of it
                    argv = [w.strip("[]") for w in argv]
                    argv = argv[:1] + [w for w in argv[1:] if w and w != "|"
                                       and not PLACEHOLDER.match(w.rstrip(".,"))]
                for p in check_reference(runner, argv):
                    failures.append("%s: %s (in: %s)" % (e.where(), p, e.text))
                continue
            rc, out, err = runner.run(argv, 10, socket)
            status = "timeout (parsed)" if rc is None else "exit %d" % rc
            if runner.verbose:
                print("%-28s %-16s %s" % (e.where(), status, " ".join(argv)))
            if rc is not None and is_usage_error(argv[0], rc, err):
                failures.append("%s: usage error, %s: %s\n    %s" % (
                    e.where(), status, " ".join(map(shlex.quote, argv)),
                    err.strip().replace("\n", "\n    ")))
    return failures


def remove_all_tenants(runner, socket):
    """Each file's examples start from a fabric without tenants, as its text does."""
    import json
    rc, out, err = runner.run(["laasctl", "--json", "tenant", "list"], 60, socket)
    if rc != 0:
        return "tenant list failed (exit %s): %s" % (rc, err.strip())
    for t in json.loads(out):
        rc, out, err = runner.run(["laasctl", "tenant", "remove", t["name"]], 60, socket)
        if rc != 0:
            return "tenant remove %s failed (exit %s): %s" % (t["name"], rc, err.strip())
    return None


def run_script(runner, e, state_dir, timeout):
    """A live-script block in the scratch directory: the tools on PATH, the state directory
    the guide names (/var/lib/laas) replaced by the running plugin's."""
    bindir = os.path.join(runner.scratch, "bin")
    os.makedirs(bindir, exist_ok=True)
    for tool, path in runner.bins.items():
        link = os.path.join(bindir, tool)
        if not os.path.lexists(link):
            os.symlink(path, link)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    if os.environ.get("LAAS_DOC_PRELOAD"):
        env["LD_PRELOAD"] = os.environ["LAAS_DOC_PRELOAD"]
    script = "set -eo pipefail\n" + e.text.replace("/var/lib/laas", state_dir or "/var/lib/laas")
    try:
        p = subprocess.run(["bash", "-c", script], cwd=runner.scratch, env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return None, "no end within %d s" % timeout


GUID = re.compile(r"\b0x[0-9a-f]{16}\b")
LID = re.compile(r"\b(lid|LID)(\s*[:=]?\s*)\d+\b")
TIME = re.compile(r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d)?(\.\d+)?Z?|\b\d\d:\d\d:\d\d\b|"
                  r"\b\d+(\.\d+)?\s?(ms|s)\b")


def normalised(text):
    text = GUID.sub("GUID", text)
    text = LID.sub(lambda m: m.group(1) + m.group(2) + "N", text)
    return " ".join(TIME.sub("TIME", text).split())


def output_problems(e, out):
    """Each line the page shows must be in the real output, in order ("..." anything)."""
    lines = [normalised(l) for l in out.split("\n")]
    at = 0
    for n, shown in e.output:
        pieces = [re.escape(p.strip()) for p in normalised(shown).split("...")]
        pattern = re.compile(".*".join(pieces))
        while at < len(lines) and not pattern.search(lines[at]):
            at += 1
        if at == len(lines):
            return ["%s:%d: the page shows '%s', the real output of '%s' has no such line "
                    "(after the lines matched before):\n    %s" % (
                        e.path, n, shown, e.text, out.strip().replace("\n", "\n    "))]
        at += 1
    return []


def man_reply_fields(root, command):
    """The field names laasctl(8) lists for COMMAND's --json reply (the quoted words of the
    .nf block under its item)."""
    text = open(os.path.join(root, "docs", "laasctl.8"), encoding="utf-8").read()
    item = re.search(r'^\.BI "%s " .*?^\.nf\n(.*?)^\.fi' % re.escape(command), text, re.M | re.S)
    return set(re.findall(r'"(\w+)"', item.group(1))) if item else set()


def reply_fields(reply):
    """The field names of a tenant show reply, with those of a host, a link and a link end."""
    names = set(reply)
    for key in ("hosts", "links"):
        for item in reply.get(key) or []:
            names |= set(item)
            for end in ("switch", "peer"):
                if isinstance(item.get(end), dict):
                    names |= set(item[end])
    return names


def man_fields_check(runner, socket, timeout):
    """laasctl(8)'s field list of `tenant show --json` names every field of a real reply (a
    tenant given Slurm and OpenStack names, so that every optional field a plain fabric has
    is there)."""
    import json
    add = ["laasctl", "tenant", "add", "docfields", "--hosts", "2", "--slurm-account", "acct",
           "--slurm-user", "alice", "--openstack-project", "0123456789abcdef0123456789abcdef"]
    rc, out, err = runner.run(add, timeout, socket)
    if rc != 0:
        return ["man fields: %s: exit %s: %s" % (" ".join(add), rc, err.strip())]
    rc, out, err = runner.run(["laasctl", "--json", "tenant", "show", "docfields"], timeout, socket)
    runner.run(["laasctl", "tenant", "remove", "docfields"], timeout, socket)
    if rc != 0:
        return ["man fields: tenant show docfields: exit %s: %s" % (rc, err.strip())]
    listed = man_reply_fields(runner.root, "tenant show")
    missing = sorted(reply_fields(json.loads(out)) - listed)
    print("man fields: tenant show --json has %d field names, laasctl(8) lists %d%s" % (
        len(reply_fields(json.loads(out))), len(listed),
        "; missing " + ", ".join(missing) if missing else ""))
    return ["docs/laasctl.8: tenant show --json: the reply has %s, which the page's field list "
            "lacks" % ", ".join(missing)] if missing else []


def live_check(runner, examples, socket, timeout, state_dir):
    failures, ran, refused, current = [], 0, 0, None
    for e in examples:
        if e.kind == "script":
            rc, out = run_script(runner, e, state_dir, timeout)
            status = "timeout" if rc is None else "exit %d" % rc
            print("%-28s %-10s (the block run as a script)" % (e.where(), status))
            print("    " + "\n    ".join(out.strip().split("\n")[-3:]))
            if rc != 0:
                failures.append("%s: the block as a script: %s\n    %s" % (
                    e.where(), status, out.strip()[-2000:].replace("\n", "\n    ")))
            continue
        if e.mode != "run" or e.kind != "example":
            continue
        if e.path != current and any(a[0] == "laasctl" for a in e.argvs):
            current = e.path
            problem = remove_all_tenants(runner, socket)
            if problem:
                failures.append("before %s: %s" % (e.path, problem))
        for argv in e.argvs:
            if argv[0] != "laasctl":
                continue
            rc, out, err = runner.run(argv, timeout, socket)
            ran += 1
            status = "timeout" if rc is None else "exit %d" % rc
            print("%-28s %-10s %s" % (e.where(), status, " ".join(argv)))
            if rc == 1:
                refused += 1
                print("    refused: %s" % err.strip().split("\n")[-1])
            if rc != e.expect_exit:
                failures.append("%s: %s, the page shows exit %d: %s\n    %s" % (
                    e.where(), status, e.expect_exit, " ".join(map(shlex.quote, argv)),
                    (err.strip() or out.strip()[-1500:]).replace("\n", "\n    ")))
            elif e.output and len(e.argvs) == 1:
                failures += output_problems(e, out)
    if remove_all_tenants(runner, socket) is None:
        failures += man_fields_check(runner, socket, timeout)
    not_live = sum(1 for e in examples if e.mode in ("skip", "parse-only")
                   for a in e.argvs if a[0] == "laasctl")
    print("live: %d laasctl examples run, %d refused, %d failed; %d marked not to run live" % (
        ran, refused, len(failures), not_live))
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", required=True, help="the source tree")
    ap.add_argument("--bin", action="append", default=[], metavar="TOOL=PATH",
                    help="where a tool is (laasctl=build/laasctl/laasctl ...)")
    ap.add_argument("--list", action="store_true", help="print the examples found")
    ap.add_argument("--parse", action="store_true", help="parse every example (no fabric)")
    ap.add_argument("--live", metavar="SOCKET", help="run the laasctl examples against SOCKET")
    ap.add_argument("--partitions", help="--live: the plugin's partitions.conf, for the examples "
                    "that name /etc/opensm/partitions.conf")
    ap.add_argument("--state-dir", help="--live: the plugin's state directory, for the blocks "
                    "marked live-script (in place of /var/lib/laas)")
    ap.add_argument("--only", action="append", default=[], help="only these files (repeatable)")
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    bins = {}
    for b in args.bin:
        tool, _, path = b.partition("=")
        bins[tool] = os.path.abspath(path)
    errors = []
    examples = collect(args.root, errors)
    if args.only:
        examples = [e for e in examples if e.path in args.only]
    if args.list:
        for e in examples:
            print("%-28s %-9s %-10s %s" % (e.where(), e.kind, e.mode, e.text))
    needed = {a[0] for e in examples for a in e.argvs if e.mode != "skip"} if args.parse else set()
    missing = (needed | ({"laasctl"} if args.live else set())) - set(bins)
    if missing:
        print("doc_commands: no --bin for %s" % ", ".join(sorted(missing)), file=sys.stderr)
        return 2
    if args.partitions:
        SHIPPED["/etc/opensm/partitions.conf"] = os.path.abspath(args.partitions)
    runner = Runner(bins, args.root, args.verbose)
    failures = list(errors)
    socket = os.path.join(runner.scratch, "no-service.sock")
    if args.parse:
        failures += parse_check(runner, examples, socket)
        failures += man_coverage(runner, args.root, examples)
        n_ex = sum(1 for e in examples if e.kind == "example" and e.mode != "skip")
        n_ref = sum(1 for e in examples if e.kind == "reference" and e.mode != "skip")
        marked = {m: sum(1 for e in examples if e.mode == m)
                  for m in ("skip", "parse-only", "synopsis")}
        print("parsed: %d examples and %d references in %d files; marked: %s" % (
            n_ex, n_ref, len({e.path for e in examples}),
            ", ".join("%d %s" % (n, m) for m, n in marked.items())))
    if args.live:
        failures += live_check(runner, examples, args.live, args.timeout, args.state_dir)
    shutil.rmtree(runner.scratch, ignore_errors=True)
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
