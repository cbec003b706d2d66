"""Sealing keys are RFC 5869's HKDF-SHA256, written with the standard library so that a
gateway imports ``cryptography`` only when it seals or checks a signature."""

import os
import subprocess
import sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from dashboard_api.serving import sealing


def test_derived_keys_are_hkdf_sha256():
    for secret, purpose in ((b"s", b""), (os.urandom(48), sealing.PURPOSE),
                            (os.urandom(7), b"x" * 300)):
        expected = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                        info=purpose).derive(secret)
        assert sealing.derive_key(secret, purpose) == expected


def test_a_box_seals_and_opens_and_refuses_other_purposes():
    box = sealing.Box(b"secret", b"one")
    text = box.seal(b"plain")
    assert box.open(text)[1] == b"plain"
    assert sealing.Box(b"secret", b"two").open(text) is None
    assert sealing.Box(b"other", b"one").open(text) is None


def test_start_up_imports_neither_cryptography_nor_kubernetes():
    """Both cost a process ~26 MiB together (issue #41); they are imported when a shell is
    sealed, a signature checked, a serving certificate generated or checked, or a kubeconfig's
    user runs a command."""
    script = ("import sys, dashboard_api.app.main, metrics_sidecar.__main__; "
              "print(sorted({m.split('.')[0] for m in sys.modules} & "
              "{'cryptography', 'kubernetes'}))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.strip() == "[]"
