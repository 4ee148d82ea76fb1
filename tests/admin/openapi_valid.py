#!/usr/bin/python3
"""Checks that an OpenAPI 3.0 document (laas-api's api/openapi.json) is valid:

- against the OpenAPI Initiative's own JSON Schema of OpenAPI 3.0, as Debian ships it in the
  package openapi-specification (--schema; /usr/share/openapi-specification/schemas/v3.0/
  schema.json), with python3-jsonschema;
- and what that schema cannot express: every local $ref resolves, and every {name} of a path
  template is declared as a path parameter of that path or of each of its operations.

Exit 0 valid, 1 invalid (each problem printed), 77 when the schema file is missing (skipped).
"""
import argparse
import json
import os
import re
import sys


def refs(node, out):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                out.append(v)
            else:
                refs(v, out)
    elif isinstance(node, list):
        for v in node:
            refs(v, out)
    return out


def resolve(doc, ref):
    if not ref.startswith("#/"):
        return False  # this document has no external references
    node = doc
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def path_params(doc):
    problems = []
    for path, item in doc.get("paths", {}).items():
        names = set(re.findall(r"\{([^}]+)\}", path))
        common = {p.get("name") for p in item.get("parameters", []) if p.get("in") == "path"}
        for verb, op in item.items():
            if verb == "parameters" or not isinstance(op, dict):
                continue
            own = {p.get("name") for p in op.get("parameters", []) if p.get("in") == "path"}
            for n in sorted(names - common - own):
                problems.append("%s %s: path parameter {%s} is not declared" % (verb, path, n))
            for n in sorted((common | own) - names):
                problems.append("%s %s: path parameter '%s' is not in the path" % (verb, path, n))
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--schema", required=True)
    ap.add_argument("document")
    a = ap.parse_args()
    if not os.path.exists(a.schema):
        print("SKIP: %s not found (Debian package openapi-specification)" % a.schema)
        return 77
    import jsonschema  # python3-jsonschema

    schema = json.load(open(a.schema, encoding="utf-8"))
    doc = json.load(open(a.document, encoding="utf-8"))
    validator = jsonschema.validators.validator_for(schema)(schema)
    problems = ["%s: %s" % ("/".join(map(str, e.absolute_path)) or "(top)", e.message)
                for e in validator.iter_errors(doc)]
    problems += ["unresolved $ref %s" % r for r in sorted(set(refs(doc, []))) if not resolve(doc, r)]
    problems += path_params(doc)
    for p in problems:
        print("%s: %s" % (a.document, p))
    if problems:
        return 1
    print("%s: a valid OpenAPI %s document (%s, %d paths)"
          % (a.document, doc.get("openapi"), schema.get("id", a.schema), len(doc.get("paths", {}))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
