"""Fixtures of the hardening tests (issue 15)."""

from tests.support.fixtures import gateway  # noqa: F401
