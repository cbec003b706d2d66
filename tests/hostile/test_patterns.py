"""A linter for catastrophic backtracking over every regular expression of the project.

Every pattern given to ``re.compile``, ``re.match`` and the other ``re`` functions in
dashboard_api/ and metrics_sidecar/ is collected from the source (ast; patterns built from
module-level string constants, ``+``, ``%`` and ``re.escape`` are evaluated), plus the path
patterns of every route, and checked with regexploit (Doyensec's ReDoS finder): a pattern with
a repetition whose running time can grow as the cube of the input or faster fails the test. A
pattern the collector cannot evaluate fails too, unless listed in DYNAMIC with the reason it is
safe. The old image-reference pattern (exponential: 27 characters held the loop 18 s) proves
the linter catches what it must.

Quadratic patterns (starriness 2) and overlapping alternatives of one character (`(a|a)*`) are
not flagged by regexploit: every pattern that sees request data is also applied to input of
bounded length (see the modules).
"""

import ast
import os
import re

import pytest
from regexploit.ast.sre import SreOpParser
from regexploit.redos import find

from dashboard_api.app import routes as route_table
from dashboard_api.handlers import home, static
from dashboard_api.serving import routes

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGES = ("dashboard_api", "metrics_sidecar")
RE_FUNCTIONS = {"compile", "match", "fullmatch", "search", "sub", "subn", "split", "findall",
                "finditer"}
# (file, source of the pattern argument) -> why it is safe.
DYNAMIC = {
    ("dashboard_api/app/server.py", "r.regex()"):
        "route path patterns: checked below from the route table",
}

# Before issue 18 (appdeploy.py): the separator `[-]*` may be empty, so `[a-z0-9]+` repeats
# inside a repetition.
OLD_IMAGE_REFERENCE = (
    r"^((?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|"
    r"[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|[-]*)"
    r"[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*)*)(?::[\w][\w.-]{0,127})?"
    r"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$")


def redos(pattern, flags=0):
    """regexploit's findings of cubic or worse backtracking in ``pattern`` (its CLI's rule)."""
    parsed = SreOpParser().parse_sre(pattern, flags)
    return [r for r in find(parsed) if r.starriness > 2]


class _Unknown(Exception):
    pass


def _evaluate(node, env):
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes, int, tuple)):
        return node.value
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        left, right = _evaluate(node.left, env), _evaluate(node.right, env)
        return left + right if isinstance(node.op, ast.Add) else left % right
    if isinstance(node, ast.Tuple):
        return tuple(_evaluate(e, env) for e in node.elts)
    if isinstance(node, ast.Call) and _is_re(node.func, {"escape"}) and len(node.args) == 1:
        return re.escape(_evaluate(node.args[0], env))
    raise _Unknown()


def _is_re(func, names):
    return isinstance(func, ast.Attribute) and func.attr in names and \
        isinstance(func.value, ast.Name) and func.value.id == "re"


def _flags(call, env):
    for keyword in call.keywords:
        if keyword.arg == "flags":
            return _flag_value(keyword.value)
    if call.func.attr == "compile" and len(call.args) > 1:
        return _flag_value(call.args[1])
    return 0


def _flag_value(node):
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
            node.value.id == "re":
        return int(getattr(re, node.attr))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _flag_value(node.left) | _flag_value(node.right)
    return 0


def collect():
    """(file:line, pattern, flags) of every evaluable pattern; (file, source) of the rest."""
    found, unknown = [], []
    for package in PACKAGES:
        for folder, _dirs, files in os.walk(os.path.join(ROOT, package)):
            for name in sorted(files):
                if not name.endswith(".py"):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, ROOT)
                with open(path) as f:
                    source = f.read()
                tree = ast.parse(source)
                env = {}
                for stmt in tree.body:   # module-level constants, in order
                    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                            isinstance(stmt.targets[0], ast.Name):
                        try:
                            env[stmt.targets[0].id] = _evaluate(stmt.value, env)
                        except (_Unknown, TypeError):
                            pass
                for node in ast.walk(tree):
                    if not (isinstance(node, ast.Call) and _is_re(node.func, RE_FUNCTIONS)
                            and node.args):
                        continue
                    try:
                        pattern = _evaluate(node.args[0], env)
                    except (_Unknown, TypeError):
                        unknown.append((rel, ast.get_source_segment(source, node.args[0])))
                        continue
                    if isinstance(pattern, bytes):
                        pattern = pattern.decode("latin-1")
                    found.append(("%s:%d" % (rel, node.lineno), pattern, _flags(node, env)))
    return found, unknown


def test_the_linter_catches_the_old_image_reference_pattern():
    assert redos(OLD_IMAGE_REFERENCE)
    assert redos(r"^(a+)+$") and redos(r"^(\w+\s?)+$") and redos(r"\w*\w*\w*x")
    assert not redos(r"^[a-z0-9]+(?:-+[a-z0-9]+)*$")


def test_the_collector_finds_the_patterns_of_the_project():
    found, _ = collect()
    where = {w.split(":")[0] for w, _p, _f in found}
    assert len(found) >= 20, found
    # A pattern built from module constants (appdeploy.REFERENCE) is evaluated whole.
    from dashboard_api.writes import appdeploy
    assert appdeploy.REFERENCE.pattern in [p for _w, p, _f in found]
    assert {"dashboard_api/writes/appdeploy.py", "metrics_sidecar/units.py"} <= where


def test_no_pattern_of_the_project_backtracks_catastrophically():
    found, unknown = collect()
    bad = ["%s: %r" % (where, pattern) for where, pattern, flags in found if redos(pattern, flags)]
    assert not bad, "patterns that backtrack catastrophically:\n" + "\n".join(bad)
    unexplained = [u for u in unknown if u not in DYNAMIC]
    assert not unexplained, "patterns the linter cannot evaluate (make them constants, or " \
        "explain them in DYNAMIC): %r" % unexplained


def test_no_route_path_pattern_backtracks_catastrophically():
    patterns = {r.regex() for r in routes.merged(route_table.all_routes())}
    patterns.add(static.PATTERN)
    patterns.add(home.PATTERN)
    assert len(patterns) > 100
    bad = [p for p in patterns if redos(p)]
    assert not bad, bad


@pytest.mark.parametrize("attack", ["a" * 5000 + "!", "a-" * 2500 + "!", "a." * 2500 + "!",
                                    "a/" * 2500 + "!", "0" * 5000 + "@"])
def test_the_image_reference_pattern_is_fast_on_long_input(attack):
    import time

    from dashboard_api.writes import appdeploy
    # this thread's CPU time, not the clock's: the suite's fuzzer runs beside it on two cores
    started = time.thread_time()
    appdeploy.REFERENCE.match(attack)
    appdeploy.REFERENCE.match(attack.upper())
    assert time.thread_time() - started < 0.05
