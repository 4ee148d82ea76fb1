#!/usr/bin/python3
"""Checks `laasctl export k8s-labels` output against Kubernetes' rules for Node label patches,
written from Kubernetes' own definitions (no cluster, no network: CI has neither):

- the document: {"apiVersion": "v1", "kind": "List", "items": [...]}, or one item;
- an item: {"apiVersion": "v1", "kind": "Node", "metadata": {"name": N, "labels": {...}}} and
  nothing else (a merge patch for `kubectl patch node N --type merge -p ITEM` that touches
  only labels); N a DNS-1123 subdomain (k8s.io/apimachinery/pkg/util/validation
  IsDNS1123Subdomain: at most 253 characters, [a-z0-9]([-a-z0-9]*[a-z0-9])? joined by '.');
  no node twice;
- metadata.labels: a map of strings (ObjectMeta.labels is map[string]string); null only as a
  merge patch's removal of a label (RFC 7386);
- a key: a qualified name (IsQualifiedName): an optional prefix, a DNS-1123 subdomain, then
  '/', then a name of 1-63 characters ([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?);
- a value (IsValidLabelValue): empty, or at most 63 characters of the name's form.

Usage: k8s_labels_check.py FILE...   exit 0 when every file passes, 1 (with one line a
problem, FILE: where: what) otherwise. --expect-fail: exit 0 only when every file is refused
(the checker's own test: a bad label must be caught).
"""
import json
import re
import sys

NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
SUBDOMAIN = re.compile(DNS_LABEL + r"(\." + DNS_LABEL + r")*")


def subdomain_problem(s, what):
    if not isinstance(s, str) or not s:
        return f"{what} must be a non-empty string"
    if len(s) > 253:
        return f"{what} {s!r} is longer than 253 characters"
    if not SUBDOMAIN.fullmatch(s):
        return f"{what} {s!r} is not a DNS-1123 subdomain"
    return None


def key_problem(key):
    prefix, slash, name = key.rpartition("/")
    if slash:
        if "/" in prefix:
            return f"label key {key!r} has more than one '/'"
        p = subdomain_problem(prefix, f"label key {key!r}: prefix")
        if p:
            return p
    if not name:
        return f"label key {key!r} has an empty name"
    if len(name) > 63:
        return f"label key {key!r}: name longer than 63 characters"
    if not NAME.fullmatch(name):
        return f"label key {key!r}: name is not a qualified name"
    return None


def value_problem(key, value):
    if value is None:
        return None  # a merge patch removing the label
    if not isinstance(value, str):
        return f"label {key!r}: value {value!r} is not a string"
    if value == "":
        return None
    if len(value) > 63:
        return f"label {key!r}: value {value!r} is longer than 63 characters"
    if not NAME.fullmatch(value):
        return f"label {key!r}: value {value!r} is not a valid label value"
    return None


def item_problems(item, where):
    out = []
    if not isinstance(item, dict):
        return [f"{where}: not an object"]
    extra = set(item) - {"apiVersion", "kind", "metadata"}
    if extra:
        out.append(f"{where}: fields other than apiVersion, kind, metadata: {sorted(extra)}")
    if item.get("apiVersion") != "v1":
        out.append(f"{where}: apiVersion must be 'v1'")
    if item.get("kind") != "Node":
        out.append(f"{where}: kind must be 'Node'")
    meta = item.get("metadata")
    if not isinstance(meta, dict):
        return out + [f"{where}: metadata must be an object"]
    extra = set(meta) - {"name", "labels"}
    if extra:
        out.append(f"{where}: metadata fields other than name, labels: {sorted(extra)}")
    p = subdomain_problem(meta.get("name"), "metadata.name")
    if p:
        out.append(f"{where}: {p}")
    labels = meta.get("labels")
    if not isinstance(labels, dict):
        return out + [f"{where}: metadata.labels must be a map of strings"]
    for key, value in labels.items():
        for p in (key_problem(key), value_problem(key, value)):
            if p:
                out.append(f"{where}: {p}")
    return out


def document_problems(doc):
    if isinstance(doc, dict) and doc.get("kind") == "List":
        out = []
        if doc.get("apiVersion") != "v1":
            out.append("the List's apiVersion must be 'v1'")
        items = doc.get("items")
        if not isinstance(items, list):
            return out + ["the List has no items array"]
        names = set()
        for i, item in enumerate(items):
            name = item.get("metadata", {}).get("name") if isinstance(item, dict) else None
            where = f"items[{i}] ({name})"
            out += item_problems(item, where)
            if name in names:
                out.append(f"{where}: node listed twice")
            names.add(name)
        return out
    return item_problems(doc, "patch")


def main(argv):
    expect_fail = "--expect-fail" in argv
    files = [a for a in argv if a != "--expect-fail"]
    if not files:
        print(__doc__, file=sys.stderr)
        return 2
    failed = 0
    for path in files:
        try:
            with open(path, encoding="utf-8") as f:
                problems = document_problems(json.load(f))
        except (OSError, ValueError) as e:
            problems = [f"cannot read it as JSON: {e}"]
        for p in problems:
            print(f"{path}: {p}")
        if problems:
            failed += 1
        elif expect_fail:
            print(f"{path}: passed, but it was expected to be refused")
    if expect_fail:
        return 0 if failed == len(files) else 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
