"""The run's one compile of the project (tests/support/bytecode.py): where no bytecode is
written, the project's modules are compiled where a child process reads them, and the tree is
left as it was found."""

import os
import subprocess
import sys

from tests.support import bytecode


def _tree(root):
    for package, module in (("dashboard_api", "gate"), ("metrics_sidecar", "side"),
                            ("tests", "probe")):
        os.makedirs(root / package)
        (root / package / "__init__.py").write_text("")
        (root / package / (module + ".py")).write_text("VALUE = %r\n" % module)
    kept = root / "metrics_sidecar" / "__pycache__"   # there before the run: never removed
    kept.mkdir()
    (kept / "mine").write_text("")
    return kept


def _child_reads_bytecode(root):
    """Whether a child that writes no bytecode imports dashboard_api.gate from a .pyc: the
    source is changed behind it, its size and time kept, so that a .pyc still looks valid."""
    source = root / "dashboard_api" / "gate.py"
    stat = source.stat()
    source.write_text("VALUE = 'GATE'\n")
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    try:
        return subprocess.run(
            [sys.executable, "-c", "import dashboard_api.gate as g; print(g.VALUE)"],
            cwd=root, check=True, text=True, capture_output=True,
            env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1")).stdout.strip() == "gate"
    finally:
        source.write_text("VALUE = 'gate'\n")
        os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_compiled_once_read_by_children_and_removed(tmp_path, monkeypatch):
    kept = _tree(tmp_path)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert not _child_reads_bytecode(tmp_path)    # a child alone writes nothing, reads source
    made = bytecode.compile_once(str(tmp_path))
    assert sorted(os.path.relpath(f, tmp_path) for f in made) == [
        os.path.join("dashboard_api", "__pycache__"), os.path.join("tests", "__pycache__")]
    assert _child_reads_bytecode(tmp_path)
    bytecode.remove(made)
    assert not (tmp_path / "dashboard_api" / "__pycache__").exists()
    assert not (tmp_path / "tests" / "__pycache__").exists()
    assert (kept / "mine").exists()                # what was there before stays
    assert not _child_reads_bytecode(tmp_path)


def test_nothing_is_done_where_bytecode_is_written(tmp_path, monkeypatch):
    _tree(tmp_path)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert bytecode.compile_once(str(tmp_path)) is None
    assert not (tmp_path / "dashboard_api" / "__pycache__").exists()
    bytecode.remove(None)
