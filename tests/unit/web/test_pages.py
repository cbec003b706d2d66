"""The web pages' files are package data: an install (pip install ., as conf/Containerfile
does) carries every one of them (the home page's, the sign-in's session script), or / would
answer 404 where the package is installed."""

import os
import subprocess
import sys

from dashboard_api.handlers import home
from dashboard_api.web import pages

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_the_page_files_are_installed_with_the_package(tmp_path):
    subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(tmp_path)],
                   cwd=ROOT, check=True, capture_output=True, timeout=120)
    installed = sorted(os.listdir(tmp_path / "dashboard_api" / "web" / "home"))
    assert installed == sorted(os.listdir(pages.HOME_ROOT))
    assert set(home.FILES) <= set(installed)
    assert os.path.isfile(tmp_path / "dashboard_api" / "web" / "session.js")
