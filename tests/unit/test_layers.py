"""The house's layers (README.md, "Layout"): folders are layers and imports only go down.

Walks every module of dashboard_api (and metrics_sidecar) with ``ast``, as text, without
importing anything, and fails when a module imports a higher layer or another package of its
own layer, when imports make a cycle, or when an import sits inside a function without a
one-line reason beside it (a comment on its line or on the line above).
"""

import ast
import io
import os
import tokenize

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Low to high. A module may import its own package and any package of a lower layer.
LAYERS = (
    ("version",),
    ("serving",),
    ("kubeapi", "query"),
    ("summaries",),
    ("kinds",),
    ("cache", "web", "writes"),
    ("lists",),
    ("audit", "auth", "live", "logs", "metrics", "terminal"),
    ("clusters",),
    ("handlers",),
    ("app",),
    ("__main__",),
)
LAYER = {name: level for level, names in enumerate(LAYERS) for name in names}
# What may sit at the package's root: the entry point and the version, besides the packages.
ROOT_MODULES = {"__init__.py", "__main__.py", "version.py"}
# The sidecar is a process of its own: it may share only the lowest machinery of the gateway.
SIDECAR_MAY_IMPORT = ("serving", "kubeapi", "version")


def modules(package):
    """{dotted module name: source path} of a package of the repository."""
    found = {}
    for folder, _dirs, files in os.walk(os.path.join(ROOT, package)):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                dotted = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                if dotted.endswith(".__init__"):
                    dotted = dotted[:-len(".__init__")]
                found[dotted] = path
    return found


ALL = {**modules("dashboard_api"), **modules("metrics_sidecar")}


class Import:
    def __init__(self, target, line, inner):
        self.target = target   # the dotted module imported
        self.line = line
        self.inner = inner     # inside a function


def imports_of(name, path):
    """The project's modules that ``name`` imports, with where and how."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    found = []

    def visit(node, inner):
        for child in ast.iter_child_nodes(node):
            nested = inner or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                 ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    found.append(Import(alias.name, child.lineno, inner))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")
                    parts = parts[:len(parts) - (child.level - 1)]
                    base = ".".join(parts + ([child.module] if child.module else []))
                for alias in child.names:
                    whole = base + "." + alias.name
                    found.append(Import(whole if whole in ALL else base, child.lineno, inner))
            visit(child, nested)

    visit(tree, False)
    return [i for i in found if i.target in ALL]


IMPORTS = {name: imports_of(name, path) for name, path in ALL.items()}


def top(name):
    """The package (or root module) of the gateway a dotted name belongs to."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_folder_of_the_gateway_is_a_layer():
    packages = {top(name) for name in ALL if name.startswith("dashboard_api.")}
    assert packages <= set(LAYER), "a package no layer names: %s" % sorted(packages - set(LAYER))


def test_only_the_entry_point_and_the_version_sit_at_the_root():
    here = os.path.join(ROOT, "dashboard_api")
    loose = {n for n in os.listdir(here) if n.endswith(".py")}
    assert loose <= ROOT_MODULES, "modules at the package's root: %s" % sorted(loose - ROOT_MODULES)


def test_imports_only_go_down():
    wrong = []
    for name, found in IMPORTS.items():
        if not name.startswith("dashboard_api."):
            continue
        mine = top(name)
        for imp in found:
            theirs = top(imp.target)
            if not imp.target.startswith("dashboard_api.") or theirs == mine:
                continue
            if LAYER[theirs] >= LAYER[mine]:
                wrong.append("%s:%d imports %s (%s is not below %s)"
                             % (name, imp.line, imp.target, theirs, mine))
    assert not wrong, "imports that do not go down:\n" + "\n".join(wrong)


def test_the_sidecar_shares_only_the_lowest_machinery():
    wrong = ["%s:%d imports %s" % (name, imp.line, imp.target)
             for name, found in IMPORTS.items() if name.startswith("metrics_sidecar")
             for imp in found if imp.target.startswith("dashboard_api.")
             and top(imp.target) not in SIDECAR_MAY_IMPORT]
    assert not wrong, "\n".join(wrong)


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan), or of one module
    that imports itself."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def connect(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return out


def test_no_cycles():
    graph = {name: {i.target for i in found if i.target != name}
             for name, found in IMPORTS.items()}
    assert cycles(graph) == []


def test_cycles_are_found():   # the walk above can fail
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def comment_lines(path):
    with open(path, encoding="utf-8") as f:
        tokens = tokenize.generate_tokens(io.StringIO(f.read()).readline)
        return {tok.start[0]: tok.string for tok in tokens if tok.type == tokenize.COMMENT}


def test_an_import_inside_a_function_says_why():
    unexplained = []
    for name, found in IMPORTS.items():
        inner = [i for i in found if i.inner]
        if not inner:
            continue
        comments = comment_lines(ALL[name])
        for imp in inner:
            if imp.line not in comments and imp.line - 1 not in comments:
                unexplained.append("%s:%d imports %s" % (name, imp.line, imp.target))
    assert not unexplained, "imports inside functions without a reason:\n" + \
        "\n".join(unexplained)


@pytest.mark.parametrize("source, wrong", [
    ("from dashboard_api.app import server\n", True),
    ("from dashboard_api.serving import errors\n", False),
    ("def f():\n    from dashboard_api.serving import errors\n", "inner"),
])
def test_the_walk_reads_imports_as_written(tmp_path, source, wrong):
    """A module of the cache layer importing the assembly is caught; one importing the
    machinery is not; an import in a function is seen as one."""
    path = tmp_path / "probe.py"
    path.write_text(source)
    found = imports_of("dashboard_api.cache.probe", str(path))
    assert len(found) == 1
    if wrong == "inner":
        assert found[0].inner
    else:
        assert (LAYER[top(found[0].target)] >= LAYER["cache"]) is wrong
