"""Fixtures of the smoke test: the shared gateway of the feature tests."""

from tests.support.fixtures import gateway  # noqa: F401
