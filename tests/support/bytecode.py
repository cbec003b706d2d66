"""The project compiled once for a whole test run, on machines that write no bytecode.

Where PYTHONDONTWRITEBYTECODE is set (the CI machines set it), Python writes no ``.pyc`` file, so
every Python process the suite starts (gateways, sidecars, benchmarks, a cluster's simulated
nodes: a few hundred in a run) compiles again every module of the project it imports, about a
third of a gateway's start-up (0.6 s to import it, 0.4 s compiled). ``compile_once`` compiles
the project's own packages once, where Python looks for them (their ``__pycache__`` folders),
and ``remove`` deletes, at the end of the run, the folders it made: the tree is left as it was
found. The library's and the standard library's bytecode is the installation's, as before (a
PYTHONPYCACHEPREFIX of the run's own would hide it from every child process, which would then
compile those again instead).
"""

import compileall
import os
import re
import shutil
import sys

PACKAGES = ("dashboard_api", "metrics_sidecar", "tests")
SKIP = re.compile(r"[/\\]node_modules[/\\]")   # the JavaScript clients' own trees


def compile_once(root):
    """Compiles ``root``'s PACKAGES where bytecode is not written; returns the ``__pycache__``
    folders it made (for ``remove``), or None when bytecode is written anyway."""
    if not sys.dont_write_bytecode or sys.pycache_prefix:
        return None
    before = set(_caches(root))
    for package in PACKAGES:
        compileall.compile_dir(os.path.join(root, package), quiet=2, rx=SKIP)
    return sorted(set(_caches(root)) - before)


def remove(folders):
    """Deletes the folders ``compile_once`` made."""
    for folder in folders or ():
        shutil.rmtree(folder, ignore_errors=True)


def _caches(root):
    for package in PACKAGES:
        for top, dirs, _files in os.walk(os.path.join(root, package)):
            if "__pycache__" in dirs:
                yield os.path.join(top, "__pycache__")
            dirs[:] = [d for d in dirs if d not in ("__pycache__", "node_modules")]
