"""The home page's files are package data: an install (pip install ., as conf/Containerfile
does) carries every one of them, or / would answer 404 where the package is installed."""

import os
import subprocess
import sys

from dashboard_api.handlers import home

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_page_files_are_installed_with_the_package(tmp_path):
    subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(tmp_path)],
                   cwd=ROOT, check=True, capture_output=True, timeout=120)
    installed = sorted(os.listdir(tmp_path / "dashboard_api" / "home"))
    assert installed == sorted(os.listdir(home.ROOT))
    assert set(home.FILES) <= set(installed)
