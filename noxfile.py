"""The unit tests and a smoke test of the gateway against the local cluster on every CPython the
project supports (setup.py's classifiers, docs/install.md, "Supported Pythons"):

    .venv/bin/nox                  every version
    .venv/bin/nox -p 3.9 -p 3.13   some of them
    .venv/bin/nox -- -x -k yaml    pytest arguments instead of tests/unit tests/smoke

Each interpreter gets an environment in .nox/, kept between runs, installed by uv from the
universal lock requirements/test.txt with its hashes, and the project without dependencies.
The local cluster's binaries are bin/bootstrap's (~/.cache/dashboard-api).
"""

import glob
import os
import re

import nox


def _supported_pythons():
    """The versions setup.py's classifiers name: the one list of what the project claims."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "setup.py")) as f:
        return re.findall(r'"Programming Language :: Python :: (3\.\d+)"', f.read())


PYTHONS = _supported_pythons()
TESTS = ["tests/unit", "tests/smoke"]

nox.options.default_venv_backend = "uv"
nox.options.reuse_venv = "yes"
nox.options.error_on_missing_interpreters = True   # a missing Python fails, never skips


def _pyenv_interpreters_on_path():
    """Where pyenv holds the interpreters (as on the project's machines), its shims answer
    `python3.9` only for the versions `pyenv global` names: put each version's own bin/
    first on PATH instead, so that every installed version is found as `python3.X`."""
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    dirs = []
    for version in PYTHONS:
        found = sorted(glob.glob(os.path.join(root, "versions", version + ".*", "bin")),
                       key=lambda d: [int(p) for p in d.split(os.sep)[-2].split(".")
                                      if p.isdigit()])
        dirs += found[-1:]
    os.environ["PATH"] = os.pathsep.join(dirs + [os.environ.get("PATH", "")])


_pyenv_interpreters_on_path()
# uv would otherwise download a Python it cannot find: only the machine's own are tested.
os.environ["UV_PYTHON_DOWNLOADS"] = "never"


@nox.session(python=PYTHONS)
def tests(session):
    session.install("--require-hashes", "-r", "requirements/test.txt",
                    env={"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"})
    session.install("--no-deps", "--no-build-isolation", "-e", ".")
    session.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                *(session.posargs or TESTS))
