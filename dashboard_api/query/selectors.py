"""Label and field selectors evaluated in the process, as the API server evaluates them (pure).

The cache answers related reads such as "pods with app=web" or "events with
involvedObject.name=x" itself. A selector it cannot read exactly parses to None, and the caller
then asks the API server instead: never a guess.
"""

import re

from dashboard_api.query.fields import value as _path_value

# Applied to stripped parts, so that no two `\s*` meet (they would split a run of spaces in
# quadratically many ways).
_SET = re.compile(r"^(!?)\s*([A-Za-z0-9_./-]+)\s*(?:(in|notin)\s*\(([^)]*)\))?$")
_EQ = re.compile(r"^([A-Za-z0-9_./-]+)\s*(==|=|!=)\s*([A-Za-z0-9_.-]*)$")
_FIELD = re.compile(r"^([A-Za-z.]+)\s*(==|=|!=)")


def _split(text):
    """Requirements are comma-separated, except the commas inside ``( )``."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def labels(text):
    """A predicate ``f(labels_dict) -> bool`` for a label selector string, or None."""
    if not text:
        return lambda _labels: True
    tests = []
    for part in _split(text):
        part = part.strip()
        m = _EQ.match(part)
        if m:
            key, op, value = m.groups()
            if op == "!=":
                tests.append(lambda lb, k=key, v=value: lb.get(k) != v)
            else:
                tests.append(lambda lb, k=key, v=value: lb.get(k) == v)
            continue
        m = _SET.match(part)
        if not m:
            return None
        negated, key, op, values = m.groups()
        if op and negated:
            return None
        if op == "in":
            wanted = frozenset(v.strip() for v in values.split(","))
            tests.append(lambda lb, k=key, w=wanted: k in lb and lb[k] in w)
        elif op == "notin":
            wanted = frozenset(v.strip() for v in values.split(","))
            tests.append(lambda lb, k=key, w=wanted: lb.get(k) not in w)
        elif negated:
            tests.append(lambda lb, k=key: k not in lb)
        else:
            tests.append(lambda lb, k=key: k in lb)
    return lambda lb: all(t(lb) for t in tests)


# Field selectors are answered for these paths only; the API server supports a few per kind,
# and these are the ones the gateway itself sends.
FIELD_PATHS = frozenset((
    "metadata.name", "metadata.namespace", "spec.nodeName", "status.phase",
    "involvedObject.kind", "involvedObject.name", "involvedObject.namespace",
    "involvedObject.uid", "involvedObject.fieldPath", "type", "reason",
))


def _requirements(text):
    """[(path, operator, value)] of a field selector string, or None when one part is not
    one the cache reads exactly."""
    found = []
    for part in text.split(","):
        part = part.strip()
        m = _FIELD.match(part)
        if not m or m.group(1) not in FIELD_PATHS:
            return None
        found.append((m.group(1), m.group(2), part[m.end():].strip()))
    return found


def fields(text):
    """A predicate ``f(obj) -> bool`` for a field selector string, or None."""
    if not text:
        return lambda _obj: True
    found = _requirements(text)
    if found is None:
        return None
    tests = []
    for path, op, value in found:
        if op == "!=":
            tests.append(lambda o, p=path, v=value: _path_value(o, p) != v)
        else:
            tests.append(lambda o, p=path, v=value: _path_value(o, p) == v)
    return lambda obj: all(t(obj) for t in tests)


def equalities(text):
    """{path: value} of a field selector's equalities (``=``, ``==``); {} when it has none or
    cannot be read (an index of a path may then narrow the objects the selector is tested on,
    lists/cachesource.py)."""
    found = _requirements(text) if text else None
    return {path: value for path, op, value in found or () if op != "!="}
